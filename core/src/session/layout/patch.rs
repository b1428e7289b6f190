//! Patching a kept [`Layout`] with the changes noted since it was made
//! ([`crate::cluster::Changes`]), so a live cycle recomputes only changed rows; the result
//! equals [`Layout::new`] on the current state field by field.

use super::*;
use crate::cluster::Changes;

/// Merges `ins` (sorted) into `keep` (sorted) by `less`.
fn merge_sorted<T: Copy>(keep: &[T], ins: &[T], less: impl Fn(&T, &T) -> bool) -> Vec<T> {
    let mut out = Vec::with_capacity(keep.len() + ins.len());
    let mut from = 0;
    for x in ins {
        let at = from + keep[from..].partition_point(|k| less(k, x));
        out.extend_from_slice(&keep[from..at]);
        out.push(*x);
        from = at;
    }
    out.extend_from_slice(&keep[from..]);
    out
}

impl Layout {
    /// Brings a layout made from an earlier state of `cluster` up to date, given everything
    /// that changed since (`ch`, noted by [`Cluster::apply`]). The result equals
    /// [`Layout::new`] on the current state field by field.
    ///
    /// Cost: rows of changed pods and of the jobs they belong to are recomputed from their
    /// records; when the task or job order is unchanged they are written in place, otherwise
    /// the columns are rebuilt by copying the unchanged jobs' row ranges (memory copies, no
    /// record is read). A global change ([`Changes::global`]: node added, removed or changing
    /// readiness, queue added or removed, PriorityClass change, too many changes) or a new
    /// resource dimension recomputes the layout with [`Layout::new`] instead: those shift
    /// every node row or change every priority.
    ///
    /// `spare` lends its buffers to the rebuilt columns and receives the old ones, so that a
    /// cluster patching every cycle reuses two sets of buffers instead of faulting in fresh
    /// memory each time (its contents are irrelevant; pass `&mut Layout::default()` if none).
    pub fn patch(&mut self, cluster: &Cluster, ch: &Changes, spare: &mut Layout) {
        if ch.global || self.dims != cluster.resources.len() {
            let dq = std::mem::take(&mut self.default_queue);
            *self = Layout::new(cluster, &dq);
            return;
        }
        self.generation = cluster.generation();
        self.patch_nodes(cluster, &ch.nodes);
        let slots = cluster.pod_slots();
        self.pod_row.resize(slots, NONE);
        self.group_row.resize(cluster.pod_group_slots(), NONE);
        let mut dirty = vec![false; slots];
        let mut dirty_list = Vec::with_capacity(ch.pods.len());
        let mut mark = |s: u32, dirty: &mut Vec<bool>| {
            if !std::mem::replace(&mut dirty[s as usize], true) {
                dirty_list.push(s);
            }
        };
        for p in &ch.pods {
            mark(p.0, &mut dirty);
        }

        // Jobs: (PodGroup, queue row, old job row or NONE), in PodGroup namespace/name order.
        let mut moved: Vec<u32> = ch.groups_moved.iter().map(|g| g.0).collect();
        moved.sort_unstable();
        moved.dedup();
        let pg = |g: PodGroupId| cluster.pod_group(g).expect("a job row's PodGroup exists");
        let key_less = |a: &PodGroupId, b: &PodGroupId| group_key(pg(*a)) < group_key(pg(*b));
        let mut new_jobs: Vec<(PodGroupId, u32, u32)> =
            self.jobs.iter().enumerate().map(|(r, &(g, q))| (g, q, r as u32)).collect();
        let mut skipped = None;
        if !moved.is_empty() {
            let is_moved = |g: PodGroupId| moved.binary_search(&g.0).is_ok();
            for &s in &moved {
                let r = self.group_row[s as usize];
                if r != NONE {
                    for t in self.task_start[r as usize]..self.task_end[r as usize] {
                        mark(self.tasks[t as usize].1 .0, &mut dirty);
                    }
                }
            }
            new_jobs.retain(|&(g, _, _)| !is_moved(g));
            let mut arriving = Vec::new();
            let mut arriving_skipped = Vec::new();
            for &s in &moved {
                let Some(g) = cluster.pod_group(PodGroupId(s)) else { continue };
                let q = if g.spec.queue.is_empty() { self.default_queue.as_str() } else { g.spec.queue.as_str() };
                match self.queues.binary_search_by(|x| x.as_str().cmp(q)) {
                    Ok(qi) => arriving.push((PodGroupId(s), qi as u32, NONE)),
                    Err(_) => arriving_skipped.push(PodGroupId(s)),
                }
                for m in cluster.pod_group_members(&g.spec.namespace, &g.spec.name) {
                    mark(m.0, &mut dirty);
                }
            }
            arriving.sort_by(|a, b| group_key(pg(a.0)).cmp(&group_key(pg(b.0))));
            new_jobs = merge_sorted(&new_jobs, &arriving, |a, b| key_less(&a.0, &b.0));
            arriving_skipped.sort_by(|a, b| group_key(pg(*a)).cmp(&group_key(pg(*b))));
            let kept: Vec<PodGroupId> = self.skipped.iter().map(|(g, _)| *g).filter(|&g| !is_moved(g)).collect();
            let reasons: HashMap<PodGroupId, &String> = self.skipped.iter().map(|(g, r)| (*g, r)).collect();
            skipped = Some(
                merge_sorted(&kept, &arriving_skipped, key_less)
                    .into_iter()
                    .map(|g| {
                        let reason = match reasons.get(&g) {
                            Some(r) if !is_moved(g) => (*r).clone(),
                            _ => {
                                let rec = pg(g);
                                let q = if rec.spec.queue.is_empty() { self.default_queue.as_str() } else { &rec.spec.queue };
                                skip_reason(rec, q)
                            }
                        };
                        (g, reason)
                    })
                    .collect(),
            );
        }
        let nj = new_jobs.len();
        let mut old_to_new = vec![NONE; self.jobs.len()];
        for (nr, &(_, _, or)) in new_jobs.iter().enumerate() {
            if or != NONE {
                old_to_new[or as usize] = nr as u32;
            }
        }
        let job_of = |ns: &str, g: &str| new_jobs.binary_search_by(|(gid, _, _)| group_key(pg(*gid)).cmp(&(ns, g))).ok();

        // Which jobs (new rows) and whether the ungrouped section have rows to recompute.
        // Taken out for the rest of the patch (node rows do not change here) so the lookup can
        // borrow it while rows are rewritten.
        let node_ids = std::mem::take(&mut self.node_ids);
        let node_name = |id: &NodeId| cluster.node(*id).map(|n| n.spec.name.as_str()).unwrap_or("");
        let node_row = |name: &str| node_ids.binary_search_by(|id| node_name(id).cmp(name)).ok().map(|i| i as u32);
        let mut touched = vec![false; nj];
        for (nr, &(_, _, or)) in new_jobs.iter().enumerate() {
            touched[nr] = or == NONE;
        }
        let mut ungrouped_touched = false;
        let mut ungrouped_new = Vec::new();
        let mut last: Option<(&str, &str, Option<usize>)> = None;
        for &s in &dirty_list {
            let r = self.pod_row[s as usize];
            if r != NONE {
                match self.tasks[r as usize].0 {
                    NONE => ungrouped_touched = true,
                    j if old_to_new[j as usize] != NONE => touched[old_to_new[j as usize] as usize] = true,
                    _ => {}
                }
            }
            let Some(p) = cluster.pod(PodId(s)) else { continue };
            // Changed pods come in job runs (a job's pods are created, bound or deleted
            // together): the last lookup is reused while the job is the same.
            let job = p.spec.group.as_deref().and_then(|g| match last {
                Some((ns, lg, r)) if ns == p.spec.namespace && lg == g => r,
                _ => {
                    let r = job_of(&p.spec.namespace, g);
                    last = Some((p.spec.namespace.as_str(), g, r));
                    r
                }
            });
            match job {
                Some(j) => touched[j] = true,
                None if ungrouped_task(p, &node_row) => {
                    ungrouped_touched = true;
                    ungrouped_new.push(PodId(s));
                }
                None => {}
            }
        }
        let mut structural = !moved.is_empty();
        let pod_name = |id: &PodId| cluster.pod(*id).map(|p| p.spec.name.as_str()).unwrap_or("");
        let mut lists: HashMap<u32, Vec<PodId>> = HashMap::new();
        for (nr, _) in touched.iter().enumerate().filter(|(_, &t)| t) {
            let g = pg(new_jobs[nr].0);
            let mut m = cluster.pod_group_members(&g.spec.namespace, &g.spec.name).to_vec();
            m.sort_by(|a, b| pod_name(a).cmp(pod_name(b)));
            if !structural {
                let or = new_jobs[nr].2 as usize;
                let old = &self.tasks[self.task_start[or] as usize..self.task_end[or] as usize];
                structural = old.len() != m.len() || old.iter().zip(&m).any(|(a, b)| a.1 != *b);
            }
            lists.insert(nr as u32, m);
        }
        let ungrouped_start = self.tasks.partition_point(|t| t.0 != NONE);
        let ungrouped = ungrouped_touched.then(|| {
            let pod_key = |id: &PodId| cluster.pod(*id).map(|p| (p.spec.namespace.as_str(), p.spec.name.as_str()));
            let keep: Vec<PodId> = self.tasks[ungrouped_start..].iter().map(|t| t.1).filter(|id| !dirty[id.0 as usize]).collect();
            ungrouped_new.sort_by(|a, b| pod_key(a).cmp(&pod_key(b)));
            merge_sorted(&keep, &ungrouped_new, |a, b| pod_key(a) < pod_key(b))
        });
        if let (false, Some(u)) = (structural, &ungrouped) {
            let old = &self.tasks[ungrouped_start..];
            structural = old.len() != u.len() || old.iter().zip(u).any(|(a, b)| a.1 != *b);
        }

        if structural {
            let mut out = std::mem::take(spare);
            out.clear();
            out.generation = self.generation;
            out.dims = self.dims;
            if let Some(s) = skipped {
                out.skipped = s;
            } else {
                std::mem::swap(&mut out.skipped, &mut self.skipped);
            }
            out.reserve_tasks(self.tasks.len() + ungrouped_new.len() + dirty_list.len());
            let global_default = cluster.global_default_priority().unwrap_or(0);
            let push_list = |out: &mut Layout, list: &[PodId], job: u32| {
                for &id in list {
                    let r = self.pod_row[id.0 as usize];
                    match cluster.pod(id) {
                        Some(p) if dirty[id.0 as usize] || r == NONE => out.push_task(cluster, job, id, p, &node_row),
                        _ => out.copy_tasks(self, r as usize..r as usize + 1, job),
                    }
                }
            };
            // Untouched jobs that were consecutive keep their rows together: copied as one run.
            let mut run = 0..0;
            for (nr, &(gid, q, or)) in new_jobs.iter().enumerate() {
                if !touched[nr] {
                    if run.is_empty() || run.end != nr || new_jobs[run.end - 1].2 + 1 != or {
                        out.copy_jobs(self, &new_jobs[run.clone()], run.start as u32);
                        run = nr..nr;
                    }
                    run.end = nr + 1;
                    continue;
                }
                out.copy_jobs(self, &new_jobs[run.clone()], run.start as u32);
                run = nr + 1..nr + 1;
                let start = out.tasks.len();
                push_list(&mut out, &lists[&(nr as u32)], nr as u32);
                let range = start..out.tasks.len();
                if or == NONE {
                    out.push_job(cluster, gid, q, pg(gid), global_default, range);
                } else {
                    let o = or as usize;
                    out.jobs.push((gid, q));
                    out.job_priority.push(self.job_priority[o]);
                    out.job_min_task_total.push(self.job_min_task_total[o]);
                    out.job_uid.push(self.job_uid[o]);
                    out.push_range(range);
                }
            }
            out.copy_jobs(self, &new_jobs[run.clone()], run.start as u32);
            match &ungrouped {
                Some(list) => push_list(&mut out, list, NONE),
                None => out.copy_tasks(self, ungrouped_start..self.tasks.len(), NONE),
            }
            let mut old = std::mem::replace(self, out);
            std::mem::swap(&mut self.default_queue, &mut old.default_queue);
            std::mem::swap(&mut self.allocatable, &mut old.allocatable);
            std::mem::swap(&mut self.total, &mut old.total);
            std::mem::swap(&mut self.queues, &mut old.queues);
            std::mem::swap(&mut self.report_order, &mut old.report_order);
            std::mem::swap(&mut self.node_row, &mut old.node_row);
            *spare = old;
            self.index_rows(cluster);
        } else {
            for &s in &dirty_list {
                let r = self.pod_row[s as usize];
                if let (true, Some(p)) = (r != NONE, cluster.pod(PodId(s))) {
                    self.rewrite_task(cluster, r as usize, p, &node_row);
                }
            }
        }
        // PodGroups changed in place: their job rows' values.
        let global_default = cluster.global_default_priority().unwrap_or(0);
        for &g in &ch.groups {
            let (Some(&r), Some(rec)) = (self.group_row.get(g.0 as usize), cluster.pod_group(g)) else { continue };
            if r != NONE {
                self.job_priority[r as usize] = group_priority(cluster, rec, global_default);
                self.job_min_task_total[r as usize] = min_task_total(rec);
                self.job_uid[r as usize] = rec.uid;
            }
        }
        self.node_ids = node_ids;
    }

    /// Nodes replaced with the same readiness: their allocatable column entries and the total.
    fn patch_nodes(&mut self, cluster: &Cluster, nodes: &[NodeId]) {
        if nodes.is_empty() {
            return;
        }
        let nn = self.node_ids.len();
        for &id in nodes {
            let row = self.node_row.get(id.0 as usize).copied().unwrap_or(NONE);
            let (true, Some(n)) = (row != NONE, cluster.node(id)) else { continue };
            for d in 0..self.dims {
                self.allocatable[row as usize * self.dims + d] = n.allocatable.get(d);
            }
        }
        self.total = total(&self.allocatable, self.dims, nn);
    }
}
