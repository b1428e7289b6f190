//! Cron schedules as Volcano's CronJob reads them: robfig/cron v3's `ParseStandard` (five fields
//! `minute hour day-of-month month day-of-week`, or a descriptor such as `@daily` or
//! `@every 1h30m`), and the IANA time-zone names Go's `time.LoadLocation` accepts.
//!
//! Used by the `/cronjobs/validate` admission rule (`admission::cronjobs`) and by the CronJob
//! controller (`controller::cron_controller`), which finds fire times with [`Schedule::next`].
//!
//! Written here rather than taken from a cron crate: the crates on crates.io accept more than
//! robfig's standard parser (seconds fields, `L`, `W`, `#`, day-of-week 7) or combine the two day
//! fields differently, and a CronJob Volcano refuses must be refused here too.

use super::duration::parse_go_duration;
use jiff::tz::TimeZone;
use jiff::Timestamp;
use std::time::Duration;

/// A parsed standard cron schedule.
///
/// Each field is a bit set of the values it matches (bit `v` set: value `v` matches); `dom_star` /
/// `dow_star` record that the day-of-month / day-of-week field was `*` or `?`, which decides how
/// the two day fields combine (robfig/cron: both restricted → either matches; otherwise both must).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// A five-field spec or a fixed descriptor (`@hourly`, `@daily`, …).
    Fields {
        /// Minutes 0-59.
        minutes: u64,
        /// Hours 0-23.
        hours: u32,
        /// Days of the month 1-31.
        dom: u32,
        /// Months 1-12.
        months: u16,
        /// Days of the week 0-6, Sunday = 0.
        dow: u8,
        /// The day-of-month field was `*` or `?`.
        dom_star: bool,
        /// The day-of-week field was `*` or `?`.
        dow_star: bool,
    },
    /// `@every DURATION`: a fixed interval (robfig rounds it down to whole seconds, at least 1 s).
    Every(Duration),
}

/// One field's bounds and value names.
struct Bounds {
    name: &'static str,
    min: u32,
    max: u32,
    names: &'static [(&'static str, u32)],
}

const MINUTES: Bounds = Bounds { name: "minute", min: 0, max: 59, names: &[] };
const HOURS: Bounds = Bounds { name: "hour", min: 0, max: 23, names: &[] };
const DOM: Bounds = Bounds { name: "day of month", min: 1, max: 31, names: &[] };
const MONTHS: Bounds = Bounds {
    name: "month",
    min: 1,
    max: 12,
    names: &[
        ("jan", 1),
        ("feb", 2),
        ("mar", 3),
        ("apr", 4),
        ("may", 5),
        ("jun", 6),
        ("jul", 7),
        ("aug", 8),
        ("sep", 9),
        ("oct", 10),
        ("nov", 11),
        ("dec", 12),
    ],
};
const DOW: Bounds = Bounds {
    name: "day of week",
    min: 0,
    max: 6,
    names: &[("sun", 0), ("mon", 1), ("tue", 2), ("wed", 3), ("thu", 4), ("fri", 5), ("sat", 6)],
};

