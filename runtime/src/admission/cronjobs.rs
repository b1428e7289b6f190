//! `/cronjobs/validate` (Volcano master `pkg/webhooks/admission/cronjobs/validate/`), on CREATE
//! and UPDATE: the schedule is a standard cron expression without a `TZ`, the time zone (when
//! set) an IANA name other than `Local`, and the name leaves room for the Job name suffix (at most
//! 52 characters) and is a qualified name. The job template is not checked here: the Jobs it makes
//! go through `/jobs/validate` when they are created, as in Volcano.

use super::{names, Decision, Operation};
use crate::convert::cron::{check_time_zone, Schedule};
use crate::crd::CronJob;

/// A Job made by a CronJob is named `<cronjob>-<minutes since the epoch>`: 63 characters at most,
/// 11 of them the suffix.
const MAX_NAME: usize = 63 - 11;

/// `/cronjobs/validate`: every problem, joined with `"; "` as Volcano's `validateCronJob` does.
pub fn validate(op: Operation, c: &CronJob) -> Decision {
    if !matches!(op, Operation::Create | Operation::Update) {
        return Decision::deny("expect operation to be 'CREATE' or 'UPDATE'");
    }
    let mut errs = Vec::new();
    let spec = spec_problems(c);
    if !spec.trim().is_empty() {
        errs.push(spec.trim().to_string());
    }
    let name = c.metadata.name.as_deref().unwrap_or_default();
    if name.len() > MAX_NAME {
        errs.push(format!(
            "cronJob name must be no more than {MAX_NAME} characters to accommodate job name suffix (max 63 total)"
        ));
    } else {
        let problems = names::qualified_name(name);
        if !problems.is_empty() {
            errs.push(format!("invalid cronJob name {name:?}: {}", problems.join("; ")));
        }
    }
    if errs.is_empty() {
        Decision::allow()
    } else {
        Decision::deny(errs.join("; "))
    }
}

/// Volcano's `validateCronjobSpec`: its messages concatenated, each with the leading space
/// Volcano writes. A schedule that does not parse also says why (robfig's reason), after
/// Volcano's words.
fn spec_problems(c: &CronJob) -> String {
    let mut msg = String::new();
    let schedule = &c.spec.schedule;
    if schedule.is_empty() {
        msg.push_str(" schedule is required, but got empty");
    } else if schedule.contains("TZ") {
        msg.push_str(" schedule should not contain TZ or CRON_TZ, TZ should only be set in the timeZone field");
    } else if let Err(why) = Schedule::parse(schedule) {
        msg.push_str(&format!("schedule is not a valid cron expression: {why}"));
    }
    if let Some(tz) = &c.spec.time_zone {
        if let Err(why) = check_time_zone(tz) {
            msg.push_str(&why);
        }
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cron(name: &str, schedule: &str, tz: Option<&str>) -> CronJob {
        let mut c = CronJob::new(name, Default::default());
        c.spec.schedule = schedule.into();
        c.spec.time_zone = tz.map(String::from);
        c
    }

    #[test]
    fn a_good_cronjob_is_admitted_on_create_and_update() {
        for op in [Operation::Create, Operation::Update] {
            assert!(validate(op, &cron("nightly", "0 2 * * *", Some("Europe/Berlin"))).allowed);
            assert!(validate(op, &cron("hourly", "@hourly", None)).allowed);
        }
        assert_eq!(
            validate(Operation::Delete, &cron("x", "@hourly", None)).message,
            "expect operation to be 'CREATE' or 'UPDATE'"
        );
    }

    #[test]
    fn each_rule_refuses_with_volcanos_words() {
        for (c, want) in [
            (cron("empty", "", None), "schedule is required, but got empty"),
            (
                cron("tz", "CRON_TZ=UTC 0 * * * *", None),
                "schedule should not contain TZ or CRON_TZ, TZ should only be set in the timeZone field",
            ),
            (
                cron("bad", "0 25 * * *", None),
                "schedule is not a valid cron expression: end of hour range (25) above maximum (23)",
            ),
            (cron("six", "0 0 0 * * *", None), "schedule is not a valid cron expression: expected exactly 5 fields, found 6"),
            (
                cron("local", "@daily", Some("Local")),
                "timeZone can't be Local, and must be defined in https://www.iana.org/time-zones",
            ),
            (cron("mars", "@daily", Some("Mars/Olympus")), "invalid timeZone"),
            (cron("blank", "@daily", Some("")), "timeZone must be nil or non-empty string, got empty string"),
            (
                cron(&"a".repeat(53), "@daily", None),
                "cronJob name must be no more than 52 characters to accommodate job name suffix (max 63 total)",
            ),
            (cron("-bad-", "@daily", None), "invalid cronJob name \"-bad-\": name part must consist of alphanumeric characters"),
        ] {
            let d = validate(Operation::Create, &c);
            assert!(!d.allowed, "{:?} admitted", c.metadata.name);
            assert!(d.message.contains(want), "{:?}: {want:?} in {:?}", c.metadata.name, d.message);
            assert_eq!(d.message, d.message.trim(), "no stray spaces");
        }
    }

    #[test]
    fn several_problems_are_joined() {
        let d = validate(Operation::Update, &cron(&"b".repeat(60), "", Some("Local")));
        assert_eq!(
            d.message,
            "schedule is required, but got empty timeZone can't be Local, and must be defined in https://www.iana.org/time-zones; \
             cronJob name must be no more than 52 characters to accommodate job name suffix (max 63 total)"
        );
    }
}
