//! The record shape of formats 1 and 2 (`BSLTREC1`, `BSLTREC2`), read into today's
//! [`Record`]. Postcard is positional: a struct is its fields in order with nothing to say where
//! it ends, so a field added to a stored type changes the encoding of every record holding it.
//! Format 3 added four fields to the core's model (`NodeSpec::devices`, `PodSpec::vgpu`,
//! `PodSpec::volcano_gate_only`, `PodSpec::queue_allocation_gate`); the types here are the
//! shapes formats 1 and 2 wrote, serde's remote derives reading them straight into the core
//! types with those four fields at their defaults. Everything else a record holds has the same
//! encoding in all three formats ([`Delta::PodNumaAssumed`], also new in format 3, is absent
//! from older recordings).
//!
//! A field added to a stored type later needs a format 4 and a shape of format 3 beside this
//! one.

use super::format::{CycleRecord, Header, Record, TopologyRecord};
use super::named::{DecisionsDiff, GroupEvent, GroupStatus, MapDiff, ObjKey};
use basalt_core::cluster::Delta;
use basalt_core::model::*;
use basalt_core::rare::Rare;
use basalt_core::resource::ResourceList;
use serde::Deserialize;

/// [`NodeSpec`] as formats 1 and 2 stored it: without `devices`.
#[derive(Deserialize)]
#[serde(remote = "NodeSpec")]
struct NodeSpecV2 {
    name: String,
    labels: Labels,
    taints: Vec<Taint>,
    unschedulable: bool,
    allocatable: ResourceList,
    capacity: ResourceList,
    ready: bool,
    gpu_share: Option<GpuShareNode>,
    #[serde(skip)]
    devices: NodeDevices,
}

/// [`PodSpec`] as formats 1 and 2 stored it: without `vgpu`, `volcano_gate_only` and
/// `queue_allocation_gate`.
#[derive(Deserialize)]
#[serde(remote = "PodSpec")]
struct PodSpecV2 {
    namespace: String,
    name: String,
    uid: String,
    creation_ms: i64,
    start_ms: i64,
    cooldown_ms: Option<i64>,
    labels: Labels,
    group: Option<String>,
    role: String,
    queue_name: String,
    scheduler_name: String,
    node_name: String,
    phase: PodPhase,
    deleting: bool,
    priority: Option<i32>,
    priority_class_name: String,
    preemption_never: bool,
    resreq: ResourceList,
    nonzero_cpu_milli: i64,
    nonzero_memory_bytes: i64,
    node_selector: Labels,
    affinity: Rare<Affinity>,
    tolerations: Vec<Toleration>,
    host_ports: Vec<HostPort>,
    topology_spread: Vec<TopologySpreadConstraint>,
    scheduling_gated: bool,
    preemptable: bool,
    nominated_node_name: String,
    disruption_target: bool,
    images: Vec<String>,
    volume_claims: Vec<PodVolumeClaim>,
    resource_claims: Vec<String>,
    gpu: Rare<PodGpu>,
    #[serde(skip)]
    vgpu: Rare<PodVgpu>,
    #[serde(skip)]
    volcano_gate_only: bool,
    #[serde(skip)]
    queue_allocation_gate: bool,
}

