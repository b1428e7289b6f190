//! `/queues/validate` and `/queues/mutate` (Volcano master `pkg/webhooks/admission/queues/`).
//!
//! Validate, on CREATE and UPDATE: quantities non-negative, `guarantee ≤ deserved ≤ capability`
//! per resource, `status.state` Open or Closed, the `volcano.sh/hierarchy` annotations (same
//! length as the weights, weights positive numbers, not a sub path of another Queue's); on
//! CREATE or a parent change the hierarchy (not its own parent, depth ≤ `--max-queue-depth`, the
//! parent exists and, when it has no children yet, no allocated pods); root's resources
//! immutable on UPDATE (`--enable-root-queue-protection`); the hierarchy's resources (capability
//! ≤ the nearest ancestor's, the siblings' guarantee and deserved sums ≤ the parent's, the
//! children's likewise) on CREATE and on a change of resources or parent. On DELETE: not
//! `default` or `root`, no child Queues, no allocated pods with
//! `--enable-queue-allocated-pods-check`. Mutate, on CREATE: `root/` and `1/` prefixed to the
//! hierarchy annotations, `reclaimable` ← true, `weight` 0 ← 1.

use super::resource::{format_with_type, VcResource};
use super::{name_of, pointer_key, queue_not_found, Decision, Operation, PatchOp, QueueIndex};
use crate::convert::quantity;
use crate::crd::Queue;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use std::collections::BTreeMap;

/// `volcano.sh/hierarchy`.
pub const HIERARCHY: &str = "volcano.sh/hierarchy";
/// `volcano.sh/hierarchy-weights`.
pub const HIERARCHY_WEIGHTS: &str = "volcano.sh/hierarchy-weights";

/// The webhook manager's queue flags.
#[derive(Clone, Debug)]
pub struct QueueRules {
    /// `--max-queue-depth` (Volcano: 5).
    pub max_depth: usize,
    /// `--enable-root-queue-protection` (Volcano: true).
    pub root_protection: bool,
    /// `--enable-queue-allocated-pods-check` (Volcano: false).
    pub allocated_pods_check: bool,
}

impl Default for QueueRules {
    fn default() -> Self {
        QueueRules { max_depth: 5, root_protection: true, allocated_pods_check: false }
    }
}

/// apimachinery's `field.Invalid(...).Error()` with a string value.
fn invalid(path: &str, value: &str, detail: &str) -> String {
    format!("{path}: Invalid value: {value:?}: {detail}")
}

/// `errs.ToAggregate().Error()`: one message alone, several as `[a, b]`.
fn aggregate(errs: Vec<String>) -> Option<String> {
    let mut seen: Vec<String> = Vec::new();
    for e in errs {
        if !seen.contains(&e) {
            seen.push(e);
        }
    }
    match seen.len() {
        0 => None,
        1 => seen.pop(),
        _ => Some(format!("[{}]", seen.join(", "))),
    }
}

type List = BTreeMap<String, Quantity>;

fn nonnegative(path: &str, list: &List, errs: &mut Vec<String>) {
    for (name, q) in list {
        let p = format!("{path}.{name}");
        match quantity::to_milli(&q.0) {
            Ok(v) if v < 0 => errs.push(invalid(&p, &q.0, "must be greater than or equal to 0")),
            Ok(_) => {}
            Err(e) => errs.push(invalid(&p, &q.0, &e.to_string())),
        }
    }
}

fn cmp(a: &Quantity, b: &Quantity) -> std::cmp::Ordering {
    let v = |q: &Quantity| quantity::to_milli(&q.0).unwrap_or(0);
    v(a).cmp(&v(b))
}

