//! Struct-of-arrays tables of one session, cut from the session arena: nodes, tasks, jobs and
//! queues. Node resource tables are row-major: `allocatable` is `node * dims + d` (read with
//! [`crate::session::State::at`]), and the accounting the session changes is one row of
//! `4 × dims` per node (idle, used, releasing, pipelined; read with
//! [`crate::session::State::idle`] and its siblings). A node's numbers share cache lines, so
//! checking, scoring or binding one node reads few lines. They were column-major
//! (`d * n_nodes + node`) and then four separate tables; at 100,000 nodes a bind missed the
//! cache once per dimension and table. Task requests are row-major too (`task * dims + d`).

use crate::cluster::{NodeId, NodeRec, PodGroupId, PodGroupRec, PodId, PodRec, QueueRec};
use crate::intern::Sym;
use crate::model::PodGroupPhase;

/// "No index" in `u32` index columns.
pub const NONE: u32 = u32::MAX;

macro_rules! idx {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub u32);
        impl $name {
            /// As a `usize` index.
            #[inline]
            pub fn ix(self) -> usize {
                self.0 as usize
            }
        }
    };
}
idx!(
    /// Row of a node in [`NodeTable`].
    NodeIdx
);
idx!(
    /// Row of a task in [`TaskTable`].
    TaskIdx
);
idx!(
    /// Row of a job in [`JobTable`].
    JobIdx
);
idx!(
    /// Row of a queue in [`QueueTable`].
    QueueIdx
);

/// Volcano's task status machine (`pkg/scheduler/api/types.go`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum TaskStatus {
    /// Waiting for a node.
    Pending = 0,
    /// Given a node in this session, not yet bound.
    Allocated,
    /// Waiting on a node for resources being released.
    Pipelined,
    /// Bind sent.
    Binding,
    /// Bound to a node, not running yet.
    Bound,
    /// Running.
    Running,
    /// Being deleted/evicted.
    Releasing,
    /// Completed successfully.
    Succeeded,
    /// Completed with failure.
    Failed,
    /// Unknown.
    Unknown,
}

/// Number of [`TaskStatus`] values.
pub const N_STATUS: usize = 10;

impl TaskStatus {
    /// Volcano's `AllocatedStatus`: Bound, Binding, Running, Allocated.
    #[inline]
    pub fn allocated(self) -> bool {
        matches!(self, TaskStatus::Bound | TaskStatus::Binding | TaskStatus::Running | TaskStatus::Allocated)
    }

    /// Volcano's `CompletedStatus`: Succeeded, Failed.
    #[inline]
    pub fn completed(self) -> bool {
        matches!(self, TaskStatus::Succeeded | TaskStatus::Failed)
    }

    /// Volcano's `ScheduledStatus`: Running, Bound, Failed, Succeeded.
    #[inline]
    pub fn scheduled(self) -> bool {
        matches!(self, TaskStatus::Running | TaskStatus::Bound | TaskStatus::Failed | TaskStatus::Succeeded)
    }

    /// Volcano's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Pending => "Pending",
            TaskStatus::Allocated => "Allocated",
            TaskStatus::Pipelined => "Pipelined",
            TaskStatus::Binding => "Binding",
            TaskStatus::Bound => "Bound",
            TaskStatus::Running => "Running",
            TaskStatus::Releasing => "Releasing",
            TaskStatus::Succeeded => "Succeeded",
            TaskStatus::Failed => "Failed",
            TaskStatus::Unknown => "Unknown",
        }
    }

    /// All statuses, in declaration order.
    pub const ALL: [TaskStatus; N_STATUS] = [
        TaskStatus::Pending,
        TaskStatus::Allocated,
        TaskStatus::Pipelined,
        TaskStatus::Binding,
        TaskStatus::Bound,
        TaskStatus::Running,
        TaskStatus::Releasing,
        TaskStatus::Succeeded,
        TaskStatus::Failed,
        TaskStatus::Unknown,
    ];
}

/// Nodes of the session (Ready nodes of the cluster, in name order).
pub struct NodeTable<'a> {
    /// Number of nodes.
    pub len: usize,
    /// Cluster id.
    pub id: &'a [NodeId],
    /// The node record (name, labels, taints).
    pub rec: &'a [&'a NodeRec],
    /// `allocatable`, row-major.
    pub allocatable: &'a [i64],
    /// The accounting the session changes, one row of `4 × dims` per node: `idle` (=
    /// allocatable − used), `used`, `releasing` and `pipelined`, each `dims` long (read them
    /// through [`crate::session::State::idle`] and its siblings). One table, not four: a bind
    /// reads and writes all four of the picked node, and at 100,000 nodes each separate table
    /// cost the bind its own cache miss.
    pub(in crate::session) acct: &'a mut [i64],
    /// First task on the node (intrusive list through [`TaskTable::next_on_node`]).
    pub(in crate::session) head: &'a mut [u32],
    /// Whether the node is in this scheduler's shard (Volcano `ssn.NodesInShard`), copied from
    /// [`crate::cluster::Cluster::shard_bits`]; empty when `--scheduler-sharding-mode` is
    /// `none` (read it through [`crate::session::State::in_shard`]).
    pub in_shard: &'a [bool],
}

