//! Plugin and action `arguments`, read as Volcano's `framework.Arguments` reads them.

use std::collections::BTreeMap;

/// Arguments of a plugin or action: key → YAML value.
#[derive(Clone, Debug, Default, PartialEq)]
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
