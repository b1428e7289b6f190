//! One live scheduling cycle and what follows it: open a session on the mirror, run the conf's
//! actions, close, then turn the decisions into API work (Volcano `runOnce` + `CloseSession` +
//! the cache's bind and status paths, volcano-behaviour.md §1.1, §1.6, §1.7):
//! * each bind is assumed on the mirror at once and sent to the binder;
//! * each pending pod's `PodScheduled=False` condition is written when it changed, with a
//!   `FailedScheduling` Warning event; a preemptor pipelined on a node where victims were
//!   evicted for it gets that node as `status.nominatedNodeName` in the same write, only when
//!   it differs from the pod's, and the field is never cleared (Volcano `taskUnschedulable`);
//! * each PodGroup whose status changed is updated (one write in flight per PodGroup);
//! * each Queue whose `status.allocated` changed is updated;
//! * PodGroup events are recorded, an identical repeat within [`EVENT_REPEAT_WINDOW`] left out
//!   (client-go's event correlator folds such repeats into the first event's count).
//!
//! Results of binds and writes come back as [`Input`]s and are applied between cycles.

use super::binder::{BindOutcome, BindResult};
use super::gate_removal::GateRequest;
use super::metrics::{PluginPhase, TaskStage};
use super::mirror::{BindRequest, Key, Mirror, Object, PodScheduled, WatchEvent};
use super::status::{self, Involved, Write, WriteResult};
use crate::convert::resources::{amount, format_list};
use crate::recorder::cycle_recorder::CycleRecorder;
use basalt_core::cluster::{NodeId, PodId};
use basalt_core::conf::SchedulerConf;
use basalt_core::decision::{Decisions, PodGroupStatus, PreemptionStats, QueueShare};
use basalt_core::resource::ResourceList;
use basalt_core::scheduler::{run_cycle_observed, CycleOptions, CyclePhase};
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// An identical event on the same object within this window is not recorded again.
pub const EVENT_REPEAT_WINDOW: Duration = Duration::from_secs(600);

/// What reaches the scheduling loop between cycles. Messages are consumed at once; the bind
/// and write results are a little larger than a boxed watch event, which is not worth another
/// allocation per message.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Input {
    /// A watch event.
    Watch(WatchEvent),
    /// A bind finished.
    Bind(BindResult),
    /// A status write finished.
    Write(WriteResult),
}

/// Where the loop sends API work.
pub trait Outputs {
    /// Sends a bind.
    fn bind(&self, r: BindRequest);
    /// Sends a status write.
    fn write(&self, w: Write);
    /// Queues a removal of Volcano's scheduling gate ([`super::gate_removal`]) without waiting.
    /// The default has no gate-removal workers and logs the request it cannot carry out.
    fn remove_gate(&self, r: GateRequest) {
        tracing::warn!(pod = %format!("{}/{}", r.namespace, r.name), "no gate-removal workers: the gate is not removed");
    }
}

