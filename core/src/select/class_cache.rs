//! Incremental node choice for task classes. Tasks with the same requests and the same static
//! constraints (node selector, node affinity, tolerations) get the same predicate result and
//! score on a node, so a class keeps them per node and re-evaluates only the nodes whose
//! accounting changed since it was last used (the session's node change log). One max-tree keyed
//! by (fits idle, score) gives the best node among nodes that fit idle resources, else — when
//! none does — among all feasible ones, with Volcano's random choice among ties drawn from the
//! session's seeded source. Keys are `u64` unless soft node sharding needs `u128`
//! ([`ClassKey`], [`Classes`]): each bind makes every class re-read its leaf of the bound node,
//! and at 100,000 nodes narrower leaves are fewer cache misses.
//!
//! Node sampling (`--percentage-nodes-to-find`, volcano-behaviour.md §2 allocate,
//! `numNodesToFind`) is a window of the same tree: the plain scan checks nodes from the action's
//! rotating start and stops at the `numNodesToFind`-th feasible one, so its candidates are
//! exactly the feasible leaves between the start and that node (wrapping past the last node).
//! One walk down the tree's non-zero counts finds that node and the entries covering the
//! window, whose maxima give the best candidate, in O(ARITY · log n) per task; the start then
//! moves past the window as the plain scan's does. The class trees are always lazy
//! ([`MaxTree::set_lazy`]): a changed node only marks the entries above its leaf stale. Under
//! sampling a window fixes the stale entries it reads; the changed nodes are the picks', which
//! fall behind the moving start, so their updates gather until the scan comes round again and
//! each stale entry is recomputed once instead of once per update below it. A full scan reads
//! the tree's kept holders of its maximum ([`MaxTree::top`]), which clean the tree only when
//! their last holder changes.
//!
//! The result is exactly the plain scan's (`select::nodes`), which the tests check: the same
//! predicate and score functions run, only fewer times. Leaves are computed without inter-pod
//! state; a task whose only inter-pod constraints are required anti-affinity (its own terms or
//! existing pods' terms that match it) masks the nodes those forbid for its pick, when they are
//! few (at most 1/8 of the nodes). A task takes the plain path whenever that identity could
//! break: required pod affinity, preferred inter-pod scoring, host ports, topology spread, a
//! non-empty role with the predicate error cache on (Volcano's per-role cache), or
//! PreferNoSchedule taints the class does not tolerate (their score is normalised across the
//! candidate nodes).

use crate::framework::k8s::PodCtx;
use crate::framework::{Plugins, Session};
use crate::intern::Sym;
use crate::kernels::bits::Bits;
use crate::kernels::masked_max::{MaskedMax, NodeMask};
use crate::kernels::maxtree::{Key, MaxTree, Window};
use crate::limits::PARALLEL_NODE_THRESHOLD;
use crate::model::TaintEffect;
use crate::select::nodes::NodeScan;
use crate::session::fit::Reason;
use crate::session::tables::{NodeIdx, TaskIdx};
use crate::session::State;
use hashbrown::HashMap;
use rayon::prelude::*;
use std::hash::{BuildHasher, Hash, Hasher};

/// Memory the classes of one action may hold, bytes (a class keeps at most about 18 bytes per
/// node: its leaf keys, their summaries and the static predicate flags; about 10 with `u64`
/// keys, [`Classes::Narrow`]).
pub const CLASS_MEMORY_BYTES: usize = 256 << 20;

/// Classes kept at once for a cluster of `nodes` nodes: as many as [`CLASS_MEMORY_BYTES`]
/// holds, at least 64 and at most 1,024; past it the least recently used class is recycled
/// (rebuilt, O(nodes), when its tasks come back).
pub fn max_classes(nodes: usize) -> usize {
    (CLASS_MEMORY_BYTES / (18 * nodes.max(1))).clamp(64, 1024)
}

/// Class masks one class keeps a [`MaskedMax`] for, at most (the least recently used is
/// recycled): each costs two bits per node and a check per leaf change of the class.
const MASKED_MAX_PER_CLASS: usize = 8;

/// Masks of fewer nodes get no [`MaskedMax`]: reading their leaves costs little, and a local
/// PV's one-node masks would otherwise keep recycling them.
const MASKED_MAX_MIN_NODES: usize = 64;

/// What the class path decided for a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    /// The node the plain scan would choose.
    Node(NodeIdx),
    /// No node is feasible: take the plain path to collect the fit errors.
    NoneFeasible,
    /// The task cannot use the class path.
    Ineligible,
}

struct Class<K> {
    rep: TaskIdx,
    /// [`Plugins::class_key`] of the class's tasks.
    pkey: u64,
    hash: u64,
    pos: usize,
    last_used: u64,
    eligible: bool,
    /// Set once a score is NaN (the plain scan's float comparisons then cannot be mirrored) or
    /// a key `K` cannot hold ([`ClassKey::encode`]): the class's tasks take the plain path.
    poisoned: bool,
    /// Per node, one bit: passes the static predicates without the tasks' class masks
    /// ([`Plugins::predicate_static_unmasked`]). Bits, not bytes: every bind makes each class
    /// read its node's flag, and at 100,000 nodes 16 classes' byte flags (1.6 MB) missed the
    /// cache on nearly every read where their bits (200 KB) stay in it.
    static_ok: Bits,
    tree: MaxTree<K>,
    /// The best leaves of `tree` inside the class masks its tasks picked with
    /// ([`Plugins::class_mask`]), one per mask, told every leaf change.
    mask_max: Vec<MaskedMax<K>>,
    /// Each BatchNodeOrder plugin's (constant) score for this class.
    batch: Vec<f64>,
}

