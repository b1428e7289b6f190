//! The plugin interface (Volcano `framework.Plugin` and the function types of
//! `framework/session_plugins.go`, volcano-behaviour.md §1.2, §1.5): the functions a plugin can
//! register ([`Fn`]), its answers ([`Vote`], [`Verdict`], [`Invalid`]), the [`Plugin`] trait and
//! the [`Registry`] type a session instantiates plugins from.

use super::k8s;
use crate::conf::{Flag, PluginOption, SchedulerConf};
use crate::kernels::masked_max::NodeMask;
use crate::session::devices::DeviceConf;
use crate::session::fit::Reason;
use crate::session::node_view::NodeView;
use crate::session::notes::CloseNotes;
use crate::session::tables::{JobIdx, NodeIdx, QueueIdx, TaskIdx};
use crate::session::State;
use std::cmp::Ordering;

/// A function a plugin can register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
#[allow(missing_docs)]
pub enum Fn {
    JobOrder,
    QueueOrder,
    TaskOrder,
    PrePredicate,
    Predicate,
    NodeOrder,
    BatchNodeOrder,
    Overused,
    Allocatable,
    JobReady,
    JobPipelined,
    JobEnqueueable,
    JobEnqueued,
    JobValid,
    JobStarving,
    Preemptable,
    Reclaimable,
    Preemptive,
    EventHandler,
    VictimTasks,
    VictimQueueOrder,
    UnifiedEvictable,
}

impl Fn {
    /// Every function, in declaration order.
    pub const ALL: [Fn; 22] = [
        Fn::JobOrder,
        Fn::QueueOrder,
        Fn::TaskOrder,
        Fn::PrePredicate,
        Fn::Predicate,
        Fn::NodeOrder,
        Fn::BatchNodeOrder,
        Fn::Overused,
        Fn::Allocatable,
        Fn::JobReady,
        Fn::JobPipelined,
        Fn::JobEnqueueable,
        Fn::JobEnqueued,
        Fn::JobValid,
        Fn::JobStarving,
        Fn::Preemptable,
        Fn::Reclaimable,
        Fn::Preemptive,
        Fn::EventHandler,
        Fn::VictimTasks,
        Fn::VictimQueueOrder,
        Fn::UnifiedEvictable,
    ];

    /// The enable flag that gates this function (None: always on, as in Volcano).
    pub fn flag(self) -> Option<Flag> {
        Some(match self {
            Fn::JobOrder => Flag::JobOrder,
            Fn::QueueOrder => Flag::QueueOrder,
            Fn::TaskOrder => Flag::TaskOrder,
            Fn::PrePredicate | Fn::Predicate => Flag::Predicate,
            Fn::NodeOrder | Fn::BatchNodeOrder => Flag::NodeOrder,
            Fn::Overused => Flag::Overused,
            Fn::Allocatable => Flag::Allocatable,
            Fn::JobReady => Flag::JobReady,
            Fn::JobPipelined => Flag::JobPipelined,
            Fn::JobEnqueueable | Fn::JobEnqueued => Flag::JobEnqueued,
            Fn::JobStarving => Flag::JobStarving,
            Fn::Preemptable => Flag::Preemptable,
            Fn::Reclaimable => Flag::Reclaimable,
            Fn::Preemptive => Flag::Preemptive,
            Fn::VictimTasks => Flag::Victim,
            // Volcano's `VictimQueueOrderFn` is gated by `enableQueueOrder`.
            Fn::VictimQueueOrder => Flag::QueueOrder,
            // Volcano's `UnifiedEvictableFn` (gangpreempt, gangreclaim) has no enable flag.
            Fn::JobValid | Fn::EventHandler | Fn::UnifiedEvictable => return None,
        })
    }

    /// Bit of this function in a registration mask.
    pub const fn bit(self) -> u32 {
        1 << (self as u8)
    }

    /// The function a [`Plugin`] method implements (`None` for `name` and `on_close`, which are
    /// not registered functions). `predicate_static`, `predicate_static_unmasked` and `predicate_dynamic` are parts of the
    /// predicate; `on_allocate`/`on_deallocate` form Volcano's event handler.
    pub fn of_method(method: &str) -> Option<Fn> {
        Some(match method {
            "job_order" => Fn::JobOrder,
            "queue_order" => Fn::QueueOrder,
            "task_order" => Fn::TaskOrder,
            "pre_predicate" => Fn::PrePredicate,
            "predicate" | "predicate_static" | "predicate_static_unmasked" | "predicate_dynamic" => Fn::Predicate,
            "node_order" => Fn::NodeOrder,
            "batch_node_order" => Fn::BatchNodeOrder,
            "overused" => Fn::Overused,
            "allocatable" => Fn::Allocatable,
            "job_ready" => Fn::JobReady,
            "job_pipelined" => Fn::JobPipelined,
            "job_enqueueable" => Fn::JobEnqueueable,
            "job_enqueued" => Fn::JobEnqueued,
            "job_valid" => Fn::JobValid,
            "job_starving" => Fn::JobStarving,
            "preemptable" => Fn::Preemptable,
            "reclaimable" => Fn::Reclaimable,
            "preemptive" => Fn::Preemptive,
            "victim_tasks" => Fn::VictimTasks,
            "victim_queue_order" => Fn::VictimQueueOrder,
            "unified_evictable" => Fn::UnifiedEvictable,
            "on_allocate" | "on_deallocate" => Fn::EventHandler,
            _ => return None,
        })
    }