impl Schedule {
    /// Parses `spec` as robfig/cron v3's `ParseStandard` does (what Volcano's CronJob uses).
    ///
    /// Errors: robfig's reasons, e.g. `expected exactly 5 fields, found 6: [...]`,
    /// `end of range (60) above maximum (59): 0-60`, `unrecognized descriptor: @sometimes`.
    /// A `TZ=` / `CRON_TZ=` prefix is refused here: Volcano refuses it before parsing, and the
    /// time zone belongs in `spec.timeZone`.
    pub fn parse(spec: &str) -> Result<Schedule, String> {
        let spec = spec.trim();
        if spec.is_empty() {
            return Err("empty spec string".into());
        }
        if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
            return Err("a TZ= or CRON_TZ= prefix is not allowed: set spec.timeZone".into());
        }
        if spec.starts_with('@') {
            return descriptor(spec);
        }
        let fields: Vec<&str> = spec.split_whitespace().collect();
        if fields.len() != 5 {
            return Err(format!("expected exactly 5 fields, found {}: [{}]", fields.len(), fields.join(" ")));
        }
        let (minutes, _) = field(fields[0], &MINUTES)?;
        let (hours, _) = field(fields[1], &HOURS)?;
        let (dom, dom_star) = field(fields[2], &DOM)?;
        let (months, _) = field(fields[3], &MONTHS)?;
        let (dow, dow_star) = field(fields[4], &DOW)?;
        Ok(Schedule::Fields {
            minutes,
            hours: hours as u32,
            dom: dom as u32,
            months: months as u16,
            dow: dow as u8,
            dom_star,
            dow_star,
        })
    }

    /// Whether a wall-clock minute matches (month 1-12, day of month 1-31, day of week 0-6 with
    /// Sunday 0). `@every` schedules match no wall-clock minute: they count from their last run.
    pub fn matches(&self, minute: u32, hour: u32, day: u32, month: u32, weekday: u32) -> bool {
        let Schedule::Fields { minutes, hours, dom, months, dow, dom_star, dow_star } = *self else { return false };
        let bit = |set: u64, v: u32| v < 64 && set & (1u64 << v) != 0;
        let day_ok = {
            let d = bit(dom as u64, day);
            let w = bit(dow as u64, weekday);
            if dom_star || dow_star {
                d && w
            } else {
                d || w
            }
        };
        bit(minutes, minute) && bit(hours as u64, hour) && bit(months as u64, month) && day_ok
    }

    /// The first fire time strictly after `after`, read on `tz`'s wall clock (robfig's
    /// `Schedule.Next`): for five fields, the first whole minute after `after` whose local
    /// minute, hour, day and month match; a local time a DST change skips fires at the
    /// same wall time shifted by the gap (jiff's compatible rule). `@every D` fires `D` after
    /// `after` truncated to the second. `None` when nothing matches within five years (e.g. `0 0
    /// 30 2 *`), as robfig gives the zero time then.
    pub fn next(&self, after: Timestamp, tz: &TimeZone) -> Option<Timestamp> {
        let (minutes, hours, months) = match *self {
            Schedule::Every(d) => return Timestamp::from_second(after.as_second().checked_add(d.as_secs() as i64)?).ok(),
            Schedule::Fields { minutes, hours, months, .. } => (minutes, hours, months),
        };
        let start = Timestamp::from_second(after.as_second().div_euclid(60).checked_add(1)? * 60).ok()?;
        let local = start.to_zoned(tz.clone()).datetime();
        let (mut date, mut h0, mut m0) = (local.date(), local.hour() as u32, local.minute() as u32);
        for _ in 0..(5 * 366) {
            let weekday = date.weekday().to_sunday_zero_offset() as u32;
            let day_matches = months & (1 << date.month()) != 0 && self.day_matches(date.day() as u32, weekday);
            if day_matches {
                for hour in (h0..24).filter(|h| hours & (1 << h) != 0) {
                    let first = if hour == h0 { m0 } else { 0 };
                    for minute in (first..60).filter(|m| minutes & (1 << m) != 0) {
                        let at = date.at(hour as i8, minute as i8, 0, 0).to_zoned(tz.clone()).ok()?.timestamp();
                        if at > after {
                            return Some(at);
                        }
                    }
                }
            }
            date = date.tomorrow().ok()?;
            (h0, m0) = (0, 0);
        }
        None
    }

    /// Whether a day matches the two day fields (robfig: both restricted → either; else both).
    fn day_matches(&self, day: u32, weekday: u32) -> bool {
        let Schedule::Fields { dom, dow, dom_star, dow_star, .. } = *self else { return false };
        let d = dom & (1 << day) != 0;
        let w = u32::from(dow) & (1 << weekday) != 0;
        if dom_star || dow_star {
            d && w
        } else {
            d || w
        }
    }
}

