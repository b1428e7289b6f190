//! The virtual clock driver: replays a [`Workload`] on an in-memory core [`Cluster`] under one
//! [`SchedulerConf`], the same `run_cycle` that `basalt simulate` runs, and records what
//! happened ([`RunRecord`]).
//!
//! Each [`Engine::step`] picks the next cycle time ([`CyclePolicy`]), applies every event up
//! to it — completions before arrivals at one instant — then runs one cycle and applies its
//! decisions as a cluster would: a bound pod runs (phase Running on its node) until its
//! duration has passed, then turns Succeeded, which frees its resources; when every pod of a
//! job has finished, the pods and the PodGroup are deleted (as a job controller's clean-up
//! would) so that sessions stay the size of the live cluster. PodGroups take the status the
//! scheduler writes when it changed. Evictions (preempt, reclaim) delete the pod at once.
//!
//! Deterministic: cycle `i` (1-based) runs with seed `seed + i − 1`; wall-clock time is only
//! measured, never used to decide.

use super::clock::{CyclePolicy, Event, Events, MAX_CYCLES_PER_INSTANT, MAX_STATUS_ONLY_CYCLES};
use super::record::{CycleSample, Dims, JobRecord, QueueInfo, RunRecord, TaskRecord, UsagePoint, NDIMS};
use super::workload::{VirtualMs, Workload, GPU_MILLI, NVIDIA_GPU};
use basalt_core::cluster::{Cluster, Delta, PodId};
use basalt_core::conf::SchedulerConf;
use basalt_core::decision::Decisions;
use basalt_core::model::{PodPhase, PodSpec};
use basalt_core::resource::ResourceList;
use basalt_core::scheduler::{run_cycle_in, CycleOptions};
use std::collections::HashMap;
use std::time::Instant;

/// How to drive the clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EngineOptions {
    /// When cycles run.
    pub policy: CyclePolicy,
    /// Base seed of the cycles' tie-breaks.
    pub seed: u64,
}

/// Replays one workload under one conf, a cycle per [`Engine::step`].
pub struct Engine<'w> {
    w: &'w Workload,
    conf: SchedulerConf,
    opts: EngineOptions,
    cluster: Cluster,
    events: Events,
    arena: bumpalo::Bump,
    /// Global task index of the first task of each job.
    job_first: Vec<usize>,
    /// Pod id of each task while it is in the cluster.
    task_pod: Vec<Option<PodId>>,
    pod_task: HashMap<PodId, usize>,
    /// Job index by PodGroup (namespace, name).
    group_job: HashMap<(String, String), usize>,
    /// Tasks of each job not finished yet.
    job_open: Vec<usize>,
    used: Dims,
    queue_used: Vec<Dims>,
    queue_demand: Vec<Dims>,
    pending: usize,
    running: usize,
    rec: RunRecord,
    last_cycle: Option<VirtualMs>,
    dirty: bool,
    same_instant: u32,
    status_only: u32,
    events_done: usize,
}

/// The reported vector of a request list: cpu, memory, and `gpu`.
fn dims_of(r: &ResourceList, gpu: &str) -> Dims {
    let g = |k: &str| r.get(k).copied().unwrap_or(0);
    [g("cpu"), g("memory"), g(gpu)]
}

fn add(a: &mut Dims, b: &Dims, sign: i64) {
    for d in 0..NDIMS {
        a[d] += sign * b[d];
    }
}

