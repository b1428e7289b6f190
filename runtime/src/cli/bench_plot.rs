//! `basalt bench --plot`: the power-law fit of time against cluster size and the log-log SVG
//! chart of a sweep, drawn with `plotters`.
//!
//! The fit is ordinary least squares on `ln(ms) = a + b·ln(nodes / 1000)` over the per-size
//! medians, so the growth is `ms = c · (nodes/1000)^b` with `c = e^a` the time at 1000 nodes and
//! `b` the exponent (1 = linear in the node count). A fit is drawn and printed as a growth only
//! when it is trustworthy ([`PowerFit::is_poor`]: at least [`MIN_FIT_SIZES`] sizes and R² at
//! least [`MIN_FIT_R2`]); otherwise the chart and the fit lines say so instead of drawing a line
//! through noise. Each point carries a bar from the fastest to the slowest run of its size, and
//! the legend gets headroom above everything drawn beneath it.

use super::bench_sweep::SweepPoint;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use std::path::Path;

/// The node count the fitted coefficient refers to: `ms = coef_ms · (nodes / FIT_REF_NODES)^exponent`.
pub const FIT_REF_NODES: f64 = 1000.0;
/// Fewest distinct sizes a fit is drawn for (two points always fit exactly, so say nothing).
pub const MIN_FIT_SIZES: usize = 3;
/// Smallest R² (of the log-log fit) a fit is drawn for.
pub const MIN_FIT_R2: f64 = 0.9;

/// Chart size, pixels.
const SIZE: (u32, u32) = (960, 560);
/// Left margin plus y label area plus right margin, pixels (to estimate the x axis length).
const X_AXIS_INSET: u32 = 16 + 72 + 16;
/// Approximate width of one label character at 13 px sans-serif, pixels.
const LABEL_CHAR_PX: f64 = 7.0;
/// Height of the plotting area (chart minus caption, x label area and margins), pixels, roughly.
const PLOT_HEIGHT: u32 = SIZE.1 - 36 - 44 - 32;
/// Height of one legend row, pixels, roughly.
const LEGEND_ROW_PX: f64 = 17.0;

const COLORS: [RGBColor; 5] =
    [RGBColor(31, 119, 180), RGBColor(214, 39, 40), RGBColor(44, 160, 44), RGBColor(255, 127, 14), RGBColor(148, 103, 189)];

/// A power law `ms = coef_ms · (nodes / 1000)^exponent` fitted to measured points.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PowerFit {
    /// The fitted time at 1000 nodes, ms.
    pub coef_ms: f64,
    /// The growth exponent b (1 = linear in the node count, 2 = quadratic).
    pub exponent: f64,
    /// Coefficient of determination of the log-log fit (1 = every point on the line).
    pub r2: f64,
    /// Points the fit used (positive node counts and times).
    pub points: usize,
}

impl PowerFit {
    /// The fitted time at `nodes`, ms.
    pub fn at(&self, nodes: f64) -> f64 {
        self.coef_ms * (nodes / FIT_REF_NODES).powf(self.exponent)
    }

    /// The formula for a legend, e.g. `0.213 ms · (nodes/1000)^1.08`.
    pub fn formula(&self) -> String {
        format!("{} ms · (nodes/1000)^{:.2}", sig3(self.coef_ms), self.exponent)
    }

    /// Why the fit does not describe the growth, if it does not: fewer than [`MIN_FIT_SIZES`]
    /// sizes, or R² below [`MIN_FIT_R2`] (e.g. `R² 0.76 < 0.9`).
    pub fn is_poor(&self) -> Option<String> {
        if self.points < MIN_FIT_SIZES {
            Some(format!("{} sizes < {MIN_FIT_SIZES}", self.points))
        } else if self.r2.is_nan() || self.r2 < MIN_FIT_R2 {
            Some(format!("R² {:.2} < {MIN_FIT_R2}", self.r2))
        } else {
            None
        }
    }
}

