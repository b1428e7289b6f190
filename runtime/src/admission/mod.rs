//! Volcano's admission rules (vc-webhook-manager, `pkg/webhooks/admission/*` of Volcano master;
//! volcano-behaviour.md §6) as pure functions: a decoded object (and the old one on update) plus
//! what the rule reads (the Queues, the namespace's annotations, the flags) → a [`Decision`]:
//! allowed or denied with Volcano's message, and the JSON patch of a mutation. No I/O: the
//! webhook manager ([`crate::webhooks`]) decodes AdmissionReviews, keeps the Queue cache and
//! answers; the controller may run the same job rules on a Job the webhook never saw.
//!
//! One file per resource, each with its validating and mutating rules: [`jobs`], [`queues`],
//! [`podgroups`], [`pods`] (with the admission conf's [`resource_groups`] for `/pods/mutate`),
//! [`hypernodes`], [`cronjobs`]; the name checks of apimachinery in [`names`].

pub mod cronjobs;
pub mod hypernodes;
pub mod jobs;
pub mod names;
pub mod podgroups;
pub mod pods;
pub mod queues;
pub mod resource;
pub mod resource_groups;
pub mod scheduling_gate;

use crate::crd::Queue;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The operation an AdmissionReview asks about (`request.operation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// `CREATE`.
    Create,
    /// `UPDATE`.
    Update,
    /// `DELETE`.
    Delete,
    /// `CONNECT`.
    Connect,
}

impl Operation {
    /// The API's spelling (`CREATE`, …), as Volcano's messages print it.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
            Operation::Connect => "CONNECT",
        }
    }
}

/// One RFC 6902 operation of a mutation's patch (`op` is `add` or `replace`; `path` a JSON
/// pointer with `/` in keys escaped as `~1`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PatchOp {
    /// `add` or `replace`.
    pub op: &'static str,
    /// The JSON pointer.
    pub path: String,
    /// The value.
    pub value: serde_json::Value,
}

impl PatchOp {
    /// An `add` of `value` at `path`.
    pub fn add(path: impl Into<String>, value: impl Into<serde_json::Value>) -> Self {
        PatchOp { op: "add", path: path.into(), value: value.into() }
    }
}

/// Escapes a map key for a JSON pointer (RFC 6901: `~` → `~0`, `/` → `~1`).
pub fn pointer_key(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// What a rule decides about one request.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Decision {
    /// Whether the object is admitted.
    pub allowed: bool,
    /// Why it is refused (Volcano's words); empty when allowed.
    pub message: String,
    /// The mutation, empty for none (and for every validating rule).
    pub patch: Vec<PatchOp>,
}

impl Decision {
    /// Admitted unchanged.
    pub fn allow() -> Self {
        Decision { allowed: true, ..Decision::default() }
    }

    /// Refused with `message`.
    pub fn deny(message: impl Into<String>) -> Self {
        Decision { allowed: false, message: message.into(), patch: Vec::new() }
    }

    /// Admitted with `patch` applied.
    pub fn patched(patch: Vec<PatchOp>) -> Self {
        Decision { allowed: true, message: String::new(), patch }
    }
}

/// The Queues the rules read: Volcano's Queue lister with its parent index. The webhook
/// manager keeps it from a watch; tests build it from a list.
#[derive(Clone, Debug, Default)]
pub struct QueueIndex {
    by_name: BTreeMap<String, Queue>,
    /// `spec.parent` → the names of its children (Volcano's parent indexer), so a request's
    /// child lookups do not scan every Queue.
    by_parent: BTreeMap<String, BTreeSet<String>>,
}

impl QueueIndex {
    /// An index of `queues` (a later one of the same name replaces an earlier one).
    pub fn new(queues: impl IntoIterator<Item = Queue>) -> Self {
        let mut ix = QueueIndex::default();
        for q in queues {
            ix.upsert(q);
        }
        ix
    }

    /// Adds or replaces a Queue (a watch's `Apply`).
    pub fn upsert(&mut self, q: Queue) {
        if let Some(name) = q.metadata.name.clone() {
            self.remove(&name);
            if let Some(parent) = q.spec.parent.clone() {
                self.by_parent.entry(parent).or_default().insert(name.clone());
            }
            self.by_name.insert(name, q);
        }
    }

    /// Removes a Queue (a watch's `Delete`).
    pub fn remove(&mut self, name: &str) {
        let Some(old) = self.by_name.remove(name) else { return };
        if let Some(parent) = old.spec.parent.as_deref() {
            if let Some(children) = self.by_parent.get_mut(parent) {
                children.remove(name);
                if children.is_empty() {
                    self.by_parent.remove(parent);
                }
            }
        }
    }

    /// The Queue named `name`.
    pub fn get(&self, name: &str) -> Option<&Queue> {
        self.by_name.get(name)
    }

    /// Every Queue, by name.
    pub fn all(&self) -> impl Iterator<Item = &Queue> {
        self.by_name.values()
    }

    /// The Queues whose `spec.parent` is `parent` (Volcano's `GetQueuesByParent`: a Queue
    /// without a parent is nobody's child, not even root's), by name.
    pub fn children<'a>(&'a self, parent: &'a str) -> impl Iterator<Item = &'a Queue> + 'a {
        self.by_parent.get(parent).into_iter().flatten().filter_map(|name| self.by_name.get(name))
    }

    /// How many Queues there are.
    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }
}

/// What a Queue lookup error says in Volcano (client-go's NotFound: `queue.scheduling.volcano.sh
/// "x" not found`).
pub fn queue_not_found(name: &str) -> String {
    format!("queue.scheduling.volcano.sh \"{name}\" not found")
}

/// The name of an object, or `""`.
pub(crate) fn name_of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> &str {
    meta.name.as_deref().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(name: &str, parent: Option<&str>) -> Queue {
        let mut q = Queue::new(name, Default::default());
        q.spec.parent = parent.map(String::from);
        q
    }

    #[test]
    fn the_parent_index_follows_upserts_moves_and_deletes() {
        let mut ix = QueueIndex::new([q("root", None), q("a", Some("root")), q("b", Some("root")), q("a1", Some("a"))]);
        let names = |ix: &QueueIndex, p: &str| ix.children(p).map(|c| c.metadata.name.clone().unwrap()).collect::<Vec<_>>();
        assert_eq!(names(&ix, "root"), ["a", "b"]);
        assert_eq!(names(&ix, "a"), ["a1"]);
        ix.upsert(q("a1", Some("b")));
        assert!(names(&ix, "a").is_empty(), "moved away");
        assert_eq!(names(&ix, "b"), ["a1"]);
        ix.remove("a1");
        assert!(names(&ix, "b").is_empty());
        assert!(names(&ix, "nobody").is_empty());
        assert_eq!(ix.len(), 3);
    }
}
