//! Volcano's tier rules for the victim functions (`session_plugins.go`, volcano-behaviour.md
//! §1.5), through test plugins whose answers come from their conf arguments: Preemptable and
//! Reclaimable intersect within a tier, a plugin deciding "none" ends its tier empty, the first
//! tier with victims wins, abstainers and plugins with the function disabled are skipped;
//! VictimTasks unites within a tier; Preemptive ANDs.

use basalt_core::conf::PluginOption;
use basalt_core::framework::Session;
use basalt_core::model::{NodeSpec, PodGroupPhase, PodGroupSpec, PodPhase, PodSpec, QueueSpec};
use basalt_core::plugins::{Entry, Fn, Plugin, Registry, Verdict};
use basalt_core::resource::ResourceList;
use basalt_core::session::tables::{QueueIdx, TaskIdx};
use basalt_core::session::State;
use basalt_core::{Cluster, CycleOptions, Delta, SchedulerConf};

/// A plugin answering with a fixed list (registered under the names of Volcano plugins Basalt
/// lacks, which the conf parser accepts): `victims` = comma-separated task rows, or `abstain`.
struct Fixed {
    name: &'static str,
    list: Option<Vec<TaskIdx>>,
    preemptive: bool,
}

impl<'a> Plugin<'a> for Fixed {
    fn name(&self) -> &'static str {
        self.name
    }
    fn fns(&self) -> u32 {
        Fn::registered_by(&["preemptable", "reclaimable", "victim_tasks", "preemptive"])
    }
    fn implemented_fns(&self) -> u32 {
        self.fns()
    }
    fn preemptable(&self, _: &State<'a>, _: TaskIdx, c: &[TaskIdx], out: &mut Vec<TaskIdx>) -> Verdict {
        self.answer(c, out)
    }
    fn reclaimable(&self, _: &State<'a>, _: TaskIdx, c: &[TaskIdx], out: &mut Vec<TaskIdx>) -> Verdict {
        self.answer(c, out)
    }
    fn victim_tasks(&self, _: &State<'a>, c: &[TaskIdx], out: &mut Vec<TaskIdx>) {
        self.answer(c, out);
    }
    fn preemptive(&self, _: &State<'a>, _: QueueIdx, _: TaskIdx) -> bool {
        self.preemptive
    }
}

impl Fixed {
    fn answer(&self, c: &[TaskIdx], out: &mut Vec<TaskIdx>) -> Verdict {
        match &self.list {
            None => Verdict::Abstain,
            Some(l) => {
                out.extend(l.iter().copied().filter(|t| c.contains(t)));
                Verdict::Decided
            }
        }
    }
}

fn build<'a>(name: &'static str, o: &PluginOption) -> Box<dyn Plugin<'a> + 'a> {
    let v = o.arguments.string("victims").unwrap_or_default();
    let list = (v != "abstain").then(|| v.split(',').filter(|x| !x.is_empty()).map(|x| TaskIdx(x.parse().unwrap())).collect());
    Box::new(Fixed { name, list, preemptive: o.arguments.bool("preemptive").unwrap_or(true) })
}

macro_rules! builder {
    ($f:ident, $n:literal) => {
        fn $f<'a>(o: &PluginOption, _: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
            build($n, o)
        }
    };
}
builder!(b_a, "sla");
builder!(b_b, "tdm");
builder!(b_c, "pdb");
builder!(b_d, "cdp");

static TEST_REGISTRY: Registry = Registry {
    entries: &[
        Entry { name: "sla", build: b_a, args: &[] },
        Entry { name: "tdm", build: b_b, args: &[] },
        Entry { name: "pdb", build: b_c, args: &[] },
        Entry { name: "cdp", build: b_d, args: &[] },
    ],
    devices: None,
};

/// One node with six running pods of one job: task rows 0..6.
fn cluster() -> Cluster {
    let mut c = Cluster::new();
    let res = |cpu: i64| -> ResourceList { [("cpu".to_string(), cpu), ("pods".to_string(), 1)].into_iter().collect() };
    c.apply(Delta::Queue(QueueSpec { name: "default".into(), weight: 1, reclaimable: true, ..Default::default() })).unwrap();
    let alloc: ResourceList = [("cpu".to_string(), 64000), ("pods".to_string(), 110)].into_iter().collect();
    c.apply(Delta::Node(NodeSpec {
        name: "n1".into(),
        capacity: alloc.clone(),
        allocatable: alloc,
        ready: true,
        ..Default::default()
    }))
    .unwrap();
    c.apply(Delta::PodGroup(PodGroupSpec {
        namespace: "ns".into(),
        name: "pg".into(),
        uid: "ns/pg".into(),
        min_member: 1,
        queue: "default".into(),
        phase: PodGroupPhase::Running,
        ..Default::default()
    }))
    .unwrap();
    for i in 0..6 {
        c.apply(Delta::Pod(PodSpec {
            namespace: "ns".into(),
            name: format!("p-{i}"),
            uid: format!("ns/p-{i}"),
            group: Some("pg".into()),
            scheduler_name: "volcano".into(),
            node_name: "n1".into(),
            phase: PodPhase::Running,
            resreq: res(1000),
            ..Default::default()
        }))
        .unwrap();
    }
    c
}

