//! `scheduling.k8s.io/v1` `PriorityClass` → [`PriorityClassSpec`].

use super::{required_name, ConvertError};
use basalt_core::model::PriorityClassSpec;
use k8s_openapi::api::scheduling::v1::PriorityClass;

/// Converts a PriorityClass (`value` unset = 0, `globalDefault` unset = false). Errors:
/// missing name.
pub fn convert_priority_class(pc: &PriorityClass) -> Result<PriorityClassSpec, ConvertError> {
    Ok(PriorityClassSpec {
        name: required_name("PriorityClass", &pc.metadata)?,
        value: pc.value.unwrap_or(0),
        global_default: pc.global_default.unwrap_or(false),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts() {
        let pc: PriorityClass = serde_yaml::from_str("metadata: {name: high}\nvalue: 1000\nglobalDefault: true\n").unwrap();
        assert_eq!(
            convert_priority_class(&pc).unwrap(),
            PriorityClassSpec { name: "high".into(), value: 1000, global_default: true }
        );
        let pc: PriorityClass = serde_yaml::from_str("metadata: {}\n").unwrap();
        assert_eq!(convert_priority_class(&pc).unwrap_err().field, "metadata.name");
    }
}
