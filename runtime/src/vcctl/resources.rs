//! `--requests` / `--limits` of `vcctl job run` and `vsub`: `<resource>=<quantity>` pairs
//! separated by commas (Volcano's `util.PopulateResourceListV1`).

use crate::convert::quantity::to_milli;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use std::collections::BTreeMap;

/// The resource list of `spec` (`cpu=1000m,memory=100Mi`); an empty `spec` is no list (`None`),
/// as Volcano's. Quantities are kept as written.
///
/// Errors: a statement without exactly one `=` (Volcano's `invalid argument syntax <statement>,
/// expected <resource>=<value>`), or a value that is no Kubernetes quantity (naming the resource
/// and the value).
pub fn parse_resource_list(spec: &str) -> Result<Option<BTreeMap<String, Quantity>>, String> {
    if spec.is_empty() {
        return Ok(None);
    }
    let mut out = BTreeMap::new();
    for statement in spec.split(',') {
        let parts: Vec<&str> = statement.split('=').collect();
        let [name, value] = parts.as_slice() else {
            return Err(format!("invalid argument syntax {statement}, expected <resource>=<value>"));
        };
        to_milli(value).map_err(|e| format!("resource {name}: {e}"))?;
        out.insert(name.to_string(), Quantity(value.to_string()));
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_parse_and_bad_ones_are_named() {
        let l = parse_resource_list("cpu=1000m,memory=100Mi").unwrap().unwrap();
        assert_eq!(l["cpu"], Quantity("1000m".into()));
        assert_eq!(l["memory"], Quantity("100Mi".into()));
        assert_eq!(parse_resource_list("").unwrap(), None);
        assert_eq!(
            parse_resource_list("cpu=1,memory").unwrap_err(),
            "invalid argument syntax memory, expected <resource>=<value>"
        );
        assert_eq!(parse_resource_list("cpu=1=2").unwrap_err(), "invalid argument syntax cpu=1=2, expected <resource>=<value>");
        assert_eq!(parse_resource_list("cpu=lots").unwrap_err(), "resource cpu: invalid quantity \"lots\"");
    }
}
