//! The per-cycle session (Volcano `framework.Session`): struct-of-arrays tables built into a
//! `bumpalo` arena from the cluster copy, the layout the cluster copy keeps for them, the queue
//! accounting, the operations actions use (through a [`statement::Statement`]), and the close
//! that turns the session into [`Decisions`]. It names no plugin: the [`Session`] carries its
//! plugins as a type parameter, told of every operation through [`SessionEvents`]
//! (`crate::framework` opens it with the conf's plugins).
//!
//! It refuses I/O and locks; everything it allocates while scheduling comes from the arena.

pub mod affinity_index;
mod build;
mod close;
pub mod cycle;
pub mod devices;
mod kept_layout;
pub mod layout;
pub mod node_view;
pub mod notes;
pub mod queues;
pub use close::job_fit_error as close_job_fit_error;
pub use close::releasing_scheduled_num;
pub mod fit;
pub mod gate_reserve;
pub mod statement;
pub mod tables;
pub mod topology;
pub mod vgpu;
pub mod volumes;

use crate::cluster::Cluster;
use crate::conf::{SchedulerConf, SchedulerOptions};
use crate::decision::Decisions;
use crate::model::PodGroupPhase;
use crate::rng::SeededRng;
use bumpalo::Bump;
pub use cycle::{CycleOptions, CyclePhase};
use fit::FitErrors;
use tables::*;

/// Everything a session knows except its plugins: the tables and per-job scheduling notes.
/// Plugins read it (their event handlers and close get `&State`, with the kube node view and the
/// [`notes::CloseNotes`] as the only parts they write); actions change tasks and nodes through a
/// [`statement::Statement`]: the task and node mutators are private to this module.
pub struct State<'a> {
    /// The cluster copy the session was built from (names, records).
    pub cluster: &'a Cluster,
    /// The scheduler conf.
    pub conf: &'a SchedulerConf,
    /// Number of resource dimensions.
    pub dims: usize,
    /// Nodes.
    pub nodes: NodeTable<'a>,
    /// Tasks.
    pub tasks: TaskTable<'a>,
    /// Jobs.
    pub jobs: JobTable<'a>,
    /// Queues.
    pub queues: QueueTable<'a>,
    /// Σ allocatable of all session nodes (Volcano `TotalResource`).
    pub total: &'a [i64],
    /// Per job: fit errors of its tasks (Volcano `NodesFitErrors`), in insertion order.
    pub fit_errors: Vec<Vec<(TaskIdx, FitErrors)>>,
    /// Session id written as `transitionID`.
    pub uid: String,
    /// The cycle's "now" ([`CycleOptions::now_ms`]): ms since the Unix epoch, 0 = unknown (time-based
    /// rules off).
    pub now_ms: i64,
    /// Random source for ties.
    pub rng: SeededRng,
    /// PodGroups left out of the session and why.
    pub skipped: Vec<(crate::cluster::PodGroupId, String)>,
    /// Binds committed, in order.
    pub binds: Vec<(TaskIdx, NodeIdx)>,
    /// Evictions committed, in order.
    pub evictions: Vec<(TaskIdx, String)>,
    /// Events recorded (PodGroup, kind, reason, message).
    pub events: Vec<crate::decision::Event>,
    /// The eviction actions' counters for Volcano's preemption metrics.
    pub preemption: crate::decision::PreemptionStats,
    /// Topology jobs allocate could not place, and where it searched (Basalt's explain notes).
    pub topology_searches: Vec<crate::decision::TopologySearch>,
    /// Tasks whose pods carry inter-pod affinity or anti-affinity terms.
    pub affinity_tasks: &'a [TaskIdx],
    /// Label and term indexes for inter-pod affinity (present when `affinity_tasks` is not
    /// empty).
    pub affinity_index: Option<affinity_index::AffinityIndex<'a>>,
    /// Resource dimensions in the order Volcano reports an insufficient one.
    pub report_order: &'a [usize],
    /// Every node whose accounting changed, in order (readers keep a position in it).
    pub node_changes: Vec<u32>,
    /// The kube-scheduler plugins' node view (pods, non-zero and plain requests per node),
    /// changed in the session only by the predicates plugin's event handler.
    pub view: node_view::NodeView<'a>,
    /// GPU share cards ([`devices`]), changed only by the Statement.
    pub devices: devices::DeviceTable<'a>,
    /// What the plugins wrote at close ([`notes::CloseNotes`]).
    pub notes: notes::CloseNotes,
    /// Tasks whose Volcano scheduling gate allocate decided to remove, in order, each once
    /// ([`crate::decision::Decisions::gate_removals`]).
    pub gate_removals: Vec<TaskIdx>,
    /// `capacity`'s queue-allocation-gate reservation ([`gate_reserve`]).
    pub gate_reserve: gate_reserve::GateReserve,
}

