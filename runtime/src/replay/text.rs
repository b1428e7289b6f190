//! The report as a text table: one value column per conf, side by side, then the never-scheduled
//! reasons, input issues and notes. A pure function of the [`Report`].

use super::report::{Report, RunReport, Stats};
use std::fmt::Write as _;

/// Input issues printed at most (all of them are in the JSON output).
pub const MAX_ISSUES_SHOWN: usize = 10;

/// A table of labelled rows with one value per run.
struct Table {
    rows: Vec<(String, Vec<String>)>,
}

impl Table {
    fn section(&mut self, title: &str) {
        self.rows.push((title.to_string(), Vec::new()));
    }

    fn row(&mut self, label: &str, runs: &[RunReport], f: impl Fn(&RunReport) -> String) {
        self.rows.push((format!("  {label}"), runs.iter().map(f).collect()));
    }

    fn render(&self, heads: &[String], out: &mut String) {
        // Section titles (rows without values) may run past the label column.
        let lw = self.rows.iter().filter(|(_, v)| !v.is_empty()).map(|(l, _)| l.chars().count()).max().unwrap_or(0).max(10) + 2;
        let cols = heads.len();
        let widths: Vec<usize> = (0..cols)
            .map(|c| {
                let vals = self.rows.iter().filter_map(|(_, v)| v.get(c)).map(|s| s.chars().count());
                vals.chain(std::iter::once(heads[c].chars().count())).max().unwrap_or(0)
            })
            .collect();
        let _ = write!(out, "{:lw$}", "");
        for (c, h) in heads.iter().enumerate() {
            let _ = write!(out, "  {:>w$}", h, w = widths[c]);
        }
        out.push('\n');
        for (label, vals) in &self.rows {
            if vals.is_empty() {
                let _ = writeln!(out, "{label}");
                continue;
            }
            let _ = write!(out, "{label:lw$}");
            for (c, v) in vals.iter().enumerate() {
                let _ = write!(out, "  {:>w$}", v, w = widths[c]);
            }
            let trimmed = out.trim_end_matches(' ').len();
            out.truncate(trimmed);
            out.push('\n');
        }
    }
}

/// What a value with nothing to measure prints as (JSON: `null`).
pub const NOTHING: &str = "–";

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| NOTHING.to_string(), |v| format!("{:.1}%", v * 100.0))
}

/// `f` of the value, or [`NOTHING`].
fn or_nothing(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map_or_else(|| NOTHING.to_string(), f)
}

