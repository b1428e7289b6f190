//! Plugin and action `arguments`, read as Volcano's `framework.Arguments` reads them.

use std::collections::BTreeMap;

/// Arguments of a plugin or action: key → YAML value.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Arguments(pub BTreeMap<String, serde_yaml::Value>);

impl Arguments {
    /// `GetInt`: a YAML integer only; anything else (or absent) is `None`.
    pub fn int(&self, key: &str) -> Option<i64> {
        self.0.get(key).and_then(|v| v.as_i64())
    }

    /// `GetFloat64`: a YAML float or integer.
    pub fn float(&self, key: &str) -> Option<f64> {
        self.0.get(key).and_then(|v| v.as_f64().or_else(|| v.as_i64().map(|i| i as f64)))
    }

    /// `GetBool`: a YAML bool or a bool string (`"true"`, `"false"`).
    pub fn bool(&self, key: &str) -> Option<bool> {
        let v = self.0.get(key)?;
        v.as_bool().or_else(|| v.as_str().and_then(|s| s.parse().ok()))
    }

    /// `GetString`.
    pub fn string(&self, key: &str) -> Option<String> {
        let v = self.0.get(key)?;
        match v {
            serde_yaml::Value::String(s) => Some(s.clone()),
            serde_yaml::Value::Number(n) => Some(n.to_string()),
            serde_yaml::Value::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }

    /// A positive Go duration (`time.ParseDuration`, e.g. `1h2m3s`) given as a YAML string,
    /// in nanoseconds. `None` when absent, not a string (Volcano's sla asserts `.(string)`), not
    /// a duration, or not positive.
    pub fn duration_ns(&self, key: &str) -> Option<i64> {
        match self.0.get(key)? {
            serde_yaml::Value::String(s) => parse_go_duration_ns(s).filter(|&d| d > 0),
            _ => None,
        }
    }

    /// Keys in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }
}

/// The YAML type an argument is read as (Volcano's `GetInt`, `GetFloat64`, `GetBool`,
/// `GetString`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgKind {
    /// A YAML integer.
    Int,
    /// A YAML float or integer.
    Float,
    /// A YAML bool or a bool string.
    Bool,
    /// A string (numbers and bools are read as their text).
    Str,
    /// Structured YAML (a list or map), read by the plugin itself (e.g. rescheduling's
    /// `strategies`).
    Yaml,
    /// A YAML string holding a positive Go duration ([`parse_go_duration_ns`]).
    Duration,
}

impl ArgKind {
    /// Volcano's word for the type, for messages.
    pub fn word(self) -> &'static str {
        match self {
            ArgKind::Int => "an integer",
            ArgKind::Float => "a number",
            ArgKind::Bool => "true or false",
            ArgKind::Str => "a string",
            ArgKind::Yaml => "a YAML list or map",
            ArgKind::Duration => "a positive duration string such as \"1h30m\"",
        }
    }
}

/// One `arguments` key a plugin reads: its type, default, the smallest value it takes as given
/// and what it uses below that, and whether Basalt acts on it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ArgSpec {
    /// The key; with `prefix`, the start of a family of keys (`binpack.resources.`).
    pub key: &'static str,
    /// Whether `key` is a prefix.
    pub prefix: bool,
    /// The type Volcano reads it as.
    pub kind: ArgKind,
    /// The default, as text for messages.
    pub default: &'static str,
    /// Values below this are out of range (`None`: any value).
    pub min: Option<f64>,
    /// What the plugin does with an out-of-range value, for messages.
    pub below_min: &'static str,
    /// Whether Basalt acts on the key (false: accepted, no effect, e.g. volume filters).
    pub honoured: bool,
    /// Why a key is not honoured, for messages.
    pub why_ignored: &'static str,
}

impl ArgSpec {
    /// An honoured key of `kind` with `default`, any value in range.
    pub const fn new(key: &'static str, kind: ArgKind, default: &'static str) -> Self {
        ArgSpec { key, prefix: false, kind, default, min: None, below_min: "", honoured: true, why_ignored: "" }
    }

