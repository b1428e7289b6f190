//! The structured fuzz input of the session drivers, decoded from bytes by `arbitrary`: small
//! indexes into fixed palettes (names, labels, taint keys) so that objects refer to each other
//! often, and amounts that range from zero through typical sizes to `i64::MAX`.

use arbitrary::{Arbitrary, Unstructured};

/// At most this many nodes (far below the parallel-scan threshold, so one run stays fast).
pub const MAX_NODES: usize = 10;
/// At most this many pods.
pub const MAX_PODS: usize = 40;
/// At most this many PodGroups.
pub const MAX_GROUPS: usize = 8;
/// At most this many Queue objects (names repeat: later ones replace earlier ones).
pub const MAX_QUEUES: usize = 4;

/// Resource names: the three fixed dimensions, then scalars.
pub const RESOURCES: &[&str] =
    &["cpu", "memory", "pods", "nvidia.com/gpu", "example.com/foo", "ephemeral-storage", "hugepages-2Mi"];
/// Namespaces.
pub const NAMESPACES: &[&str] = &["ns1", "ns2"];
/// Queue names; `""` means the default queue, `nosuch` is never created by the palette.
pub const QUEUES: &[&str] = &["default", "q1", "q2", "q3", "", "nosuch"];
/// PriorityClass names (`""` = none).
pub const CLASSES: &[&str] = &["", "high", "low", "mid"];
/// Task roles (`volcano.sh/task-spec`).
pub const ROLES: &[&str] = &["", "ps", "worker"];
/// Node label keys besides the hostname.
pub const LABEL_KEYS: &[&str] = &["zone", "group", "disk", "rank"];
/// Label values (numbers for `Gt`/`Lt`).
pub const LABEL_VALUES: &[&str] = &["a", "b", "c", "1", "5", "10", ""];
/// Taint keys.
pub const TAINT_KEYS: &[&str] = &["dedicated", "gpu", "node.kubernetes.io/unschedulable", "zone", ""];
/// Taint and toleration values.
pub const TAINT_VALUES: &[&str] = &["", "a", "b"];
/// Topology keys.
pub const TOPOLOGY_KEYS: &[&str] = &["kubernetes.io/hostname", "zone", "group", "missing"];
/// Pod `app` label values.
pub const APPS: &[&str] = &["web", "db", "batch"];
/// Host IPs of host ports.
pub const HOST_IPS: &[&str] = &["", "0.0.0.0", "10.0.0.1", "::"];
/// Protocols of host ports.
pub const PROTOCOLS: &[&str] = &["TCP", "UDP"];
/// Extreme amounts (`8Ei` does not fit an `i64`; `7Ei`, `i64::MAX` and friends do).
pub const HUGE: &[i64] = &[i64::MAX, i64::MAX - 1, i64::MAX / 2, i64::MAX / 3, 1 << 62, 7 << 60, 1 << 60, (1 << 53) + 1];

/// Picks `palette[i % len]`.
pub fn pick<T: Copy>(palette: &[T], i: u8) -> T {
    palette[i as usize % palette.len()]
}

/// A resource amount: `kind` chooses the range, `raw` the value in it.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub struct Amount {
    /// Range selector.
    pub kind: u8,
    /// Value.
    pub raw: u32,
}

impl Amount {
    /// The amount in core units, `unit` being one typical unit. All-zero input gives half a
    /// unit; kind 8 gives zero.
    pub fn value(self, unit: i64) -> i64 {
        let r = i64::from(self.raw);
        match self.kind % 16 {
            0..=7 => (1 + r % 8).saturating_mul(unit) / 2,
            8 => 0,
            9 | 10 => (r % 65).saturating_mul(unit),
            11 => r,
            12 => r.saturating_mul(unit),
            13 => HUGE[self.raw as usize % HUGE.len()],
            14 => i64::MAX - r % 3,
            _ => (r % 5).saturating_mul(unit),
        }
    }
}

/// One typical unit of a resource in core units.
pub fn unit_of(name: &str) -> i64 {
    match name {
        "memory" | "ephemeral-storage" => 1 << 30,
        "pods" => 10,
        "hugepages-2Mi" => 2 << 20,
        _ => 1000,
    }
}

