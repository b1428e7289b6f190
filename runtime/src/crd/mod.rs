//! Volcano's custom resources as typed `kube` objects: `scheduling.volcano.sh/v1beta1`
//! [`PodGroup`] (namespaced, short name `pg`) and [`Queue`] (cluster-scoped, short name `q`,
//! status subresource), `batch.volcano.sh/v1alpha1` [`Job`] (vcjob) and
//! `batch.volcano.sh/v1alpha1` [`CronJob`], `bus.volcano.sh/v1alpha1` [`Command`], `topology.volcano.sh/v1alpha1` [`HyperNode`],
//! `shard.volcano.sh/v1alpha1` [`NodeShard`], `nodeinfo.volcano.sh/v1alpha1` [`Numatopology`].
//!
//! Field names are Volcano's exactly (camelCase on the wire); every field is optional so
//! hand-written YAML parses, and defaults are applied by [`crate::convert`], not here. Parts
//! the scheduler does not read yet (`networkTopology`, `subGroupPolicy`, queue `affinity`) are
//! kept as opaque JSON so nothing is lost on a read-modify-write.

mod command;
mod cronjob;
mod hypernode;
mod job;
pub mod manifest;
mod nodeshard;
mod numatopology;
mod podgroup;
mod queue;
mod schema;

pub use command::{command_crd, Command, CommandSpec};
pub use cronjob::{CronJob, CronJobSpec, CronJobStatus, JobTemplateSpec};
pub use job::{DependsOn, Job, JobCondition, JobSpec, JobState, JobStatus, LifecyclePolicy, TaskSpec, TaskState, VolumeSpec};

pub use hypernode::{hyper_node_crd, HyperNode, HyperNodeSpec, HyperNodeStatus, MemberSpec};
pub use nodeshard::{node_shard_crd, NodeShard, NodeShardSpec, NodeShardStatus};
pub use numatopology::{numatopology_crd, CpuInfo, NumatopoSpec, Numatopology, PodAllocation, ResourceInfo};
pub use podgroup::{pod_group_crd, PodGroup, PodGroupCondition, PodGroupSpec, PodGroupStatus};
pub use queue::{ExtendCluster, Guarantee, Queue, QueueSpec, QueueStatus, Reservation};

/// The API group of Volcano's scheduling CRDs.
pub const GROUP: &str = "scheduling.volcano.sh";
/// The served version Basalt reads and writes.
pub const VERSION: &str = "v1beta1";
/// `apiVersion` of PodGroup and Queue objects.
pub const API_VERSION: &str = "scheduling.volcano.sh/v1beta1";
