//! `basalt replay --recording DIR` and `basalt explain --recording DIR --pod NS/NAME`: the
//! command-line side of the flight recorder ([`crate::recorder`]).

use super::simulate::read_conf;
use super::{EXIT_BAD_CONF, EXIT_NOTHING_LOADED, EXIT_OK};
use crate::recorder::explain;
use crate::recorder::reader::WalkSummary;
use crate::recorder::rerun::{rerun, RerunOptions};
use clap::Args;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Exit code of `basalt replay --recording` without `--conf`: a re-run cycle decided something
/// else than was recorded (with `--conf`, differences are the report and exit 0).
pub const EXIT_DIFFERENT: u8 = 4;

/// Arguments of `basalt explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The flight recording (`basalt scheduler --record DIR`).
    #[arg(long, value_name = "DIR")]
    pub recording: PathBuf,
    /// The pod, `namespace/name`.
    #[arg(long, value_name = "NS/NAME", required_unless_present_any = ["podgroup", "job"], conflicts_with_all = ["podgroup", "job"])]
    pub pod: Option<String>,
    /// A PodGroup, `namespace/name`: its phase and why its pods wait, cycle by cycle.
    #[arg(long, value_name = "NS/NAME", conflicts_with = "job")]
    pub podgroup: Option<String>,
    /// A Volcano Job, `namespace/name`: its PodGroup `<name>-<uid>` (also a Job whose pods were
    /// never created).
    #[arg(long, value_name = "NS/NAME")]
    pub job: Option<String>,
}

/// `namespace/name` split, or `None`.
fn split_key(s: &str) -> Option<(String, String)> {
    s.split_once('/')
        .filter(|(a, b)| !a.is_empty() && !b.is_empty() && !b.contains('/'))
        .map(|(a, b)| (a.to_string(), b.to_string()))
}

/// `#3 (cycle 17…)` or `#3–#9 (cycles 17…–17…, 7 cycles)`.
fn span_label(s: &explain::Span) -> String {
    if s.first == s.last {
        format!("#{} (cycle {})", s.first_seq, s.first)
    } else {
        format!("#{}–#{} (cycles {}–{}, {} cycles)", s.first_seq, s.last_seq, s.first, s.last, s.cycles)
    }
}

fn notes(out: &mut String, w: &WalkSummary) {
    for t in &w.truncated {
        let _ = writeln!(
            out,
            "note: {} ends inside a record (the scheduler stopped while writing); its complete cycles were read",
            t.display()
        );
    }
    for t in &w.live {
        let _ = writeln!(
            out,
            "note: {} is live (a running scheduler is still writing it): read up to its last complete record",
            t.display()
        );
    }
    if w.refused > 0 {
        let _ = writeln!(out, "note: {} recorded deltas were refused by the cluster copy, as they were live", w.refused);
    }
}

fn print(s: &str) {
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(s.as_bytes()).and_then(|()| o.flush());
}

/// Runs `basalt replay --recording DIR [--cycle N] [--conf OTHER]`; returns the exit code:
/// 0, [`EXIT_DIFFERENT`], [`EXIT_NOTHING_LOADED`] (unreadable recording or unknown cycle) or
/// [`EXIT_BAD_CONF`].
pub fn replay(dir: &Path, cycle: Option<u64>, confs: &[PathBuf], json: bool) -> u8 {
    if confs.len() > 1 {
        eprintln!("error: --recording takes at most one --conf (the conf to compare with the recorded one)");
        return EXIT_BAD_CONF;
    }
    let conf = match confs.first().map(|p| read_conf(p)) {
        None => None,
        Some(Ok(c)) => Some(c),
        Some(Err(e)) => {
            eprintln!("error: {e}");
            return EXIT_BAD_CONF;
        }
    };
    let other = confs.first().map(|p| p.display().to_string());
    let report = match rerun(dir, &RerunOptions { cycle, conf }) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_NOTHING_LOADED;
        }
    };
    let differing = report.differing();
    if json {
        let cycles: Vec<serde_json::Value> = report
            .cycles
            .iter()
            .map(|c| {
                serde_json::json!({
                    "cycle": c.cycle, "seq": c.seq, "segment": c.segment, "binds": c.binds, "pending": c.pending,
                    "rerunBinds": c.rerun_binds, "rerunPending": c.rerun_pending, "differences": c.differences,
                })
            })
            .collect();
        let v = serde_json::json!({
            "recording": dir.display().to_string(), "conf": other, "segments": report.walk.segments,
            "cycles": cycles, "differing": differing,
            "truncated": report.walk.truncated.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
            "live": report.walk.live.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        });
        print(&format!("{v}\n"));
    } else {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "Basalt replay of recording {}: {} segments, {} cycles re-run{}",
            dir.display(),
            report.walk.segments,
            report.cycles.len(),
            other.as_ref().map(|o| format!(" with conf {o}")).unwrap_or_default()
        );
        for c in &report.cycles {
            let verdict = match (&other, c.differences.is_empty()) {
                (None, true) => "identical".to_string(),
                (None, false) => format!("DIFFERENT ({} differences)", c.differences.len()),
                (Some(_), true) => "same decisions".to_string(),
                (Some(_), false) => {
                    format!("{} changes: {} binds, {} pending", c.differences.len(), c.rerun_binds, c.rerun_pending)
                }
            };
            let _ = writeln!(
                out,
                "#{} (cycle {}) [{}]: {} binds, {} pending: {verdict}",
                c.seq, c.cycle, c.segment, c.binds, c.pending
            );
            if cycle.is_some() {
                for b in &c.bind_lines {
                    let _ = writeln!(out, "  bind {b}");
                }
            }
            for d in &c.differences {
                let _ = writeln!(out, "  {d}");
            }
        }
        notes(&mut out, &report.walk);
        match &other {
            None => {
                let _ = writeln!(
                    out,
                    "{} of {} cycles decided exactly what was recorded",
                    report.cycles.len() - differing,
                    report.cycles.len()
                );
            }
            Some(o) => {
                let _ = writeln!(out, "{differing} of {} cycles would have decided differently with {o}", report.cycles.len());
            }
        }
        print(&out);
    }
    if other.is_none() && differing > 0 {
        EXIT_DIFFERENT
    } else {
        EXIT_OK
    }
}