/// A whole fuzz case. Decoded header first (seed, cycles, counts, conf), then that many objects,
/// so that even a short input describes a whole cluster: bytes past the end read as zeros, and
/// every all-zero object is a typical one (a Ready node, a Pending pod of the first PodGroup, an
/// Open queue named `default`).
#[derive(Debug)]
pub struct Input {
    /// Seed of the first cycle (cycle `i` uses `seed + i`).
    pub seed: u64,
    /// Cycles to run (1 to 3).
    pub cycles: u64,
    /// Scheduler flags.
    pub options: OptionsIn,
    /// The conf.
    pub conf: ConfIn,
    /// Queues.
    pub queues: Vec<QueueIn>,
    /// PriorityClasses.
    pub classes: Vec<ClassIn>,
    /// Nodes (`n0`, `n1`, …).
    pub nodes: Vec<NodeIn>,
    /// PodGroups (`pg0`, `pg1`, …).
    pub groups: Vec<GroupIn>,
    /// Pods (`p-0`, `p-1`, …).
    pub pods: Vec<PodIn>,
    /// Deletions applied after every object was added (dangling references).
    pub deletions: Vec<DeleteIn>,
    /// Allocate/pipeline operations for the Statement discard check: (task, node, pipeline).
    pub statement_ops: Vec<(u8, u8, bool)>,
}

fn many<'a, T: Arbitrary<'a>>(u: &mut Unstructured<'a>, n: usize) -> arbitrary::Result<Vec<T>> {
    (0..n).map(|_| u.arbitrary()).collect()
}

impl<'a> Arbitrary<'a> for Input {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let seed = u.arbitrary()?;
        let cycles = 1 + (u64::from(u.arbitrary::<u8>()?) + 1) % 3;
        let counts: [u8; 6] = u.arbitrary()?;
        let n = |i: usize, zero: usize, max: usize| (usize::from(counts[i]) + zero) % max;
        let options = u.arbitrary()?;
        let conf = u.arbitrary()?;
        let queues = many(u, 1 + n(0, 1, MAX_QUEUES))?;
        let classes = many(u, n(1, 0, 4))?;
        let nodes = many(u, 1 + n(2, 2, MAX_NODES))?;
        let groups = many(u, 1 + n(3, 1, MAX_GROUPS))?;
        let pods = many(u, 1 + n(4, 5, MAX_PODS))?;
        let deletions = many(u, n(5, 0, 8).saturating_sub(4))?;
        let statement_ops = many(u, 8)?;
        Ok(Input { seed, cycles, options, conf, queues, classes, nodes, groups, pods, deletions, statement_ops })
    }
}

/// Scheduler flags (`--percentage-nodes-to-find` and friends).
#[derive(Arbitrary, Debug)]
pub struct OptionsIn {
    /// `--percentage-nodes-to-find` (`% 101`) when `% 4 == 3`, else Basalt's default of 100.
    pub percentage: u8,
    /// `--minimum-feasible-nodes`.
    pub minimum_feasible: u8,
    /// `--minimum-percentage-nodes-to-find`.
    pub minimum_percentage: u8,
}

/// One plugin's presence, tier, enable flags and arguments.
#[derive(Arbitrary, Debug, Clone)]
pub struct PluginIn {
    /// Left out of the conf (unless the target's family needs it).
    pub absent: bool,
    /// Tier (0 or 1).
    pub tier: u8,
    /// Enable flags: only when `flags % 4 == 0`, each bit of `flag_bits` turns one off.
    pub flags: u8,
    /// Which flags are turned off.
    pub flag_bits: u16,
    /// Argument selectors (plugin-specific).
    pub args: [u8; 4],
}

/// The conf: actions and the nine plugins Basalt implements.
#[derive(Arbitrary, Debug, Clone)]
pub struct ConfIn {
    /// Action list selector.
    pub actions: u8,
    /// One entry per implemented plugin, in `common::conf::PLUGINS` order.
    pub plugins: [PluginIn; 9],
    /// `predicateErrorCacheEnable` of allocate and backfill (0: unset, 1: true, 2: false).
    pub cache: u8,
}

