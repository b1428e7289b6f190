//! Volcano `HyperNode` → [`HyperNodeSpec`], and a PodGroup's `networkTopology` and
//! `subGroupPolicy[]` (kept opaque in [`crate::crd::PodGroupSpec`]) → the core's
//! [`NetworkTopologySpec`] and [`SubGroupPolicySpec`] (volcano-behaviour.md §4, §9).
//!
//! Errors name the object and field: a member without a type or with an unknown one, a
//! selector with none or several of `exactMatch` / `regexMatch` / `labelMatch`, a HyperNode
//! member not selected by `exactMatch`, a negative tier; a `networkTopology` whose mode is
//! neither `hard` nor `soft` or that sets both `highestTierAllowed` and `highestTierName`
//! (Volcano's webhook refuses both), a negative `subGroupSize` or `minSubGroups`. Whether a
//! regex compiles and whether the members form a tree is checked when the session resolves
//! the tree (`basalt_core::session::topology`), which sees all HyperNodes.

use super::{required_name, ConvertError, ObjRef};
use crate::crd;
use basalt_core::model::{
    HyperNodeMember, HyperNodeSpec, LabelSelectorOp, MemberSelector, MemberType, NetworkTopologySpec, PodLabelSelector,
    SubGroupPolicySpec, TopologyMode,
};
use serde_json::Value;

/// Converts a HyperNode.
pub fn convert_hyper_node(hn: &crd::HyperNode) -> Result<HyperNodeSpec, ConvertError> {
    let name = required_name("HyperNode", &hn.metadata)?;
    let obj = ObjRef { kind: "HyperNode", name: &name };
    let tier = hn.spec.tier.unwrap_or(0);
    if tier < 0 {
        return Err(obj.error("spec.tier", format!("must be >= 0, got {tier}")));
    }
    let mut members = Vec::new();
    for (i, m) in hn.spec.members.iter().flatten().enumerate() {
        let kind = match m.type_.as_deref() {
            Some("Node") => MemberType::Node,
            Some("HyperNode") => MemberType::HyperNode,
            Some(other) => {
                return Err(obj.error(format!("spec.members[{i}].type"), format!("must be Node or HyperNode, got {other:?}")))
            }
            None => return Err(obj.error(format!("spec.members[{i}].type"), "required (Node or HyperNode)")),
        };
        let field = format!("spec.members[{i}].selector");
        let sel = m.selector.clone().unwrap_or_default();
        let mut chosen = Vec::new();
        if let Some(e) = &sel.exact_match {
            match e.name.as_deref() {
                Some(n) if !n.is_empty() => chosen.push(MemberSelector::Exact(n.to_string())),
                _ => return Err(obj.error(format!("{field}.exactMatch.name"), "required")),
            }
        }
        if let Some(r) = &sel.regex_match {
            match r.pattern.as_deref() {
                Some(p) if !p.is_empty() => chosen.push(MemberSelector::Regex(p.to_string())),
                _ => return Err(obj.error(format!("{field}.regexMatch.pattern"), "required")),
            }
        }
        if let Some(l) = &sel.label_match {
            let labels = l.match_labels.clone().unwrap_or_default();
            if labels.is_empty() {
                return Err(obj.error(format!("{field}.labelMatch.matchLabels"), "required"));
            }
            chosen.push(MemberSelector::Labels(labels.into()));
        }
        let selector = match chosen.len() {
            1 => chosen.remove(0),
            0 => return Err(obj.error(field, "one of exactMatch, regexMatch or labelMatch is required")),
            _ => return Err(obj.error(field, "exactMatch, regexMatch and labelMatch are exclusive")),
        };
        if kind == MemberType::HyperNode && !matches!(selector, MemberSelector::Exact(_)) {
            return Err(obj.error(field, "a HyperNode member is selected by exactMatch only"));
        }
        members.push(HyperNodeMember { kind, selector });
    }
    Ok(HyperNodeSpec { name: name.clone(), tier, tier_name: hn.spec.tier_name.clone().unwrap_or_default(), members })
}

