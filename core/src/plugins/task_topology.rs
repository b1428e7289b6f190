//! `task-topology` (volcano-behaviour.md §3 task-topology; Volcano `plugins/task-topology`):
//! a job's PodGroup annotations group its tasks (pod annotation, else label,
//! `volcano.sh/task-spec`) into buckets meant to share a node.
//!
//! Annotations (each: groups split by `;`, task names by `,`):
//! `volcano.sh/task-topology-affinity` (`ps,worker;chief`: `ps` with `worker`, `chief` with
//! itself), `volcano.sh/task-topology-anti-affinity` (same syntax, apart), and
//! `volcano.sh/task-topology-task-order` (`ps,worker`: `ps` placed first). A name that is not a
//! task of the job (the second-to-last `-` part of a pod name, as the Job controller names pods
//! `<job>-<task>-<index>`) or that repeats within a group makes the plugin ignore the job's
//! topology, as Volcano does; Basalt also records a Warning event `InvalidTaskTopology` on the
//! PodGroup naming the annotation and the task.
//!
//! At open, for every job with a pending task and a valid topology: tasks whose role appears in
//! a rule are bucketed; bound tasks first (one bucket per node, by node name), then the others
//! by the annotation's task order, then by rule strength (self anti-affinity 4, inter affinity
//! 3, self affinity 2, inter anti-affinity 1), then by pod name. Each joins the existing bucket
//! it has the highest affinity with (+1 per affine task in it, −1 per anti-affine one; ties to
//! the bucket with the smaller request score, cpu milli + memory MiB + other dimensions), or a
//! new bucket when that best affinity is negative or there is no bucket yet.
//!
//! - TaskOrder: tasks in a bucket before tasks outside one; within a job, bigger buckets (by
//!   unplaced tasks) first, then older buckets, and within a bucket the task order annotation,
//!   then rule strength.
//! - NodeOrder: for a bucketed task on node `n`: 0 if the task does not fit `n`'s idle +
//!   releasing resources; else the bucket's tasks already placed on `n`, minus the session's
//!   placed tasks on `n` it is anti-affine with, plus the bucket's unplaced tasks, minus one per
//!   other unplaced task that must be left out for the bucket's request to fit `n`; times
//!   `task-topology.weight` (1) × 100 / the largest bucket's size at open.
//! - AllocateFunc: a placed task counts on its node, leaves its bucket's unplaced tasks.
//!   Volcano registers no DeallocateFunc, so a discarded placement still counts, as there.
//!
//! Where Volcano takes the bucket's tasks out in map (random) order to make the request fit,
//! Basalt takes them in bucket order, one of Volcano's possible outcomes, deterministically.

use super::k8s::PodCtx;
use crate::conf::{ArgKind, ArgSpec, Arguments};
use crate::decision::Event;
use crate::intern::Sym;
use crate::resource::MEMORY;
use crate::session::node_view::NodeView;
use crate::session::notes::CloseNotes;
use crate::session::tables::{JobIdx, NodeIdx, TaskIdx, TaskStatus, NONE};
use crate::session::State;
use std::cmp::Ordering;

/// The `arguments` key task-topology reads.
pub const ARGS: &[ArgSpec] = &[ArgSpec::new("task-topology.weight", ArgKind::Int, "1")];

/// Rule strengths (Volcano `affinityPriority`): the larger, the earlier.
const SELF_ANTI_AFFINITY: i32 = 4;
const INTER_AFFINITY: i32 = 3;
const SELF_AFFINITY: i32 = 2;
const INTER_ANTI_AFFINITY: i32 = 1;

/// A group of a job's tasks meant for one node (Volcano `Bucket`).
#[derive(Debug, Default)]
struct Bucket {
    /// Unplaced tasks, in the order they joined.
    tasks: Vec<TaskIdx>,
    /// Tasks per role that joined (placed or not).
    roles: Vec<(Sym, i32)>,
    /// Request score of the unplaced tasks (cpu milli + memory MiB + other dimensions).
    req_score: f64,
    /// Σ request of the unplaced tasks, per dimension.
    request: Vec<i64>,
    /// Tasks of the bucket placed, in total.
    placed: i32,
    /// Placed tasks per node (interned node name).
    nodes: Vec<(Sym, i32)>,
}

