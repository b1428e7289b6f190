//! Session close: PodGroup status (Volcano `jobStatus`), pod conditions
//! (`RecordJobStatusEvent`, `TaskSchedulingReason`), Queue `status.allocated`, events.

use super::tables::*;
use super::State;
use crate::decision::*;
use crate::model::{PodGroupCondition, PodGroupPhase};
use crate::resource::ResourceList;

/// Volcano `JobInfo.FitError()`: `pod group is not ready, <sorted 'N Status' incl 'N
/// minAvailable'>; Pending: <sorted 'N reason'>`.
pub fn job_fit_error(s: &State<'_>, j: JobIdx) -> String {
    let mut hist: Vec<String> = TaskStatus::ALL
        .iter()
        .filter(|st| s.jobs.count(j, **st) > 0)
        .map(|st| format!("{} {}", s.jobs.count(j, *st), st.as_str()))
        .collect();
    hist.push(format!("{} minAvailable", s.jobs.min_available[j.ix()]));
    hist.sort();
    let head = if s.jobs.is_ready(j) { "pod group is ready" } else { "pod group is not ready" };
    let mut msg = format!("{head}, {}", hist.join(", "));
    let mut reasons: Vec<(String, u32)> = Vec::new();
    for t in s.jobs.tasks(j).filter(|&t| s.tasks.status[t.ix()] == TaskStatus::Pending) {
        let (reason, _) = task_reason(s, j, t);
        match reasons.iter_mut().find(|(r, _)| *r == reason) {
            Some((_, n)) => *n += 1,
            None => reasons.push((reason, 1)),
        }
    }
    if !reasons.is_empty() {
        let mut parts: Vec<String> = reasons.iter().map(|(r, n)| format!("{n} {r}")).collect();
        parts.sort();
        msg.push_str(&format!("; Pending: {}", parts.join(", ")));
    }
    if let Some((t, fe)) = s.fit_errors[j.ix()].first() {
        msg.push_str(&format!(". Origin reason is {}: {}", s.tasks.rec[t.ix()].spec.name, fe.message(s.cluster)));
    }
    msg
}

/// Volcano `TaskSchedulingReason`: (reason, message) of a task still waiting, judged by its
/// last transaction.
pub fn task_reason(s: &State<'_>, j: JobIdx, t: TaskIdx) -> (String, String) {
    let spec = &s.tasks.rec[t.ix()].spec;
    let status = s.tasks.status[t.ix()];
    let (st, node) = if status == TaskStatus::Pending && s.tasks.last_status[t.ix()] != TaskStatus::Pending {
        (s.tasks.last_status[t.ix()], s.tasks.last_node[t.ix()])
    } else {
        (status, s.tasks.node[t.ix()])
    };
    let node_name = |n: u32| {
        if n == NONE {
            String::new()
        } else {
            s.nodes.rec[n as usize].spec.name.clone()
        }
    };
    match st {
        TaskStatus::Allocated => (
            "Schedulable".into(),
            format!(
                "Pod {}/{} can possibly be assigned to {}, once minAvailable is satisfied",
                spec.namespace,
                spec.name,
                node_name(node)
            ),
        ),
        TaskStatus::Pipelined => (
            "Unschedulable".into(),
            format!(
                "Pod {}/{} can possibly be assigned to {}, once resource is released and minAvailable is satisfied",
                spec.namespace,
                spec.name,
                node_name(node)
            ),
        ),
        TaskStatus::Pending => match s.fit_errors_of(j, t) {
            Some(fe) => ("Unschedulable".into(), fe.message(s.cluster)),
            None => ("Unschedulable".into(), gang_message(s, j)),
        },
        other => (other.as_str().into(), gang_message(s, j)),
    }
}

/// Volcano `ReleasingScheduledTaskNum` (d725ce4db): tasks of `j` that are `Releasing` (a pod
/// with a deletionTimestamp) on a node; a Releasing task that never had a node is not counted.
pub fn releasing_scheduled_num(s: &State<'_>, j: JobIdx) -> i32 {
    s.jobs.tasks(j).filter(|&t| s.tasks.status[t.ix()] == TaskStatus::Releasing && s.tasks.node[t.ix()] != NONE).count() as i32
}