fn int_field(obj: ObjRef<'_>, v: &Value, field: &str) -> Result<Option<i32>, ConvertError> {
    match v {
        Value::Null => Ok(None),
        Value::Number(n) => match n.as_i64().and_then(|x| i32::try_from(x).ok()) {
            Some(x) => Ok(Some(x)),
            None => Err(obj.error(field, format!("must be an integer, got {n}"))),
        },
        other => Err(obj.error(field, format!("must be an integer, got {other}"))),
    }
}

/// A `networkTopology` object at `field`.
pub fn network_topology(obj: ObjRef<'_>, v: &Value, field: &str) -> Result<Option<NetworkTopologySpec>, ConvertError> {
    let m = match v {
        Value::Null => return Ok(None),
        Value::Object(m) => m,
        other => return Err(obj.error(field, format!("must be an object, got {other}"))),
    };
    let mode = match m.get("mode").and_then(Value::as_str) {
        None | Some("hard") => TopologyMode::Hard,
        Some("soft") => TopologyMode::Soft,
        Some(other) => return Err(obj.error(format!("{field}.mode"), format!("must be hard or soft, got {other:?}"))),
    };
    let tier = int_field(obj, m.get("highestTierAllowed").unwrap_or(&Value::Null), &format!("{field}.highestTierAllowed"))?;
    let tier_name = m.get("highestTierName").and_then(Value::as_str).unwrap_or("").to_string();
    if tier.is_some() && !tier_name.is_empty() {
        return Err(obj.error(field, "highestTierAllowed and highestTierName are exclusive"));
    }
    if let Some(t) = tier.filter(|t| *t < 0) {
        return Err(obj.error(format!("{field}.highestTierAllowed"), format!("must be >= 0, got {t}")));
    }
    Ok(Some(NetworkTopologySpec { mode, highest_tier_allowed: tier, highest_tier_name: tier_name }))
}

fn label_selector(obj: ObjRef<'_>, v: &Value, field: &str) -> Result<Option<PodLabelSelector>, ConvertError> {
    let m = match v {
        Value::Null => return Ok(None),
        Value::Object(m) => m,
        other => return Err(obj.error(field, format!("must be an object, got {other}"))),
    };
    let mut sel = PodLabelSelector::default();
    if let Some(Value::Object(l)) = m.get("matchLabels") {
        for (k, v) in l {
            sel.match_labels.insert(k.clone(), v.as_str().unwrap_or_default().to_string());
        }
    }
    if let Some(Value::Array(exprs)) = m.get("matchExpressions") {
        for (i, e) in exprs.iter().enumerate() {
            let f = format!("{field}.matchExpressions[{i}]");
            let key = e.get("key").and_then(Value::as_str).unwrap_or_default().to_string();
            let op = match e.get("operator").and_then(Value::as_str) {
                Some("In") => LabelSelectorOp::In,
                Some("NotIn") => LabelSelectorOp::NotIn,
                Some("Exists") => LabelSelectorOp::Exists,
                Some("DoesNotExist") => LabelSelectorOp::DoesNotExist,
                other => {
                    return Err(
                        obj.error(format!("{f}.operator"), format!("must be In, NotIn, Exists or DoesNotExist, got {other:?}"))
                    )
                }
            };
            let values: Vec<String> = e
                .get("values")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
                .unwrap_or_default();
            sel.match_expressions.push((key, op, values));
        }
    }
    Ok(Some(sel))
}