    /// Mask of the functions the given [`Plugin`] methods implement (what `plugin_impl!` ([`crate::plugins`])
    /// registers).
    pub fn registered_by(methods: &[&str]) -> u32 {
        methods.iter().filter_map(|m| Fn::of_method(m)).fold(0, |acc, f| acc | f.bit())
    }
}

/// A plugin's vote on enqueueing or pipelining a job (Volcano `util.Permit/Abstain/Reject`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vote {
    /// Allow.
    Permit,
    /// No opinion.
    Abstain,
    /// Refuse.
    Reject,
}

/// A plugin's answer to a victim question (Volcano's `PreemptableFn`/`ReclaimableFn` second
/// return value: `0` abstains, anything else decides).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// No opinion: the plugin's list is ignored (Volcano `util.Abstain`).
    Abstain,
    /// The tasks the plugin pushed into the out buffer are its victims; none pushed means it
    /// allows no victim at all (Volcano `util.Permit` with a list).
    Decided,
}

/// Which gang-granular eviction asks [`Plugin::unified_evictable`] (Volcano
/// `api.EvictionKind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EvictionKind {
    /// `gangpreempt`: victims of lower-priority jobs in the preemptor's queue.
    GangPreempt,
    /// `gangreclaim`: victims in other, reclaimable queues.
    GangReclaim,
}

/// A failed job validation (Volcano `ValidateResult{Pass: false}`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invalid {
    /// PodGroup condition reason, e.g. `NotEnoughTasks`.
    pub reason: &'static str,
    /// Message.
    pub message: String,
}

