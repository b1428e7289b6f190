//! Volcano's scheduler plugins: each registers functions into the session, combined across
//! tiers by Volcano's rules ([`crate::session::invoke`]).
//!
//! A plugin implements [`Plugin`] through [`plugin_impl!`]: the functions it registers
//! ([`Plugin::fns`]) are derived from the trait methods written in its impl block, never listed
//! by hand, and the session calls only those, and only when the plugin's enable flag for that
//! function is on (volcano-behaviour.md §1.2, §1.5). [`Registry`] names the plugins that can be
//! built; the session is opened with one ([`crate::session::Session::open`]).

/// Implements [`Plugin`] for a plugin type from the trait methods written in the block, and
/// derives [`Plugin::fns`] from their names ([`Fn::registered_by`]): a plugin registers exactly
/// the functions it implements. Write `plugin_impl! { impl<'a> for Type { fn name(..) .. } }`.
macro_rules! plugin_impl {
    (impl<$a:lifetime> for $ty:ty {
        $( $(#[$m:meta])* fn $f:ident ( $($args:tt)* ) $(-> $ret:ty)? $body:block )*
    }) => {
        impl<$a> $crate::plugins::Plugin<$a> for $ty {
            fn fns(&self) -> u32 {
                $crate::plugins::Fn::registered_by(&[$(stringify!($f)),*])
            }
            $( $(#[$m])* fn $f ( $($args)* ) $(-> $ret)? $body )*
        }
    };
}

pub mod binpack;
pub mod capacity;
mod capacity_attrs;
pub mod cdp;
pub(crate) mod check;
pub mod conformance;
pub mod drf;
mod drf_hierarchy;
pub mod gang;
pub mod k8s;
pub mod nodegroup;
pub mod nodeorder;
pub mod overcommit;
pub mod pdb;
pub mod predicates;
pub mod priority;
pub mod proportion;
pub mod rescheduling;
pub mod resourcequota;
pub mod sla;
pub mod task_topology;

use crate::conf::{Flag, PluginOption};
use crate::session::fit::Reason;
use crate::session::tables::{JobIdx, NodeIdx, QueueIdx, TaskIdx};
use crate::session::State;
pub use check::{Unhonoured, UnhonouredKind};
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
    pub fn bit(self) -> u32 {
        1 << (self as u8)
    }

    /// The function a [`Plugin`] method implements (`None` for `name` and `on_close`, which are
    /// not registered functions). `predicate_static` and `predicate_dynamic` are parts of the
    /// predicate; `on_allocate`/`on_deallocate` form Volcano's event handler.
    pub fn of_method(method: &str) -> Option<Fn> {
        Some(match method {
            "job_order" => Fn::JobOrder,
            "queue_order" => Fn::QueueOrder,
            "task_order" => Fn::TaskOrder,
            "pre_predicate" => Fn::PrePredicate,
            "predicate" | "predicate_static" | "predicate_dynamic" => Fn::Predicate,
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

    /// Mask of the functions the given [`Plugin`] methods implement (what [`plugin_impl!`]
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
/// plugin registers (derived by [`plugin_impl!`] from the methods it writes). `'a` is the
/// session's lifetime.
///
/// The victim functions (`preemptable`, `reclaimable`, `victim_tasks`) take candidates as a
/// slice of task rows and push the ones they allow into `out` (cleared by the caller), so the
/// session combines them without allocating per plugin (volcano-behaviour.md §1.5).
#[allow(unused_variables)]
pub trait Plugin<'a>: Send + Sync {
    /// Volcano's plugin name.
    fn name(&self) -> &'static str;
    /// Mask of [`Fn::bit`]s this plugin registers.
    fn fns(&self) -> u32;
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
    /// A task was allocated or pipelined (Volcano `AllocateFunc`). `s` is mutable for the
    /// predicates plugin, which keeps the shared node view ([`State::view`]).
    fn on_allocate(&mut self, s: &mut State<'a>, t: TaskIdx) {}
    /// A task was deallocated or evicted (Volcano `DeallocateFunc`).
    fn on_deallocate(&mut self, s: &mut State<'a>, t: TaskIdx) {}
    /// Session close (Volcano `OnSessionClose`).
    fn on_close(&mut self, s: &mut State<'a>) {}
    /// Task `t`'s identity for the class path ([`crate::kernels::class_cache`]) beyond its pod's
    /// requests and static constraints: tasks with the same pod constraints and the same key
    /// get the same predicate result and node score from this plugin on every node whose
    /// accounting did not change. `None`: `t`'s result depends on session state the class path
    /// does not track, so `t` takes the plain scan. Default `Some(0)`: it depends on the pod
    /// only. Not a registered function.
    fn class_key(&self, s: &State<'a>, t: TaskIdx) -> Option<u64> {
        Some(0)
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
}

impl Registry {
    /// The entry named `name`.
    pub fn get(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.name == name)
    }

    /// Builds the plugin of `opt`, or `None` when the registry has no such plugin.
    pub fn build<'a>(&self, opt: &PluginOption, s: &State<'a>) -> Option<Box<dyn Plugin<'a> + 'a>> {
        self.get(&opt.name).map(|e| (e.build)(opt, s))
    }
}

fn b_priority<'a>(_: &PluginOption, _: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(priority::Priority)
}
fn b_gang<'a>(_: &PluginOption, _: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(gang::Gang)
}
fn b_conformance<'a>(_: &PluginOption, _: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(conformance::Conformance)
}
fn b_overcommit<'a>(o: &PluginOption, s: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(overcommit::Overcommit::open(s, &o.arguments))
}
fn b_drf<'a>(o: &PluginOption, s: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(drf::Drf::open(s, o.flags.on(Flag::Hierarchy)))
}
fn b_proportion<'a>(_: &PluginOption, s: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(proportion::Proportion::open(s))
}
fn b_capacity<'a>(o: &PluginOption, s: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(capacity::Capacity::open(s, &o.arguments, o.flags.on(Flag::Hierarchy)))
}
fn b_predicates<'a>(o: &PluginOption, s: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(predicates::Predicates::open(s, &o.arguments))
}
fn b_nodeorder<'a>(o: &PluginOption, s: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(nodeorder::NodeOrder::open(s, &o.arguments))
}
fn b_rescheduling<'a>(o: &PluginOption, s: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(rescheduling::Rescheduling::open(s, &o.arguments))
}
fn b_pdb<'a>(_: &PluginOption, s: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(pdb::Pdb::open(s))
}
fn b_cdp<'a>(_: &PluginOption, _: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(cdp::Cdp)
}
fn b_resourcequota<'a>(_: &PluginOption, _: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(resourcequota::ResourceQuota::open())
}
fn b_binpack<'a>(o: &PluginOption, s: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(binpack::Binpack::open(s, &o.arguments))
}
fn b_sla<'a>(o: &PluginOption, _: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(sla::Sla::open(&o.arguments))
}
fn b_nodegroup<'a>(o: &PluginOption, s: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(nodegroup::NodeGroup::open(s, &o.arguments, o.flags.on(Flag::Hierarchy)))
}
fn b_task_topology<'a>(o: &PluginOption, s: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(task_topology::TaskTopology::open(s, &o.arguments))
}