/// One job's rules and buckets (Volcano `JobManager`).
#[derive(Debug, Default)]
struct Manager {
    self_affinity: Vec<Sym>,
    self_anti: Vec<Sym>,
    /// Inter-task affinity pairs, both directions.
    inter_affinity: Vec<(Sym, Sym)>,
    inter_anti: Vec<(Sym, Sym)>,
    /// Per role: its strongest rule.
    strength: Vec<(Sym, i32)>,
    /// Per role: `n − i` for the `i`-th name of the task order annotation.
    order: Vec<(Sym, i32)>,
    buckets: Vec<Bucket>,
    /// The largest bucket at open (tasks that joined), for the score's scale.
    max_size: i32,
    /// Per node: roles of the job's tasks placed there in this session.
    placed_on: Vec<(Sym, Vec<(Sym, i32)>)>,
}

/// Adds `by` to `key`'s count in a small map.
fn bump(m: &mut Vec<(Sym, i32)>, key: Sym, by: i32) {
    match m.iter_mut().find(|(k, _)| *k == key) {
        Some((_, n)) => *n += by,
        None => m.push((key, by)),
    }
}

fn get(m: &[(Sym, i32)], key: Sym) -> i32 {
    m.iter().find(|(k, _)| *k == key).map_or(0, |&(_, n)| n)
}

impl Manager {
    fn mark(&mut self, role: Sym, strength: i32) {
        match self.strength.iter_mut().find(|(k, _)| *k == role) {
            Some((_, s)) => *s = (*s).max(strength),
            None => self.strength.push((role, strength)),
        }
    }

    /// Volcano `ApplyTaskTopology`.
    fn apply(&mut self, s: &State<'_>, topo: &crate::model::TaskTopology) {
        let sym = |n: &str| s.cluster.names.get(n);
        let groups = |lists: &[Vec<String>], anti: bool, m: &mut Manager| {
            for g in lists {
                if let [one] = g.as_slice() {
                    if let Some(r) = sym(one) {
                        if anti {
                            m.self_anti.push(r);
                            m.mark(r, SELF_ANTI_AFFINITY);
                        } else {
                            m.self_affinity.push(r);
                            m.mark(r, SELF_AFFINITY);
                        }
                    }
                    continue;
                }
                let names: Vec<Option<Sym>> = g.iter().map(|n| sym(n)).collect();
                for (i, src) in names.iter().enumerate() {
                    let Some(src) = *src else { continue };
                    for dst in names[..i].iter().flatten() {
                        let pairs = if anti { &mut m.inter_anti } else { &mut m.inter_affinity };
                        pairs.push((src, *dst));
                        pairs.push((*dst, src));
                    }
                    m.mark(src, if anti { INTER_ANTI_AFFINITY } else { INTER_AFFINITY });
                }
            }
        };
        groups(topo.affinity.as_deref().unwrap_or(&[]), false, self);
        groups(topo.anti_affinity.as_deref().unwrap_or(&[]), true, self);
        if let Some(order) = &topo.task_order {
            let n = order.len() as i32;
            for (i, name) in order.iter().enumerate() {
                if let Some(r) = sym(name) {
                    match self.order.iter_mut().find(|(k, _)| *k == r) {
                        Some((_, v)) => *v = n - i as i32,
                        None => self.order.push((r, n - i as i32)),
                    }
                }
            }
        }
    }

    /// Volcano `checkTaskSetAffinity`: + per affine task (unless `only_anti`), − per
    /// anti-affine task of `set`.
    fn set_affinity(&self, role: Sym, set: &[(Sym, i32)], only_anti: bool) -> i32 {
        if role == Sym::EMPTY {
            return 0;
        }
        let mut aff = 0;
        for &(other, count) in set {
            let same = other == role;
            if !only_anti {
                let affine = if same { self.self_affinity.contains(&role) } else { self.inter_affinity.contains(&(role, other)) };
                if affine {
                    aff += count;
                }
            }
            let anti = if same { self.self_anti.contains(&role) } else { self.inter_anti.contains(&(role, other)) };
            if anti {
                aff -= count;
            }
        }
        aff
    }

