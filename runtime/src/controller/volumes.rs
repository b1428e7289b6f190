//! A Job's `spec.volumes` (Volcano's `createJobIOIfNotExist`, run by `initiateJob` after the
//! plugins' `OnJobAdd` and before the PodGroup, volcano-behaviour.md §5.1):
//! * an entry without `volumeClaimName` gets a fresh name `<job>-pvc-<12 of [0-9a-z]>` (one no
//!   claim in the namespace has), written back into the Job's spec; when it has a
//!   `volumeClaim`, that PersistentVolumeClaim is created, owned by the Job (so the garbage
//!   collector deletes it with the Job, never before);
//! * an entry with `volumeClaimName` needs that claim to exist: until it does, the job stays
//!   `Pending` with no PodGroup and no pods and a `PVCError` Warning Event, as in Volcano;
//! * each claim is recorded in `status.controlledResources["volume-pvc-<name>"] = <name>`.
//!
//! Every pod of the job mounts each claim at its `mountPath` (`build::pod`). A `volumeClaim`
//! that is not a PersistentVolumeClaimSpec is an error naming the Job and the field.

use super::build::{job_key, owner_reference};
use super::execute::Context;
use super::retry::Failure;
use crate::crd::{Job, JobStatus};
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, PersistentVolumeClaimSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, PostParams};

/// Volcano's Warning Event reason for a claim that cannot be made or found.
pub const PVC_ERROR: &str = "PVCError";

/// The `controlledResources` key of claim `name`.
pub fn controlled_key(name: &str) -> String {
    format!("volume-pvc-{name}")
}

/// `<job>-pvc-<suffix>`, the suffix 12 characters of `[0-9a-z]` drawn from `random` (Volcano's
/// `GenPVCName`).
pub fn claim_name(job: &str, random: [u8; 12]) -> String {
    const ALPHABET: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let suffix: String = random.iter().map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char).collect();
    format!("{job}-pvc-{suffix}")
}

/// The claim `name` of `job` made from volume `index`'s `volumeClaim`.
///
/// Errors: the `volumeClaim` is not a PersistentVolumeClaimSpec (the message names the Job and
/// `spec.volumes[index].volumeClaim`).
pub fn claim(job: &Job, index: usize, name: &str, spec: &serde_json::Value) -> Result<PersistentVolumeClaim, String> {
    let spec: PersistentVolumeClaimSpec = serde_json::from_value(spec.clone())
        .map_err(|e| format!("Job {}: spec.volumes[{index}].volumeClaim: not a PersistentVolumeClaimSpec: {e}", job_key(job)))?;
    Ok(PersistentVolumeClaim {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: job.metadata.namespace.clone(),
            owner_references: Some(vec![owner_reference(job)]),
            ..Default::default()
        },
        spec: Some(spec),
        status: None,
    })
}

fn random_bytes() -> Result<[u8; 12], String> {
    let mut b = [0u8; 12];
    getrandom::fill(&mut b).map_err(|e| format!("the random source failed: {e}"))?;
    Ok(b)
}

/// Makes sure `job`'s claims exist, names the unnamed ones and records them in `status`.
/// Returns the Job as the server has it after its spec got claim names (`None` when no name
/// was added).
///
/// Errors (the job stays pending and the request is retried, after the server's `Retry-After`
/// when it named one): a claim named by `volumeClaimName` does not exist; the API refused a
/// read, a create or the Job's update.
pub async fn ensure(ctx: &Context, job: &Job, status: &mut JobStatus) -> Result<Option<Job>, Failure> {
    if job.spec.volumes.is_empty() {
        return Ok(None);
    }
    let key = job_key(job);
    let ns = job.metadata.namespace.clone().unwrap_or_default();
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(ctx.client.clone(), &ns);
    let jname = job.metadata.name.clone().unwrap_or_default();
    let mut named = job.clone();
    let mut renamed = false;
    for (i, v) in job.spec.volumes.iter().enumerate() {
        let given = v.volume_claim_name.clone().filter(|n| !n.is_empty());
        let name = match given {
            Some(name) => {
                if !exists(ctx, &claims, &name)
                    .await
                    .map_err(|e| Failure::api(format_args!("Job {key}: reading PVC {name}"), &e))?
                {
                    return Err(format!(
                        "pvc {name} is not found, the job will be in the Pending state until the PVC is created"
                    )
                    .into());
                }
                name
            }
            None => {
                let name = loop {
                    let candidate = claim_name(&jname, random_bytes()?);
                    if !exists(ctx, &claims, &candidate)
                        .await
                        .map_err(|e| Failure::api(format_args!("Job {key}: reading PVC {candidate}"), &e))?
                    {
                        break candidate;
                    }
                };
                named.spec.volumes[i].volume_claim_name = Some(name.clone());
                renamed = true;
                if let Some(spec) = &v.volume_claim {
                    let pvc = claim(job, i, &name, spec)?;
                    ctx.limiter.acquire().await;
                    ctx.metrics.record_api("create_pvc");
                    claims
                        .create(&PostParams::default(), &pvc)
                        .await
                        .map_err(|e| Failure::api(format_args!("Job {key}: creating PVC {name}"), &e))?;
                }
                name
            }
        };
        status.controlled_resources.insert(controlled_key(&name), name);
    }
    if !renamed {
        return Ok(None);
    }
    let jobs: Api<Job> = Api::namespaced(ctx.client.clone(), &ns);
    ctx.limiter.acquire().await;
    ctx.metrics.record_api("update_job");
    let updated = jobs
        .replace(&jname, &PostParams::default(), &named)
        .await
        .map_err(|e| Failure::api(format_args!("Job {key}: writing the claim names into spec.volumes"), &e))?;
    Ok(Some(updated))
}

async fn exists(ctx: &Context, claims: &Api<PersistentVolumeClaim>, name: &str) -> Result<bool, kube::Error> {
    ctx.limiter.acquire().await;
    ctx.metrics.record_api("get_pvc");
    Ok(claims.get_opt(name).await?.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::plugins::tests::job;

    #[test]
    fn names_are_volcanos_shape() {
        let n = claim_name("train", [0, 1, 35, 36, 255, 10, 11, 12, 13, 14, 15, 16]);
        assert_eq!(n, "train-pvc-01z03abcdefg");
        assert_eq!(n.len(), "train-pvc-".len() + 12);
        assert!(n["train-pvc-".len()..].bytes().all(|b| b.is_ascii_digit() || b.is_ascii_lowercase()));
        assert_eq!(controlled_key("x"), "volume-pvc-x");
    }

    #[test]
    fn claim_is_owned_by_the_job_and_bad_specs_are_named() {
        let j = job(&[("worker", 1)], &[]);
        let spec = serde_json::json!({
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}},
            "storageClassName": "fast"
        });
        let c = claim(&j, 0, "tj-pvc-abc", &spec).unwrap();
        assert_eq!(c.metadata.name.as_deref(), Some("tj-pvc-abc"));
        assert_eq!(c.metadata.namespace.as_deref(), Some("ns"));
        let owner = &c.metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!((owner.kind.as_str(), owner.name.as_str(), owner.controller), ("Job", "tj", Some(true)));
        assert_eq!(c.spec.unwrap().storage_class_name.as_deref(), Some("fast"));
        let err = claim(&j, 2, "x", &serde_json::json!({"accessModes": "ReadWriteOnce"})).unwrap_err();
        assert!(err.starts_with("Job ns/tj: spec.volumes[2].volumeClaim: not a PersistentVolumeClaimSpec"), "{err}");
    }
}
