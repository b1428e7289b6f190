//! The NUMA arithmetic of the `numa-aware` plugin: a node's CPU topology, CPU sets over it,
//! Volcano's cpumanager hint provider (`numaaware/provider/cpumanager`: topology hints per
//! container, `takeByTopology`), and the topology manager policies (`numaaware/policy`: hint
//! merging, `none`, `best-effort`, `restricted`, `single-numa-node`).
//!
//! CPU sets are bit sets over the node's CPUs in id order (bit `i` = the `i`-th CPU of
//! `spec.cpuDetail`); NUMA affinities are 64-bit masks of NUMA node ids (Kubernetes'
//! `bitmask.BitMask`).
//!
//! One difference from Volcano: where `takeByTopology` sorts sockets, cores and CPUs, Volcano's
//! comparators (`a < b || c < d`) are not orders and Go's `sort.Slice` starts from a map's
//! random order, so its choice among equally good CPUs is not reproducible; Basalt sorts by
//! the same keys lexicographically. Which NUMA nodes a container's CPUs come from is decided by
//! the hint first, so per-NUMA-node counts (what later hints read) agree whenever the hint's
//! NUMA nodes have the CPUs. Volcano's `freeSockets`/`freeCores`, which intersect socket and
//! core ids with CPU ids, are reproduced as written.

use crate::model::{NumaCpu, NumatopologySpec};

/// A set of a node's CPUs: bit `i` = the `i`-th CPU by id ([`Topology::cpus`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuSet(Vec<u64>);

impl CpuSet {
    /// The empty set for `n` CPUs.
    pub fn empty(n: usize) -> Self {
        CpuSet(vec![0; n.div_ceil(64)])
    }

    /// Whether CPU position `i` is in the set.
    #[inline]
    pub fn has(&self, i: usize) -> bool {
        self.0.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    /// Adds CPU position `i`.
    #[inline]
    pub fn add(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }

    /// Number of CPUs.
    pub fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }

    /// CPU positions, ascending.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(k, &w)| (0..64).filter(move |b| w & (1 << b) != 0).map(move |b| k * 64 + b))
    }

    /// `self ∪= o`.
    pub fn union_with(&mut self, o: &CpuSet) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a |= b;
        }
    }

    /// `self −= o`.
    pub fn remove_all(&mut self, o: &CpuSet) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a &= !b;
        }
    }

    /// `self ∩ o`.
    pub fn intersect(&self, o: &CpuSet) -> CpuSet {
        CpuSet(self.0.iter().zip(&o.0).map(|(a, b)| a & b).collect())
    }
}

/// A node's CPU topology (Kubernetes `topology.CPUTopology` of the Numatopology's `cpuDetail`).
#[derive(Clone, Debug)]
pub struct Topology {
    /// CPUs by id ascending (positions of [`CpuSet`]).
    pub cpus: Vec<NumaCpu>,
    /// NUMA node ids, ascending.
    pub numa_nodes: Vec<u32>,
    /// `NumCPUs / NumSockets` (0 without sockets).
    cpus_per_socket: usize,
    /// `NumCPUs / NumCores`, cores counted as distinct (socket, core) pairs (0 without cores).
    cpus_per_core: usize,
    /// The kubelet's reserved CPUs (`resReserved.cpu` rounded up, taken by topology from all
    /// CPUs; empty when that fails, as in Volcano).
    pub reserved: CpuSet,
}

/// A topology hint: a NUMA affinity (`None` = any NUMA node) and whether it is preferred
/// (Volcano `policy.TopologyHint`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hint {
    /// NUMA nodes, bit `k` = NUMA node `k`; `None` = no preference.
    pub affinity: Option<u64>,
    /// Preferred.
    pub preferred: bool,
}

impl Topology {
    /// The topology of a Numatopology.
    pub fn new(t: &NumatopologySpec) -> Self {
        let n = t.cpus.len();
        let mut sockets: Vec<u32> = t.cpus.iter().map(|c| c.socket).collect();
        sockets.sort_unstable();
        sockets.dedup();
        let mut cores: Vec<(u32, u32)> = t.cpus.iter().map(|c| (c.socket, c.core)).collect();
        cores.sort_unstable();
        cores.dedup();
        let mut topo = Topology {
            numa_nodes: t.numa_nodes(),
            cpus_per_socket: if sockets.is_empty() { 0 } else { n / sockets.len() },
            cpus_per_core: if cores.is_empty() { 0 } else { n / cores.len() },
            cpus: t.cpus.clone(),
            reserved: CpuSet::empty(n),
        };
        if t.reserved_cpu_milli > 0 {
            let want = (t.reserved_cpu_milli as u64).div_ceil(1000) as usize;
            topo.reserved = topo.take_by_topology(&topo.all(), want).unwrap_or_else(|| CpuSet::empty(n));
        }
        topo
    }