    /// Volcano `taskAffinityOrder`: `Greater` when `l`'s role comes first.
    fn affinity_order(&self, l: Sym, r: Sym) -> Ordering {
        if l == r {
            return Ordering::Equal;
        }
        get(&self.order, l).cmp(&get(&self.order, r)).then_with(|| get(&self.strength, l).cmp(&get(&self.strength, r)))
    }
}

/// The request score of a task (Volcano `Bucket.CalcResReq`: 1 cpu milli = 1 MiB of memory =
/// 1 unit of any other dimension).
fn req_score(req: &[i64]) -> f64 {
    req.iter().enumerate().map(|(d, &v)| if d == MEMORY { v as f64 / 1024.0 / 1024.0 } else { v as f64 }).sum()
}

/// The task names a job's pods carry in their names (Volcano `affinityCheck`: the
/// second-to-last `-` part); a pod name without two parts gives none (Volcano would fail on it).
fn name_task(pod: &str) -> Option<&str> {
    let mut parts = pod.rsplit('-');
    parts.next()?;
    parts.next()
}

/// Volcano `affinityCheck` of `groups` against the job's tasks: the first problem, if any.
fn check_groups(names: &[&str], groups: &[Vec<String>]) -> Option<String> {
    for g in groups {
        let mut seen: Vec<&str> = Vec::new();
        for t in g.iter().map(String::as_str).filter(|t| !t.is_empty()) {
            if !names.contains(&t) {
                return Some(format!("task {t} does not exist in the job"));
            }
            if seen.contains(&t) {
                return Some(format!("task {t} is duplicated"));
            }
            seen.push(t);
        }
    }
    None
}

/// The task-topology plugin: a manager per job with a topology.
pub struct TaskTopology {
    weight: i64,
    managers: Vec<Manager>,
    /// Per job row: its manager, or [`NONE`].
    job_manager: Vec<u32>,
    /// Per task row: its bucket in its job's manager, or [`NONE`] (out of bucket, or no
    /// manager).
    task_bucket: Vec<u32>,
    /// PodGroup events for invalid annotations, recorded at close.
    invalid: Vec<Event>,
}

impl TaskTopology {
    /// Reads `task-topology.weight` (1) and builds the buckets of every job with a pending task
    /// and a valid topology.
    pub fn open(s: &State<'_>, a: &Arguments) -> Self {
        let mut p = TaskTopology {
            weight: a.int("task-topology.weight").unwrap_or(1),
            managers: Vec::new(),
            job_manager: Vec::new(),
            task_bucket: Vec::new(),
            invalid: Vec::new(),
        };
        for j in (0..s.jobs.len).map(|i| JobIdx(i as u32)) {
            let Some(topo) = s.jobs.rec[j.ix()].spec.task_topology.as_ref() else { continue };
            if s.jobs.count(j, TaskStatus::Pending) == 0 {
                continue;
            }
            let pod_names: Vec<&str> = s.jobs.tasks(j).filter_map(|t| name_task(&s.tasks.rec[t.ix()].spec.name)).collect();
            let checks = [
                ("volcano.sh/task-topology-affinity", topo.affinity.as_deref()),
                ("volcano.sh/task-topology-anti-affinity", topo.anti_affinity.as_deref()),
            ];
            let order = topo.task_order.clone().map(|o| vec![o]);
            let problem = checks
                .into_iter()
                .chain([("volcano.sh/task-topology-task-order", order.as_deref())])
                .find_map(|(key, groups)| check_groups(&pod_names, groups?).map(|m| (key, m)));
            if let Some((key, m)) = problem {
                let spec = &s.jobs.rec[j.ix()].spec;
                p.invalid.push(Event {
                    group: s.jobs.group[j.ix()],
                    kind: "Warning",
                    reason: "InvalidTaskTopology".into(),
                    message: format!(
                        "PodGroup {}/{}: annotation {key}: {m}; task-topology ignores the job",
                        spec.namespace, spec.name
                    )
                    .into(),
                });
                continue;
            }
            if p.job_manager.is_empty() {
                p.job_manager = vec![NONE; s.jobs.len];
                p.task_bucket = vec![NONE; s.tasks.len];
            }
            let mut m = Manager::default();
            m.apply(s, topo);
            p.build_buckets(s, j, &mut m);
            p.job_manager[j.ix()] = p.managers.len() as u32;
            p.managers.push(m);
        }
        p
    }