fn resource_errors(q: &Queue) -> Vec<String> {
    let spec = &q.spec;
    let base = "requestBody.spec";
    let mut errs = Vec::new();
    let empty = List::new();
    let capability = spec.capability.as_ref().unwrap_or(&empty);
    let deserved = spec.deserved.as_ref().unwrap_or(&empty);
    let guarantee = spec.guarantee.as_ref().and_then(|g| g.resource.as_ref()).unwrap_or(&empty);
    nonnegative(&format!("{base}.capability"), capability, &mut errs);
    nonnegative(&format!("{base}.deserved"), deserved, &mut errs);
    nonnegative(&format!("{base}.guarantee.resource"), guarantee, &mut errs);
    for (name, g) in guarantee {
        let path = format!("{base}.deserved.{name}");
        match deserved.get(name) {
            None => errs.push(invalid(&path, "<nil>", &format!("deserved[{name}] must be >= guarantee[{name}]={}", g.0))),
            Some(d) if cmp(d, g).is_lt() => {
                errs.push(invalid(&path, &d.0, &format!("deserved[{name}]={} must be >= guarantee[{name}]={}", d.0, g.0)))
            }
            Some(_) => {}
        }
    }
    for (name, d) in deserved {
        if let Some(c) = capability.get(name) {
            if cmp(d, c).is_gt() {
                let path = format!("{base}.deserved.{name}");
                errs.push(invalid(&path, &d.0, &format!("deserved[{name}]={} must be <= capability[{name}]={}", d.0, c.0)));
            }
        }
    }
    errs
}

fn state_errors(q: &Queue) -> Vec<String> {
    match q.status.as_ref().and_then(|s| s.state.as_deref()) {
        None | Some("") | Some("Open") | Some("Closed") => Vec::new(),
        Some(s) => vec![invalid("requestBody.spec.state", s, "queue state must be in [Open Closed]")],
    }
}

fn annotation<'a>(q: &'a Queue, key: &str) -> &'a str {
    q.metadata.annotations.as_ref().and_then(|a| a.get(key)).map(String::as_str).unwrap_or("")
}

/// Go's `strconv.ParseFloat` error.
fn parse_float(s: &str) -> Result<f64, String> {
    let ok = !s.is_empty() && s.chars().all(|c| c.is_ascii_digit() || "+-.eE".contains(c));
    match s.parse::<f64>() {
        Ok(v) if ok => Ok(v),
        _ => Err(format!("strconv.ParseFloat: parsing {s:?}: invalid syntax")),
    }
}

fn hierarchy_errors(q: &Queue, queues: &QueueIndex) -> Vec<String> {
    let path = "requestBody.metadata.annotations";
    let hierarchy = annotation(q, HIERARCHY);
    let weights = annotation(q, HIERARCHY_WEIGHTS);
    if hierarchy.is_empty() && weights.is_empty() {
        return Vec::new();
    }
    let paths: Vec<&str> = hierarchy.split('/').collect();
    let ws: Vec<&str> = weights.split('/').collect();
    if paths.len() != ws.len() {
        return vec![invalid(path, hierarchy, &format!("{HIERARCHY} must have the same length with {HIERARCHY_WEIGHTS}"))];
    }
    for w in ws {
        match parse_float(w) {
            Err(e) => return vec![invalid(path, weights, &format!("{w} in the {weights} is invalid number: {e}"))],
            Ok(v) if v <= 0.0 => return vec![invalid(path, weights, &format!("{w} in the {weights} must be larger than 0"))],
            Ok(_) => {}
        }
    }
    let me = name_of(&q.metadata);
    for other in queues.all() {
        let theirs = annotation(other, HIERARCHY);
        if !theirs.is_empty() && name_of(&other.metadata) != me && theirs.starts_with(&format!("{hierarchy}/")) {
            return vec![invalid(
                path,
                hierarchy,
                &format!("{hierarchy} is not allowed to be in the sub path of {theirs} of queue {}", name_of(&other.metadata)),
            )];
        }
    }
    Vec::new()
}

fn parent_of(q: &Queue) -> &str {
    q.spec.parent.as_deref().unwrap_or("")
}

fn allocated_pods(q: &Queue) -> i64 {
    q.status
        .as_ref()
        .and_then(|s| s.allocated.as_ref())
        .and_then(|a| a.get("pods"))
        .and_then(|p| quantity::to_units(&p.0).ok())
        .unwrap_or(0)
}

fn hierarchy_parent_error(q: &Queue, queues: &QueueIndex, rules: &QueueRules) -> Option<String> {
    let name = name_of(&q.metadata);
    let parent = parent_of(q);
    if parent.is_empty() || parent == "root" {
        return None;
    }
    if parent == name {
        return Some(format!("queue {name} cannot use itself as parent"));
    }
    let mut depth = 1;
    let mut p = parent.to_string();
    while !p.is_empty() && p != "root" {
        depth += 1;
        if depth > rules.max_depth {
            return Some(format!("queue {name} exceeds the maximum allowed depth of {}", rules.max_depth));
        }
        match queues.get(&p) {
            Some(pq) => p = parent_of(pq).to_string(),
            None => return Some(format!("failed to get parent queue {p} of queue {name}: {}", queue_not_found(&p))),
        }
    }
    let Some(pq) = queues.get(parent) else {
        return Some(format!("failed to get parent queue of queue {name}: {}", queue_not_found(parent)));
    };
    if queues.children(parent).next().is_none() {
        let n = allocated_pods(pq);
        if n != 0 {
            return Some(format!("queue {parent} cannot be the parent queue of queue {name} because it has allocated Pods: {n}"));
        }
    }
    None
}