/// Seconds as a short number: `0`, `12.5`, `1234`.
fn s(v: f64) -> String {
    if v >= 100.0 || v == v.trunc() {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// Seconds with a human unit: `5400 s (1.5 h)`.
fn dur(v: f64) -> String {
    if v >= 2.0 * 86400.0 {
        format!("{} s ({:.1} d)", s(v), v / 86400.0)
    } else if v >= 2.0 * 3600.0 {
        format!("{} s ({:.1} h)", s(v), v / 3600.0)
    } else if v >= 120.0 {
        format!("{} s ({:.1} min)", s(v), v / 60.0)
    } else {
        format!("{} s", s(v))
    }
}

fn stats_rows(t: &mut Table, runs: &[RunReport], get: impl Fn(&RunReport) -> &Stats + Copy) {
    t.row("count", runs, |r| get(r).count.to_string());
    t.row("mean", runs, |r| or_nothing(get(r).mean, s));
    t.row("p50", runs, |r| or_nothing(get(r).p50, s));
    t.row("p90", runs, |r| or_nothing(get(r).p90, s));
    t.row("p99", runs, |r| or_nothing(get(r).p99, s));
    t.row("max", runs, |r| or_nothing(get(r).max, s));
}

/// Renders `r` as text, ending with a newline.
pub fn render(r: &Report) -> String {
    let mut out = String::new();
    let i = &r.input;
    let _ = writeln!(out, "Basalt replay: {}", i.name);
    let _ = writeln!(
        out,
        "  {} nodes, {} queues, {} pods in {} jobs ({} gangs); {}; seed {}",
        i.nodes, i.queues, i.pods, i.jobs, i.gangs, r.cycle_policy, r.seed
    );
    for n in &i.notes {
        let _ = writeln!(out, "  {n}");
    }
    if !r.not_honoured.is_empty() {
        let _ = writeln!(out, "  Not honoured by this Basalt version (skipped or replaced; --strict refuses the conf):");
        for n in &r.not_honoured {
            let _ = writeln!(out, "    - conf {}: {}", n.conf.as_deref().unwrap_or("?"), n.message);
        }
    }
    out.push('\n');
    let runs = &r.runs;
    let heads: Vec<String> = runs.iter().map(|x| x.conf.clone()).collect();
    let mut t = Table { rows: Vec::new() };
    t.section("Pods");
    t.row("submitted", runs, |x| x.results.pods.submitted.to_string());
    if runs.iter().any(|x| x.results.pods.pre_placed > 0) {
        t.row("pre-placed (not scheduled)", runs, |x| x.results.pods.pre_placed.to_string());
    }
    t.row("scheduled", runs, |x| x.results.pods.scheduled.to_string());
    t.row("never scheduled", runs, |x| x.results.pods.never_scheduled.to_string());
    t.row("completed", runs, |x| x.results.pods.completed.to_string());
    t.row("running at end", runs, |x| x.results.pods.running_at_end.to_string());
    t.row("jobs completed / submitted", runs, |x| format!("{} / {}", x.results.jobs_completed, x.results.jobs_submitted));
    t.section("Wait, creation to bind (s)");
    stats_rows(&mut t, runs, |x| &x.results.wait_s);
    t.section("Job completion time (s)");
    stats_rows(&mut t, runs, |x| &x.results.job_completion_s);
    t.section("Makespan, first arrival to last completion");
    t.row("makespan", runs, |x| or_nothing(x.results.makespan_s, dur));
    t.section("Utilization by requests, time-weighted mean (peak)");
    for (k, u) in runs.first().map(|x| x.results.utilization.clone()).unwrap_or_default().iter().enumerate() {
        let label = if u.resource == "gpu" {
            format!("gpu ({})", runs.first().map(|x| x.results.gpu_resource.as_str()).unwrap_or(""))
        } else {
            u.resource.clone()
        };
        t.row(&label, runs, |x| {
            x.results.utilization.get(k).map(|u| format!("{} ({})", pct(u.mean), pct(u.peak))).unwrap_or_default()
        });
    }
    t.section("Queue share / deserved, dominant resource, time-weighted mean");
    for (k, q) in runs.first().map(|x| x.results.queues.clone()).unwrap_or_default().iter().enumerate() {
        t.row(&format!("{} (weight {})", q.name, q.weight), runs, |x| {
            x.results.queues.get(k).map(|q| format!("{} / {}", pct(q.share_mean), pct(q.deserved_mean))).unwrap_or_default()
        });
    }
    t.section("Queue wait, mean (s) [scheduled / pods]");
    for (k, q) in runs.first().map(|x| x.results.queues.clone()).unwrap_or_default().iter().enumerate() {
        t.row(&q.name, runs, |x| {
            x.results
                .queues
                .get(k)
                .map(|q| format!("{} [{} / {}]", or_nothing(q.wait_mean_s, s), q.scheduled, q.pods))
                .unwrap_or_default()
        });
    }
    t.section("Fairness and disruption");
    t.row("Jain's index (share/deserved)", runs, |x| or_nothing(x.results.jain_index, |j| format!("{j:.3}")));
    t.row("preemptions / evictions", runs, |x| format!("{} / {}", x.results.preemptions, x.results.evictions));
    if let Some(first) = runs.first().and_then(|x| x.results.topology.as_ref()) {
        t.section("Network topology: placed gangs inside one HyperNode of the tier");
        t.row("gangs placed (with networkTopology)", runs, |x| {
            x.results.topology.as_ref().map(|g| format!("{} ({})", g.gangs_placed, g.topology_gangs_placed)).unwrap_or_default()
        });
        for (k, tier) in first.tiers.iter().enumerate() {
            let label =
                if tier.name.is_empty() { format!("tier {}", tier.tier) } else { format!("tier {} ({})", tier.tier, tier.name) };
            t.row(&label, runs, |x| {
                x.results
                    .topology
                    .as_ref()
                    .and_then(|g| g.tiers.get(k))
                    .map(|s| format!("{} ({})", pct(s.share), s.gangs))
                    .unwrap_or_default()
            });
        }
    }
    t.section("Cycles");
    t.row("cycles (with binds)", runs, |x| format!("{} ({})", x.results.cycles, x.results.cycles_with_binds));
    t.row("virtual end", runs, |x| dur(x.results.end_s));
    t.section("Wall clock (varies run to run)");
    t.row("cycle mean / p99 / max (ms)", runs, |x| {
        let ms = |v: Option<f64>| or_nothing(v, |v| format!("{v:.2}"));
        format!("{} / {} / {}", ms(x.timings.cycle_mean_ms), ms(x.timings.cycle_p99_ms), ms(x.timings.cycle_max_ms))
    });
    t.row("scheduler total (s)", runs, |x| format!("{:.2}", x.timings.scheduler_total_s));
    t.row("replay total (s)", runs, |x| format!("{:.2}", x.timings.replay_total_s));
    t.render(&heads, &mut out);

    for run in runs {
        let res = &run.results;
        if !res.never_scheduled_reasons.is_empty() {
            let _ = writeln!(out, "\nNever scheduled under {}: top reasons (pods: last message)", run.conf);
            for rc in &res.never_scheduled_reasons {
                let _ = writeln!(out, "  {:>6}: {}", rc.pods, rc.message);
            }
        }
        if !res.apply_issues.is_empty() {
            let _ = writeln!(out, "\nRefused by the simulated cluster under {} ({}):", run.conf, res.apply_issues.len());
            for a in res.apply_issues.iter().take(MAX_ISSUES_SHOWN) {
                let _ = writeln!(out, "  {a}");
            }
        }
    }
    if !i.issues.is_empty() {
        let _ = writeln!(out, "\nInput issues: {} ({} rows/objects skipped)", i.issues.len(), i.skipped);
        for line in i.issues.iter().take(MAX_ISSUES_SHOWN) {
            let _ = writeln!(out, "  {line}");
        }
        if i.issues.len() > MAX_ISSUES_SHOWN {
            let _ = writeln!(out, "  … {} more (all in --output json)", i.issues.len() - MAX_ISSUES_SHOWN);
        }
    }
    if !r.notes.is_empty() {
        out.push('\n');
        for n in &r.notes {
            let _ = writeln!(out, "Note: {n}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_well() {
        assert_eq!(dur(5.0), "5 s");
        assert_eq!(dur(12.25), "12.2 s");
        assert_eq!(dur(5400.0), "5400 s (90.0 min)");
        assert_eq!(dur(3.0 * 86400.0), "259200 s (3.0 d)");
    }

    #[test]
    fn nothing_to_measure_prints_a_dash() {
        assert_eq!(pct(None), "–");
        assert_eq!(pct(Some(0.0)), "0.0%", "a measured 0 stays 0");
        assert_eq!(or_nothing(None, s), "–");
        assert_eq!(or_nothing(Some(12.25), s), "12.2");
    }
}