/// Blocks of a node's accounting row ([`tables::NodeTable`]'s `acct`): idle, used, releasing,
/// pipelined.
const ACCT_BLOCKS: usize = 4;

/// The accounting rows of a session opening with nothing placed: per node, idle = its
/// `allocatable` row (row-major, `dims` per node), used, releasing and pipelined zero.
fn acct_rows<'a>(arena: &'a Bump, allocatable: &[i64], dims: usize) -> &'a mut [i64] {
    let rows = arena.alloc_slice_fill_copy(allocatable.len() * ACCT_BLOCKS, 0);
    if dims > 0 {
        for (row, a) in rows.chunks_exact_mut(ACCT_BLOCKS * dims).zip(allocatable.chunks_exact(dims)) {
            row[..dims].copy_from_slice(a);
        }
    }
    rows
}

impl<'a> State<'a> {
    /// Scheduler flags.
    pub fn options(&self) -> &'a SchedulerOptions {
        &self.conf.options
    }

    /// Index in [`NodeTable::acct`](tables::NodeTable) of node `n`'s block `b` (0 idle, 1
    /// used, 2 releasing, 3 pipelined), dimension `d`.
    #[inline]
    fn acct_ix(&self, n: NodeIdx, b: usize, d: usize) -> usize {
        (n.ix() * ACCT_BLOCKS + b) * self.dims + d
    }

    /// Node `n`'s idle (allocatable − used) in dimension `d`.
    #[inline]
    pub fn idle(&self, n: NodeIdx, d: usize) -> i64 {
        self.nodes.acct[self.acct_ix(n, 0, d)]
    }

    /// Node `n`'s used in dimension `d`.
    #[inline]
    pub fn used(&self, n: NodeIdx, d: usize) -> i64 {
        self.nodes.acct[self.acct_ix(n, 1, d)]
    }

    /// Node `n`'s releasing in dimension `d`.
    #[inline]
    pub fn releasing(&self, n: NodeIdx, d: usize) -> i64 {
        self.nodes.acct[self.acct_ix(n, 2, d)]
    }

    /// Node `n`'s pipelined in dimension `d`.
    #[inline]
    pub fn pipelined(&self, n: NodeIdx, d: usize) -> i64 {
        self.nodes.acct[self.acct_ix(n, 3, d)]
    }

    /// Value of node `n` in dimension `d` of a node resource table (row-major: a node's
    /// dimensions are adjacent, so one node's check reads one cache line per table).
    #[inline]
    pub fn at(&self, table: &[i64], n: NodeIdx, d: usize) -> i64 {
        table[n.ix() * self.dims + d]
    }

    /// Whether node `n` is in this scheduler's shard (Volcano `ssn.NodesInShard.Has`); true for
    /// every node when `--scheduler-sharding-mode` is `none`.
    #[inline]
    pub fn in_shard(&self, n: NodeIdx) -> bool {
        self.nodes.in_shard.get(n.ix()).copied().unwrap_or(true)
    }

    /// Hard sharding's predicate (Volcano `PredicateHelper.PredicateNodes`, before every other
    /// predicate): a node outside the shard is not a candidate.
    #[inline]
    pub fn shard_predicate(&self, n: NodeIdx) -> Result<(), fit::Reason> {
        if self.options().sharding_mode == crate::model::ShardingMode::Hard && !self.in_shard(n) {
            return Err(fit::Reason::NotInShard);
        }
        Ok(())
    }

    /// Volcano allocate's node gradient for a task needing `req` on node `n` (higher is tried
    /// first): 2 when `req` fits idle resources, 1 when it fits only FutureIdle, 0 otherwise.
    /// Under soft sharding in-shard nodes come before the others of the same kind: 4 idle in
    /// shard, 3 idle elsewhere, 2 FutureIdle in shard, 1 FutureIdle elsewhere
    /// (`prioritizeNodes`'s four candidate lists).
    #[inline]
    pub fn gradient(&self, req: &[i64], n: NodeIdx) -> u8 {
        let g = if self.fits_idle(req, n) {
            2
        } else if self.fits_future_idle(req, n) {
            1
        } else {
            return 0;
        };
        if self.options().sharding_mode != crate::model::ShardingMode::Soft {
            return g;
        }
        2 * g - u8::from(!self.in_shard(n))
    }

    /// Starts loading node `n`'s rows of every table a bind and the next leaf evaluations
    /// read (the resource tables, its task list head, the node view) into the cache
    /// ([`crate::kernels::prefetch::line`]), so that their misses overlap instead of coming one
    /// by one as the bind's code reaches them. Changes nothing; call it when `n` is chosen,
    /// before the bind.
    pub fn warm_node(&self, n: NodeIdx) {
        use crate::kernels::prefetch::line;
        line(&self.nodes.head[n.ix()]);
        self.view.prefetch(n);
        if self.dims == 0 {
            return;
        }
        let (first, last) = (n.ix() * self.dims, (n.ix() + 1) * self.dims - 1);
        line(&self.nodes.allocatable[first]);
        line(&self.nodes.allocatable[last]);
        // A row of 4 × dims spans several lines: one hint per 8 values (a line) and the last.
        let acct = self.acct_ix(n, 0, 0);
        let end = acct + ACCT_BLOCKS * self.dims;
        for i in (acct..end).step_by(8).chain([end - 1]) {
            line(&self.nodes.acct[i]);
        }
    }

    /// Whether `req ≤ idle(n)` in every dimension (Volcano `LessEqual(Idle, Zero)`).
    #[inline]
    pub fn fits_idle(&self, req: &[i64], n: NodeIdx) -> bool {
        let row = self.acct_ix(n, 0, 0);
        req.iter().enumerate().all(|(d, &r)| r <= 0 || r <= self.nodes.acct[row + d])
    }

    /// Node `n`'s FutureIdle in `d`: idle + releasing − pipelined.
    #[inline]
    pub fn future_idle(&self, n: NodeIdx, d: usize) -> i64 {
        self.idle(n, d) + self.releasing(n, d) - self.pipelined(n, d)
    }

    /// Whether `req ≤ FutureIdle(n)` in every dimension.
    #[inline]
    pub fn fits_future_idle(&self, req: &[i64], n: NodeIdx) -> bool {
        req.iter().enumerate().all(|(d, &r)| r <= 0 || r <= self.future_idle(n, d))
    }

    /// The first dimension (in report order) where `req > FutureIdle(n)`.
    pub fn first_insufficient(&self, req: &[i64], n: NodeIdx, order: &[usize]) -> Option<usize> {
        order.iter().copied().find(|&d| d < req.len() && req[d] > 0 && req[d] > self.future_idle(n, d))
    }

    /// Interned task role of `t`.
    #[inline]
    pub fn role(&self, t: TaskIdx) -> crate::intern::Sym {
        self.tasks.rec[t.ix()].c.role
    }

    /// Records a fit error for task `t` of job `j` (replaces an older one).
    pub fn set_fit_errors(&mut self, j: JobIdx, t: TaskIdx, fe: FitErrors) {
        let v = &mut self.fit_errors[j.ix()];
        match v.iter_mut().find(|(x, _)| *x == t) {
            Some(slot) => slot.1 = fe,
            None => v.push((t, fe)),
        }
    }

    /// Fit errors of task `t`, if any.
    pub fn fit_errors_of(&self, j: JobIdx, t: TaskIdx) -> Option<&FitErrors> {
        self.fit_errors[j.ix()].iter().find(|(x, _)| *x == t).map(|(_, f)| f)
    }

    /// Changes a task's status, keeping the job's counts (Volcano `UpdateTaskStatus`).
    pub(in crate::session) fn set_status(&mut self, t: TaskIdx, s: TaskStatus) {
        let old = self.tasks.status[t.ix()];
        if old == s {
            return;
        }
        self.tasks.status[t.ix()] = s;
        if let Some(j) = self.tasks.job_of(t) {
            let c = &mut self.jobs.counts[j.ix()];
            c[old as usize] -= 1;
            c[s as usize] += 1;
            if self.tasks.best_effort[t.ix()] {
                if old == TaskStatus::Pending {
                    self.jobs.pending_best_effort[j.ix()] -= 1;
                }
                if s == TaskStatus::Pending {
                    self.jobs.pending_best_effort[j.ix()] += 1;
                }
            }
        }
    }

    /// Adds (`sign` = 1) or takes away (`sign` = -1) task `t`'s request on node `n` as a task in
    /// `status` counts there (Volcano `NodeInfo.AddTask`/`RemoveTask`): Releasing takes idle and
    /// counts as releasing; Pipelined only reserves `pipelined`; anything else takes idle. Sums
    /// saturate: only pre-existing pods far beyond a node's allocatable can reach the bounds,
    /// and a saturated node stays full instead of wrapping to free.
    fn account(&mut self, t: TaskIdx, n: NodeIdx, status: TaskStatus, sign: i64) {
        let dims = self.dims;
        for d in 0..dims {
            let r = self.tasks.resreq[t.ix() * dims + d];
            if r == 0 {
                continue;
            }
            let r = sign * r;
            let [idle, used, releasing, pipelined] = [0, 1, 2, 3].map(|b| self.acct_ix(n, b, d));
            let a = &mut *self.nodes.acct;
            match status {
                TaskStatus::Pipelined => a[pipelined] = a[pipelined].saturating_add(r),
                TaskStatus::Releasing => {
                    a[idle] = a[idle].saturating_sub(r);
                    a[releasing] = a[releasing].saturating_add(r);
                    a[used] = a[used].saturating_add(r);
                }
                _ => {
                    a[idle] = a[idle].saturating_sub(r);
                    a[used] = a[used].saturating_add(r);
                }
            }
        }
        self.node_changes.push(n.0);
    }

    /// Puts task `t` on node `n` with its current status (Volcano `NodeInfo.AddTask`): its
    /// request counts by [`State::account`]'s rule and it becomes the node's first task.
    pub(in crate::session) fn node_add_task(&mut self, t: TaskIdx, n: NodeIdx) {
        self.account(t, n, self.tasks.status[t.ix()], 1);
        self.tasks.node[t.ix()] = n.0;
        let head = self.nodes.head[n.ix()];
        self.tasks.next_on_node[t.ix()] = head;
        self.tasks.prev_on_node[t.ix()] = NONE;
        if head != NONE {
            self.tasks.prev_on_node[head as usize] = t.0;
        }
        self.nodes.head[n.ix()] = t.0;
    }

    /// [`State::node_add_task`], but placing `t` just before task row `next` in the node's task
    /// list (at the end when `next` is [`NONE`]): how undoing a removal restores the list.
    pub(in crate::session) fn node_insert_task(&mut self, t: TaskIdx, n: NodeIdx, next: u32) {
        if next == NONE && self.nodes.head[n.ix()] == NONE || next == self.nodes.head[n.ix()] {
            self.node_add_task(t, n);
            return;
        }
        self.account(t, n, self.tasks.status[t.ix()], 1);
        self.tasks.node[t.ix()] = n.0;
        let prev = if next == NONE {
            // The last task of the list.
            let mut cur = self.nodes.head[n.ix()];
            while self.tasks.next_on_node[cur as usize] != NONE {
                cur = self.tasks.next_on_node[cur as usize];
            }
            cur
        } else {
            self.tasks.prev_on_node[next as usize]
        };
        self.tasks.prev_on_node[t.ix()] = prev;
        self.tasks.next_on_node[t.ix()] = next;
        self.tasks.next_on_node[prev as usize] = t.0;
        if next != NONE {
            self.tasks.prev_on_node[next as usize] = t.0;
        }
    }

    /// Takes task `t` off its node, undoing [`State::node_add_task`] for its current status.
    pub(in crate::session) fn node_remove_task(&mut self, t: TaskIdx) {
        let Some(n) = self.tasks.node_of(t) else {
            return;
        };
        self.account(t, n, self.tasks.status[t.ix()], -1);
        let (prev, next) = (self.tasks.prev_on_node[t.ix()], self.tasks.next_on_node[t.ix()]);
        if prev != NONE {
            self.tasks.next_on_node[prev as usize] = next;
        } else {
            self.nodes.head[n.ix()] = next;
        }
        if next != NONE {
            self.tasks.prev_on_node[next as usize] = prev;
        }
        self.tasks.node[t.ix()] = NONE;
        self.tasks.next_on_node[t.ix()] = NONE;
        self.tasks.prev_on_node[t.ix()] = NONE;
    }

    /// Changes the status of task `t`, which is on a node, and its accounting there (Volcano
    /// `UpdateTaskStatus` + `NodeInfo.UpdateTask`), keeping its place in the node's task list, so
    /// changing it back restores the node exactly.
    pub(in crate::session) fn node_update_status(&mut self, t: TaskIdx, s: TaskStatus) {
        let Some(n) = self.tasks.node_of(t) else {
            self.set_status(t, s);
            return;
        };
        self.account(t, n, self.tasks.status[t.ix()], -1);
        self.set_status(t, s);
        self.account(t, n, s, 1);
    }

    /// Tasks on node `n` (any status), most recent first.
    pub fn tasks_on(&self, n: NodeIdx) -> impl Iterator<Item = TaskIdx> + '_ {
        let mut cur = self.nodes.head[n.ix()];
        std::iter::from_fn(move || {
            if cur == NONE {
                return None;
            }
            let t = TaskIdx(cur);
            cur = self.tasks.next_on_node[cur as usize];
            Some(t)
        })
    }

    /// `ns/name` of a task's pod.
    pub fn task_key(&self, t: TaskIdx) -> String {
        let s = &self.tasks.rec[t.ix()].spec;
        format!("{}/{}", s.namespace, s.name)
    }

    /// Tasks whose pods carry inter-pod affinity or anti-affinity terms.
    pub fn affinity_tasks(&self) -> &'a [TaskIdx] {
        self.affinity_tasks
    }

    /// Sets a job's phase.
    pub fn set_phase(&mut self, j: JobIdx, p: PodGroupPhase) {
        self.jobs.phase[j.ix()] = p;
    }
}

