//! The plugins of a session by tier, and Volcano's rules for combining their functions
//! (`framework/session_plugins.go`; volcano-behaviour.md §1.5):
//! orders take the first non-`Equal` answer, then a total fallback; predicates AND (first
//! error wins); node scores add up; overused ORs; allocatable and job ready AND; pipelined and
//! enqueueable vote (any Reject ⇒ no, a tier with a Permit ⇒ yes, else next tier, default yes);
//! starving is decided by the first tier that has a function (none ⇒ false); job valid takes the
//! first failure; preemptable and reclaimable intersect within a tier and the first tier with a
//! non-empty result wins; victim tasks unite within a tier, first non-empty tier; preemptive
//! ANDs; victim queue order takes the first non-`Equal` answer, else reversed queue order.

use super::k8s::PodCtx;
use super::plugin::{EvictionKind, Fn, Invalid, Plugin, Registry, Verdict, Vote};
use crate::conf::{EnableFlags, SchedulerConf};
use crate::kernels::masked_max::NodeMask;
use crate::session::cycle::CyclePhase;
use crate::session::fit::Reason;
use crate::session::tables::*;
use crate::session::State;
use std::cmp::Ordering;

/// A plugin in its tier, with the functions it registers that its flags leave on.
pub struct Slot<'a> {
    /// The plugin.
    pub plugin: Box<dyn Plugin<'a> + 'a>,
    /// Mask of registered and enabled [`Fn`]s.
    pub active: u32,
}

/// Plugins of a session, by tier.
pub struct Plugins<'a> {
    /// Tiers in order.
    tiers: Vec<Vec<Slot<'a>>>,
    /// Per [`Fn`] (by bit position): (tier, slot) of the plugins with it active, in tier order,
    /// so the per-node calls do not filter every slot.
    by_fn: Vec<Vec<(u16, u16)>>,
}

fn active_mask(p: &dyn Plugin<'_>, flags: &EnableFlags) -> u32 {
    let reg = p.fns();
    let mut m = 0;
    for f in Fn::ALL {
        if reg & f.bit() != 0 && f.flag().is_none_or(|fl| flags.on(fl)) {
            m |= f.bit();
        }
    }
    m
}

impl<'a> Plugins<'a> {
    /// Instantiates the conf's plugins that `registry` has (Volcano `OnSessionOpen`, tier by
    /// tier), reporting [`CyclePhase::PluginOpened`] after each; the others are skipped.
    pub fn open(conf: &SchedulerConf, registry: &Registry, s: &State<'a>, observe: &mut dyn FnMut(CyclePhase)) -> Self {
        let tiers = conf
            .tiers
            .iter()
            .map(|t| {
                t.plugins
                    .iter()
                    .filter_map(|opt| {
                        let plugin = registry.build(opt, s)?;
                        observe(CyclePhase::PluginOpened(plugin.name()));
                        let active = active_mask(plugin.as_ref(), &opt.flags);
                        Some(Slot { plugin, active })
                    })
                    .collect()
            })
            .collect::<Vec<Vec<Slot<'a>>>>();
        let mut by_fn = vec![Vec::new(); 32];
        for (ti, tier) in tiers.iter().enumerate() {
            for (si, slot) in tier.iter().enumerate() {
                for (b, list) in by_fn.iter_mut().enumerate() {
                    if slot.active & (1 << b) != 0 {
                        list.push((ti as u16, si as u16));
                    }
                }
            }
        }
        Plugins { tiers, by_fn }
    }

    /// The tiers in order.
    pub fn tiers(&self) -> &[Vec<Slot<'a>>] {
        &self.tiers
    }

    fn each(&self, f: Fn) -> impl Iterator<Item = &dyn Plugin<'a>> + '_ {
        self.by_fn[f.bit().trailing_zeros() as usize].iter().map(|&(t, i)| self.tiers[t as usize][i as usize].plugin.as_ref())
    }

