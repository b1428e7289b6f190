//! The fuzzed `volcano-scheduler.conf`: actions and plugins chosen by the input, the plugin
//! family of the target always present, written as YAML and parsed by the core's own parser.

use super::input::{ConfIn, OptionsIn, PluginIn};
use basalt_core::conf::{Flag, PluginOption, SchedulerConf};
use std::fmt::Write;

/// Which plugin family a target emphasises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// gang (with priority and conformance around it).
    Gang,
    /// drf and proportion.
    DrfProportion,
    /// overcommit and the enqueue action.
    OvercommitEnqueue,
    /// predicates, nodeorder and binpack.
    PredicatesNodeorderBinpack,
}

impl Family {
    fn forced(self) -> &'static [&'static str] {
        match self {
            Family::Gang => &["gang"],
            Family::DrfProportion => &["drf", "proportion"],
            Family::OvercommitEnqueue => &["overcommit"],
            Family::PredicatesNodeorderBinpack => &["predicates", "nodeorder", "binpack"],
        }
    }

    fn needs_action(self) -> &'static str {
        match self {
            Family::OvercommitEnqueue => "enqueue",
            _ => "allocate",
        }
    }
}

/// The plugins Basalt implements, in [`ConfIn::plugins`] order.
pub const PLUGINS: [&str; 9] =
    ["priority", "gang", "conformance", "overcommit", "drf", "proportion", "predicates", "nodeorder", "binpack"];

const ACTIONS: &[&str] = &[
    "enqueue, allocate, backfill",
    "allocate, backfill",
    "enqueue, allocate",
    "allocate",
    "backfill, allocate",
    "enqueue, backfill",
    "allocate, enqueue, backfill",
    "enqueue, allocate, preempt, reclaim, backfill",
    "enqueue",
    "backfill",
];

/// Flags a plugin entry may turn off.
const FLAG_KEYS: &[&str] = &[
    "enableJobOrder",
    "enableJobReady",
    "enableJobPipelined",
    "enableTaskOrder",
    "enableQueueOrder",
    "enablePredicate",
    "enableNodeOrder",
    "enableJobEnqueued",
    "enabledOverused",
    "enabledAllocatable",
    "enableJobStarving",
    "enableBestNode",
];

const INTS: &[&str] = &["0", "1", "2", "5", "10", "100", "-1", "-100", "1000000", "9223372036854775807", "-9223372036854775808"];
const FLOATS: &[&str] = &["1.0", "1.2", "0.5", "3", "10", "1e308", ".nan", ".inf", "-1", "2", "\"abc\""];
const NODEORDER_KEYS: &[&str] = &[
    "leastrequested.weight",
    "mostrequested.weight",
    "balancedresource.weight",
    "nodeaffinity.weight",
    "podaffinity.weight",
    "tainttoleration.weight",
    "imagelocality.weight",
    "podtopologyspread.weight",
];
const PREDICATE_KEYS: &[&str] = &[
    "predicate.NodeAffinityEnable",
    "predicate.NodePortsEnable",
    "predicate.TaintTolerationEnable",
    "predicate.PodAffinityEnable",
    "predicate.PodTopologySpreadEnable",
];

fn pick<'a>(v: &[&'a str], i: u8) -> &'a str {
    v[i as usize % v.len()]
}

