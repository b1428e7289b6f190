//! `--plot DIR`: SVG charts drawn with `plotters` — utilization over time per resource, each
//! queue's share against its deserved share over time, and the wait-time distribution of every
//! conf. With one conf the files are `utilization.svg`, `queue-shares.svg` and
//! `wait-times.svg`; with several, the first two are per conf (`utilization-<conf>.svg`).
//! Long series are averaged into at most [`MAX_POINTS`] time buckets to keep files small.

use super::fairness;
use super::metrics::window;
use super::record::{RunRecord, DIM_NAMES, NDIMS};
use super::workload::VirtualMs;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

/// Points per drawn series at most.
pub const MAX_POINTS: usize = 400;

/// Chart size, pixels.
const SIZE: (u32, u32) = (900, 420);

/// Wait-time histogram bin edges, seconds (the last bin is open).
const WAIT_EDGES: [f64; 10] = [0.0, 1.0, 10.0, 30.0, 60.0, 300.0, 900.0, 1800.0, 3600.0, 14_400.0];
const WAIT_LABELS: [&str; 10] = ["0", "1s", "10s", "30s", "1m", "5m", "15m", "30m", "1h", "4h"];

type PlotResult<T> = Result<T, String>;

fn err<E: std::fmt::Display>(file: &Path) -> impl Fn(E) -> String + '_ {
    move |e| format!("cannot draw {}: {e}", file.display())
}

/// A step function (value from `t` until the next point) as drawable points in hours: exact
/// steps when short, else bucket means.
fn step_points(points: &[(VirtualMs, f64)], from: VirtualMs, to: VirtualMs) -> Vec<(f64, f64)> {
    let h = |t: VirtualMs| (t - from) as f64 / 3.6e6;
    if to <= from || points.is_empty() {
        return Vec::new();
    }
    if points.len() * 2 <= MAX_POINTS {
        let mut out = Vec::with_capacity(points.len() * 2 + 1);
        let mut prev: Option<f64> = None;
        for &(t, v) in points.iter().filter(|(t, _)| *t <= to) {
            let t = t.max(from);
            if let Some(p) = prev {
                out.push((h(t), p));
            }
            out.push((h(t), v));
            prev = Some(v);
        }
        if let Some(p) = prev {
            out.push((h(to), p));
        }
        return out;
    }
    let n = MAX_POINTS;
    let width = (to - from) as f64 / n as f64;
    let mut area = vec![0.0f64; n];
    for (i, &(t, v)) in points.iter().enumerate() {
        let end = points.get(i + 1).map(|p| p.0).unwrap_or(to).min(to);
        let (a, b) = ((t.max(from) - from) as f64, (end - from) as f64);
        if b <= a {
            continue;
        }
        let (k0, k1) = (((a / width) as usize).min(n - 1), ((b / width) as usize).min(n - 1));
        for (k, slot) in area.iter_mut().enumerate().take(k1 + 1).skip(k0) {
            let overlap = b.min((k + 1) as f64 * width) - a.max(k as f64 * width);
            if overlap > 0.0 {
                *slot += v * overlap;
            }
        }
    }
    (0..n).map(|k| ((k as f64 + 0.5) * width / 3.6e6, area[k] / width)).collect()
}

/// One line of a chart.
struct Series {
    label: String,
    color: RGBColor,
    /// Drawn thin and light (a reference line, e.g. deserved).
    light: bool,
    /// (hours, fraction 0–1).
    points: Vec<(f64, f64)>,
}

/// A line chart of `series` over `end_h` hours, in % of the cluster.
fn line_chart(file: &Path, title: &str, end_h: f64, series: &[Series]) -> PlotResult<()> {
    let e = err(file);
    let root = SVGBackend::new(file, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(&e)?;
    let ymax = series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).fold(1.0f64, f64::max).min(1.0) * 100.0;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(48)
        .build_cartesian_2d(0f64..end_h.max(1e-6), 0f64..ymax.max(1.0))
        .map_err(&e)?;
    chart
        .configure_mesh()
        .x_desc("virtual time (h)")
        .y_desc("% of cluster")
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(&e)?;
    for s in series {
        let pts: Vec<(f64, f64)> = s.points.iter().map(|&(x, y)| (x, y * 100.0)).collect();
        let (c, label) = (s.color, &s.label);
        if s.light {
            let light = c.mix(0.45).stroke_width(1);
            chart
                .draw_series(LineSeries::new(pts, light))
                .map_err(&e)?
                .label(label.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], light));
        } else {
            chart
                .draw_series(LineSeries::new(pts, c.stroke_width(2)))
                .map_err(&e)?
                .label(label.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2)));
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .draw()
        .map_err(&e)?;
    root.present().map_err(&e)?;
    Ok(())
}

const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

fn utilization(file: &Path, label: &str, rec: &RunRecord) -> PlotResult<()> {
    let (from, to) = window(rec);
    let series = (0..NDIMS)
        .filter(|&d| rec.total[d] > 0)
        .map(|d| {
            let pts: Vec<(VirtualMs, f64)> = rec.usage.iter().map(|p| (p.t_ms, p.used[d] as f64 / rec.total[d] as f64)).collect();
            Series { label: DIM_NAMES[d].to_string(), color: COLORS[d], light: false, points: step_points(&pts, from, to) }
        })
        .collect::<Vec<_>>();
    line_chart(file, &format!("Utilization by requests ({label})"), (to - from) as f64 / 3.6e6, &series)
}