impl<'w> Engine<'w> {
    /// An engine at time 0 with the workload's setup applied (refusals are recorded as apply
    /// issues).
    pub fn new(w: &'w Workload, conf: SchedulerConf, opts: EngineOptions) -> Self {
        let mut cluster = Cluster::new();
        let mut rec = RunRecord::default();
        for d in &w.setup {
            if let Err(e) = cluster.apply(d.clone()) {
                rec.apply_issues.push(format!("t=0 s: setup: {e}"));
            }
        }
        let gpu = if cluster.nodes().any(|(_, n)| n.spec.allocatable.contains_key(GPU_MILLI)) { GPU_MILLI } else { NVIDIA_GPU };
        rec.gpu_resource = gpu.to_string();
        for (_, n) in cluster.nodes().filter(|(_, n)| n.spec.ready) {
            add(&mut rec.total, &dims_of(&n.spec.allocatable, gpu), 1);
        }
        rec.queues = cluster.queues().map(|q| QueueInfo { name: q.spec.name.clone(), weight: q.spec.weight }).collect();
        let queue_index: HashMap<&str, usize> = rec.queues.iter().enumerate().map(|(i, q)| (q.name.as_str(), i)).collect();
        let mut job_first = Vec::with_capacity(w.jobs.len());
        for (j, job) in w.jobs.iter().enumerate() {
            let q = if job.group.queue.is_empty() { conf.options.default_queue.as_str() } else { job.group.queue.as_str() };
            let queue = queue_index.get(q).copied();
            let start = rec.tasks.len();
            job_first.push(start);
            for t in &job.tasks {
                rec.tasks.push(TaskRecord { job: j, queue, request: dims_of(&t.pod.resreq, gpu), ..Default::default() });
            }
            rec.jobs.push(JobRecord { arrival_ms: job.arrival_ms, done_ms: None, tasks: start..rec.tasks.len() });
        }
        let nq = rec.queues.len();
        let nt = rec.tasks.len();
        Engine {
            w,
            conf,
            opts,
            cluster,
            events: Events::new(w),
            arena: bumpalo::Bump::new(),
            job_open: w.jobs.iter().map(|j| j.tasks.len()).collect(),
            job_first,
            task_pod: vec![None; nt],
            pod_task: HashMap::with_capacity(nt),
            group_job: w.jobs.iter().enumerate().map(|(j, x)| ((x.group.namespace.clone(), x.group.name.clone()), j)).collect(),
            used: [0; NDIMS],
            queue_used: vec![[0; NDIMS]; nq],
            queue_demand: vec![[0; NDIMS]; nq],
            pending: 0,
            running: 0,
            rec,
            last_cycle: None,
            dirty: false,
            same_instant: 0,
            status_only: 0,
            events_done: 0,
        }
    }

