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