    /// Volcano `ConstructBucket`.
    fn build_buckets(&mut self, s: &State<'_>, j: JobIdx, m: &mut Manager) {
        let mut tasks: Vec<TaskIdx> =
            s.jobs.tasks(j).filter(|&t| s.role(t) != Sym::EMPTY && m.strength.iter().any(|(r, _)| *r == s.role(t))).collect();
        let node_of = |t: TaskIdx| s.tasks.rec[t.ix()].spec.node_name.as_str();
        tasks.sort_by(|&a, &b| {
            let (na, nb) = (node_of(a), node_of(b));
            match (na.is_empty(), nb.is_empty()) {
                (false, true) => Ordering::Less,
                (true, false) => Ordering::Greater,
                (false, false) => na.cmp(nb),
                (true, true) => m
                    .affinity_order(s.role(b), s.role(a))
                    .then_with(|| s.tasks.rec[a.ix()].spec.name.cmp(&s.tasks.rec[b.ix()].spec.name)),
            }
        });
        // Bound tasks: one bucket per node.
        let mut node_bucket: Vec<(&str, usize)> = Vec::new();
        for t in tasks {
            let role = s.role(t);
            let node = node_of(t);
            let chosen = if !node.is_empty() {
                node_bucket.iter().find(|(n, _)| *n == node).map(|&(_, b)| b)
            } else {
                let mut best: Option<(usize, i32)> = None;
                for (bi, b) in m.buckets.iter().enumerate() {
                    let aff = m.set_affinity(role, &b.roles, false);
                    match best {
                        None => best = Some((bi, aff)),
                        Some((sel, max)) if aff > max || (aff == max && b.req_score < m.buckets[sel].req_score) => {
                            best = Some((bi, aff))
                        }
                        _ => {}
                    }
                }
                best.filter(|&(_, aff)| aff >= 0).map(|(b, _)| b)
            };
            let bi = chosen.unwrap_or_else(|| {
                m.buckets.push(Bucket { request: vec![0; s.dims], ..Default::default() });
                if !node.is_empty() {
                    node_bucket.push((node, m.buckets.len() - 1));
                }
                m.buckets.len() - 1
            });
            let b = &mut m.buckets[bi];
            bump(&mut b.roles, role, 1);
            if node.is_empty() {
                b.tasks.push(t);
                let req = s.tasks.req(t, s.dims);
                b.req_score += req_score(req);
                for (x, r) in b.request.iter_mut().zip(req) {
                    *x = x.saturating_add(*r);
                }
            } else {
                bump(&mut b.nodes, s.cluster.names.get(node).unwrap_or_default(), 1);
                b.placed += 1;
            }
            self.task_bucket[t.ix()] = bi as u32;
            m.max_size = m.max_size.max(b.tasks.len() as i32 + b.placed);
        }
    }

    fn manager_of(&self, s: &State<'_>, t: TaskIdx) -> Option<&Manager> {
        let j = s.tasks.job[t.ix()];
        let m = *self.job_manager.get(j as usize)?;
        (m != NONE).then(|| &self.managers[m as usize])
    }

    fn bucket_of<'m>(&self, m: &'m Manager, t: TaskIdx) -> Option<(usize, &'m Bucket)> {
        let b = self.task_bucket[t.ix()];
        (b != NONE).then(|| (b as usize, &m.buckets[b as usize]))
    }

    /// Volcano `calcBucketScore` × weight × 100 / the largest bucket.
    pub fn score(&self, s: &State<'_>, t: TaskIdx, n: NodeIdx) -> f64 {
        let req = s.tasks.req(t, s.dims);
        let room = |d: usize| s.idle(n, d).saturating_add(s.releasing(n, d));
        if req.iter().enumerate().any(|(d, &r)| r > room(d)) {
            return 0.0;
        }
        let Some(m) = self.manager_of(s, t) else { return 0.0 };
        let Some((_, b)) = self.bucket_of(m, t) else { return 0.0 };
        let node = s.nodes.rec[n.ix()].name;
        let mut score = get(&b.nodes, node);
        if let Some((_, set)) = m.placed_on.iter().find(|(k, _)| *k == node) {
            let anti = m.set_affinity(s.role(t), set, true);
            if anti < 0 {
                score += anti;
            }
        }
        score += b.tasks.len() as i32;
        let fits = |want: &[i64]| want.iter().enumerate().all(|(d, &r)| r <= room(d));
        if !fits(&b.request) {
            let mut remains = b.request.clone();
            for &other in b.tasks.iter().filter(|&&x| x != t) {
                for (x, r) in remains.iter_mut().zip(s.tasks.req(other, s.dims)) {
                    *x -= *r;
                }
                score -= 1;
                if fits(&remains) {
                    break;
                }
            }
        }
        let mut f = (score as i64).saturating_mul(self.weight) as f64;
        if m.max_size != 0 {
            f = f * crate::limits::MAX_NODE_SCORE as f64 / m.max_size as f64;
        }
        f
    }
}

