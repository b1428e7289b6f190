//! One AdmissionReview v1 in, one out: the request decoded (kube's admission types), the object
//! decoded as the path's kind, the rule of [`crate::admission`] applied, and the answer with the
//! request's `uid`, Volcano's message on a denial and the JSON patch of a mutation. A body that
//! is not an AdmissionReview gets an invalid-request answer, never a crash; an object that does
//! not decode as its kind is denied with the decoding error, as Volcano's `schema.Decode*` does.

use crate::admission::{self, queues::QueueRules, resource_groups::AdmissionConf, Decision, Operation, QueueIndex};
use crate::crd::{CronJob, HyperNode, Job, PodGroup, Queue};
use k8s_openapi::api::core::v1::Pod;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview, Operation as KubeOp};
use kube::core::DynamicObject;
use serde::de::DeserializeOwned;
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, RwLock};

/// What the rules read besides the request.
pub struct Context {
    /// The Queue cache.
    pub queues: Arc<RwLock<QueueIndex>>,
    /// The queue flags.
    pub queue_rules: QueueRules,
    /// `--scheduler-name`s (the first is a Job's default scheduler).
    pub scheduler_names: Vec<String>,
    /// The admission conf (`resourceGroups` for `/pods/mutate`), replaced when its file changes.
    pub admission_conf: Arc<RwLock<AdmissionConf>>,
    /// `--feature-gates` `SchedulingGatesQueueAdmission`: `/pods/mutate` adds Volcano's
    /// scheduling gate to opted-in pods ([`admission::scheduling_gate`]).
    pub scheduling_gates_queue_admission: bool,
}

fn operation(op: &KubeOp) -> Operation {
    match op {
        KubeOp::Create => Operation::Create,
        KubeOp::Update => Operation::Update,
        KubeOp::Delete => Operation::Delete,
        KubeOp::Connect => Operation::Connect,
    }
}

/// Decodes a request's object as `T`, naming the kind on failure.
fn decode<T: DeserializeOwned>(obj: Option<&DynamicObject>, kind: &str) -> Result<T, String> {
    let obj = obj.ok_or_else(|| format!("the request has no {kind} object"))?;
    let v = serde_json::to_value(obj).map_err(|e| format!("cannot read the {kind}: {e}"))?;
    serde_json::from_value(v).map_err(|e| format!("cannot decode the {kind}: {e}"))
}

fn decided(d: Result<Decision, String>) -> Decision {
    d.unwrap_or_else(Decision::deny)
}

/// The decision for `req` on `path`. `namespace_annotations(ns)` reads a namespace's
/// annotations (for `/podgroups/mutate`; `None` when it cannot be read).
pub async fn decide<F, Fut>(
    path: &str,
    req: &AdmissionRequest<DynamicObject>,
    ctx: &Context,
    namespace_annotations: F,
) -> Decision
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = Option<BTreeMap<String, String>>>,
{
    let op = operation(&req.operation);
    let obj = req.object.as_ref();
    let old = req.old_object.as_ref();
    let read = || ctx.queues.read().unwrap_or_else(|e| e.into_inner());
    match path {
        "/jobs/mutate" => decided(decode::<Job>(obj, "Job").map(|j| {
            let name = ctx.scheduler_names.first().map(String::as_str).unwrap_or("volcano");
            admission::jobs::mutate(op, &j, name)
        })),
        "/jobs/validate" => decided((|| {
            let j: Job = decode(obj, "Job")?;
            let o: Option<Job> = if op == Operation::Update { Some(decode(old, "Job")?) } else { None };
            Ok(admission::jobs::validate(op, &j, o.as_ref(), &read()))
        })()),
        "/queues/mutate" => decided(decode::<Queue>(obj, "Queue").map(|q| admission::queues::mutate(op, &q))),
        "/queues/validate" => decided((|| {
            if op == Operation::Delete {
                let mut q = Queue::new(&req.name, Default::default());
                if let Ok(o) = decode::<Queue>(old, "Queue") {
                    q = o;
                }
                q.metadata.name = Some(req.name.clone());
                return Ok(admission::queues::validate(op, &q, None, &read(), &ctx.queue_rules));
            }
            let q: Queue = decode(obj, "Queue")?;
            let o: Option<Queue> = if op == Operation::Update { Some(decode(old, "Queue")?) } else { None };
            Ok(admission::queues::validate(op, &q, o.as_ref(), &read(), &ctx.queue_rules))
        })()),
        "/podgroups/mutate" => match decode::<PodGroup>(obj, "PodGroup") {
            Err(e) => Decision::deny(e),
            Ok(pg) => {
                let ns = req.namespace.clone().or_else(|| pg.metadata.namespace.clone()).unwrap_or_default();
                let needs = op == Operation::Create && pg.spec.queue.as_deref() == Some("default");
                let ann = if needs { namespace_annotations(ns).await } else { None };
                admission::podgroups::mutate(op, &pg, ann.as_ref())
            }
        },
        "/podgroups/validate" => {
            decided(decode::<PodGroup>(obj, "PodGroup").map(|pg| admission::podgroups::validate(op, &pg, &read())))
        }
        "/pods/validate" => decided(decode::<Pod>(obj, "Pod").map(|p| admission::pods::validate(op, &p, &ctx.scheduler_names))),
        "/pods/mutate" => decided(decode::<Pod>(obj, "Pod").map(|p| {
            let conf = ctx.admission_conf.read().unwrap_or_else(|e| e.into_inner());
            let groups = admission::resource_groups::mutate(op, &p, req.namespace.as_deref().unwrap_or_default(), &conf);
            admission::scheduling_gate::mutate(op, &p, groups, ctx.scheduling_gates_queue_admission)
        })),
        "/hypernodes/validate" => match op {
            Operation::Create | Operation::Update => {
                decided(decode::<HyperNode>(obj, "HyperNode").map(|h| admission::hypernodes::validate(&h)))
            }
            _ => Decision::allow(),
        },
        "/cronjobs/validate" => decided(decode::<CronJob>(obj, "CronJob").map(|c| admission::cronjobs::validate(op, &c))),
        other => Decision::deny(format!("no admission rule at {other}")),
    }
}

