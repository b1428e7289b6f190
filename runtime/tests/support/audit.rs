//! The kube-apiserver's audit log (policy: level Metadata, stage `RequestReceived` omitted, so
//! one `ResponseComplete` line per finished request; long-running requests such as watches also
//! log `ResponseStarted`).

use super::Result;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

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
    object_ref: Option<RawObjectRef>,
    response_status: Option<RawStatus>,
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

impl AuditLog {
    /// Reads the log at `path`, keeping `ResponseComplete` and `Panic` events (one per finished
    /// request). A missing file is an empty log; a torn last line (being written) is skipped.
    /// Errors: unreadable file, or a malformed line other than the last.
    pub fn read(path: &Path) -> Result<AuditLog> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(format!("{}: {e}", path.display()).into()),
        };
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let mut events = Vec::with_capacity(lines.len());
        for (i, line) in lines.iter().enumerate() {
            let raw: RawEvent = match serde_json::from_str(line) {
                Ok(raw) => raw,
                Err(_) if i + 1 == lines.len() && !text.ends_with('\n') => break,
                Err(e) => return Err(format!("{} line {}: {e}", path.display(), i + 1).into()),
            };
            if raw.stage != "ResponseComplete" && raw.stage != "Panic" {
                continue;
            }
            let obj = raw.object_ref.unwrap_or_default();
            events.push(AuditEvent {
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
            });
        }
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
