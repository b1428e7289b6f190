//! The kube-apiserver's audit log (policy: level Metadata, stage `RequestReceived` omitted, so
//! one `ResponseComplete` line per finished request; long-running requests such as watches also
//! log `ResponseStarted`): the one reader of the tests and of the live bench
//! (`examples/live_bench`).
//!
//! The log is `audit.log` plus the files kube-apiserver rotated it into (`audit-<time>.log`, when
//! it passes `--audit-log-maxsize`), read in that order, line by line: [`stream`] hands over one
//! finished request at a time without holding the log (50,000 pods make a few hundred thousand
//! lines), [`AuditLog::read`] collects them.

use super::Result;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// The fields of one `audit.k8s.io/v1` Event that tests look at.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuditEvent {
    /// `stage`: `ResponseStarted`, `ResponseComplete` or `Panic`.
    pub stage: String,
    /// `verb`: `create`, `get`, `list`, `watch`, `update`, `patch`, `delete`, ….
    pub verb: String,
    /// `user.username`, e.g. `system:serviceaccount:volcano-system:volcano-scheduler`.
    pub user: String,
    /// `requestURI` (path and query).
    pub request_uri: String,
    /// `objectRef.apiGroup` (empty for the core group).
    pub api_group: String,
    /// `objectRef.resource`, e.g. `pods`; empty for non-resource URLs (`/readyz`).
    pub resource: String,
    /// `objectRef.subresource`, e.g. `binding`, `status`; empty if none.
    pub subresource: String,
    /// `objectRef.namespace`; empty for cluster-scoped or all-namespace requests.
    pub namespace: String,
    /// `objectRef.name`; empty for collection requests.
    pub name: String,
    /// `responseStatus.code` (HTTP status); 0 when absent.
    pub code: u16,
    /// `userAgent` (`basalt scheduler` sends `basalt-scheduler/VERSION (IDENTITY)`).
    pub user_agent: String,
    /// `stageTimestamp` (when the response completed), microseconds since the Unix epoch;
    /// `None` when absent or unreadable.
    pub stage_time_us: Option<i64>,
}

impl AuditEvent {
    /// The request finished with a 2xx answer.
    pub fn succeeded(&self) -> bool {
        (200..300).contains(&self.code)
    }

    /// A `pods/binding` create (POST `/api/v1/namespaces/{ns}/pods/{pod}/binding`), or the
    /// legacy POST `/api/v1/namespaces/{ns}/bindings` (resource `bindings`, name = the pod).
    pub fn is_binding(&self) -> bool {
        self.verb == "create"
            && self.api_group.is_empty()
            && ((self.resource == "pods" && self.subresource == "binding") || self.resource == "bindings")
    }
}

/// Successful and failed binding requests for one pod.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BindingCounts {
    /// Bindings answered 2xx (the pod was bound by this request).
    pub succeeded: usize,
    /// Bindings answered otherwise (409 already assigned, 403, 404, …).
    pub failed: usize,
}

/// Finished requests from an audit log, in log order.
#[derive(Clone, Debug, Default)]
pub struct AuditLog {
    events: Vec<AuditEvent>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct RawEvent {
    stage: String,
    verb: String,
    #[serde(rename = "requestURI")]
    request_uri: String,
    user: RawUser,
    user_agent: String,
    object_ref: Option<RawObjectRef>,
    response_status: Option<RawStatus>,
    stage_timestamp: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawUser {
    username: String,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct RawObjectRef {
    api_group: String,
    resource: String,
    subresource: String,
    namespace: String,
    name: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawStatus {
    code: u16,
}

/// The audit log files of a log at `path` (`dir/audit.log`): the rotated `audit-<time>.log`
/// files beside it in name order (oldest first), then `path` itself (missing files left out).
/// Errors: the folder cannot be read.
pub fn log_files(path: &Path) -> Result<Vec<PathBuf>> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("audit");
    let ext = path.extension().and_then(|s| s.to_str()).unwrap_or("log");
    let mut files: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                name.starts_with(&format!("{stem}-")) && name.ends_with(&format!(".{ext}"))
            })
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(format!("{}: {e}", dir.display()).into()),
    };
    files.sort();
    if path.exists() {
        files.push(path.to_path_buf());
    }
    Ok(files)
}

