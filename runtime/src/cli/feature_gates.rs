//! `--feature-gates` of `basalt scheduler` and `basalt webhook-manager`, as Volcano's components
//! take it (`k8s.io/component-base/featuregate`: `Name=true,Other=false`), with Volcano's gates
//! and defaults (`pkg/features/volcano_features.go`). Basalt acts on
//! [`SCHEDULING_GATES_QUEUE_ADMISSION`]; the other Volcano gates are accepted and reported as
//! having no effect when set, and a name Volcano does not define (Kubernetes' own gates, which
//! Volcano's binaries also accept) is reported as ignored.

use std::collections::BTreeMap;

/// Volcano's `SchedulingGatesQueueAdmission` (alpha, off by default).
pub const SCHEDULING_GATES_QUEUE_ADMISSION: &str = "SchedulingGatesQueueAdmission";

/// Volcano's feature gates with their defaults.
pub const VOLCANO_GATES: &[(&str, bool)] = &[
    ("WorkLoadSupport", true),
    ("VolcanoJobSupport", true),
    ("PodDisruptionBudgetsSupport", true),
    ("QueueCommandSync", true),
    ("PriorityClass", true),
    ("CSIStorage", false),
    ("ResourceTopology", true),
    ("CronVolcanoJobSupport", true),
    (SCHEDULING_GATES_QUEUE_ADMISSION, false),
];

/// Parsed `--feature-gates`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FeatureGates {
    set: BTreeMap<String, bool>,
}

impl FeatureGates {
    /// Parses `Name=bool,…` (spaces around entries allowed; empty: nothing set).
    ///
    /// Errors: an entry without `=` or with a value that is not a boolean, naming it.
    pub fn parse(s: &str) -> Result<FeatureGates, String> {
        let mut set = BTreeMap::new();
        for entry in s.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let (k, v) = entry.split_once('=').ok_or_else(|| format!("--feature-gates {entry:?}: expected Name=true|false"))?;
            let on = match v.trim() {
                "true" | "True" | "TRUE" | "1" | "t" | "T" => true,
                "false" | "False" | "FALSE" | "0" | "f" | "F" => false,
                other => return Err(format!("--feature-gates {entry:?}: invalid value {other:?} of {}", k.trim())),
            };
            set.insert(k.trim().to_string(), on);
        }
        Ok(FeatureGates { set })
    }

    /// Whether Volcano gate `name` is on (its Volcano default when not set).
    pub fn enabled(&self, name: &str) -> bool {
        self.set.get(name).copied().unwrap_or_else(|| VOLCANO_GATES.iter().find(|(n, _)| *n == name).is_some_and(|(_, d)| *d))
    }

    /// Warnings for gates set that Basalt does not act on: Volcano gates other than
    /// [`SCHEDULING_GATES_QUEUE_ADMISSION`] set to a value other than their default, and names
    /// that are not Volcano gates.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (name, &on) in &self.set {
            match VOLCANO_GATES.iter().find(|(n, _)| n == name) {
                Some((n, _)) if *n == SCHEDULING_GATES_QUEUE_ADMISSION => {}
                Some((_, d)) if *d == on => {}
                Some(_) => out.push(format!("feature gate {name}={on} has no effect in Basalt")),
                None => out.push(format!("feature gate {name} is not a Volcano feature gate; ignored")),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_volcano_spelling_and_defaults() {
        let g = FeatureGates::parse("SchedulingGatesQueueAdmission=true, CSIStorage=false").unwrap();
        assert!(g.enabled(SCHEDULING_GATES_QUEUE_ADMISSION));
        assert!(!FeatureGates::parse("").unwrap().enabled(SCHEDULING_GATES_QUEUE_ADMISSION), "off by default");
        assert!(FeatureGates::default().enabled("PriorityClass"), "Volcano's default");
        assert!(g.warnings().is_empty(), "{:?}", g.warnings());
        let w = FeatureGates::parse("PriorityClass=false,PodSchedulingReadiness=true").unwrap().warnings();
        assert_eq!(
            w,
            vec![
                "feature gate PodSchedulingReadiness is not a Volcano feature gate; ignored".to_string(),
                "feature gate PriorityClass=false has no effect in Basalt".to_string()
            ]
        );
        assert!(FeatureGates::parse("SchedulingGatesQueueAdmission").unwrap_err().contains("expected Name=true|false"));
        assert!(FeatureGates::parse("SchedulingGatesQueueAdmission=yes").unwrap_err().contains("invalid value \"yes\""));
    }
}
