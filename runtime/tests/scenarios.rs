//! The project's scenario cases (`tests/scenarios/<area>/*.yaml`, the shared conformance format
//! plus Basalt's `bindAnnotations` (`{}` = none), `unschedulable`, `podGroupCondition`, `queueAllocated`, `evictionReasons` and
//! `perCycle` keys, the HyperNode keys of `scenario_checks/hypernode.rs`, and `simulateArgs`
//! for extra flags), each run
//! through `basalt simulate --output json` twice, on the fast path and with `--plain-scan`:
//! both outputs must be identical and match the case's `expect`. A key the runner does not
//! check (at the top, in `expect`, in a `perCycle` or `podGroupCondition` entry) and a case
//! without `expect` fail the case, so no case passes by checking nothing.

//! The case format and the checks are `scenario_checks/expect.rs`, shared with
//! `scenarios_in_process.rs`, which runs the same cases without the binary.

#[path = "scenario_checks/expect.rs"]
mod expect;

use expect::{case_key_errors, cases, check, expect_key_errors, simulate_args};
use serde_json::Value as Json;
use serde_yaml::Value as Yaml;
use std::path::Path;
use std::process::Command;

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
    let bad = check(case, &json);
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
