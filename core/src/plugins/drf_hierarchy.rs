//! Hierarchical DRF (`drf` with `enableHierarchy: true`; volcano-behaviour.md §3 "drf",
//! Volcano `plugins/drf/drf.go` `hierarchicalNode`).
//!
//! Each queue has a path and weights: annotations `volcano.sh/hierarchy` (`root/a/b`) and
//! `volcano.sh/hierarchy-weights` (`1/w/w`) when both are set, else derived from `spec.parent`
//! (Volcano `BuildEffectiveQueueHierarchy`: the parent's path + `/` + the queue's name, the
//! parent's weights + `/` + `spec.weight`, a weight below 1 counting as 1; `root` is `root` /
//! `1`). The tree has a node per path segment of every queue with jobs (weight from the
//! weights, below 1 or unparsable ⇒ 1) and a leaf per job (weight 1) under its queue's node.
//!
//! Shares, recomputed bottom-up after every change: a leaf's allocated is its job's, its share
//! the dominant share of the cluster total, and it is saturated when some resource it holds
//! reaches its total request, or it requests a resource the cluster has no more of. An inner
//! node scales each non-empty, unsaturated child to the smallest such child share (saturated
//! children count as they are), sums them into its allocated, takes that dominant share, and is
//! saturated when all its children are.
//!
//! Queue order walks both queues' paths from the root: an unsaturated node goes before a
//! saturated one, then lower share / weight first; equal ⇒ one level down.

use crate::session::tables::{JobIdx, QueueIdx};
use crate::session::State;
use std::collections::BTreeMap;

const NONE: usize = usize::MAX;

#[derive(Clone, Debug)]
struct Node {
    weight: f64,
    saturated: bool,
    share: f64,
    allocated: Vec<f64>,
    /// Children by path segment (or job UID), in name order.
    children: BTreeMap<String, usize>,
    /// The job of a leaf.
    job: Option<JobIdx>,
}

/// The hierarchical DRF tree of one session.
#[derive(Clone, Debug)]
pub struct Tree {
    nodes: Vec<Node>,
    /// Per queue: its path segments after `root` (empty when the queue has no node).
    paths: Vec<Vec<String>>,
    /// Per job: total request (all tasks' `Resreq`).
    request: Vec<Vec<f64>>,
    /// Per job: leaf node.
    leaf: Vec<usize>,
    /// Σ allocated of all jobs.
    pub total_allocated: Vec<f64>,
}

/// Volcano `calculateShare`: max over dimensions with a total ≥ 0.1 of allocated / total.
pub fn dominant_share(allocated: &[f64], total: &[f64]) -> f64 {
    let mut res = 0.0f64;
    for (a, t) in allocated.iter().zip(total) {
        if *t < 0.1 {
            continue;
        }
        let share = if *t == 0.0 {
            if *a == 0.0 {
                0.0
            } else {
                1.0
            }
        } else {
            a / t
        };
        res = res.max(share);
    }
    res
}

/// Path and weights of every queue, or the error of the first queue (in name order) whose
/// chain of `spec.parent` is broken.
fn queue_paths(s: &State<'_>) -> Result<Vec<(String, String)>, String> {
    let n = s.queues.len;
    let row = |name: &str| s.queues.rec.iter().position(|q| q.spec.name == name);
    let mut memo: Vec<Option<(String, String)>> = vec![None; n];
    fn build(
        q: usize,
        s: &State<'_>,
        row: &dyn Fn(&str) -> Option<usize>,
        memo: &mut Vec<Option<(String, String)>>,
        depth: usize,
    ) -> Result<(String, String), String> {
        if let Some(v) = &memo[q] {
            return Ok(v.clone());
        }
        let spec = &s.queues.rec[q].spec;
        if depth > s.queues.len {
            return Err(format!("Queue {:?}: field spec.parent: cycle in the queue hierarchy", spec.name));
        }
        let v = if !spec.hierarchy.is_empty() && !spec.hierarchy_weights.is_empty() {
            (spec.hierarchy.clone(), spec.hierarchy_weights.clone())
        } else if spec.name == "root" {
            ("root".to_string(), "1".to_string())
        } else {
            let parent = if spec.parent.is_empty() { "root" } else { spec.parent.as_str() };
            let (path, weights) = match row(parent) {
                Some(p) => build(p, s, row, memo, depth + 1)?,
                None if parent == "root" => ("root".to_string(), "1".to_string()),
                None => return Err(format!("Queue {:?}: field spec.parent: parent queue {parent:?} does not exist", spec.name)),
            };
            (format!("{path}/{}", spec.name), format!("{weights}/{}", spec.weight.max(1)))
        };
        memo[q] = Some(v.clone());
        Ok(v)
    }
    (0..n).map(|q| build(q, s, &row, &mut memo, 0)).collect()
}

