//! The project's scenario cases (`tests/scenarios/<area>/*.yaml`, the shared conformance format
//! plus Basalt's `bindAnnotations` (`{}` = none), `unschedulable`, `podGroupCondition`, `queueAllocated`, `evictionReasons` and
//! `perCycle` keys, the HyperNode keys of `scenario_checks/hypernode.rs`, and `simulateArgs`
//! for extra flags), each run
//! through `basalt simulate --output json` twice, on the fast path and with `--plain-scan`:
//! both outputs must be identical and match the case's `expect`. A key the runner does not
//! check (at the top, in `expect`, in a `perCycle` or `podGroupCondition` entry) and a case
//! without `expect` fail the case, so no case passes by checking nothing.

#[path = "scenario_checks/hypernode.rs"]
mod hypernode_checks;

use serde_json::Value as Json;
use serde_yaml::Value as Yaml;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn cases(dir: &Path, out: &mut Vec<PathBuf>) {
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

/// Runs one case on the fast path and on the plain scan; returns its mismatches.
fn run_case(path: &Path, case: &Yaml, tmp: &Path) -> Vec<String> {
    let fast = run_case_with(path, case, tmp, false);
    let plain = run_case_with(path, case, tmp, true);
    match (fast, plain) {
        (Ok((fast_json, mut bad)), Ok((plain_json, plain_bad))) => {
            if fast_json != plain_json {
                bad.push("the fast path and --plain-scan decided differently".into());
            }
            bad.extend(plain_bad.into_iter().map(|b| format!("--plain-scan: {b}")));
            bad
        }
        (Err(e), _) | (_, Err(e)) => vec![e],
    }
}

/// The keys of `expect` the runner checks; any other key is an error (a misspelt key would
/// otherwise pass without checking anything).
const EXPECT_KEYS: &[&str] = &[
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
const PER_CYCLE_KEYS: &[&str] = &["binds", "pipelined", "evicted"];

/// The keys of one `expect.podGroupCondition` entry (`type` required).
const POD_GROUP_CONDITION_KEYS: &[&str] = &["type", "reason", "message"];

/// The top-level keys of a case: the conformance format's (`name`, `origin`, `conf`, `cluster`,
/// `cycles`, `expect`, `notes`) and Basalt's `simulateArgs`. Any other key is an error: a
/// misspelt `expect` would leave the case checking nothing, a misspelt `cycles` would run one.
const CASE_KEYS: &[&str] = &["name", "origin", "conf", "cluster", "cycles", "expect", "notes", "simulateArgs"];

/// The case is a mapping with only [`CASE_KEYS`]; `cluster` is text; `expect` is a non-empty
/// mapping (a case without one would pass without checking anything); `cycles`, when given, is
/// a positive integer; `simulateArgs`, when given, a list. One message per problem, naming the
/// key.
fn case_key_errors(case: &Yaml) -> Vec<String> {
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
fn expect_key_errors(expect: &Yaml) -> Vec<String> {
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

#[test]
fn an_unknown_expect_key_is_rejected() {
    let case: Yaml = serde_yaml::from_str("binds: {p: n}\nbindCount: 3\nperCycle:\n- {binds: {}, evicts: [p]}\n").unwrap();
    let bad = expect_key_errors(&case);
    assert_eq!(bad.len(), 2, "{bad:?}");
    assert!(bad[0].starts_with("expect: unknown key \"bindCount\""), "{bad:?}");
    assert!(bad[1].starts_with("expect.perCycle[0]: unknown key \"evicts\""), "{bad:?}");
    let good: Yaml = serde_yaml::from_str("bindsCount: 3\nperCycle:\n- {binds: {}, evicted: [p], pipelined: {}}\n").unwrap();
    assert!(expect_key_errors(&good).is_empty());
    assert!(expect_key_errors(&Yaml::Null).is_empty(), "an absent expect is case_key_errors' to report");
    let cond: Yaml =
        serde_yaml::from_str("podGroupCondition:\n  ns/a: {type: Unschedulable, mesage: x}\n  ns/b: {reason: R}\n").unwrap();
    let bad = expect_key_errors(&cond);
    assert_eq!(bad.len(), 2, "{bad:?}");
    assert!(bad[0].starts_with("expect.podGroupCondition[ns/a]: unknown key \"mesage\""), "{bad:?}");
    assert_eq!(bad[1], "expect.podGroupCondition[ns/b]: no condition type");
}

#[test]
fn a_case_without_expect_or_with_an_unknown_key_is_rejected() {
    let case = |text: &str| -> Vec<String> { case_key_errors(&serde_yaml::from_str(text).unwrap()) };
    let good =
        "name: n\norigin: o\ncluster: |\n  ---\ncycles: 2\nsimulateArgs: [--seed, '1']\nexpect: {bindsCount: 0}\nnotes: x\n";
    assert!(case(good).is_empty(), "{:?}", case(good));
    let bad = case("name: n\ncluster: ''\nexpects: {bindsCount: 1}\ncycle: 3\n");
    assert_eq!(bad.len(), 3, "{bad:?}");
    assert!(bad[0].starts_with("unknown key \"expects\""), "{bad:?}");
    assert!(bad[1].starts_with("unknown key \"cycle\""), "{bad:?}");
    assert!(bad[2].starts_with("expect: missing or empty"), "{bad:?}");
    assert_eq!(case("cluster: ''\nexpect: {}\n"), ["expect: missing or empty (the case would check nothing)"]);
    assert_eq!(case("expect: {bindsCount: 1}\n"), ["cluster: missing or not text"]);
    assert_eq!(case("cluster: ''\ncycles: 0\nexpect: {bindsCount: 1}\n"), ["cycles: not a positive integer: Number(0)"]);
}

/// The case's extra `basalt simulate` flags (Basalt's `simulateArgs` key, a list of strings,
/// e.g. `["--termination-grace", "1"]`).
fn simulate_args(case: &Yaml) -> Vec<String> {
    case.get("simulateArgs")
        .and_then(|v| v.as_sequence())
        .into_iter()
        .flatten()
        .map(|v| {
            v.as_str().map(str::to_string).unwrap_or_else(|| serde_yaml::to_string(v).unwrap_or_default().trim().to_string())
        })
        .collect()
}

/// Runs one case (`plain`: with `--plain-scan`); returns the JSON output and the mismatches.
fn run_case_with(path: &Path, case: &Yaml, tmp: &Path, plain: bool) -> Result<(Json, Vec<String>), String> {
    let conf_path = tmp.join("scheduler.conf");
    let cluster_path = tmp.join("cluster.yaml");
    std::fs::write(&conf_path, case.get("conf").and_then(|v| v.as_str()).unwrap_or("")).unwrap();
    std::fs::write(&cluster_path, case.get("cluster").and_then(|v| v.as_str()).unwrap_or("")).unwrap();
    let cycles = case.get("cycles").and_then(|v| v.as_u64()).unwrap_or(1);
    let out = Command::new(env!("CARGO_BIN_EXE_basalt"))
        .args(["simulate", "--conf"])
        .arg(&conf_path)
        .arg("--cluster")
        .arg(&cluster_path)
        .args(["--cycles", &cycles.to_string(), "--output", "json"])
        .args(plain.then_some("--plain-scan"))
        .args(simulate_args(case))
        .output()
        .expect("run basalt");
    if !out.status.success() {
        return Err(format!("{}: exit {:?}: {}", path.display(), out.status.code(), String::from_utf8_lossy(&out.stderr)));
    }
    let mut json: Json = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    // Wall-clock timings differ run to run; the decisions are everything else.
    if let Some(o) = json.as_object_mut() {
        o.remove("timings");
    }
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
    Ok((json, bad))
}

#[test]
fn scenario_cases_hold() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios");
    let mut files = Vec::new();
    cases(&root, &mut files);
    assert!(files.len() >= 40, "expected at least 40 scenario cases, found {}", files.len());
    let tmp = std::env::temp_dir().join(format!("basalt-scenarios-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let mut failures = Vec::new();
    let mut checked = 0;
    for f in &files {
        let case: Yaml = serde_yaml::from_str(&std::fs::read_to_string(f).unwrap()).expect("case parses");
        let mut bad = case_key_errors(&case);
        bad.extend(run_case(f, &case, &tmp));
        checked += 1;
        if !bad.is_empty() {
            failures.push(format!(
                "FAIL {} ({})\n    {}",
                f.display(),
                case.get("name").and_then(|v| v.as_str()).unwrap_or("?"),
                bad.join("\n    ")
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(failures.is_empty(), "{} of {checked} scenario cases failed:\n{}", failures.len(), failures.join("\n"));
}

/// README.md's "The project's own N scenario cases" is the number of cases here (it once said
/// 108 when there were 134).
#[test]
fn readme_gives_the_number_of_scenario_cases() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    cases(&root.join("tests/scenarios"), &mut files);
    let readme = std::fs::read_to_string(root.join("../README.md")).expect("README.md");
    const LEAD: &str = "The project's own ";
    let at = readme.find(LEAD).expect("README.md says \"The project's own N scenario cases\"");
    let said: String = readme[at + LEAD.len()..].chars().take_while(|c| c.is_ascii_digit() || *c == ',').collect();
    assert_eq!(
        said.replace(',', "").parse::<usize>().ok(),
        Some(files.len()),
        "README.md says {LEAD}{said} scenario cases; runtime/tests/scenarios holds {}",
        files.len()
    );
}
