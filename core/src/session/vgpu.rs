//! The session's vGPU cards (Volcano `api/devices/nvidia/vgpu`, HAMi core sharing): the
//! [`DeviceTable`] columns under [`DeviceMode::Vgpu`] — per card its share limit, memory, UUID,
//! type, and the memory, cores and pods in use — built from the nodes'
//! `volcano.sh/node-vgpu-register` and the pods already on them (`volcano.sh/vgpu-ids-new`), and
//! Volcano's `checkNodeGPUSharingPredicateAndScore`, which the predicate, the node score and the
//! allocation all run ([`State::vgpu_run`]).

use super::devices::{CardPolicy, DeviceConf, DeviceMode, DeviceTable, VgpuUse};
use super::fit::Reason;
use super::tables::*;
use super::State;
use crate::limits::MAX_GPU_CARDS;
use crate::model::{PodVgpu, HAMI_CORE, NODE_LOCK_EXPIRY_MS, NODE_LOCK_GPU, NODE_LOCK_VGPU};
use bumpalo::Bump;

const MAX: usize = MAX_GPU_CARDS as usize;

/// Per node: whether it carries a lock of the mode's name that still holds at the session's
/// `now` (Volcano `LockNode` fails on a lock annotation younger than 5 minutes, or one whose
/// time does not parse). Without `NodeLockEnable`, all false. With `now` unknown (0), a lock
/// present holds.
pub(super) fn lock_fresh<'a>(arena: &'a Bump, s: &State<'a>, conf: DeviceConf) -> &'a [bool] {
    let name = match conf.mode {
        _ if !conf.node_lock => return arena.alloc_slice_fill_copy(s.nodes.len, false),
        DeviceMode::Vgpu => NODE_LOCK_VGPU,
        _ => NODE_LOCK_GPU,
    };
    let now = s.now_ms;
    arena.alloc_slice_fill_iter(s.nodes.rec.iter().map(|rec| {
        rec.spec.devices.locks.iter().any(|l| {
            l.name == name
                && match l.since_ms {
                    None => true,
                    Some(_) if now == 0 => true,
                    Some(since) => now.saturating_sub(since) <= NODE_LOCK_EXPIRY_MS,
                }
        })
    }))
}

