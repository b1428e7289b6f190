//! Namespace ResourceQuotas (`v1.ResourceQuota`) as the `resourcequota` plugin reads them
//! (volcano-behaviour.md §3 resourcequota).

use crate::resource::ResourceList;

/// A ResourceQuota: its hard limits and the usage the quota controller last recorded. Amounts
/// are in core units by resource name (`cpu` millicores, `memory` bytes, `pods` and `count/*`
/// … as the runtime converts them: see `basalt_core::resource`); names are kept as written
/// (`requests.cpu` stays `requests.cpu`), since Volcano compares names literally.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ResourceQuotaSpec {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `status.hard` (else `spec.hard` when the status is not written yet).
    pub hard: ResourceList,
    /// `status.used` (empty when not written yet).
    pub used: ResourceList,
}