/// The classes of one action, their trees keyed by `K` ([`ClassKey`]).
#[derive(Default)]
pub struct ClassCache<K> {
    /// Classes kept at once (0: [`max_classes`] of the session's node count).
    limit: usize,
    classes: Vec<Class<K>>,
    index: HashMap<u64, Vec<usize>>,
    clock: u64,
    /// Per node: already in `touched` (unset as `touched` is read).
    seen: Bits,
    touched: Vec<u32>,
    /// Nodes masked for the current pick with their keys, restored in reverse order.
    masked: Vec<(u32, K)>,
    /// The current pick's sampling window ([`window`]).
    window: Window<K>,
    /// Scratch of [`best_in_mask`]: the holders of the best key, in scan order.
    holders: Vec<u32>,
    /// Masks of fewer nodes get no [`MaskedMax`] (0: [`MASKED_MAX_MIN_NODES`]).
    masked_min_nodes: usize,
    /// Hasher of the class keys.
    hasher: hashbrown::DefaultHashBuilder,
    /// A context without inter-pod state: leaves never depend on one task's terms.
    plain_ctx: PodCtx,
    /// Class hashes met once: a class is built on its second task, so one-off tasks (all pods
    /// distinct) keep the plain scan and pay nothing extra.
    met_once: hashbrown::HashSet<u64>,
    /// The nodes with a PreferNoSchedule taint, found at the first class built (a session's
    /// nodes do not change while a cache lives): a class's check reads these, not every node.
    prefer_tainted: Option<Vec<u32>>,
}

/// The class key's hash, with the cache's hasher (its seed varies between caches; decisions
/// never depend on hash values, classes are compared in full).
fn class_hash(b: &hashbrown::DefaultHashBuilder, s: &State<'_>, t: TaskIdx) -> u64 {
    let mut h = b.build_hasher();
    let rec = s.tasks.rec[t.ix()];
    s.tasks.req(t, s.dims).hash(&mut h);
    rec.spec.nonzero_cpu_milli.hash(&mut h);
    rec.spec.nonzero_memory_bytes.hash(&mut h);
    rec.c.node_selector.hash(&mut h);
    rec.c.node_required.hash(&mut h);
    rec.c.node_preferred.hash(&mut h);
    rec.c.tolerations.hash(&mut h);
    h.finish()
}

fn same_class(s: &State<'_>, a: TaskIdx, b: TaskIdx) -> bool {
    let (x, y) = (s.tasks.rec[a.ix()], s.tasks.rec[b.ix()]);
    s.tasks.req(a, s.dims) == s.tasks.req(b, s.dims)
        && x.spec.nonzero_cpu_milli == y.spec.nonzero_cpu_milli
        && x.spec.nonzero_memory_bytes == y.spec.nonzero_memory_bytes
        && x.c.node_selector == y.c.node_selector
        && x.c.node_required == y.c.node_required
        && x.c.node_preferred == y.c.node_preferred
        && x.c.tolerations == y.c.tolerations
}

/// Whether task `t` may use the class path at all.
fn task_eligible(s: &State<'_>, t: TaskIdx, ctx: &PodCtx, role_cache: bool) -> bool {
    let c = &s.tasks.rec[t.ix()].c;
    let nn = s.nodes.len;
    nn > 0
        && !(ctx.interpod && (ctx.pref_active || !c.pod_required.is_empty() || s.affinity_index.is_none()))
        && c.spread.is_empty()
        && c.host_ports.is_empty()
        && !(role_cache && c.role != Sym::EMPTY)
}

/// Into `out` (as `(node, 0)`): the nodes the task's required anti-affinity and existing pods'
/// anti-affinity forbid (kube InterPodAffinity Filter, the anti-affinity parts). False when
/// they are too many to mask cheaply (more than 1/8 of the nodes).
fn forbidden_nodes<K: Key>(s: &State<'_>, t: TaskIdx, ctx: &PodCtx, out: &mut Vec<(u32, K)>) -> bool {
    out.clear();
    let Some(ix) = s.affinity_index.as_ref() else { return false };
    let limit = s.nodes.len / 8;
    let pod = &s.tasks.rec[t.ix()].c;
    let pairs = pod
        .anti_required
        .iter()
        .zip(&ctx.anti_values)
        .flat_map(|(term, vals)| vals.iter().map(move |&v| (term.topology_key, v)))
        .chain(ctx.existing_anti.iter().copied());
    for (k, v) in pairs {
        out.extend(ix.nodes_with(k, v).map(|n| (n.0, K::ZERO)));
        if out.len() > limit {
            out.clear();
            return false;
        }
    }
    true
}

/// The nodes of `s` with at least one PreferNoSchedule taint, in node order.
fn prefer_tainted_nodes(s: &State<'_>) -> Vec<u32> {
    (0..s.nodes.len)
        .filter(|&n| s.nodes.rec[n].taints.iter().any(|x| x.effect == TaintEffect::PreferNoSchedule))
        .map(|n| n as u32)
        .collect()
}

/// Whether one of `nodes` (those with a PreferNoSchedule taint, [`prefer_tainted_nodes`]) has a
/// PreferNoSchedule taint task `t` does not tolerate (the class's score would vary with it).
fn untolerated_prefer_taint(s: &State<'_>, t: TaskIdx, nodes: &[u32]) -> bool {
    let tols = &s.tasks.rec[t.ix()].c.tolerations;
    nodes.iter().any(|&n| {
        s.nodes.rec[n as usize].taints.iter().any(|x| {
            x.effect == TaintEffect::PreferNoSchedule
                && !tols.iter().any(|tol| tol.effect.is_none_or(|e| e == TaintEffect::PreferNoSchedule) && tol.tolerates(x))
        })
    })
}