    /// Whether any plugin has `f` active.
    pub fn any(&self, f: Fn) -> bool {
        self.each(f).next().is_some()
    }

    /// Whether plugin `name` has `f` active.
    pub fn active(&self, f: Fn, name: &str) -> bool {
        self.each(f).any(|p| p.name() == name)
    }

    /// Whether plugin `name` has the voting `f` active in the first tier that has `f` active
    /// at all: then no earlier tier can permit before it is asked, so its rejection decides
    /// (Volcano's tier voting, [`Plugins::job_pipelined`]).
    pub fn votes_first(&self, f: Fn, name: &str) -> bool {
        let slots = &self.by_fn[f.bit().trailing_zeros() as usize];
        let Some(&(first, _)) = slots.first() else { return false };
        slots.iter().any(|&(t, i)| t == first && self.tiers[t as usize][i as usize].plugin.name() == name)
    }

    /// The plugins' job order alone (Volcano `JobOrderCompareFn`): the first plugin that tells
    /// the jobs apart decides; `Equal` when none does (no creation-time/UID fallback).
    pub fn job_order_plugins(&self, s: &State<'a>, l: JobIdx, r: JobIdx) -> Ordering {
        for p in self.each(Fn::JobOrder) {
            let o = p.job_order(s, l, r);
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    }

    /// Job order (Volcano `JobOrderFn`): plugins, then creation time, then UID.
    pub fn job_order(&self, s: &State<'a>, l: JobIdx, r: JobIdx) -> Ordering {
        let o = self.job_order_plugins(s, l, r);
        if o != Ordering::Equal {
            return o;
        }
        let j = &s.jobs;
        j.creation[l.ix()]
            .cmp(&j.creation[r.ix()])
            .then_with(|| s.cluster.names.resolve(j.uid[l.ix()]).cmp(s.cluster.names.resolve(j.uid[r.ix()])))
            .then(l.cmp(&r))
    }

    /// Queue order (Volcano `QueueOrderFn`): plugins, then creation time, then name.
    pub fn queue_order(&self, s: &State<'a>, l: QueueIdx, r: QueueIdx) -> Ordering {
        for p in self.each(Fn::QueueOrder) {
            let o = p.queue_order(s, l, r);
            if o != Ordering::Equal {
                return o;
            }
        }
        let (lq, rq) = (s.queues.rec[l.ix()], s.queues.rec[r.ix()]);
        lq.spec.creation_ms.cmp(&rq.spec.creation_ms).then_with(|| lq.spec.name.cmp(&rq.spec.name))
    }

    /// Task order (Volcano `TaskOrderFn` + `helpers.CompareTask`): plugins, then the numeric
    /// suffix of the pod name when both have one, then creation time, then UID.
    pub fn task_order(&self, s: &State<'a>, l: TaskIdx, r: TaskIdx) -> Ordering {
        for p in self.each(Fn::TaskOrder) {
            let o = p.task_order(s, l, r);
            if o != Ordering::Equal {
                return o;
            }
        }
        let (li, ri) = (s.tasks.name_index[l.ix()], s.tasks.name_index[r.ix()]);
        if li != u64::MAX && ri != u64::MAX && li != ri {
            return li.cmp(&ri);
        }
        let (lp, rp) = (&s.tasks.rec[l.ix()].spec, &s.tasks.rec[r.ix()].spec);
        lp.creation_ms.cmp(&rp.creation_ms).then_with(|| lp.uid.cmp(&rp.uid)).then(l.cmp(&r))
    }

    /// PrePredicate: AND, first error.
    pub fn pre_predicate(&self, s: &State<'a>, t: TaskIdx) -> Result<(), String> {
        for p in self.each(Fn::PrePredicate) {
            p.pre_predicate(s, t)?;
        }
        Ok(())
    }

    /// Predicate: AND, first error.
    #[inline]
    pub fn predicate(&self, s: &State<'a>, ctx: &PodCtx, t: TaskIdx, n: NodeIdx) -> Result<(), Reason> {
        s.shard_predicate(n)?;
        for p in self.each(Fn::Predicate) {
            p.predicate(s, ctx, t, n)?;
        }
        Ok(())
    }

    /// The static part of [`Plugins::predicate`] ([`Plugin::predicate_static`]), ANDed.
    pub fn predicate_static(&self, s: &State<'a>, t: TaskIdx, n: NodeIdx) -> Result<(), Reason> {
        s.shard_predicate(n)?;
        for p in self.each(Fn::Predicate) {
            p.predicate_static(s, t, n)?;
        }
        Ok(())
    }

    /// [`Plugins::predicate_static`] without the plugins' class masks
    /// ([`Plugin::predicate_static_unmasked`]), ANDed.
    pub fn predicate_static_unmasked(&self, s: &State<'a>, t: TaskIdx, n: NodeIdx) -> Result<(), Reason> {
        s.shard_predicate(n)?;
        for p in self.each(Fn::Predicate) {
            p.predicate_static_unmasked(s, t, n)?;
        }
        Ok(())
    }

    /// The rest of [`Plugins::predicate`] ([`Plugin::predicate_dynamic`]), ANDed.
    pub fn predicate_dynamic(&self, s: &State<'a>, ctx: &PodCtx, t: TaskIdx, n: NodeIdx) -> Result<(), Reason> {
        for p in self.each(Fn::Predicate) {
            p.predicate_dynamic(s, ctx, t, n)?;
        }
        Ok(())
    }

    /// Whether any plugin scores nodes.
    pub fn scores_nodes(&self) -> bool {
        self.any(Fn::NodeOrder) || self.any(Fn::BatchNodeOrder)
    }

    /// Node scores: Σ NodeOrder + Σ BatchNodeOrder, written into `out` (zeroed first).
    pub fn score_nodes(&self, s: &State<'a>, ctx: &PodCtx, t: TaskIdx, nodes: &[NodeIdx], out: &mut [f64]) {
        out.iter_mut().for_each(|x| *x = 0.0);
        if self.any(Fn::NodeOrder) {
            let score = |n: NodeIdx| self.each(Fn::NodeOrder).map(|p| p.node_order(s, ctx, t, n)).sum::<f64>();
            if nodes.len() >= crate::limits::PARALLEL_NODE_THRESHOLD {
                use rayon::prelude::*;
                out.par_iter_mut().zip(nodes.par_iter()).for_each(|(o, &n)| *o = score(n));
            } else {
                for (o, &n) in out.iter_mut().zip(nodes) {
                    *o = score(n);
                }
            }
        }
        for p in self.each(Fn::BatchNodeOrder) {
            p.batch_node_order(s, ctx, t, nodes, out);
        }
    }

    /// Σ NodeOrder of task `t` on node `n`: the per-node part of [`Plugins::score_nodes`].
    pub fn node_order_sum(&self, s: &State<'a>, ctx: &PodCtx, t: TaskIdx, n: NodeIdx) -> f64 {
        if self.any(Fn::NodeOrder) {
            self.each(Fn::NodeOrder).map(|p| p.node_order(s, ctx, t, n)).sum::<f64>()
        } else {
            0.0
        }
    }

    /// Each BatchNodeOrder plugin's score of `t` on the single node `n`, in plugin order (what
    /// [`Plugins::score_nodes`] adds after the NodeOrder sum).
    pub fn batch_parts(&self, s: &State<'a>, ctx: &PodCtx, t: TaskIdx, n: NodeIdx, out: &mut Vec<f64>) {
        out.clear();
        for p in self.each(Fn::BatchNodeOrder) {
            let mut x = [0.0];
            p.batch_node_order(s, ctx, t, &[n], &mut x);
            out.push(x[0]);
        }
    }

    /// The class-path identity of task `t` from every plugin whose predicate or node order is
    /// active ([`Plugin::class_key`]), combined; `None` when one of them has none.
    pub fn class_key(&self, s: &State<'a>, t: TaskIdx) -> Option<u64> {
        let mask = Fn::Predicate.bit() | Fn::NodeOrder.bit() | Fn::BatchNodeOrder.bit();
        let mut key = 0u64;
        for slot in self.tiers.iter().flatten().filter(|x| x.active & mask != 0) {
            key = key.rotate_left(17) ^ slot.plugin.class_key(s, t)?;
        }
        Some(key)
    }

    /// The node mask the class path applies on top of `t`'s class ([`Plugin::class_mask`] of
    /// the plugins whose predicate is active): `Ok(None)` when none has one, `Err(())` when
    /// more than one has (the masks would have to be intersected per task; `t` then takes the
    /// plain scan). The mask's id is the plugin's, made distinct between plugins.
    #[allow(clippy::result_unit_err)]
    pub fn class_mask(&self, s: &State<'a>, t: TaskIdx) -> Result<Option<NodeMask<'_>>, ()> {
        let mut found = None;
        for (i, p) in self.each(Fn::Predicate).enumerate() {
            if let Some(m) = p.class_mask(s, t) {
                if found.is_some() {
                    return Err(());
                }
                found = Some(NodeMask { id: (i as u64) << 48 ^ m.id, bits: m.bits });
            }
        }
        Ok(found)
    }

    /// Overused: OR.
    pub fn overused(&self, s: &State<'a>, q: QueueIdx) -> bool {
        self.each(Fn::Overused).any(|p| p.overused(s, q))
    }

    /// Allocatable: AND.
    pub fn allocatable(&self, s: &State<'a>, q: QueueIdx, t: TaskIdx) -> bool {
        self.each(Fn::Allocatable).all(|p| p.allocatable(s, q, t))
    }

    /// JobReady: AND (true when none).
    pub fn job_ready(&self, s: &State<'a>, j: JobIdx) -> bool {
        self.each(Fn::JobReady).all(|p| p.job_ready(s, j))
    }

    /// Tier voting; `Err(plugin name)` names the first plugin that rejected.
    fn vote(&self, f: Fn, mut ask: impl FnMut(&dyn Plugin<'a>) -> Vote) -> Result<(), &'static str> {
        for tier in &self.tiers {
            let mut permit = false;
            for slot in tier.iter().filter(|s| s.active & f.bit() != 0) {
                match ask(slot.plugin.as_ref()) {
                    Vote::Reject => return Err(slot.plugin.name()),
                    Vote::Permit => permit = true,
                    Vote::Abstain => {}
                }
            }
            if permit {
                return Ok(());
            }
        }
        Ok(())
    }

    /// JobPipelined: votes.
    pub fn job_pipelined(&self, s: &State<'a>, j: JobIdx) -> bool {
        self.vote(Fn::JobPipelined, |p| p.job_pipelined(s, j)).is_ok()
    }

    /// JobEnqueueable: votes.
    pub fn job_enqueueable(&self, s: &State<'a>, j: JobIdx) -> bool {
        self.job_enqueueable_why(s, j).is_ok()
    }

    /// JobEnqueueable, naming the plugin that rejected the job.
    pub fn job_enqueueable_why(&self, s: &State<'a>, j: JobIdx) -> Result<(), &'static str> {
        self.vote(Fn::JobEnqueueable, |p| p.job_enqueueable(s, j))
    }

    /// The event message plugin `name` gives for refusing `j` at enqueue
    /// ([`Plugin::enqueue_rejection`]), if it has one.
    pub fn enqueue_rejection(&self, name: &str, s: &State<'a>, j: JobIdx) -> Option<String> {
        self.tiers.iter().flatten().find(|x| x.plugin.name() == name).and_then(|x| x.plugin.enqueue_rejection(s, j))
    }

    /// JobEnqueued: the queue table's inqueue ([`State::queue_enqueued`]), then every plugin
    /// that registered it.
    pub fn job_enqueued(&mut self, s: &mut State<'a>, j: JobIdx) {
        s.queue_enqueued(j);
        let s: &State<'a> = s;
        for slot in self.tiers.iter_mut().flatten().filter(|x| x.active & Fn::JobEnqueued.bit() != 0) {
            slot.plugin.job_enqueued(s, j);
        }
    }

    /// JobValid: the first failure.
    pub fn job_valid(&self, s: &State<'a>, j: JobIdx) -> Option<Invalid> {
        self.each(Fn::JobValid).find_map(|p| p.job_valid(s, j))
    }

    /// JobStarving: the first tier with a function decides (AND inside it); none ⇒ false.
    pub fn job_starving(&self, s: &State<'a>, j: JobIdx) -> bool {
        for tier in &self.tiers {
            let fns: Vec<_> = tier.iter().filter(|x| x.active & Fn::JobStarving.bit() != 0).collect();
            if !fns.is_empty() {
                return fns.iter().all(|x| x.plugin.job_starving(s, j));
            }
        }
        false
    }

    /// Volcano's tier rule for `Preemptable`/`Reclaimable` (`session_plugins.go`,
    /// volcano-behaviour.md §1.5), writing the victims into `out` (cleared first), in the order
    /// of the first deciding plugin's list. Tier by tier: plugins that abstain (or have the
    /// function off) are skipped; a plugin that decides with an empty list empties the result
    /// and ends the tier; otherwise the result is the first decider's list intersected with each
    /// later one's. As in Volcano, a result that becomes empty by intersection is taken as
    /// "nothing decided yet" by the next plugin of the tier. A tier ending with a non-empty result
    /// returns it; else the next tier starts afresh. `scratch` is a reusable buffer.
    fn victims(
        &self,
        f: Fn,
        candidates: &[TaskIdx],
        out: &mut Vec<TaskIdx>,
        scratch: &mut Vec<TaskIdx>,
        mut ask: impl FnMut(&dyn Plugin<'a>, &[TaskIdx], &mut Vec<TaskIdx>) -> Verdict,
    ) {
        out.clear();
        if candidates.is_empty() {
            return;
        }
        for tier in &self.tiers {
            for slot in tier.iter().filter(|x| x.active & f.bit() != 0) {
                scratch.clear();
                if ask(slot.plugin.as_ref(), candidates, scratch) == Verdict::Abstain {
                    continue;
                }
                if scratch.is_empty() {
                    out.clear();
                    break;
                }
                if out.is_empty() {
                    std::mem::swap(out, scratch);
                } else {
                    out.retain(|v| scratch.contains(v));
                }
            }
            if !out.is_empty() {
                return;
            }
        }
    }

    /// `Preemptable` (Volcano `ssn.Preemptable`): the victims `preemptor` may evict among
    /// `candidates`, by [`Plugins::victims`]'s tier rule, into `out`.
    pub fn preemptable(
        &self,
        s: &State<'a>,
        preemptor: TaskIdx,
        candidates: &[TaskIdx],
        out: &mut Vec<TaskIdx>,
        scratch: &mut Vec<TaskIdx>,
    ) {
        self.victims(Fn::Preemptable, candidates, out, scratch, |p, c, o| p.preemptable(s, preemptor, c, o));
    }

    /// `Reclaimable` (Volcano `ssn.Reclaimable`): the victims `reclaimer` may evict among
    /// `candidates`, by the same tier rule, into `out`.
    pub fn reclaimable(
        &self,
        s: &State<'a>,
        reclaimer: TaskIdx,
        candidates: &[TaskIdx],
        out: &mut Vec<TaskIdx>,
        scratch: &mut Vec<TaskIdx>,
    ) {
        self.victims(Fn::Reclaimable, candidates, out, scratch, |p, c, o| p.reclaimable(s, reclaimer, c, o));
    }

    /// `UnifiedEvictable` (Volcano `ssn.UnifiedEvictable`, used by gangpreempt and
    /// gangreclaim): the victims job `job` may evict for `kind` among `candidates`, by the same
    /// tier rule as [`Plugins::preemptable`], into `out`.
    pub fn unified_evictable(
        &self,
        s: &State<'a>,
        kind: EvictionKind,
        job: JobIdx,
        candidates: &[TaskIdx],
        out: &mut Vec<TaskIdx>,
        scratch: &mut Vec<TaskIdx>,
    ) {
        self.victims(Fn::UnifiedEvictable, candidates, out, scratch, |p, c, o| p.unified_evictable(s, kind, job, c, o));
    }

    /// `VictimTasks` (Volcano `ssn.VictimTasks`): the union of every active plugin's list within a
    /// tier, each task once in first-seen order; the first tier with a non-empty union wins.
    pub fn victim_tasks(&self, s: &State<'a>, candidates: &[TaskIdx], out: &mut Vec<TaskIdx>, scratch: &mut Vec<TaskIdx>) {
        out.clear();
        for tier in &self.tiers {
            for slot in tier.iter().filter(|x| x.active & Fn::VictimTasks.bit() != 0) {
                scratch.clear();
                slot.plugin.victim_tasks(s, candidates, scratch);
                for &t in scratch.iter() {
                    if !out.contains(&t) {
                        out.push(t);
                    }
                }
            }
            if !out.is_empty() {
                return;
            }
        }
    }

    /// `Preemptive` (Volcano `ssn.Preemptive`): AND (true when none).
    pub fn preemptive(&self, s: &State<'a>, q: QueueIdx, t: TaskIdx) -> bool {
        self.each(Fn::Preemptive).all(|p| p.preemptive(s, q, t))
    }

    /// `VictimQueueOrder` (Volcano `ssn.VictimQueueOrderFn`): the first plugin answer that is not
    /// `Equal`, else the reverse of [`Plugins::queue_order`] (`Less` = take victims from `l`
    /// first).
    pub fn victim_queue_order(&self, s: &State<'a>, l: QueueIdx, r: QueueIdx, preemptor_queue: QueueIdx) -> Ordering {
        for p in self.each(Fn::VictimQueueOrder) {
            let o = p.victim_queue_order(s, l, r, preemptor_queue);
            if o != Ordering::Equal {
                return o;
            }
        }
        self.queue_order(s, r, l)
    }

    /// AllocateFunc event: the queue table's accounting ([`State::queue_allocate`]), then every
    /// plugin with an event handler.
    pub fn on_allocate(&mut self, s: &mut State<'a>, t: TaskIdx) {
        s.queue_allocate(t);
        let mut view = std::mem::take(&mut s.view);
        for slot in self.tiers.iter_mut().flatten().filter(|x| x.active & Fn::EventHandler.bit() != 0) {
            slot.plugin.on_allocate(s, &mut view, t);
        }
        s.view = view;
    }

    /// DeallocateFunc event: the queue table's accounting ([`State::queue_deallocate`]), then
    /// every plugin with an event handler.
    pub fn on_deallocate(&mut self, s: &mut State<'a>, t: TaskIdx) {
        s.queue_deallocate(t);
        let mut view = std::mem::take(&mut s.view);
        for slot in self.tiers.iter_mut().flatten().filter(|x| x.active & Fn::EventHandler.bit() != 0) {
            slot.plugin.on_deallocate(s, &mut view, t);
        }
        s.view = view;
    }

    /// OnSessionClose of every plugin, in tier order, reporting [`CyclePhase::PluginClosed`]
    /// after each: each reads the session and writes its results to [`State::notes`].
    pub fn close(&mut self, s: &mut State<'a>, observe: &mut dyn FnMut(CyclePhase)) {
        let mut notes = std::mem::take(&mut s.notes);
        for slot in self.tiers.iter_mut().flatten() {
            slot.plugin.on_close(s, &mut notes);
            observe(CyclePhase::PluginClosed(slot.plugin.name()));
        }
        s.notes = notes;
    }
}
