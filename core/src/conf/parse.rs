//! Parsing and validating the conf text.

use super::{ActionKind, Arguments, EnableFlags, PluginOption, SchedulerConf, SchedulerOptions, Tier};

/// Why a conf is invalid (the previous good conf stays in force).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfError {
    /// Not YAML, or not the expected shape.
    #[error("volcano-scheduler.conf: {0}")]
    Syntax(String),
    /// `actions` names an action Volcano does not have.
    #[error("volcano-scheduler.conf: field actions: unknown action {0:?}")]
    UnknownAction(String),
    /// A field has the wrong type.
    #[error("volcano-scheduler.conf: field {field}: {message}")]
    Field {
        /// Path of the field.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// `drf` with `enableHierarchy: true` and `proportion` in the same tier.
    #[error("volcano-scheduler.conf: tier {0}: drf with enableHierarchy cannot be combined with proportion")]
    HierarchyWithProportion(usize),
}

/// Something in a valid conf that Basalt ignores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfWarning(pub String);

impl std::fmt::Display for ConfWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn field(field: impl Into<String>, message: impl Into<String>) -> ConfError {
    ConfError::Field { field: field.into(), message: message.into() }
}

fn arguments(v: Option<&serde_yaml::Value>, path: &str) -> Result<Arguments, ConfError> {
    let mut out = Arguments::default();
    match v {
        None | Some(serde_yaml::Value::Null) => {}
        Some(serde_yaml::Value::Mapping(m)) => {
            for (k, v) in m {
                let Some(k) = k.as_str() else {
                    return Err(field(path, "argument keys must be strings"));
                };
                out.0.insert(k.to_string(), v.clone());
            }
        }
        Some(_) => return Err(field(path, "must be a mapping")),
    }
    Ok(out)
}