/// A Queue.
#[derive(Arbitrary, Debug)]
pub struct QueueIn {
    /// Name (first four of [`QUEUES`]).
    pub name: u8,
    /// `spec.weight`: `1 + |w| % 9`; 0 when `w % 8 == 6`; `w` itself when `w % 8` is 7 or -1.
    pub weight: i8,
    /// `spec.capability`.
    pub capability: Vec<(u8, Amount)>,
    /// `spec.guarantee.resource`.
    pub guarantee: Vec<(u8, Amount)>,
    /// `spec.deserved`.
    pub deserved: Vec<(u8, Amount)>,
    /// `spec.reclaimable`.
    pub reclaimable: bool,
    /// `spec.priority`.
    pub priority: i8,
    /// `status.state`: Closed, Closing, Unknown when `% 8` is 5, 6, 7; else Open.
    pub state: u8,
}

/// A PriorityClass.
#[derive(Arbitrary, Debug)]
pub struct ClassIn {
    /// Name (non-empty ones of [`CLASSES`]).
    pub name: u8,
    /// `value` selector: small mostly, any `i32` sometimes.
    pub value: i32,
    /// `globalDefault`.
    pub global_default: bool,
}

/// A node taint.
#[derive(Arbitrary, Debug)]
pub struct TaintIn {
    /// Key.
    pub key: u8,
    /// Value.
    pub value: u8,
    /// Effect: NoSchedule, PreferNoSchedule, NoExecute.
    pub effect: u8,
}

/// A node.
#[derive(Arbitrary, Debug)]
pub struct NodeIn {
    /// Allocatable cpu, in units of 8 cores.
    pub cpu: Amount,
    /// Allocatable memory, in units of 16 GiB.
    pub memory: Amount,
    /// Allocatable pods: 110 mostly; 0, 1, 2, 3, 5 or `i64::MAX` for `% 8` = 1..6.
    pub pods: u8,
    /// A missing dimension: cpu, memory or pods when `% 16` is 13, 14, 15.
    pub missing: u8,
    /// Allocatable scalars.
    pub scalars: Vec<(u8, Amount)>,
    /// Labels (key, value) besides `kubernetes.io/hostname`.
    pub labels: Vec<(u8, u8)>,
    /// Taints.
    pub taints: Vec<TaintIn>,
    /// `spec.unschedulable` when `% 4 == 3`.
    pub unschedulable: u8,
    /// Not Ready when `% 8 == 7`.
    pub not_ready: u8,
}

/// A PodGroup.
#[derive(Arbitrary, Debug)]
pub struct GroupIn {
    /// Namespace.
    pub ns: u8,
    /// `spec.minMember`: `1 + |m| % 5`; 0 when `m % 16 == 14`; `m` itself when `m % 16 == 15`.
    pub min_member: i8,
    /// `spec.minTaskMember`: (role, minimum).
    pub min_task: Vec<(u8, i8)>,
    /// `spec.queue`.
    pub queue: u8,
    /// `spec.priorityClassName`.
    pub class: u8,
    /// `spec.minResources` (None: unset).
    pub min_resources: Option<Vec<(u8, Amount)>>,
    /// `status.phase`.
    pub phase: u8,
    /// Creation time.
    pub created: u8,
    /// `volcano.sh/preemptable`.
    pub preemptable: bool,
}

/// A label selector requirement.
#[derive(Arbitrary, Debug)]
pub struct ReqIn {
    /// Key (node label keys, `kubernetes.io/hostname`, or `app` for pod selectors).
    pub key: u8,
    /// Operator: In, NotIn, Exists, DoesNotExist, Gt, Lt.
    pub op: u8,
    /// Values.
    pub values: Vec<u8>,
}

/// A pod affinity term.
#[derive(Arbitrary, Debug)]
pub struct PodTermIn {
    /// `matchLabels: {app: …}` (None: no selector at all).
    pub app: Option<u8>,
    /// Extra `matchExpressions` on pod labels.
    pub exprs: Vec<ReqIn>,
    /// `namespaces`.
    pub namespaces: Vec<u8>,
    /// `namespaceSelector`: 0/1 none, 2 empty (all), 3 non-empty.
    pub ns_selector: u8,
    /// `topologyKey`.
    pub topology: u8,
    /// Weight of a preferred term.
    pub weight: u8,
}

