//! `basalt bench --sweep` through the binary on tiny clusters: one JSON object per size with the
//! report's keys, the plot and the fits, `--from-json` redrawing a saved sweep, and the errors
//! for bad lists and flag combinations.

use std::path::PathBuf;
use std::process::{Command, Output};

const KEYS: [&str; 18] = [
    "nodes",
    "pods",
    "variant",
    "threads",
    "session_open_ms",
    "session_open_cold_ms",
    "session_open_after_change_ms",
    "layout_patch_ms",
    "change_deltas",
    "cycle_ms",
    "pods_bound",
    "pods_per_s",
    "peak_rss_bytes",
    "repeats",
    "cycle_ms_min",
    "cycle_ms_max",
    "session_open_ms_min",
    "session_open_ms_max",
];

fn basalt(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_basalt")).args(args).output().expect("run basalt")
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("bench-sweep-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn sweep_prints_one_report_per_size_and_plots_the_fit() {
    let dir = scratch("sweep");
    let svg = dir.join("scaling.svg");
    let out = basalt(&[
        "bench",
        "--sweep",
        "20,40,80",
        "--repeat",
        "3",
        "--threads",
        "1",
        "--output",
        "json",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stderr: {stderr}");
    let reports: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).expect("stdout is one JSON array");
    assert_eq!(reports.len(), 3, "one point per size, not per run");
    for (r, nodes) in reports.iter().zip([20, 40, 80]) {
        for k in KEYS {
            assert!(r.get(k).is_some(), "missing {k} in {r}");
        }
        assert_eq!(r["nodes"], nodes);
        assert_eq!(r["pods"], nodes * 10);
        assert_eq!(r["variant"], "identical");
        assert_eq!(r["threads"], 1);
        assert!(r["peak_rss_bytes"].as_u64().unwrap() > 0, "each size reports its own peak RSS");
        assert!(r["change_deltas"].as_u64().unwrap() > 0, "the after-change open applied a live change");
        assert!(r["session_open_after_change_ms"].as_f64().unwrap() > 0.0);
        assert_eq!(r["repeats"], 3);
        let f = |k: &str| r[k].as_f64().unwrap();
        assert!(f("cycle_ms_min") <= f("cycle_ms") && f("cycle_ms") <= f("cycle_ms_max"), "the median lies in the spread: {r}");
        assert!(f("session_open_ms_min") <= f("session_open_ms") && f("session_open_ms") <= f("session_open_ms_max"), "{r}");
    }
    // With JSON on stdout the fits go to stderr.
    assert!(stderr.contains("cycle fit (identical): ") && stderr.contains("(nodes/1000)^"), "stderr: {stderr}");
    let drawn = std::fs::read_to_string(&svg).unwrap();
    // Tiny clusters are noisy: the fit is drawn, or the legend says why it is not.
    assert!(drawn.contains("cycle fit: ") || drawn.contains("cycle, measured: poor fit, not drawn (R²"), "legend of the fit");
    assert!(drawn.contains("40 nodes / 400 pods") && drawn.contains("median of 3 runs"));

    // The saved array redraws without measuring; text output ends with the fits.
    let json = dir.join("sweep.json");
    std::fs::write(&json, &out.stdout).unwrap();
    let again = dir.join("again.svg");
    let out = basalt(&["bench", "--from-json", json.to_str().unwrap(), "--plot", again.to_str().unwrap()]);
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("20 nodes, 200 pods (identical), 1 thread(s): "), "{text}");
    assert!(lines[0].contains("; median of 3 runs: cycle "), "{text}");
    assert!(lines[1].starts_with("40 nodes, 400 pods (identical)"), "{text}");
    assert!(lines[3].starts_with("cycle fit (identical): "), "{text}");
    assert!(std::fs::read_to_string(&again).unwrap().contains("median of 3 runs"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sweep_of_several_variants_in_text() {
    let out = basalt(&[
        "bench",
        "--sweep",
        "20, 30",
        "--repeat",
        "1",
        "--pods-per-node",
        "2",
        "--variant",
        "identical,distinct",
        "--threads",
        "1",
    ]);
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4 + 4, "four runs and two fits per variant: {text}");
    assert!(lines[0].starts_with("20 nodes, 40 pods (identical)"), "{text}");
    assert!(lines[3].starts_with("30 nodes, 60 pods (distinct)"), "{text}");
    assert!(text.contains("cycle fit (distinct): "), "{text}");
}

#[test]
fn bad_lists_and_combinations_are_usage_errors() {
    for (args, message) in [
        (&["bench", "--sweep", "10,10x"][..], "--sweep: '10x' is not a node count"),
        (&["bench", "--sweep", "0"][..], "--sweep: '0' is not a node count"),
        (&["bench", "--sweep", "10", "--variant", "identical,nope"][..], "--variant 'nope'"),
        (&["bench", "--nodes", "10", "--variant", "identical,distinct"][..], "several variants need --sweep"),
        (&["bench", "--nodes", "10", "--plot", "x.svg"][..], "--plot needs --sweep or --from-json"),
        (&["bench", "--sweep", "10", "--repeat", "0"][..], "--repeat"),
    ] {
        let out = basalt(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    // clap rejects --nodes with --sweep.
    let out = basalt(&["bench", "--sweep", "10", "--nodes", "10"]);
    assert_eq!(out.status.code(), Some(2));
    let out = basalt(&["bench", "--from-json", "/nonexistent/sweep.json"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--from-json /nonexistent/sweep.json"));
}

/// `--percentage-nodes-to-find` times the same cycle a second time with Volcano's sampling, in
/// the same run: 20 nodes with `--minimum-feasible-nodes 5` stop at 50 % (10 nodes); without
/// the flag no sampled keys are printed.
#[test]
fn sampling_flags_time_a_second_sampled_cycle() {
    let args = ["bench", "--nodes", "20", "--threads", "1", "--change-rounds", "1", "--output", "json"];
    let out = basalt(&[&args[..], &["--percentage-nodes-to-find", "0", "--minimum-feasible-nodes", "5"]].concat());
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(r["sampled_nodes_to_find"], 10, "{r}");
    assert!(r["sampled_cycle_ms"].as_f64().unwrap() > 0.0, "{r}");
    assert!(r["sampled_pods_bound"].as_u64().unwrap() > 0, "{r}");
    let plain = basalt(&args);
    let r: serde_json::Value = serde_json::from_slice(&plain.stdout).expect("one JSON object");
    assert!(r.get("sampled_cycle_ms").is_none(), "{r}");
    let text = basalt(&["bench", "--nodes", "20", "--threads", "1", "--change-rounds", "1", "--percentage-nodes-to-find", "10"]);
    let line = String::from_utf8_lossy(&text.stdout);
    assert!(line.contains("; sampled (stop at 20 feasible of 20 nodes): cycle "), "{line}");
}