impl SchedulerConf {
    /// Parses conf text. Unknown actions are errors; a plugin name Volcano does not have is
    /// dropped from its tier and kept in [`SchedulerConf::unknown_plugins`], which
    /// [`crate::plugins::Registry::check`] reports (with "did you mean"; `--strict` refuses it). Volcano plugins and actions Basalt does not implement stay in
    /// the conf: the session skips them, and [`crate::plugins::Registry::check`] lists them
    /// (with the plugin arguments it does not honour).
    pub fn parse(text: &str) -> Result<(SchedulerConf, Vec<ConfWarning>), ConfError> {
        let doc: serde_yaml::Value = serde_yaml::from_str(text).map_err(|e| ConfError::Syntax(e.to_string()))?;
        let map = match &doc {
            serde_yaml::Value::Mapping(m) => m.clone(),
            // Volcano keeps its built-in default when the conf file yields no actions.
            serde_yaml::Value::Null => {
                let (c, _) = SchedulerConf::parse(super::DEFAULT_CONF)?;
                return Ok((c, vec![ConfWarning("the conf is empty: Volcano's built-in default conf is used".into())]));
            }
            _ => return Err(ConfError::Syntax("the conf must be a YAML mapping".into())),
        };
        // The ConfigMap as `kubectl get cm volcano-scheduler-configmap -o yaml` prints it.
        if map.get("kind").and_then(|k| k.as_str()) == Some("ConfigMap") {
            let inner = map.get("data").and_then(|d| d.get("volcano-scheduler.conf")).and_then(|v| v.as_str());
            let Some(inner) = inner else {
                return Err(field("data", "a ConfigMap given as the conf must hold the key volcano-scheduler.conf"));
            };
            let (c, mut w) = SchedulerConf::parse(inner)?;
            w.insert(0, ConfWarning("read the conf from the ConfigMap's data[\"volcano-scheduler.conf\"]".into()));
            return Ok((c, w));
        }
        let mut warnings = Vec::new();
        let mut actions = Vec::new();
        match map.get("actions") {
            None | Some(serde_yaml::Value::Null) => {}
            Some(serde_yaml::Value::String(s)) => {
                for name in s.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                    let a = ActionKind::parse(name).ok_or_else(|| ConfError::UnknownAction(name.to_string()))?;
                    actions.push(a);
                }
            }
            Some(_) => return Err(field("actions", "must be a comma-separated string")),
        }
        let mut tiers = Vec::new();
        let mut unknown_plugins = Vec::new();
        match map.get("tiers") {
            None | Some(serde_yaml::Value::Null) => {}
            Some(serde_yaml::Value::Sequence(ts)) => {
                for (ti, t) in ts.iter().enumerate() {
                    let plugins_v = t.get("plugins");
                    let mut tier = Tier::default();
                    let list = match plugins_v {
                        None | Some(serde_yaml::Value::Null) => Vec::new(),
                        Some(serde_yaml::Value::Sequence(ps)) => ps.clone(),
                        Some(_) => return Err(field(format!("tiers[{ti}].plugins"), "must be a list")),
                    };
                    for (pi, p) in list.iter().enumerate() {
                        let path = format!("tiers[{ti}].plugins[{pi}]");
                        let serde_yaml::Value::Mapping(pm) = p else {
                            return Err(field(path, "must be a mapping"));
                        };
                        let name = match pm.get("name") {
                            Some(serde_yaml::Value::String(s)) => s.clone(),
                            _ => return Err(field(format!("{path}.name"), "required string")),
                        };
                        let mut flags = EnableFlags::default();
                        for (k, v) in pm {
                            let Some(k) = k.as_str() else { continue };
                            if k == "name" || k == "arguments" {
                                continue;
                            }
                            match EnableFlags::lookup(k) {
                                Some(f) => {
                                    let Some(b) = v.as_bool() else {
                                        return Err(field(format!("{path}.{k}"), "must be true or false"));
                                    };
                                    flags.set(f, b);
                                }
                                None => warnings.push(ConfWarning(format!("{path}: unknown field {k:?} ignored"))),
                            }
                        }
                        let arguments = arguments(pm.get("arguments"), &format!("{path}.arguments"))?;
                        if !super::VOLCANO_PLUGINS.contains(&name.as_str()) {
                            // Reported by `Registry::check` (with "did you mean"), not here: a
                            // warning in both places would print it twice.
                            unknown_plugins.push(super::UnknownPlugin::new(ti, &name));
                            continue;
                        }
                        tier.plugins.push(PluginOption { name, arguments, flags });
                    }
                    let hier_drf = tier.plugins.iter().any(|p| p.name == "drf" && p.flags.on(super::Flag::Hierarchy));
                    if hier_drf && tier.plugins.iter().any(|p| p.name == "proportion") {
                        return Err(ConfError::HierarchyWithProportion(ti));
                    }
                    tiers.push(tier);
                }
            }
            Some(_) => return Err(field("tiers", "must be a list")),
        }
        let mut configurations = Vec::new();
        match map.get("configurations") {
            None | Some(serde_yaml::Value::Null) => {}
            Some(serde_yaml::Value::Sequence(cs)) => {
                for (ci, c) in cs.iter().enumerate() {
                    let name = c
                        .get("name")
                        .and_then(|v| v.as_str())
                        .ok_or_else(|| field(format!("configurations[{ci}].name"), "required string"))?;
                    configurations
                        .push((name.to_string(), arguments(c.get("arguments"), &format!("configurations[{ci}].arguments"))?));
                }
            }
            Some(_) => return Err(field("configurations", "must be a list")),
        }
        for k in map.keys().filter_map(|k| k.as_str()) {
            if !matches!(k, "actions" | "tiers" | "configurations" | "metrics") {
                warnings.push(ConfWarning(format!("unknown top-level field {k:?} ignored")));
            }
        }
        if actions.is_empty() {
            return Err(field("actions", "no actions: Volcano refuses a conf without actions (and keeps the one it had)"));
        }
        Ok((SchedulerConf { actions, tiers, configurations, options: SchedulerOptions::default(), unknown_plugins }, warnings))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conf::Flag;

