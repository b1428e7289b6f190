//! Victim bundles of the gang-granular evictions, gangpreempt and gangreclaim
//! (volcano-behaviour.md §2; Volcano `actions/gangevict/bundle.go`).
//!
//! The candidate tasks of one victim job inside a domain are split into a **safe** bundle, the
//! tasks the job can lose and stay gang-ready (its ready count stays at or above `minMember`,
//! each role with a `minTaskMember` at or above it), and a **whole** bundle, the rest: evicting
//! those breaks the victim's gang. Bundles are ordered safe first, then by the victim job (or
//! queue) order the action passes, then by return on investment (how much of the preemptor's
//! need a bundle frees per resource of the whole victim job), then by job UID, first task UID
//! and size.

use crate::resource::PODS;
use crate::session::tables::{JobIdx, TaskIdx, TaskStatus};
use crate::session::State;
use std::cmp::Ordering;

/// A job's victims inside one domain, taken together.
#[derive(Clone, Debug, PartialEq)]
pub struct Bundle {
    /// Whole bundle (evicting it breaks the job's gang); else safe.
    pub whole: bool,
    /// The victim job.
    pub job: JobIdx,
    /// Its tasks in the domain, lowest task priority first (then UID).
    pub tasks: Vec<TaskIdx>,
    /// Σ requests of `tasks`, per dimension.
    pub local: Vec<i64>,
    /// Whole bundles: Σ requests of every task of the job; safe bundles: empty.
    pub global: Vec<i64>,
}

fn sum(s: &State<'_>, tasks: impl Iterator<Item = TaskIdx>) -> Vec<i64> {
    let mut out = vec![0; s.dims];
    for t in tasks {
        for (o, r) in out.iter_mut().zip(s.tasks.req(t, s.dims)) {
            *o += r;
        }
    }
    out
}

/// Volcano `CreateJobBundles`: splits `local` (candidate tasks of job `j` in one domain) into a
/// safe and a whole bundle, each left out when empty. A job already below `minMember` gives a
/// single safe bundle (evicting more cannot break it further). Per-role minima
/// (`minTaskMember`) count only when `minMember` ≥ their sum, as the gang plugin checks them;
/// a role's ready tasks are its allocated and Succeeded ones plus pending BestEffort ones.
pub fn job_bundles(s: &State<'_>, j: JobIdx, mut local: Vec<TaskIdx>) -> Vec<Bundle> {
    if local.is_empty() {
        return Vec::new();
    }
    local.sort_by(|&a, &b| {
        s.tasks.priority[a.ix()]
            .cmp(&s.tasks.priority[b.ix()])
            .then_with(|| s.tasks.rec[a.ix()].spec.uid.cmp(&s.tasks.rec[b.ix()].spec.uid))
    });
    let mut surplus = s.jobs.ready_num(j) - s.jobs.min_available[j.ix()];
    if surplus < 0 {
        let local_res = sum(s, local.iter().copied());
        return vec![Bundle { whole: false, job: j, tasks: local, local: local_res, global: vec![0; s.dims] }];
    }
    let rec = s.jobs.rec[j.ix()];
    let enforce_roles = s.jobs.min_available[j.ix()] >= s.jobs.min_task_total[j.ix()];
    // (role, surplus) for the roles with a minimum.
    let mut roles: Vec<(crate::intern::Sym, i32)> = Vec::new();
    if enforce_roles {
        for &(role, min) in rec.min_task_member.iter() {
            let ready = s
                .jobs
                .tasks(j)
                .filter(|&t| s.role(t) == role)
                .filter(|&t| {
                    let st = s.tasks.status()[t.ix()];
                    st.allocated() || st == TaskStatus::Succeeded || (st == TaskStatus::Pending && s.tasks.best_effort[t.ix()])
                })
                .count() as i32;
            roles.push((role, ready - min));
        }
    }
    let (mut safe, mut whole) = (Vec::new(), Vec::new());
    for t in local {
        let role = roles.iter().position(|&(r, _)| r == s.role(t));
        let role_safe = role.is_none_or(|i| roles[i].1 > 0);
        if surplus > 0 && role_safe {
            surplus -= 1;
            if let Some(i) = role {
                roles[i].1 -= 1;
            }
            safe.push(t);
        } else {
            whole.push(t);
        }
    }
    let mut out = Vec::with_capacity(2);
    if !safe.is_empty() {
        let local_res = sum(s, safe.iter().copied());
        out.push(Bundle { whole: false, job: j, tasks: safe, local: local_res, global: vec![0; s.dims] });
    }
    if !whole.is_empty() {
        let local_res = sum(s, whole.iter().copied());
        let global = sum(s, s.jobs.tasks(j));
        out.push(Bundle { whole: true, job: j, tasks: whole, local: local_res, global });
    }
    out
}