/// The gang's not-ready message of `j` ([`super::notes::CloseNotes::job_fit_error`]); empty
/// while the plugins close (the notes are theirs then, and the gang's close reads only the
/// reasons, [`job_fit_error`]).
fn gang_message(s: &State<'_>, j: JobIdx) -> String {
    s.notes.job_fit_error.get(j.ix()).cloned().unwrap_or_default()
}

/// Volcano `jobStatus`: the phase and counts after the session.
fn phase_of(s: &State<'_>, j: JobIdx, unschedulable_now: bool) -> PodGroupPhase {
    let running = s.jobs.count(j, TaskStatus::Running);
    if running > 0 && unschedulable_now {
        return PodGroupPhase::Unknown;
    }
    // Releasing tasks already on a node still hold their slots (d725ce4db).
    let scheduled = s.jobs.scheduled_num(j) + releasing_scheduled_num(s, j);
    let completed = (s.jobs.count(j, TaskStatus::Succeeded) + s.jobs.count(j, TaskStatus::Failed)) as i32;
    if scheduled >= s.jobs.min_available[j.ix()] {
        if scheduled > 0 && completed == scheduled {
            PodGroupPhase::Completed
        } else {
            PodGroupPhase::Running
        }
    } else if s.jobs.phase[j.ix()] == PodGroupPhase::Inqueue {
        PodGroupPhase::Inqueue
    } else {
        PodGroupPhase::Pending
    }
}

fn same_condition(a: &PodGroupCondition, b: &PodGroupCondition) -> bool {
    a.kind == b.kind && a.status == b.status && a.reason == b.reason && a.message == b.message
}

/// The annotations bind `t` carries: the GPU share cards it took (Volcano's
/// `gpuIndexAnnotations`: `volcano.sh/gpu-index` = the ids joined by `,`,
/// `volcano.sh/predicate-time` = when, in ns since the Unix epoch; the cycle's `now`, where
/// Volcano reads the wall clock), or the vGPU cards (Volcano vgpu `Allocate`:
/// `volcano.sh/vgpu-ids-new` and `volcano.sh/devices-to-allocate` = the cards per container,
/// `volcano.sh/vgpu-node`, `volcano.sh/vgpu-time` and `volcano.sh/bind-time` in s since the
/// epoch, `volcano.sh/bind-phase: allocating`).
fn bind_annotations(s: &State<'_>, t: TaskIdx, n: NodeIdx) -> crate::model::Labels {
    use crate::model as m;
    let mut out = m::Labels::new();
    if s.devices.mode == super::devices::DeviceMode::Vgpu {
        let uses = s.devices.vgpu_held(t);
        if uses.is_empty() {
            return out;
        }
        let start = s.devices.cards(n).start;
        let mut ctrs = vec![Vec::new(); s.tasks.rec[t.ix()].spec.vgpu.requests.len()];
        for u in uses {
            if let Some(c) = ctrs.get_mut(u.container as usize) {
                c.push(m::VgpuHeld {
                    uuid: s.devices.uuid[start + u.card as usize].to_string(),
                    kind: "NVIDIA".into(),
                    memory: u.memory,
                    cores: u.cores,
                });
            }
        }
        let ids = m::encode_pod_devices(&ctrs);
        let secs = (s.now_ms / 1000).to_string();
        out.insert(m::VGPU_NODE.to_string(), s.nodes.rec[n.ix()].spec.name.clone());
        out.insert(m::VGPU_TIME.to_string(), secs.clone());
        out.insert(m::DEVICES_TO_ALLOCATE.to_string(), ids.clone());
        out.insert(m::VGPU_IDS_NEW.to_string(), ids);
        out.insert(m::BIND_PHASE.to_string(), "allocating".into());
        out.insert(m::BIND_TIME.to_string(), secs);
        return out;
    }
    let cards = s.device_held(t);
    if cards != 0 {
        out.insert(m::GPU_INDEX.to_string(), super::devices::index_value(cards));
        out.insert(m::PREDICATE_TIME.to_string(), s.now_ms.saturating_mul(1_000_000).to_string());
    }
    out
}