/// Runs `basalt explain`; returns the exit code: 0, [`EXIT_BAD_CONF`] (a bad `--pod`) or
/// [`EXIT_NOTHING_LOADED`] (unreadable recording, or the pod appears in no cycle).
pub fn explain(args: &ExplainArgs) -> u8 {
    use crate::recorder::explain_group::{explain_group, Target};
    let group_target = match (&args.podgroup, &args.job) {
        (Some(g), _) => Some(("--podgroup", g, "PodGroup")),
        (None, Some(j)) => Some(("--job", j, "Job")),
        _ => None,
    };
    if let Some((flag, value, kind)) = group_target {
        let Some(key) = split_key(value) else {
            eprintln!("error: {flag} {value:?}: expected namespace/name");
            return EXIT_BAD_CONF;
        };
        let target = if kind == "Job" { Target::Job(key.clone()) } else { Target::PodGroup(key.clone()) };
        let (spans, walk) = match explain_group(&args.recording, &target) {
            Ok(x) => x,
            Err(e) => {
                eprintln!("error: {e}");
                return EXIT_NOTHING_LOADED;
            }
        };
        let mut out = String::new();
        let _ = writeln!(out, "{kind} {}/{} in recording {} ({} cycles)", key.0, key.1, args.recording.display(), walk.cycles);
        for s in &spans {
            let _ = writeln!(out, "{}: {}", span_label(s), s.state);
            for w in &s.why {
                let _ = writeln!(out, "  {w}");
            }
        }
        notes(&mut out, &walk);
        print(&out);
        // A Job without a PodGroup is an explanation, not an error; a PodGroup never seen is.
        if kind == "PodGroup" && spans.iter().all(|s| s.state == "absent") {
            eprintln!("error: PodGroup {}/{} is in no recorded cycle", key.0, key.1);
            return EXIT_NOTHING_LOADED;
        }
        return EXIT_OK;
    }
    let pod = args.pod.as_deref().unwrap_or_default();
    let Some((ns, name)) = split_key(pod) else {
        eprintln!("error: --pod {pod:?}: expected namespace/name");
        return EXIT_BAD_CONF;
    };
    let key = (ns.clone(), name.clone());
    let (spans, walk) = match explain::explain(&args.recording, &key) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_NOTHING_LOADED;
        }
    };
    let mut out = String::new();
    let _ = writeln!(out, "Pod {}/{} in recording {} ({} cycles)", ns, name, args.recording.display(), walk.cycles);
    for s in &spans {
        let _ = writeln!(out, "{}: {}", span_label(s), s.state);
        for w in &s.why {
            let _ = writeln!(out, "  {w}");
        }
    }
    notes(&mut out, &walk);
    print(&out);
    if spans.iter().all(|s| s.state == "absent") {
        eprintln!("error: pod {ns}/{name} is in no recorded cycle");
        return EXIT_NOTHING_LOADED;
    }
    EXIT_OK
}
