//! `/pods/mutate` (Volcano master `pkg/webhooks/admission/pods/mutate/`, `pkg/webhooks/config/`):
//! the admission conf's `resourceGroups` steer a pod to a group of nodes. The first group the pod
//! belongs to patches it: `labels` merged into `spec.nodeSelector`, `affinity` (a JSON string)
//! set when the pod has none, `tolerations` appended, `schedulerName` set.
//!
//! A pod belongs to a group by `object.key`: `namespace` (its namespace is one of `object.value`),
//! `annotation` (one of the `key: value` YAML strings of `object.value` matches its annotations),
//! or no key (the same annotation match, or annotation `volcano.sh/resource-group` equal to the
//! group's `resourceGroup`). Any other key matches nothing.
//!
//! The `scheduling.volcano.sh/queue-allocation-gate` scheduling gate, which Volcano adds under its
//! `SchedulingGatesQueueAdmission` feature gate (off by default), is in [`super::scheduling_gate`].

use super::{Decision, Operation, PatchOp};
use k8s_openapi::api::core::v1::{Affinity, Pod, Toleration};
use serde::Deserialize;
use std::collections::BTreeMap;

/// The annotation a pod names its resource group with when a group has no `object.key`.
pub const RESOURCE_GROUP_ANNOTATION: &str = "volcano.sh/resource-group";

/// The admission conf (`--admission-conf`, the `volcano-admission-configmap` data file).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AdmissionConf {
    /// `resourceGroups`, in order: the first group a pod belongs to is applied.
    pub groups: Vec<ResourceGroup>,
}

/// One `resourceGroups[]` entry.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResourceGroup {
    /// `resourceGroup`: the group's name.
    pub name: String,
    /// `object.key`: `namespace`, `annotation` or empty.
    pub key: String,
    /// `object.value`: namespaces, or `key: value` annotation strings.
    pub values: Vec<String>,
    /// `schedulerName`, empty for none.
    pub scheduler_name: String,
    /// `tolerations`, appended to the pod's.
    pub tolerations: Vec<Toleration>,
    /// `labels`, merged into the pod's nodeSelector.
    pub labels: BTreeMap<String, String>,
    /// `affinity`, parsed from its JSON string; set only on pods without an affinity.
    pub affinity: Option<Affinity>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawConf {
    #[serde(default)]
    resource_groups: Vec<RawGroup>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawGroup {
    #[serde(default)]
    resource_group: String,
    #[serde(default)]
    object: RawObject,
    #[serde(default)]
    scheduler_name: String,
    #[serde(default)]
    tolerations: Vec<Toleration>,
    #[serde(default)]
    labels: BTreeMap<String, String>,
    #[serde(default)]
    affinity: String,
}

#[derive(Default, Deserialize)]
struct RawObject {
    #[serde(default)]
    key: String,
    #[serde(default)]
    value: Vec<String>,
}

impl AdmissionConf {
    /// Parses the conf's YAML text. An empty text is an empty conf.
    ///
    /// Errors: YAML that does not parse, or a group whose `affinity` is not a JSON Affinity,
    /// naming `resourceGroups[i]` and the field (Volcano logs and skips such an affinity; Basalt
    /// refuses the conf, so the last good one stays in force).
    pub fn parse(text: &str) -> Result<AdmissionConf, String> {
        if text.trim().is_empty() {
            return Ok(AdmissionConf::default());
        }
        let raw: RawConf = serde_yaml::from_str(text).map_err(|e| format!("resourceGroups: {e}"))?;
        let mut groups = Vec::with_capacity(raw.resource_groups.len());
        for (i, g) in raw.resource_groups.into_iter().enumerate() {
            let affinity = if g.affinity.trim().is_empty() {
                None
            } else {
                let a: Affinity = serde_json::from_str(&g.affinity).map_err(|e| {
                    format!("resourceGroups[{i}] ({}): field affinity: not a JSON Affinity: {e}", g.resource_group)
                })?;
                Some(a)
            };
            groups.push(ResourceGroup {
                name: g.resource_group,
                key: g.object.key,
                values: g.object.value,
                scheduler_name: g.scheduler_name,
                tolerations: g.tolerations,
                labels: g.labels,
                affinity,
            });
        }
        Ok(AdmissionConf { groups })
    }
}

impl ResourceGroup {
    /// Whether `pod` (in namespace `namespace`) belongs to this group.
    pub fn contains(&self, pod: &Pod, namespace: &str) -> bool {
        match self.key.as_str() {
            "namespace" => self.values.iter().any(|v| v == namespace),
            "annotation" | "" => {
                let empty = BTreeMap::new();
                let ann = pod.metadata.annotations.as_ref().unwrap_or(&empty);
                let wanted = self.annotations();
                if wanted.iter().any(|(k, v)| ann.get(k).map(String::as_str).unwrap_or("") == v) {
                    return true;
                }
                self.key.is_empty() && ann.get(RESOURCE_GROUP_ANNOTATION).map(String::as_str).unwrap_or("") == self.name
            }
            _ => false,
        }
    }

    /// The `key: value` annotations of `object.value` (entries that are not a YAML map of
    /// strings are skipped, as Volcano's do; a later entry does not override an earlier key).
    fn annotations(&self) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        for v in &self.values {
            if let Ok(m) = serde_yaml::from_str::<BTreeMap<String, String>>(v) {
                for (k, val) in m {
                    out.entry(k).or_insert(val);
                }
            }
        }
        out
    }

    /// The patch this group makes to `pod`.
    fn patch(&self, pod: &Pod) -> Vec<PatchOp> {
        let spec = pod.spec.clone().unwrap_or_default();
        let mut ops = Vec::new();
        if !self.labels.is_empty() {
            let mut selector = spec.node_selector.clone().unwrap_or_default();
            selector.extend(self.labels.clone());
            ops.push(PatchOp::add("/spec/nodeSelector", serde_json::to_value(selector).unwrap_or_default()));
        }
        if let (Some(a), None) = (&self.affinity, &spec.affinity) {
            ops.push(PatchOp::add("/spec/affinity", serde_json::to_value(a).unwrap_or_default()));
        }
        if !self.tolerations.is_empty() {
            let mut t = spec.tolerations.clone().unwrap_or_default();
            t.extend(self.tolerations.iter().cloned());
            ops.push(PatchOp::add("/spec/tolerations", serde_json::to_value(t).unwrap_or_default()));
        }
        if !self.scheduler_name.is_empty() {
            ops.push(PatchOp::add("/spec/schedulerName", self.scheduler_name.clone()));
        }
        ops
    }
}