/// Timings and counts of one cycle.
#[derive(Clone, Debug, Default)]
pub struct CycleSummary {
    /// Session open, ms.
    pub open_ms: f64,
    /// Each action's time, ms, in conf order.
    pub actions: Vec<(&'static str, f64)>,
    /// Session close, ms.
    pub close_ms: f64,
    /// Open to the last API request queued, ms (Volcano's e2e scheduling latency).
    pub total_ms: f64,
    /// Binds decided.
    pub binds: usize,
    /// Pods left pending with a condition.
    pub unschedulable: usize,
    /// Writes queued (conditions, PodGroups, Queues, events).
    pub writes: usize,
    /// Binds decided and unconfirmed after this cycle.
    pub assumed: usize,
    /// Each plugin's `OnSessionOpen` and `OnSessionClose` time, ms, in the order they ran
    /// (Volcano's `plugin_scheduling_latency{plugin,OnSession}`).
    pub plugins: Vec<(&'static str, PluginPhase, f64)>,
    /// Pods left `Unschedulable` (reason `Unschedulable`, not the `Schedulable` of allocated
    /// tasks waiting for their gang).
    pub unschedulable_pods: usize,
    /// PodGroups the gang plugin found not ready, by name, with their unready task count.
    pub unready_jobs: Vec<(String, u64)>,
    /// The proportion plugin's queue accounting at close.
    pub queues: Vec<QueueShare>,
    /// Task-stage latencies since the previous cycle: (stage, ms from the pod's creation).
    pub task_stages: Vec<(TaskStage, f64)>,
    /// Bind stage durations since the previous cycle, ms: from the decision (pod assumed) to
    /// the binding accepted.
    pub bind_stage_ms: Vec<f64>,
    /// Binds that failed for good since the previous cycle.
    pub bind_errors: u64,
    /// Pods whose `status.nominatedNodeName` this cycle wrote.
    pub nominated: usize,
    /// The eviction actions' counters (Volcano's preemption metrics).
    pub preemption: PreemptionStats,
    /// Gate removals queued for the gate-removal workers this cycle (a pod decided again while
    /// its removal is still queued or in flight is counted, not queued twice).
    pub gate_removals: usize,
}

/// How long a decided bind's start is kept waiting for its result (the binder always reports
/// one; this only bounds the memory if it cannot, e.g. on shutdown).
const BIND_TRACK_LIMIT: Duration = Duration::from_secs(600);

/// Milliseconds since the Unix epoch, now (wall clock, as `creationTimestamp`).
fn epoch_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// The live scheduler's state between cycles.
#[derive(Debug)]
pub struct Scheduler {
    /// The cluster copy.
    pub mirror: Mirror,
    seed: u64,
    cycle_base: u64,
    cycles: u64,
    arena: bumpalo::Bump,
    events: HashMap<(Key, &'static str), (String, String, Instant)>,
    pod_groups_in_flight: HashSet<Key>,
    queues_in_flight: HashSet<String>,
    queues_written: HashMap<String, ResourceList>,
    /// Binds decided and not reported yet: the pod's `creationTimestamp` (ms since the epoch,
    /// 0 unset) and when it was assumed.
    binds_started: HashMap<Key, (i64, Instant)>,
    /// Task-stage samples since the last cycle.
    task_stages: Vec<(TaskStage, f64)>,
    /// Bind stage samples since the last cycle, ms.
    bind_stage_ms: Vec<f64>,
    /// Bind failures since the last cycle.
    bind_errors: u64,
    /// Binds confirmed by the API so far.
    pub bound: u64,
    /// Binds that failed for good so far.
    pub bind_failures: u64,
    /// Status writes that failed so far.
    pub write_failures: u64,
    recorder: Option<Box<dyn CycleRecorder>>,
    /// The network topology's problems as last found (see [`Scheduler::check_topology`]).
    pub topology_issues: Vec<String>,
    /// The NodeShard's problems as last found (see [`Scheduler::check_shard`]).
    pub shard_issues: Vec<String>,
    /// The NodeShard status last written (`nodesInUse`, `nodesToAdd`, `nodesToRemove`).
    shard_status: Option<[Vec<String>; 3]>,
}

impl Scheduler {
    /// A scheduler over `mirror`; cycle `i` uses seed `seed + i`. `cycle_base` makes session
    /// ids (`transitionID`) unique across restarts.
    pub fn new(mirror: Mirror, seed: u64, cycle_base: u64) -> Self {
        Scheduler {
            mirror,
            seed,
            cycle_base,
            cycles: 0,
            arena: bumpalo::Bump::new(),
            events: HashMap::new(),
            pod_groups_in_flight: HashSet::new(),
            queues_in_flight: HashSet::new(),
            queues_written: HashMap::new(),
            binds_started: HashMap::new(),
            task_stages: Vec::new(),
            bind_stage_ms: Vec::new(),
            bind_errors: 0,
            bound: 0,
            bind_failures: 0,
            write_failures: 0,
            recorder: None,
            topology_issues: Vec::new(),
            shard_issues: Vec::new(),
            shard_status: None,
        }
    }

    /// Records every cycle from now on with `r` (turns the mirror's delta journal on; set it
    /// before the first watch event so the recording starts from an empty cluster).
    pub fn set_recorder(&mut self, r: Box<dyn CycleRecorder>) {
        self.mirror.set_journal(true);
        self.recorder = Some(r);
    }

    /// Stops recording and returns the recorder (its drop finishes the recording).
    pub fn take_recorder(&mut self) -> Option<Box<dyn CycleRecorder>> {
        self.mirror.set_journal(false);
        self.recorder.take()
    }

    /// Cycles run so far.
    pub fn cycles(&self) -> u64 {
        self.cycles
    }

    /// Applies one input. Binds and writes that finish may queue follow-up writes (the
    /// `Scheduled` event, the `SchedulerError` condition).
    pub fn handle(&mut self, input: Input, out: &dyn Outputs) {
        match input {
            Input::Watch(ev) => {
                self.mirror.handle(ev);
            }
            Input::Bind(r) => self.on_bind(r, out),
            Input::Write(r) => self.on_write(r),
        }
    }

    fn pod_involved(&self, r: &BindRequest) -> Involved {
        Involved { kind: "Pod", api_version: "v1", namespace: r.namespace.clone(), name: r.name.clone(), uid: r.uid.clone() }
    }

    fn on_bind(&mut self, r: BindResult, out: &dyn Outputs) {
        let req = r.request;
        let started = self.binds_started.remove(&(req.namespace.clone(), req.name.clone()));
        match r.outcome {
            BindOutcome::Bound => {
                self.bound += 1;
                if let Some((created, at)) = started {
                    self.bind_stage_ms.push(ms(at.elapsed()));
                    if created > 0 {
                        self.task_stages.push((TaskStage::Bound, (epoch_ms() - created).max(0) as f64));
                    }
                }
                out.write(Write::Event {
                    involved: self.pod_involved(&req),
                    type_: "Normal",
                    reason: "Scheduled".into(),
                    message: format!("Successfully assigned {}/{} to {}", req.namespace, req.name, req.node),
                });
            }
            BindOutcome::Failed(err) => {
                self.bind_failures += 1;
                self.bind_errors += 1;
                let message = format!("failed to bind to node {}: {err}", req.node);
                tracing::warn!(pod = %format!("{}/{}", req.namespace, req.name), "{message}");
                if self.mirror.bind_failed(&req) {
                    let key = (req.namespace.clone(), req.name.clone());
                    let cond: PodScheduled = ("False".into(), "SchedulerError".into(), message.clone());
                    self.mirror.note_written(&key, &req.uid, cond);
                    out.write(Write::PodCondition {
                        namespace: req.namespace.clone(),
                        name: req.name.clone(),
                        uid: req.uid.clone(),
                        reason: "SchedulerError".into(),
                        message: message.clone(),
                        nominated: None,
                    });
                    out.write(Write::Event {
                        involved: self.pod_involved(&req),
                        type_: "Warning",
                        reason: "FailedScheduling".into(),
                        message,
                    });
                }
            }
        }
    }

    fn on_write(&mut self, r: WriteResult) {
        match r.kind {
            "podgroup" => {
                let key = split_key(&r.object);
                self.pod_groups_in_flight.remove(&key);
            }
            "queue_status" => {
                self.queues_in_flight.remove(&r.object);
            }
            _ => {}
        }
        match r.outcome {
            Ok(Some(obj)) => {
                // The server's answer is the newest version: take it now rather than wait for
                // the watch, so the next cycle compares against what was written.
                let o = if r.kind == "podgroup" { Object::PodGroup(Box::new(obj)) } else { Object::Queue(Box::new(obj)) };
                self.mirror.handle(WatchEvent::Apply(o));
            }
            Ok(None) => {}
            Err(e) => {
                self.write_failures += 1;
                if r.kind == "queue_status" {
                    self.queues_written.remove(&r.object);
                }
                if r.kind == "nodeshard_status" {
                    // Written again at the next cycle.
                    self.shard_status = None;
                }
                tracing::warn!(kind = r.kind, object = %r.object, "status write failed: {e}");
            }
        }
    }

    /// Runs one cycle with `conf` and queues its API work on `out`.
    pub fn run_cycle(&mut self, conf: &SchedulerConf, out: &dyn Outputs) -> CycleSummary {
        let t0 = Instant::now();
        // "Now" for the time-based plugin rules (sla): the wall clock at cycle start.
        let opts = CycleOptions {
            seed: self.seed.wrapping_add(self.cycles),
            cycle: self.cycle_base + self.cycles + 1,
            now_ms: epoch_ms(),
        };
        self.cycles += 1;
        self.check_topology();
        self.check_shard(conf, out);
        self.mirror.cluster.prepare(&conf.options.default_queue);
        let mut summary = CycleSummary::default();
        self.arena.reset();
        // The core's own cycle; the observer only reads the clock between its phases. A plugin's
        // time runs from the previous phase boundary to its own; open, each action and close
        // from the end of the previous one (open: from the start).
        let start = Instant::now();
        let (mut mark, mut phase_start) = (start, start);
        let decisions = run_cycle_observed(&self.arena, &self.mirror.cluster, conf, &opts, |phase| {
            let now = Instant::now();
            let since_mark = ms(now.duration_since(mark));
            mark = now;
            match phase {
                CyclePhase::TablesBuilt => {}
                CyclePhase::PluginOpened(p) => summary.plugins.push((p, PluginPhase::OnSessionOpen, since_mark)),
                CyclePhase::Opened => {
                    summary.open_ms = ms(now.duration_since(start));
                    phase_start = now;
                }
                CyclePhase::ActionDone(a) => {
                    summary.actions.push((a.name(), ms(now.duration_since(phase_start))));
                    phase_start = now;
                }
                CyclePhase::PluginClosed(p) => summary.plugins.push((p, PluginPhase::OnSessionClose, since_mark)),
                CyclePhase::Closed => summary.close_ms = ms(now.duration_since(phase_start)),
            }
        });
        if let Some(r) = self.recorder.as_mut() {
            r.cycle(self.mirror.take_journal(), &self.mirror.cluster, conf, &opts, &decisions);
        }
        self.apply_decisions(&decisions, out, &mut summary);
        summary.assumed = self.mirror.assumed().len();
        summary.task_stages.append(&mut self.task_stages);
        summary.bind_stage_ms.append(&mut self.bind_stage_ms);
        summary.bind_errors = std::mem::take(&mut self.bind_errors);
        let now = Instant::now();
        self.binds_started.retain(|_, (_, at)| now.duration_since(*at) < BIND_TRACK_LIMIT);
        summary.total_ms = ms(t0.elapsed());
        summary
    }

    /// When the network topology's inputs changed since the last cycle (a HyperNode added,
    /// changed or deleted, a node added, removed or relabelled, a topology PodGroup changed),
    /// resolves the HyperNode tree over the cluster and logs each problem that was not already
    /// there, once, as a warning naming object and field
    /// ([`basalt_core::session::topology::cluster_issues`]): a cycle, a second parent, an
    /// unknown member, a regex that does not compile, a tier name no HyperNode has, a
    /// `highestTierAllowed` above the top tier. An invalid tree never stops the loop: topology
    /// jobs wait (as in Volcano), the others are scheduled. A tree that becomes valid again is
    /// logged too.
    pub fn check_topology(&mut self) {
        if !self.mirror.take_topology_changed() {
            return;
        }
        let now = basalt_core::session::topology::cluster_issues(&self.mirror.cluster);
        for i in now.iter().filter(|i| !self.topology_issues.contains(i)) {
            tracing::warn!("network topology: {i}");
        }
        if now.is_empty() && !self.topology_issues.is_empty() {
            tracing::info!("network topology: the HyperNode tree and topology PodGroups are valid again");
        }
        self.topology_issues = now;
    }

    /// Node sharding's per-change work (nothing without `--scheduler-sharding-mode`, and
    /// nothing when neither the NodeShards nor the node set changed and the last status write
    /// did not fail): logs each new problem of
    /// this scheduler's NodeShard once, as a warning naming object and field
    /// ([`basalt_core::Cluster::shard_problems`]: no NodeShard of that name, unknown nodes in
    /// `spec.nodesDesired`), and writes the shard's status when it differs from the last one
    /// written (Volcano `RefreshNodeShards` → `UpdateNodeShardStatus`): `nodesInUse` = its
    /// `nodesDesired` minus the nodes other shards have in use, `nodesToAdd` = desired but not
    /// in use, `nodesToRemove` = in use but not desired. The membership itself applies to the
    /// session opened right after, whatever the status write does.
    pub fn check_shard(&mut self, conf: &SchedulerConf, out: &dyn Outputs) {
        let o = &conf.options;
        let changed = self.mirror.take_shard_changed();
        if o.sharding_mode == basalt_core::model::ShardingMode::None || !changed && self.shard_status.is_some() {
            return;
        }
        let c = &self.mirror.cluster;
        let now = c.shard_problems(&o.sharding_name);
        for p in now.iter().filter(|p| !self.shard_issues.contains(p)) {
            tracing::warn!("node sharding: {p}");
        }
        if now.is_empty() && !self.shard_issues.is_empty() {
            tracing::info!("node sharding: NodeShard {} is valid again", o.sharding_name);
        }
        self.shard_issues = now;
        let Some(spec) = c.node_shards().find(|s| s.name == o.sharding_name) else { return };
        let in_use = basalt_core::model::nodes_in_shard(c.node_shards(), &o.sharding_name).unwrap_or_default();
        let desired: std::collections::BTreeSet<&str> = spec.nodes_desired.iter().map(String::as_str).collect();
        let list = |it: &mut dyn Iterator<Item = &&str>| it.map(|s| s.to_string()).collect::<Vec<String>>();
        let status = [list(&mut in_use.iter()), list(&mut desired.difference(&in_use)), list(&mut in_use.difference(&desired))];
        if self.shard_status.as_ref() == Some(&status) {
            return;
        }
        let [nodes_in_use, nodes_to_add, nodes_to_remove] = status.clone();
        out.write(Write::NodeShardStatus { name: o.sharding_name.clone(), nodes_in_use, nodes_to_add, nodes_to_remove });
        self.shard_status = Some(status);
    }

    /// Turns one cycle's decisions into API work on `out` and counts it in `summary` (the
    /// apply step of [`Scheduler::run_cycle`]; public so tests can feed decisions the core
    /// does not make yet, e.g. evictions): evictions first (Statement commit order), then the
    /// binds (each assumed on the mirror), the pending pods' conditions, PodGroup statuses,
    /// PodGroup events and Queue `status.allocated`. Ids in `d` that the mirror no longer has
    /// are skipped. A cycle in which the `rescheduling` strategies ran is remembered on the
    /// mirror ([`Mirror::note_rescheduled`]), so their `interval` counts from it.
    pub fn apply_decisions(&mut self, d: &Decisions, out: &dyn Outputs, summary: &mut CycleSummary) {
        if let Some(at_ms) = d.rescheduled_ms {
            self.mirror.note_rescheduled(at_ms);
        }
        // Evictions first (Statement commit order): events on the pod and its PodGroup, then
        // the conditions and the delete (volcano-behaviour.md §1.6).
        for e in &d.evictions {
            let Some(p) = self.mirror.cluster.pod(e.pod) else { continue };
            let s = &p.spec;
            let involved = Involved {
                kind: "Pod",
                api_version: "v1",
                namespace: s.namespace.clone(),
                name: s.name.clone(),
                uid: s.uid.clone(),
            };
            out.write(Write::Event {
                involved,
                type_: "Warning",
                reason: "Evict".into(),
                message: format!("Pod is evicted, because of {}", e.reason),
            });
            if let Some(g) = s
                .group
                .as_ref()
                .and_then(|g| self.mirror.cluster.pod_group_id(&s.namespace, g))
                .and_then(|id| self.mirror.cluster.pod_group(id))
            {
                out.write(Write::Event {
                    involved: Involved {
                        kind: "PodGroup",
                        api_version: "scheduling.volcano.sh/v1beta1",
                        namespace: g.spec.namespace.clone(),
                        name: g.spec.name.clone(),
                        uid: g.spec.uid.clone(),
                    },
                    type_: "Normal",
                    reason: "Evict".into(),
                    message: e.reason.clone(),
                });
            }
            out.write(Write::Evict {
                namespace: s.namespace.clone(),
                name: s.name.clone(),
                uid: s.uid.clone(),
                reason: e.reason.clone(),
                scheduler: s.scheduler_name.clone(),
            });
            summary.writes += 3;
        }
        let now_ms = epoch_ms();
        // PodGroups with a bind in this cycle (their `Inqueue` update need not go first).
        let mut bound_groups: HashSet<(String, String)> = HashSet::new();
        // numa-aware's CPUs per bound pod, named before the binds change the mirror.
        let numa: HashMap<PodId, basalt_core::model::NumaAssumed> =
            d.numa_assignments.iter().filter_map(|a| Some((a.pod, a.named(&self.mirror.cluster)?))).collect();
        for b in &d.binds {
            let created = self.mirror.cluster.pod(b.pod).map_or(0, |p| p.spec.creation_ms);
            if let Some(p) = self.mirror.cluster.pod(b.pod) {
                if let Some(g) = &p.spec.group {
                    bound_groups.insert((p.spec.namespace.clone(), g.clone()));
                }
            }
            let vb = self.mirror.cluster.pod(b.pod).and_then(|p| {
                d.volume_bindings.iter().find(|v| v.namespace == p.spec.namespace && v.pod == p.spec.name).cloned()
            });
            if let Some(mut req) = self.mirror.assume(b.pod, b.node, &b.annotations) {
                if let Some(lock) = b.node_lock.as_ref() {
                    self.mirror.assume_node_lock(b.node, lock, now_ms);
                    req.node_lock = Some(lock.clone());
                }
                if let Some(vb) = vb {
                    self.mirror.assume_volumes(&vb);
                    req.volumes = Some(vb);
                }
                if let Some(a) = numa.get(&b.pod) {
                    self.mirror.assume_numa(a.clone());
                }
                if created > 0 {
                    summary.task_stages.push((TaskStage::Assumed, (now_ms - created).max(0) as f64));
                }
                self.binds_started.insert((req.namespace.clone(), req.name.clone()), (created, Instant::now()));
                out.bind(req);
                summary.binds += 1;
            }
        }
        for &(g, n) in &d.unready_jobs {
            if let Some(g) = self.mirror.cluster.pod_group(g) {
                summary.unready_jobs.push((g.spec.name.clone(), u64::from(n)));
            }
        }
        summary.queues.extend(d.queue_shares.iter().cloned());
        summary.preemption = d.preemption.clone();
        // Pods their queue admitted (`SchedulingGatesQueueAdmission`): the gate-removal workers
        // remove Volcano's gate; the watch then shows the pod ungated and a later cycle places it.
        for g in &d.gate_removals {
            let Some(p) = self.mirror.cluster.pod(g.pod) else { continue };
            out.remove_gate(GateRequest {
                namespace: p.spec.namespace.clone(),
                name: p.spec.name.clone(),
                uid: p.spec.uid.clone(),
            });
            summary.gate_removals += 1;
        }
        // Preemptors pipelined where victims were evicted for them: their nominated node
        // (Volcano `TaskSchedulingReason`: Pipelined with EvictionOccurred).
        let nominations: HashMap<PodId, NodeId> = d.pipelined.iter().filter(|x| x.nominated).map(|x| (x.pod, x.node)).collect();
        for c in &d.unschedulable {
            let Some(p) = self.mirror.cluster.pod(c.pod) else { continue };
            let key = (p.spec.namespace.clone(), p.spec.name.clone());
            let uid = p.spec.uid.clone();
            let want: PodScheduled = ("False".into(), c.reason.clone(), c.message.clone());
            summary.unschedulable += 1;
            if c.reason == "Unschedulable" {
                summary.unschedulable_pods += 1;
            }
            // Only a non-empty nomination that differs from the pod's is written; it is never
            // cleared (a later cycle that pipelines the pod without evicting leaves it).
            let nominated = nominations
                .get(&c.pod)
                .and_then(|&n| self.mirror.cluster.node(n))
                .map(|n| n.spec.name.clone())
                .filter(|n| self.mirror.nominated(&key) != n.as_str());
            let same = self.mirror.pod_scheduled(&key) == Some(&want);
            if same && nominated.is_none() {
                continue;
            }
            self.mirror.note_written(&key, &uid, want);
            if let Some(n) = &nominated {
                self.mirror.note_nominated(&key, &uid, n);
                summary.nominated += 1;
            }
            out.write(Write::PodCondition {
                namespace: key.0.clone(),
                name: key.1.clone(),
                uid: uid.clone(),
                reason: c.reason.clone(),
                message: c.message.clone(),
                nominated,
            });
            out.write(Write::Event {
                involved: Involved { kind: "Pod", api_version: "v1", namespace: key.0, name: key.1, uid },
                type_: "Warning",
                reason: "FailedScheduling".into(),
                message: c.message.clone(),
            });
            summary.writes += 2;
        }
        for s in &d.pod_groups {
            let Some(g) = self.mirror.cluster.pod_group(s.group) else { continue };
            let key = (g.spec.namespace.clone(), g.spec.name.clone());
            if self.pod_groups_in_flight.contains(&key) {
                continue;
            }
            let Some(current) = self.mirror.pod_group_object(&key) else { continue };
            // Volcano writes when any status field it maintains changed (phase, conditions,
            // running/succeeded/failed; volcano-behaviour.md §1.7), never an unchanged status.
            if !s.changed && !super::pod_group_counts::changed(&current.data, s) {
                continue;
            }
            let mut obj = current.clone();
            set_pod_group_status(&mut obj.data, s);
            let phase = obj.data.pointer("/status/phase").and_then(serde_json::Value::as_str).unwrap_or("");
            let waits_for_binds = status::pod_group_waits(phase, bound_groups.contains(&key));
            self.pod_groups_in_flight.insert(key);
            out.write(Write::PodGroup { object: Box::new(obj), waits_for_binds });
            summary.writes += 1;
        }
        let now = Instant::now();
        for e in &d.events {
            let Some(g) = self.mirror.cluster.pod_group(e.group) else { continue };
            let key = (g.spec.namespace.clone(), g.spec.name.clone());
            let slot = (key.clone(), e.kind);
            if let Some((r, m, at)) = self.events.get(&slot) {
                if *r == e.reason && *m == e.message && now.duration_since(*at) < EVENT_REPEAT_WINDOW {
                    continue;
                }
            }
            self.events.insert(slot, (e.reason.to_string(), e.message.to_string(), now));
            out.write(Write::Event {
                involved: Involved {
                    kind: "PodGroup",
                    api_version: "scheduling.volcano.sh/v1beta1",
                    namespace: key.0,
                    name: key.1,
                    uid: g.spec.uid.clone(),
                },
                type_: e.kind,
                reason: e.reason.to_string(),
                message: e.message.to_string(),
            });
            summary.writes += 1;
        }
        for q in &d.queues {
            if self.queues_in_flight.contains(&q.name) {
                continue;
            }
            let want = nonzero(&q.allocated);
            let seen = self.mirror.queue_object(&q.name).map(|o| watched_allocated(&o.data));
            let written = self.queues_written.get(&q.name);
            if seen.as_ref() == Some(&want) || (seen.is_none() && written == Some(&want)) {
                continue;
            }
            if self.mirror.queue_object(&q.name).is_none() {
                continue;
            }
            self.queues_in_flight.insert(q.name.clone());
            self.queues_written.insert(q.name.clone(), want.clone());
            out.write(Write::QueueAllocated { name: q.name.clone(), allocated: format_list(&want) });
            summary.writes += 1;
        }
        // Forget event memory of PodGroups that are gone.
        if self.events.len() > 2 * d.pod_groups.len() + 1024 {
            self.events.retain(|_, (_, _, at)| now.duration_since(*at) < EVENT_REPEAT_WINDOW);
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn split_key(s: &str) -> Key {
    match s.split_once('/') {
        Some((a, b)) => (a.to_string(), b.to_string()),
        None => (String::new(), s.to_string()),
    }
}

fn nonzero(l: &ResourceList) -> ResourceList {
    l.iter().filter(|(_, v)| **v != 0).map(|(k, v)| (k.clone(), *v)).collect()
}

/// A Queue object's `status.allocated` in core units (unreadable entries left out).
fn watched_allocated(obj: &serde_json::Value) -> ResourceList {
    let mut out = ResourceList::new();
    if let Some(m) = obj["status"]["allocated"].as_object() {
        for (k, v) in m {
            if let Some(q) = v.as_str().and_then(|q| amount(k, q).ok()).filter(|v| *v != 0) {
                out.insert(k.clone(), q);
            }
        }
    }
    out
}

/// Writes a decided PodGroup status into the object's `status`, keeping fields Basalt does
/// not model and each condition's `lastTransitionTime` when its status did not change.
pub fn set_pod_group_status(obj: &mut serde_json::Value, s: &PodGroupStatus) {
    let Some(o) = obj.as_object_mut() else { return };
    let status = o.entry("status").or_insert_with(|| serde_json::json!({}));
    if !status.is_object() {
        *status = serde_json::json!({});
    }
    let old: Vec<serde_json::Value> = status["conditions"].as_array().cloned().unwrap_or_default();
    let now = serde_json::to_value(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(k8s_openapi::jiff::Timestamp::now()))
        .unwrap_or(serde_json::Value::Null);
    let conditions: Vec<serde_json::Value> = s
        .conditions
        .iter()
        .map(|c| {
            let prev = old.iter().find(|p| p["type"] == c.kind.as_str() && p["status"] == c.status.as_str());
            let same = prev.is_some_and(|p| p["reason"] == c.reason.as_str() && p["message"] == c.message.as_str());
            let at = if same { prev.map(|p| p["lastTransitionTime"].clone()).unwrap_or(now.clone()) } else { now.clone() };
            // Volcano's condition fields are `omitempty`: an empty one is left out.
            let mut m = serde_json::Map::new();
            for (k, v) in [
                ("type", &c.kind),
                ("status", &c.status),
                ("transitionID", &c.transition_id),
                ("reason", &c.reason),
                ("message", &c.message),
            ] {
                if !v.is_empty() {
                    m.insert(k.into(), v.as_str().into());
                }
            }
            m.insert("lastTransitionTime".into(), at);
            serde_json::Value::Object(m)
        })
        .collect();
    status["phase"] = s.phase.as_str().into();
    status["conditions"] = conditions.into();
    status["running"] = s.running.into();
    status["succeeded"] = s.succeeded.into();
    status["failed"] = s.failed.into();
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_core::cluster::{Delta, PodGroupId};
    use basalt_core::decision::{Pipelined, PodCondition};
    use basalt_core::model::{PodGroupCondition, PodGroupPhase};
    use k8s_openapi::api::core::v1 as k8s;
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
    use kube::api::ObjectMeta;
    use std::sync::Mutex;

    /// Keeps the writes of an apply step.
    #[derive(Default)]
    struct Kept(Mutex<Vec<Write>>);

    impl Outputs for Kept {
        fn bind(&self, _: BindRequest) {}
        fn write(&self, w: Write) {
            self.0.lock().unwrap().push(w);
        }
    }

    impl Kept {
        /// The `(nominated, reason)` of each `PodCondition` write so far, then forgets them.
        fn conditions(&self) -> Vec<(Option<String>, String)> {
            let mut v = self.0.lock().unwrap();
            let out = v
                .iter()
                .filter_map(|w| match w {
                    Write::PodCondition { nominated, reason, .. } => Some((nominated.clone(), reason.clone())),
                    _ => None,
                })
                .collect();
            v.clear();
            out
        }
    }

    fn node(name: &str) -> Object {
        Object::Node(Box::new(k8s::Node {
            metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
            status: Some(k8s::NodeStatus {
                allocatable: Some([("cpu".to_string(), Quantity("2".into()))].into()),
                ..Default::default()
            }),
            ..Default::default()
        }))
    }

    fn pending_pod(nominated: Option<&str>) -> Object {
        Object::Pod(Box::new(k8s::Pod {
            metadata: ObjectMeta {
                name: Some("preemptor".into()),
                namespace: Some("ns".into()),
                uid: Some("u1".into()),
                ..Default::default()
            },
            spec: Some(k8s::PodSpec {
                scheduler_name: Some("volcano".into()),
                containers: vec![k8s::Container { name: "c".into(), ..Default::default() }],
                ..Default::default()
            }),
            status: Some(k8s::PodStatus {
                phase: Some("Pending".into()),
                nominated_node_name: nominated.map(str::to_string),
                ..Default::default()
            }),
        }))
    }

    /// volcano-behaviour.md §1.6: a preemptor pipelined where victims were evicted gets that
    /// node as `status.nominatedNodeName` with its condition, once; a later cycle that
    /// pipelines it without evicting does not clear it, and the watch's echo is not rewritten.
    #[test]
    fn nominated_node_is_written_once_and_never_cleared() {
        let mut m = Mirror::new(vec!["volcano".into()], vec![]);
        m.handle(WatchEvent::Apply(node("n1")));
        m.handle(WatchEvent::Apply(pending_pod(None)));
        let pod = m.cluster.pod_id("ns", "preemptor").unwrap();
        let n1 = m.cluster.node_id("n1").unwrap();
        let mut sch = Scheduler::new(m, 0, 0);
        let cond = PodCondition {
            pod,
            reason: "Unschedulable".into(),
            message: "Pod ns/preemptor can possibly be assigned to n1, once resource is released and minAvailable is satisfied"
                .into(),
        };
        let cycle = |nominated: bool| Decisions {
            pipelined: vec![Pipelined { pod, node: n1, nominated }],
            unschedulable: vec![cond.clone()],
            ..Decisions::default()
        };
        let out = Kept::default();
        let mut summary = CycleSummary::default();
        sch.apply_decisions(&cycle(true), &out, &mut summary);
        assert_eq!(out.conditions(), vec![(Some("n1".to_string()), "Unschedulable".to_string())]);
        assert_eq!(summary.nominated, 1);
        sch.apply_decisions(&cycle(true), &out, &mut summary);
        assert_eq!(out.conditions(), vec![], "nothing changed: nothing written");
        sch.apply_decisions(&cycle(false), &out, &mut summary);
        assert_eq!(out.conditions(), vec![], "pipelined without eviction: the nomination is kept, not cleared");
        sch.mirror.handle(WatchEvent::Apply(pending_pod(Some("n1"))));
        sch.apply_decisions(&cycle(true), &out, &mut summary);
        assert_eq!(out.conditions(), vec![], "the watch shows what was written");
        assert_eq!(summary.nominated, 1);
    }

    /// The rescheduling plugin's last run (volcano-behaviour.md §3, `interval`) reaches the
    /// mirror through its journal, so the flight recorder keeps it and the next cycle sees it.
    #[test]
    fn rescheduling_time_is_kept_on_the_mirror_and_journaled() {
        let mut m = Mirror::new(vec!["volcano".into()], vec![]);
        m.set_journal(true);
        m.handle(WatchEvent::Apply(node("n1")));
        let mut sch = Scheduler::new(m, 0, 0);
        sch.mirror.take_journal();
        let out = Kept::default();
        sch.apply_decisions(&Decisions::default(), &out, &mut CycleSummary::default());
        assert_eq!(sch.mirror.cluster.rescheduled_ms(), None);
        assert!(sch.mirror.take_journal().is_empty());
        let d = Decisions { rescheduled_ms: Some(1_700_000_000_000), ..Decisions::default() };
        sch.apply_decisions(&d, &out, &mut CycleSummary::default());
        assert_eq!(sch.mirror.cluster.rescheduled_ms(), Some(1_700_000_000_000));
        assert_eq!(sch.mirror.take_journal(), vec![Delta::Rescheduled { at_ms: 1_700_000_000_000 }]);
        // A real cycle on the wall clock: the first runs the strategies and records its time; one
        // right after is within the default 5m and leaves it.
        let conf = SchedulerConf::parse("actions: \"shuffle\"\ntiers:\n- plugins:\n  - name: rescheduling\n").unwrap().0;
        let mut m = Mirror::new(vec!["volcano".into()], vec![]);
        m.handle(WatchEvent::Apply(node("n1")));
        let mut sch = Scheduler::new(m, 0, 0);
        let before = epoch_ms();
        sch.run_cycle(&conf, &out);
        let first = sch.mirror.cluster.rescheduled_ms().expect("the first cycle runs the strategies");
        assert!(first >= before, "recorded at the cycle's start: {first} < {before}");
        sch.run_cycle(&conf, &out);
        assert_eq!(sch.mirror.cluster.rescheduled_ms(), Some(first));
    }

    #[test]
    fn a_different_nomination_is_written() {
        let mut m = Mirror::new(vec!["volcano".into()], vec![]);
        m.handle(WatchEvent::Apply(node("n1")));
        m.handle(WatchEvent::Apply(node("n2")));
        m.handle(WatchEvent::Apply(pending_pod(Some("n2"))));
        let pod = m.cluster.pod_id("ns", "preemptor").unwrap();
        let n1 = m.cluster.node_id("n1").unwrap();
        let mut sch = Scheduler::new(m, 0, 0);
        let d = Decisions {
            pipelined: vec![Pipelined { pod, node: n1, nominated: true }],
            unschedulable: vec![PodCondition { pod, reason: "Unschedulable".into(), message: "m".into() }],
            ..Decisions::default()
        };
        let out = Kept::default();
        sch.apply_decisions(&d, &out, &mut CycleSummary::default());
        assert_eq!(out.conditions(), vec![(Some("n1".to_string()), "Unschedulable".to_string())]);
    }

    fn status(msg: &str) -> PodGroupStatus {
        PodGroupStatus {
            group: PodGroupId(0),
            phase: PodGroupPhase::Running,
            conditions: vec![PodGroupCondition {
                kind: "Scheduled".into(),
                status: "True".into(),
                transition_id: "7".into(),
                reason: "tasks in gang are ready to be scheduled".into(),
                message: msg.into(),
            }],
            running: 2,
            succeeded: 0,
            failed: 1,
            changed: true,
        }
    }

    #[test]
    fn pod_group_status_is_written_whole_and_keeps_unknown_fields() {
        let mut obj = serde_json::json!({"spec": {"minMember": 2}, "status": {"phase": "Pending", "extra": 1}});
        set_pod_group_status(&mut obj, &status(""));
        let s = &obj["status"];
        assert_eq!(s["phase"], "Running");
        assert_eq!(s["extra"], 1, "fields Basalt does not model survive");
        assert_eq!((s["running"].as_i64(), s["failed"].as_i64()), (Some(2), Some(1)));
        let c = &s["conditions"][0];
        assert_eq!(c["type"], "Scheduled");
        assert_eq!(c["transitionID"], "7");
        assert!(c.get("message").is_none(), "empty fields are omitted: {c}");
        assert!(c["lastTransitionTime"].is_string(), "{c}");
    }

    #[test]
    fn unchanged_condition_keeps_its_transition_time() {
        let mut obj = serde_json::json!({"status": {"conditions": [{"type": "Scheduled", "status": "True", "reason": "tasks in gang are ready to be scheduled", "message": "", "lastTransitionTime": "2020-01-01T00:00:00Z"}]}});
        set_pod_group_status(&mut obj, &status(""));
        assert_eq!(obj["status"]["conditions"][0]["lastTransitionTime"], "2020-01-01T00:00:00Z");
        set_pod_group_status(&mut obj, &status("other"));
        assert_ne!(obj["status"]["conditions"][0]["lastTransitionTime"], "2020-01-01T00:00:00Z");
    }
}