/// Tasks (pods) of the session: every pod of every job, then pods without a job that use node
/// resources.
pub struct TaskTable<'a> {
    /// Number of tasks.
    pub len: usize,
    /// Cluster id.
    pub pod: &'a [PodId],
    /// The pod record.
    pub rec: &'a [&'a PodRec],
    /// Job row, or [`NONE`] for a pod without a PodGroup.
    pub job: &'a [u32],
    /// Status.
    pub(in crate::session) status: &'a mut [TaskStatus],
    /// Node row, or [`NONE`].
    pub(in crate::session) node: &'a mut [u32],
    /// `Resreq`, row-major.
    pub resreq: &'a [i64],
    /// Task priority.
    pub priority: &'a [i32],
    /// BestEffort: empty request ignoring pods.
    pub best_effort: &'a [bool],
    /// Numeric suffix of the pod name (Volcano's default task order), `u64::MAX` when none.
    pub name_index: &'a [u64],
    /// Next task on the same node.
    pub(in crate::session) next_on_node: &'a mut [u32],
    /// Previous task on the same node.
    pub(in crate::session) prev_on_node: &'a mut [u32],
    /// Status and node before the last discard (Volcano `LastTransaction`), for reasons.
    pub(in crate::session) last_status: &'a mut [TaskStatus],
    /// Node of the last discarded transaction.
    pub(in crate::session) last_node: &'a mut [u32],
    /// Volcano `TaskInfo.EvictionOccurred`: the task was pipelined onto a node where victims
    /// were evicted for it (close then nominates that node, `status.nominatedNodeName`).
    pub(in crate::session) eviction_occurred: &'a mut [bool],
}

/// Jobs of the session: PodGroups whose queue exists, in `namespace/name` order.
pub struct JobTable<'a> {
    /// Number of jobs.
    pub len: usize,
    /// Cluster id.
    pub group: &'a [PodGroupId],
    /// The PodGroup record.
    pub rec: &'a [&'a PodGroupRec],
    /// Queue row.
    pub queue: &'a [u32],
    /// `minMember`.
    pub min_available: &'a [i32],
    /// Σ `minTaskMember`.
    pub min_task_total: &'a [i32],
    /// Job priority (PriorityClass value).
    pub priority: &'a [i32],
    /// Creation time, ms.
    pub creation: &'a [i64],
    /// Interned `ns/name` (the job UID).
    pub uid: &'a [Sym],
    /// Phase, as enqueue/allocate change it.
    pub(in crate::session) phase: &'a mut [PodGroupPhase],
    /// First task row.
    pub task_start: &'a [u32],
    /// One past the last task row.
    pub task_end: &'a [u32],
    /// Task counts per status.
    pub(in crate::session) counts: &'a mut [[u32; super::tables::N_STATUS]],
    /// Pending BestEffort tasks.
    pub(in crate::session) pending_best_effort: &'a mut [u32],
}

/// Queues of the session (every Queue, in name order).
pub struct QueueTable<'a> {
    /// Number of queues.
    pub len: usize,
    /// Interned name.
    pub name: &'a [Sym],
    /// The queue record.
    pub rec: &'a [&'a QueueRec],
    /// Resource accounting and the queue tree ([`super::queues`]).
    pub acct: super::queues::QueueAccounts<'a>,
}