/// Predicate result and score of `t` on `n`, given whether `n` passes the static predicates
/// (computed once per class and node). The score adds the class's constant batch parts to the
/// NodeOrder sum in the same order [`Plugins::score_nodes`] does, so the floats are identical to
/// the plain scan's.
fn leaf<'a>(
    s: &State<'a>,
    p: &Plugins<'a>,
    ctx: &PodCtx,
    t: TaskIdx,
    n: NodeIdx,
    batch: &[f64],
    static_ok: bool,
) -> (Option<Reason>, f64) {
    if !static_ok {
        return (Some(Reason::NodeAffinity), 0.0);
    }
    let r = match s.first_insufficient(s.tasks.req(t, s.dims), n, s.report_order) {
        Some(d) => Some(Reason::Insufficient(d as u16)),
        None => p.predicate_dynamic(s, ctx, t, n).err(),
    };
    let mut score = 0.0;
    if r.is_none() {
        score = p.node_order_sum(s, ctx, t, n);
        for b in batch {
            score += b;
        }
    }
    (r, score)
}

/// A class tree's key: the order of a node for a class's tasks, from its gradient
/// ([`State::gradient`]: 2 = fits idle, 1 = fits only FutureIdle; under soft node sharding 4..1
/// with in-shard nodes above the others) and its score. A higher gradient wins, then a higher
/// score; equal keys within the top gradient are exactly the scores the plain scan's `==` calls
/// ties (−0.0 is taken as 0.0, which float comparison equals). Key 0 is an infeasible node (or
/// one of gradient 0).
pub trait ClassKey: Key {
    /// The key of a feasible node of `gradient` (1..=4) and `score` (not NaN), or 0 when
    /// `gradient` is 0; `None` when this key type cannot hold it exactly.
    fn encode(gradient: u8, score: f64) -> Option<Self>;
}

/// The score's bits, −0.0 taken as 0.0 (which float comparison equals).
fn score_bits(score: f64) -> u64 {
    if score == 0.0 {
        0
    } else {
        score.to_bits()
    }
}

/// The score's bits mapped so that integer order is float order (−0.0 taken as 0.0).
fn ordered_bits(score: f64) -> u64 {
    let bits = score_bits(score);
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    }
}

/// Any gradient and score: the gradient above the score's ordered bits.
impl ClassKey for u128 {
    fn encode(gradient: u8, score: f64) -> Option<u128> {
        if gradient == 0 {
            return Some(0);
        }
        Some((gradient as u128) << 64 | ordered_bits(score) as u128)
    }
}

/// Gradients 1 and 2 (no soft node sharding) and scores ≥ 0, what non-negative plugin weights
/// give (nodeorder refuses weights below 0; a negative `binpack.weight`, say, can give a
/// negative score, and a class that meets one takes the plain path): the gradient in the top
/// bit above the score's bits plus one (a non-negative double's bits are below 2⁶³ − 1 and in
/// float order, and the one keeps the key of gradient 1 and score 0 from being 0). Half the
/// memory of a `u128` key: at 100,000 nodes 16 classes' leaves take 12.8 MB instead of 25.6.
impl ClassKey for u64 {
    fn encode(gradient: u8, score: f64) -> Option<u64> {
        let bits = score_bits(score);
        match gradient {
            0 => Some(0),
            1 | 2 if bits >> 63 == 0 => Some(((gradient as u64 - 1) << 63) | (bits + 1)),
            _ => None,
        }
    }
}

/// Into `w`, in scan order (from `start` to the last node, then from node 0): the nodes a
/// predicate scan from `start` processes over a class whose feasible nodes are `tree`'s
/// non-zero leaves; returns their number. The plain scan
/// ([`crate::select::nodes::predicate_nodes`]) stops right after the `want`-th feasible node
/// (at the first when `want` is 0); with `want ≥ nn`, or fewer feasible nodes than `want`, it
/// processes every node.
fn window<K: Key>(tree: &mut MaxTree<K>, start: usize, nn: usize, want: usize, w: &mut Window<K>) -> usize {
    w.clear();
    let k = if want >= nn { u32::MAX } else { want.max(1) as u32 - 1 };
    tree.clean_range(start, nn);
    match tree.extend_window(start, nn, k, w) {
        Ok(p) => p + 1 - start,
        Err(after) => {
            tree.clean_range(0, start);
            match tree.extend_window(0, start, k - after, w) {
                Ok(p) => nn - start + p + 1,
                Err(_) => nn,
            }
        }
    }
}

/// The best leaf of window `w`: its maximum key, a random one of the holders when several tie
/// (drawn as [`crate::select::nodes::best_node`] draws: only when there are several, uniformly
/// by position in scan order). `None` when every leaf there is 0.
fn best_of<K: Key>(tree: &MaxTree<K>, w: &Window<K>, rng: &mut crate::rng::SeededRng) -> Option<usize> {
    let k = if w.ties > 1 { rng.below(w.ties as usize) as u32 } else { 0 };
    tree.kth_max_in_window(w, k)
}

/// The best leaf of the whole tree in node order (the plain scan's choice when it processes
/// every node from node 0): read from the tree's kept holders of its maximum.
fn best_of_all<K: Key>(tree: &mut MaxTree<K>, rng: &mut crate::rng::SeededRng) -> Option<usize> {
    let (_, ties) = tree.top();
    if ties == 0 {
        return None;
    }
    let k = if ties > 1 { rng.below(ties as usize) as u32 } else { 0 };
    Some(tree.kth_max(k))
}

/// Calls `f` on the nodes of `mask` in `lo..hi`, in order, until it returns false; returns
/// whether it never did.
#[inline(always)]
fn each_in_mask(mask: &[u64], lo: usize, hi: usize, mut f: impl FnMut(usize) -> bool) -> bool {
    if lo >= hi {
        return true;
    }
    for w in lo / 64..=(hi - 1) / 64 {
        let mut bits = mask.get(w).copied().unwrap_or(0);
        if w == lo / 64 {
            bits &= !0u64 << (lo % 64);
        }
        if w == (hi - 1) / 64 && !hi.is_multiple_of(64) {
            bits &= !(!0u64 << (hi % 64));
        }
        while bits != 0 {
            let n = w * 64 + bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if !f(n) {
                return false;
            }
        }
    }
    true
}