/// Conf with the given tiers: each plugin as `(name, victims, extra flags/args)`.
fn conf(tiers: &[&[(&str, &str, &str)]]) -> SchedulerConf {
    let mut s = String::from("actions: \"allocate\"\ntiers:\n");
    for t in tiers {
        s.push_str("- plugins:\n");
        for (name, victims, extra) in t.iter() {
            s.push_str(&format!("  - name: {name}\n{extra}    arguments:\n      victims: \"{victims}\"\n"));
        }
    }
    SchedulerConf::parse(&s).unwrap().0
}

struct Got {
    preemptable: Vec<u32>,
    reclaimable: Vec<u32>,
    victim_tasks: Vec<u32>,
}

fn ask(tiers: &[&[(&str, &str, &str)]]) -> Got {
    let c = cluster();
    let conf = conf(tiers);
    let arena = bumpalo::Bump::new();
    let ssn = Session::open(&arena, &c, &conf, &CycleOptions::default(), &TEST_REGISTRY);
    let all: Vec<TaskIdx> = (0..6).map(TaskIdx).collect();
    let (mut out, mut scratch) = (Vec::new(), Vec::new());
    let rows = |v: &Vec<TaskIdx>| v.iter().map(|t| t.0).collect::<Vec<u32>>();
    ssn.plugins.preemptable(&ssn.state, TaskIdx(0), &all, &mut out, &mut scratch);
    let preemptable = rows(&out);
    ssn.plugins.reclaimable(&ssn.state, TaskIdx(0), &all, &mut out, &mut scratch);
    let reclaimable = rows(&out);
    ssn.plugins.victim_tasks(&ssn.state, &all, &mut out, &mut scratch);
    Got { preemptable, reclaimable, victim_tasks: rows(&out) }
}

#[test]
fn a_tier_intersects_its_deciders_in_the_first_deciders_order() {
    let g = ask(&[&[("sla", "3,1,2", ""), ("tdm", "2,3,4", ""), ("pdb", "abstain", "")], &[("cdp", "5", "")]]);
    assert_eq!(g.preemptable, vec![3, 2]);
    assert_eq!(g.reclaimable, vec![3, 2]);
    assert_eq!(g.victim_tasks, vec![3, 1, 2, 4], "victim tasks unite within the tier");
}

#[test]
fn a_decider_allowing_none_ends_its_tier_and_the_next_tier_decides() {
    let g = ask(&[&[("sla", "1,2", ""), ("tdm", "", ""), ("pdb", "1", "")], &[("cdp", "5,4", "")]]);
    assert_eq!(g.preemptable, vec![5, 4], "b's empty answer ends tier 1 before c is asked");
    assert_eq!(g.victim_tasks, vec![1, 2], "tier 1's union is not empty");
}

#[test]
fn a_tier_where_all_abstain_or_the_function_is_off_is_skipped() {
    let off = "    enablePreemptable: false\n    enableReclaimable: false\n    enabledVictim: false\n";
    let g = ask(&[&[("sla", "abstain", ""), ("tdm", "1", off)], &[("pdb", "4,5", "")]]);
    assert_eq!(g.preemptable, vec![4, 5]);
    assert_eq!(g.reclaimable, vec![4, 5]);
    assert_eq!(g.victim_tasks, vec![4, 5]);
}

#[test]
fn an_intersection_emptied_midway_restarts_at_the_next_decider_as_in_volcano() {
    // a ∩ b = ∅, which Volcano holds as a nil list: c's answer then starts the tier's list again.
    let g = ask(&[&[("sla", "1", ""), ("tdm", "2", ""), ("pdb", "3,4", "")], &[("cdp", "5", "")]]);
    assert_eq!(g.preemptable, vec![3, 4]);
}

#[test]
fn no_tier_with_victims_gives_none() {
    let g = ask(&[&[("sla", "", "")], &[("tdm", "abstain", "")]]);
    assert!(g.preemptable.is_empty() && g.reclaimable.is_empty() && g.victim_tasks.is_empty());
}

#[test]
fn preemptive_is_the_and_of_the_active_plugins() {
    let c = cluster();
    let arena = bumpalo::Bump::new();
    let mk = |p: &str| {
        SchedulerConf::parse(&format!(
            "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: sla\n    arguments:\n      preemptive: true\n- plugins:\n  - name: tdm\n    arguments:\n      preemptive: {p}\n"
        ))
        .unwrap()
        .0
    };
    for (p, want) in [("true", true), ("false", false)] {
        let conf = mk(p);
        let ssn = Session::open(&arena, &c, &conf, &CycleOptions::default(), &TEST_REGISTRY);
        assert_eq!(ssn.plugins.preemptive(&ssn.state, QueueIdx(0), TaskIdx(0)), want);
    }
}