/// Builds the vGPU table: each registered card, then each task on a node holding the cards its
/// `volcano.sh/vgpu-ids-new` names (Volcano `AddResource`: the first card whose UUID the entry
/// contains; a pod is added to a card once, as HAMi core's `AddPod`; entries that name no card
/// are ignored). A malformed registration or `vgpu-ids-new` keeps the node's cards out of use.
pub(super) fn build<'a>(arena: &'a Bump, s: &State<'a>, conf: DeviceConf) -> DeviceTable<'a> {
    let nn = s.nodes.len;
    let mut start = Vec::with_capacity(nn + 1);
    let (mut memory, mut limit, mut uuid, mut kind, mut health) = (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut unknown = vec![false; nn];
    start.push(0u32);
    for (n, rec) in s.nodes.rec.iter().enumerate() {
        if let Some(v) = &rec.spec.devices.vgpu {
            unknown[n] = v.malformed;
            for c in v.cards.iter().take(MAX) {
                memory.push(c.memory);
                limit.push(c.number);
                uuid.push(&*arena.alloc_str(&c.uuid));
                kind.push(&*arena.alloc_str(&c.card_type));
                health.push(c.health);
            }
        }
        start.push(memory.len() as u32);
    }
    let nc = memory.len();
    let mut t = DeviceTable {
        mode: DeviceMode::Vgpu,
        conf,
        card_start: arena.alloc_slice_copy(&start),
        memory: arena.alloc_slice_copy(&memory),
        healthy: arena.alloc_slice_copy(&health),
        used_memory: arena.alloc_slice_fill_copy(nc, 0),
        pods: arena.alloc_slice_fill_copy(nc, 0),
        unknown: &[],
        held: arena.alloc_slice_fill_copy(s.tasks.len, 0),
        share_limit: arena.alloc_slice_copy(&limit),
        uuid: arena.alloc_slice_copy(&uuid),
        card_type: arena.alloc_slice_copy(&kind),
        used_cores: arena.alloc_slice_fill_copy(nc, 0),
        vgpu_span: arena.alloc_slice_fill_copy(s.tasks.len, (0, 0)),
        vgpu_pool: Vec::new(),
        lock_fresh: lock_fresh(arena, s, conf),
        locks: arena.alloc_slice_fill_copy(nn, 0),
        lock_holder: arena.alloc_slice_fill_copy(s.tasks.len, false),
    };
    for i in 0..s.tasks.len {
        let Some(n) = s.tasks.node_of(TaskIdx(i as u32)) else { continue };
        let v = &s.tasks.rec[i].spec.vgpu;
        if v.held_invalid {
            unknown[n.ix()] = true;
            continue;
        }
        if v.held.is_empty() {
            continue;
        }
        let cards = t.cards(n);
        let mut uses = Vec::new();
        let mut mask = 0u64;
        for (c, ctr) in v.held.iter().enumerate() {
            for d in ctr {
                let Some(id) = cards.clone().position(|row| d.uuid.contains(t.uuid[row])) else { continue };
                if mask & (1 << id) != 0 {
                    continue;
                }
                mask |= 1 << id;
                uses.push(VgpuUse { container: c as u16, card: id as u8, memory: d.memory, cores: d.cores });
            }
        }
        t.vgpu_take(n, &uses);
        t.vgpu_set(TaskIdx(i as u32), &uses);
        t.held[i] = mask;
    }
    t.unknown = arena.alloc_slice_copy(&unknown);
    t
}

impl DeviceTable<'_> {
    /// The uses take their cards of node `n` (HAMi core `AddPod`: pods, memory, cores).
    pub(super) fn vgpu_take(&mut self, n: NodeIdx, uses: &[VgpuUse]) {
        let start = self.cards(n).start;
        for u in uses {
            let c = start + u.card as usize;
            self.pods[c] += 1;
            self.used_memory[c] = self.used_memory[c].saturating_add(u.memory);
            self.used_cores[c] = self.used_cores[c].saturating_add(u.cores);
        }
    }

    /// The uses free their cards of node `n` (HAMi core `SubPod`).
    pub(super) fn vgpu_release(&mut self, n: NodeIdx, uses: &[VgpuUse]) {
        let start = self.cards(n).start;
        for u in uses {
            let c = start + u.card as usize;
            self.pods[c] = self.pods[c].saturating_sub(1);
            self.used_memory[c] = self.used_memory[c].saturating_sub(u.memory);
            self.used_cores[c] = self.used_cores[c].saturating_sub(u.cores);
        }
    }

    /// vGPU: each card `t` holds, with memory and cores (read only: changed through the
    /// Statement).
    #[inline]
    pub fn vgpu_held(&self, t: TaskIdx) -> &[VgpuUse] {
        match self.vgpu_span.get(t.ix()) {
            Some(&(a, l)) => &self.vgpu_pool[a as usize..(a + l) as usize],
            None => &[],
        }
    }

    /// `t` now holds `uses` (appended to the pool; empty clears it).
    pub(super) fn vgpu_set(&mut self, t: TaskIdx, uses: &[VgpuUse]) {
        let span = if uses.is_empty() {
            (0, 0)
        } else {
            let a = self.vgpu_pool.len() as u32;
            self.vgpu_pool.extend_from_slice(uses);
            (a, uses.len() as u32)
        };
        self.vgpu_span[t.ix()] = span;
    }
}

/// Volcano `checkGPUtype` after `checkType`: the card type contains `NVIDIA`; then with
/// `nvidia.com/use-gputype` it contains one of the listed types, else with
/// `nvidia.com/nouse-gputype` none of them (case-insensitive).
fn type_ok(v: &PodVgpu, card_type: &str) -> bool {
    if !card_type.contains("NVIDIA") {
        return false;
    }
    let upper = card_type.to_uppercase();
    let any = |list: &[String]| list.iter().any(|t| upper.contains(&t.to_uppercase()));
    match (&v.use_types, &v.nouse_types) {
        (Some(u), _) => any(u),
        (None, Some(n)) => !any(n),
        (None, None) => true,
    }
}

/// Volcano `gpuUUIDFilter.matches`.
fn uuid_ok(v: &PodVgpu, id: &str) -> bool {
    let enabled = !v.use_uuids.is_empty() || !v.nouse_uuids.is_empty();
    if id.is_empty() && enabled {
        return false;
    }
    if !v.use_uuids.is_empty() && !v.use_uuids.iter().any(|u| u == id) {
        return false;
    }
    !v.nouse_uuids.iter().any(|u| u == id)
}