plugin_impl! {
    impl<'a> for TaskTopology {
        fn name(&self) -> &'static str {
            "task-topology"
        }
        fn task_order(&self, s: &State<'a>, l: TaskIdx, r: TaskIdx) -> Ordering {
            let (Some(lm), Some(rm)) = (self.manager_of(s, l), self.manager_of(s, r)) else {
                return Ordering::Equal;
            };
            match (self.bucket_of(lm, l), self.bucket_of(rm, r)) {
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                _ if s.tasks.job[l.ix()] != s.tasks.job[r.ix()] => Ordering::Equal,
                (None, None) => Ordering::Equal,
                (Some((li, lb)), Some((ri, rb))) => rb
                    .tasks
                    .len()
                    .cmp(&lb.tasks.len())
                    .then_with(|| if li == ri { lm.affinity_order(s.role(r), s.role(l)) } else { li.cmp(&ri) }),
            }
        }
        fn node_order(&self, s: &State<'a>, _ctx: &PodCtx, t: TaskIdx, n: NodeIdx) -> f64 {
            self.score(s, t, n)
        }
        fn on_allocate(&mut self, s: &State<'a>, _view: &mut NodeView<'a>, t: TaskIdx) {
            let j = s.tasks.job[t.ix()];
            let Some(&mi) = self.job_manager.get(j as usize) else { return };
            let Some(n) = s.tasks.node_of(t) else { return };
            if mi == NONE {
                return;
            }
            let node = s.nodes.rec[n.ix()].name;
            let role = s.role(t);
            let m = &mut self.managers[mi as usize];
            if role != Sym::EMPTY {
                match m.placed_on.iter_mut().find(|(k, _)| *k == node) {
                    Some((_, set)) => bump(set, role, 1),
                    None => m.placed_on.push((node, vec![(role, 1)])),
                }
            }
            let bi = self.task_bucket[t.ix()];
            if bi == NONE {
                return;
            }
            let b = &mut m.buckets[bi as usize];
            bump(&mut b.nodes, node, 1);
            b.placed += 1;
            // Volcano subtracts the request even for a task that already left the bucket (a
            // re-placement after a discard); Basalt subtracts it once.
            if let Some(i) = b.tasks.iter().position(|&x| x == t) {
                b.tasks.remove(i);
                let req = s.tasks.req(t, s.dims);
                b.req_score -= req_score(req);
                for (x, r) in b.request.iter_mut().zip(req) {
                    *x -= *r;
                }
            }
        }
        fn on_close(&mut self, _s: &State<'a>, notes: &mut CloseNotes) {
            notes.events.append(&mut self.invalid);
        }
        fn class_key(&self, s: &State<'a>, t: TaskIdx) -> Option<u64> {
            // A bucketed task's score changes as its bucket's tasks are placed.
            match self.manager_of(s, t) {
                Some(_) if self.task_bucket[t.ix()] != NONE => None,
                _ => Some(0),
            }
        }
    }
}

impl TaskTopology {
    /// The functions this plugin registers (its capability set, Volcano's `Add…Fn` calls in its
    /// `OnSessionOpen`); `core/tests/plugin_fns.rs` checks it against the methods its
    /// `plugin_impl!` block writes.
    pub const FNS: u32 = {
        use crate::framework::Fn as F;
        F::TaskOrder.bit() | F::NodeOrder.bit() | F::EventHandler.bit()
    };
}