/// The plugins Basalt implements.
pub static REGISTRY: Registry = Registry {
    entries: &[
        Entry { name: "priority", build: b_priority, args: &[] },
        Entry { name: "gang", build: b_gang, args: &[] },
        Entry { name: "conformance", build: b_conformance, args: &[] },
        Entry { name: "overcommit", build: b_overcommit, args: overcommit::ARGS },
        Entry { name: "drf", build: b_drf, args: &[] },
        Entry { name: "proportion", build: b_proportion, args: &[] },
        Entry { name: "capacity", build: b_capacity, args: capacity::ARGS },
        Entry { name: "predicates", build: b_predicates, args: predicates::ARGS },
        Entry { name: "nodeorder", build: b_nodeorder, args: nodeorder::ARGS },
        Entry { name: "binpack", build: b_binpack, args: binpack::ARGS },
        Entry { name: "rescheduling", build: b_rescheduling, args: rescheduling::ARGS },
        Entry { name: "sla", build: b_sla, args: sla::ARGS },
        Entry { name: "nodegroup", build: b_nodegroup, args: nodegroup::ARGS },
        Entry { name: "task-topology", build: b_task_topology, args: task_topology::ARGS },
        Entry { name: "pdb", build: b_pdb, args: &[] },
        Entry { name: "cdp", build: b_cdp, args: &[] },
        Entry { name: "resourcequota", build: b_resourcequota, args: &[] },
    ],
};