/// `@yearly`, `@annually`, `@monthly`, `@weekly`, `@daily`, `@midnight`, `@hourly`, `@every D`.
fn descriptor(spec: &str) -> Result<Schedule, String> {
    let fixed = match spec {
        "@yearly" | "@annually" => Some("0 0 1 1 *"),
        "@monthly" => Some("0 0 1 * *"),
        "@weekly" => Some("0 0 * * 0"),
        "@daily" | "@midnight" => Some("0 0 * * *"),
        "@hourly" => Some("0 * * * *"),
        _ => None,
    };
    if let Some(f) = fixed {
        return Schedule::parse(f);
    }
    if let Some(d) = spec.strip_prefix("@every ") {
        let d = parse_go_duration(d).map_err(|e| format!("failed to parse duration {spec}: {e}"))?;
        // robfig: intervals below a second become a second; the rest is truncated to seconds.
        return Ok(Schedule::Every(Duration::from_secs(d.as_secs().max(1))));
    }
    Err(format!("unrecognized descriptor: {spec}"))
}

/// One comma-separated field: its bit set and whether it was `*` / `?`.
fn field(text: &str, b: &Bounds) -> Result<(u64, bool), String> {
    let mut bits = 0u64;
    let mut star = false;
    for expr in text.split(',') {
        let (set, s) = range(expr, b)?;
        bits |= set;
        star |= s;
    }
    Ok((bits, star))
}

/// `*`, `?`, `N`, `N-M`, each optionally `/STEP`; `N/STEP` means `N-max/STEP`.
fn range(expr: &str, b: &Bounds) -> Result<(u64, bool), String> {
    let parts: Vec<&str> = expr.split('/').collect();
    if parts.len() > 2 {
        return Err(format!("too many slashes: {expr}"));
    }
    let bounds: Vec<&str> = parts[0].split('-').collect();
    if bounds.len() > 2 {
        return Err(format!("too many hyphens: {expr}"));
    }
    let (star, start, mut end) = if bounds[0] == "*" || bounds[0] == "?" {
        (true, b.min, b.max)
    } else {
        let start = int_or_name(bounds[0], b)?;
        let end = if bounds.len() == 2 { int_or_name(bounds[1], b)? } else { start };
        (false, start, end)
    };
    let step = if parts.len() == 2 {
        let step = int(parts[1])?;
        if !star && bounds.len() == 1 {
            end = b.max;
        }
        step
    } else {
        1
    };
    if start < b.min {
        return Err(format!("beginning of {} range ({start}) below minimum ({}): {expr}", b.name, b.min));
    }
    if end > b.max {
        return Err(format!("end of {} range ({end}) above maximum ({}): {expr}", b.name, b.max));
    }
    if start > end {
        return Err(format!("beginning of {} range ({start}) beyond end of range ({end}): {expr}", b.name));
    }
    if step == 0 {
        return Err(format!("step of range should be a positive number: {expr}"));
    }
    let mut set = 0u64;
    let mut v = start;
    while v <= end {
        set |= 1u64 << v;
        v += step;
    }
    // A star with step 1 is robfig's "all" (starBit); `*/2` is not a star for the day rule.
    Ok((set, star && step == 1))
}

fn int_or_name(text: &str, b: &Bounds) -> Result<u32, String> {
    let lower = text.to_ascii_lowercase();
    if let Some((_, v)) = b.names.iter().find(|(n, _)| *n == lower) {
        return Ok(*v);
    }
    int(text)
}

fn int(text: &str) -> Result<u32, String> {
    if let Some(rest) = text.strip_prefix('-') {
        if rest.parse::<u64>().is_ok() {
            return Err(format!("negative number (-{rest}) not allowed: {text}"));
        }
    }
    text.parse::<u32>().map_err(|e| format!("failed to parse int from {text}: {e}"))
}