    /// Every CPU.
    pub fn all(&self) -> CpuSet {
        let mut s = CpuSet::empty(self.cpus.len());
        (0..self.cpus.len()).for_each(|i| s.add(i));
        s
    }

    /// The set of the CPU ids `ids` (ids not in the topology are left out).
    pub fn set_of(&self, ids: &[u32]) -> CpuSet {
        let mut s = CpuSet::empty(self.cpus.len());
        for id in ids {
            if let Ok(i) = self.cpus.binary_search_by_key(id, |c| c.id) {
                s.add(i);
            }
        }
        s
    }

    /// The CPU ids of a set, ascending.
    pub fn ids(&self, s: &CpuSet) -> Vec<u32> {
        s.iter().map(|i| self.cpus[i].id).collect()
    }

    /// Mask of every NUMA node (Volcano's default affinity).
    pub fn all_numa(&self) -> u64 {
        self.numa_nodes.iter().fold(0, |m, &k| m | (1 << k))
    }

    /// NUMA nodes of the CPUs of `s` as a mask.
    pub fn numa_of(&self, s: &CpuSet) -> u64 {
        s.iter().fold(0, |m, i| m | (1 << self.cpus[i].numa))
    }

    fn in_mask(&self, i: usize, mask: u64) -> bool {
        mask & (1 << self.cpus[i].numa) != 0
    }

    /// Volcano's cpumanager `generateCPUTopologyHints`: for every non-empty set of NUMA nodes
    /// whose `available` CPUs number at least `request`, a hint, preferred when it has the
    /// fewest NUMA nodes among the sets whose CPUs (all, not only available) could hold the
    /// request.
    pub fn cpu_hints(&self, available: &CpuSet, request: usize) -> Vec<Hint> {
        let mut min_size = self.numa_nodes.len() as u32;
        let mut hints = Vec::new();
        for mask in subsets(&self.numa_nodes) {
            let in_mask = (0..self.cpus.len()).filter(|&i| self.in_mask(i, mask)).count();
            if in_mask >= request && mask.count_ones() < min_size {
                min_size = mask.count_ones();
            }
            let matching = available.iter().filter(|&i| self.in_mask(i, mask)).count();
            if matching >= request {
                hints.push(Hint { affinity: Some(mask), preferred: false });
            }
        }
        for h in &mut hints {
            h.preferred = h.affinity.is_some_and(|m| m.count_ones() == min_size);
        }
        hints
    }

    /// Volcano's `takeByTopology` (`cpu_assignment.go`): `n` CPUs of `available`, whole
    /// sockets first, then whole cores, then single CPUs; `None` when there are not enough.
    pub fn take_by_topology(&self, available: &CpuSet, n: usize) -> Option<CpuSet> {
        let mut acc = Acc { topo: self, details: available.clone(), result: CpuSet::empty(self.cpus.len()), needed: n as i64 };
        if acc.satisfied() {
            return Some(acc.result);
        }
        if acc.needed > acc.details.len() as i64 {
            return None;
        }
        if acc.needs(self.cpus_per_socket) {
            for s in acc.free_sockets() {
                let cpus = acc.cpus_where(|c| c.socket == s);
                acc.take(&cpus);
                if acc.satisfied() {
                    return Some(acc.result);
                }
                if !acc.needs(self.cpus_per_socket) {
                    break;
                }
            }
        }
        if acc.needs(self.cpus_per_core) {
            for c in acc.free_cores() {
                let cpus = acc.cpus_where(|x| x.core == c);
                acc.take(&cpus);
                if acc.satisfied() {
                    return Some(acc.result);
                }
                if !acc.needs(self.cpus_per_core) {
                    break;
                }
            }
        }
        for i in acc.free_cpus() {
            if acc.needs(1) {
                let mut one = CpuSet::empty(self.cpus.len());
                one.add(i);
                acc.take(&one);
            }
            if acc.satisfied() {
                return Some(acc.result);
            }
        }
        None
    }