fn capability(q: &Queue) -> VcResource {
    VcResource::of(q.spec.capability.as_ref())
}

fn nearest_ancestor_capability(q: &Queue, r: &str, queues: &QueueIndex) -> Option<f64> {
    let mut parent = parent_of(q).to_string();
    let mut hops = 0;
    while !parent.is_empty() && parent != "root" && hops <= queues.len() {
        let pq = queues.get(&parent)?;
        if pq.spec.capability.is_some() {
            let v = capability(pq).get(r);
            if v > 0.0 {
                return Some(v);
            }
        }
        parent = parent_of(pq).to_string();
        hops += 1;
    }
    None
}

fn subtree_max_capability(q: &Queue, r: &str, queues: &QueueIndex, depth: usize) -> f64 {
    if q.spec.capability.is_some() {
        let v = capability(q).get(r);
        if v > 0.0 {
            return v;
        }
    }
    if depth > queues.len() {
        return 0.0;
    }
    queues.children(name_of(&q.metadata)).map(|c| subtree_max_capability(c, r, queues, depth + 1)).fold(0.0, f64::max)
}

fn guarantee(q: &Queue) -> VcResource {
    VcResource::of(q.spec.guarantee.as_ref().and_then(|g| g.resource.as_ref()))
}

fn deserved(q: &Queue) -> VcResource {
    VcResource::of(q.spec.deserved.as_ref())
}

/// Sums `members`' guarantee and deserved one by one against `parent`'s, as Volcano does;
/// `who` starts the message (`parent queue p` for siblings, `queue p` for children).
fn sums_error<'a>(parent: &Queue, who: &str, members: impl Iterator<Item = &'a Queue>) -> Option<String> {
    let (pg, pd) = (guarantee(parent), deserved(parent));
    let (mut tg, mut td) = (VcResource::default(), VcResource::default());
    for m in members {
        tg.add(&guarantee(m));
        if pg.less_partly(&tg) {
            return Some(format!(
                "{who} validation failed: sum of children's guarantee ({tg}) exceeds parent's guarantee limit ({pg})"
            ));
        }
        td.add(&deserved(m));
        if pd.less_partly(&td) {
            return Some(format!(
                "{who} validation failed: sum of children's deserved ({td}) exceeds parent's deserved limit ({pd})"
            ));
        }
    }
    None
}

fn hierarchy_resources_error(q: &Queue, queues: &QueueIndex) -> Option<String> {
    let name = name_of(&q.metadata);
    let parent = parent_of(q);
    if !parent.is_empty() && parent != "root" {
        let Some(pq) = queues.get(parent) else {
            return Some(format!("parent queue {parent} not found: {}", queue_not_found(parent)));
        };
        if q.spec.capability.is_some() {
            let mine = capability(q);
            for r in mine.names() {
                if let Some(limit) = nearest_ancestor_capability(q, &r, queues) {
                    let v = mine.get(&r);
                    if v > limit {
                        return Some(format!(
                            "queue {name} capability[{r}]={} exceeds its ancestor's capability={}",
                            format_with_type(&r, v),
                            format_with_type(&r, limit)
                        ));
                    }
                }
            }
        }
        let siblings = queues.children(parent).filter(|s| name_of(&s.metadata) != name).chain(std::iter::once(q));
        if let Some(e) = sums_error(pq, &format!("parent queue {parent}"), siblings) {
            return Some(e);
        }
    }
    let children: Vec<&Queue> = queues.children(name).collect();
    if children.is_empty() {
        return None;
    }
    if q.spec.capability.is_some() {
        let mine = capability(q);
        for r in mine.names() {
            let v = mine.get(&r);
            let child_max = children.iter().map(|c| subtree_max_capability(c, &r, queues, 0)).fold(0.0, f64::max);
            if v < child_max {
                return Some(format!(
                    "queue {name} capability[{r}]={} is smaller than its descendants' max capability={}",
                    format_with_type(&r, v),
                    format_with_type(&r, child_max)
                ));
            }
        }
    }
    sums_error(q, &format!("queue {name}"), children.into_iter())
}

