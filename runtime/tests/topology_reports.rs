//! What users read about network topology (issue 23): `simulate`'s text names the HyperNode
//! each topology job was placed in; `basalt replay` reports per conf the share of
//! placed gangs inside one HyperNode of each tier, for a generated tree (`--topology`) and for
//! `--cluster` files with HyperNodes.

use basalt_core::conf::SchedulerConf;
use basalt_runtime::replay::generate::topology::{GangTopology, TopologyTree};
use basalt_runtime::replay::generate::{self, DefaultSpec};
use basalt_runtime::replay::{self, kube_yaml, CyclePolicy, EngineOptions, NamedConf, ReplayOptions};
use basalt_runtime::sim::{self, SimOptions};
use std::path::{Path, PathBuf};

/// Writes a scenario case's `conf` and `cluster` to a temporary directory.
fn case(name: &str) -> (SchedulerConf, PathBuf) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios/network-topology").join(name);
    let y: serde_yaml::Value = serde_yaml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let dir = std::env::temp_dir().join(format!("basalt-topology-reports-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cluster = dir.join("cluster.yaml");
    std::fs::write(&cluster, y["cluster"].as_str().unwrap()).unwrap();
    (SchedulerConf::parse(y["conf"].as_str().unwrap()).unwrap().0, cluster)
}

#[test]
fn simulate_names_the_hypernode_of_each_topology_job() {
    let (conf, cluster) = case("hard-gangs-one-leaf-each.yaml");
    let out = sim::run(&[cluster], &conf, &SimOptions { cycles: 1, ..Default::default() }).unwrap();
    let text = sim::render_text(&out);
    let section = text.split("Network topology (the HyperNode holding each topology job's binds):").nth(1).expect(&text);
    let mut leaves = Vec::new();
    for g in ["g0", "g1", "g2", "g3"] {
        let line = section.lines().find(|l| l.trim_start().starts_with(&format!("ns/{g}:"))).expect(section);
        let leaf = line.split("in HyperNode ").nth(1).and_then(|r| r.strip_suffix(" (tier 1)")).expect(line);
        assert!(line.contains("4 pods"), "{line}");
        leaves.push(leaf.to_string());
    }
    leaves.sort();
    assert_eq!(leaves, ["leaf0", "leaf1", "leaf2", "leaf3"], "one leaf each:\n{section}");
}

fn run(spec: &DefaultSpec) -> replay::report::RunResults {
    let w = generate::generate(spec);
    let confs = [NamedConf { label: "default".into(), conf: SchedulerConf::default() }];
    let opts = ReplayOptions { engine: EngineOptions { policy: CyclePolicy::Period(10_000), seed: 1 }, progress: false };
    replay::replay(&w, &confs, &opts).report.runs.remove(0).results
}

#[test]
fn replay_reports_the_share_of_gangs_inside_one_hypernode_per_tier() {
    let tree = TopologyTree::parse("8x4x2").unwrap();
    let spec = DefaultSpec { seed: 3, pods: 400, nodes: 16, topology: Some(tree), gang_topology: GangTopology::Hard(1) };
    let w = generate::generate(&spec);
    assert_eq!(w.setup_counts().0, 16);
    let hard = run(&spec).topology.expect("a tree gives topology results");
    let tiers: Vec<(i32, &str)> = hard.tiers.iter().map(|t| (t.tier, t.name.as_str())).collect();
    assert_eq!(tiers, [(1, "leaf"), (2, "spine"), (3, "cluster")]);
    assert!(hard.gangs_placed > 10, "{hard:?}");
    assert_eq!(hard.topology_gangs_placed, hard.gangs_placed);
    assert_eq!(hard.tiers[0].gangs, hard.gangs_placed, "hard tier 1: every placed gang inside one leaf: {hard:?}");
    assert_eq!(hard.tiers[0].share, Some(1.0));

    let blind = run(&DefaultSpec { gang_topology: GangTopology::None, ..spec.clone() }).topology.unwrap();
    assert_eq!(blind.topology_gangs_placed, 0);
    assert_eq!(blind.tiers[2].share, Some(1.0), "the cluster top holds every gang");
    assert!(blind.tiers[0].gangs < blind.gangs_placed, "topology-blind, some gang spans leaves: {blind:?}");

    assert!(run(&DefaultSpec { topology: None, ..spec }).topology.is_none(), "no tree, no topology rows");
}

#[test]
fn replay_of_cluster_files_keeps_their_hypernodes() {
    let dir = std::env::temp_dir().join(format!("basalt-topology-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut yaml = String::new();
    for leaf in 0..2 {
        for n in 0..2 {
            yaml += &format!("---\napiVersion: v1\nkind: Node\nmetadata: {{name: l{leaf}-n{n}}}\nstatus:\n  allocatable: {{cpu: '2', memory: 8Gi, pods: '10'}}\n");
        }
        yaml += &format!("---\napiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata: {{name: leaf{leaf}}}\nspec:\n  tier: 1\n  members:\n  - {{type: Node, selector: {{regexMatch: {{pattern: '^l{leaf}-'}}}}}}\n");
    }
    for g in 0..2 {
        yaml += &format!("---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {{name: g{g}, namespace: ns}}\nspec: {{minMember: 2, networkTopology: {{mode: hard, highestTierAllowed: 1}}}}\n");
        for p in 0..2 {
            yaml += &format!("---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: g{g}-{p}\n  namespace: ns\n  annotations: {{scheduling.k8s.io/group-name: g{g}, basalt.dev/arrival-seconds: '{g}', basalt.dev/duration-seconds: '60'}}\nspec:\n  schedulerName: volcano\n  containers: [{{name: c, image: x, resources: {{requests: {{cpu: '1'}}}}}}]\n");
        }
    }
    let file = dir.join("cluster.yaml");
    std::fs::write(&file, yaml).unwrap();
    let w = kube_yaml::import(&[file], "volcano");
    let confs = [NamedConf { label: "default".into(), conf: SchedulerConf::default() }];
    let opts = ReplayOptions { engine: EngineOptions { policy: CyclePolicy::Period(10_000), seed: 1 }, progress: false };
    let out = replay::replay(&w, &confs, &opts);
    let t = out.report.runs[0].results.topology.clone().expect("the HyperNodes of the files are replayed");
    assert_eq!((t.gangs_placed, t.tiers[0].gangs), (2, 2), "{t:?}");
    let text = replay::text::render(&out.report);
    assert!(text.contains("Network topology: placed gangs inside one HyperNode of the tier"), "{text}");
    assert!(text.contains("tier 1") && text.contains("100.0% (2)"), "{text}");
}
