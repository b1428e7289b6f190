//! The session's GPU share cards (Volcano `api/devices/nvidia/gpushare`, `GPUDevices` in
//! `NodeInfo.Others`): per node a range of cards, per card its memory, health, memory in use and
//! number of pods sharing it, and per task the cards it holds (a bit mask of card ids). Built
//! from the nodes' [`GpuShareNode`](crate::model::GpuShareNode) and the pods already on them
//! (their `volcano.sh/gpu-index`), changed only by the Statement (allocate and pipeline take
//! cards, evict and unpipeline free them, discard undoes each exactly), so preempt and a
//! discarded gang leave no card booked.
//!
//! The mode is the deviceshare plugin's (`deviceshare.GPUSharingEnable`: cards by memory,
//! `deviceshare.GPUNumberEnable`: whole cards, `deviceshare.VGPUEnable`: vGPU cards, whose
//! columns and rules are [`super::vgpu`]), with its card policy, score weight and node lock
//! ([`DeviceConf`]), read from the conf by the plugin ([`crate::plugins::deviceshare::device_conf`])
//! and handed to [`State::open`] by the framework through the registry; this layer names no
//! plugin. With [`DeviceMode::Off`] the table is empty and nothing here has any effect.
//!
//! A task's holding ([`Held`]: card mask, vGPU uses, node lock) is logged in each Statement
//! operation, so discard restores the cards, their memory, cores and pod counts, and the node
//! locks exactly.

use super::fit::Reason;
use super::tables::*;
use super::State;
use crate::limits::MAX_GPU_CARDS;
use bumpalo::Bump;

/// Which device rule the session follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DeviceMode {
    /// No device sharing (no `deviceshare` plugin, no flag, or flags Volcano refuses together).
    #[default]
    Off,
    /// `deviceshare.GPUSharingEnable`: a pod asking `volcano.sh/gpu-memory` takes memory of one
    /// card, the first by id that has it.
    Share,
    /// `deviceshare.GPUNumberEnable`: a pod asking `volcano.sh/gpu-number` takes whole idle
    /// cards, the first ones by id.
    Number,
    /// `deviceshare.VGPUEnable` (HAMi): a pod's containers take cards by count, memory and
    /// cores from the node's `volcano.sh/node-vgpu-register` ([`super::vgpu`]).
    Vgpu,
}

/// `deviceshare.SchedulePolicy`: the order vGPU cards are tried in and the node score.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CardPolicy {
    /// Unset or any other value: cards from the highest id down, node score 0.
    #[default]
    Default,
    /// `binpack`: the card with the most memory in use first; node score Σ 100 × used / memory
    /// of the chosen cards after the pod.
    Binpack,
    /// `spread`: the card with the fewest pods first; node score 100 per chosen card that was
    /// idle after the pod (never, since the pod is counted first: Volcano master's `GPUScore`).
    Spread,
}

/// The deviceshare plugin's settings the session's device table follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceConf {
    /// The rule.
    pub mode: DeviceMode,
    /// `deviceshare.SchedulePolicy` (vGPU card order and score).
    pub policy: CardPolicy,
    /// `deviceshare.ScheduleWeight`: the node score is round(Σ card scores) × weight when > 0.
    pub weight: i64,
    /// `deviceshare.NodeLockEnable`: a pod taking cards takes the node's lock
    /// ([`crate::model::NODE_LOCK_VGPU`] / [`crate::model::NODE_LOCK_GPU`]).
    pub node_lock: bool,
}

/// What a task holds of its node's devices: what an operation took or freed, logged in the
/// Statement so discard undoes it exactly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Held<'a> {
    /// Cards, bit `i` = card id `i` of the node (GPU share, GPU number, and vGPU).
    pub mask: u64,
    /// vGPU: each card a container took, with its memory and cores (arena slice).
    pub vgpu: &'a [VgpuUse],
    /// The task took its node's lock ([`DeviceConf::node_lock`]).
    pub lock: bool,
}

impl Held<'_> {
    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.mask == 0 && self.vgpu.is_empty() && !self.lock
    }
}