/// Least-squares fit of `ln(ms) = a + b·ln(nodes/1000)` to `(nodes, ms)` points. Points with a
/// non-positive or non-finite coordinate are left out; `None` when fewer than two distinct node
/// counts remain.
pub fn fit_power(points: &[(f64, f64)]) -> Option<PowerFit> {
    let logs: Vec<(f64, f64)> = points
        .iter()
        .filter(|(x, y)| x.is_finite() && y.is_finite() && *x > 0.0 && *y > 0.0)
        .map(|&(x, y)| ((x / FIT_REF_NODES).ln(), y.ln()))
        .collect();
    if logs.len() < 2 {
        return None;
    }
    let n = logs.len() as f64;
    let mx = logs.iter().map(|p| p.0).sum::<f64>() / n;
    let my = logs.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = logs.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    let sxy: f64 = logs.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let b = sxy / sxx;
    let a = my - b * mx;
    let ss_tot: f64 = logs.iter().map(|p| (p.1 - my) * (p.1 - my)).sum();
    let ss_res: f64 = logs.iter().map(|p| (p.1 - a - b * p.0).powi(2)).sum();
    let r2 = if ss_tot > 0.0 { 1.0 - ss_res / ss_tot } else { 1.0 };
    Some(PowerFit { coef_ms: a.exp(), exponent: b, r2, points: logs.len() })
}

/// A number with three significant digits, trailing zeros dropped: 0.213, 2.38, 104, 2380.
fn sig3(v: f64) -> String {
    if !v.is_finite() || v == 0.0 {
        return format!("{v}");
    }
    let decimals = (2 - v.abs().log10().floor() as i32).clamp(0, 12) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// 1000 → 1k, 1500 → 1.5k, 50000 → 50k, 2000000 → 2M, 750 → 750.
fn compact(n: usize) -> String {
    let (v, unit) = match n {
        1_000_000.. => (n as f64 / 1e6, "M"),
        1_000.. => (n as f64 / 1e3, "k"),
        _ => return n.to_string(),
    };
    format!("{}{unit}", sig3(v))
}

/// The points of each variant in order of first appearance.
fn by_variant(points: &[SweepPoint]) -> Vec<(&str, Vec<&SweepPoint>)> {
    let mut groups: Vec<(&str, Vec<&SweepPoint>)> = Vec::new();
    for p in points {
        match groups.iter_mut().find(|g| g.0 == p.report.variant) {
            Some(g) => g.1.push(p),
            None => groups.push((&p.report.variant, vec![p])),
        }
    }
    groups
}

/// (cycle fit, session open fit) of some points' medians.
fn fits(ps: &[&SweepPoint]) -> (Option<PowerFit>, Option<PowerFit>) {
    let cycle: Vec<(f64, f64)> = ps.iter().map(|p| (p.report.nodes as f64, p.report.cycle_ms)).collect();
    let open: Vec<(f64, f64)> = ps.iter().map(|p| (p.report.nodes as f64, p.report.session_open_ms)).collect();
    (fit_power(&cycle), fit_power(&open))
}

/// The fits of every variant as printable lines, e.g.
/// `cycle fit (identical): 0.213 ms · (nodes/1000)^1.08 (b = 1.0812, R² 0.9981, 4 points)`, or
/// for a poor fit `cycle fit (identical): poor fit, not drawn (R² 0.76 < 0.9): … (b = -4.2200,
/// R² 0.7600, 4 points)`; empty when no variant has two distinct sizes.
pub fn fit_lines(points: &[SweepPoint]) -> Vec<String> {
    let mut lines = Vec::new();
    for (variant, ps) in by_variant(points) {
        let (cycle, open) = fits(&ps);
        for (what, fit) in [("cycle", cycle), ("session open", open)] {
            if let Some(f) = fit {
                let verdict = f.is_poor().map(|why| format!("poor fit, not drawn ({why}): ")).unwrap_or_default();
                lines.push(format!(
                    "{what} fit ({variant}): {verdict}{} (b = {:.4}, R² {:.4}, {} points)",
                    f.formula(),
                    f.exponent,
                    f.r2,
                    f.points
                ));
            }
        }
    }
    lines
}

/// The node counts that get an x label: every measured size, thinned from the left so that
/// labels of `width_px(nodes)` pixels do not overlap on a log axis of `axis_px` pixels.
fn label_sizes(sizes: &[(usize, usize)], x_lo: f64, x_hi: f64, axis_px: f64, width_px: impl Fn(usize) -> f64) -> Vec<f64> {
    let px = |n: usize| (n as f64 / x_lo).ln() / (x_hi / x_lo).ln() * axis_px;
    let mut kept: Vec<usize> = Vec::new();
    for &(n, _) in sizes {
        let fits = kept.last().is_none_or(|&k| px(n) - px(k) >= (width_px(n) + width_px(k)) / 2.0 + 8.0);
        if fits {
            kept.push(n);
        }
    }
    kept.into_iter().map(|n| n as f64).collect()
}

/// Y ticks on a log axis from `lo` to `hi`: 1, 2 and 5 times each power of ten, or only the
/// powers of ten when that would be more than a dozen ticks.
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let (first, last) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let all = |steps: &[f64]| -> Vec<f64> {
        (first..=last).flat_map(|k| steps.iter().map(move |m| m * 10f64.powi(k))).filter(|v| (lo..=hi).contains(v)).collect()
    };
    let fine = all(&[1.0, 2.0, 5.0]);
    if fine.len() <= 12 {
        fine
    } else {
        all(&[1.0])
    }
}