/// The plain scan's choice for a task whose class's leaves are `tree` and whose class mask
/// ([`Plugins::class_mask`]) is `mask`: its feasible nodes are the non-zero leaves inside the
/// mask. The scan runs from `start` (wrapping) and stops after the `want`-th feasible node (all
/// nodes when `want ≥ nn`); the best key among the feasible nodes it processed wins, ties drawn
/// as [`crate::select::nodes::best_node`] draws (only when several, uniformly by position in
/// scan order). Returns the node and how many nodes the scan processed; `None` when no node in
/// the mask is feasible (then the plain scan collects the fit errors). Reads the leaves only, so
/// a lazy tree needs no cleaning: O(nodes in the mask) per pick, against O(nodes) predicate and
/// score evaluations of the plain scan.
fn best_in_mask<K: Key>(
    tree: &MaxTree<K>,
    mask: &[u64],
    start: usize,
    nn: usize,
    want: usize,
    rng: &mut crate::rng::SeededRng,
    holders: &mut Vec<u32>,
) -> Option<(usize, usize)> {
    let want = if want >= nn { usize::MAX } else { want.max(1) };
    let (mut max, mut found, mut last) = (K::ZERO, 0usize, 0usize);
    holders.clear();
    // One pass in scan order: the holders of the best key so far, in scan order.
    let mut visit = |n: usize| {
        let k = tree.get(n);
        if k == K::ZERO {
            return true;
        }
        found += 1;
        last = n;
        if k >= max {
            if k > max {
                max = k;
                holders.clear();
            }
            holders.push(n as u32);
        }
        found < want
    };
    let stopped = !each_in_mask(mask, start, nn, &mut visit) || !each_in_mask(mask, 0, start, &mut visit);
    if found == 0 {
        return None;
    }
    let processed = if stopped { (last + nn - start) % nn + 1 } else { nn };
    let k = if holders.len() > 1 { rng.below(holders.len()) } else { 0 };
    Some((holders[k] as usize, processed))
}

impl<K: ClassKey> Class<K> {
    /// Sets node `n`'s leaf from its predicate result and score, in the tree (`raw`: without
    /// fixing the levels above, [`MaxTree::rebuild`] after the batch) and in the masks' maxima.
    fn set_leaf(&mut self, s: &State<'_>, t: TaskIdx, n: usize, r: Option<Reason>, score: f64, raw: bool) {
        let encoded = match r {
            Some(_) => Some(K::ZERO),
            None if score.is_nan() => None,
            None => K::encode(s.gradient(s.tasks.req(t, s.dims), NodeIdx(n as u32)), score),
        };
        let k = encoded.unwrap_or_else(|| {
            self.poisoned = true;
            K::ZERO
        });
        if raw {
            self.tree.set_raw(n, k);
        } else {
            self.tree.set(n, k);
        }
        for m in &mut self.mask_max {
            m.update(n, k);
        }
    }

    fn full(&mut self, ssn: &Session<'_>, ctx: &PodCtx, t: TaskIdx) {
        let (s, p) = (&ssn.state, &ssn.plugins);
        let nn = s.nodes.len;
        p.batch_parts(s, ctx, t, NodeIdx(0), &mut self.batch);
        let batch = &self.batch;
        self.tree.reset(nn);
        self.poisoned = false;
        let mut leaves: Vec<(bool, Option<Reason>, f64)> = vec![(false, None, 0.0); nn];
        let eval = |n: usize, l: &mut (bool, Option<Reason>, f64)| {
            let node = NodeIdx(n as u32);
            let ok = p.predicate_static_unmasked(s, t, node).is_ok();
            let (r, sc) = leaf(s, p, ctx, t, node, batch, ok);
            *l = (ok, r, sc);
        };
        if nn >= PARALLEL_NODE_THRESHOLD {
            leaves.par_iter_mut().enumerate().for_each(|(n, l)| eval(n, l));
        } else {
            for (n, l) in leaves.iter_mut().enumerate() {
                eval(n, l);
            }
        }
        self.static_ok.reset(nn);
        for (n, l) in leaves.iter().enumerate() {
            if l.0 {
                self.static_ok.set(n);
            }
        }
        for (n, (_, r, sc)) in leaves.into_iter().enumerate() {
            self.set_leaf(s, t, n, r, sc, true);
        }
        self.tree.rebuild();
        self.pos = s.node_changes.len();
    }
}

impl<K: ClassKey> ClassCache<K> {
    /// A cache that keeps at most `limit` classes (at least 1), recycling the least recently
    /// used.
    pub fn with_limit(limit: usize) -> Self {
        ClassCache { limit: limit.max(1), ..Default::default() }
    }