    /// Volcano's cpumanager `Allocate` for one container asking `request` CPUs under the
    /// merged hint `best`: the CPUs of `available` (less the reserved ones) on the hint's NUMA
    /// nodes first, by topology, then the rest from anywhere; empty when either step fails.
    pub fn allocate(&self, available: &CpuSet, request: usize, best: Hint) -> CpuSet {
        let mut avail = available.clone();
        avail.remove_all(&self.reserved);
        let mut result = CpuSet::empty(self.cpus.len());
        if let Some(mask) = best.affinity {
            let mut aligned = CpuSet::empty(self.cpus.len());
            avail.iter().filter(|&i| self.in_mask(i, mask)).for_each(|i| aligned.add(i));
            let take = request.min(aligned.len());
            match self.take_by_topology(&aligned, take) {
                Some(s) => result.union_with(&s),
                None => return CpuSet::empty(self.cpus.len()),
            }
        }
        let mut rest = avail;
        rest.remove_all(&result);
        match self.take_by_topology(&rest, request.saturating_sub(result.len())) {
            Some(s) => result.union_with(&s),
            None => return CpuSet::empty(self.cpus.len()),
        }
        result
    }
}

/// Every non-empty subset of `bits` as a mask, smallest first (Kubernetes
/// `bitmask.IterateBitMasks`).
fn subsets(bits: &[u32]) -> Vec<u64> {
    let mut out = Vec::new();
    fn rec(bits: &[u32], acc: u64, left: usize, out: &mut Vec<u64>) {
        if left == 0 {
            out.push(acc);
            return;
        }
        for i in 0..bits.len() {
            rec(&bits[i + 1..], acc | (1 << bits[i]), left - 1, out);
        }
    }
    for size in 1..=bits.len() {
        rec(bits, 0, size, &mut out);
    }
    out
}

/// `takeByTopology`'s accumulator.
struct Acc<'t> {
    topo: &'t Topology,
    /// CPUs still available.
    details: CpuSet,
    result: CpuSet,
    needed: i64,
}

impl Acc<'_> {
    fn needs(&self, n: usize) -> bool {
        self.needed >= n as i64
    }

    fn satisfied(&self) -> bool {
        self.needed < 1
    }

    fn take(&mut self, s: &CpuSet) {
        self.result.union_with(s);
        self.details.remove_all(s);
        self.needed -= s.len() as i64;
    }

    fn cpus_where(&self, f: impl Fn(&NumaCpu) -> bool) -> CpuSet {
        let mut s = CpuSet::empty(self.topo.cpus.len());
        self.details.iter().filter(|&i| f(&self.topo.cpus[i])).for_each(|i| s.add(i));
        s
    }

    /// Whether CPU id `id` is still available.
    fn id_available(&self, id: u32) -> bool {
        self.topo.cpus.binary_search_by_key(&id, |c| c.id).is_ok_and(|i| self.details.has(i))
    }

    fn distinct(&self, f: impl Fn(&NumaCpu) -> u32) -> Vec<u32> {
        let mut v: Vec<u32> = self.details.iter().map(|i| f(&self.topo.cpus[i])).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Volcano `freeSockets`: the sockets of the available CPUs whose id is also the id of an
    /// available CPU (`Sockets().Intersection(CPUs())`), ascending.
    fn free_sockets(&self) -> Vec<u32> {
        self.distinct(|c| c.socket).into_iter().filter(|&s| self.id_available(s)).collect()
    }

    /// Volcano `freeCores`: sockets by their number of such cores, then id; per socket the
    /// core ids of its available CPUs that are also available CPU ids, ascending.
    fn free_cores(&self) -> Vec<u32> {
        let cores_in = |s: u32| -> Vec<u32> {
            let mut v: Vec<u32> =
                self.details.iter().map(|i| self.topo.cpus[i]).filter(|c| c.socket == s).map(|c| c.core).collect();
            v.sort_unstable();
            v.dedup();
            v.retain(|&c| self.id_available(c));
            v
        };
        let mut sockets: Vec<(usize, u32)> = self.distinct(|c| c.socket).into_iter().map(|s| (cores_in(s).len(), s)).collect();
        sockets.sort_unstable();
        sockets.into_iter().flat_map(|(_, s)| cores_in(s)).collect()
    }

    /// Volcano `freeCPUs`: the available CPUs core by core, cores ordered by the CPUs already
    /// taken on their socket (more first), free CPUs of their socket, free CPUs of the core,
    /// socket id, core id.
    fn free_cpus(&self) -> Vec<usize> {
        let all = &self.topo.cpus;
        let socket_of_core = |core: u32| all.iter().find(|c| c.core == core).map_or(0, |c| c.socket);
        let mut keyed: Vec<(std::cmp::Reverse<usize>, usize, usize, u32, u32)> = self
            .distinct(|c| c.core)
            .into_iter()
            .map(|core| {
                let s = socket_of_core(core);
                let colo = self.result.iter().filter(|&i| all[i].socket == s).count();
                let socket_free = self.details.iter().filter(|&i| all[i].socket == s).count();
                let core_free = self.details.iter().filter(|&i| all[i].core == core).count();
                (std::cmp::Reverse(colo), socket_free, core_free, s, core)
            })
            .collect();
        keyed.sort_unstable();
        keyed.into_iter().flat_map(|k| self.details.iter().filter(move |&i| all[i].core == k.4).collect::<Vec<_>>()).collect()
    }
}