/// A measured point: nodes, the median ms, and the fastest and slowest run (the bar).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Measured {
    x: f64,
    y: f64,
    lo: f64,
    hi: f64,
}

/// A median with its fastest and slowest run, ms.
type Spread = (f64, Option<f64>, Option<f64>);

/// What is drawn for one variant.
struct Group {
    color: RGBColor,
    /// Legend label prefix: the variant when several are drawn.
    prefix: String,
    /// Points with positive times.
    cycle: Vec<Measured>,
    open: Vec<Measured>,
    /// The fits worth drawing (see [`PowerFit::is_poor`]).
    cycle_fit: Option<PowerFit>,
    open_fit: Option<PowerFit>,
    /// Why a fit was not drawn.
    cycle_poor: Option<String>,
    open_poor: Option<String>,
    /// Smallest and largest node count: the fit lines span these.
    span: (f64, f64),
}

impl Group {
    fn new(i: usize, many: bool, variant: &str, ps: &[&SweepPoint]) -> Group {
        let points = |f: fn(&SweepPoint) -> Spread| -> Vec<Measured> {
            ps.iter()
                .map(|p| {
                    let (y, lo, hi) = f(p);
                    let lo = lo.filter(|v| v.is_finite() && *v > 0.0).unwrap_or(y);
                    Measured { x: p.report.nodes as f64, y, lo: lo.min(y), hi: hi.unwrap_or(y).max(y) }
                })
                .filter(|m| m.y.is_finite() && m.y > 0.0)
                .collect()
        };
        let (cycle_fit, open_fit) = fits(ps);
        let keep = |f: Option<PowerFit>| f.filter(|f| f.is_poor().is_none());
        Group {
            color: COLORS[i % COLORS.len()],
            prefix: if many { format!("{variant} ") } else { String::new() },
            cycle: points(|p| (p.report.cycle_ms, p.cycle_ms_min, p.cycle_ms_max)),
            open: points(|p| (p.report.session_open_ms, p.session_open_ms_min, p.session_open_ms_max)),
            cycle_fit: keep(cycle_fit),
            open_fit: keep(open_fit),
            cycle_poor: cycle_fit.and_then(|f| f.is_poor()),
            open_poor: open_fit.and_then(|f| f.is_poor()),
            span: ps
                .iter()
                .fold((f64::INFINITY, 0.0), |(lo, hi), p| (lo.min(p.report.nodes as f64), hi.max(p.report.nodes as f64))),
        }
    }

    /// Legend rows: measured points and fits. With several variants the points share their
    /// colour (the title says filled = cycle, hollow = session open), so a points row appears
    /// only to say that its fit is not drawn and why.
    fn legend(&self) -> [Option<String>; 4] {
        let p = &self.prefix;
        let single = p.is_empty();
        let points = |what: &str, poor: &Option<String>| match poor {
            Some(why) => Some(format!("{p}{what}, measured: poor fit, not drawn ({why})")),
            None => single.then(|| format!("{p}{what}, measured")),
        };
        [
            points("cycle", &self.cycle_poor),
            self.cycle_fit.map(|f| format!("{p}cycle fit: {}", f.formula())),
            points("session open", &self.open_poor),
            self.open_fit.map(|f| format!("{p}session open fit: {}", f.formula())),
        ]
    }

    /// Every drawn (nodes, ms): the points with their bars and the fit line ends.
    fn drawn(&self) -> Vec<(f64, f64)> {
        let (lo, hi) = self.span;
        let ends = [self.cycle_fit, self.open_fit].into_iter().flatten().flat_map(|f| [(lo, f.at(lo)), (hi, f.at(hi))]);
        self.cycle
            .iter()
            .chain(&self.open)
            .flat_map(|m| [(m.x, m.lo), (m.x, m.hi)])
            .chain(ends)
            .filter(|p| p.1.is_finite() && p.1 > 0.0)
            .collect()
    }

