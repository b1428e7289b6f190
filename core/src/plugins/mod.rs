//! Volcano's scheduler plugins: each registers functions into the session, combined across
//! tiers by Volcano's rules ([`crate::session::invoke`]).
//!
//! A plugin implements [`Plugin`]: it declares which functions it registers ([`Plugin::fns`])
//! and the session calls only those, and only when the plugin's enable flag for that function
//! is on (volcano-behaviour.md §1.2, §1.5).

pub mod binpack;
pub mod conformance;
pub mod drf;
pub mod gang;
pub mod k8s;
pub mod nodeorder;
pub mod overcommit;
pub mod predicates;
pub mod priority;
pub mod proportion;

use crate::conf::{Flag, PluginOption};
use crate::session::fit::Reason;
use crate::session::tables::{JobIdx, NodeIdx, QueueIdx, TaskIdx};
use crate::session::State;
use std::cmp::Ordering;

/// Every plugin name Volcano registers (`plugins/factory.go`).
pub const KNOWN: &[&str] = &[
    "drf",
    "gang",
    "deviceshare",
    "predicates",
    "priority",
    "nodeorder",
    "conformance",
    "binpack",
    "resource-strategy-fit",
    "tdm",
    "overcommit",
    "sla",
    "task-topology",
    "numa-aware",
    "cdp",
    "rescheduling",
    "usage",
    "pdb",
    "nodegroup",
    "network-topology-aware",
    "proportion",
    "capacity",
    "extender",
    "resourcequota",
];

/// The plugins Basalt implements.
pub const IMPLEMENTED: &[&str] =
    &["priority", "gang", "conformance", "overcommit", "drf", "proportion", "predicates", "nodeorder", "binpack"];

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
}

impl Fn {
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
            Fn::JobValid | Fn::EventHandler => return None,
        })
    }

    /// Bit of this function in a registration mask.
    pub fn bit(self) -> u32 {
        1 << (self as u8)
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

/// A failed job validation (Volcano `ValidateResult{Pass: false}`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invalid {
    /// PodGroup condition reason, e.g. `NotEnoughTasks`.
    pub reason: &'static str,
    /// Message.
    pub message: String,
}

/// A Volcano plugin. Every function has a neutral default; [`Plugin::fns`] says which ones the
/// plugin registers. `'a` is the session's lifetime.
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
    /// Validates a job; `Some` fails it.
    fn job_valid(&self, s: &State<'a>, j: JobIdx) -> Option<Invalid> {
        None
    }
    /// Whether a job is starving.
    fn job_starving(&self, s: &State<'a>, j: JobIdx) -> bool {
        false
    }
    /// A task was allocated or pipelined (Volcano `AllocateFunc`). `s` is mutable for the
    /// predicates plugin, which keeps the shared node view ([`State::view`]).
    fn on_allocate(&mut self, s: &mut State<'a>, t: TaskIdx) {}
    /// A task was deallocated or evicted (Volcano `DeallocateFunc`).
    fn on_deallocate(&mut self, s: &mut State<'a>, t: TaskIdx) {}
    /// Session close (Volcano `OnSessionClose`).
    fn on_close(&mut self, s: &mut State<'a>) {}
}

/// Builds a plugin from its conf entry (Volcano `OnSessionOpen`), or `None` for a name Basalt
/// does not implement.
pub fn build<'a>(opt: &PluginOption, s: &State<'a>) -> Option<Box<dyn Plugin<'a> + 'a>> {
    let a = &opt.arguments;
    Some(match opt.name.as_str() {
        "priority" => Box::new(priority::Priority),
        "gang" => Box::new(gang::Gang),
        "conformance" => Box::new(conformance::Conformance),
        "overcommit" => Box::new(overcommit::Overcommit::open(s, a)),
        "drf" => Box::new(drf::Drf::open(s)),
        "proportion" => Box::new(proportion::Proportion::open(s)),
        "predicates" => Box::new(predicates::Predicates::open(s, a)),
        "nodeorder" => Box::new(nodeorder::NodeOrder::open(s, a)),
        "binpack" => Box::new(binpack::Binpack::open(s, a)),
        _ => return None,
    })
}
