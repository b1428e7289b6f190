//! Times as Volcano's `vcctl` prints them: ages (`util.HumanDuration`, the same as kubectl's
//! `duration.HumanDuration`), dates (`2006-01-02`) and Go's `time.Time.String()` for
//! timestamps, in UTC.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

/// A Go `time.Time` printed with `%s` (`2006-01-02 15:04:05 +0000 UTC`), in UTC; an unset time
/// is Go's zero time, `0001-01-01 00:00:00 +0000 UTC`.
pub fn go_time(t: Option<&Time>) -> String {
    match t {
        Some(t) => t.0.strftime("%Y-%m-%d %H:%M:%S +0000 UTC").to_string(),
        None => "0001-01-01 00:00:00 +0000 UTC".to_string(),
    }
}

/// A timestamp as Go's `Format("2006-01-02")` prints it (UTC); unset is Go's zero date.
pub fn date(t: Option<&Time>) -> String {
    match t {
        Some(t) => t.0.strftime("%Y-%m-%d").to_string(),
        None => "0001-01-01".to_string(),
    }
}

/// How long ago `t` was, as [`human_duration`]; unset is `<unknown>` (Volcano's
/// `TranslateTimestampSince`).
pub fn since(t: Option<&Time>, now_seconds: i64) -> String {
    match t {
        Some(t) => human_duration(now_seconds - t.0.as_second()),
        None => "<unknown>".to_string(),
    }
}

/// `seconds` as a short human duration: `<invalid>` below −1 s, `0s` at −1 s, seconds below
/// 2 minutes, `XmYs` below 10 minutes, minutes below 3 hours, `XhYm` below 8 hours, hours below
/// 2 days, `XdYh` below 8 days, days below 2 years, `XyYd` below 8 years, else years.
pub fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".to_string();
    }
    if seconds < 0 {
        return "0s".to_string();
    }
    if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 { format!("{minutes}m") } else { format!("{minutes}m{s}s") };
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 { format!("{hours}h") } else { format!("{hours}h{m}m") };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 { format!("{}d", hours / 24) } else { format!("{}d{h}h", hours / 24) };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        return format!("{}y{}d", hours / 24 / 365, (hours / 24) % 365);
    }
    format!("{}y", hours / 24 / 365)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_print_as_kubectl_does() {
        let cases = [
            (-5, "<invalid>"),
            (-1, "0s"),
            (0, "0s"),
            (119, "119s"),
            (120, "2m"),
            (125, "2m5s"),
            (600, "10m"),
            (3 * 3600 - 1, "179m"),
            (3 * 3600, "3h"),
            (3 * 3600 + 60, "3h1m"),
            (8 * 3600, "8h"),
            (47 * 3600, "47h"),
            (48 * 3600, "2d"),
            (49 * 3600, "2d1h"),
            (8 * 86400, "8d"),
            (2 * 365 * 86400, "2y0d"),
            (2 * 365 * 86400 + 86400, "2y1d"),
            (8 * 365 * 86400, "8y"),
        ];
        for (s, want) in cases {
            assert_eq!(human_duration(s), want, "{s} s");
        }
    }

    #[test]
    fn times_print_as_go_does() {
        let t = Time("2025-03-04T05:06:07Z".parse().unwrap());
        assert_eq!(go_time(Some(&t)), "2025-03-04 05:06:07 +0000 UTC");
        assert_eq!(go_time(None), "0001-01-01 00:00:00 +0000 UTC");
        assert_eq!(date(Some(&t)), "2025-03-04");
        assert_eq!(since(Some(&t), t.0.as_second() + 3600 * 5), "5h");
        assert_eq!(since(None, 0), "<unknown>");
    }
}
