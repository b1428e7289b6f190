//! Job plugin arguments as Go's `flag` package parses them (Volcano's plugins each parse
//! `spec.plugins[name]` with a `flag.FlagSet`, volcano-behaviour.md §5.1 "Job plugins"):
//! `-name` or `--name`; a value as `--name=value` or, for non-boolean flags, `--name value`;
//! a boolean flag alone means `true` (`--name=false` to unset); parsing stops at the first
//! argument that is not a flag, or after `--`. A flag not declared, a missing value or a value
//! that does not parse stops the parse with an error; the flags read before it keep their
//! values and the rest keep their defaults, as Volcano's plugins do (they log the error and go
//! on).

use std::collections::BTreeMap;

/// The type of a declared flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlagKind {
    /// `flag.BoolVar`: `true`/`false`, `1`/`0`, `t`/`f`, `TRUE`/`FALSE`, `True`/`False`.
    Bool,
    /// `flag.StringVar`.
    String,
    /// `flag.IntVar`: a decimal integer (optionally signed), also `0x…` hex and `0…` octal.
    Int,
}

/// A bad argument, worded as Go's `flag` package words it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FlagError {
    /// An argument names a flag the plugin does not declare.
    #[error("flag provided but not defined: -{0}")]
    Undefined(String),
    /// A non-boolean flag is the last argument.
    #[error("flag needs an argument: -{0}")]
    MissingValue(String),
    /// A value does not parse as the flag's type.
    #[error("invalid value {value:?} for flag -{flag}: parse error")]
    Invalid {
        /// The flag.
        flag: String,
        /// Its value as given.
        value: String,
    },
    /// `-=x` or `--=x`.
    #[error("bad flag syntax: {0}")]
    Syntax(String),
}

/// The values of a parse: each flag given (in a parse that stopped at an error, each given
/// before the error).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    bools: BTreeMap<&'static str, bool>,
    strings: BTreeMap<&'static str, String>,
    ints: BTreeMap<&'static str, i64>,
}

impl Flags {
    /// The boolean flag `name`, or `default` when not given.
    pub fn bool(&self, name: &str, default: bool) -> bool {
        self.bools.get(name).copied().unwrap_or(default)
    }

    /// The string flag `name`, or `default` when not given.
    pub fn string(&self, name: &str, default: &str) -> String {
        self.strings.get(name).cloned().unwrap_or_else(|| default.to_string())
    }

    /// The integer flag `name`, or `default` when not given.
    pub fn int(&self, name: &str, default: i64) -> i64 {
        self.ints.get(name).copied().unwrap_or(default)
    }
}

fn parse_bool(v: &str) -> Option<bool> {
    match v {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

fn parse_int(v: &str) -> Option<i64> {
    let (neg, digits) = match v.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, v.strip_prefix('+').unwrap_or(v)),
    };
    let digits = digits.replace('_', "");
    let magnitude = if let Some(h) = digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        i64::from_str_radix(h, 16).ok()?
    } else if let Some(b) = digits.strip_prefix("0b").or_else(|| digits.strip_prefix("0B")) {
        i64::from_str_radix(b, 2).ok()?
    } else if let Some(o) = digits.strip_prefix("0o").or_else(|| digits.strip_prefix("0O")) {
        i64::from_str_radix(o, 8).ok()?
    } else if digits.len() > 1 && digits.starts_with('0') {
        i64::from_str_radix(&digits[1..], 8).ok()?
    } else {
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse().ok()?
    };
    Some(if neg { -magnitude } else { magnitude })
}

/// Parses `args` against the declared `(name, kind)` flags. Returns the values read and the
/// error that stopped the parse, if any.
pub fn parse(declared: &[(&'static str, FlagKind)], args: &[String]) -> (Flags, Option<FlagError>) {
    let mut out = Flags::default();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if arg.len() < 2 || !arg.starts_with('-') {
            break;
        }
        let body = if let Some(rest) = arg.strip_prefix("--") {
            if rest.is_empty() {
                break;
            }
            rest
        } else {
            &arg[1..]
        };
        if body.starts_with('-') || body.starts_with('=') {
            return (out, Some(FlagError::Syntax(arg.clone())));
        }
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };
        let Some(&(decl, kind)) = declared.iter().find(|(n, _)| *n == name) else {
            return (out, Some(FlagError::Undefined(name.to_string())));
        };
        let invalid = |value: String| FlagError::Invalid { flag: decl.to_string(), value };
        match kind {
            FlagKind::Bool => {
                let v = inline.unwrap_or_else(|| "true".into());
                match parse_bool(&v) {
                    Some(b) => {
                        out.bools.insert(decl, b);
                    }
                    None => return (out, Some(invalid(v))),
                }
            }
            FlagKind::String | FlagKind::Int => {
                let v = match inline {
                    Some(v) => v,
                    None if i < args.len() => {
                        i += 1;
                        args[i - 1].clone()
                    }
                    None => return (out, Some(FlagError::MissingValue(decl.to_string()))),
                };
                if kind == FlagKind::Int {
                    match parse_int(&v) {
                        Some(n) => {
                            out.ints.insert(decl, n);
                        }
                        None => return (out, Some(invalid(v))),
                    }
                } else {
                    out.strings.insert(decl, v);
                }
            }
        }
    }
    (out, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DECL: &[(&str, FlagKind)] = &[("on", FlagKind::Bool), ("name", FlagKind::String), ("port", FlagKind::Int)];

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn go_flag_forms() {
        let cases: &[(&[&str], bool, &str, i64)] = &[
            (&[], false, "d", 1),
            (&["--on"], true, "d", 1),
            (&["-on"], true, "d", 1),
            (&["--on=false"], false, "d", 1),
            (&["--on=T", "--name=x", "--port=23"], true, "x", 23),
            (&["--name", "y", "-port", "0x10"], false, "y", 16),
            (&["--port=010"], false, "d", 8),
            (&["--port=-5"], false, "d", -5),
            // parsing stops at the first non-flag argument, and after `--`
            (&["--on", "false", "--port=9"], true, "d", 1),
            (&["--", "--on"], false, "d", 1),
        ];
        for (a, on, name, port) in cases {
            let (f, err) = parse(DECL, &args(a));
            assert_eq!(err, None, "{a:?}");
            assert_eq!((f.bool("on", false), f.string("name", "d"), f.int("port", 1)), (*on, name.to_string(), *port), "{a:?}");
        }
    }

    #[test]
    fn errors_stop_the_parse_and_keep_earlier_values() {
        let cases: &[(&[&str], &str)] = &[
            (&["--port=2", "--nope"], "flag provided but not defined: -nope"),
            (&["--port=2", "--name"], "flag needs an argument: -name"),
            (&["--port=2", "--on=maybe"], "invalid value \"maybe\" for flag -on: parse error"),
            (&["--port=2", "--port=abc"], "invalid value \"abc\" for flag -port: parse error"),
            (&["--port=2", "---x"], "bad flag syntax: ---x"),
        ];
        for (a, msg) in cases {
            let (f, err) = parse(DECL, &args(a));
            assert_eq!(err.map(|e| e.to_string()).as_deref(), Some(*msg), "{a:?}");
            assert_eq!(f.int("port", 1), 2, "{a:?}: the flag before the error keeps its value");
        }
    }
}
