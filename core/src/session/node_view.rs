//! The node view of the kube-scheduler plugins: Volcano's per-node `k8sframework.NodeInfo`
//! snapshot that `predicates` and `nodeorder` share (volcano-behaviour.md §3, issue 10 rule 4).
//!
//! At session open it holds every pod on a node, Releasing (terminating) pods included. In the
//! session only the predicates plugin's event handler changes it (Volcano's predicates
//! `AllocateFunc`/`DeallocateFunc` call `nodeInfo.AddPod`/`RemovePod`): +pod on allocate and
//! on pipeline, −pod on discard and on eviction, each pod counted once. Without `predicates`
//! in the conf, pods placed in the session never enter it, so nodeorder's scores do not see
//! them (binpack reads the session's own node `used` instead).
//!
//! What reads it: the pod-number predicate ([`NodeView::pods`]), LeastAllocated and
//! MostAllocated ([`NodeView::nonzero_cpu`], [`NodeView::nonzero_mem`]), BalancedAllocation
//! ([`NodeView::requested`]), and the inter-pod
//! affinity, anti-affinity, topology spread and host-port checks (a task is in the view when
//! [`NodeView::node`] is set).

use super::tables::{NodeIdx, TaskIdx, TaskStatus, NONE};
use super::State;
use bumpalo::Bump;

/// Per-node sums and per-task membership of the view, cut from the session arena.
#[derive(Default)]
pub struct NodeView<'a> {
    /// Per task: the node row it is counted on, or [`NONE`] when it is not in the view.
    pub(in crate::session) node: &'a mut [u32],
    /// Per node, one row of `dims + 3`: Σ requests of the counted pods (kube
    /// `NodeInfo.Requested`, `dims` long), then Σ CPU requests with kube-scheduler's non-zero
    /// defaults (millicores), Σ memory requests with them (bytes), and the pods counted. One
    /// table, not four: a bind changes all of them for its node, and every class re-reads them
    /// when it scores the node again.
    pub(in crate::session) sums: &'a mut [i64],
    /// Row length of `sums`: `dims + 3`.
    stride: usize,
}

/// Columns of a [`NodeView`] row after the `dims` requested ones.
const NONZERO_CPU: usize = 0;
const NONZERO_MEM: usize = 1;
const PODS: usize = 2;

/// Read access outside the session: the view changes only through [`NodeView::add_task`] and
/// [`NodeView::remove_task`] (the predicates plugin's event handler, as in Volcano).
impl NodeView<'_> {
    /// Per task: the node row it is counted on, or [`NONE`].
    #[inline]
    pub fn node(&self) -> &[u32] {
        self.node
    }

    /// Node `n`'s row: requested (`dims`), non-zero CPU, non-zero memory, pods.
    #[inline]
    fn row(&self, n: NodeIdx) -> &[i64] {
        &self.sums[n.ix() * self.stride..(n.ix() + 1) * self.stride]
    }

    /// Pods counted on node `n`.
    #[inline]
    pub fn pods(&self, n: NodeIdx) -> i64 {
        self.row(n)[self.stride - 3 + PODS]
    }

    /// Σ CPU requests on node `n` with kube-scheduler's non-zero defaults, millicores.
    #[inline]
    pub fn nonzero_cpu(&self, n: NodeIdx) -> i64 {
        self.row(n)[self.stride - 3 + NONZERO_CPU]
    }

    /// Σ memory requests on node `n` with the non-zero defaults, bytes.
    #[inline]
    pub fn nonzero_mem(&self, n: NodeIdx) -> i64 {
        self.row(n)[self.stride - 3 + NONZERO_MEM]
    }

    /// Σ requests of the pods counted on node `n`, one per dimension.
    #[inline]
    pub fn requested(&self, n: NodeIdx) -> &[i64] {
        &self.row(n)[..self.stride - 3]
    }

    /// Every row, for the session fingerprint.
    pub fn sums(&self) -> &[i64] {
        self.sums
    }

    /// Starts loading node `n`'s row into the cache ([`crate::kernels::prefetch::line`]);
    /// nothing for a node the view has no row for.
    #[inline]
    pub fn prefetch(&self, n: NodeIdx) {
        let row = self.sums.get(n.ix() * self.stride..(n.ix() + 1) * self.stride).unwrap_or_default();
        if let (Some(first), Some(last)) = (row.first(), row.last()) {
            crate::kernels::prefetch::line(first);
            crate::kernels::prefetch::line(last);
        }
    }
}