    /// The highest value drawn at or left of `x_right`: bar tops, and each fit line over the part
    /// of its span left of `x_right` (a power law is highest at one end of an interval).
    fn highest_left_of(&self, x_right: f64) -> f64 {
        let bars = self.cycle.iter().chain(&self.open).filter(|m| m.x <= x_right).map(|m| m.hi);
        let x = x_right.min(self.span.1);
        let lines = [self.cycle_fit, self.open_fit]
            .into_iter()
            .flatten()
            .filter(|_| x >= self.span.0)
            .flat_map(|f| [f.at(self.span.0), f.at(x)]);
        bars.chain(lines).filter(|v| v.is_finite()).fold(0.0, f64::max)
    }
}

/// The top of a log y axis that starts at `y_lo`, with room above the data for the legend in
/// the upper left: at least twice `y_max`, and high enough that the legend's `band` (fraction of
/// the plot height) stays above `left_max`, the highest value drawn under the legend.
fn y_top(y_lo: f64, y_max: f64, left_max: f64, band: f64) -> f64 {
    let band = band.clamp(0.0, 0.8);
    let needed = (left_max.ln() - band * y_lo.ln()) / (1.0 - band);
    (y_max * 2.0).max(needed.exp())
}

/// Draws cycle time and session open (ms, log scale) against cluster size (nodes, log scale):
/// the median of every variant and size with a bar from its fastest to its slowest run, and
/// each trustworthy fit as a line over the measured sizes with its formula in the legend
/// (session open dashed, hollow points); a poor fit is named in the legend instead of drawn.
/// The legend sits in the upper left with the y axis raised so that nothing drawn runs under
/// it.
pub fn draw(file: &Path, points: &[SweepPoint]) -> Result<(), String> {
    let e = |err: DrawingAreaErrorKind<std::io::Error>| format!("cannot draw {}: {err}", file.display());
    let reports: Vec<SweepPoint> = points.iter().filter(|p| p.report.nodes > 0).cloned().collect();
    let mut sizes: Vec<(usize, usize)> = reports.iter().map(|p| (p.report.nodes, p.report.pods)).collect();
    sizes.sort_unstable();
    sizes.dedup_by_key(|s| s.0);
    let (Some(&(nmin, _)), Some(&(nmax, _))) = (sizes.first(), sizes.last()) else {
        return Err(format!("no reports to draw into {}", file.display()));
    };
    let variants = by_variant(&reports);
    let groups: Vec<Group> = variants.iter().enumerate().map(|(i, (v, rs))| Group::new(i, variants.len() > 1, v, rs)).collect();
    let drawn: Vec<(f64, f64)> = groups.iter().flat_map(Group::drawn).collect();
    if drawn.is_empty() {
        return Err(format!("no positive times to draw into {}", file.display()));
    }
    let (x_lo, x_hi) = (nmin as f64 / 1.3, nmax as f64 * 1.3);
    let axis_px = f64::from(SIZE.0 - X_AXIS_INSET);
    let legend: Vec<String> = groups.iter().flat_map(|g| g.legend()).flatten().collect();
    let legend_px = (legend.iter().map(|l| l.chars().count()).max().unwrap_or(0) as f64 * LABEL_CHAR_PX + 48.0).min(axis_px);
    let legend_right = x_lo * (x_hi / x_lo).powf(legend_px / axis_px);
    let y_lo = drawn.iter().map(|p| p.1).fold(f64::INFINITY, f64::min) / 2.0;
    let y_max = drawn.iter().map(|p| p.1).fold(0.0, f64::max);
    // The highest value under the legend: bars left of its right edge, and each fit line over
    // its part left of that edge.
    let left_max = groups.iter().map(|g| g.highest_left_of(legend_right)).fold(y_lo, f64::max);
    let band = (legend.len() as f64 * LEGEND_ROW_PX + 24.0) / f64::from(PLOT_HEIGHT);
    let y_hi = y_top(y_lo, y_max, left_max, band);
    let label = |n: usize| {
        let pods = sizes.iter().find(|s| s.0 == n).map_or(0, |s| s.1);
        format!("{} nodes / {} pods", compact(n), compact(pods))
    };
    let keys = label_sizes(&sizes, x_lo, x_hi, axis_px, |n| label(n).len() as f64 * LABEL_CHAR_PX);
    let x_label = |x: &f64| {
        label(sizes.iter().min_by(|a, b| (a.0 as f64 / x).ln().abs().total_cmp(&(b.0 as f64 / x).ln().abs())).map_or(0, |s| s.0))
    };
    let y_label = |y: &f64| sig3(*y);
    let mut threads: Vec<usize> = reports.iter().map(|p| p.report.threads).collect();
    threads.sort_unstable();
    threads.dedup();
    let title = format!(
        "basalt bench: one cycle vs cluster size ({}{}){}",
        variants.iter().map(|g| g.0).collect::<Vec<_>>().join(", "),
        match threads[..] {
            [t] => format!(", {t} thread{}", if t == 1 { "" } else { "s" }),
            _ => String::new(),
        },
        if variants.len() > 1 { "; filled: cycle, hollow: session open" } else { "" }
    );
    let repeats = reports.iter().map(|p| p.repeats).max().unwrap_or(1);
    let x_desc = if repeats > 1 {
        format!("cluster size (log scale); points: median of {repeats} runs, bars: fastest to slowest run")
    } else {
        "cluster size (log scale)".to_string()
    };

    let root = SVGBackend::new(file, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(e)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(72)
        .build_cartesian_2d(
            (x_lo..x_hi).log_scale().with_key_points(keys),
            (y_lo..y_hi).log_scale().with_key_points(log_ticks(y_lo, y_hi)),
        )
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc("time, ms (log scale)")
        .x_label_formatter(&x_label)
        .y_label_formatter(&y_label)
        .label_style(("sans-serif", 13))
        .axis_desc_style(("sans-serif", 14))
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(e)?;
    for g in &groups {
        let c = g.color;
        let (lo, hi) = g.span;
        let [cycle_label, cycle_fit_label, open_label, open_fit_label] = g.legend();
        let bars = g.cycle.iter().chain(&g.open).filter(|m| m.hi > m.lo);
        chart.draw_series(bars.map(|m| PathElement::new(vec![(m.x, m.lo), (m.x, m.hi)], c.stroke_width(1)))).map_err(e)?;
        let points = chart.draw_series(g.cycle.iter().map(|m| Circle::new((m.x, m.y), 4, c.filled()))).map_err(e)?;
        if let Some(l) = cycle_label {
            points.label(l).legend(move |(x, y)| Circle::new((x + 9, y), 4, c.filled()));
        }
        if let (Some(f), Some(l)) = (g.cycle_fit, cycle_fit_label) {
            chart
                .draw_series(LineSeries::new([(lo, f.at(lo)), (hi, f.at(hi))], c.stroke_width(2)))
                .map_err(e)?
                .label(l)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2)));
        }
        let points = chart.draw_series(g.open.iter().map(|m| Circle::new((m.x, m.y), 4, c.stroke_width(2)))).map_err(e)?;
        if let Some(l) = open_label {
            points.label(l).legend(move |(x, y)| Circle::new((x + 9, y), 4, c.stroke_width(2)));
        }
        if let (Some(f), Some(l)) = (g.open_fit, open_fit_label) {
            chart
                .draw_series(DashedLineSeries::new([(lo, f.at(lo)), (hi, f.at(hi))], 6, 4, c.stroke_width(1)))
                .map_err(e)?
                .label(l)
                .legend(move |(x, y)| DashedPathElement::new(vec![(x, y), (x + 18, y)], 4, 3, c.stroke_width(1)));
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font(("sans-serif", 13))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .draw()
        .map_err(e)?;
    root.present().map_err(e)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::bench::BenchReport;

    fn report(nodes: usize, cycle_ms: f64, session_open_ms: f64, variant: &str) -> SweepPoint {
        let run = BenchReport {
            nodes,
            pods: nodes * 10,
            variant: variant.into(),
            threads: 2,
            session_open_ms,
            session_open_cold_ms: 0.0,
            session_open_after_change_ms: 0.0,
            layout_patch_ms: 0.0,
            change_deltas: 0,
            cycle_ms,
            pods_bound: nodes * 10,
            pods_per_s: 0.0,
            cycle_cpu_ms: None,
            cycle_phases_ms: None,
            steady_cycle_ms: None,
            steady_cycle_phases_ms: None,
            steady_cycles: None,
            sampled_cycle_ms: None,
            sampled_cycle_cpu_ms: None,
            sampled_pods_bound: None,
            sampled_nodes_to_find: None,
            plain_cycle_ms: None,
            plain_cycle_cpu_ms: None,
            plain_pods_bound: None,
            peak_rss_bytes: 0,
        };
        SweepPoint::from_runs(&[run]).unwrap()
    }

    #[test]
    fn fit_recovers_a_known_power_law() {
        for (coef, exp) in [(0.21, 1.08), (3.5, 0.5), (120.0, 2.0), (0.0042, -0.3)] {
            let pts: Vec<(f64, f64)> = [20.0, 1000.0, 5000.0, 10000.0, 50000.0, 123457.0]
                .iter()
                .map(|&n| (n, coef * (n / 1000.0f64).powf(exp)))
                .collect();
            let f = fit_power(&pts).unwrap();
            assert!((f.exponent - exp).abs() < 1e-9, "exponent {} vs {exp}", f.exponent);
            assert!((f.coef_ms - coef).abs() < 1e-9, "coefficient {} vs {coef}", f.coef_ms);
            assert!((f.r2 - 1.0).abs() < 1e-9);
            assert_eq!(f.points, 6);
            assert!((f.at(7000.0) - coef * 7f64.powf(exp)).abs() < 1e-9 * coef * 7f64.powf(exp).max(1.0));
        }
    }

    #[test]
    fn fit_needs_two_distinct_positive_sizes() {
        assert_eq!(fit_power(&[]), None);
        assert_eq!(fit_power(&[(1000.0, 5.0)]), None);
        assert_eq!(fit_power(&[(1000.0, 5.0), (1000.0, 6.0)]), None);
        assert_eq!(fit_power(&[(1000.0, 5.0), (2000.0, 0.0), (0.0, 3.0), (4000.0, f64::NAN)]), None);
        let f = fit_power(&[(1000.0, 5.0), (2000.0, 10.0), (3000.0, 0.0)]).unwrap();
        assert_eq!(f.points, 2);
        assert!((f.exponent - 1.0).abs() < 1e-12);
    }

    #[test]
    fn numbers_and_formula() {
        assert_eq!(sig3(0.2134), "0.213");
        assert_eq!(sig3(2.0), "2");
        assert_eq!(sig3(104.4), "104");
        assert_eq!(sig3(2380.2), "2380");
        assert_eq!(sig3(0.00033), "0.00033");
        assert_eq!(compact(750), "750");
        assert_eq!(compact(1500), "1.5k");
        assert_eq!(compact(100_000), "100k");
        assert_eq!(compact(2_000_000), "2M");
        let f = PowerFit { coef_ms: 0.2134, exponent: 1.0812, r2: 1.0, points: 4 };
        assert_eq!(f.formula(), "0.213 ms · (nodes/1000)^1.08");
    }

    #[test]
    fn fit_lines_per_variant() {
        let rs = vec![
            report(1000, 10.0, 1.0, "identical"),
            report(4000, 40.0, 2.0, "identical"),
            report(16000, 160.0, 4.0, "identical"),
            report(1000, 30.0, 1.0, "distinct"),
            report(2000, 60.0, 1.0, "distinct"),
        ];
        let lines = fit_lines(&rs);
        assert_eq!(lines.len(), 4, "{lines:?}");
        assert!(lines[0].starts_with("cycle fit (identical): 10 ms · (nodes/1000)^1.00 (b = 1.0000"), "{}", lines[0]);
        assert!(lines[1].starts_with("session open fit (identical): 1 ms · (nodes/1000)^0.50"), "{}", lines[1]);
        assert!(lines[2].starts_with("cycle fit (distinct): poor fit, not drawn (2 sizes < 3): 30 ms"), "{}", lines[2]);
    }

    #[test]
    fn poor_fits_are_named_not_drawn() {
        // Noise: times that fall and rise with no law (a fit of exponent < 0 and low R²).
        let noisy = [(1000.0, 40.0), (2000.0, 9.0), (5000.0, 30.0), (10000.0, 2.0)];
        let f = fit_power(&noisy).unwrap();
        assert!(f.r2 < MIN_FIT_R2 && f.exponent < 0.0, "{f:?}");
        assert_eq!(f.is_poor(), Some(format!("R² {:.2} < 0.9", f.r2)));
        let good = fit_power(&[(1000.0, 1.0), (2000.0, 2.1), (4000.0, 3.9)]).unwrap();
        assert_eq!(good.is_poor(), None);
        let rs: Vec<SweepPoint> = noisy.iter().map(|&(n, ms)| report(n as usize, ms, ms / 10.0, "identical")).collect();
        let refs: Vec<&SweepPoint> = rs.iter().collect();
        let g = Group::new(0, false, "identical", &refs);
        assert_eq!((g.cycle_fit, g.open_fit), (None, None), "neither line is drawn");
        let [cycle, cycle_fit, ..] = g.legend();
        assert_eq!(cycle.as_deref(), Some(format!("cycle, measured: poor fit, not drawn (R² {:.2} < 0.9)", f.r2).as_str()));
        assert_eq!(cycle_fit, None);
    }

    #[test]
    fn the_legend_clears_bars_and_falling_lines() {
        let mut p = report(1000, 10.0, 1.0, "identical");
        p.cycle_ms_max = Some(50.0);
        let rs = [p, report(2000, 5.0, 1.0, "identical"), report(4000, 2.5, 1.0, "identical")];
        let refs: Vec<&SweepPoint> = rs.iter().collect();
        let g = Group::new(0, false, "identical", &refs);
        let f = g.cycle_fit.expect("an exact falling power law is drawn");
        assert!(f.exponent < 0.0);
        // Left of 1500 nodes: the bar top (50) rules, not the median (10) or the line there.
        assert_eq!(g.highest_left_of(1500.0), 50.0);
        // Without the bar, a falling line is highest at its left end, not where it leaves the legend.
        let rs = [report(1000, 10.0, 1.0, "identical"), report(2000, 5.0, 1.0, "identical"), report(4000, 2.5, 1.0, "identical")];
        let refs: Vec<&SweepPoint> = rs.iter().collect();
        let g = Group::new(0, false, "identical", &refs);
        assert!((g.highest_left_of(3000.0) - 10.0).abs() < 1e-9, "{}", g.highest_left_of(3000.0));
    }

    #[test]
    fn y_ticks() {
        let close = |a: Vec<f64>, b: &[f64]| a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x / y - 1.0).abs() < 1e-12);
        assert!(close(log_ticks(0.15, 60.0), &[0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0]));
        assert!(close(log_ticks(0.009, 100_001.0), &[0.01, 0.1, 1.0, 10.0, 100.0, 1000.0, 10_000.0, 100_000.0]));
    }

    #[test]
    fn legend_headroom() {
        // Nothing under the legend: twice the highest point.
        assert_eq!(y_top(1.0, 100.0, 1.0, 0.3), 200.0);
        // A point at the top left: the legend's band (30 % of the height) is added above it.
        let top = y_top(1.0, 100.0, 100.0, 0.3);
        assert!(((100f64.ln() - 1f64.ln()) / (top.ln() - 1f64.ln()) - 0.7).abs() < 1e-12);
    }

    #[test]
    fn labels_are_thinned_not_overlapping() {
        let sizes: Vec<(usize, usize)> = [1000, 1100, 5000, 10000].iter().map(|&n| (n, n * 10)).collect();
        let keys = label_sizes(&sizes, 800.0, 13000.0, 800.0, |_| 140.0);
        assert_eq!(keys, vec![1000.0, 5000.0, 10000.0]);
    }

    #[test]
    fn draws_an_svg() {
        let dir = std::env::temp_dir().join(format!("basalt-bench-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("scaling.svg");
        let rs = vec![
            report(100, 2.0, 0.1, "identical"),
            report(200, 4.5, 0.2, "identical"),
            report(400, 9.0, 0.0, "identical"),
            report(100, 3.0, 0.1, "distinct"),
            report(400, 15.0, 0.3, "distinct"),
        ];
        draw(&file, &rs).unwrap();
        let svg = std::fs::read_to_string(&file).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(svg.contains("identical cycle fit: ") && svg.contains(" ms · (nodes/1000)^"), "legend with the fit formula");
        assert!(svg.contains("100 nodes / 1k pods"), "x labels name nodes and pods");
        assert!(svg.contains("distinct cycle, measured: poor fit, not drawn (2 sizes &lt; 3)"), "a two-size fit is not drawn");
        assert!(draw(&dir.join("none.svg"), &[]).is_err());
    }
}