/// One vGPU card a container of a task holds (Volcano `ContainerDevice`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VgpuUse {
    /// The container: index among the pod's containers that ask for vGPU.
    pub container: u16,
    /// Card id on the node.
    pub card: u8,
    /// Memory taken, MiB.
    pub memory: u64,
    /// Cores taken, percent.
    pub cores: u32,
}

/// GPU share cards of a session, struct-of-arrays in the session arena. Empty (every slice)
/// when the mode is [`DeviceMode::Off`].
#[derive(Default)]
pub struct DeviceTable<'a> {
    /// The rule followed.
    pub mode: DeviceMode,
    /// vGPU card policy, node score weight, node lock.
    pub conf: DeviceConf,
    /// Node `n`'s cards are rows `card_start[n]..card_start[n + 1]`, card id = row −
    /// `card_start[n]` (`nodes + 1` entries).
    pub card_start: &'a [u32],
    /// Memory of the card (unit of the node's `volcano.sh/gpu-memory`).
    pub memory: &'a [u64],
    /// Not listed in `volcano.sh/gpu-unhealthy-ids` (Volcano removes unhealthy cards; they take
    /// no pod and count no pod).
    pub healthy: &'a [bool],
    /// Σ `gpu-memory` of the pods holding the card.
    pub(in crate::session) used_memory: &'a mut [u64],
    /// Pods holding the card (Volcano `len(PodMap)`; 0 = idle for GPU number).
    pub(in crate::session) pods: &'a mut [u32],
    /// Per node: a pod on it has a malformed `volcano.sh/gpu-index`, so its card usage is
    /// unknown and no card of it is given out.
    pub unknown: &'a [bool],
    /// Per task: the cards it holds, bit `i` = card id `i` of its node.
    pub(in crate::session) held: &'a mut [u64],
    /// vGPU: how many pods may share the card (registration field 2).
    pub share_limit: &'a [u32],
    /// vGPU: card UUID.
    pub uuid: &'a [&'a str],
    /// vGPU: card type.
    pub card_type: &'a [&'a str],
    /// vGPU: Σ cores of the pods holding the card (percent).
    pub(in crate::session) used_cores: &'a mut [u32],
    /// vGPU: per task, the range of [`DeviceTable::vgpu_pool`] holding each card its
    /// containers hold (start, length).
    pub(in crate::session) vgpu_span: &'a mut [(u32, u32)],
    /// vGPU: the uses the tasks' spans point into (append-only within the session).
    pub(in crate::session) vgpu_pool: Vec<VgpuUse>,
    /// Per node: it carries a lock annotation of the mode's name that holds at `now`
    /// (taken less than 5 minutes ago, or with a time that does not parse).
    pub lock_fresh: &'a [bool],
    /// Per node: tasks of this session holding its lock (Statement-owned).
    pub(in crate::session) locks: &'a mut [u32],
    /// Per task: it took its node's lock in this session.
    pub(in crate::session) lock_holder: &'a mut [bool],
}

impl DeviceTable<'_> {
    /// Σ `gpu-memory` of the pods holding each card (read only: changed through the Statement).
    #[inline]
    pub fn used_memory(&self) -> &[u64] {
        self.used_memory
    }

    /// Pods holding each card (read only: changed through the Statement).
    #[inline]
    pub fn pods(&self) -> &[u32] {
        self.pods
    }

    /// Per task: the cards it holds, bit `i` = card id `i` of its node (read only: changed
    /// through the Statement).
    #[inline]
    pub fn held(&self) -> &[u64] {
        self.held
    }

    /// vGPU: Σ cores of the pods holding each card (read only: changed through the Statement).
    #[inline]
    pub fn used_cores(&self) -> &[u32] {
        self.used_cores
    }

    /// Per node: tasks of this session holding its lock (read only: changed through the
    /// Statement).
    #[inline]
    pub fn locks(&self) -> &[u32] {
        self.locks
    }
}

