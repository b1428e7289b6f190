//! Scheduling constraints of pods and nodes → core types: label and node selectors, node/pod
//! (anti-)affinity, taints, tolerations and topology spread constraints.
//!
//! Checks what Kubernetes' API validation would have refused (unknown operators, `Gt` without
//! one integer value, an empty `topologyKey`, …) so the core never sees a shape the API server
//! cannot produce; every refusal names the field.

use super::{ConvertError, ObjRef};
use basalt_core::model::{
    Affinity, LabelSelector, NodeSelectorTerm, PodAffinityTerm, PreferredSchedulingTerm, Requirement, SelectorOp, TaintEffect,
    Toleration, TolerationOp, TopologySpreadConstraint, WeightedPodAffinityTerm, WhenUnsatisfiable,
};
use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;

/// Which selector grammar a requirement belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Grammar {
    /// `metav1.LabelSelector`: In, NotIn, Exists, DoesNotExist.
    Label,
    /// `v1.NodeSelectorRequirement`: the label operators plus Gt and Lt.
    Node,
    /// `matchFields`: only `metadata.name` with In or NotIn.
    Field,
}

fn requirement(
    obj: ObjRef<'_>,
    field: &str,
    key: &str,
    op: &str,
    values: Option<&Vec<String>>,
    grammar: Grammar,
) -> Result<Requirement, ConvertError> {
    let values: Vec<String> = values.cloned().unwrap_or_default();
    let op = match op {
        "In" => SelectorOp::In,
        "NotIn" => SelectorOp::NotIn,
        "Exists" if grammar != Grammar::Field => SelectorOp::Exists,
        "DoesNotExist" if grammar != Grammar::Field => SelectorOp::DoesNotExist,
        "Gt" if grammar == Grammar::Node => SelectorOp::Gt,
        "Lt" if grammar == Grammar::Node => SelectorOp::Lt,
        other => return Err(obj.error(format!("{field}.operator"), format!("unsupported operator {other:?}"))),
    };
    if grammar == Grammar::Field && key != "metadata.name" {
        return Err(obj.error(
            format!("{field}.key"),
            format!("unsupported field selector key {key:?}; only \"metadata.name\" is defined"),
        ));
    }
    let bad_values = match op {
        SelectorOp::In | SelectorOp::NotIn => values.is_empty().then_some("must be non-empty for In and NotIn"),
        SelectorOp::Exists | SelectorOp::DoesNotExist => {
            (!values.is_empty()).then_some("must be empty for Exists and DoesNotExist")
        }
        SelectorOp::Gt | SelectorOp::Lt => {
            (values.len() != 1 || values[0].parse::<i64>().is_err()).then_some("must be exactly one integer for Gt and Lt")
        }
    };
    if let Some(msg) = bad_values {
        return Err(obj.error(format!("{field}.values"), msg));
    }
    Ok(Requirement { key: key.to_string(), op, values })
}

/// A `metav1.LabelSelector` at `field`.
pub(crate) fn label_selector(obj: ObjRef<'_>, field: &str, s: &meta::LabelSelector) -> Result<LabelSelector, ConvertError> {
    let match_expressions = s
        .match_expressions
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, r)| {
            requirement(obj, &format!("{field}.matchExpressions[{i}]"), &r.key, &r.operator, r.values.as_ref(), Grammar::Label)
        })
        .collect::<Result<_, _>>()?;
    Ok(LabelSelector { match_labels: s.match_labels.clone().unwrap_or_default().into(), match_expressions })
}

pub(crate) fn node_selector_term(
    obj: ObjRef<'_>,
    field: &str,
    t: &k8s::NodeSelectorTerm,
) -> Result<NodeSelectorTerm, ConvertError> {
    let reqs = |list: &Option<Vec<k8s::NodeSelectorRequirement>>, sub: &str, g: Grammar| {
        list.iter()
            .flatten()
            .enumerate()
            .map(|(i, r)| requirement(obj, &format!("{field}.{sub}[{i}]"), &r.key, &r.operator, r.values.as_ref(), g))
            .collect::<Result<Vec<_>, _>>()
    };
    Ok(NodeSelectorTerm {
        match_expressions: reqs(&t.match_expressions, "matchExpressions", Grammar::Node)?,
        match_fields: reqs(&t.match_fields, "matchFields", Grammar::Field)?,
    })
}

