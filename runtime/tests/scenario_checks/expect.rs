//! The scenario cases' format and checks, shared by the runner through the binary
//! (`tests/scenarios.rs`: `basalt simulate --output json`) and the runner in the test's own process
//! (`tests/scenarios_in_process.rs`: the loader, the simulator and the core's cycle, no binary):
//! where the cases are, the keys a case and its `expect` may have, the case's extra
//! `simulateArgs`, and [`check`], which compares the simulate JSON with the case's `expect`.

#![allow(dead_code)]

#[path = "hypernode.rs"]
mod hypernode_checks;

use serde_json::Value as Json;
use serde_yaml::Value as Yaml;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.yaml` case under `dir`, recursively, in path order.
pub fn cases(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).expect("scenario dir").map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            cases(&p, out);
        } else if p.extension().is_some_and(|e| e == "yaml") {
            out.push(p);
        }
    }
}

fn s(v: &Json, k: &str) -> String {
    v.get(k).and_then(|x| x.as_str()).unwrap_or_default().to_string()
}

/// The keys of `expect` the runner checks; any other key is an error (a misspelt key would
/// otherwise pass without checking anything).
pub const EXPECT_KEYS: &[&str] = &[
    "binds",
    "bindsCount",
    "evicted",
    "evictionReasons",
    "evictCount",
    "pipelined",
    "podGroupPhase",
    "boundPerPodGroup",
    "unschedulable",
    "queueAllocated",
    "perCycle",
    "podGroupCondition",
    "podGroupEvents",
    "volumeBindings",
    "withinOneHyperNode",
    "podsWithinOneHyperNode",
    "bindsWithin",
    "bindAnnotations",
];

/// The keys of one `expect.perCycle` entry the runner checks.
pub const PER_CYCLE_KEYS: &[&str] = &["binds", "pipelined", "evicted"];

/// The keys of one `expect.podGroupCondition` entry (`type` required).
pub const POD_GROUP_CONDITION_KEYS: &[&str] = &["type", "reason", "message"];

/// The top-level keys of a case: the conformance format's (`name`, `origin`, `conf`, `cluster`,
/// `cycles`, `expect`, `notes`) and Basalt's `simulateArgs`. Any other key is an error: a
/// misspelt `expect` would leave the case checking nothing, a misspelt `cycles` would run one.
pub const CASE_KEYS: &[&str] = &["name", "origin", "conf", "cluster", "cycles", "expect", "notes", "simulateArgs"];

/// The case is a mapping with only [`CASE_KEYS`]; `cluster` is text; `expect` is a non-empty
/// mapping (a case without one would pass without checking anything); `cycles`, when given, is
/// a positive integer; `simulateArgs`, when given, a list. One message per problem, naming the
/// key.
pub fn case_key_errors(case: &Yaml) -> Vec<String> {
    let Some(m) = case.as_mapping() else { return vec![format!("the case is not a mapping: {case:?}")] };
    let mut bad: Vec<String> = m
        .keys()
        .filter_map(|k| {
            let k = k.as_str().unwrap_or("<not a string>");
            (!CASE_KEYS.contains(&k)).then(|| format!("unknown key {k:?} (known: {})", CASE_KEYS.join(", ")))
        })
        .collect();
    if !case.get("cluster").is_some_and(|v| v.is_string()) {
        bad.push("cluster: missing or not text".into());
    }
    if case.get("expect").and_then(|v| v.as_mapping()).is_none_or(|m| m.is_empty()) {
        bad.push("expect: missing or empty (the case would check nothing)".into());
    }
    if let Some(c) = case.get("cycles") {
        if c.as_u64().is_none_or(|n| n == 0) {
            bad.push(format!("cycles: not a positive integer: {c:?}"));
        }
    }
    if let Some(a) = case.get("simulateArgs") {
        if !a.is_sequence() {
            bad.push(format!("simulateArgs: not a list: {a:?}"));
        }
    }
    bad
}

/// `expect` is a mapping (or absent) with only [`EXPECT_KEYS`], each `perCycle` entry a mapping
/// with only [`PER_CYCLE_KEYS`], each `podGroupCondition` entry a mapping with `type` and only
/// [`POD_GROUP_CONDITION_KEYS`]; one message per offending key.
pub fn expect_key_errors(expect: &Yaml) -> Vec<String> {
    let keys_of = |v: &Yaml, allowed: &[&str], what: &str| -> Vec<String> {
        match v {
            Yaml::Null => Vec::new(),
            Yaml::Mapping(m) => m
                .keys()
                .filter_map(|k| {
                    let k = k.as_str().unwrap_or("<not a string>");
                    (!allowed.contains(&k)).then(|| format!("{what}: unknown key {k:?} (known: {})", allowed.join(", ")))
                })
                .collect(),
            other => vec![format!("{what}: not a mapping: {other:?}")],
        }
    };
    let mut bad = keys_of(expect, EXPECT_KEYS, "expect");
    if let Some(cycles) = expect.get("perCycle") {
        match cycles.as_sequence() {
            Some(cycles) => {
                for (i, c) in cycles.iter().enumerate() {
                    bad.extend(keys_of(c, PER_CYCLE_KEYS, &format!("expect.perCycle[{i}]")));
                }
            }
            None => bad.push(format!("expect.perCycle: not a list: {cycles:?}")),
        }
    }
    if let Some(conds) = expect.get("podGroupCondition") {
        match conds.as_mapping() {
            Some(conds) => {
                for (pg, c) in conds {
                    let what = format!("expect.podGroupCondition[{}]", pg.as_str().unwrap_or("<not a string>"));
                    bad.extend(keys_of(c, POD_GROUP_CONDITION_KEYS, &what));
                    if !c.get("type").is_some_and(|t| t.is_string()) {
                        bad.push(format!("{what}: no condition type"));
                    }
                }
            }
            None => bad.push(format!("expect.podGroupCondition: not a mapping: {conds:?}")),
        }
    }
    bad
}
/// The case's extra `basalt simulate` flags (Basalt's `simulateArgs` key, a list of strings,
/// e.g. `["--termination-grace", "1"]`).
pub fn simulate_args(case: &Yaml) -> Vec<String> {
    case.get("simulateArgs")
        .and_then(|v| v.as_sequence())
        .into_iter()
        .flatten()
        .map(|v| {
            v.as_str().map(str::to_string).unwrap_or_else(|| serde_yaml::to_string(v).unwrap_or_default().trim().to_string())
        })
        .collect()
}

/// The mismatches between `json` (the simulate JSON of `case`, timings removed) and the case's
/// `expect`, plus the unknown keys of `expect` (empty: the case holds).
pub fn check(case: &Yaml, json: &Json) -> Vec<String> {
    let cycles = json["cycles"].as_array().cloned().unwrap_or_default();
    let mut binds = BTreeMap::new();
    let mut evicted = BTreeSet::new();
    let mut reasons = BTreeMap::new();
    let mut phases = BTreeMap::new();
    for c in &cycles {
        for b in c["binds"].as_array().into_iter().flatten() {
            binds.insert(s(b, "pod"), s(b, "node"));
        }
        for e in c["evictions"].as_array().into_iter().flatten() {
            evicted.insert(s(e, "pod"));
            reasons.insert(s(e, "pod"), s(e, "reason"));
        }
        for pg in c["podGroups"].as_array().into_iter().flatten() {
            phases.insert(s(pg, "podGroup"), s(pg, "phase"));
        }
    }
    // Bind annotations over every cycle (the last bind of a pod wins).
    let mut bind_annotations: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for c in &cycles {
        for b in c["binds"].as_array().into_iter().flatten() {
            let a = b["annotations"].as_object().into_iter().flatten();
            bind_annotations
                .insert(s(b, "pod"), a.map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string())).collect());
        }
    }
    let last = cycles.last().cloned().unwrap_or(Json::Null);
    let pipelined: BTreeMap<String, String> =
        last["pipelined"].as_array().into_iter().flatten().map(|p| (s(p, "pod"), s(p, "node"))).collect();
    let group_of: BTreeMap<String, String> = json["podGroupOfPod"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
        .collect();

    let expect = case.get("expect").cloned().unwrap_or(Yaml::Null);
    let mut bad = expect_key_errors(&expect);
    let str_map = |v: &Yaml| -> BTreeMap<String, String> {
        v.as_mapping()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.as_str().unwrap_or_default().into(), v.as_str().unwrap_or_default().into()))
            .collect()
    };
    if let Some(want) = expect.get("binds") {
        let want = str_map(want);
        if want != binds {
            bad.push(format!("binds: want {want:?}, got {binds:?}"));
        }
    }
    bad.extend(hypernode_checks::check(case["cluster"].as_str().unwrap_or_default(), &expect, &binds, &group_of));
    if let Some(n) = expect.get("bindsCount").and_then(|v| v.as_u64()) {
        if binds.len() as u64 != n {
            bad.push(format!("bindsCount: want {n}, got {} {binds:?}", binds.len()));
        }
    }
    if let Some(want) = expect.get("evicted") {
        let want: BTreeSet<String> =
            want.as_sequence().into_iter().flatten().map(|v| v.as_str().unwrap_or_default().into()).collect();
        if want != evicted {
            bad.push(format!("evicted: want {want:?}, got {evicted:?}"));
        }
    }
    // evictionReasons: {pod: reason} over every cycle (the reason Volcano writes into the
    // pod's condition and events: `preempt`, `reclaim`, `shuffle`, `gangpreempt`, …).
    if let Some(want) = expect.get("evictionReasons") {
        let want = str_map(want);
        if want != reasons {
            bad.push(format!("evictionReasons: want {want:?}, got {reasons:?}"));
        }
    }
    if let Some(n) = expect.get("evictCount").and_then(|v| v.as_u64()) {
        if evicted.len() as u64 != n {
            bad.push(format!("evictCount: want {n}, got {}", evicted.len()));
        }
    }
    if let Some(want) = expect.get("pipelined") {
        let want = str_map(want);
        if want != pipelined {
            bad.push(format!("pipelined: want {want:?}, got {pipelined:?}"));
        }
    }
    for (pg, phase) in expect.get("podGroupPhase").map(str_map).unwrap_or_default() {
        if phases.get(&pg) != Some(&phase) {
            bad.push(format!("podGroupPhase {pg}: want {phase}, got {:?}", phases.get(&pg)));
        }
    }
    if let Some(want) = expect.get("boundPerPodGroup").and_then(|v| v.as_mapping()) {
        let mut counts: BTreeMap<String, u64> = BTreeMap::new();
        for p in binds.keys() {
            *counts.entry(group_of.get(p).cloned().unwrap_or_default()).or_default() += 1;
        }
        for (pg, n) in want {
            let (pg, n) = (pg.as_str().unwrap_or_default(), n.as_u64().unwrap_or(0));
            if counts.get(pg).copied().unwrap_or(0) != n {
                bad.push(format!("boundPerPodGroup {pg}: want {n}, got {}", counts.get(pg).copied().unwrap_or(0)));
            }
        }
    }
    // volumeBindings: {"ns/pod": {claim: pv | "provision"}}, what the volume binder did for
    // the pod's claims before its bind, over all cycles (exact per listed pod).
    if let Some(want) = expect.get("volumeBindings").and_then(|v| v.as_mapping()) {
        let mut got: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        for c in &cycles {
            for vb in c["volumeBindings"].as_array().into_iter().flatten() {
                let e = got.entry(s(vb, "pod")).or_default();
                for (claim, pv) in vb["bind"].as_object().into_iter().flatten() {
                    e.insert(claim.clone(), pv.as_str().unwrap_or_default().to_string());
                }
                for claim in vb["provision"].as_array().into_iter().flatten() {
                    e.insert(claim.as_str().unwrap_or_default().to_string(), "provision".into());
                }
            }
        }
        for (pod, claims) in want {
            let pod = pod.as_str().unwrap_or_default().to_string();
            let claims = str_map(claims);
            let g = got.get(&pod).cloned().unwrap_or_default();
            if g != claims {
                bad.push(format!("volumeBindings {pod}: want {claims:?}, got {g:?}"));
            }
        }
    }
    // bindAnnotations: {"ns/pod": {key: value | "*"}}: the pod is bound and its bind carries
    // each listed key with that value ("*": any value); `{}` means a bind with no annotations.
    for (pod, want) in expect.get("bindAnnotations").and_then(|v| v.as_mapping()).into_iter().flatten() {
        let pod = pod.as_str().unwrap_or_default().to_string();
        let want = str_map(want);
        let Some(got) = bind_annotations.get(&pod) else {
            bad.push(format!("bindAnnotations {pod}: pod not bound"));
            continue;
        };
        if want.is_empty() && !got.is_empty() {
            bad.push(format!("bindAnnotations {pod}: want none, got {got:?}"));
        }
        for (k, v) in &want {
            if got.get(k).is_none_or(|g| v != "*" && g != v) {
                bad.push(format!("bindAnnotations {pod} {k}: want {v:?}, got {:?}", got.get(k)));
            }
        }
    }
    if let Some(want) = expect.get("unschedulable") {
        let got: BTreeMap<String, String> =
            last["unschedulable"].as_array().into_iter().flatten().map(|u| (s(u, "pod"), s(u, "message"))).collect();
        for (pod, msg) in str_map(want) {
            if got.get(&pod) != Some(&msg) {
                bad.push(format!("unschedulable {pod}: want {msg:?}, got {:?}", got.get(&pod)));
            }
        }
    }
    // queueAllocated: {queue: {resource: amount}}, the listed resources of each listed queue's
    // `status.allocated` after the last cycle (core units; a resource absent from the output is 0).
    if let Some(want) = expect.get("queueAllocated").and_then(|v| v.as_mapping()) {
        for (q, res) in want {
            let q = q.as_str().unwrap_or_default();
            let got = last["queues"].as_array().into_iter().flatten().find(|x| s(x, "queue") == q);
            for (r, amount) in res.as_mapping().into_iter().flatten() {
                let (r, amount) = (r.as_str().unwrap_or_default(), amount.as_i64().unwrap_or(-1));
                let have = got.and_then(|g| g["allocated"].get(r)).and_then(|v| v.as_i64()).unwrap_or(0);
                if have != amount {
                    bad.push(format!("queueAllocated {q} {r}: want {amount}, got {have}"));
                }
            }
        }
    }
    // perCycle: [{binds: {pod: node}, evicted: [pod], pipelined: {pod: node}}, …], the exact
    // binds, evictions and end-of-cycle pipelined tasks of cycle 1, 2, … (keys left out are not
    // checked for that cycle).
    if let Some(want) = expect.get("perCycle").and_then(|v| v.as_sequence()) {
        if want.len() != cycles.len() {
            bad.push(format!("perCycle: {} entries for {} cycles", want.len(), cycles.len()));
        }
        for (i, (w, c)) in want.iter().zip(&cycles).enumerate() {
            let pairs = |key: &str, a: &str, b: &str| -> BTreeMap<String, String> {
                c[key].as_array().into_iter().flatten().map(|x| (s(x, a), s(x, b))).collect()
            };
            if let Some(wb) = w.get("binds") {
                let (wb, got) = (str_map(wb), pairs("binds", "pod", "node"));
                if wb != got {
                    bad.push(format!("cycle {}: binds: want {wb:?}, got {got:?}", i + 1));
                }
            }
            if let Some(wp) = w.get("pipelined") {
                let (wp, got) = (str_map(wp), pairs("pipelined", "pod", "node"));
                if wp != got {
                    bad.push(format!("cycle {}: pipelined: want {wp:?}, got {got:?}", i + 1));
                }
            }
            if let Some(we) = w.get("evicted") {
                let we: BTreeSet<String> =
                    we.as_sequence().into_iter().flatten().map(|v| v.as_str().unwrap_or_default().into()).collect();
                let got: BTreeSet<String> = c["evictions"].as_array().into_iter().flatten().map(|x| s(x, "pod")).collect();
                if we != got {
                    bad.push(format!("cycle {}: evicted: want {we:?}, got {got:?}", i + 1));
                }
            }
        }
    }
    if let Some(want) = expect.get("podGroupCondition").and_then(|v| v.as_mapping()) {
        for (pg, cond) in want {
            let pg = pg.as_str().unwrap_or_default();
            let kind = cond.get("type").and_then(|v| v.as_str()).unwrap_or_default();
            let found = last["podGroups"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|g| s(g, "podGroup") == pg)
                .flat_map(|g| g["conditions"].as_array().cloned().unwrap_or_default())
                .find(|c| s(c, "type") == kind);
            match found {
                None => bad.push(format!("podGroupCondition {pg}: no {kind} condition")),
                Some(c) => {
                    for key in ["reason", "message"] {
                        if let Some(w) = cond.get(key).and_then(|v| v.as_str()) {
                            if s(&c, key) != w {
                                bad.push(format!("podGroupCondition {pg} {key}: want {w:?}, got {:?}", s(&c, key)));
                            }
                        }
                    }
                }
            }
        }
    }
    // podGroupEvents: {pg: ["<type> <reason> <message>", …]}, events each PodGroup must have got
    // in some cycle (others may come too).
    if let Some(want) = expect.get("podGroupEvents").and_then(|v| v.as_mapping()) {
        let got: BTreeSet<(String, String)> = cycles
            .iter()
            .flat_map(|c| c["events"].as_array().cloned().unwrap_or_default())
            .map(|e| (s(&e, "podGroup"), format!("{} {} {}", s(&e, "type"), s(&e, "reason"), s(&e, "message"))))
            .collect();
        for (pg, events) in want {
            let pg = pg.as_str().unwrap_or_default().to_string();
            for e in events.as_sequence().into_iter().flatten() {
                let e = e.as_str().unwrap_or_default().to_string();
                if !got.contains(&(pg.clone(), e.clone())) {
                    bad.push(format!("podGroupEvents {pg}: no event {e:?}"));
                }
            }
        }
    }
    bad
}