impl<'a> DeviceTable<'a> {
    /// Builds the table for `s` under `mode`, the tasks of `s` already on their nodes: each
    /// task on a node that asks for GPU memory or cards holds the healthy cards its
    /// `volcano.sh/gpu-index` names (ids that name no card are ignored, as Volcano's
    /// `AddResource` does).
    pub fn build(arena: &'a Bump, s: &State<'a>, conf: DeviceConf) -> DeviceTable<'a> {
        let mode = conf.mode;
        if mode == DeviceMode::Off {
            return DeviceTable::default();
        }
        if mode == DeviceMode::Vgpu {
            return super::vgpu::build(arena, s, conf);
        }
        let nn = s.nodes.len;
        let mut start = Vec::with_capacity(nn + 1);
        let mut memory = Vec::new();
        let mut healthy = Vec::new();
        start.push(0u32);
        for rec in s.nodes.rec.iter() {
            if let Some(g) = rec.spec.gpu_share.as_ref().filter(|g| g.number <= MAX_GPU_CARDS) {
                for id in 0..g.number {
                    memory.push(g.memory_per_card);
                    healthy.push(g.unhealthy.binary_search(&id).is_err());
                }
            }
            start.push(memory.len() as u32);
        }
        let nc = memory.len();
        let mut t = DeviceTable {
            mode,
            conf,
            card_start: arena.alloc_slice_copy(&start),
            memory: arena.alloc_slice_copy(&memory),
            healthy: arena.alloc_slice_copy(&healthy),
            used_memory: arena.alloc_slice_fill_copy(nc, 0),
            pods: arena.alloc_slice_fill_copy(nc, 0),
            unknown: &[],
            held: arena.alloc_slice_fill_copy(s.tasks.len, 0),
            lock_fresh: super::vgpu::lock_fresh(arena, s, conf),
            locks: arena.alloc_slice_fill_copy(nn, 0),
            lock_holder: arena.alloc_slice_fill_copy(s.tasks.len, false),
            ..Default::default()
        };
        let mut unknown = vec![false; nn];
        for i in 0..s.tasks.len {
            let Some(n) = s.tasks.node_of(TaskIdx(i as u32)) else { continue };
            let gpu = &s.tasks.rec[i].spec.gpu;
            if !gpu.requests() {
                continue;
            }
            if gpu.index_invalid {
                unknown[n.ix()] = true;
                continue;
            }
            let cards = t.cards(n);
            let mut mask = 0u64;
            for &id in &gpu.index {
                if id < cards.len() as u32 && t.healthy[cards.start + id as usize] {
                    mask |= 1 << id;
                }
            }
            t.take(n, mask, gpu.memory);
            t.held[i] = mask;
        }
        t.unknown = arena.alloc_slice_copy(&unknown);
        t
    }

    /// Rows of node `n`'s cards (empty when it has none or the mode is off).
    #[inline]
    pub fn cards(&self, n: NodeIdx) -> std::ops::Range<usize> {
        match (self.card_start.get(n.ix()), self.card_start.get(n.ix() + 1)) {
            (Some(&a), Some(&b)) => a as usize..b as usize,
            _ => 0..0,
        }
    }

    /// Free memory of card row `c` (clamped at 0, as Volcano's `getDevicesIdleGPUMemory`).
    #[inline]
    pub fn idle_memory(&self, c: usize) -> u64 {
        self.memory[c].saturating_sub(self.used_memory[c])
    }

    fn take(&mut self, n: NodeIdx, mask: u64, memory: u64) {
        let start = self.cards(n).start;
        for id in ids(mask) {
            self.used_memory[start + id as usize] = self.used_memory[start + id as usize].saturating_add(memory);
            self.pods[start + id as usize] += 1;
        }
    }

    fn release(&mut self, n: NodeIdx, mask: u64, memory: u64) {
        let start = self.cards(n).start;
        for id in ids(mask) {
            self.used_memory[start + id as usize] = self.used_memory[start + id as usize].saturating_sub(memory);
            self.pods[start + id as usize] = self.pods[start + id as usize].saturating_sub(1);
        }
    }
}

/// Card ids of a mask, ascending.
pub fn ids(mask: u64) -> impl Iterator<Item = u32> {
    (0..64u32).filter(move |i| mask & (1 << i) != 0)
}

/// Volcano's `volcano.sh/gpu-index` value: card ids joined by `,`.
pub fn index_value(mask: u64) -> String {
    ids(mask).map(|i| i.to_string()).collect::<Vec<_>>().join(",")
}

