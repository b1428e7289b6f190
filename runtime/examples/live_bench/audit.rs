//! Counting a namespace's binding requests in the API server's audit log (level Metadata, one
//! `ResponseComplete` line per request, kubernetes-api.md §9), read with the tests' reader
//! (`tests/support/audit.rs`: rotated files, one line at a time; at 50,000 pods the log holds a
//! few hundred thousand lines).

use crate::support;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// What the audit log says about the bindings of one namespace.
#[derive(Clone, Debug, Default, Serialize)]
pub struct BindingAudit {
    /// `pods/binding` creates answered 2xx.
    pub successes: u64,
    /// `pods/binding` creates answered otherwise (409 already assigned, 404, 5xx, …).
    pub failures: u64,
    /// Failures by HTTP code.
    pub failure_codes: BTreeMap<u16, u64>,
    /// Pods of the namespace (as created) without exactly one successful binding.
    pub pods_not_bound_once: u64,
    /// Server time from the first successful binding's response to the last one's, seconds
    /// (`stageTimestamp`, microseconds).
    pub server_first_to_last_s: f64,
    /// Every request by `user` in the namespace or cluster-wide, by `verb resource[/subresource]`
    /// (what the scheduler asked of the server besides bindings).
    pub requests_by_user: BTreeMap<String, u64>,
    /// The part of `requests_by_user` (bindings excluded) that the server finished between the
    /// first and the last successful binding of the namespace: the scheduler's other writes and
    /// reads that competed with its bindings for the server.
    pub requests_during_binds: BTreeMap<String, u64>,
}

/// Reads the audit log of the server in `dir` (`dir/audit.log` and its rotated files) and counts
/// the bindings of pods in `namespace` (`pods` = the pod names created there) and every finished
/// request `user` made in `namespace` or cluster-wide.
///
/// Errors: a file cannot be read, or a line other than a file's torn last one is not JSON
/// (file and line named).
pub fn bindings(dir: &Path, namespace: &str, pods: &[String], user: &str) -> Result<BindingAudit, String> {
    let mut per_pod: HashMap<String, u32> = pods.iter().map(|p| (p.clone(), 0)).collect();
    let mut out = BindingAudit::default();
    let (mut first, mut last): (Option<i64>, Option<i64>) = (None, None);
    // The user's other requests with their finish time, sorted into the window at the end.
    let mut others: Vec<(i64, String)> = Vec::new();
    // Only the user's requests and bindings are parsed.
    support::stream_audit(&dir.join("audit.log"), &[user, "\"binding\""], |ev| {
        if ev.namespace != namespace && !(ev.namespace.is_empty() && ev.user == user) {
            return;
        }
        if ev.user == user {
            let what =
                if ev.subresource.is_empty() { ev.resource.clone() } else { format!("{}/{}", ev.resource, ev.subresource) };
            let what = if what.is_empty() { "non-resource".to_string() } else { what };
            let key = format!("{} {what}", ev.verb);
            if !ev.is_binding() {
                if let Some(us) = ev.stage_time_us {
                    others.push((us, key.clone()));
                }
            }
            *out.requests_by_user.entry(key).or_default() += 1;
        }
        if !ev.is_binding() || ev.resource != "pods" || ev.namespace != namespace {
            return;
        }
        if ev.succeeded() {
            out.successes += 1;
            *per_pod.entry(ev.name).or_default() += 1;
            if let Some(us) = ev.stage_time_us {
                first = Some(first.map_or(us, |f| f.min(us)));
                last = Some(last.map_or(us, |l| l.max(us)));
            }
        } else {
            out.failures += 1;
            *out.failure_codes.entry(ev.code).or_default() += 1;
        }
    })
    .map_err(|e| e.to_string())?;
    out.pods_not_bound_once = per_pod.values().filter(|&&n| n != 1).count() as u64;
    if let (Some(f), Some(l)) = (first, last) {
        out.server_first_to_last_s = (l - f) as f64 / 1e6;
        for (us, key) in others {
            if (f..=l).contains(&us) {
                *out.requests_during_binds.entry(key).or_default() += 1;
            }
        }
    }
    Ok(out)
}