impl<'a> State<'a> {
    /// Builds a session's tables in `arena` from `cluster` (Volcano `OpenSession` before the
    /// plugins open), from the layout the cluster keeps when it is current
    /// ([`Cluster::prepared`]), else from a fresh one; the GPU cards follow `devices` (the
    /// settings the registry's deviceshare plugin reads from the conf, mode
    /// [`devices::DeviceMode::Off`] without it).
    pub fn open(
        arena: &'a Bump,
        cluster: &'a Cluster,
        conf: &'a SchedulerConf,
        opts: &CycleOptions,
        devices: devices::DeviceConf,
    ) -> Self {
        let dq = conf.options.default_queue.as_str();
        let mut state = match cluster.prepared(dq) {
            Some(l) => build::build(arena, cluster, l, Some(l), conf, opts, devices),
            None => build::build(arena, cluster, &layout::Layout::new(cluster, dq), None, conf, opts, devices),
        };
        state.view = node_view::NodeView::start(arena, &state);
        state
    }

    /// The decisions of a session whose plugins have closed (Volcano `CloseSession`: PodGroup,
    /// Queue and pod statuses).
    /// The PodGroup conditions the plugins wrote ([`notes::CloseNotes::job_condition`]) move into the
    /// statuses: at 100,000 PodGroups a copy of each was 400,000 strings on memory touched for
    /// the first time (issue 29).
    pub fn decisions(&mut self) -> Decisions {
        let conditions = std::mem::take(&mut self.notes.job_condition);
        close::decisions(self, conditions)
    }

