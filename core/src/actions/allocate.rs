//! `allocate` (volcano-behaviour.md §2): queue by queue (dropping overused queues for the
//! cycle), job by job, task by task, place Pending tasks on nodes inside a Statement; commit
//! when the job is gang-ready, leave it pipelined when it is only pipelined, else discard.
//! After a job's gang is met it gets one more task each time it is popped, interleaved with
//! other jobs and queues.

use super::heap::GoHeap;
use crate::conf::ActionKind;
use crate::framework::k8s::PodCtx;
use crate::framework::Session;
use crate::intern::Sym;
use crate::model::PodGroupPhase;
use crate::select::class_cache::{Classes, Pick};
use crate::select::nodes::{best_node, candidate_group, predicate_nodes, NodeScan};
use crate::session::fit::FitErrors;
use crate::session::statement::Statement;
use crate::session::tables::{JobIdx, NodeIdx, QueueIdx, TaskIdx, TaskStatus};
use crate::session::State;

/// Runs allocate.
pub fn execute(ssn: &mut Session<'_>) {
    let args = ssn.state.conf.action_arguments("allocate");
    let use_cache = args.bool("predicateErrorCacheEnable").unwrap_or(true);
    let enqueue_on = ssn.state.conf.has_action(ActionKind::Enqueue);
    let nq = ssn.state.queues.len;
    let mut queues: GoHeap<QueueIdx> = GoHeap::default();
    let mut queue_seen = vec![false; nq];
    let mut jobs: Vec<GoHeap<JobIdx>> = vec![GoHeap::default(); nq];
    let mut tasks: Vec<GoHeap<TaskIdx>> = vec![GoHeap::default(); ssn.state.jobs.len];

    for j in (0..ssn.state.jobs.len).map(|i| JobIdx(i as u32)) {
        if ssn.state.jobs.is_pending(j) {
            if enqueue_on {
                continue;
            }
            ssn.state.set_phase(j, PodGroupPhase::Inqueue);
        }
        if ssn.plugins.job_valid(&ssn.state, j).is_some() {
            continue;
        }
        let st = &ssn.state;
        for t in st.jobs.tasks(j) {
            if st.tasks.status()[t.ix()] == TaskStatus::Pending
                && !st.tasks.best_effort[t.ix()]
                && super::queue_gate::considered(st, t)
            {
                tasks[j.ix()].push_by(t, ssn);
            }
        }
        if tasks[j.ix()].is_empty() {
            continue;
        }
        let q = st.jobs.queue[j.ix()] as usize;
        jobs[q].push_by(j, ssn);
        if !queue_seen[q] {
            queue_seen[q] = true;
            queues.push_by(QueueIdx(q as u32), ssn);
        }
    }

    let mut scan = NodeScan::new(ssn.state.nodes.len, use_cache);
    let mut classes = Classes::for_session(ssn.state.options(), ssn.state.nodes.len);
    // Jobs with a network topology or sub-groups take the HyperNode gradient path
    // (`allocate_topology`); `None` when the session has none.
    let mut topo = super::allocate_topology::TopoAlloc::prepare(ssn);
    while let Some(q) = queues.pop_by(ssn) {
        if ssn.plugins.overused(&ssn.state, q) {
            continue;
        }
        let Some(j) = jobs[q.ix()].pop_by(ssn) else { continue };
        if let Some(ta) = topo.as_mut().filter(|ta| ta.blocked(j) || ta.handles(j)) {
            if !ta.blocked(j) {
                let stmt = super::allocate_topology::allocate_job(ssn, ta, &mut scan, j, q);
                if let Some(stmt) = stmt {
                    if super::allocate_topology::job_ready(ssn, ta, j) {
                        ssn.commit(stmt);
                        if super::allocate_topology::has_pending(ssn, ta, j) {
                            jobs[q.ix()].push_by(j, ssn);
                        }
                    }
                }
            }
            queues.push_by(q, ssn);
            continue;
        }
        let mut stmt = ssn.statement();
        let kept = allocate_tasks(ssn, &mut stmt, &mut scan, classes.as_mut(), &mut tasks[j.ix()], j, q);
        // A kept statement of a job that is only pipelined stays applied, uncommitted: it
        // reserves releasing resources for later actions.
        if kept && ssn.plugins.job_ready(&ssn.state, j) {
            ssn.commit(stmt);
            if !tasks[j.ix()].is_empty() {
                jobs[q.ix()].push_by(j, ssn);
            }
        }
        queues.push_by(q, ssn);
    }
}

/// Volcano `NeedContinueAllocating`: after a task found no node, whether other tasks of the job
/// are still worth trying.
pub(super) fn need_continue(s: &State<'_>, j: JobIdx) -> bool {
    let min = s.jobs.min_available[j.ix()];
    if min == s.jobs.task_count(j) as i32 {
        return false;
    }
    let failed: Vec<Sym> = {
        let mut v: Vec<Sym> = s.fit_errors[j.ix()].iter().map(|(t, _)| s.role(*t)).collect();
        v.sort();
        v.dedup();
        v
    };
    if min < s.jobs.min_task_total[j.ix()] {
        let left =
            s.jobs.tasks(j).filter(|&t| s.tasks.status()[t.ix()] == TaskStatus::Pending && !failed.contains(&s.role(t))).count()
                as i32;
        return s.jobs.ready_num(j) + left >= min;
    }
    let rec = s.jobs.rec[j.ix()];
    for role in failed {
        let role_min = rec.min_task_member.iter().find(|(r, _)| *r == role).map(|(_, m)| *m).unwrap_or(0);
        if role_min == 0 {
            continue;
        }
        if s.allocated_in_role(j, role) < role_min {
            return false;
        }
    }
    true
}

