//! `/pods/validate` (Volcano master `pkg/webhooks/admission/pods/validate/`), on CREATE: a pod
//! for one of the webhook's schedulers carries at most one of the job disruption budget
//! annotations `volcano.sh/jdb-min-available` and `volcano.sh/jdb-max-unavailable`, as a
//! positive integer or a percentage from 1% to 99%.
//!
//! `/pods/mutate` (the admission conf's `resourceGroups`) is in [`super::resource_groups`].

use super::Decision;
use super::Operation;
use k8s_openapi::api::core::v1::Pod;

/// `volcano.sh/jdb-min-available`.
pub const JDB_MIN_AVAILABLE: &str = "volcano.sh/jdb-min-available";
/// `volcano.sh/jdb-max-unavailable`.
pub const JDB_MAX_UNAVAILABLE: &str = "volcano.sh/jdb-max-unavailable";

/// intstr's parse: a value that parses as an integer is an int, else a string.
fn int_or_percentage(key: &str, value: &str) -> Result<(), String> {
    if let Ok(n) = value.parse::<i32>() {
        return if n <= 0 { Err(format!("invalid value <{value:?}> for {key}, it must be a positive integer")) } else { Ok(()) };
    }
    let digits = value.replace('%', "");
    match digits.parse::<i64>() {
        Err(_) => Err(format!("invalid value strconv.Atoi: parsing {digits:?}: invalid syntax for {key}")),
        Ok(v) if v <= 0 || v >= 100 => {
            Err(format!("invalid value <{value:?}> for {key}, it must be a valid percentage which between 1% ~ 99%"))
        }
        Ok(_) => Ok(()),
    }
}

/// `/pods/validate`: `scheduler_names` are the webhook's `--scheduler-name`s; a pod for
/// another scheduler is admitted unchecked.
pub fn validate(op: Operation, pod: &Pod, scheduler_names: &[String]) -> Decision {
    if op != Operation::Create {
        return Decision::deny("expect operation to be 'CREATE'");
    }
    let scheduler = pod.spec.as_ref().and_then(|s| s.scheduler_name.as_deref()).unwrap_or("default-scheduler");
    if !scheduler_names.iter().any(|n| n == scheduler) {
        return Decision::allow();
    }
    let Some(ann) = pod.metadata.annotations.as_ref() else {
        return Decision::allow();
    };
    let mut found = 0;
    for key in [JDB_MIN_AVAILABLE, JDB_MAX_UNAVAILABLE] {
        if let Some(v) = ann.get(key) {
            found += 1;
            if let Err(e) = int_or_percentage(key, v) {
                return Decision::deny(e);
            }
        }
    }
    if found > 1 {
        return Decision::deny(format!(
            "not allow configure multiple annotations <[{JDB_MIN_AVAILABLE} {JDB_MAX_UNAVAILABLE}]> at same time"
        ));
    }
    Decision::allow()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(scheduler: &str, ann: &str) -> Pod {
        serde_yaml::from_str(&format!(
            "{{metadata: {{name: p, annotations: {ann}}}, spec: {{schedulerName: {scheduler}, containers: []}}}}"
        ))
        .unwrap()
    }

    #[test]
    fn jdb_annotations_follow_volcano() {
        let names = vec!["volcano".to_string()];
        let v = |p: &Pod| validate(Operation::Create, p, &names);
        assert!(v(&pod("volcano", "{volcano.sh/jdb-min-available: '2'}")).allowed);
        assert!(v(&pod("volcano", "{volcano.sh/jdb-max-unavailable: '30%'}")).allowed);
        assert_eq!(
            v(&pod("volcano", "{volcano.sh/jdb-min-available: '0'}")).message,
            "invalid value <\"0\"> for volcano.sh/jdb-min-available, it must be a positive integer"
        );
        assert_eq!(
            v(&pod("volcano", "{volcano.sh/jdb-max-unavailable: '100%'}")).message,
            "invalid value <\"100%\"> for volcano.sh/jdb-max-unavailable, it must be a valid percentage which between 1% ~ 99%"
        );
        assert_eq!(
            v(&pod("volcano", "{volcano.sh/jdb-min-available: '1', volcano.sh/jdb-max-unavailable: '1'}")).message,
            "not allow configure multiple annotations <[volcano.sh/jdb-min-available volcano.sh/jdb-max-unavailable]> at same time"
        );
        assert!(v(&pod("other", "{volcano.sh/jdb-min-available: '0'}")).allowed, "another scheduler's pod is not checked");
    }
}