/// `spec.affinity`.
#[derive(Arbitrary, Debug)]
pub struct AffinityIn {
    /// Required node affinity terms (None: unset).
    pub node_required: Option<Vec<Vec<ReqIn>>>,
    /// Preferred node affinity: (weight, requirements).
    pub node_preferred: Vec<(u8, Vec<ReqIn>)>,
    /// Required pod affinity.
    pub pod_required: Vec<PodTermIn>,
    /// Preferred pod affinity.
    pub pod_preferred: Vec<PodTermIn>,
    /// Required pod anti-affinity.
    pub anti_required: Vec<PodTermIn>,
    /// Preferred pod anti-affinity.
    pub anti_preferred: Vec<PodTermIn>,
}

/// A topology spread constraint.
#[derive(Arbitrary, Debug)]
pub struct SpreadIn {
    /// `maxSkew` selector (≥ 1).
    pub max_skew: u8,
    /// `topologyKey`.
    pub topology: u8,
    /// DoNotSchedule (else ScheduleAnyway).
    pub hard: bool,
    /// Selector on `app` (None: no selector).
    pub app: Option<u8>,
    /// `minDomains` selector.
    pub min_domains: u8,
    /// `nodeAffinityPolicy: Ignore`.
    pub ignore_node_affinity: bool,
    /// `nodeTaintsPolicy: Honor`.
    pub honor_node_taints: bool,
    /// `matchLabelKeys` (indexes into `app`, `tier`).
    pub match_label_keys: Vec<u8>,
}

/// A toleration.
#[derive(Arbitrary, Debug)]
pub struct TolIn {
    /// Key (empty matches every key with Exists).
    pub key: u8,
    /// Exists (else Equal).
    pub exists: bool,
    /// Value.
    pub value: u8,
    /// Effect: 0 any, then NoSchedule, PreferNoSchedule, NoExecute.
    pub effect: u8,
}

/// A pod.
#[derive(Arbitrary, Debug)]
pub struct PodIn {
    /// Namespace, used when the pod has no group.
    pub ns: u8,
    /// Group: `% (groups + 2)` indexes the groups; `groups` means none, `groups + 1` a PodGroup
    /// that does not exist.
    pub group: u8,
    /// Role.
    pub role: u8,
    /// cpu request.
    pub cpu: Amount,
    /// memory request.
    pub memory: Amount,
    /// Scalar requests.
    pub scalars: Vec<(u8, Amount)>,
    /// Extra init-container request on top of the request (cpu, memory).
    pub init_extra: Option<(Amount, Amount)>,
    /// Node: none unless `% 4 == 3`; then `/ 4 % (nodes + 1)` indexes the nodes, `nodes` naming a
    /// node that does not exist.
    pub node: u8,
    /// Phase: Pending (0–3), Running, Succeeded, Failed, Unknown.
    pub phase: u8,
    /// `deletionTimestamp` set when `% 6 == 5`.
    pub deleting: u8,
    /// `spec.priority` (None: from the PriorityClass or Volcano's default).
    pub priority: Option<i32>,
    /// `spec.priorityClassName`.
    pub class: u8,
    /// `spec.nodeSelector`.
    pub selector: Vec<(u8, u8)>,
    /// Tolerations.
    pub tolerations: Vec<TolIn>,
    /// Affinity (None: unset).
    pub affinity: Option<Box<AffinityIn>>,
    /// Host ports: (ip, protocol, port).
    pub ports: Vec<(u8, u8, u8)>,
    /// Topology spread constraints.
    pub spread: Vec<SpreadIn>,
    /// `schedulingGates` non-empty when `% 10 == 9`.
    pub gated: u8,
    /// `app` label.
    pub app: u8,
    /// Creation time.
    pub created: u8,
    /// `preemptionPolicy: Never`.
    pub preemption_never: bool,
}

/// A deletion: `kind` 0 node, 1 pod, 2 PodGroup, 3 Queue, 4 PriorityClass; `index` into them.
#[derive(Arbitrary, Debug)]
pub struct DeleteIn {
    /// Kind of object.
    pub kind: u8,
    /// Which one.
    pub index: u8,
}
