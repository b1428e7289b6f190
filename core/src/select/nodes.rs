//! Finding and choosing nodes for one task, shared by allocate and backfill (Volcano
//! `PredicateHelper.PredicateNodes`, `PrioritizeNodes`, `SelectBestNode`).
//!
//! Predicates run over all nodes in parallel with rayon when the cluster is large enough to pay
//! for it ([`crate::limits::PARALLEL_NODE_THRESHOLD`]); results land in a scratch column reused
//! across tasks, so the scan allocates nothing per node. Volcano's sampling
//! (`percentage-nodes-to-find`) scans sequentially from a round-robin offset and stops once
//! enough feasible nodes are found. Ties between equally scored nodes are broken by the
//! session's seeded random source.

use crate::framework::k8s::PodCtx;
use crate::framework::{Plugins, Session};
use crate::intern::Sym;
use crate::limits::PARALLEL_NODE_THRESHOLD;
use crate::session::fit::{FitErrors, Reason};
use crate::session::tables::{JobIdx, NodeIdx, TaskIdx};
use crate::session::State;
use hashbrown::HashMap;
use rayon::prelude::*;

/// Scratch state of one action's node scans.
pub struct NodeScan {
    results: Vec<Option<Reason>>,
    offset: usize,
    cache: HashMap<(u32, Sym), Vec<Option<Reason>>>,
    use_cache: bool,
    /// Feasible nodes of the last scan, in scan order.
    pub feasible: Vec<NodeIdx>,
    /// Scratch for the candidate group chosen from `feasible`.
    pub group: Vec<NodeIdx>,
    scores: Vec<f64>,
}

impl NodeScan {
    /// Whether Volcano's per-role predicate error cache is on.
    pub fn uses_role_cache(&self) -> bool {
        self.use_cache
    }

    /// Where the next predicate scan starts: the node after the last one the previous scans
    /// processed (Volcano's rotating `lastProcessedNodeIndex`; it moves only under sampling,
    /// since a full scan processes every node).
    pub fn start(&self) -> usize {
        self.offset
    }

    /// Moves the start past `processed` nodes, as a scan that processed them does (for a pick
    /// made without the scan, [`crate::select::class_cache`]).
    pub fn advance(&mut self, processed: usize) {
        let nn = self.results.len();
        if nn > 0 {
            self.offset = (self.offset + processed) % nn;
        }
    }

    /// Scratch for a cluster of `nodes` nodes; `use_cache` = `predicateErrorCacheEnable`.
    pub fn new(nodes: usize, use_cache: bool) -> Self {
        NodeScan {
            results: vec![None; nodes],
            offset: 0,
            cache: HashMap::new(),
            use_cache,
            feasible: Vec::new(),
            group: Vec::new(),
            scores: Vec::new(),
        }
    }
}

pub(crate) fn check<'a>(
    s: &State<'a>,
    p: &Plugins<'a>,
    ctx: &PodCtx,
    t: TaskIdx,
    n: NodeIdx,
    resources: bool,
    order: &[usize],
) -> Option<Reason> {
    // Volcano checks the shard before the predicate function, whose first check is allocate's
    // resource fit.
    if let Err(r) = s.shard_predicate(n) {
        return Some(r);
    }
    if resources {
        if let Some(d) = s.first_insufficient(s.tasks.req(t, s.dims), n, order) {
            return Some(Reason::Insufficient(d as u16));
        }
    }
    p.predicate(s, ctx, t, n).err()
}