/// Checks a CronJob's `spec.timeZone` as Volcano's webhook does: non-empty, each `/`-separated
/// part of `[A-Za-z.\-_0-9+]{1,14}` and not `.`, `..` or starting with `-`, not `Local`, and a
/// zone of the IANA database (Basalt bundles it: Go reads the host's).
///
/// Errors: Volcano's words, e.g. ` unknown timeZone`, ` invalid timeZone`, each with its
/// leading space (the webhook concatenates them as Volcano does).
pub fn check_time_zone(tz: &str) -> Result<(), String> {
    if tz.is_empty() {
        return Err(" timeZone must be nil or non-empty string, got empty string".into());
    }
    let mut msg = String::new();
    let valid_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '+');
    for part in tz.split('/') {
        let ok_len = !part.is_empty() && part.len() <= 14;
        if part == "." || part == ".." || part.starts_with('-') || !ok_len || !part.chars().all(valid_char) {
            msg.push_str(" unknown timeZone");
        }
    }
    if tz.eq_ignore_ascii_case("Local") {
        msg.push_str(" timeZone can't be Local, and must be defined in https://www.iana.org/time-zones");
    } else if tz != "UTC" && jiff::tz::TimeZone::get(tz).is_err() {
        msg.push_str(" invalid timeZone");
    }
    if msg.is_empty() {
        Ok(())
    } else {
        Err(msg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(s: &str) -> (u64, u32, u32, u16, u8, bool, bool) {
        match Schedule::parse(s).unwrap() {
            Schedule::Fields { minutes, hours, dom, months, dow, dom_star, dow_star } => {
                (minutes, hours, dom, months, dow, dom_star, dow_star)
            }
            other => panic!("{s}: {other:?}"),
        }
    }

    #[test]
    fn five_fields_ranges_steps_lists_and_names() {
        let (m, h, d, mo, w, ds, ws) = fields("*/15 9-17 1,15 JAN-mar mon-FRI");
        assert_eq!(m, 1 | 1 << 15 | 1 << 30 | 1 << 45);
        assert_eq!(h, (9..=17).fold(0, |a, v| a | 1 << v));
        assert_eq!(d, 1 << 1 | 1 << 15);
        assert_eq!(mo, 1 << 1 | 1 << 2 | 1 << 3);
        assert_eq!(w, 0b0111110);
        assert!(!ds && !ws);
        // N/step runs to the field's maximum.
        let (m, ..) = fields("50/5 * * * *");
        assert_eq!(m, 1 << 50 | 1 << 55);
        // `?` is a star.
        let (.., ds, ws) = fields("0 0 ? * *");
        assert!(ds && ws);
    }

    fn at(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn next(spec: &str, after: &str, tz: &str) -> String {
        let tz = TimeZone::get(tz).unwrap();
        Schedule::parse(spec).unwrap().next(at(after), &tz).map(|t| t.to_string()).unwrap_or_default()
    }

    #[test]
    fn next_fire_times_as_robfig() {
        // strictly after: a time on the minute moves on to the next match
        assert_eq!(next("* * * * *", "2026-12-05T10:00:00Z", "UTC"), "2026-12-05T10:01:00Z");
        assert_eq!(next("* * * * *", "2026-12-05T10:00:30.5Z", "UTC"), "2026-12-05T10:01:00Z");
        assert_eq!(next("*/15 * * * *", "2026-12-05T10:16:00Z", "UTC"), "2026-12-05T10:30:00Z");
        assert_eq!(next("0 2 * * *", "2026-12-05T02:00:00Z", "UTC"), "2026-12-06T02:00:00Z");
        // day of month OR day of week when both are restricted: the 1st or a Monday
        assert_eq!(next("0 0 1 * mon", "2026-12-01T00:00:00Z", "UTC"), "2026-12-07T00:00:00Z");
        // both must match when one is a star: Mondays only
        assert_eq!(next("0 0 * * mon", "2026-12-01T00:00:00Z", "UTC"), "2026-12-07T00:00:00Z");
        assert_eq!(next("0 0 29 2 *", "2026-03-01T00:00:00Z", "UTC"), "2028-02-29T00:00:00Z");
        assert_eq!(next("0 0 30 2 *", "2026-03-01T00:00:00Z", "UTC"), "", "never fires");
        // the wall clock of the time zone: 02:00 in Berlin is 01:00Z in winter
        assert_eq!(next("0 2 * * *", "2026-12-05T03:00:00Z", "Europe/Berlin"), "2026-12-06T01:00:00Z");
        // spring forward: 02:30 does not exist on 2026-03-29 in Berlin; it fires an hour later
        assert_eq!(next("30 2 * * *", "2026-03-28T12:00:00Z", "Europe/Berlin"), "2026-03-29T01:30:00Z");
        assert_eq!(next("@every 90s", "2026-12-05T10:00:00.7Z", "UTC"), "2026-12-05T10:01:30Z");
        assert_eq!(next("@hourly", "2026-12-05T10:59:59Z", "UTC"), "2026-12-05T11:00:00Z");
    }

    #[test]
    fn descriptors() {
        assert_eq!(Schedule::parse("@daily").unwrap(), Schedule::parse("0 0 * * *").unwrap());
        assert_eq!(Schedule::parse("@annually").unwrap(), Schedule::parse("0 0 1 1 *").unwrap());
        assert_eq!(Schedule::parse("@every 1h30m").unwrap(), Schedule::Every(Duration::from_secs(5400)));
        assert_eq!(Schedule::parse("@every 10ms").unwrap(), Schedule::Every(Duration::from_secs(1)));
        assert!(Schedule::parse("@sometimes").unwrap_err().contains("unrecognized descriptor"));
        assert!(Schedule::parse("@every soon").unwrap_err().contains("failed to parse duration"));
    }

    #[test]
    fn refusals_say_why() {
        for (spec, why) in [
            ("", "empty spec string"),
            ("* * * *", "expected exactly 5 fields, found 4"),
            ("0 0 * * * *", "expected exactly 5 fields, found 6"),
            ("60 * * * *", "end of minute range (60) above maximum (59)"),
            ("* 24 * * *", "above maximum (23)"),
            ("* * 0 * *", "beginning of day of month range (0) below minimum (1)"),
            ("* * * 13 *", "above maximum (12)"),
            ("* * * * 7", "end of day of week range (7) above maximum (6)"),
            ("5-3 * * * *", "beyond end of range"),
            ("*/0 * * * *", "step of range should be a positive number"),
            ("1-2-3 * * * *", "too many hyphens"),
            ("*/2/3 * * * *", "too many slashes"),
            ("x * * * *", "failed to parse int from x"),
            ("* * * foo *", "failed to parse int from foo"),
            ("CRON_TZ=UTC 0 * * * *", "spec.timeZone"),
        ] {
            let err = Schedule::parse(spec).unwrap_err();
            assert!(err.contains(why), "{spec:?}: {err}");
        }
    }

    #[test]
    fn day_fields_combine_as_robfig() {
        // Both restricted: either matches. 2026-12-05 is a Saturday (6).
        let s = Schedule::parse("0 12 1 * sat").unwrap();
        assert!(s.matches(0, 12, 5, 12, 6), "a Saturday that is not the 1st");
        assert!(s.matches(0, 12, 1, 12, 2), "the 1st on a Tuesday");
        assert!(!s.matches(0, 12, 2, 12, 3));
        // Day of week starred: the day of month alone decides.
        let s = Schedule::parse("0 12 1 * *").unwrap();
        assert!(!s.matches(0, 12, 5, 12, 6));
        assert!(s.matches(0, 12, 1, 12, 2));
        // `*/2` in day of week is not a star: either field may match.
        let s = Schedule::parse("0 0 1 * */2").unwrap();
        assert!(s.matches(0, 0, 9, 1, 2));
        assert!(!s.matches(1, 0, 1, 1, 1), "the minute must match");
        assert!(!Schedule::Every(Duration::from_secs(60)).matches(0, 0, 1, 1, 0));
    }

    #[test]
    fn time_zones_as_volcano_checks_them() {
        assert_eq!(check_time_zone("Europe/Berlin"), Ok(()));
        assert_eq!(check_time_zone("America/Argentina/Buenos_Aires"), Ok(()));
        assert_eq!(check_time_zone("UTC"), Ok(()));
        assert_eq!(check_time_zone("").unwrap_err(), " timeZone must be nil or non-empty string, got empty string");
        assert!(check_time_zone("Local").unwrap_err().contains("timeZone can't be Local"));
        assert_eq!(check_time_zone("Mars/Olympus").unwrap_err(), " invalid timeZone");
        assert_eq!(check_time_zone("../etc/passwd").unwrap_err(), " unknown timeZone invalid timeZone");
        assert!(check_time_zone("Europe/ThisNameIsTooLong").unwrap_err().contains(" unknown timeZone"));
    }
}