fn pod_affinity_term(obj: ObjRef<'_>, field: &str, t: &k8s::PodAffinityTerm) -> Result<PodAffinityTerm, ConvertError> {
    if t.topology_key.is_empty() {
        return Err(obj.error(format!("{field}.topologyKey"), "required"));
    }
    Ok(PodAffinityTerm {
        label_selector: t
            .label_selector
            .as_ref()
            .map(|s| label_selector(obj, &format!("{field}.labelSelector"), s))
            .transpose()?,
        namespaces: t.namespaces.clone().unwrap_or_default(),
        namespace_selector: t
            .namespace_selector
            .as_ref()
            .map(|s| label_selector(obj, &format!("{field}.namespaceSelector"), s))
            .transpose()?,
        topology_key: t.topology_key.clone(),
    })
}

fn pod_terms(
    obj: ObjRef<'_>,
    field: &str,
    list: &Option<Vec<k8s::PodAffinityTerm>>,
) -> Result<Vec<PodAffinityTerm>, ConvertError> {
    list.iter().flatten().enumerate().map(|(i, t)| pod_affinity_term(obj, &format!("{field}[{i}]"), t)).collect()
}

fn weighted_pod_terms(
    obj: ObjRef<'_>,
    field: &str,
    list: &Option<Vec<k8s::WeightedPodAffinityTerm>>,
) -> Result<Vec<WeightedPodAffinityTerm>, ConvertError> {
    list.iter()
        .flatten()
        .enumerate()
        .map(|(i, w)| {
            Ok(WeightedPodAffinityTerm {
                weight: w.weight,
                term: pod_affinity_term(obj, &format!("{field}[{i}].podAffinityTerm"), &w.pod_affinity_term)?,
            })
        })
        .collect()
}

const REQUIRED: &str = "requiredDuringSchedulingIgnoredDuringExecution";
const PREFERRED: &str = "preferredDuringSchedulingIgnoredDuringExecution";

/// `spec.affinity` (node affinity, pod affinity and pod anti-affinity, required and preferred).
pub(crate) fn affinity(obj: ObjRef<'_>, a: &k8s::Affinity) -> Result<Affinity, ConvertError> {
    let mut out = Affinity::default();
    if let Some(na) = &a.node_affinity {
        if let Some(req) = &na.required_during_scheduling_ignored_during_execution {
            let terms = req
                .node_selector_terms
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    node_selector_term(obj, &format!("spec.affinity.nodeAffinity.{REQUIRED}.nodeSelectorTerms[{i}]"), t)
                })
                .collect::<Result<Vec<_>, _>>()?;
            out.node_required = Some(terms);
        }
        out.node_preferred = na
            .preferred_during_scheduling_ignored_during_execution
            .iter()
            .flatten()
            .enumerate()
            .map(|(i, p)| {
                Ok(PreferredSchedulingTerm {
                    weight: p.weight,
                    preference: node_selector_term(
                        obj,
                        &format!("spec.affinity.nodeAffinity.{PREFERRED}[{i}].preference"),
                        &p.preference,
                    )?,
                })
            })
            .collect::<Result<_, ConvertError>>()?;
    }
    if let Some(pa) = &a.pod_affinity {
        out.pod_required = pod_terms(
            obj,
            &format!("spec.affinity.podAffinity.{REQUIRED}"),
            &pa.required_during_scheduling_ignored_during_execution,
        )?;
        out.pod_preferred = weighted_pod_terms(
            obj,
            &format!("spec.affinity.podAffinity.{PREFERRED}"),
            &pa.preferred_during_scheduling_ignored_during_execution,
        )?;
    }
    if let Some(pa) = &a.pod_anti_affinity {
        out.anti_required = pod_terms(
            obj,
            &format!("spec.affinity.podAntiAffinity.{REQUIRED}"),
            &pa.required_during_scheduling_ignored_during_execution,
        )?;
        out.anti_preferred = weighted_pod_terms(
            obj,
            &format!("spec.affinity.podAntiAffinity.{PREFERRED}"),
            &pa.preferred_during_scheduling_ignored_during_execution,
        )?;
    }
    Ok(out)
}