/// Streams the finished requests (`ResponseComplete` and `Panic` events) of the log at `path`
/// and its rotated files ([`log_files`]) to `each`, in log order. Only lines that contain one of
/// `needles` are parsed (an empty list parses every line): a cheap filter for a big log. A torn
/// last line of a file (being written) is skipped.
///
/// Errors: a file cannot be read, or a line other than a file's last is not an audit event
/// (file and line named).
pub fn stream(path: &Path, needles: &[&str], mut each: impl FnMut(AuditEvent)) -> Result<()> {
    for file in log_files(path)? {
        let f = std::fs::File::open(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let mut torn: Option<String> = None;
        for (i, line) in std::io::BufReader::new(f).lines().enumerate() {
            let line = line.map_err(|e| format!("{}: {e}", file.display()))?;
            if let Some(e) = torn.take() {
                return Err(e.into());
            }
            if line.trim().is_empty() || !(needles.is_empty() || needles.iter().any(|n| line.contains(n))) {
                continue;
            }
            let raw: RawEvent = match serde_json::from_str(&line) {
                Ok(raw) => raw,
                Err(e) => {
                    // Only a file's last line may be torn: fail if another line follows.
                    torn = Some(format!("{} line {}: {e}", file.display(), i + 1));
                    continue;
                }
            };
            if raw.stage != "ResponseComplete" && raw.stage != "Panic" {
                continue;
            }
            let obj = raw.object_ref.unwrap_or_default();
            each(AuditEvent {
                stage: raw.stage,
                verb: raw.verb,
                user: raw.user.username,
                request_uri: raw.request_uri,
                api_group: obj.api_group,
                resource: obj.resource,
                subresource: obj.subresource,
                namespace: obj.namespace,
                name: obj.name,
                code: raw.response_status.map(|s| s.code).unwrap_or(0),
                user_agent: raw.user_agent,
                stage_time_us: raw.stage_timestamp.parse::<k8s_openapi::jiff::Timestamp>().ok().map(|t| t.as_microsecond()),
            });
        }
    }
    Ok(())
}

impl AuditLog {
    /// Reads the log at `path` and its rotated files ([`stream`]), keeping every finished
    /// request. A missing log is empty. Errors: as [`stream`].
    pub fn read(path: &Path) -> Result<AuditLog> {
        let mut events = Vec::new();
        stream(path, &[], |e| events.push(e))?;
        Ok(AuditLog { events })
    }

    /// Every finished request, in log order.
    pub fn events(&self) -> &[AuditEvent] {
        &self.events
    }

    /// Only the requests made by `user` (`user.username`).
    pub fn by_user(&self, user: &str) -> AuditLog {
        AuditLog { events: self.events.iter().filter(|e| e.user == user).cloned().collect() }
    }

    /// Only the requests for which `keep` is true.
    pub fn filter(&self, keep: impl Fn(&AuditEvent) -> bool) -> AuditLog {
        AuditLog { events: self.events.iter().filter(|e| keep(e)).cloned().collect() }
    }

    /// The requests the server refused with 403 Forbidden, as `"<verb> <request URI>"`, in log
    /// order: what a component asked for outside its RBAC role.
    pub fn refused(&self) -> Vec<String> {
        self.events.iter().filter(|e| e.code == 403).map(|e| format!("{} {}", e.verb, e.request_uri)).collect()
    }

    /// Binding requests per pod, keyed `(namespace, pod name)`.
    pub fn binding_counts(&self) -> BTreeMap<(String, String), BindingCounts> {
        let mut counts: BTreeMap<(String, String), BindingCounts> = BTreeMap::new();
        for e in self.events.iter().filter(|e| e.is_binding()) {
            let c = counts.entry((e.namespace.clone(), e.name.clone())).or_default();
            if e.succeeded() {
                c.succeeded += 1;
            } else {
                c.failed += 1;
            }
        }
        counts
    }

    /// Binding requests for the pod `namespace/pod`.
    pub fn bindings_of(&self, namespace: &str, pod: &str) -> BindingCounts {
        self.binding_counts().remove(&(namespace.to_string(), pod.to_string())).unwrap_or_default()
    }
}