/// Runs the predicates of task `t` (of job `j`) over the nodes; fills `scan.feasible` and
/// returns the fit errors of the rejecting nodes. With `resources`, allocate's
/// `request ≤ FutureIdle` check runs first (the one pod request, init containers included).
pub fn predicate_nodes(
    ssn: &Session<'_>,
    scan: &mut NodeScan,
    ctx: &PodCtx,
    j: JobIdx,
    t: TaskIdx,
    resources: bool,
) -> FitErrors {
    let s = &ssn.state;
    let p = &ssn.plugins;
    let nn = s.nodes.len;
    let mut fe = FitErrors::default();
    scan.feasible.clear();
    if nn == 0 {
        return fe;
    }
    let order = s.report_order;
    let role = s.role(t);
    let key = (j.0, role);
    let cached = if scan.use_cache && role != Sym::EMPTY { scan.cache.get(&key) } else { None };
    let want = s.options().nodes_to_find(nn);
    let eval = |n: usize| -> Option<Reason> {
        if let Some(r) = cached.and_then(|c| c[n]) {
            return Some(r);
        }
        check(s, p, ctx, t, NodeIdx(n as u32), resources, order)
    };
    let processed;
    if want >= nn {
        if nn >= PARALLEL_NODE_THRESHOLD {
            scan.results.par_iter_mut().enumerate().for_each(|(n, r)| *r = eval(n));
        } else {
            for (n, r) in scan.results.iter_mut().enumerate() {
                *r = eval(n);
            }
        }
        processed = nn;
        for i in 0..nn {
            let n = (scan.offset + i) % nn;
            match scan.results[n] {
                None => scan.feasible.push(NodeIdx(n as u32)),
                Some(r) => fe.add(r),
            }
        }
    } else {
        let mut count = 0;
        for i in 0..nn {
            let n = (scan.offset + i) % nn;
            count += 1;
            let r = eval(n);
            scan.results[n] = r;
            match r {
                None => {
                    scan.feasible.push(NodeIdx(n as u32));
                    if scan.feasible.len() >= want {
                        break;
                    }
                }
                Some(r) => fe.add(r),
            }
        }
        processed = count;
    }
    if scan.use_cache && role != Sym::EMPTY && fe.nodes > 0 {
        let entry = scan.cache.entry(key).or_insert_with(|| vec![None; nn]);
        for i in 0..processed {
            let n = (scan.offset + i) % nn;
            if let Some(r) = scan.results[n] {
                entry[n] = Some(r);
            }
        }
    }
    scan.advance(processed);
    fe
}

/// Into `group` (cleared first): the feasible nodes of the best non-empty candidate list of
/// Volcano allocate's `prioritizeNodes`, in `feasible`'s order: the nodes of the highest
/// [`State::gradient`] (those that fit idle resources, else those that fit FutureIdle; under
/// soft node sharding in-shard nodes before the others of each). Empty when no node fits
/// FutureIdle.
pub fn candidate_group(s: &State<'_>, req: &[i64], feasible: &[NodeIdx], group: &mut Vec<NodeIdx>) {
    group.clear();
    let mut best = 0u8;
    for &n in feasible {
        let g = s.gradient(req, n);
        if g > best {
            best = g;
            group.clear();
        }
        if g == best && g > 0 {
            group.push(n);
        }
    }
}

/// Chooses among `nodes` (non-empty): the only one, else the best total score, ties broken by
/// the session's seeded random source (Volcano `SelectBestNode`).
pub fn best_node(ssn: &mut Session<'_>, scan: &mut NodeScan, ctx: &PodCtx, t: TaskIdx, nodes: &[NodeIdx]) -> NodeIdx {
    if nodes.len() == 1 || !ssn.plugins.scores_nodes() && nodes.len() == 1 {
        return nodes[0];
    }
    scan.scores.resize(nodes.len(), 0.0);
    ssn.plugins.score_nodes(&ssn.state, ctx, t, nodes, &mut scan.scores);
    let max = scan.scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let ties = scan.scores.iter().filter(|&&x| x == max).count();
    let pick = if ties > 1 { ssn.state.rng.below(ties) } else { 0 };
    let i = scan.scores.iter().enumerate().filter(|(_, &x)| x == max).nth(pick).map(|(i, _)| i).unwrap_or(0);
    nodes[i]
}