    /// Allocated tasks per role of `j` (Volcano `getJobAllocatedRoles`).
    pub fn allocated_in_role(&self, j: JobIdx, role: crate::intern::Sym) -> i32 {
        self.jobs.tasks(j).filter(|&t| self.role(t) == role && self.tasks.status[t.ix()].allocated()).count() as i32
    }
}

/// What a session's [`statement::Statement`] operations tell the registered plugins (Volcano's
/// event handlers and `JobReady`, volcano-behaviour.md §1.5). The framework's plugin set
/// implements it; the session layer names no plugin.
pub trait SessionEvents<'a> {
    /// A task was allocated or pipelined (Volcano `AllocateFunc`).
    fn on_allocate(&mut self, s: &mut State<'a>, t: TaskIdx);
    /// A task was deallocated or evicted (Volcano `DeallocateFunc`).
    fn on_deallocate(&mut self, s: &mut State<'a>, t: TaskIdx);
    /// Whether job `j` is ready (Volcano `JobReady`, ANDed over the plugins).
    fn job_ready(&self, s: &State<'a>, j: JobIdx) -> bool;
}

/// A scheduling session: [`State`] plus the registered plugins `P` (the framework's
/// `crate::framework::Session` fixes `P` to its plugin set and opens and closes it).
pub struct Session<'a, P> {
    /// The arena the tables live in.
    pub arena: &'a Bump,
    /// Tables and notes.
    pub state: State<'a>,
    /// Plugins by tier.
    pub plugins: P,
}
