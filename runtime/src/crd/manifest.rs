//! The CRD manifests Basalt generates from its types and checks in under `deploy/crds/`:
//! [`generated`] renders them; a test fails when the checked-in files drift from the types
//! (rerun it with `BASALT_WRITE_CRDS=1` to rewrite them).
//!
//! Only the CRDs whose schema is derived from Rust types are generated (Job, CronJob, Command,
//! HyperNode, NodeShard, Numatopology); the PodGroup and Queue manifests are written by hand with comments and kept in
//! step by their round-trip tests.

use super::{command_crd, CronJob, Job};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;

/// The Job CRD as installed: `Job::crd()` with `spec` and `status` keeping fields the schema does
/// not list, so Jobs written by a newer Volcano are not pruned when this CRD replaces Volcano's.
/// No `default` hints and no list-map markers: kube-apiserver 1.20 rejects Volcano's own
/// (kubernetes-api.md §9).
pub fn job_crd() -> CustomResourceDefinition {
    preserving_unknown(without_defaults(Job::crd()), &[&["spec"], &["status"]])
}

/// The CronJob CRD as installed: `CronJob::crd()` without schema defaults, keeping fields the
/// schema does not list in `spec`, `spec.jobTemplate`, its Job `spec`, and `status` (a CronJob
/// written by a newer Volcano keeps them when this CRD replaces Volcano's).
pub fn cron_job_crd() -> CustomResourceDefinition {
    let paths: &[&[&str]] = &[&["spec"], &["spec", "jobTemplate"], &["spec", "jobTemplate", "spec"], &["status"]];
    preserving_unknown(without_defaults(CronJob::crd()), paths)
}

/// `crd` with `x-kubernetes-preserve-unknown-fields: true` on the schema of each property path
/// (from the root object: `["spec", "jobTemplate"]` is `.spec.jobTemplate`).
fn preserving_unknown(mut crd: CustomResourceDefinition, paths: &[&[&str]]) -> CustomResourceDefinition {
    for v in &mut crd.spec.versions {
        let Some(root) = v.schema.as_mut().and_then(|s| s.open_api_v3_schema.as_mut()) else { continue };
        for path in paths {
            let mut at = Some(&mut *root);
            for key in *path {
                at = at.and_then(|p| p.properties.as_mut()).and_then(|props| props.get_mut(*key));
            }
            if let Some(p) = at {
                p.x_kubernetes_preserve_unknown_fields = Some(true);
            }
        }
    }
    crd
}

/// `crd` with every schema `default` removed (serde defaults show up as schema defaults; the
/// controller applies Volcano's defaults itself, and 1.20 rejects some).
fn without_defaults(crd: CustomResourceDefinition) -> CustomResourceDefinition {
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                m.remove("default");
                m.values_mut().for_each(strip);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let Ok(mut v) = serde_json::to_value(&crd) else { return crd };
    if let Some(schema) = v.pointer_mut("/spec/versions") {
        strip(schema);
    }
    serde_json::from_value(v).unwrap_or(crd)
}

const HEADER_JOB: &str = "\
# Volcano Job (vcjob): tasks of pod templates run as one gang-scheduled batch job.
# Same group, version, kind, plural and scope as Volcano's CRD (volcano-behaviour.md §4), so
# existing vcjob manifests apply unchanged; `basalt controller` turns a Job into its PodGroup
# and pods. `spec` and `status` keep fields this schema does not list.
#
# GENERATED from runtime/src/crd/job.rs by runtime/src/crd/manifest.rs: do not edit; run
#   BASALT_WRITE_CRDS=1 cargo test --release -p basalt-runtime --lib crd::manifest
";

const HEADER_HYPERNODE: &str = "\
# Volcano HyperNode (topology.volcano.sh/v1alpha1, cluster-scoped): one network domain (leaf
# switch, spine, NVLink domain) of tier `tier`, whose members are nodes or lower-tier
# HyperNodes; a PodGroup's networkTopology refers to them. `basalt simulate` reads them.
#
# GENERATED from runtime/src/crd/hypernode.rs by runtime/src/crd/manifest.rs: do not edit; run
#   BASALT_WRITE_CRDS=1 cargo test --release -p basalt-runtime --lib crd::manifest
";

