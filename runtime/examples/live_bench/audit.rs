//! Counting a namespace's binding requests in the API server's audit log (level Metadata, one
//! `ResponseComplete` line per request, kubernetes-api.md §9), streamed line by line: at 50,000
//! pods the log holds a few hundred thousand lines, over several rotated files.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::io::BufRead;
use std::path::{Path, PathBuf};

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
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Line {
    stage: String,
    verb: String,
    user: User,
    object_ref: Option<ObjectRef>,
    response_status: Option<Status>,
    stage_timestamp: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct User {
    username: String,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct ObjectRef {
    api_group: String,
    resource: String,
    subresource: String,
    namespace: String,
    name: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Status {
    code: u16,
}

/// The audit log files of the server in `dir`: `audit.log` and the files the server rotated it
/// into (`audit-<time>.log`: kube-apiserver rotates at 100 MB when `--audit-log-maxsize` is not
/// set, and keeps every old file), in name order. Errors: the folder cannot be read.
pub fn log_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name == "audit.log" || (name.starts_with("audit-") && name.ends_with(".log"))
        })
        .collect();
    files.sort();
    Ok(files)
}

/// Reads the audit log files of the server in `dir` ([`log_files`]) and counts the bindings of
/// pods in `namespace` (`pods` = the pod names created there) and every finished request `user`
/// made in `namespace` or cluster-wide.
///
/// Errors: a file cannot be read, or a line other than a file's torn last one is not JSON
/// (file and line named).
pub fn bindings(dir: &Path, namespace: &str, pods: &[String], user: &str) -> Result<BindingAudit, String> {
    let mut per_pod: HashMap<String, u32> = pods.iter().map(|p| (p.clone(), 0)).collect();
    let mut out = BindingAudit::default();
    let (mut first, mut last): (Option<i128>, Option<i128>) = (None, None);
    for path in log_files(dir)? {
        read_file(&path, namespace, user, &mut per_pod, &mut out, &mut first, &mut last)?;
    }
    out.pods_not_bound_once = per_pod.values().filter(|&&n| n != 1).count() as u64;
    if let (Some(f), Some(l)) = (first, last) {
        out.server_first_to_last_s = (l - f) as f64 / 1e6;
    }
    Ok(out)
}

fn read_file(
    path: &Path,
    namespace: &str,
    user: &str,
    per_pod: &mut HashMap<String, u32>,
    out: &mut BindingAudit,
    first: &mut Option<i128>,
    last: &mut Option<i128>,
) -> Result<(), String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut pending_error: Option<String> = None;
    for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| format!("{}: {e}", path.display()))?;
        if let Some(e) = pending_error.take() {
            return Err(e);
        }
        if !line.contains(user) && !line.contains("\"binding\"") {
            continue;
        }
        let ev: Line = match serde_json::from_str(&line) {
            Ok(ev) => ev,
            Err(e) => {
                // Only the last line may be torn (being written); remember and fail if more follow.
                pending_error = Some(format!("{} line {}: {e}", path.display(), i + 1));
                continue;
            }
        };
        if ev.stage != "ResponseComplete" && ev.stage != "Panic" {
            continue;
        }
        let obj = ev.object_ref.unwrap_or_default();
        if obj.namespace != namespace && !(obj.namespace.is_empty() && ev.user.username == user) {
            continue;
        }
        if ev.user.username == user {
            let what =
                if obj.subresource.is_empty() { obj.resource.clone() } else { format!("{}/{}", obj.resource, obj.subresource) };
            let what = if what.is_empty() { "non-resource".to_string() } else { what };
            *out.requests_by_user.entry(format!("{} {what}", ev.verb)).or_default() += 1;
        }
        let binding = ev.verb == "create" && obj.api_group.is_empty() && obj.resource == "pods" && obj.subresource == "binding";
        if !binding || obj.namespace != namespace {
            continue;
        }
        let code = ev.response_status.map(|s| s.code).unwrap_or(0);
        if (200..300).contains(&code) {
            out.successes += 1;
            *per_pod.entry(obj.name).or_default() += 1;
            if let Ok(t) = ev.stage_timestamp.parse::<k8s_openapi::jiff::Timestamp>() {
                let us = t.as_microsecond() as i128;
                *first = Some(first.map_or(us, |f| f.min(us)));
                *last = Some(last.map_or(us, |l| l.max(us)));
            }
        } else {
            out.failures += 1;
            *out.failure_codes.entry(code).or_default() += 1;
        }
    }
    Ok(())
}