    /// The cluster as it stands (after the last cycle's decisions).
    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }

    /// What has been recorded so far.
    pub fn record(&self) -> &RunRecord {
        &self.rec
    }

    /// (events applied, events applied + still to come) — completions are only known once
    /// their pod is bound, so the total grows.
    pub fn progress(&self) -> (usize, usize) {
        (self.events_done, self.events_done + self.events.remaining())
    }

    /// Virtual time of the last cycle (ms).
    pub fn now(&self) -> VirtualMs {
        self.last_cycle.unwrap_or(0)
    }

    /// Pods created and not bound.
    pub fn pending(&self) -> usize {
        self.pending
    }

    /// Runs the next cycle (applying the events before it). Returns false, doing nothing, when
    /// the replay is over: no event is left and the last cycle changed nothing.
    pub fn step(&mut self) -> bool {
        let policy = self.opts.policy;
        let t = match (self.dirty, policy, self.last_cycle) {
            (true, CyclePolicy::Period(p), Some(last)) => last + p.max(1),
            (true, CyclePolicy::OnEvents, Some(last)) => last,
            _ => match self.events.next_time() {
                None => return false,
                Some(e) => policy.tick_at_or_after(e.max(self.last_cycle.unwrap_or(0))),
            },
        };
        self.advance_to(t);
        self.cycle(t);
        true
    }

    /// Runs every remaining step and returns the record.
    pub fn run(mut self) -> RunRecord {
        while self.step() {}
        self.finish()
    }

    /// Ends the replay: the record, with its end time set.
    pub fn finish(mut self) -> RunRecord {
        self.rec.end_ms = self.rec.end_ms.max(self.last_cycle.unwrap_or(0));
        self.rec
    }

    fn issue(&mut self, t: VirtualMs, msg: String) {
        self.rec.apply_issues.push(format!("t={} s: {msg}", super::clock::fmt_seconds(t)));
    }

    fn apply(&mut self, t: VirtualMs, d: Delta) -> bool {
        match self.cluster.apply(d) {
            Ok(()) => true,
            Err(e) => {
                self.issue(t, e.to_string());
                false
            }
        }
    }

    fn push_usage(&mut self, t: VirtualMs) {
        let point = UsagePoint { t_ms: t, used: self.used, queue_used: self.queue_used.clone() };
        match self.rec.usage.last_mut() {
            Some(last) if last.t_ms == t => *last = point,
            Some(last) if last.used == point.used && last.queue_used == point.queue_used => {}
            _ => self.rec.usage.push(point),
        }
    }

    /// Applies every event up to `t`, in order.
    fn advance_to(&mut self, t: VirtualMs) {
        while let Some((at, ev)) = self.events.pop_until(t) {
            self.events_done += 1;
            self.rec.end_ms = self.rec.end_ms.max(at);
            match ev {
                Event::Arrival(a) => self.arrive(at, a.job, a.task),
                Event::Completion(task) => self.complete(at, task),
            }
            self.push_usage(at);
            self.dirty = true;
        }
    }

    fn arrive(&mut self, at: VirtualMs, job: usize, task: Option<usize>) {
        let w = self.w;
        let Some(k) = task else {
            let mut g = w.jobs[job].group.clone();
            g.creation_ms = at;
            self.apply(at, Delta::PodGroup(g));
            return;
        };
        let ti = self.job_first[job] + k;
        let spec = &w.jobs[job].tasks[k];
        let mut pod: PodSpec = spec.pod.clone();
        pod.creation_ms = at;
        let (ns, name) = (pod.namespace.clone(), pod.name.clone());
        if !self.apply(at, Delta::Pod(pod)) {
            self.rec.tasks[ti].last_reason = Some("the cluster refused the pod (see apply issues)".into());
            return;
        }
        let Some(id) = self.cluster.pod_id(&ns, &name) else { return };
        self.task_pod[ti] = Some(id);
        self.pod_task.insert(id, ti);
        let r = self.rec.tasks[ti].request;
        let q = self.rec.tasks[ti].queue;
        self.rec.tasks[ti].arrival_ms = Some(at);
        if let Some(q) = q {
            add(&mut self.queue_demand[q], &r, 1);
        }
        if spec.pre_placed() {
            self.rec.tasks[ti].pre_placed = true;
            self.rec.tasks[ti].node = Some(spec.pod.node_name.clone());
            self.start(at, ti);
        } else {
            self.pending += 1;
        }
    }

    /// A pod starts running at `at`: count it and schedule its completion.
    fn start(&mut self, at: VirtualMs, ti: usize) {
        let r = self.rec.tasks[ti].request;
        self.rec.tasks[ti].bind_ms = Some(at);
        add(&mut self.used, &r, 1);
        if let Some(q) = self.rec.tasks[ti].queue {
            add(&mut self.queue_used[q], &r, 1);
        }
        self.running += 1;
        let job = self.rec.tasks[ti].job;
        let k = ti - self.job_first[job];
        if let Some(d) = self.w.jobs[job].tasks[k].duration_ms {
            self.events.complete_at(at.saturating_add(d.max(0)), ti);
        }
    }

    fn complete(&mut self, at: VirtualMs, ti: usize) {
        if self.rec.tasks[ti].evicted_ms.is_some() {
            return;
        }
        let r = self.rec.tasks[ti].request;
        self.rec.tasks[ti].done_ms = Some(at);
        add(&mut self.used, &r, -1);
        if let Some(q) = self.rec.tasks[ti].queue {
            add(&mut self.queue_used[q], &r, -1);
            add(&mut self.queue_demand[q], &r, -1);
        }
        self.running -= 1;
        let job = self.rec.tasks[ti].job;
        self.job_open[job] -= 1;
        if self.job_open[job] == 0 {
            self.rec.jobs[job].done_ms = Some(at);
            for t in self.rec.jobs[job].tasks.clone() {
                if let Some(id) = self.task_pod[t].take() {
                    self.pod_task.remove(&id);
                    let p = &self.w.jobs[job].tasks[t - self.job_first[job]].pod;
                    let d = Delta::PodDeleted { namespace: p.namespace.clone(), name: p.name.clone() };
                    self.apply(at, d);
                }
            }
            let g = &self.w.jobs[job].group;
            let d = Delta::PodGroupDeleted { namespace: g.namespace.clone(), name: g.name.clone() };
            self.apply(at, d);
        } else if let Some(p) = self.task_pod[ti].and_then(|id| self.cluster.pod(id)) {
            let mut spec = p.spec.clone();
            spec.phase = PodPhase::Succeeded;
            self.apply(at, Delta::Pod(spec));
        }
    }

    /// An evicted pod is gone: its resources are freed and it never completes (nothing
    /// re-creates it).
    fn evict(&mut self, t: VirtualMs, ti: usize) {
        let r = self.rec.tasks[ti].request;
        let q = self.rec.tasks[ti].queue;
        if let Some(q) = q {
            add(&mut self.queue_demand[q], &r, -1);
        }
        if self.rec.tasks[ti].bind_ms.is_some() && self.rec.tasks[ti].done_ms.is_none() {
            add(&mut self.used, &r, -1);
            if let Some(q) = q {
                add(&mut self.queue_used[q], &r, -1);
            }
            self.running -= 1;
        } else if self.rec.tasks[ti].bind_ms.is_none() {
            self.pending -= 1;
        }
        self.task_pod[ti] = None;
        self.rec.tasks[ti].evicted_ms = Some(t);
    }

    fn cycle(&mut self, t: VirtualMs) {
        let n = self.rec.cycle_wall_ns.len() as u64;
        // Objects carry virtual creation times, so "now" is the virtual clock (0 at the very
        // start: unknown, time-based rules off).
        let opts = CycleOptions { seed: self.opts.seed.wrapping_add(n), cycle: n + 1, now_ms: t };
        self.arena.reset();
        let started = Instant::now();
        let d = run_cycle_in(&self.arena, &self.cluster, &self.conf, &opts);
        self.rec.cycle_wall_ns.push(started.elapsed().as_nanos().min(u64::MAX as u128) as u64);
        let changed_groups = self.apply_decisions(t, &d);
        self.push_usage(t);
        self.rec.samples.push(CycleSample {
            t_ms: t,
            binds: d.binds.len(),
            pending: self.pending,
            running: self.running,
            used: self.used,
            queue_used: self.queue_used.clone(),
            queue_demand: self.queue_demand.clone(),
        });
        let same = self.last_cycle == Some(t);
        self.same_instant = if same { self.same_instant + 1 } else { 1 };
        self.last_cycle = Some(t);
        let acted = !d.binds.is_empty() || !d.evictions.is_empty();
        self.status_only = if acted { 0 } else { self.status_only + u32::from(changed_groups > 0) };
        self.dirty = match self.opts.policy {
            CyclePolicy::Period(_) => acted || (changed_groups > 0 && self.status_only <= MAX_STATUS_ONLY_CYCLES),
            CyclePolicy::OnEvents => acted && self.same_instant < MAX_CYCLES_PER_INSTANT,
        };
    }

    /// Applies a cycle's decisions; returns how many PodGroup statuses changed.
    fn apply_decisions(&mut self, t: VirtualMs, d: &Decisions) -> usize {
        let mut deltas = Vec::with_capacity(d.binds.len() + d.evictions.len());
        for b in &d.binds {
            let (Some(&ti), Some(p), Some(n)) = (self.pod_task.get(&b.pod), self.cluster.pod(b.pod), self.cluster.node(b.node))
            else {
                self.issue(t, format!("bind of unknown pod #{} or node #{}", b.pod.0, b.node.0));
                continue;
            };
            let mut spec = p.spec.clone();
            spec.node_name = n.spec.name.clone();
            spec.phase = PodPhase::Running;
            self.rec.tasks[ti].node = Some(n.spec.name.clone());
            self.rec.tasks[ti].last_reason = None;
            self.pending -= 1;
            self.start(t, ti);
            deltas.push(Delta::Pod(spec));
        }
        for e in &d.evictions {
            self.rec.evictions.push(e.reason.clone());
            if let Some(p) = self.cluster.pod(e.pod) {
                deltas.push(Delta::PodDeleted { namespace: p.spec.namespace.clone(), name: p.spec.name.clone() });
            }
            if let Some(ti) = self.pod_task.remove(&e.pod) {
                self.evict(t, ti);
            }
        }
        let mut changed = 0;
        for s in d.pod_groups.iter().filter(|s| s.changed) {
            if let Some(g) = self.cluster.pod_group(s.group) {
                let mut spec = g.spec.clone();
                spec.phase = s.phase;
                spec.conditions = s.conditions.clone();
                deltas.push(Delta::PodGroup(spec));
                changed += 1;
            }
        }
        for c in &d.unschedulable {
            if let Some(&ti) = self.pod_task.get(&c.pod) {
                let slot = &mut self.rec.tasks[ti].last_reason;
                if slot.as_deref() != Some(c.message.as_str()) {
                    *slot = Some(c.message.clone());
                }
            }
        }
        // numa-aware's CPUs for the pods just bound, kept until the pods end (replay has no
        // resource exporter to list them in the Numatopologies).
        deltas.extend(d.numa_deltas(&self.cluster));
        // The rescheduling strategies ran this cycle: their interval counts from now.
        if let Some(at_ms) = d.rescheduled_ms {
            deltas.push(Delta::Rescheduled { at_ms });
        }
        for (g, reason) in &d.skipped {
            let Some(rec) = self.cluster.pod_group(*g) else { continue };
            let key = (rec.spec.namespace.clone(), rec.spec.name.clone());
            let Some(&job) = self.group_job.get(&key) else { continue };
            for ti in self.rec.jobs[job].tasks.clone() {
                if self.rec.tasks[ti].bind_ms.is_none() && self.rec.tasks[ti].last_reason.is_none() {
                    self.rec.tasks[ti].last_reason = Some(reason.clone());
                }
            }
        }
        for delta in deltas {
            self.apply(t, delta);
        }
        changed
    }
}