/// A taint or toleration effect.
pub(crate) fn taint_effect(obj: ObjRef<'_>, field: &str, s: &str) -> Result<TaintEffect, ConvertError> {
    match s {
        "NoSchedule" => Ok(TaintEffect::NoSchedule),
        "PreferNoSchedule" => Ok(TaintEffect::PreferNoSchedule),
        "NoExecute" => Ok(TaintEffect::NoExecute),
        other => Err(obj.error(field, format!("unsupported taint effect {other:?}"))),
    }
}

/// `spec.tolerations`.
pub(crate) fn tolerations(obj: ObjRef<'_>, list: &Option<Vec<k8s::Toleration>>) -> Result<Vec<Toleration>, ConvertError> {
    list.iter()
        .flatten()
        .enumerate()
        .map(|(i, t)| {
            let field = format!("spec.tolerations[{i}]");
            let op = match t.operator.as_deref().unwrap_or("") {
                "" | "Equal" => TolerationOp::Equal,
                "Exists" => TolerationOp::Exists,
                other => return Err(obj.error(format!("{field}.operator"), format!("unsupported operator {other:?}"))),
            };
            let key = t.key.clone().unwrap_or_default();
            let value = t.value.clone().unwrap_or_default();
            if op == TolerationOp::Exists && !value.is_empty() {
                return Err(obj.error(format!("{field}.value"), "must be empty when operator is Exists"));
            }
            if op == TolerationOp::Equal && key.is_empty() {
                return Err(obj.error(format!("{field}.operator"), "must be Exists when key is empty"));
            }
            let effect = match t.effect.as_deref().unwrap_or("") {
                "" => None,
                e => Some(taint_effect(obj, &format!("{field}.effect"), e)?),
            };
            Ok(Toleration { key, op, value, effect })
        })
        .collect()
}

