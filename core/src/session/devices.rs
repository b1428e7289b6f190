//! The session's GPU share cards (Volcano `api/devices/nvidia/gpushare`, `GPUDevices` in
//! `NodeInfo.Others`): per node a range of cards, per card its memory, health, memory in use and
//! number of pods sharing it, and per task the cards it holds (a bit mask of card ids). Built
//! from the nodes' [`GpuShareNode`](crate::model::GpuShareNode) and the pods already on them
//! (their `volcano.sh/gpu-index`), changed only by the Statement (allocate and pipeline take
//! cards, evict and unpipeline free them, discard undoes each exactly), so preempt and a
//! discarded gang leave no card booked.
//!
//! The mode is the deviceshare plugin's (`deviceshare.GPUSharingEnable`: cards by memory,
//! `deviceshare.GPUNumberEnable`: whole cards), read from the conf by the plugin
//! ([`crate::plugins::deviceshare::mode`]) and handed to [`State::open`] by the framework
//! through the registry; this layer names no plugin. With [`DeviceMode::Off`] the table is empty
//! and nothing here has any effect.

use super::fit::Reason;
use super::tables::*;
use super::State;
use crate::limits::MAX_GPU_CARDS;
use bumpalo::Bump;

/// Which GPU share rule the session follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DeviceMode {
    /// No device sharing (no `deviceshare` plugin, neither flag, or both).
    #[default]
    Off,
    /// `deviceshare.GPUSharingEnable`: a pod asking `volcano.sh/gpu-memory` takes memory of one
    /// card, the first by id that has it.
    Share,
    /// `deviceshare.GPUNumberEnable`: a pod asking `volcano.sh/gpu-number` takes whole idle
    /// cards, the first ones by id.
    Number,
}

/// GPU share cards of a session, struct-of-arrays in the session arena. Empty (every slice)
/// when the mode is [`DeviceMode::Off`].
#[derive(Default)]
pub struct DeviceTable<'a> {
    /// The rule followed.
    pub mode: DeviceMode,
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
}

impl<'a> DeviceTable<'a> {
    /// Builds the table for `s` under `mode`, the tasks of `s` already on their nodes: each
    /// task on a node that asks for GPU memory or cards holds the healthy cards its
    /// `volcano.sh/gpu-index` names (ids that name no card are ignored, as Volcano's
    /// `AddResource` does).
    pub fn build(arena: &'a Bump, s: &State<'a>, mode: DeviceMode) -> DeviceTable<'a> {
        if mode == DeviceMode::Off {
            return DeviceTable::default();
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
            card_start: arena.alloc_slice_copy(&start),
            memory: arena.alloc_slice_copy(&memory),
            healthy: arena.alloc_slice_copy(&healthy),
            used_memory: arena.alloc_slice_fill_copy(nc, 0),
            pods: arena.alloc_slice_fill_copy(nc, 0),
            unknown: &[],
            held: arena.alloc_slice_fill_copy(s.tasks.len, 0),
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
    /// share, whole cards for number).
    #[inline]
    pub fn device_request(&self, t: TaskIdx) -> bool {
        let g = &self.tasks.rec[t.ix()].spec.gpu;
        match self.devices.mode {
            DeviceMode::Off => false,
            DeviceMode::Share => g.memory > 0,
            DeviceMode::Number => g.number > 0,
        }
    }

    /// The deviceshare predicate (Volcano `FilterNode`): a task asking for card memory fits
    /// `n` when one healthy card has that much free; one asking for whole cards when `n` has
    /// that many idle healthy cards. A node that registers no cards is not checked (Volcano
    /// skips a nil device; the resource check then refuses the request).
    pub fn device_fit(&self, t: TaskIdx, n: NodeIdx) -> Result<(), Reason> {
        if !self.device_request(t) {
            return Ok(());
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

    /// The cards `t` would take on `n` (Volcano `GPUDevices.Allocate`): by memory when it asks
    /// for memory (the first healthy card by id with enough free), else the first `number`
    /// idle healthy cards by id (Volcano takes them in Go map order; Basalt by id). `Some(0)`
    /// when `t` asks for nothing the mode shares or `n` has no cards; `None` when it cannot be
    /// placed there.
    pub fn device_pick(&self, t: TaskIdx, n: NodeIdx) -> Option<u64> {
        if !self.device_request(t) {
            return Some(0);
        }
        let d = &self.devices;
        let cards = d.cards(n);
        if cards.is_empty() {
            return Some(0);
        }
        if d.unknown[n.ix()] {
            return None;
        }
        let g = &self.tasks.rec[t.ix()].spec.gpu;
        let start = cards.start;
        if g.memory > 0 {
            let c = cards.clone().find(|&c| d.healthy[c] && d.idle_memory(c) >= g.memory)?;
            return Some(1 << (c - start));
        }
        let (mut mask, mut got) = (0u64, 0u32);
        for c in cards.filter(|&c| d.healthy[c] && d.pods[c] == 0).take(g.number as usize) {
            mask |= 1 << (c - start);
            got += 1;
        }
        (got == g.number).then_some(mask)
    }

    /// `t` takes cards `mask` of its node `n` (no-op for an empty mask).
    pub fn device_take(&mut self, t: TaskIdx, n: NodeIdx, mask: u64) {
        if mask == 0 {
            return;
        }
        let mem = self.tasks.rec[t.ix()].spec.gpu.memory;
        self.devices.take(n, mask, mem);
        self.devices.held[t.ix()] = mask;
    }

    /// `t` frees cards `mask` of node `n` (Volcano `Release`); returns the mask.
    pub fn device_release(&mut self, t: TaskIdx, n: NodeIdx, mask: u64) -> u64 {
        if mask == 0 {
            return 0;
        }
        let mem = self.tasks.rec[t.ix()].spec.gpu.memory;
        self.devices.release(n, mask, mem);
        self.devices.held[t.ix()] = 0;
        mask
    }

    /// The cards `t` holds (0 when none or the mode is off).
    #[inline]
    pub fn device_held(&self, t: TaskIdx) -> u64 {
        self.devices.held.get(t.ix()).copied().unwrap_or(0)
    }
}