    #[test]
    fn default_conf_is_volcanos() {
        let c = SchedulerConf::default();
        assert_eq!(c.actions, vec![ActionKind::Enqueue, ActionKind::Allocate, ActionKind::Backfill]);
        let names: Vec<Vec<&str>> = c.tiers.iter().map(|t| t.plugins.iter().map(|p| p.name.as_str()).collect()).collect();
        assert_eq!(
            names,
            vec![vec!["priority", "gang", "conformance"], vec!["overcommit", "drf", "predicates", "proportion", "nodeorder"]]
        );
    }

    #[test]
    fn empty_conf_means_the_default() {
        let (c, w) = SchedulerConf::parse("  \n").unwrap();
        assert_eq!(c, SchedulerConf::default());
        assert_eq!(w.len(), 1);
    }

    #[test]
    fn conf_without_actions_is_an_error_and_a_configmap_is_read() {
        let e = SchedulerConf::parse("tiers:\n- plugins:\n  - name: gang\n").unwrap_err();
        assert!(e.to_string().contains("field actions"), "{e}");
        let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: volcano-scheduler-configmap\ndata:\n  volcano-scheduler.conf: |\n    actions: \"enqueue, allocate\"\n    tiers:\n    - plugins:\n      - name: gang\n";
        let (c, w) = SchedulerConf::parse(cm).unwrap();
        assert_eq!(c.actions, vec![ActionKind::Enqueue, ActionKind::Allocate]);
        assert!(w[0].0.contains("ConfigMap"));
        assert!(SchedulerConf::parse("kind: ConfigMap\ndata: {}\n").is_err());
    }

    #[test]
    fn unknown_action_is_an_error_naming_it() {
        let e = SchedulerConf::parse("actions: \"enqueue, allocat\"").unwrap_err();
        assert_eq!(e, ConfError::UnknownAction("allocat".into()));
        assert!(e.to_string().contains("allocat"));
    }

    #[test]
    fn unknown_plugin_is_kept_aside_and_skipped_and_flags_default_true() {
        let (c, w) = SchedulerConf::parse(
            "actions: allocate\ntiers:\n- plugins:\n  - name: nosuch\n  - name: gang\n    enableJobReady: false\n",
        )
        .unwrap();
        assert_eq!(c.tiers[0].plugins.len(), 1);
        assert!(w.is_empty(), "the registry's check reports it: {w:?}");
        assert_eq!(c.unknown_plugins.iter().map(|u| u.name.as_str()).collect::<Vec<_>>(), ["nosuch"]);
        let g = &c.tiers[0].plugins[0];
        assert!(!g.flags.on(Flag::JobReady));
        assert!(g.flags.on(Flag::JobOrder));
        assert!(!g.flags.on(Flag::Hierarchy));
    }

    #[test]
    fn flag_with_wrong_type_names_the_field() {
        let e = SchedulerConf::parse("tiers:\n- plugins:\n  - name: gang\n    enableJobReady: maybe\n").unwrap_err();
        assert!(e.to_string().contains("tiers[0].plugins[0].enableJobReady"), "{e}");
    }

    #[test]
    fn hierarchical_drf_with_proportion_is_rejected() {
        let e = SchedulerConf::parse("tiers:\n- plugins:\n  - name: drf\n    enableHierarchy: true\n  - name: proportion\n")
            .unwrap_err();
        assert_eq!(e, ConfError::HierarchyWithProportion(0));
    }

    #[test]
    fn nodes_to_find_follows_volcano_when_adaptive() {
        let mut o = SchedulerOptions::default();
        assert_eq!(o.nodes_to_find(10_000), 10_000, "Basalt default scans every node");
        o.percentage_nodes_to_find = 0;
        assert_eq!(o.nodes_to_find(50), 50);
        assert_eq!(o.nodes_to_find(10_000), 500, "max(50-80, 5)% of 10000");
        assert_eq!(o.nodes_to_find(1000), 420, "42% of 1000");
        assert_eq!(o.nodes_to_find(150), 100, "never below minimum-feasible-nodes");
    }
}