fn arguments(name: &str, p: &PluginIn) -> Vec<(String, String)> {
    let a = p.args;
    let mut out = Vec::new();
    match name {
        "binpack" => {
            for (k, v) in [("binpack.weight", a[0]), ("binpack.cpu", a[1]), ("binpack.memory", a[2])] {
                if v % 3 != 0 {
                    out.push((k.into(), pick(INTS, v / 3).into()));
                }
            }
            if a[3] % 2 == 1 {
                out.push(("binpack.resources".into(), "\"nvidia.com/gpu, example.com/foo\"".into()));
                out.push(("binpack.resources.nvidia.com/gpu".into(), pick(INTS, a[3] / 2).into()));
            }
        }
        "nodeorder" => {
            for v in a.into_iter().filter(|v| v % 3 != 0) {
                let key = pick(NODEORDER_KEYS, v);
                if !out.iter().any(|(k, _)| k == key) {
                    out.push((key.into(), pick(INTS, v / 8).into()));
                }
            }
        }
        "overcommit" if a[0] % 2 == 1 => out.push(("overcommit-factor".into(), pick(FLOATS, a[0] / 2).into())),
        "predicates" => {
            for (i, k) in PREDICATE_KEYS.iter().enumerate() {
                if a[0] & (1 << i) != 0 && a[1] % 2 == 0 {
                    out.push((k.to_string(), "false".into()));
                }
            }
        }
        _ => {}
    }
    out
}

/// Builds the conf of `c` for `family`, with the flags of `o`. Returns it with its YAML text.
pub fn build(c: &ConfIn, o: &OptionsIn, family: Family) -> (SchedulerConf, String) {
    let usable: Vec<&str> = ACTIONS.iter().copied().filter(|a| a.contains(family.needs_action())).collect();
    let mut text = format!("actions: \"{}\"\ntiers:\n", pick(&usable, c.actions));
    let present = |i: usize| !c.plugins[i].absent || family.forced().contains(&PLUGINS[i]);
    let hierarchy = present(4) && c.plugins[4].args[3] % 4 == 0;
    let tier_of = |i: usize| {
        let t = c.plugins[i].tier as usize % 2;
        // Hierarchical drf refuses proportion in its tier: put proportion in the other one.
        if PLUGINS[i] == "proportion" && hierarchy && t == c.plugins[4].tier as usize % 2 {
            1 - t
        } else {
            t
        }
    };
    for tier in 0..2 {
        text.push_str("- plugins:\n");
        for i in (0..PLUGINS.len()).filter(|&i| present(i) && tier_of(i) == tier) {
            let p = &c.plugins[i];
            let _ = writeln!(text, "  - name: {}", PLUGINS[i]);
            if p.flags % 4 == 0 {
                for (b, k) in FLAG_KEYS.iter().enumerate() {
                    if p.flag_bits & (1 << b) != 0 {
                        let _ = writeln!(text, "    {k}: false");
                    }
                }
            }
            if PLUGINS[i] == "drf" && hierarchy {
                text.push_str("    enableHierarchy: true\n");
            }
            let args = arguments(PLUGINS[i], p);
            if !args.is_empty() {
                text.push_str("    arguments:\n");
                for (k, v) in args {
                    let _ = writeln!(text, "      {k}: {v}");
                }
            }
        }
    }
    if c.cache % 3 != 0 {
        let v = c.cache % 3 == 1;
        text.push_str("configurations:\n");
        for a in ["allocate", "backfill"] {
            let _ = write!(text, "- name: {a}\n  arguments:\n    predicateErrorCacheEnable: {v}\n");
        }
    }
    let mut conf = match SchedulerConf::parse(&text) {
        Ok((conf, _)) => conf,
        Err(e) => panic!("the generated conf is refused: {e}\n{text}"),
    };
    if o.percentage % 4 == 3 {
        conf.options.percentage_nodes_to_find = i32::from(o.percentage % 101);
    }
    if o.minimum_feasible % 2 == 1 {
        conf.options.minimum_feasible_nodes = i32::from(o.minimum_feasible % 8);
    }
    conf.options.minimum_percentage_nodes_to_find = i32::from(o.minimum_percentage % 101);
    (conf, text)
}

/// Every configured entry of plugin `name`.
pub fn entries<'c>(conf: &'c SchedulerConf, name: &'c str) -> impl Iterator<Item = &'c PluginOption> + 'c {
    conf.tiers.iter().flat_map(|t| t.plugins.iter()).filter(move |p| p.name == name)
}

/// Whether plugin `name` is configured with `flag` on.
pub fn has(conf: &SchedulerConf, name: &str, flag: Flag) -> bool {
    entries(conf, name).any(|p| p.flags.on(flag))
}