    /// This key with a minimum and what is used below it.
    pub const fn min(mut self, min: f64, below_min: &'static str) -> Self {
        self.min = Some(min);
        self.below_min = below_min;
        self
    }

    /// This key as a prefix of a family of keys.
    pub const fn prefix(mut self) -> Self {
        self.prefix = true;
        self
    }

    /// This key accepted without effect, and why.
    pub const fn ignored(mut self, why: &'static str) -> Self {
        self.honoured = false;
        self.why_ignored = why;
        self
    }

    /// Whether `key` is this spec's key (or in its family).
    pub fn matches(&self, key: &str) -> bool {
        if self.prefix {
            key.len() > self.key.len() && key.starts_with(self.key)
        } else {
            key == self.key
        }
    }
}

/// Go's `time.ParseDuration` in nanoseconds: an optional sign, then one or more decimal numbers
/// (fraction allowed) each with a unit `ns`, `us` (`µs`, `μs`), `ms`, `s`, `m`, `h`, e.g.
/// `1h2m3s4ms5µs6ns` or `1.5h`; `0` alone is zero. `None` for anything else or a value beyond
/// ±2^63 ns (about 292 years), as Go refuses it.
pub fn parse_go_duration_ns(s: &str) -> Option<i64> {
    let (neg, mut rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: u128 = 0;
    while !rest.is_empty() {
        let int_len = rest.bytes().take_while(u8::is_ascii_digit).count();
        let (int_part, after) = rest.split_at(int_len);
        let (frac_part, after) = match after.strip_prefix('.') {
            Some(a) => {
                let n = a.bytes().take_while(u8::is_ascii_digit).count();
                a.split_at(n)
            }
            None => ("", after),
        };
        if int_part.is_empty() && frac_part.is_empty() {
            return None;
        }
        let unit_len = after.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_len);
        let scale: u128 = match unit {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return None,
        };
        let int: u128 = if int_part.is_empty() { 0 } else { int_part.parse().ok()? };
        let mut value = int.checked_mul(scale)?;
        // The fraction, digit by digit, truncated to whole nanoseconds as Go does.
        let mut place = scale;
        for d in frac_part.bytes() {
            place /= 10;
            if place == 0 {
                break;
            }
            value += u128::from(d - b'0') * place;
        }
        total = total.checked_add(value)?;
        if total > 1u128 << 63 {
            return None;
        }
        rest = after;
    }
    if neg {
        Some((total as i128).wrapping_neg() as i64)
    } else {
        i64::try_from(total).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations_parse_as_go_parses_them() {
        let ok = [
            ("0", 0),
            ("1ns", 1),
            ("1h2m3s4ms5us6ns", 3_723_004_005_006),
            ("1h2m3s4ms5\u{b5}s6ns", 3_723_004_005_006),
            ("1.5h", 5_400_000_000_000),
            (".5s", 500_000_000),
            ("-2m", -120_000_000_000),
            ("+3s", 3_000_000_000),
            ("1.0000000001s", 1_000_000_000),
        ];
        for (s, want) in ok {
            assert_eq!(parse_go_duration_ns(s), Some(want), "{s}");
        }
        for bad in ["", "1", "5", "h", "1x", "1.s.", "--1s", "1h-2m", "300000000h", "0s1"] {
            assert_eq!(parse_go_duration_ns(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn duration_argument_is_a_positive_duration_string() {
        let a: Arguments = serde_yaml::from_str("{a: 10m, b: 600, c: -1s, d: 0s, e: nope}").unwrap();
        assert_eq!(a.duration_ns("a"), Some(600_000_000_000));
        assert_eq!(a.duration_ns("b"), None, "a YAML integer is not a string: Volcano's .(string) fails");
        assert_eq!(a.duration_ns("c"), None);
        assert_eq!(a.duration_ns("d"), None);
        assert_eq!(a.duration_ns("e"), None);
        assert_eq!(a.duration_ns("missing"), None);
    }
}