impl<'a> State<'a> {
    /// Volcano `HasDeviceRequest`: whether `t` asks for what the mode shares (GPU memory for
    /// share, whole cards for number, a container limiting `vgpu-number` or `vgpu-memory` for
    /// vGPU).
    #[inline]
    pub fn device_request(&self, t: TaskIdx) -> bool {
        let spec = &self.tasks.rec[t.ix()].spec;
        match self.devices.mode {
            DeviceMode::Off => false,
            DeviceMode::Share => spec.gpu.memory > 0,
            DeviceMode::Number => spec.gpu.number > 0,
            DeviceMode::Vgpu => spec.vgpu.requests(),
        }
    }

    /// The deviceshare predicate (Volcano `FilterNode`): a task asking for card memory fits
    /// `n` when one healthy card has that much free; one asking for whole cards when `n` has
    /// that many idle healthy cards; one asking for vGPU when each of its containers finds its
    /// cards ([`State::vgpu_run`]). A node that registers no cards is not checked (Volcano
    /// skips a nil device; the resource check then refuses the request).
    pub fn device_fit(&self, t: TaskIdx, n: NodeIdx) -> Result<(), Reason> {
        if !self.device_request(t) {
            return Ok(());
        }
        if self.devices.mode == DeviceMode::Vgpu {
            return self.vgpu_run(t, n, &mut |_| {}).map(|_| ());
        }
        let cards = self.devices.cards(n);
        if cards.is_empty() {
            return Ok(());
        }
        let name = self.nodes.rec[n.ix()].name;
        if self.devices.unknown[n.ix()] {
            return Err(Reason::GpuCardsUnknown(name));
        }
        let g = &self.tasks.rec[t.ix()].spec.gpu;
        let d = &self.devices;
        match d.mode {
            DeviceMode::Share if !cards.clone().any(|c| d.healthy[c] && d.idle_memory(c) >= g.memory) => {
                Err(Reason::GpuShareMemory(name))
            }
            DeviceMode::Number if cards.filter(|&c| d.healthy[c] && d.pods[c] == 0).count() < g.number as usize => {
                Err(Reason::GpuNumber(name))
            }
            _ => Ok(()),
        }
    }

    /// The deviceshare node score (Volcano `NodeOrderFn`): with `ScheduleWeight` > 0 and a
    /// vGPU request, round(Σ card scores of the cards `t` would take on `n`) × weight; else 0
    /// (GPU share scores 0 in Volcano).
    pub fn device_score(&self, t: TaskIdx, n: NodeIdx) -> f64 {
        let conf = self.devices.conf;
        if conf.weight <= 0 || self.devices.mode != DeviceMode::Vgpu || !self.device_request(t) {
            return 0.0;
        }
        match self.vgpu_run(t, n, &mut |_| {}) {
            Ok(s) => (s + 0.5).floor() * conf.weight as f64,
            Err(_) => 0.0,
        }
    }