    /// The node the plain scan ([`crate::select::nodes::predicate_nodes`] with `scan`, then
    /// the idle / FutureIdle group and the best score) would choose for `t`, computed
    /// incrementally. On [`Pick::Node`] the scan's sampling start has moved as the plain scan
    /// would have moved it; otherwise `scan` is untouched.
    pub fn pick(&mut self, ssn: &mut Session<'_>, t: TaskIdx, ctx: &PodCtx, scan: &mut NodeScan) -> Pick {
        if !task_eligible(&ssn.state, t, ctx, scan.uses_role_cache()) {
            return Pick::Ineligible;
        }
        // The nodes the task's bound claims allow (issue 22): read through, not part of the class.
        let Ok(mask) = ssn.plugins.class_mask(&ssn.state, t) else { return Pick::Ineligible };
        self.clock += 1;
        if ctx.interpod && !forbidden_nodes(&ssn.state, t, ctx, &mut self.masked) {
            return Pick::Ineligible;
        }
        let Some(ci) = self.class_of(ssn, t) else { return Pick::Ineligible };
        let class = &mut self.classes[ci];
        class.last_used = self.clock;
        if !class.eligible {
            return Pick::Ineligible;
        }
        // The tree only marks what a change makes stale. Under node sampling each pick reads
        // only its window, just ahead of the scan's start, while the nodes that change (the
        // picks') fall behind it, and each window fixes what it reads; a full scan reads the
        // tree's kept holders of its maximum, and the tree is cleaned only when they run out.
        let s = &ssn.state;
        class.tree.set_lazy(true);
        // Re-evaluate the nodes that changed since this class last looked.
        if self.seen.len() != s.nodes.len {
            self.seen.reset(s.nodes.len);
        }
        for &n in &s.node_changes[class.pos..] {
            if !self.seen.get(n as usize) {
                self.seen.set(n as usize);
                self.touched.push(n);
            }
        }
        // Many changed leaves: set them raw and rebuild the trees once (O(n)) instead of
        // fixing ancestors leaf by leaf (O(k log n)).
        let batch = self.touched.len() * 8 > s.nodes.len;
        class.tree.warm(&self.touched);
        for &n in &self.touched {
            self.seen.unset(n as usize);
            // A node the class's static predicates reject (another zone, a selector it lacks)
            // keeps its 0 leaf whatever changed on it: no evaluation, no tree update.
            if !class.static_ok.get(n as usize) {
                continue;
            }
            let (r, sc) = leaf(&ssn.state, &ssn.plugins, &self.plain_ctx, t, NodeIdx(n), &class.batch, true);
            class.set_leaf(&ssn.state, t, n as usize, r, sc, batch);
        }
        if batch {
            class.tree.rebuild();
        }
        self.touched.clear();
        class.pos = ssn.state.node_changes.len();
        if class.poisoned {
            self.masked.clear();
            return Pick::Ineligible;
        }
        let nn = ssn.state.nodes.len;
        let want = ssn.state.options().nodes_to_find(nn);
        // A full scan inside a mask without anti-affinity masking on top: the mask's kept
        // maximum and holders give the choice (Volcano's tie draw over the holders in scan
        // order), without reading the mask's leaves.
        let summary = match mask {
            Some(m) if want >= nn && self.masked.is_empty() => self.masked_max(ci, m),
            _ => None,
        };
        let class = &mut self.classes[ci];
        for m in self.masked.iter_mut() {
            m.1 = class.tree.get(m.0 as usize);
            class.tree.set(m.0 as usize, K::ZERO);
        }
        let pick = if let Some(mask) = mask {
            let start = scan.start() % nn;
            let best = match summary {
                Some(i) => {
                    let tree = &class.tree;
                    class.mask_max[i].best(start, |n| tree.get(n), &mut ssn.state.rng).map(|n| (n, nn))
                }
                None => best_in_mask(&class.tree, mask.bits, start, nn, want, &mut ssn.state.rng, &mut self.holders),
            };
            match best {
                Some((n, processed)) => {
                    scan.advance(processed);
                    Pick::Node(NodeIdx(n as u32))
                }
                None => Pick::NoneFeasible,
            }
        } else if class.tree.nonzero() == 0 {
            Pick::NoneFeasible
        } else {
            let want = ssn.state.options().nodes_to_find(nn);
            let start = scan.start() % nn;
            let (best, processed) = if want >= nn && start == 0 {
                // Not lazy: `want ≥ nn`.
                (best_of_all(&mut class.tree, &mut ssn.state.rng), nn)
            } else {
                let processed = window(&mut class.tree, start, nn, want, &mut self.window);
                (best_of(&class.tree, &self.window, &mut ssn.state.rng), processed)
            };
            match best {
                Some(n) => {
                    scan.advance(processed);
                    Pick::Node(NodeIdx(n as u32))
                }
                None => Pick::Ineligible,
            }
        };
        for &(n, key) in self.masked.iter().rev() {
            class.tree.set(n as usize, key);
        }
        self.masked.clear();
        if let Pick::Node(n) = pick {
            self.warm_picked(&ssn.state, ci, n);
        }
        pick
    }

    /// Starts loading what the bind on `n` and the picking class's next look at `n` will read —
    /// the node's table rows ([`State::warm_node`]) and class `ci`'s leaf of `n` — so that
    /// their cache misses overlap. At 100,000 nodes the picked node has not been touched for
    /// about as many binds as there are nodes, and each of these reads would otherwise wait for
    /// memory in turn. The other classes' leaves of `n` are not requested here: each class
    /// reads all the leaves it re-evaluates at once when it next picks ([`MaxTree::warm`]), and
    /// a hint per class per bind (16 with the bench's 16 classes) made the cycle 7 % slower at
    /// 100,000 nodes and 5 % at 10,000 (session 22, docs/performance.md).
    fn warm_picked(&self, s: &State<'_>, ci: usize, n: NodeIdx) {
        s.warm_node(n);
        self.classes[ci].tree.prefetch_leaf(n.ix());
    }

    /// The index in class `ci`'s masks' maxima of `mask`'s, added (to be read from the
    /// class's leaves at its first pick) when missing, recycling the class's least recently
    /// used past [`MASKED_MAX_PER_CLASS`]; `None` for a mask of fewer than
    /// [`MASKED_MAX_MIN_NODES`] nodes.
    fn masked_max(&mut self, ci: usize, mask: NodeMask<'_>) -> Option<usize> {
        let clock = self.clock;
        let class = &mut self.classes[ci];
        let i = match class.mask_max.iter().position(|m| m.id() == mask.id) {
            Some(i) => i,
            None => {
                let min = if self.masked_min_nodes == 0 { MASKED_MAX_MIN_NODES } else { self.masked_min_nodes };
                if mask.count() < min {
                    return None;
                }
                if class.mask_max.len() < MASKED_MAX_PER_CLASS {
                    class.mask_max.push(MaskedMax::new(mask));
                    class.mask_max.len() - 1
                } else {
                    let (i, _) = class.mask_max.iter().enumerate().min_by_key(|(_, m)| m.last_used)?;
                    class.mask_max[i] = MaskedMax::new(mask);
                    i
                }
            }
        };
        class.mask_max[i].last_used = clock;
        Some(i)
    }

