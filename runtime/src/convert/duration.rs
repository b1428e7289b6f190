//! Go `time.ParseDuration` spellings for command-line flags (`1s`, `500ms`, `1m30s`, `15s`), as
//! vc-scheduler's flags are written.

use std::time::Duration;

/// Parses a Go duration: a sequence of decimal numbers, each with a unit (`ns`, `us`/`µs`, `ms`,
/// `s`, `m`, `h`), e.g. `1s`, `1.5s`, `1m30s`; `0` alone is zero. Negative durations are refused.
///
/// Errors: a message quoting the input (`invalid duration "1x": unknown unit "x"`).
pub fn parse_go_duration(s: &str) -> Result<Duration, String> {
    let bad = |why: &str| format!("invalid duration {s:?}: {why}");
    let t = s.trim();
    if t == "0" {
        return Ok(Duration::ZERO);
    }
    if t.is_empty() {
        return Err(bad("empty"));
    }
    if t.starts_with('-') {
        return Err(bad("negative durations are not allowed"));
    }
    let t = t.strip_prefix('+').unwrap_or(t);
    let mut rest = t;
    let mut total_ns: f64 = 0.0;
    while !rest.is_empty() {
        let num_len = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        if num_len == 0 {
            return Err(bad("expected a number"));
        }
        let value: f64 = rest[..num_len].parse().map_err(|_| bad("malformed number"))?;
        rest = &rest[num_len..];
        let unit_len = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        let scale = match unit {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            "" => return Err(bad("missing unit")),
            other => return Err(bad(&format!("unknown unit {other:?}"))),
        };
        total_ns += value * scale;
    }
    if !total_ns.is_finite() || total_ns > u64::MAX as f64 {
        return Err(bad("out of range"));
    }
    Ok(Duration::from_nanos(total_ns.round() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_spellings_parse() {
        assert_eq!(parse_go_duration("1s").unwrap(), Duration::from_secs(1));
        assert_eq!(parse_go_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_go_duration("1m30s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_go_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_go_duration("2h").unwrap(), Duration::from_secs(7200));
        assert_eq!(parse_go_duration("0").unwrap(), Duration::ZERO);
    }

    #[test]
    fn bad_spellings_are_refused_with_the_input_quoted() {
        for s in ["", "1", "1x", "-1s", "s", "1..2s"] {
            let e = parse_go_duration(s).unwrap_err();
            assert!(e.contains(&format!("{s:?}")), "{e}");
        }
    }
}