/// A Volcano plugin. Every function has a neutral default; [`Plugin::fns`] says which ones the
/// plugin registers (derived by `plugin_impl!` ([`crate::plugins`]) from the methods it writes). `'a` is the
/// session's lifetime.
///
/// The victim functions (`preemptable`, `reclaimable`, `victim_tasks`) take candidates as a
/// slice of task rows and push the ones they allow into `out` (cleared by the caller), so the
/// session combines them without allocating per plugin (volcano-behaviour.md §1.5).
#[allow(unused_variables)]
pub trait Plugin<'a>: Send + Sync {
    /// Volcano's plugin name.
    fn name(&self) -> &'static str;
    /// Mask of [`Fn::bit`]s this plugin registers: its declared capability set (the plugin
    /// type's `FNS` constant).
    fn fns(&self) -> u32;
    /// Mask of the functions the methods written for this plugin implement
    /// ([`Fn::registered_by`] over their names); equals [`Plugin::fns`] for every plugin
    /// (checked by a test).
    fn implemented_fns(&self) -> u32;
    /// Job order: `Less` = `l` first.
    fn job_order(&self, s: &State<'a>, l: JobIdx, r: JobIdx) -> Ordering {
        Ordering::Equal
    }
    /// Queue order: `Less` = `l` first.
    fn queue_order(&self, s: &State<'a>, l: QueueIdx, r: QueueIdx) -> Ordering {
        Ordering::Equal
    }
    /// Task order: `Less` = `l` first.
    fn task_order(&self, s: &State<'a>, l: TaskIdx, r: TaskIdx) -> Ordering {
        Ordering::Equal
    }
    /// Pre-predicate (kube PreFilter) for a task; `Err` message fails it on every node.
    fn pre_predicate(&self, s: &State<'a>, t: TaskIdx) -> Result<(), String> {
        Ok(())
    }
    /// Predicate (kube Filter) of a task on a node.
    fn predicate(&self, s: &State<'a>, ctx: &k8s::PodCtx, t: TaskIdx, n: NodeIdx) -> Result<(), Reason> {
        Ok(())
    }
    /// The part of [`Plugin::predicate`] that depends only on the task's own constraints and
    /// the node's static properties (labels, taints, `unschedulable`), never on accounting or
    /// other pods, so it holds for a whole session. A node passes `predicate` exactly when it
    /// passes this and [`Plugin::predicate_dynamic`] (the reasons may come in another order).
    fn predicate_static(&self, s: &State<'a>, t: TaskIdx, n: NodeIdx) -> Result<(), Reason> {
        Ok(())
    }
    /// [`Plugin::predicate_static`] without the restriction [`Plugin::class_mask`] expresses
    /// as a node mask: `predicate_static(t, n)` passes exactly when this passes and `n` is in
    /// the mask. Default: all of `predicate_static` (a plugin without a class mask).
    fn predicate_static_unmasked(&self, s: &State<'a>, t: TaskIdx, n: NodeIdx) -> Result<(), Reason> {
        self.predicate_static(s, t, n)
    }
    /// The rest of [`Plugin::predicate`] (default: all of it).
    fn predicate_dynamic(&self, s: &State<'a>, ctx: &k8s::PodCtx, t: TaskIdx, n: NodeIdx) -> Result<(), Reason> {
        self.predicate(s, ctx, t, n)
    }
    /// Node score of a task on one node.
    fn node_order(&self, s: &State<'a>, ctx: &k8s::PodCtx, t: TaskIdx, n: NodeIdx) -> f64 {
        0.0
    }
    /// Node scores of a task on a set of nodes, added into `out` (same length as `nodes`).
    fn batch_node_order(&self, s: &State<'a>, ctx: &k8s::PodCtx, t: TaskIdx, nodes: &[NodeIdx], out: &mut [f64]) {}
    /// Whether a queue is overused.
    fn overused(&self, s: &State<'a>, q: QueueIdx) -> bool {
        false
    }
    /// Whether a queue may take one more task.
    fn allocatable(&self, s: &State<'a>, q: QueueIdx, t: TaskIdx) -> bool {
        true
    }
    /// Whether a job is ready (gang met).
    fn job_ready(&self, s: &State<'a>, j: JobIdx) -> bool {
        true
    }
    /// Vote on whether a job is pipelined.
    fn job_pipelined(&self, s: &State<'a>, j: JobIdx) -> Vote {
        Vote::Abstain
    }
    /// Vote on whether a job may be enqueued.
    fn job_enqueueable(&self, s: &State<'a>, j: JobIdx) -> Vote {
        Vote::Abstain
    }
    /// A job was enqueued.
    fn job_enqueued(&mut self, s: &State<'a>, j: JobIdx) {}
    /// The message of the PodGroup event this plugin records when its
    /// [`Plugin::job_enqueueable`] rejects `j` with a message that depends on the job (Volcano's
    /// `RecordPodGroupEvent` inside the plugin's JobEnqueueableFn); `None` leaves it to the
    /// enqueue action's fixed messages.
    fn enqueue_rejection(&self, s: &State<'a>, j: JobIdx) -> Option<String> {
        None
    }
    /// Validates a job; `Some` fails it.
    fn job_valid(&self, s: &State<'a>, j: JobIdx) -> Option<Invalid> {
        None
    }
    /// Whether a job is starving.
    fn job_starving(&self, s: &State<'a>, j: JobIdx) -> bool {
        false
    }
    /// Volcano `PreemptableFn`: which of `candidates` (tasks on one node that the preempt
    /// action's filter let through) `preemptor` may evict; push them into `out` in candidate
    /// order and return [`Verdict::Decided`], or return [`Verdict::Abstain`].
    fn preemptable(&self, s: &State<'a>, preemptor: TaskIdx, candidates: &[TaskIdx], out: &mut Vec<TaskIdx>) -> Verdict {
        Verdict::Abstain
    }
    /// Volcano `ReclaimableFn`: which of `candidates` (Running tasks of other queues on one
    /// node) `reclaimer` may evict; same contract as [`Plugin::preemptable`].
    fn reclaimable(&self, s: &State<'a>, reclaimer: TaskIdx, candidates: &[TaskIdx], out: &mut Vec<TaskIdx>) -> Verdict {
        Verdict::Abstain
    }
    /// Volcano `PreemptiveFn`: whether queue `q` may take resources from other queues for `t`
    /// (reclaim).
    fn preemptive(&self, s: &State<'a>, q: QueueIdx, t: TaskIdx) -> bool {
        true
    }
    /// Volcano `VictimTasksFn`: of `candidates`, the tasks this plugin wants evicted (shuffle);
    /// pushed into `out`.
    fn victim_tasks(&self, s: &State<'a>, candidates: &[TaskIdx], out: &mut Vec<TaskIdx>) {}
    /// Volcano `VictimQueueOrderFn`: order of the queues victims are taken from when
    /// `preemptor_queue` reclaims (`Less` = take from `l` first).
    fn victim_queue_order(&self, s: &State<'a>, l: QueueIdx, r: QueueIdx, preemptor_queue: QueueIdx) -> Ordering {
        Ordering::Equal
    }
    /// Volcano `UnifiedEvictableFn` (gangpreempt, gangreclaim): which of `candidates` (the
    /// victim bundles' tasks, flattened in bundle order) job `job` may evict for `kind`; same
    /// contract as [`Plugin::preemptable`].
    fn unified_evictable(
        &self,
        s: &State<'a>,
        kind: EvictionKind,
        job: JobIdx,
        candidates: &[TaskIdx],
        out: &mut Vec<TaskIdx>,
    ) -> Verdict {
        Verdict::Abstain
    }
    /// A task was allocated or pipelined (Volcano `AllocateFunc`). The session is read-only
    /// here (the Statement already changed it); `view` is the shared kube node view
    /// ([`State::view`], out of `s` during the call), which only the predicates plugin changes.
    fn on_allocate(&mut self, s: &State<'a>, view: &mut NodeView<'a>, t: TaskIdx) {}
    /// A task was deallocated or evicted (Volcano `DeallocateFunc`); as [`Plugin::on_allocate`].
    fn on_deallocate(&mut self, s: &State<'a>, view: &mut NodeView<'a>, t: TaskIdx) {}
    /// Session close (Volcano `OnSessionClose`): the session read-only, the plugin's results
    /// written to `notes` ([`State::notes`], out of `s` during the call).
    fn on_close(&mut self, s: &State<'a>, notes: &mut CloseNotes) {}
    /// Task `t`'s identity for the class path ([`crate::select::class_cache`]) beyond its pod's
    /// requests and static constraints: tasks with the same pod constraints and the same key
    /// get the same predicate result and node score from this plugin on every node whose
    /// accounting did not change. `None`: `t`'s result depends on session state the class path
    /// does not track, so `t` takes the plain scan. Default `Some(0)`: it depends on the pod
    /// only. Not a registered function.
    fn class_key(&self, s: &State<'a>, t: TaskIdx) -> Option<u64> {
        Some(0)
    }
    /// The nodes outside which `t` fails this plugin's static predicate for a reason the class
    /// path applies on top of `t`'s class instead of splitting the class (a bound claim's
    /// PersistentVolume node affinity and zone, issue 22): one bit per node row, bit `n % 64`
    /// of word `n / 64`, with an id that names the same nodes for every task of the session.
    /// Tasks that differ only by their masks share a class, whose leaves are computed with
    /// [`Plugin::predicate_static_unmasked`]; each pick reads the class's leaves inside its own
    /// mask (under full scans through the mask's kept maximum per class and mask id,
    /// [`crate::kernels::masked_max`]). `None` (the
    /// default): no mask, `predicate_static_unmasked` is all of `predicate_static`. Not a
    /// registered function.
    fn class_mask(&self, s: &State<'a>, t: TaskIdx) -> Option<NodeMask<'_>> {
        None
    }
}

/// Builds a plugin for a session from its conf entry (Volcano `OnSessionOpen`).
pub type Builder = for<'a> fn(&PluginOption, &State<'a>) -> Box<dyn Plugin<'a> + 'a>;

/// One plugin a [`Registry`] can build.
#[derive(Clone, Copy)]
pub struct Entry {
    /// Volcano's plugin name.
    pub name: &'static str,
    /// The builder.
    pub build: Builder,
    /// The plugin's `arguments` keys ([`crate::conf::ArgSpec`]), for the argument warnings.
    pub args: &'static [crate::conf::ArgSpec],
}

/// The plugins a session can instantiate, by name (Volcano's plugin factory,
/// `plugins/factory.go`). A conf entry naming a plugin the registry lacks is skipped (and
/// reported by [`crate::conf::report`]).
#[derive(Clone, Copy)]
pub struct Registry {
    /// Entries, in any order.
    pub entries: &'static [Entry],
    /// The device settings (mode, vGPU card policy and weight, node lock) the session's device
    /// table follows under a conf (the registry's deviceshare plugin reads them from its
    /// arguments); `None`: no device sharing.
    pub devices: Option<fn(&SchedulerConf) -> DeviceConf>,
}

impl Registry {
    /// The entry named `name`.
    pub fn get(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.name == name)
    }

    /// The device settings of a session opened under `conf` ([`Registry::devices`]).
    pub fn device_conf(&self, conf: &SchedulerConf) -> DeviceConf {
        self.devices.map_or(DeviceConf::default(), |f| f(conf))
    }

    /// Builds the plugin of `opt`, or `None` when the registry has no such plugin.
    pub fn build<'a>(&self, opt: &PluginOption, s: &State<'a>) -> Option<Box<dyn Plugin<'a> + 'a>> {
        self.get(&opt.name).map(|e| (e.build)(opt, s))
    }
}