/// Read access to the columns the session changes: outside `session` they are read through
/// these and changed only through the [`super::statement::Statement`] (and the session's own
/// open and close), so an action or plugin cannot move a task or a node's resources behind the
/// Statement's back (undo stays exact).
macro_rules! read_columns {
    ($table:ident { $($(#[$doc:meta])* $col:ident: $ty:ty),* $(,)? }) => {
        impl $table<'_> {
            $(
                $(#[$doc])*
                #[inline]
                pub fn $col(&self) -> &[$ty] {
                    self.$col
                }
            )*
        }
    };
}

read_columns!(NodeTable {
    /// Per node, `idle`, `used`, `releasing` and `pipelined` (`nodes × 4 × dims`, see the field).
    acct: i64,
    /// First task on each node (intrusive list through [`TaskTable::next_on_node`]), or [`NONE`].
    head: u32,
});

read_columns!(TaskTable {
    /// Status of each task.
    status: TaskStatus,
    /// Node row of each task, or [`NONE`].
    node: u32,
    /// Next task on the same node, or [`NONE`].
    next_on_node: u32,
    /// Previous task on the same node, or [`NONE`].
    prev_on_node: u32,
    /// Status before the last discard (Volcano `LastTransaction`), for reasons.
    last_status: TaskStatus,
    /// Node of the last discarded transaction, or [`NONE`].
    last_node: u32,
    /// Volcano `TaskInfo.EvictionOccurred`: pipelined onto a node where victims were evicted for it.
    eviction_occurred: bool,
});

read_columns!(JobTable {
    /// Phase of each job, as enqueue/allocate change it.
    phase: PodGroupPhase,
    /// Task counts per status of each job (index: [`TaskStatus`] as `usize`).
    counts: [u32; N_STATUS],
    /// Pending BestEffort tasks of each job.
    pending_best_effort: u32,
});

impl TaskTable<'_> {
    /// Puts back task `t`'s last transaction (`last_status`, `last_node`), which a discard
    /// sets and the pod's condition reads. The one write to a session column outside the
    /// Statement: a HyperNode search that dry-runs several HyperNodes restores the marks every
    /// dry run started from (actions/allocate_topology.rs, `Marks`), so a dry run left out
    /// changes no decision. It moves no task and no resource.
    #[inline]
    pub fn restore_last_transaction(&mut self, t: TaskIdx, status: TaskStatus, node: u32) {
        self.last_status[t.ix()] = status;
        self.last_node[t.ix()] = node;
    }

    /// Row of `t`'s `Resreq`.
    #[inline]
    pub fn req(&self, t: TaskIdx, dims: usize) -> &[i64] {
        &self.resreq[t.ix() * dims..(t.ix() + 1) * dims]
    }

    /// Job of `t`, if any.
    #[inline]
    pub fn job_of(&self, t: TaskIdx) -> Option<JobIdx> {
        let j = self.job[t.ix()];
        (j != NONE).then_some(JobIdx(j))
    }

    /// Node of `t`, if any.
    #[inline]
    pub fn node_of(&self, t: TaskIdx) -> Option<NodeIdx> {
        let n = self.node[t.ix()];
        (n != NONE).then_some(NodeIdx(n))
    }
}

impl JobTable<'_> {
    /// Task rows of `j`.
    #[inline]
    pub fn tasks(&self, j: JobIdx) -> impl Iterator<Item = TaskIdx> + Clone {
        (self.task_start[j.ix()]..self.task_end[j.ix()]).map(TaskIdx)
    }

    /// Number of tasks of `j`.
    #[inline]
    pub fn task_count(&self, j: JobIdx) -> u32 {
        self.task_end[j.ix()] - self.task_start[j.ix()]
    }

    /// Tasks of `j` in status `s`.
    #[inline]
    pub fn count(&self, j: JobIdx, s: TaskStatus) -> u32 {
        self.counts[j.ix()][s as usize]
    }

    /// Volcano `ReadyTaskNum`: Bound + Binding + Running + Allocated + Succeeded.
    pub fn ready_num(&self, j: JobIdx) -> i32 {
        let c = &self.counts[j.ix()];
        (c[TaskStatus::Bound as usize]
            + c[TaskStatus::Binding as usize]
            + c[TaskStatus::Running as usize]
            + c[TaskStatus::Allocated as usize]
            + c[TaskStatus::Succeeded as usize]) as i32
    }

    /// Volcano `ScheduledTaskNum`: Running + Bound + Failed + Succeeded (`ScheduledStatus`;
    /// `Binding` and `Allocated` tasks are not scheduled yet).
    pub fn scheduled_num(&self, j: JobIdx) -> i32 {
        TaskStatus::ALL.iter().filter(|st| st.scheduled()).map(|&st| self.count(j, st) as i32).sum()
    }

    /// Volcano `WaitingTaskNum`: Pipelined.
    pub fn waiting_num(&self, j: JobIdx) -> i32 {
        self.counts[j.ix()][TaskStatus::Pipelined as usize] as i32
    }

    /// Volcano `ValidTaskNum`: allocated-status + Succeeded + Pipelined + Pending.
    pub fn valid_num(&self, j: JobIdx) -> i32 {
        let c = &self.counts[j.ix()];
        self.ready_num(j) + (c[TaskStatus::Pipelined as usize] + c[TaskStatus::Pending as usize]) as i32
    }

    /// Volcano `IsReady`: Ready + pending BestEffort ≥ minAvailable.
    pub fn is_ready(&self, j: JobIdx) -> bool {
        self.ready_num(j) + self.pending_best_effort[j.ix()] as i32 >= self.min_available[j.ix()]
    }

    /// Volcano `IsPipelined`: Waiting + Ready + pending BestEffort ≥ minAvailable.
    pub fn is_pipelined(&self, j: JobIdx) -> bool {
        self.waiting_num(j) + self.ready_num(j) + self.pending_best_effort[j.ix()] as i32 >= self.min_available[j.ix()]
    }

    /// Volcano `IsStarving`: Waiting + Ready < minAvailable.
    pub fn is_starving(&self, j: JobIdx) -> bool {
        self.waiting_num(j) + self.ready_num(j) < self.min_available[j.ix()]
    }

    /// Volcano `IsPending`: phase Pending or unset.
    pub fn is_pending(&self, j: JobIdx) -> bool {
        matches!(self.phase[j.ix()], PodGroupPhase::Pending | PodGroupPhase::Empty)
    }
}

/// Numeric suffix of a pod name after its last `-` (Volcano's default task order key).
pub fn name_index(name: &str) -> u64 {
    match name.rsplit_once('-') {
        Some((_, tail)) if !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit()) => tail.parse().unwrap_or(u64::MAX),
        _ => u64::MAX,
    }
}