    /// The cards `t` would take on `n` (Volcano `GPUDevices.Allocate`): by memory when it asks
    /// for memory (the first healthy card by id with enough free), else the first `number`
    /// idle healthy cards by id (Volcano takes them in Go map order; Basalt by id); for vGPU
    /// the cards [`State::vgpu_run`] chooses; and the node's lock with
    /// `deviceshare.NodeLockEnable`. Empty when `t` asks for nothing the mode shares or `n` has
    /// no cards; `None` when it cannot be placed there (no card, or the node is locked).
    /// vGPU uses are allocated from `arena` (the session's).
    pub fn device_pick(&self, t: TaskIdx, n: NodeIdx, arena: &'a Bump) -> Option<Held<'a>> {
        if !self.device_request(t) {
            return Some(Held::default());
        }
        let d = &self.devices;
        // Volcano calls a device's Allocate (which takes the lock) only for a node that
        // registers cards.
        let lock = d.conf.node_lock && self.takes_lock(t) && !d.cards(n).is_empty();
        if lock && (d.lock_fresh.get(n.ix()).copied().unwrap_or(false) || d.locks.get(n.ix()).is_some_and(|&c| c > 0)) {
            return None;
        }
        if d.mode == DeviceMode::Vgpu {
            let mut uses = bumpalo::collections::Vec::new_in(arena);
            self.vgpu_run(t, n, &mut |u| uses.push(u)).ok()?;
            let vgpu = uses.into_bump_slice();
            let mask = vgpu.iter().fold(0u64, |m, u| m | (1 << u.card));
            return Some(Held { mask, vgpu, lock });
        }
        let cards = d.cards(n);
        if cards.is_empty() {
            return Some(Held::default());
        }
        if d.unknown[n.ix()] {
            return None;
        }
        let g = &self.tasks.rec[t.ix()].spec.gpu;
        let start = cards.start;
        if g.memory > 0 {
            let c = cards.clone().find(|&c| d.healthy[c] && d.idle_memory(c) >= g.memory)?;
            return Some(Held { mask: 1 << (c - start), vgpu: &[], lock });
        }
        let (mut mask, mut got) = (0u64, 0u32);
        for c in cards.filter(|&c| d.healthy[c] && d.pods[c] == 0).take(g.number as usize) {
            mask |= 1 << (c - start);
            got += 1;
        }
        (got == g.number).then_some(Held { mask, vgpu: &[], lock: false })
    }

    /// Whether `t`'s card allocation takes the node lock in Volcano: every vGPU pod, a GPU
    /// share pod asking memory (`gpushare.Allocate` locks only on that path).
    fn takes_lock(&self, t: TaskIdx) -> bool {
        match self.devices.mode {
            DeviceMode::Vgpu => true,
            DeviceMode::Share => self.tasks.rec[t.ix()].spec.gpu.memory > 0,
            _ => false,
        }
    }

    /// `t` takes `held` of its node `n` (no-op when empty).
    pub fn device_take(&mut self, t: TaskIdx, n: NodeIdx, held: Held<'a>) {
        if held.is_empty() {
            return;
        }
        if held.lock {
            self.devices.locks[n.ix()] += 1;
            self.devices.lock_holder[t.ix()] = true;
        }
        if self.devices.mode == DeviceMode::Vgpu {
            self.devices.vgpu_take(n, held.vgpu);
            self.devices.vgpu_set(t, held.vgpu);
        } else {
            let mem = self.tasks.rec[t.ix()].spec.gpu.memory;
            self.devices.take(n, held.mask, mem);
        }
        self.devices.held[t.ix()] = held.mask;
    }

    /// `t` frees `held` of node `n` (Volcano `Release`); returns it.
    pub fn device_release(&mut self, t: TaskIdx, n: NodeIdx, held: Held<'a>) -> Held<'a> {
        if held.is_empty() {
            return held;
        }
        if held.lock {
            self.devices.locks[n.ix()] = self.devices.locks[n.ix()].saturating_sub(1);
            self.devices.lock_holder[t.ix()] = false;
        }
        if self.devices.mode == DeviceMode::Vgpu {
            self.devices.vgpu_release(n, held.vgpu);
            self.devices.vgpu_set(t, &[]);
        } else {
            let mem = self.tasks.rec[t.ix()].spec.gpu.memory;
            self.devices.release(n, held.mask, mem);
        }
        self.devices.held[t.ix()] = 0;
        held
    }

    /// The cards `t` holds, bit `i` = card id `i` of its node (0 when none or the mode is off).
    #[inline]
    pub fn device_held(&self, t: TaskIdx) -> u64 {
        self.devices.held.get(t.ix()).copied().unwrap_or(0)
    }

    /// Everything `t` holds of its node's devices (cards, vGPU uses copied into `arena`,
    /// lock), as an operation that frees it logs.
    pub fn device_holding(&self, t: TaskIdx, arena: &'a Bump) -> Held<'a> {
        let uses = self.devices.vgpu_held(t);
        let vgpu: &'a [VgpuUse] = if uses.is_empty() { &[] } else { arena.alloc_slice_copy(uses) };
        Held { mask: self.device_held(t), vgpu, lock: self.holds_lock(t) }
    }

    /// Whether `t` took its node's lock in this session.
    pub fn holds_lock(&self, t: TaskIdx) -> bool {
        self.devices.lock_holder.get(t.ix()).copied().unwrap_or(false)
    }
}