/// A node's topology manager policy (Volcano `policy.GetPolicy` over `batch.NumaPolicy`; any
/// other value is `none`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// `none`: every container admitted, no NUMA preference.
    None,
    /// `best-effort`: the best merged hint, always admitted.
    BestEffort,
    /// `restricted`: admitted when the best merged hint is preferred.
    Restricted,
    /// `single-numa-node`: only single-NUMA (or any-NUMA) preferred hints; admitted when one
    /// is left.
    SingleNumaNode,
}

impl Policy {
    /// Reads a topology manager policy name.
    pub fn parse(s: &str) -> Policy {
        match s {
            "best-effort" => Policy::BestEffort,
            "restricted" => Policy::Restricted,
            "single-numa-node" => Policy::SingleNumaNode,
            _ => Policy::None,
        }
    }

    /// Volcano `Policy.Predicate` over one hint provider's answer for one resource: `hints`
    /// is `None` when the provider has no preference (no whole-CPU request). Returns the best
    /// hint and whether the container is admitted.
    pub fn predicate(self, numa_nodes: u64, hints: Option<&[Hint]>) -> (Hint, bool) {
        if self == Policy::None {
            return (Hint { affinity: None, preferred: false }, true);
        }
        // filterProvidersHints: no preference is one preferred any-NUMA hint; no possible
        // affinity one non-preferred any-NUMA hint.
        let filtered: Vec<Hint> = match hints {
            None => vec![Hint { affinity: None, preferred: true }],
            Some([]) => vec![Hint { affinity: None, preferred: false }],
            Some(h) => h.to_vec(),
        };
        let filtered: Vec<Hint> = if self == Policy::SingleNumaNode {
            filtered.into_iter().filter(|h| h.preferred && h.affinity.is_none_or(|m| m.count_ones() == 1)).collect()
        } else {
            filtered
        };
        let best = merge(numa_nodes, &filtered);
        let admit = match self {
            Policy::BestEffort => true,
            _ => best.preferred,
        };
        (best, admit)
    }
}