impl Tree {
    /// Builds the tree from the session's jobs, with `allocated` (row-major per job) and the
    /// cluster `total`. `Err` names the queue whose hierarchy cannot be derived; Volcano's drf
    /// then registers nothing.
    pub fn open(s: &State<'_>, allocated: &[f64], total: &[f64]) -> Result<Self, String> {
        let dims = s.dims;
        let qp = queue_paths(s)?;
        let root =
            Node { weight: 1.0, saturated: false, share: 0.0, allocated: vec![0.0; dims], children: BTreeMap::new(), job: None };
        let mut t = Tree {
            nodes: vec![root],
            paths: vec![Vec::new(); s.queues.len],
            request: vec![vec![0.0; dims]; s.jobs.len],
            leaf: vec![NONE; s.jobs.len],
            total_allocated: vec![0.0; dims],
        };
        for j in (0..s.jobs.len).map(|i| JobIdx(i as u32)) {
            let q = s.jobs.queue[j.ix()] as usize;
            let (path, weights) = &qp[q];
            let segs: Vec<&str> = path.split('/').collect();
            let ws: Vec<&str> = weights.split('/').collect();
            t.paths[q] = segs.iter().skip(1).map(|x| x.to_string()).collect();
            let mut cur = 0usize;
            for (i, seg) in segs.iter().enumerate().skip(1) {
                cur = match t.nodes[cur].children.get(*seg) {
                    Some(&c) => c,
                    None => {
                        let w: f64 = ws.get(i).and_then(|w| w.trim().parse().ok()).unwrap_or(0.0);
                        let node = Node {
                            weight: if w < 1.0 { 1.0 } else { w },
                            saturated: false,
                            share: 0.0,
                            allocated: vec![0.0; dims],
                            children: BTreeMap::new(),
                            job: None,
                        };
                        t.nodes.push(node);
                        let c = t.nodes.len() - 1;
                        t.nodes[cur].children.insert(seg.to_string(), c);
                        c
                    }
                };
            }
            for task in s.jobs.tasks(j) {
                for (d, &v) in s.tasks.req(task, dims).iter().enumerate() {
                    t.request[j.ix()][d] += v as f64;
                }
            }
            let row = &allocated[j.ix() * dims..(j.ix() + 1) * dims];
            for d in 0..dims {
                t.total_allocated[d] += row[d];
            }
            let leaf = Node {
                weight: 1.0,
                saturated: false,
                share: dominant_share(row, total),
                allocated: row.to_vec(),
                children: BTreeMap::new(),
                job: Some(j),
            };
            t.nodes.push(leaf);
            let l = t.nodes.len() - 1;
            let uid = s.cluster.names.resolve(s.jobs.uid[j.ix()]).to_string();
            t.nodes[cur].children.insert(uid, l);
            t.leaf[j.ix()] = l;
        }
        t.update(total);
        Ok(t)
    }

    /// Sets job `j`'s allocated (dense) and recomputes the tree.
    pub fn set_job(&mut self, j: JobIdx, allocated: &[f64], total: &[f64]) {
        let l = self.leaf[j.ix()];
        if l == NONE {
            return;
        }
        self.nodes[l].allocated.copy_from_slice(allocated);
        self.nodes[l].share = dominant_share(allocated, total);
        self.update(total);
    }

    /// Adds `delta × sign` to the total allocated.
    pub fn add_total(&mut self, delta: &[i64], sign: f64) {
        for (t, &v) in self.total_allocated.iter_mut().zip(delta) {
            *t += sign * v as f64;
        }
    }

    fn update(&mut self, total: &[f64]) {
        let demanding: Vec<bool> = total.iter().zip(&self.total_allocated).map(|(&t, &a)| t >= 0.1 && a < t).collect();
        self.update_node(0, &demanding, total);
    }

    fn update_node(&mut self, n: usize, demanding: &[bool], total: &[f64]) {
        if let Some(j) = self.nodes[n].job {
            let node = &self.nodes[n];
            let req = &self.request[j.ix()];
            let sat = (0..node.allocated.len()).any(|d| {
                let a = node.allocated[d];
                if a < 0.1 {
                    return false;
                }
                (a != 0.0 && req[d] != 0.0 && a >= req[d]) || (!demanding[d] && req[d] != 0.0)
            });
            self.nodes[n].saturated = sat;
            return;
        }
        let kids: Vec<usize> = self.nodes[n].children.values().copied().collect();
        let mut mdr = 1.0f64;
        for &c in &kids {
            self.update_node(c, demanding, total);
            let child = &self.nodes[c];
            if child.share != 0.0 && !child.saturated {
                let rs = dominant_share(&child.allocated, total);
                if rs < mdr {
                    mdr = rs;
                }
            }
        }
        let dims = self.nodes[n].allocated.len();
        let mut alloc = vec![0.0; dims];
        let mut saturated = true;
        for &c in &kids {
            let child = &self.nodes[c];
            if !child.saturated {
                saturated = false;
            }
            if child.share != 0.0 {
                let scale = if child.saturated { 1.0 } else { mdr / child.share };
                for d in 0..dims {
                    alloc[d] += child.allocated[d] * scale;
                }
            }
        }
        let share = dominant_share(&alloc, total);
        let node = &mut self.nodes[n];
        node.allocated = alloc;
        node.share = share;
        node.saturated = saturated;
    }

    /// Volcano `compareQueues`: negative when `l` goes first.
    pub fn compare(&self, l: QueueIdx, r: QueueIdx) -> f64 {
        let (lp, rp) = (&self.paths[l.ix()], &self.paths[r.ix()]);
        if lp.is_empty() || rp.is_empty() {
            return 0.0;
        }
        // Both paths start at the root (Volcano splits `root/...` and compares from index 0).
        let depth = lp.len().min(rp.len()) + 1;
        let (mut ln, mut rn) = (0usize, 0usize);
        for i in 0..depth {
            let (a, b) = (&self.nodes[ln], &self.nodes[rn]);
            if !a.saturated && b.saturated {
                return -1.0;
            }
            if a.saturated && !b.saturated {
                return 1.0;
            }
            let (x, y) = (a.share / a.weight, b.share / b.weight);
            if x != y {
                return x - y;
            }
            if i + 1 < depth {
                match (a.children.get(&lp[i]), b.children.get(&rp[i])) {
                    (Some(&c), Some(&d)) => {
                        ln = c;
                        rn = d;
                    }
                    _ => return 0.0,
                }
            }
        }
        0.0
    }
}