    fn class_of(&mut self, ssn: &Session<'_>, t: TaskIdx) -> Option<usize> {
        let s = &ssn.state;
        // The plugins' own part of the task's identity (queue node groups, task-topology
        // buckets); a task whose results depend on untracked session state has none.
        let pkey = ssn.plugins.class_key(s, t)?;
        let h = class_hash(&self.hasher, s, t) ^ pkey.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        if let Some(list) = self.index.get(&h) {
            for &ci in list {
                if self.classes[ci].pkey == pkey && same_class(s, self.classes[ci].rep, t) {
                    return Some(ci);
                }
            }
        }
        if self.met_once.insert(h) {
            return None;
        }
        let tainted = self.prefer_tainted.get_or_insert_with(|| prefer_tainted_nodes(s));
        let eligible = !untolerated_prefer_taint(s, t, tainted);
        let limit = if self.limit == 0 { max_classes(s.nodes.len) } else { self.limit };
        let slot = if self.classes.len() < limit {
            self.classes.push(Class {
                rep: t,
                pkey,
                hash: h,
                pos: 0,
                last_used: self.clock,
                eligible,
                poisoned: false,
                static_ok: Bits::default(),
                tree: MaxTree::default(),
                mask_max: Vec::new(),
                batch: Vec::new(),
            });
            self.classes.len() - 1
        } else {
            let (ci, _) = self.classes.iter().enumerate().min_by_key(|(_, c)| c.last_used).expect("classes are full");
            let old = self.classes[ci].hash;
            if let Some(list) = self.index.get_mut(&old) {
                list.retain(|&x| x != ci);
            }
            let c = &mut self.classes[ci];
            c.mask_max.clear();
            c.rep = t;
            c.pkey = pkey;
            c.hash = h;
            c.eligible = eligible;
            ci
        };
        self.index.entry(h).or_default().push(slot);
        if eligible {
            self.classes[slot].full(ssn, &self.plain_ctx, t);
        }
        Some(slot)
    }
}

/// The class cache of one allocate action, its keys as narrow as the session allows.
pub enum Classes {
    /// `u64` keys: gradients 1 and 2 and non-negative scores ([`ClassKey`] for `u64`). A class
    /// whose key does not fit (a negative score) takes the plain path.
    Narrow(ClassCache<u64>),
    /// `u128` keys, any gradient and score: under soft node sharding (gradients 1–4).
    Wide(ClassCache<u128>),
}

impl Classes {
    /// The cache for a session of `nodes` nodes under `opts`: `None` when the class cache is
    /// off (`class_cache`); else keeping at most `class_limit` classes ([`max_classes`] when
    /// unset), with `u128` keys under soft node sharding and `u64` keys otherwise.
    pub fn for_session(opts: &crate::conf::SchedulerOptions, nodes: usize) -> Option<Self> {
        if !opts.class_cache {
            return None;
        }
        let limit = opts.class_limit.unwrap_or_else(|| max_classes(nodes));
        Some(match opts.sharding_mode {
            crate::model::ShardingMode::Soft => Classes::Wide(ClassCache::with_limit(limit)),
            _ => Classes::Narrow(ClassCache::with_limit(limit)),
        })
    }