/// Volcano `scoreAgainstNeed`: Σ over the dimensions the need asks for (`pods` aside) of
/// `res / need`, each term capped at 1 when `cap`.
fn score(res: &[i64], need: &[i64], cap: bool) -> f64 {
    let mut x = 0.0;
    for (d, (&r, &n)) in res.iter().zip(need).enumerate() {
        if d == PODS || n <= 0 {
            continue;
        }
        let v = if cap { r.min(n) } else { r };
        x += v as f64 / n as f64;
    }
    x
}

/// Volcano `bundleROI`: the need freed locally per resource of the whole victim job (infinite
/// for a safe bundle, which breaks no gang).
pub fn roi(b: &Bundle, need: &[i64]) -> f64 {
    let global = score(&b.global, need, false);
    if global == 0.0 {
        return f64::INFINITY;
    }
    score(&b.local, need, true) / global
}

/// Volcano `SortBundlesForPreempt`/`SortBundlesForReclaim` (a stable sort): safe before whole;
/// then `victim_first(l, r)` ("take job `l`'s bundle before `r`'s"), used only when it orders
/// the two jobs strictly; then higher [`roi`]; then job UID, first task UID, fewer tasks.
pub fn sort_bundles(s: &State<'_>, bundles: &mut [Bundle], need: &[i64], mut victim_first: impl FnMut(JobIdx, JobIdx) -> bool) {
    let uid = |j: JobIdx| s.cluster.names.resolve(s.jobs.uid[j.ix()]);
    let first = |b: &Bundle| b.tasks.first().map(|t| s.tasks.rec[t.ix()].spec.uid.as_str()).unwrap_or("");
    bundles.sort_by(|l, r| {
        if l.whole != r.whole {
            return l.whole.cmp(&r.whole);
        }
        if l.job != r.job {
            let (lr, rl) = (victim_first(l.job, r.job), victim_first(r.job, l.job));
            if lr != rl {
                return if lr { Ordering::Less } else { Ordering::Greater };
            }
        }
        let (a, b) = (roi(l, need), roi(r, need));
        if a != b {
            return b.partial_cmp(&a).unwrap_or(Ordering::Equal);
        }
        uid(l.job).cmp(uid(r.job)).then_with(|| first(l).cmp(first(r))).then(l.tasks.len().cmp(&r.tasks.len()))
    });
}

/// Volcano `ApplyAllowedTasks`: keeps, of each bundle, the tasks in `allowed`; a whole bundle
/// survives only when every task of it is allowed, a safe bundle when at least one is.
pub fn keep_allowed(s: &State<'_>, bundles: Vec<Bundle>, allowed: &[TaskIdx]) -> Vec<Bundle> {
    let mut sorted = allowed.to_vec();
    sorted.sort_unstable();
    let mut out = Vec::with_capacity(bundles.len());
    for mut b in bundles {
        let n = b.tasks.len();
        b.tasks.retain(|t| sorted.binary_search(t).is_ok());
        if b.tasks.is_empty() || (b.whole && b.tasks.len() != n) {
            continue;
        }
        if b.tasks.len() != n {
            b.local = sum(s, b.tasks.iter().copied());
        }
        out.push(b);
    }
    out
}
