//! One fuzz case: build the cluster from the input (twice, independently), then run one to
//! three cycles. Each cycle runs on both copies (same input and seed must give the same
//! decisions), is checked against the invariants, and is applied back the way a cluster would
//! react: bound pods get their node and run, evicted pods are deleted, PodGroups take their new
//! phase and conditions.

use super::conf::{build, Family};
use super::input::Input;
use super::invariants::check;
use super::known;
use super::model::Before;
use super::objects::deltas;
use super::statement::discard_restores;
use basalt_core::model::PodPhase;
use basalt_core::{run_cycle, Cluster, CycleOptions, Decisions, Delta};

fn apply_all(cluster: &mut Cluster, deltas: &[Delta]) {
    for d in deltas {
        // Refused objects (negative minMember, …) are part of the input space.
        let _ = cluster.apply(d.clone());
    }
}

/// What the cluster does in answer to `d` (ids resolved before anything changes).
fn reactions(cluster: &Cluster, d: &Decisions) -> Vec<Delta> {
    let mut out = Vec::new();
    for b in &d.binds {
        if let (Some(p), Some(n)) = (cluster.pod(b.pod), cluster.node(b.node)) {
            let mut spec = p.spec.bound(&n.spec.name, &b.annotations);
            spec.phase = PodPhase::Running;
            out.push(Delta::Pod(spec));
        }
    }
    for e in &d.evictions {
        if let Some(p) = cluster.pod(e.pod) {
            out.push(Delta::PodDeleted { namespace: p.spec.namespace.clone(), name: p.spec.name.clone() });
        }
    }
    for s in &d.pod_groups {
        if let Some(g) = cluster.pod_group(s.group) {
            let mut spec = g.spec.clone();
            spec.phase = s.phase;
            spec.conditions = s.conditions.clone();
            out.push(Delta::PodGroup(spec));
        }
    }
    out
}

/// Runs one fuzz case for a target of `family`.
pub fn run(input: &Input, family: Family) {
    let (conf, text) = build(&input.conf, &input.options, family);
    let initial = deltas(input);
    if std::env::var_os("BASALT_FUZZ_DUMP").is_some() {
        eprintln!("conf:\n{text}\noptions: {:?}\ndeltas: {initial:#?}", conf.options);
    }
    if known::skip(&initial, &conf) {
        return;
    }
    let mut a = Cluster::new();
    let mut b = Cluster::new();
    apply_all(&mut a, &initial);
    apply_all(&mut b, &initial);
    discard_restores(&a, &conf, &input.statement_ops);
    let stats = std::env::var_os("BASALT_FUZZ_STATS").is_some();
    for i in 0..input.cycles {
        let opts = CycleOptions { seed: input.seed.wrapping_add(i), cycle: i + 1, now_ms: 0 };
        let before = Before::read(&a, &conf);
        let d = run_cycle(&a, &conf, &opts);
        assert_eq!(d, run_cycle(&b, &conf, &opts), "cycle {}: same input and seed, different decisions", i + 1);
        check(&a, &conf, &before, &d);
        if stats {
            let (nodes, pods, groups, queues) = a.counts();
            eprintln!(
                "stats cycle={} nodes={nodes} pods={pods} groups={groups} queues={queues} jobs={} binds={} unschedulable={} pipelined={}",
                i + 1,
                before.jobs.len(),
                d.binds.len(),
                d.unschedulable.len(),
                d.pipelined.len()
            );
        }
        let r = reactions(&a, &d);
        apply_all(&mut a, &r);
        apply_all(&mut b, &r);
    }
}