    /// [`ClassCache::pick`].
    pub fn pick(&mut self, ssn: &mut Session<'_>, t: TaskIdx, ctx: &PodCtx, scan: &mut NodeScan) -> Pick {
        match self {
            Classes::Narrow(c) => c.pick(ssn, t, ctx, scan),
            Classes::Wide(c) => c.pick(ssn, t, ctx, scan),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::Cluster;
    use crate::conf::SchedulerConf;
    use crate::workload::{generate, Variant, WorkloadSpec};
    use crate::CycleOptions;

    /// The cluster of the seeded workload `spec`, each delta passed through `edit` first.
    fn cluster_of(spec: &WorkloadSpec, mut edit: impl FnMut(crate::cluster::Delta) -> crate::cluster::Delta) -> Cluster {
        let mut c = Cluster::new();
        for d in generate(spec) {
            c.apply(edit(d)).unwrap();
        }
        c
    }

    /// The tasks of the session's first job and what the class cache picks for each, in order.
    fn picks_of_first_job(ssn: &mut Session<'_>, cc: &mut ClassCache<u64>) -> (Vec<TaskIdx>, Vec<Pick>) {
        let mut scan = NodeScan::new(ssn.state.nodes.len, true);
        let job0: Vec<TaskIdx> = ssn.state.jobs.tasks(crate::session::tables::JobIdx(0)).collect();
        let picks = job0
            .iter()
            .map(|&t| {
                let ctx = PodCtx::build(&ssn.state, t, true);
                cc.pick(ssn, t, &ctx, &mut scan)
            })
            .collect();
        (job0, picks)
    }

    /// The second task of a class is served from the class (the first is left to the plain
    /// scan), and repeated picks stay on the class path: guards against the class key or its
    /// hash varying between calls, which would silently send every task to the plain scan.
    #[test]
    fn tasks_of_one_template_share_a_class() {
        let spec = WorkloadSpec { nodes: 50, pods: 40, gang: 10, queues: 1, variant: Variant::Identical, seed: 2 };
        let c = cluster_of(&spec, |d| d);
        let conf = SchedulerConf::default();
        let arena = bumpalo::Bump::new();
        let mut ssn = Session::open(&arena, &c, &conf, &CycleOptions::default(), &crate::plugins::REGISTRY);
        let mut cc = ClassCache::<u64>::default();
        let (_, picks) = picks_of_first_job(&mut ssn, &mut cc);
        assert_eq!(picks[0], Pick::Ineligible, "a class is built on its second task");
        assert!(picks[1..].iter().all(|p| matches!(p, Pick::Node(_))), "{picks:?}");
        assert_eq!(cc.classes.len(), 1);
    }

    /// A PreferNoSchedule taint on one node that a template does not tolerate keeps its tasks
    /// off the class path (the taint's score varies by node); tolerating it keeps them on. The
    /// tainted nodes are found once, not per class.
    #[test]
    fn an_untolerated_prefer_no_schedule_taint_keeps_a_class_off() {
        use crate::cluster::Delta;
        use crate::model::{Taint, TaintEffect, Toleration, TolerationOp};
        for tolerate in [false, true] {
            let spec = WorkloadSpec { nodes: 50, pods: 40, gang: 10, queues: 1, variant: Variant::Identical, seed: 2 };
            let c = cluster_of(&spec, |d| match d {
                Delta::Node(mut n) if n.name == "node-00007" => {
                    n.taints.push(Taint { key: "spot".into(), value: "yes".into(), effect: TaintEffect::PreferNoSchedule });
                    Delta::Node(n)
                }
                Delta::Pod(mut p) if tolerate => {
                    p.tolerations.push(Toleration {
                        key: "spot".into(),
                        op: TolerationOp::Exists,
                        value: String::new(),
                        effect: Some(TaintEffect::PreferNoSchedule),
                    });
                    Delta::Pod(p)
                }
                d => d,
            });
            let conf = SchedulerConf::default();
            let arena = bumpalo::Bump::new();
            let mut ssn = Session::open(&arena, &c, &conf, &CycleOptions::default(), &crate::plugins::REGISTRY);
            let mut cc = ClassCache::<u64>::default();
            let (_, picks) = picks_of_first_job(&mut ssn, &mut cc);
            let node7 = (0..ssn.state.nodes.len).find(|&n| ssn.state.nodes.rec[n].spec.name == "node-00007").unwrap();
            assert_eq!(cc.prefer_tainted, Some(vec![node7 as u32]), "tolerate {tolerate}");
            if tolerate {
                assert!(picks[1..].iter().all(|p| matches!(p, Pick::Node(_))), "{picks:?}");
            } else {
                assert!(picks.iter().all(|p| *p == Pick::Ineligible), "{picks:?}");
            }
        }
    }

    /// Pods whose claims are bound to zonal disks (each its own ReadWriteOnce claim) stay on
    /// the class path and share their template's one class, each picking inside its disk's
    /// zone (the class mask): the claims used to send every such pod to the plain scan (10×
    /// the cycle's cost at 10,000 nodes), then to one class per template and zone.
    #[test]
    fn pods_with_bound_zonal_claims_share_a_class_per_zone() {
        use crate::workload_volumes::{zonal, VolumeMix, ZONE};
        let spec = WorkloadSpec { nodes: 60, pods: 40, gang: 10, queues: 1, variant: Variant::Identical, seed: 2 };
        let mut c = cluster_of(&spec, |d| d);
        zonal(&mut c, VolumeMix { every: 1, ..VolumeMix::default() });
        let conf = SchedulerConf::default();
        let arena = bumpalo::Bump::new();
        let mut ssn = Session::open(&arena, &c, &conf, &CycleOptions::default(), &crate::plugins::REGISTRY);
        let mut cc = ClassCache::<u64>::default();
        let (job0, picks) = picks_of_first_job(&mut ssn, &mut cc);
        assert_eq!(picks[0], Pick::Ineligible, "a class is built on its second task");
        assert!(picks[1..].iter().all(|p| matches!(p, Pick::Node(_))), "{picks:?}");
        assert_eq!(cc.classes.len(), 1, "the disks' zones do not split the class");
        for (&t, p) in job0.iter().zip(&picks).skip(1) {
            let Pick::Node(n) = p else { unreachable!() };
            let pod = &ssn.state.tasks.rec[t.ix()].spec;
            let pv = &c.volumes().volumes[&format!("disk-{}-{}", pod.namespace, pod.name)];
            assert_eq!(
                ssn.state.nodes.rec[n.ix()].spec.labels.get(ZONE),
                pv.labels.get(ZONE),
                "{}: outside its disk's zone",
                pod.name
            );
        }
    }

    /// What each class cache picks for the tasks of the session's first `jobs` jobs, in order,
    /// each cache on its own session of the same cluster.
    fn picks_of_jobs(c: &Cluster, conf: &SchedulerConf, jobs: u32, caches: &mut [ClassCache<u64>]) -> Vec<Vec<Pick>> {
        caches
            .iter_mut()
            .map(|cc| {
                let arena = bumpalo::Bump::new();
                let mut ssn = Session::open(&arena, c, conf, &CycleOptions::default(), &crate::plugins::REGISTRY);
                let mut scan = NodeScan::new(ssn.state.nodes.len, true);
                let jobs = (0..jobs).map(crate::session::tables::JobIdx);
                let tasks: Vec<TaskIdx> = jobs.flat_map(|j| ssn.state.jobs.tasks(j).collect::<Vec<_>>()).collect();
                tasks
                    .into_iter()
                    .map(|t| {
                        let ctx = PodCtx::build(&ssn.state, t, true);
                        cc.pick(&mut ssn, t, &ctx, &mut scan)
                    })
                    .collect()
            })
            .collect()
    }

    /// Zone masks of 100 nodes get a kept maximum each in their class (three zones: three),
    /// and a full scan's picks through them are the picks of reading the class's leaves inside
    /// the mask (a cache that keeps none), ties drawn alike.
    #[test]
    fn masks_maxima_pick_what_the_mask_scan_picks() {
        use crate::workload_volumes::{zonal, VolumeMix};
        let spec = WorkloadSpec { nodes: 300, pods: 600, gang: 10, queues: 1, variant: Variant::Identical, seed: 5 };
        let mut c = cluster_of(&spec, |d| d);
        zonal(&mut c, VolumeMix { every: 2, ..VolumeMix::default() });
        let conf = SchedulerConf::default();
        let mut caches =
            [ClassCache::<u64>::default(), ClassCache { masked_min_nodes: usize::MAX, ..ClassCache::<u64>::default() }];
        let picks = picks_of_jobs(&c, &conf, 60, &mut caches);
        assert!(picks[0].iter().filter(|p| matches!(p, Pick::Node(_))).count() > 500, "most picks on the class path");
        assert_eq!(picks[0], picks[1], "the masks' maxima and the mask scan pick differently");
        let kept: Vec<usize> = caches[0].classes.iter().map(|k| k.mask_max.len()).collect();
        assert!(kept.contains(&3), "a class keeps one maximum per zone: {kept:?}");
        assert!(caches[1].classes.iter().all(|k| k.mask_max.is_empty()));
    }

    /// Under Volcano's node sampling the class path still serves a class's tasks (it used to
    /// step aside for the plain scan), and each pick moves the scan's start past the window as
    /// the plain scan does: on empty identical nodes every node is feasible, so the window of
    /// each pick is exactly `numNodesToFind` nodes.
    #[test]
    fn sampled_picks_stay_on_the_class_path_and_move_the_start() {
        let spec = WorkloadSpec { nodes: 50, pods: 40, gang: 10, queues: 1, variant: Variant::Identical, seed: 2 };
        let c = cluster_of(&spec, |d| d);
        let mut conf = SchedulerConf::default();
        conf.options.percentage_nodes_to_find = 0;
        conf.options.minimum_feasible_nodes = 10;
        let want = conf.options.nodes_to_find(50);
        assert_eq!(want, 25, "adaptive: 50 % of 50 nodes");
        let arena = bumpalo::Bump::new();
        let mut ssn = Session::open(&arena, &c, &conf, &CycleOptions::default(), &crate::plugins::REGISTRY);
        let mut cc = ClassCache::<u64>::default();
        let mut scan = NodeScan::new(ssn.state.nodes.len, true);
        let job0: Vec<TaskIdx> = ssn.state.jobs.tasks(crate::session::tables::JobIdx(0)).collect();
        let ctx = PodCtx::build(&ssn.state, job0[0], true);
        assert_eq!(cc.pick(&mut ssn, job0[0], &ctx, &mut scan), Pick::Ineligible, "a class is built on its second task");
        assert_eq!(scan.start(), 0, "an ineligible pick leaves the scan alone");
        for (i, &t) in job0[1..4].iter().enumerate() {
            let ctx = PodCtx::build(&ssn.state, t, true);
            let Pick::Node(n) = cc.pick(&mut ssn, t, &ctx, &mut scan) else { panic!("task {i}: not served by the class") };
            let window_start = (i * want) % 50;
            assert!((n.ix() + 50 - window_start) % 50 < want, "task {i}: node {} outside the window from {window_start}", n.ix());
            assert_eq!(scan.start(), ((i + 1) * want) % 50, "task {i}: start after the window");
        }
    }

    /// Scores a plugin can give (every weight is non-negative): zeros of both signs, the
    /// smallest subnormal, integers, fractions, huge values and infinity.
    const SCORES: [f64; 11] = [0.0, -0.0, 5e-324, 1e-300, 0.5, 1.0, 1.0 + f64::EPSILON, 99.0, 100.0, 1e300, f64::INFINITY];

    /// A `u64` key orders and ties every pair of (gradient 0–2, non-negative score) exactly as
    /// the `u128` key does, and only gradient 0 gives key 0.
    #[test]
    fn narrow_keys_order_as_wide_keys() {
        let pairs: Vec<(u8, f64)> = (0..=2u8).flat_map(|g| SCORES.map(|s| (g, s))).collect();
        for &(ga, sa) in &pairs {
            let (na, wa) = (u64::encode(ga, sa).unwrap(), u128::encode(ga, sa).unwrap());
            assert_eq!(na == 0, ga == 0, "({ga}, {sa:e})");
            for &(gb, sb) in &pairs {
                let (nb, wb) = (u64::encode(gb, sb).unwrap(), u128::encode(gb, sb).unwrap());
                assert_eq!(na.cmp(&nb), wa.cmp(&wb), "({ga}, {sa:e}) against ({gb}, {sb:e})");
            }
        }
    }

    /// What a `u64` key cannot hold is refused, not rounded: soft sharding's gradients 3 and 4
    /// and negative scores (the class then takes the plain path); the `u128` key holds them.
    #[test]
    fn narrow_keys_refuse_what_they_cannot_hold() {
        for (g, s) in [(3, 1.0), (4, 0.0), (1, -1.0), (2, -5e-324), (2, f64::NEG_INFINITY)] {
            assert_eq!(u64::encode(g, s), None, "({g}, {s:e})");
            assert!(u128::encode(g, s).is_some_and(|k| k != 0), "({g}, {s:e})");
        }
        assert!(u128::encode(4, -1.0) > u128::encode(3, 1e300), "a higher gradient wins over any score");
    }

    /// Soft node sharding gets the `u128` keys its four gradients need; no sharding and hard
    /// sharding (gradients 1 and 2) get `u64` keys; no cache when it is off.
    #[test]
    fn soft_sharding_gets_wide_keys() {
        use crate::model::ShardingMode;
        let mut opts = crate::conf::SchedulerOptions::default();
        for (mode, wide) in [(ShardingMode::None, false), (ShardingMode::Hard, false), (ShardingMode::Soft, true)] {
            opts.sharding_mode = mode;
            let got = Classes::for_session(&opts, 1000);
            assert!(matches!(got, Some(Classes::Wide(_))) == wide && got.is_some(), "{mode:?}");
        }
        opts.class_cache = false;
        assert!(Classes::for_session(&opts, 1000).is_none());
    }
}
