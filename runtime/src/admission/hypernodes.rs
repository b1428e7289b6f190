//! `/hypernodes/validate` (Volcano master `pkg/webhooks/admission/hypernodes/validate/`), on
//! CREATE and UPDATE: at least one member, and every `regexMatch.pattern` compiles. (Selector
//! exclusivity and required fields are the CRD schema's, as in Volcano master.)

use super::Decision;
use crate::crd::HyperNode;

/// `/hypernodes/validate`.
pub fn validate(h: &HyperNode) -> Decision {
    let mut errs = Vec::new();
    let members = h.spec.members.as_deref().unwrap_or(&[]);
    if members.is_empty() {
        errs.push("spec.members: Invalid value: []v1alpha1.MemberSpec(nil): member must have at least one member".to_string());
    }
    for m in members {
        if let Some(p) =
            m.selector.as_ref().and_then(|s| s.regex_match.as_ref()).and_then(|r| r.pattern.as_deref()).filter(|p| !p.is_empty())
        {
            if let Err(e) = regex::Regex::new(p) {
                let e = e.to_string().replace('\n', " ");
                errs.push(format!(
                    "spec.members.selector.regexMatch.pattern: Invalid value: {p:?}: member regexMatch pattern is invalid: {e}"
                ));
            }
        }
    }
    match errs.len() {
        0 => Decision::allow(),
        1 => Decision::deny(errs.remove(0)),
        _ => Decision::deny(format!("[{}]", errs.join(", "))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_and_regexes_are_checked() {
        let h = |members: &str| -> HyperNode {
            serde_yaml::from_str(&format!("{{metadata: {{name: s0}}, spec: {{tier: 1, members: {members}}}}}")).unwrap()
        };
        assert!(validate(&h("[{type: Node, selector: {regexMatch: {pattern: '^node-[0-9]+$'}}}]")).allowed);
        let d = validate(&h("[{type: Node, selector: {regexMatch: {pattern: 'node-[0-9'}}}]"));
        assert!(
            d.message.starts_with(
                "spec.members.selector.regexMatch.pattern: Invalid value: \"node-[0-9\": member regexMatch pattern is invalid: "
            ),
            "{}",
            d.message
        );
        assert!(validate(&h("[]")).message.ends_with("member must have at least one member"));
    }
}
