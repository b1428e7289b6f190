//! The admission paths of vc-webhook-manager, which kind of webhook configuration serves each,
//! and which of them Basalt answers.

/// Whether a path is called by a mutating or a validating webhook configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A `MutatingWebhookConfiguration`.
    Mutating,
    /// A `ValidatingWebhookConfiguration`.
    Validating,
}

/// Every path Volcano master serves, and whether Basalt does (`false`: refused at start when
/// enabled, with the reason in [`unserved_reason`]).
pub const PATHS: [(&str, Kind, bool); 11] = [
    ("/jobs/mutate", Kind::Mutating, true),
    ("/jobs/validate", Kind::Validating, true),
    ("/podgroups/mutate", Kind::Mutating, true),
    ("/podgroups/validate", Kind::Validating, true),
    ("/queues/mutate", Kind::Mutating, true),
    ("/queues/validate", Kind::Validating, true),
    ("/pods/mutate", Kind::Mutating, true),
    ("/pods/validate", Kind::Validating, true),
    ("/hypernodes/validate", Kind::Validating, true),
    ("/cronjobs/validate", Kind::Validating, true),
    ("/jobflows/validate", Kind::Validating, false),
];

/// vc-webhook-manager's default `--enabled-admission`.
pub const DEFAULT_ENABLED: &str =
    "/jobs/mutate,/jobs/validate,/podgroups/mutate,/pods/validate,/pods/mutate,/queues/mutate,/queues/validate";

/// Why Basalt does not serve `path` yet.
pub fn unserved_reason(path: &str) -> &'static str {
    match path {
        "/jobflows/validate" => "Basalt has no JobFlow controller or CRD",
        _ => "not a vc-webhook-manager path",
    }
}

/// The kind of `path`, `None` for a path Volcano does not serve.
pub fn kind_of(path: &str) -> Option<Kind> {
    PATHS.iter().find(|(p, _, _)| *p == path).map(|(_, k, _)| *k)
}

/// The webhook configuration Volcano names for `path`: `volcano-admission-service-jobs-mutate`.
pub fn configuration_name(path: &str) -> String {
    format!("volcano-admission-service{}", path.replace('/', "-"))
}

/// Parses `--enabled-admission` (comma separated, spaces ignored).
///
/// Errors: an unknown path, or one Basalt does not serve, naming it and why.
pub fn parse_enabled(list: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for p in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match PATHS.iter().find(|(q, _, _)| *q == p) {
            None => {
                let known: Vec<&str> = PATHS.iter().map(|(q, _, _)| *q).collect();
                return Err(format!("--enabled-admission: unknown path {p:?} (Volcano's paths: {})", known.join(", ")));
            }
            Some((_, _, false)) => return Err(format!("--enabled-admission: {p} is not served: {}", unserved_reason(p))),
            Some(_) => {
                if !out.iter().any(|q: &String| q == p) {
                    out.push(p.to_string());
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_kinds_and_the_enabled_list() {
        assert_eq!(configuration_name("/jobs/mutate"), "volcano-admission-service-jobs-mutate");
        assert_eq!(kind_of("/queues/validate"), Some(Kind::Validating));
        assert_eq!(parse_enabled(DEFAULT_ENABLED).unwrap().len(), 7);
        assert_eq!(parse_enabled(" /jobs/mutate, /jobs/mutate ,").unwrap(), ["/jobs/mutate"]);
        assert!(parse_enabled("/jobs/mutat").unwrap_err().contains("unknown path \"/jobs/mutat\""));
        assert_eq!(parse_enabled("/cronjobs/validate").unwrap(), ["/cronjobs/validate"]);
        assert!(parse_enabled("/jobflows/validate").unwrap_err().contains("no JobFlow controller"));
    }
}