/// Volcano's `addNodeSharableDeviceUsage` for the queue's `status.allocated`: a task asking for
/// vGPU on a node with vGPU cards counts, in place of its `volcano.sh/vgpu-memory` and
/// `volcano.sh/vgpu-cores` requests, Σ memory and Σ cores of the cards it holds (milli-units,
/// as Volcano's ×1000). `Some((memory dim, cores dim, memory, cores))`; `None` when that does
/// not apply (no vGPU mode, no request, no cards held).
fn vgpu_queue_usage(s: &State<'_>, t: TaskIdx) -> Option<(Option<usize>, Option<usize>, i64, i64)> {
    if s.devices.mode != super::devices::DeviceMode::Vgpu || !s.device_request(t) {
        return None;
    }
    let uses = s.devices.vgpu_held(t);
    if uses.is_empty() {
        return None;
    }
    let r = &s.cluster.resources;
    let (dm, dc) = (r.find(crate::model::VGPU_MEMORY), r.find(crate::model::VGPU_CORES));
    let mem = uses.iter().map(|u| u.memory as i64).sum::<i64>().saturating_mul(1000);
    let cores = uses.iter().map(|u| i64::from(u.cores)).sum::<i64>().saturating_mul(1000);
    Some((dm, dc, mem, cores))
}

/// The node lock bind `t` takes ([`crate::decision::Bind::node_lock`]).
fn bind_node_lock(s: &State<'_>, t: TaskIdx) -> Option<String> {
    if !s.holds_lock(t) {
        return None;
    }
    let name = if s.devices.mode == super::devices::DeviceMode::Vgpu {
        crate::model::NODE_LOCK_VGPU
    } else {
        crate::model::NODE_LOCK_GPU
    };
    Some(name.to_string())
}