fn resources_changed(new: &Queue, old: &Queue) -> bool {
    new.spec.capability != old.spec.capability
        || new.spec.deserved != old.spec.deserved
        || new.spec.guarantee.as_ref().and_then(|g| g.resource.as_ref())
            != old.spec.guarantee.as_ref().and_then(|g| g.resource.as_ref())
}

/// `/queues/validate`: `queue` is the object (the old object on DELETE), `old` the old object
/// on UPDATE, `queues` the Queue cache (which may already hold `queue` on UPDATE).
pub fn validate(op: Operation, queue: &Queue, old: Option<&Queue>, queues: &QueueIndex, rules: &QueueRules) -> Decision {
    match op {
        Operation::Create | Operation::Update => {
            let mut errs = resource_errors(queue);
            errs.extend(state_errors(queue));
            errs.extend(hierarchy_errors(queue, queues));
            if let Some(e) = aggregate(errs) {
                return Decision::deny(e);
            }
            let old = if op == Operation::Update { old } else { None };
            if op == Operation::Create || old.is_some_and(|o| parent_of(o) != parent_of(queue)) {
                if let Some(e) = hierarchy_parent_error(queue, queues, rules) {
                    return Decision::deny(e);
                }
            }
            let name = name_of(&queue.metadata);
            if rules.root_protection && name == "root" {
                if let Some(o) = old {
                    if resources_changed(queue, o) {
                        return Decision::deny(
                            "root queue's resource attributes (capability, deserved, guarantee) cannot be modified",
                        );
                    }
                }
            }
            let needs = name != "root"
                && (op == Operation::Create
                    || old.is_some_and(|o| parent_of(o) != parent_of(queue) || resources_changed(queue, o)));
            if needs {
                if let Some(e) = hierarchy_resources_error(queue, queues) {
                    return Decision::deny(e);
                }
            }
            Decision::allow()
        }
        Operation::Delete => delete(name_of(&queue.metadata), queues, rules),
        Operation::Connect => {
            Decision::deny(format!("invalid operation `{}`, expect operation to be `CREATE`, `UPDATE` or `DELETE`", op.as_str()))
        }
    }
}

fn delete(name: &str, queues: &QueueIndex, rules: &QueueRules) -> Decision {
    if name == "default" || name == "root" {
        return Decision::deny(format!("`{name}` queue can not be deleted"));
    }
    let Some(q) = queues.get(name) else {
        return Decision::deny(queue_not_found(name));
    };
    if rules.allocated_pods_check {
        let n = allocated_pods(q);
        if n != 0 {
            return Decision::deny(format!("queue {name} cannot be deleted because it has allocated Pods: {n}"));
        }
    }
    let children: Vec<&str> = queues.children(name).map(|c| name_of(&c.metadata)).collect();
    if !children.is_empty() {
        return Decision::deny(format!(
            "queue {name} can not be deleted because it has {} child queues: {}",
            children.len(),
            children.join(", ")
        ));
    }
    Decision::allow()
}

/// `/queues/mutate` on CREATE (other operations are refused as Volcano does).
pub fn mutate(op: Operation, queue: &Queue) -> Decision {
    if op != Operation::Create {
        return Decision::deny(format!("invalid operation `{}`, expect operation to be `CREATE`", op.as_str()));
    }
    let mut patch = Vec::new();
    let hierarchy = annotation(queue, HIERARCHY);
    let weights = annotation(queue, HIERARCHY_WEIGHTS);
    if !hierarchy.is_empty() && !weights.is_empty() && !hierarchy.starts_with("root") {
        patch.push(PatchOp::add(format!("/metadata/annotations/{}", pointer_key(HIERARCHY)), format!("root/{hierarchy}")));
        patch.push(PatchOp::add(format!("/metadata/annotations/{}", pointer_key(HIERARCHY_WEIGHTS)), format!("1/{weights}")));
    }
    if queue.spec.reclaimable.is_none() {
        patch.push(PatchOp::add("/spec/reclaimable", true));
    }
    if queue.spec.weight.unwrap_or(0) == 0 {
        patch.push(PatchOp::add("/spec/weight", 1));
    }
    Decision::patched(patch)
}

#[cfg(test)]
mod tests;