/// The answer to `body` on `path`: the AdmissionReview to send back (JSON).
pub async fn answer<F, Fut>(path: &str, body: &[u8], ctx: &Context, namespace_annotations: F) -> Vec<u8>
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = Option<BTreeMap<String, String>>>,
{
    let review: AdmissionReview<DynamicObject> = match serde_json::from_slice(body) {
        Ok(r) => r,
        Err(e) => return invalid(&format!("cannot decode the AdmissionReview: {e}")),
    };
    let req: AdmissionRequest<DynamicObject> = match review.try_into() {
        Ok(r) => r,
        Err(_) => return invalid("the AdmissionReview has no request"),
    };
    let d = decide(path, &req, ctx, namespace_annotations).await;
    tracing::debug!(path, uid = req.uid, allowed = d.allowed, "admission: {} {} {}", req.operation_str(), req.name, d.message);
    let mut resp = AdmissionResponse::from(&req);
    if !d.allowed {
        resp = resp.deny(d.message);
    } else if !d.patch.is_empty() {
        let patch = serde_json::to_value(&d.patch).and_then(serde_json::from_value::<json_patch::Patch>);
        match patch.map(|p| resp.clone().with_patch(p)) {
            Ok(Ok(r)) => resp = r,
            _ => resp = resp.deny("cannot encode the mutation's patch"),
        }
    }
    encode(&resp.into_review())
}

/// The review as JSON, with `response.patch` as the base64 string Kubernetes decodes a
/// `[]byte` from (kube's type writes an array of numbers).
fn encode(review: &AdmissionReview<DynamicObject>) -> Vec<u8> {
    use base64::Engine;
    let mut v = serde_json::to_value(review).unwrap_or_default();
    if let Some(p) = v.pointer_mut("/response/patch") {
        if let Some(bytes) = p.as_array().map(|a| a.iter().filter_map(|b| b.as_u64()).map(|b| b as u8).collect::<Vec<u8>>()) {
            *p = serde_json::Value::String(base64::engine::general_purpose::STANDARD.encode(bytes));
        }
    }
    serde_json::to_vec(&v).unwrap_or_default()
}

fn invalid(reason: &str) -> Vec<u8> {
    tracing::warn!("admission: {reason}");
    encode(&AdmissionResponse::invalid(reason).into_review())
}

trait OpStr {
    fn operation_str(&self) -> &'static str;
}

impl OpStr for AdmissionRequest<DynamicObject> {
    fn operation_str(&self) -> &'static str {
        operation(&self.operation).as_str()
    }
}

#[cfg(test)]
mod tests;