/// Builds the cycle's decisions from a closed session, with the conditions the plugins wrote
/// per job (taken out of [`super::notes::CloseNotes::job_condition`], `jobs` long or empty for
/// none).
pub(super) fn decisions(s: &State<'_>, mut job_condition: Vec<Option<PodGroupCondition>>) -> Decisions {
    let mut out = Decisions {
        binds: s
            .binds
            .iter()
            .map(|&(t, n)| Bind {
                pod: s.tasks.pod[t.ix()],
                node: s.nodes.id[n.ix()],
                annotations: bind_annotations(s, t, n).into(),
                node_lock: bind_node_lock(s, t).into(),
            })
            .collect(),
        evictions: s.evictions.iter().map(|(t, r)| Eviction { pod: s.tasks.pod[t.ix()], reason: r.clone() }).collect(),
        skipped: s.skipped.clone(),
        queue_shares: s.notes.queue_shares.clone(),
        unready_jobs: s.notes.unready_jobs.clone(),
        events: s.events.iter().chain(&s.notes.events).cloned().collect(),
        preemption: s.preemption.clone(),
        rescheduled_ms: s.notes.rescheduled_ms,
        volume_bindings: s.notes.volume_bindings.clone(),
        topology_searches: s.topology_searches.clone(),
        numa_assignments: s.notes.numa_assignments.clone(),
        gate_removals: s.gate_removals.iter().map(|t| crate::decision::GateRemoval { pod: s.tasks.pod[t.ix()] }).collect(),
        ..Default::default()
    };
    // One status per PodGroup and at most one event each: grown once, not by doubling (at
    // 100,000 PodGroups every doubling is memory touched for the first time).
    out.pod_groups.reserve_exact(s.jobs.len);
    out.events.reserve(s.jobs.len);
    for t in (0..s.tasks.len).map(|i| TaskIdx(i as u32)) {
        if s.tasks.status[t.ix()] == TaskStatus::Pipelined {
            out.pipelined.push(Pipelined {
                pod: s.tasks.pod[t.ix()],
                node: s.nodes.id[s.tasks.node[t.ix()] as usize],
                nominated: s.tasks.eviction_occurred[t.ix()],
            });
        }
    }
    for j in (0..s.jobs.len).map(|i| JobIdx(i as u32)) {
        let rec = s.jobs.rec[j.ix()];
        let cond = job_condition.get_mut(j.ix()).and_then(Option::take);
        let unschedulable_now = cond.as_ref().is_some_and(|c| c.kind == "Unschedulable" && c.status == "True");
        let phase = phase_of(s, j, unschedulable_now);
        let mut conditions = Vec::with_capacity(rec.spec.conditions.len() + usize::from(cond.is_some()));
        conditions.extend(rec.spec.conditions.iter().cloned());
        let mut cond_changed = false;
        if let Some(c) = cond {
            match conditions.iter_mut().find(|x| x.kind == c.kind) {
                Some(x) => {
                    cond_changed = !same_condition(x, &c);
                    *x = c;
                }
                None => {
                    cond_changed = true;
                    conditions.push(c);
                }
            }
        }
        let running = s.jobs.count(j, TaskStatus::Running) as i32;
        let succeeded = s.jobs.count(j, TaskStatus::Succeeded) as i32;
        let failed = s.jobs.count(j, TaskStatus::Failed) as i32;
        let changed = cond_changed || phase != rec.spec.phase;
        if matches!(phase, PodGroupPhase::Unknown | PodGroupPhase::Pending | PodGroupPhase::Inqueue) {
            let pending = s.jobs.count(j, TaskStatus::Pending);
            out.events.push(Event {
                group: s.jobs.group[j.ix()],
                kind: "Warning",
                reason: "Unschedulable".into(),
                message: format!("{}/{} tasks in gang unschedulable: {}", pending, s.jobs.task_count(j), job_fit_error(s, j))
                    .into(),
            });
        } else if changed {
            out.events.push(Event {
                group: s.jobs.group[j.ix()],
                kind: "Normal",
                reason: "Scheduled".into(),
                message: "pod group is ready".into(),
            });
        }
        out.pod_groups.push(PodGroupStatus {
            group: s.jobs.group[j.ix()],
            phase,
            conditions,
            running,
            succeeded,
            failed,
            changed,
        });
        for t in s.jobs.tasks(j) {
            let st = s.tasks.status[t.ix()];
            if !matches!(st, TaskStatus::Allocated | TaskStatus::Pending | TaskStatus::Pipelined)
                || s.tasks.rec[t.ix()].spec.scheduling_gated
            {
                continue;
            }
            let (reason, mut message) = task_reason(s, j, t);
            if message.is_empty() {
                message = "all nodes are unavailable".into();
            }
            out.unschedulable.push(PodCondition { pod: s.tasks.pod[t.ix()], reason, message });
        }
    }
    // Queue status.allocated: Σ Resreq of allocated-status tasks per queue, also added to every
    // ancestor up to root (volcano-behaviour.md §1.7; the tree of `spec.parent` when it is valid).
    let dims = s.dims;
    let mut alloc = vec![0i64; s.queues.len * dims];
    for t in (0..s.tasks.len).map(|i| TaskIdx(i as u32)) {
        let Some(j) = s.tasks.job_of(t) else { continue };
        if !s.tasks.status[t.ix()].allocated() {
            continue;
        }
        let q = s.jobs.queue[j.ix()] as usize;
        let vgpu = vgpu_queue_usage(s, t);
        for (d, v) in s.tasks.req(t, dims).iter().enumerate() {
            let v = match vgpu {
                Some((dm, _, mem, _)) if dm == Some(d) => mem,
                Some((_, dc, _, cores)) if dc == Some(d) => cores,
                _ => *v,
            };
            alloc[q * dims + d] = alloc[q * dims + d].saturating_add(v);
        }
    }
    let own = alloc.clone();
    for q in 0..s.queues.len {
        for p in s.queues.acct.ancestors(QueueIdx(q as u32)) {
            for d in 0..dims {
                alloc[p.ix() * dims + d] = alloc[p.ix() * dims + d].saturating_add(own[q * dims + d]);
            }
        }
    }
    for q in 0..s.queues.len {
        let mut list = ResourceList::new();
        for d in 0..dims {
            let v = alloc[q * dims + d];
            if v != 0 || d < 2 {
                list.insert(s.cluster.resources.name(d).to_string(), v);
            }
        }
        out.queues.push(QueueStatus { name: s.queues.rec[q].spec.name.clone(), allocated: list });
    }
    out
}