/// Volcano `mergeFilteredHints` for one list of hints: the narrowest preferred hint (each
/// ANDed with every NUMA node), else the narrowest non-preferred one, else every NUMA node
/// not preferred. Narrower = fewer NUMA nodes, then the smaller mask.
fn merge(numa_nodes: u64, hints: &[Hint]) -> Hint {
    let mut best = Hint { affinity: Some(numa_nodes), preferred: false };
    for h in hints {
        let m = numa_nodes & h.affinity.unwrap_or(numa_nodes);
        if m == 0 {
            continue;
        }
        let merged = Hint { affinity: Some(m), preferred: h.preferred };
        if merged.preferred && !best.preferred {
            best = merged;
            continue;
        }
        if !merged.preferred && best.preferred {
            continue;
        }
        let b = best.affinity.unwrap_or(0);
        let narrower = if m.count_ones() == b.count_ones() { m < b } else { m.count_ones() < b.count_ones() };
        if narrower {
            best = merged;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two sockets = two NUMA nodes, `per` cores each, two threads per core; CPU ids as Linux
    /// numbers them (thread 0 of every core first).
    fn topo(per: u32, reserved_milli: i64) -> (NumatopologySpec, Topology) {
        let cores = per * 2;
        let mut cpus = Vec::new();
        for id in 0..cores * 2 {
            let core = id % cores;
            let socket = core / per;
            cpus.push(NumaCpu { id, numa: socket, socket, core });
        }
        let spec = NumatopologySpec {
            name: "n".into(),
            cpus,
            cpu_allocatable: Some((0..cores * 2).collect()),
            reserved_cpu_milli: reserved_milli,
            ..Default::default()
        };
        let t = Topology::new(&spec);
        (spec, t)
    }

    #[test]
    fn hints_prefer_the_fewest_numa_nodes_that_could_hold_the_request() {
        let (_, t) = topo(4, 0); // 16 CPUs, 8 per NUMA node
        let all = t.all();
        let h = t.cpu_hints(&all, 4);
        assert_eq!(h.len(), 3);
        assert_eq!(h.iter().filter(|h| h.preferred).map(|h| h.affinity.unwrap()).collect::<Vec<_>>(), [0b01, 0b10]);
        // 10 CPUs fit no single NUMA node: only {0,1} is possible, and it is preferred.
        let h = t.cpu_hints(&all, 10);
        assert_eq!(h, [Hint { affinity: Some(0b11), preferred: true }]);
    }

    #[test]
    fn policies_admit_as_volcano() {
        let (_, t) = topo(4, 0);
        let mut avail = t.all();
        // Leave 3 free CPUs on NUMA 0 and 8 on NUMA 1.
        avail.remove_all(&t.set_of(&[0, 1, 2, 3, 8]));
        let nn = t.all_numa();
        let h = t.cpu_hints(&avail, 4);
        let (best, ok) = Policy::SingleNumaNode.predicate(nn, Some(&h));
        assert!(ok);
        assert_eq!(best.affinity, Some(0b10));
        let h = t.cpu_hints(&avail, 9);
        assert!(!Policy::SingleNumaNode.predicate(nn, Some(&h)).1, "9 CPUs fit no NUMA node");
        assert!(Policy::Restricted.predicate(nn, Some(&h)).1, "{{0,1}} is the narrowest set that could hold 9: preferred");
        // 4 CPUs could fit one NUMA node, but only 3 are free on each: {0,1} is not preferred.
        let mut avail = t.all();
        avail.remove_all(&t.set_of(&[0, 1, 2, 3, 8, 4, 5, 6, 7, 12]));
        let h = t.cpu_hints(&avail, 4);
        assert_eq!(h, [Hint { affinity: Some(0b11), preferred: false }]);
        assert!(!Policy::Restricted.predicate(nn, Some(&h)).1);
        assert!(!Policy::SingleNumaNode.predicate(nn, Some(&h)).1);
        let (best, ok) = Policy::BestEffort.predicate(nn, Some(&h));
        assert!(ok && best.affinity == Some(0b11));
        assert!(Policy::None.predicate(nn, Some(&h)).1);
        // No whole-CPU request: no preference, admitted by every policy.
        assert!(Policy::SingleNumaNode.predicate(nn, None).1);
    }

    #[test]
    fn allocation_takes_the_hint_numa_node_and_whole_cores() {
        let (_, t) = topo(4, 0);
        let best = Hint { affinity: Some(0b10), preferred: true };
        let got = t.allocate(&t.all(), 4, best);
        assert_eq!(t.numa_of(&got), 0b10);
        assert_eq!(t.ids(&got), [4, 5, 12, 13], "two whole cores (4 and 5, threads 4/12 and 5/13)");
        assert!(t.allocate(&t.set_of(&[0, 1]), 4, best).is_empty(), "not enough CPUs: nothing");
    }

    #[test]
    fn reserved_cpus_are_taken_by_topology_and_never_given() {
        let (_, t) = topo(4, 1500); // 2 CPUs reserved: core 0's two threads
        assert_eq!(t.ids(&t.reserved), [0, 8]);
        let got = t.allocate(&t.all(), 8, Hint { affinity: Some(0b01), preferred: true });
        assert!(!got.has(0) && !got.has(8));
        assert_eq!(got.len(), 8);
        assert_eq!(t.numa_of(&got), 0b11, "6 left on NUMA 0, the rest from NUMA 1");
    }
}