/// [`Delta`] as formats 1 and 2 stored it: every variant up to [`Delta::PodNuma`], nodes and
/// pods in their old shape.
#[derive(Deserialize)]
#[serde(remote = "Delta")]
#[allow(clippy::large_enum_variant)]
enum DeltaV2 {
    Node(#[serde(with = "NodeSpecV2")] NodeSpec),
    NodeDeleted(String),
    Pod(#[serde(with = "PodSpecV2")] PodSpec),
    PodDeleted { namespace: String, name: String },
    PodGroup(PodGroupSpec),
    PodGroupDeleted { namespace: String, name: String },
    Queue(QueueSpec),
    QueueDeleted(String),
    PriorityClass(PriorityClassSpec),
    PriorityClassDeleted(String),
    PodDisruptionBudget(PodDisruptionBudgetSpec),
    PodDisruptionBudgetDeleted { namespace: String, name: String },
    ResourceQuota(ResourceQuotaSpec),
    ResourceQuotaDeleted { namespace: String, name: String },
    Rescheduled { at_ms: i64 },
    PersistentVolumeClaim(PersistentVolumeClaimSpec),
    PersistentVolumeClaimDeleted { namespace: String, name: String },
    PersistentVolume(PersistentVolumeSpec),
    PersistentVolumeDeleted(String),
    StorageClass(StorageClassSpec),
    StorageClassDeleted(String),
    CsiNode(CsiNodeSpec),
    CsiNodeDeleted(String),
    HyperNode(HyperNodeSpec),
    HyperNodeDeleted(String),
    NodeShard(NodeShardSpec),
    NodeShardDeleted(String),
    Numatopology(NumatopologySpec),
    NumatopologyDeleted(String),
    PodNuma { namespace: String, name: String, numa: PodNuma },
}

/// One delta of a format 1 or 2 record.
#[derive(Deserialize)]
struct OldDelta(#[serde(with = "DeltaV2")] Delta);

/// [`Record`] as formats 1 and 2 stored it.
#[derive(Deserialize)]
enum RecordV2 {
    Header(Header),
    Conf { conf_json: String },
    Checkpoint { deltas: Vec<OldDelta>, covers_next_cycle: bool },
    Cycle(Box<CycleRecordV2>),
    Topology(TopologyRecord),
}

/// [`CycleRecord`] as formats 1 and 2 stored it.
#[derive(Deserialize)]
struct CycleRecordV2 {
    cycle: u64,
    seed: u64,
    unix_ms: u64,
    deltas: Vec<OldDelta>,
    decisions: DecisionsDiffV2,
}

/// [`DecisionsDiff`] as formats 1 and 2 stored it: without the bind annotations, node locks,
/// gate removals and NUMA assignments format 3 added (read as none).
#[derive(Deserialize)]
struct DecisionsDiffV2 {
    binds: Vec<(ObjKey, String)>,
    evictions: Vec<(ObjKey, String)>,
    pipelined: Vec<(ObjKey, String)>,
    unschedulable: MapDiff<ObjKey, (String, String)>,
    pod_groups: MapDiff<ObjKey, GroupStatus>,
    queues: MapDiff<String, ResourceList>,
    skipped: MapDiff<ObjKey, String>,
    events: MapDiff<ObjKey, Vec<GroupEvent>>,
    volume_bindings: Vec<VolumeBinding>,
}

impl From<DecisionsDiffV2> for DecisionsDiff {
    fn from(d: DecisionsDiffV2) -> Self {
        DecisionsDiff {
            binds: d.binds,
            evictions: d.evictions,
            pipelined: d.pipelined,
            unschedulable: d.unschedulable,
            pod_groups: d.pod_groups,
            queues: d.queues,
            skipped: d.skipped,
            events: d.events,
            volume_bindings: d.volume_bindings,
            ..DecisionsDiff::default()
        }
    }
}

fn deltas(v: Vec<OldDelta>) -> Vec<Delta> {
    v.into_iter().map(|d| d.0).collect()
}

/// Decodes one frame of a format 2 segment (format 1 frames once the caller has appended
/// format 2's empty volume bindings). Errors: postcard's.
pub fn decode(bytes: &[u8]) -> Result<Record, postcard::Error> {
    Ok(match postcard::from_bytes::<RecordV2>(bytes)? {
        RecordV2::Header(h) => Record::Header(h),
        RecordV2::Conf { conf_json } => Record::Conf { conf_json },
        RecordV2::Checkpoint { deltas: d, covers_next_cycle } => Record::Checkpoint { deltas: deltas(d), covers_next_cycle },
        RecordV2::Cycle(c) => {
            let c = *c;
            Record::Cycle(Box::new(CycleRecord {
                cycle: c.cycle,
                seed: c.seed,
                unix_ms: c.unix_ms,
                deltas: deltas(c.deltas),
                decisions: c.decisions.into(),
            }))
        }
        RecordV2::Topology(t) => Record::Topology(t),
    })
}