/// Volcano `TaskHasFitErrors`: another task of the same (non-empty) role already failed.
fn role_failed(s: &State<'_>, j: JobIdx, t: TaskIdx) -> bool {
    let role = s.role(t);
    role != Sym::EMPTY && s.fit_errors[j.ix()].iter().any(|(x, _)| s.role(*x) == role)
}

/// Places tasks of job `j` until the job is ready (then one task more per call). Returns
/// whether the statement is kept (ready or pipelined); otherwise it has been discarded.
#[allow(clippy::too_many_arguments)]
fn allocate_tasks<'a>(
    ssn: &mut Session<'a>,
    stmt: &mut Statement<'a>,
    scan: &mut NodeScan,
    mut classes: Option<&mut Classes>,
    tasks: &mut GoHeap<TaskIdx>,
    j: JobIdx,
    q: QueueIdx,
) -> bool {
    while let Some(t) = tasks.pop_by(ssn) {
        if !ssn.plugins.allocatable(&ssn.state, q, t) {
            continue;
        }
        if super::queue_gate::admit(&mut ssn.state, t, q) {
            continue;
        }
        if role_failed(&ssn.state, j, t) {
            let spec = &ssn.state.tasks.rec[t.ix()].spec;
            let role = &spec.role;
            let msg = format!("Task {} with role spec {} has already predicated failed, skip", spec.name, role);
            ssn.state.set_fit_errors(j, t, FitErrors::message_only(msg));
            continue;
        }
        if let Err(e) = ssn.plugins.pre_predicate(&ssn.state, t) {
            let mut fe = FitErrors::message_only(e);
            fe.nodes = ssn.state.nodes.len as u32;
            ssn.state.set_fit_errors(j, t, fe);
            break;
        }
        let ctx = PodCtx::build(&ssn.state, t, ssn.plugins.scores_nodes());
        if let Some(n) = nominated_node(ssn, &ctx, t) {
            place(ssn, stmt, t, n);
            if ssn.plugins.job_ready(&ssn.state, j) {
                break;
            }
            continue;
        }
        if let Some(cc) = classes.as_deref_mut() {
            if let Pick::Node(n) = cc.pick(ssn, t, &ctx, scan) {
                place(ssn, stmt, t, n);
                if ssn.plugins.job_ready(&ssn.state, j) {
                    break;
                }
                continue;
            }
        }
        let fe = predicate_nodes(ssn, scan, &ctx, j, t, true);
        if scan.feasible.is_empty() {
            ssn.state.set_fit_errors(j, t, fe);
            if need_continue(&ssn.state, j) {
                continue;
            }
            break;
        }
        let req = ssn.state.tasks.req(t, ssn.state.dims);
        // Candidate group: feasible nodes that fit idle resources, else those that fit
        // FutureIdle (every feasible node does, by allocate's resource check); under soft node
        // sharding in-shard nodes first in each.
        let mut group = std::mem::take(&mut scan.group);
        candidate_group(&ssn.state, req, &scan.feasible, &mut group);
        if group.is_empty() {
            scan.group = group;
            continue;
        }
        let n = best_node(ssn, scan, &ctx, t, &group);
        scan.group = group;
        place(ssn, stmt, t, n);
        if ssn.plugins.job_ready(&ssn.state, j) {
            break;
        }
    }
    if ssn.plugins.job_ready(&ssn.state, j) || ssn.plugins.job_pipelined(&ssn.state, j) {
        return true;
    }
    let st = std::mem::replace(stmt, ssn.statement());
    ssn.discard(st);
    false
}

/// Volcano allocate's nominated-node step: a task whose pod carries `status.nominatedNodeName`
/// (a preemption reserved that node) tries that node first, when it is in the session, the
/// task's request fits its FutureIdle and the predicates pass; otherwise all nodes are scanned.
fn nominated_node(ssn: &Session<'_>, ctx: &PodCtx, t: TaskIdx) -> Option<NodeIdx> {
    let s = &ssn.state;
    let name = &s.tasks.rec[t.ix()].spec.nominated_node_name;
    if name.is_empty() {
        return None;
    }
    let n = NodeIdx((0..s.nodes.len).find(|&i| s.nodes.rec[i].spec.name == *name)? as u32);
    let ok = s.fits_future_idle(s.tasks.req(t, s.dims), n) && ssn.plugins.predicate(s, ctx, t, n).is_ok();
    ok.then_some(n)
}

/// Allocates `t` on `n` when it fits idle resources, else pipelines it onto releasing ones.
fn place<'a>(ssn: &mut Session<'a>, stmt: &mut Statement<'a>, t: TaskIdx, n: NodeIdx) {
    let req = ssn.state.tasks.req(t, ssn.state.dims);
    if ssn.state.fits_idle(req, n) {
        ssn.allocate(stmt, t, n);
    } else if ssn.state.fits_future_idle(req, n) {
        ssn.pipeline(stmt, t, n);
    }
}