const HEADER_NODESHARD: &str = "\
# Volcano NodeShard (shard.volcano.sh/v1alpha1, cluster-scoped): the nodes one scheduler of a
# sharded cluster uses. The sharding controller (`basalt controller --controllers=*` or one
# naming sharding-controller, or Volcano's) or an operator writes spec.nodesDesired;
# `basalt scheduler --scheduler-sharding-mode hard|soft --scheduler-sharding-name <name>` reads
# the NodeShard <name> and writes its status.
#
# GENERATED from runtime/src/crd/nodeshard.rs by runtime/src/crd/manifest.rs: do not edit; run
#   BASALT_WRITE_CRDS=1 cargo test --release -p basalt-runtime --lib crd::manifest
";

const HEADER_NUMATOPOLOGY: &str = "\
# Volcano Numatopology (nodeinfo.volcano.sh/v1alpha1, cluster-scoped, one per node, named after
# it): the kubelet's CPU and topology manager policies, the node's CPUs by NUMA node, socket and
# core, and the CPUs free for exclusive use. Volcano's resource exporter writes them; the
# scheduler's numa-aware plugin reads them.
#
# GENERATED from runtime/src/crd/numatopology.rs by runtime/src/crd/manifest.rs: do not edit; run
#   BASALT_WRITE_CRDS=1 cargo test --release -p basalt-runtime --lib crd::manifest
";

const HEADER_CRONJOB: &str = "\
# Volcano CronJob (batch.volcano.sh/v1alpha1): a Volcano Job made from spec.jobTemplate on a cron
# schedule. Same group, version, kind, plural and scope as Volcano's CRD, so existing manifests
# apply unchanged; `basalt webhook-manager` validates them (/cronjobs/validate). `spec`,
# `spec.jobTemplate`, its Job `spec` and `status` keep fields this schema does not list.
#
# GENERATED from runtime/src/crd/cronjob.rs by runtime/src/crd/manifest.rs: do not edit; run
#   BASALT_WRITE_CRDS=1 cargo test --release -p basalt-runtime --lib crd::manifest
";

const HEADER_COMMAND: &str = "\
# Volcano Command (bus.volcano.sh/v1alpha1): a one-shot request to a controller (AbortJob,
# ResumeJob, OpenQueue, CloseQueue, ...), as `vcctl job suspend/resume` creates them.
#
# GENERATED from runtime/src/crd/command.rs by runtime/src/crd/manifest.rs: do not edit; run
#   BASALT_WRITE_CRDS=1 cargo test --release -p basalt-runtime --lib crd::manifest
";

/// `(file name under deploy/crds/, YAML text)` of every generated CRD.
///
/// Errors: a CRD that does not serialize (a bug), named.
pub fn generated() -> Result<Vec<(&'static str, String)>, String> {
    let render = |header: &str, crd: &CustomResourceDefinition| -> Result<String, String> {
        let name = crd.metadata.name.clone().unwrap_or_default();
        let yaml = serde_yaml::to_string(crd).map_err(|e| format!("CRD {name}: {e}"))?;
        Ok(format!("{header}{yaml}"))
    };
    Ok(vec![
        ("batch.volcano.sh_jobs.yaml", render(HEADER_JOB, &job_crd())?),
        ("batch.volcano.sh_cronjobs.yaml", render(HEADER_CRONJOB, &cron_job_crd())?),
        ("bus.volcano.sh_commands.yaml", render(HEADER_COMMAND, &command_crd())?),
        ("topology.volcano.sh_hypernodes.yaml", render(HEADER_HYPERNODE, &super::hyper_node_crd())?),
        ("shard.volcano.sh_nodeshards.yaml", render(HEADER_NODESHARD, &super::node_shard_crd())?),
        ("nodeinfo.volcano.sh_numatopologies.yaml", render(HEADER_NUMATOPOLOGY, &super::numatopology_crd())?),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn checked_in_crds_match_the_types() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/crds");
        let write = std::env::var("BASALT_WRITE_CRDS").as_deref() == Ok("1");
        for (file, text) in generated().unwrap() {
            let path = dir.join(file);
            if write {
                std::fs::write(&path, &text).unwrap();
                continue;
            }
            let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                on_disk == text,
                "{} drifted from the Rust types; regenerate with BASALT_WRITE_CRDS=1 cargo test --release -p basalt-runtime --lib crd::manifest",
                path.display()
            );
        }
    }

    #[test]
    fn job_schema_has_no_hints_kube_1_20_rejects() {
        let text = &generated().unwrap()[0].1;
        assert!(!text.contains("x-kubernetes-list-type"), "list-map markers");
        assert!(!text.contains("\n                default:") && !text.contains(" default: "), "schema defaults");
        assert!(text.contains("x-kubernetes-preserve-unknown-fields: true"));
    }
}
