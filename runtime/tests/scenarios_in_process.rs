//! The project's scenario cases (`tests/scenarios/<area>/*.yaml`) run in this test's process,
//! without the `basalt` binary: the case's conf parsed ([`SchedulerConf::parse`]) and its
//! `simulateArgs` applied as `basalt simulate` applies them ([`SimulateArgs::apply`]), its
//! cluster text loaded ([`load::load_text`]), the cycles run by the simulator over the core's
//! `run_cycle` ([`sim::simulate`]), and the JSON of the conformance contract
//! ([`sim::render_json`]) checked against the case's `expect` by the same checks as the binary
//! runner (`scenario_checks/expect.rs`), on the fast path and on the plain scan, which must
//! decide the same. A failure here points at the core and the simulator, not at argument
//! parsing or process plumbing; `scenarios.rs` runs the same cases through the binary.

#[path = "scenario_checks/expect.rs"]
mod expect;

use basalt_core::cluster::Cluster;
use basalt_core::conf::SchedulerConf;
use basalt_runtime::cli::simulate::SimulateArgs;
use basalt_runtime::load::{self, LoadOptions, LoadReport};
use basalt_runtime::sim;
use clap::Parser;
use serde_json::Value as Json;
use serde_yaml::Value as Yaml;
use std::path::Path;

/// `basalt simulate`'s arguments, parsed as the command parses them.
#[derive(Parser)]
struct Simulate {
    #[command(flatten)]
    args: SimulateArgs,
}

/// Runs `case` in process (`plain`: with the plain reference scan); returns the simulate JSON.
///
/// Errors: the conf or `simulateArgs` do not parse, or nothing loads (as the binary's exit 2
/// and 3), naming the case.
fn run(path: &Path, case: &Yaml, plain: bool) -> Result<Json, String> {
    let cycles = case.get("cycles").and_then(|v| v.as_u64()).unwrap_or(1).to_string();
    let mut argv = vec!["simulate".to_string(), "--cluster".into(), "cluster.yaml".into(), "--cycles".into(), cycles];
    argv.extend(plain.then(|| "--plain-scan".to_string()));
    argv.extend(expect::simulate_args(case));
    let args = Simulate::try_parse_from(&argv).map_err(|e| format!("{}: simulateArgs: {e}", path.display()))?.args;
    let conf_text = case.get("conf").and_then(|v| v.as_str()).unwrap_or("");
    let conf = SchedulerConf::parse(conf_text).map_err(|e| format!("{}: conf: {e}", path.display()))?.0;
    let (conf, opts) = args.apply(conf);
    let mut cluster = Cluster::new();
    let mut report = LoadReport::default();
    let text = case.get("cluster").and_then(|v| v.as_str()).unwrap_or("");
    let load_opts = LoadOptions { scheduler_name: opts.scheduler_name.clone() };
    load::load_text("cluster.yaml", text, false, &mut cluster, &load_opts, &mut report);
    if report.loaded == 0 {
        return Err(format!("{}: nothing loaded: {:?}", path.display(), report.issues));
    }
    let out = sim::simulate(cluster, &conf, &opts, report);
    serde_json::from_str(&sim::render_json(&out)).map_err(|e| format!("{}: the JSON does not parse: {e}", path.display()))
}

#[test]
fn scenario_cases_hold_in_process() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios");
    let mut files = Vec::new();
    expect::cases(&root, &mut files);
    assert!(files.len() >= 40, "expected at least 40 scenario cases, found {}", files.len());
    let mut failures = Vec::new();
    for f in &files {
        let case: Yaml = serde_yaml::from_str(&std::fs::read_to_string(f).unwrap()).expect("case parses");
        let mut bad = expect::case_key_errors(&case);
        match (run(f, &case, false), run(f, &case, true)) {
            (Ok(fast), Ok(plain)) => {
                if fast != plain {
                    bad.push("the fast path and the plain scan decided differently".into());
                }
                bad.extend(expect::check(&case, &fast));
            }
            (Err(e), _) | (_, Err(e)) => bad.push(e),
        }
        if !bad.is_empty() {
            failures.push(format!(
                "FAIL {} ({})\n    {}",
                f.display(),
                case.get("name").and_then(|v| v.as_str()).unwrap_or("?"),
                bad.join("\n    ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} scenario cases failed in process:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}
