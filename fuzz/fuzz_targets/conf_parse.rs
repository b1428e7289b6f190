//! `conf_parse`: arbitrary bytes as `volcano-scheduler.conf` text.
//!
//! Checks: `SchedulerConf::parse` never panics; parsing is deterministic; an accepted conf,
//! written back as YAML (actions, tiers with plugin names, enable flags and arguments,
//! configurations), parses to the same conf.

#![no_main]

use basalt_core::conf::{EnableFlags, SchedulerConf};
use libfuzzer_sys::fuzz_target;
use serde_yaml::{Mapping, Value};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let first = SchedulerConf::parse(text);
    let again = SchedulerConf::parse(text);
    assert_eq!(first, again, "parsing the same text twice differs");
    let Ok((conf, _warnings)) = first else { return };
    let written = write(&conf);
    match SchedulerConf::parse(&written) {
        Ok((back, _)) => assert!(same(&back, &conf), "re-parse differs:\n{written}\n{back:?}\n{conf:?}"),
        Err(e) => panic!("the written form of an accepted conf is refused: {e}\n{written}"),
    }
});

/// Every enable-flag key Volcano reads (`conf/flags.rs` spells the same list).
const FLAG_KEYS: &[&str] = &[
    "enableJobOrder",
    "enableJobReady",
    "enableJobPipelined",
    "enableTaskOrder",
    "enablePreemptable",
    "enableReclaimable",
    "enablePreemptive",
    "enableQueueOrder",
    "enablePredicate",
    "enableBestNode",
    "enableNodeOrder",
    "enableTargetJob",
    "enableReservedNodes",
    "enableJobEnqueued",
    "enabledVictim",
    "enableJobStarving",
    "enabledOverused",
    "enabledAllocatable",
    "enabledHyperNodeOrder",
    "enabledSubJobReady",
    "enabledSubJobPipelined",
    "enabledSubJobOrder",
    "enabledHyperNodeGradient",
    "enableHierarchy",
    "enabledClusterOrder",
];

/// Equal confs: same actions, configurations, options, and per tier the same plugins with the
/// same arguments and the same value of every enable flag (set or defaulted).
fn same(a: &SchedulerConf, b: &SchedulerConf) -> bool {
    a.actions == b.actions
        && a.configurations == b.configurations
        && a.options == b.options
        && a.tiers.len() == b.tiers.len()
        && a.tiers.iter().zip(&b.tiers).all(|(x, y)| {
            x.plugins.len() == y.plugins.len()
                && x.plugins.iter().zip(&y.plugins).all(|(p, q)| {
                    p.name == q.name
                        && p.arguments == q.arguments
                        && FLAG_KEYS.iter().filter_map(|k| EnableFlags::lookup(k)).all(|f| p.flags.on(f) == q.flags.on(f))
                })
        })
}

/// The conf as YAML text, in the shape the parser reads.
fn write(c: &SchedulerConf) -> String {
    let mut top = Mapping::new();
    let actions: Vec<&str> = c.actions.iter().map(|a| a.name()).collect();
    top.insert("actions".into(), Value::String(actions.join(", ")));
    let tiers: Vec<Value> = c
        .tiers
        .iter()
        .map(|t| {
            let plugins: Vec<Value> = t
                .plugins
                .iter()
                .map(|p| {
                    let mut m = Mapping::new();
                    m.insert("name".into(), Value::String(p.name.clone()));
                    for key in FLAG_KEYS {
                        let flag = EnableFlags::lookup(key).expect("every Volcano flag key is known");
                        let on = p.flags.on(flag);
                        if on != EnableFlags::default().on(flag) {
                            m.insert(Value::String(key.to_string()), Value::Bool(on));
                        }
                    }
                    if !p.arguments.0.is_empty() {
                        m.insert("arguments".into(), arguments(&p.arguments.0));
                    }
                    Value::Mapping(m)
                })
                .collect();
            let mut m = Mapping::new();
            m.insert("plugins".into(), Value::Sequence(plugins));
            Value::Mapping(m)
        })
        .collect();
    top.insert("tiers".into(), Value::Sequence(tiers));
    let configurations: Vec<Value> = c
        .configurations
        .iter()
        .map(|(name, args)| {
            let mut m = Mapping::new();
            m.insert("name".into(), Value::String(name.clone()));
            m.insert("arguments".into(), arguments(&args.0));
            Value::Mapping(m)
        })
        .collect();
    top.insert("configurations".into(), Value::Sequence(configurations));
    serde_yaml::to_string(&Value::Mapping(top)).expect("a YAML value serializes")
}

fn arguments(a: &std::collections::BTreeMap<String, Value>) -> Value {
    Value::Mapping(a.iter().map(|(k, v)| (Value::String(k.clone()), v.clone())).collect())
}