/// `spec.topologySpreadConstraints`.
pub(crate) fn topology_spread(
    obj: ObjRef<'_>,
    list: &Option<Vec<k8s::TopologySpreadConstraint>>,
) -> Result<Vec<TopologySpreadConstraint>, ConvertError> {
    list.iter()
        .flatten()
        .enumerate()
        .map(|(i, c)| {
            let field = format!("spec.topologySpreadConstraints[{i}]");
            let err = |sub: &str, msg: String| obj.error(format!("{field}.{sub}"), msg);
            if c.max_skew < 1 {
                return Err(err("maxSkew", format!("must be >= 1, got {}", c.max_skew)));
            }
            if c.topology_key.is_empty() {
                return Err(err("topologyKey", "required".into()));
            }
            let when_unsatisfiable = match c.when_unsatisfiable.as_str() {
                "DoNotSchedule" => WhenUnsatisfiable::DoNotSchedule,
                "ScheduleAnyway" => WhenUnsatisfiable::ScheduleAnyway,
                other => return Err(err("whenUnsatisfiable", format!("unsupported value {other:?}"))),
            };
            let min_domains = match c.min_domains {
                None => 1,
                Some(m) if m < 1 => return Err(err("minDomains", format!("must be >= 1, got {m}"))),
                Some(_) if when_unsatisfiable != WhenUnsatisfiable::DoNotSchedule => {
                    return Err(err("minDomains", "may only be set with whenUnsatisfiable DoNotSchedule".into()))
                }
                Some(m) => m,
            };
            let policy = |sub: &str, v: &Option<String>| match v.as_deref() {
                None => Ok(None),
                Some("Honor") => Ok(Some(true)),
                Some("Ignore") => Ok(Some(false)),
                Some(other) => Err(err(sub, format!("unsupported value {other:?}"))),
            };
            Ok(TopologySpreadConstraint {
                max_skew: c.max_skew,
                topology_key: c.topology_key.clone(),
                when_unsatisfiable,
                label_selector: c
                    .label_selector
                    .as_ref()
                    .map(|s| label_selector(obj, &format!("{field}.labelSelector"), s))
                    .transpose()?,
                min_domains,
                ignore_node_affinity: policy("nodeAffinityPolicy", &c.node_affinity_policy)? == Some(false),
                honor_node_taints: policy("nodeTaintsPolicy", &c.node_taints_policy)? == Some(true),
                match_label_keys: c.match_label_keys.clone().unwrap_or_default(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const OBJ: ObjRef<'static> = ObjRef { kind: "Pod", name: "ns/p" };

    fn sel_req(key: &str, op: &str, values: &[&str]) -> k8s::NodeSelectorRequirement {
        k8s::NodeSelectorRequirement {
            key: key.into(),
            operator: op.into(),
            values: if values.is_empty() { None } else { Some(values.iter().map(|s| s.to_string()).collect()) },
        }
    }

    #[test]
    fn node_affinity_operators_and_validation() {
        let term = |r| k8s::NodeSelectorTerm { match_expressions: Some(vec![r]), match_fields: None };
        let aff = |r| k8s::Affinity {
            node_affinity: Some(k8s::NodeAffinity {
                required_during_scheduling_ignored_during_execution: Some(k8s::NodeSelector {
                    node_selector_terms: vec![term(r)],
                }),
                preferred_during_scheduling_ignored_during_execution: None,
            }),
            ..Default::default()
        };
        let a = affinity(OBJ, &aff(sel_req("gpus", "Gt", &["2"]))).unwrap();
        let t = &a.node_required.as_ref().unwrap()[0];
        assert_eq!(t.match_expressions[0].op, SelectorOp::Gt);
        let table: &[(k8s::NodeSelectorRequirement, &str)] = &[
            (sel_req("gpus", "Gt", &["x"]), "values"),
            (sel_req("gpus", "Gt", &[]), "values"),
            (sel_req("zone", "In", &[]), "values"),
            (sel_req("zone", "Exists", &["a"]), "values"),
            (sel_req("zone", "Like", &["a"]), "operator"),
        ];
        for (r, sub) in table {
            let e = affinity(OBJ, &aff(r.clone())).unwrap_err();
            assert_eq!(
                e.field,
                format!("spec.affinity.nodeAffinity.{REQUIRED}.nodeSelectorTerms[0].matchExpressions[0].{sub}"),
                "{r:?}"
            );
        }
    }

    #[test]
    fn label_selector_refuses_node_only_operators() {
        let s = meta::LabelSelector {
            match_expressions: Some(vec![meta::LabelSelectorRequirement {
                key: "a".into(),
                operator: "Gt".into(),
                values: Some(vec!["1".into()]),
            }]),
            match_labels: None,
        };
        let e = label_selector(OBJ, "x.labelSelector", &s).unwrap_err();
        assert_eq!(e.field, "x.labelSelector.matchExpressions[0].operator");
    }

    #[test]
    fn tolerations_and_spread_defaults() {
        let t = tolerations(
            OBJ,
            &Some(vec![k8s::Toleration {
                key: Some("dedicated".into()),
                operator: None,
                value: Some("gpu".into()),
                effect: Some("NoSchedule".into()),
                toleration_seconds: None,
            }]),
        )
        .unwrap();
        assert_eq!(
            t,
            vec![Toleration {
                key: "dedicated".into(),
                op: TolerationOp::Equal,
                value: "gpu".into(),
                effect: Some(TaintEffect::NoSchedule)
            }]
        );
        let all =
            tolerations(OBJ, &Some(vec![k8s::Toleration { operator: Some("Exists".into()), ..Default::default() }])).unwrap();
        assert_eq!(all[0].effect, None);
        assert!(tolerations(
            OBJ,
            &Some(vec![k8s::Toleration {
                effect: Some("Sometimes".into()),
                operator: Some("Exists".into()),
                ..Default::default()
            }])
        )
        .is_err());

        let c = k8s::TopologySpreadConstraint {
            max_skew: 1,
            topology_key: "zone".into(),
            when_unsatisfiable: "DoNotSchedule".into(),
            ..Default::default()
        };
        let got = topology_spread(OBJ, &Some(vec![c.clone()])).unwrap();
        assert_eq!(got[0].min_domains, 1);
        assert!(!got[0].ignore_node_affinity && !got[0].honor_node_taints);
        let c2 = k8s::TopologySpreadConstraint {
            node_affinity_policy: Some("Ignore".into()),
            node_taints_policy: Some("Honor".into()),
            min_domains: Some(3),
            ..c.clone()
        };
        let got = topology_spread(OBJ, &Some(vec![c2])).unwrap();
        assert!(got[0].ignore_node_affinity && got[0].honor_node_taints);
        assert_eq!(got[0].min_domains, 3);
        let bad = k8s::TopologySpreadConstraint { when_unsatisfiable: "ScheduleAnyway".into(), min_domains: Some(2), ..c };
        assert_eq!(topology_spread(OBJ, &Some(vec![bad])).unwrap_err().field, "spec.topologySpreadConstraints[0].minDomains");
    }
}