/// `/pods/mutate`: the patch of the first group `pod` belongs to (none: admitted unchanged).
/// `namespace` is the request's, used when the pod names none.
pub fn mutate(op: Operation, pod: &Pod, namespace: &str, conf: &AdmissionConf) -> Decision {
    if op != Operation::Create {
        return Decision::deny("expect operation to be 'CREATE' ");
    }
    let ns = pod.metadata.namespace.as_deref().filter(|n| !n.is_empty()).unwrap_or(namespace);
    match conf.groups.iter().find(|g| g.contains(pod, ns)) {
        Some(g) => Decision::patched(g.patch(pod)),
        None => Decision::allow(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const CONF: &str = r#"
resourceGroups:
- resourceGroup: management
  object:
    key: namespace
    value: [mng-ns-1]
  schedulerName: default-scheduler
  tolerations:
  - {key: mng-taint-1, operator: Exists, effect: NoSchedule}
  labels:
    volcano.sh/nodetype: management
- resourceGroup: cpu
  object:
    key: annotation
    value: ["volcano.sh/resource-group: cpu"]
  affinity: '{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"kubernetes.io/os","operator":"In","values":["linux"]}]}]}}}'
  labels:
    volcano.sh/nodetype: cpu
- resourceGroup: gpu
  labels:
    volcano.sh/nodetype: gpu
"#;

    fn pod(ns: &str, ann: serde_json::Value, spec: serde_json::Value) -> Pod {
        serde_json::from_value(json!({"metadata": {"name": "p", "namespace": ns, "annotations": ann}, "spec": spec})).unwrap()
    }

    fn ops(d: &Decision) -> Vec<(String, serde_json::Value)> {
        assert!(d.allowed, "{}", d.message);
        d.patch.iter().map(|p| (p.path.clone(), p.value.clone())).collect()
    }

    #[test]
    fn a_namespace_group_sets_selector_tolerations_and_scheduler() {
        let conf = AdmissionConf::parse(CONF).unwrap();
        let p = pod(
            "mng-ns-1",
            json!({}),
            json!({"nodeSelector": {"zone": "a"}, "tolerations": [{"key": "t", "operator": "Exists"}], "containers": []}),
        );
        let got = ops(&mutate(Operation::Create, &p, "mng-ns-1", &conf));
        assert_eq!(
            got,
            vec![
                ("/spec/nodeSelector".to_string(), json!({"zone": "a", "volcano.sh/nodetype": "management"})),
                (
                    "/spec/tolerations".to_string(),
                    json!([{"key": "t", "operator": "Exists"}, {"key": "mng-taint-1", "operator": "Exists", "effect": "NoSchedule"}])
                ),
                ("/spec/schedulerName".to_string(), json!("default-scheduler")),
            ]
        );
    }

    #[test]
    fn an_annotation_group_sets_affinity_only_when_the_pod_has_none() {
        let conf = AdmissionConf::parse(CONF).unwrap();
        let p = pod("other", json!({"volcano.sh/resource-group": "cpu"}), json!({"containers": []}));
        let got = ops(&mutate(Operation::Create, &p, "other", &conf));
        assert_eq!(got[0], ("/spec/nodeSelector".to_string(), json!({"volcano.sh/nodetype": "cpu"})));
        assert_eq!(got[1].0, "/spec/affinity");
        assert_eq!(
            got[1].1["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
                ["matchExpressions"][0]["key"],
            "kubernetes.io/os"
        );
        let with_affinity = pod("other", json!({"volcano.sh/resource-group": "cpu"}), json!({"affinity": {}, "containers": []}));
        let got = ops(&mutate(Operation::Create, &with_affinity, "other", &conf));
        assert_eq!(got.len(), 1, "the pod's own affinity is kept: {got:?}");
    }

    #[test]
    fn a_group_without_key_matches_its_name_in_the_annotation() {
        let conf = AdmissionConf::parse(CONF).unwrap();
        let p = pod("", json!({"volcano.sh/resource-group": "gpu"}), json!({"containers": []}));
        assert_eq!(
            ops(&mutate(Operation::Create, &p, "req-ns", &conf)),
            vec![("/spec/nodeSelector".to_string(), json!({"volcano.sh/nodetype": "gpu"}))]
        );
        // The request's namespace stands in for an empty one.
        let p = pod("", json!({}), json!({"containers": []}));
        assert_eq!(ops(&mutate(Operation::Create, &p, "mng-ns-1", &conf))[0].1, json!({"volcano.sh/nodetype": "management"}));
    }

    #[test]
    fn no_group_no_patch_and_only_create() {
        let conf = AdmissionConf::parse(CONF).unwrap();
        let p = pod("elsewhere", json!({"volcano.sh/resource-group": "tpu"}), json!({"containers": []}));
        assert_eq!(mutate(Operation::Create, &p, "elsewhere", &conf), Decision::allow());
        assert_eq!(mutate(Operation::Create, &p, "elsewhere", &AdmissionConf::parse("").unwrap()), Decision::allow());
        assert!(!mutate(Operation::Update, &p, "elsewhere", &conf).allowed);
        // An unknown key matches nothing, not even the annotation.
        let odd =
            AdmissionConf::parse("resourceGroups:\n- resourceGroup: tpu\n  object: {key: label, value: [x]}\n  labels: {a: b}\n")
                .unwrap();
        assert_eq!(mutate(Operation::Create, &p, "elsewhere", &odd), Decision::allow());
    }

    #[test]
    fn a_bad_conf_names_the_group_and_field() {
        let err = AdmissionConf::parse("resourceGroups:\n- resourceGroup: gpu\n  affinity: '{not json'\n").unwrap_err();
        assert!(err.starts_with("resourceGroups[0] (gpu): field affinity: not a JSON Affinity"), "{err}");
        assert!(AdmissionConf::parse("resourceGroups: 3").unwrap_err().starts_with("resourceGroups: "));
    }
}