/// A PodGroup's `subGroupPolicy[]`.
pub fn sub_group_policy(obj: ObjRef<'_>, v: &Value) -> Result<Vec<SubGroupPolicySpec>, ConvertError> {
    let items = match v {
        Value::Null => return Ok(Vec::new()),
        Value::Array(a) => a,
        other => return Err(obj.error("spec.subGroupPolicy", format!("must be a list, got {other}"))),
    };
    let mut out = Vec::new();
    for (i, p) in items.iter().enumerate() {
        let field = format!("spec.subGroupPolicy[{i}]");
        let get = |k: &str| p.get(k).unwrap_or(&Value::Null);
        let size = int_field(obj, get("subGroupSize"), &format!("{field}.subGroupSize"))?;
        let min = int_field(obj, get("minSubGroups"), &format!("{field}.minSubGroups"))?;
        for (k, x) in [("subGroupSize", size), ("minSubGroups", min)] {
            if let Some(x) = x.filter(|x| *x < 0) {
                return Err(obj.error(format!("{field}.{k}"), format!("must be >= 0, got {x}")));
            }
        }
        out.push(SubGroupPolicySpec {
            name: get("name").as_str().unwrap_or_default().to_string(),
            network_topology: network_topology(obj, get("networkTopology"), &format!("{field}.networkTopology"))?,
            sub_group_size: size,
            min_sub_groups: min,
            label_selector: label_selector(obj, get("labelSelector"), &format!("{field}.labelSelector"))?,
            match_label_keys: get("matchLabelKeys")
                .as_array()
                .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
                .unwrap_or_default(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hn(yaml: &str) -> Result<HyperNodeSpec, ConvertError> {
        convert_hyper_node(&serde_yaml::from_str(yaml).unwrap())
    }

    #[test]
    fn converts_members_of_each_selector() {
        let got = hn("metadata: {name: s0}\nspec:\n  tier: 1\n  tierName: leaf\n  members:\n  - {type: Node, selector: {exactMatch: {name: n1}}}\n  - {type: Node, selector: {regexMatch: {pattern: '^n[0-9]$'}}}\n  - {type: Node, selector: {labelMatch: {matchLabels: {rack: a}}}}\n").unwrap();
        assert_eq!((got.tier, got.tier_name.as_str(), got.members.len()), (1, "leaf", 3));
        assert_eq!(got.members[0].selector, MemberSelector::Exact("n1".into()));
        assert_eq!(got.members[1].selector, MemberSelector::Regex("^n[0-9]$".into()));
    }

    #[test]
    fn refuses_bad_members_naming_the_field() {
        let e = hn("metadata: {name: s0}\nspec: {tier: 1, members: [{type: Switch, selector: {exactMatch: {name: a}}}]}\n")
            .unwrap_err();
        assert_eq!(e.to_string(), "HyperNode s0: field spec.members[0].type: must be Node or HyperNode, got \"Switch\"");
        let e = hn("metadata: {name: s0}\nspec: {tier: 2, members: [{type: HyperNode, selector: {regexMatch: {pattern: a}}}]}\n")
            .unwrap_err();
        assert_eq!(e.field, "spec.members[0].selector");
        let e = hn("metadata: {name: s0}\nspec: {tier: 1, members: [{type: Node, selector: {}}]}\n").unwrap_err();
        assert!(e.message.contains("one of exactMatch"), "{e}");
    }

    #[test]
    fn network_topology_modes_and_exclusive_tiers() {
        let obj = ObjRef { kind: "PodGroup", name: "ns/pg" };
        let nt = network_topology(obj, &serde_json::json!({"mode": "soft"}), "spec.networkTopology").unwrap().unwrap();
        assert_eq!((nt.mode, nt.highest_tier_allowed), (TopologyMode::Soft, None));
        let e =
            network_topology(obj, &serde_json::json!({"highestTierAllowed": 1, "highestTierName": "x"}), "spec.networkTopology")
                .unwrap_err();
        assert_eq!(
            e.to_string(),
            "PodGroup ns/pg: field spec.networkTopology: highestTierAllowed and highestTierName are exclusive"
        );
        let e = network_topology(obj, &serde_json::json!({"mode": "strict"}), "spec.networkTopology").unwrap_err();
        assert_eq!(e.field, "spec.networkTopology.mode");
    }

    #[test]
    fn sub_group_policy_reads_keys_and_sizes() {
        let obj = ObjRef { kind: "PodGroup", name: "ns/pg" };
        let v = serde_json::json!([{"name": "w", "subGroupSize": 2, "minSubGroups": 1, "matchLabelKeys": ["volcano.sh/partition-id"],
            "networkTopology": {"mode": "hard", "highestTierAllowed": 1}}]);
        let p = sub_group_policy(obj, &v).unwrap();
        assert_eq!((p[0].sub_group_size, p[0].min_sub_groups, p[0].match_label_keys.len()), (Some(2), Some(1), 1));
        assert_eq!(p[0].network_topology.as_ref().unwrap().highest_tier_allowed, Some(1));
        let e = sub_group_policy(obj, &serde_json::json!([{"subGroupSize": -1}])).unwrap_err();
        assert_eq!(e.field, "spec.subGroupPolicy[0].subGroupSize");
    }
}