impl<'a> NodeView<'a> {
    /// The view at session open: every task the session put on a node (any status, Releasing
    /// included), with the sums of their requests.
    pub fn start(arena: &'a Bump, s: &State<'a>) -> Self {
        let (nn, dims) = (s.nodes.len, s.dims);
        let mut v = NodeView {
            node: arena.alloc_slice_fill_copy(s.tasks.len, NONE),
            sums: arena.alloc_slice_fill_copy(nn * (dims + 3), 0),
            stride: dims + 3,
        };
        for n in (0..nn).map(|i| NodeIdx(i as u32)) {
            for t in s.tasks_on(n) {
                v.add(s, t, n);
            }
        }
        v
    }

    /// Whether task `t` is counted in the view.
    #[inline]
    pub fn has(&self, t: TaskIdx) -> bool {
        self.node[t.ix()] != NONE
    }

    /// The predicates plugin's `AllocateFunc` on the view (kube `NodeInfo.AddPod`): counts `t`
    /// on its current node in `s` (no-op without one, or when it is already counted).
    pub fn add_task(&mut self, s: &State<'_>, t: TaskIdx) {
        if let Some(n) = s.tasks.node_of(t) {
            self.add(s, t, n);
        }
    }

    /// The predicates plugin's `DeallocateFunc` on the view (kube `NodeInfo.RemovePod`): stops
    /// counting `t` (no-op when it is not counted).
    pub fn remove_task(&mut self, s: &State<'_>, t: TaskIdx) {
        self.remove(s, t);
    }

    /// Counts `t` on node `n` (no-op when it is already counted).
    fn add(&mut self, s: &State<'_>, t: TaskIdx, n: NodeIdx) {
        if self.has(t) {
            return;
        }
        self.node[t.ix()] = n.0;
        self.change(s, t, n, 1);
    }

    /// Stops counting `t` (no-op when it is not counted).
    fn remove(&mut self, s: &State<'_>, t: TaskIdx) {
        let n = self.node[t.ix()];
        if n == NONE {
            return;
        }
        self.node[t.ix()] = NONE;
        self.change(s, t, NodeIdx(n), -1);
    }

    fn change(&mut self, s: &State<'_>, t: TaskIdx, n: NodeIdx, sign: i64) {
        let dims = s.dims;
        let spec = &s.tasks.rec[t.ix()].spec;
        let row = &mut self.sums[n.ix() * self.stride..(n.ix() + 1) * self.stride];
        let (req, rest) = row.split_at_mut(dims);
        rest[PODS] = rest[PODS].saturating_add(sign).max(0);
        rest[NONZERO_CPU] = rest[NONZERO_CPU].saturating_add(sign * spec.nonzero_cpu_milli);
        rest[NONZERO_MEM] = rest[NONZERO_MEM].saturating_add(sign * spec.nonzero_memory_bytes);
        for (x, &r) in req.iter_mut().zip(s.tasks.req(t, dims)) {
            if r != 0 {
                *x = x.saturating_add(sign * r);
            }
        }
    }
}

impl State<'_> {
    /// Whether `t` counts as an existing pod for inter-pod affinity, anti-affinity and host
    /// ports: it is in the view (Releasing pods of the session's start included).
    #[inline]
    pub fn in_view(&self, t: TaskIdx) -> bool {
        self.view.has(t)
    }

    /// Whether `t` counts for topology spread: in the view and not terminating (kube's
    /// `countPodsMatchSelector` skips pods with a deletion timestamp).
    #[inline]
    pub fn in_view_spread(&self, t: TaskIdx) -> bool {
        self.view.has(t) && self.tasks.status[t.ix()] != TaskStatus::Releasing
    }
}