fn queue_shares(file: &Path, label: &str, rec: &RunRecord) -> PlotResult<()> {
    let (from, to) = window(rec);
    let weights: Vec<i32> = rec.queues.iter().map(|q| q.weight).collect();
    let per: Vec<(VirtualMs, Vec<(f64, f64)>)> = rec
        .samples
        .iter()
        .map(|s| (s.t_ms, fairness::instant(&rec.total, &weights, &s.queue_used, &s.queue_demand).shares))
        .collect();
    let mut series = Vec::new();
    for (q, info) in rec.queues.iter().enumerate() {
        let c = COLORS[q % COLORS.len()];
        let share: Vec<(VirtualMs, f64)> = per.iter().map(|(t, v)| (*t, v[q].0)).collect();
        let deserved: Vec<(VirtualMs, f64)> = per.iter().map(|(t, v)| (*t, v[q].1)).collect();
        series.push(Series {
            label: format!("{} share", info.name),
            color: c,
            light: false,
            points: step_points(&share, from, to),
        });
        let points = step_points(&deserved, from, to);
        series.push(Series { label: format!("{} deserved", info.name), color: c, light: true, points });
    }
    line_chart(file, &format!("Queue dominant share (bold) vs deserved (light) ({label})"), (to - from) as f64 / 3.6e6, &series)
}

/// Share of scheduled pods per wait bin.
fn wait_histogram(rec: &RunRecord) -> Vec<f64> {
    let mut counts = [0usize; WAIT_EDGES.len()];
    let mut n = 0;
    for t in rec.tasks.iter().filter(|t| !t.pre_placed) {
        if let (Some(a), Some(b)) = (t.arrival_ms, t.bind_ms) {
            let w = (b - a) as f64 / 1000.0;
            let k = WAIT_EDGES.iter().rposition(|&e| w >= e).unwrap_or(0);
            counts[k] += 1;
            n += 1;
        }
    }
    counts.iter().map(|&c| if n > 0 { c as f64 / n as f64 * 100.0 } else { 0.0 }).collect()
}

fn wait_times(file: &Path, runs: &[(&str, &RunRecord)]) -> PlotResult<()> {
    let e = err(file);
    let bins = WAIT_EDGES.len();
    let hists: Vec<Vec<f64>> = runs.iter().map(|(_, r)| wait_histogram(r)).collect();
    let ymax = hists.iter().flatten().fold(10.0f64, |a, &b| a.max(b));
    let root = SVGBackend::new(file, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(&e)?;
    let mut chart = ChartBuilder::on(&root)
        .caption("Wait from creation to bind (share of scheduled pods)", ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(48)
        .build_cartesian_2d(0f64..bins as f64, 0f64..(ymax * 1.1).min(100.0))
        .map_err(&e)?;
    chart
        .configure_mesh()
        .x_labels(bins + 1)
        .x_label_formatter(&|x| {
            let k = x.round() as usize;
            if (x - x.round()).abs() < 1e-6 && k < WAIT_LABELS.len() {
                WAIT_LABELS[k].to_string()
            } else {
                String::new()
            }
        })
        .x_desc("wait (bin lower edge; last bin open)")
        .y_desc("% of scheduled pods")
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(&e)?;
    let width = 0.8 / runs.len().max(1) as f64;
    for (i, ((label, _), hist)) in runs.iter().zip(&hists).enumerate() {
        let c = COLORS[i % COLORS.len()];
        chart
            .draw_series(hist.iter().enumerate().map(|(k, &y)| {
                let x0 = k as f64 + 0.1 + i as f64 * width;
                Rectangle::new([(x0, 0.0), (x0 + width, y)], c.filled())
            }))
            .map_err(&e)?
            .label(label.to_string())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], c.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .draw()
        .map_err(&e)?;
    root.present().map_err(&e)?;
    Ok(())
}

/// A conf label usable in a file name.
fn file_part(label: &str) -> String {
    label.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect()
}

/// Draws every chart of `runs` into `dir` (created if missing); returns the files written.
///
/// Errors: the directory or a file cannot be written, naming it.
pub fn write_plots(dir: &Path, runs: &[(&str, &RunRecord)]) -> PlotResult<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut files = Vec::new();
    for (label, rec) in runs {
        let suffix = if runs.len() == 1 { String::new() } else { format!("-{}", file_part(label)) };
        let u = dir.join(format!("utilization{suffix}.svg"));
        utilization(&u, label, rec)?;
        files.push(u);
        let q = dir.join(format!("queue-shares{suffix}.svg"));
        queue_shares(&q, label, rec)?;
        files.push(q);
    }
    let w = dir.join("wait-times.svg");
    wait_times(&w, runs)?;
    files.push(w);
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_and_buckets() {
        let pts = [(0, 1.0), (3_600_000, 0.5)];
        let s = step_points(&pts, 0, 7_200_000);
        assert_eq!(s, vec![(0.0, 1.0), (1.0, 1.0), (1.0, 0.5), (2.0, 0.5)]);
        let many: Vec<(VirtualMs, f64)> = (0..2000).map(|i| (i * 1000, if i < 1000 { 1.0 } else { 0.0 })).collect();
        let b = step_points(&many, 0, 2_000_000);
        assert_eq!(b.len(), MAX_POINTS);
        assert!((b[0].1 - 1.0).abs() < 1e-9 && b[MAX_POINTS - 1].1.abs() < 1e-9);
    }
}