impl<'a> State<'a> {
    /// Volcano `checkNodeGPUSharingPredicateAndScore` for `t` on `n` against the current card
    /// usage: for each container in order, cards are tried in the policy's order
    /// (`sortedDeviceIndicesByPolicy`: default from the highest id down, binpack by memory in
    /// use most first, spread by pods fewest first, ties by id) over the usage including the
    /// earlier containers' tentative cards; a card takes the container when its UUID passes the
    /// UUID filter, it has a free share slot, it holds no pod of `t`'s PodGroup (with the
    /// `vgpu-podgroup-policy: spread` annotation), its free memory covers the request (the
    /// percentage of its memory when one is set), its cores stay ≤ 100, a 100-core request
    /// finds it with no pod, a 0-core request does not find it at 100 cores, and its type
    /// passes the type filter. `emit` gets each card taken; `Ok` is Σ of the policy's card
    /// scores. A node without cards passes with score 0 (Volcano skips a nil device).
    pub fn vgpu_run(&self, t: TaskIdx, n: NodeIdx, emit: &mut dyn FnMut(VgpuUse)) -> Result<f64, Reason> {
        let d = &self.devices;
        let name = self.nodes.rec[n.ix()].name;
        if d.unknown.get(n.ix()).copied().unwrap_or(false) {
            return Err(Reason::VgpuCardsUnknown(name));
        }
        let cards = d.cards(n);
        if cards.is_empty() {
            return Ok(0.0);
        }
        let spec = &self.tasks.rec[t.ix()].spec;
        let v = &spec.vgpu;
        let fail = Err(Reason::VgpuSharing);
        if v.mode.as_deref().is_some_and(|m| m != HAMI_CORE) {
            return fail;
        }
        let (start, k) = (cards.start, cards.len().min(MAX));
        let mut used_mem = [0u64; MAX];
        let mut used_num = [0u32; MAX];
        let mut used_cores = [0u32; MAX];
        used_mem[..k].copy_from_slice(&d.used_memory[start..start + k]);
        used_num[..k].copy_from_slice(&d.pods[start..start + k]);
        used_cores[..k].copy_from_slice(&d.used_cores[start..start + k]);
        let blocked = if v.group_spread && spec.group.is_some() { self.group_cards(t, n) } else { 0 };
        let mut score = 0.0;
        let mut order = [0u8; MAX];
        for (c, req) in v.requests.iter().enumerate() {
            if req.number as usize > k {
                return fail;
            }
            let mut nums = req.number;
            for (i, o) in order[..k].iter_mut().enumerate() {
                *o = i as u8;
            }
            match d.conf.policy {
                CardPolicy::Binpack => {
                    order[..k].sort_by(|&a, &b| used_mem[b as usize].cmp(&used_mem[a as usize]).then(a.cmp(&b)))
                }
                CardPolicy::Spread => {
                    order[..k].sort_by(|&a, &b| used_num[a as usize].cmp(&used_num[b as usize]).then(a.cmp(&b)))
                }
                CardPolicy::Default => order[..k].reverse(),
            }
            for &i in &order[..k] {
                let (i, row) = (i as usize, start + i as usize);
                if !uuid_ok(v, d.uuid[row]) || d.share_limit[row] <= used_num[i] || blocked & (1 << i) != 0 {
                    continue;
                }
                let memreq = if req.mem_percentage != 101 {
                    (d.memory[row] as f64 * f64::from(req.mem_percentage) / 100.0) as u64
                } else {
                    req.memory
                };
                if i128::from(d.memory[row]) - i128::from(used_mem[i]) < i128::from(memreq)
                    || used_cores[i].saturating_add(req.cores) > 100
                    || (req.cores == 100 && used_num[i] > 0)
                    || (used_cores[i] == 100 && req.cores == 0)
                    || !type_ok(v, d.card_type[row])
                {
                    continue;
                }
                used_num[i] += 1;
                used_mem[i] = used_mem[i].saturating_add(memreq);
                used_cores[i] = used_cores[i].saturating_add(req.cores);
                if nums > 0 {
                    nums -= 1;
                    emit(VgpuUse { container: c as u16, card: i as u8, memory: memreq, cores: req.cores });
                    score += match d.conf.policy {
                        CardPolicy::Binpack if d.memory[row] > 0 => 100.0 * used_mem[i] as f64 / d.memory[row] as f64,
                        CardPolicy::Spread if used_num[i] == 0 => 100.0,
                        _ => 0.0,
                    };
                }
                if nums == 0 {
                    break;
                }
            }
            if nums > 0 {
                return fail;
            }
        }
        Ok(score)
    }

    /// Cards of `n` holding a pod of `t`'s PodGroup with memory or cores in use (Volcano
    /// `deviceHasPodFromSameGroup`), bit = card id.
    fn group_cards(&self, t: TaskIdx, n: NodeIdx) -> u64 {
        let Some(j) = self.tasks.job_of(t) else { return 0 };
        let mut mask = 0u64;
        for x in self.jobs.tasks(j) {
            if x == t || self.tasks.node_of(x) != Some(n) {
                continue;
            }
            for u in self.devices.vgpu_held(x) {
                if u.memory > 0 || u.cores > 0 {
                    mask |= 1 << u.card;
                }
            }
        }
        mask
    }
}
