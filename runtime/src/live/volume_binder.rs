//! The volume binder's API part (kube-scheduler `BindPodVolumes`; Volcano's predicates
//! PreBind, volcano-behaviour.md §1.6): before a pod's Binding is sent, each static PV chosen
//! for one of its claims gets the claim as `spec.claimRef`, and each claim to provision gets
//! annotation `volume.kubernetes.io/selected-node`; then the claims are polled until the PV
//! controller has bound them (`spec.volumeName` and `pv.kubernetes.io/bind-completed`), at most
//! `timeout` (`volumebinding.bindTimeoutSeconds`). On failure or timeout what was written is
//! undone (a claimRef the PV controller has not yet completed is removed, the annotation is
//! removed) and the error returned, so the pod goes back to pending with its condition.

use basalt_core::model::{VolumeBinding, BIND_COMPLETED_ANNOTATION, SELECTED_NODE_ANNOTATION};
use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use kube::api::{Api, Patch, PatchParams};
use kube::Client;
use std::time::{Duration, Instant};

/// How often the claims are read while waiting for the PV controller.
const POLL: Duration = Duration::from_millis(200);

/// Writes `vb`'s volume bindings and waits until every claim is bound; `Err` names the claim
/// or volume and what failed, after undoing the writes.
pub async fn bind_volumes(client: &Client, vb: &VolumeBinding, timeout: Duration) -> Result<(), String> {
    let pvcs: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), &vb.namespace);
    let pvs: Api<PersistentVolume> = Api::all(client.clone());
    let r = write_and_wait(&pvcs, &pvs, vb, timeout).await;
    if r.is_err() {
        rollback(&pvcs, &pvs, vb).await;
    }
    r
}

async fn write_and_wait(
    pvcs: &Api<PersistentVolumeClaim>,
    pvs: &Api<PersistentVolume>,
    vb: &VolumeBinding,
    timeout: Duration,
) -> Result<(), String> {
    let pp = PatchParams::default();
    for (claim, pv) in &vb.bind {
        let c = pvcs.get(claim).await.map_err(|e| format!("persistentvolumeclaim {:?}: {e}", claim))?;
        let body = serde_json::json!({"spec": {"claimRef": {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "namespace": vb.namespace,
            "name": claim,
            "uid": c.metadata.uid,
            "resourceVersion": c.metadata.resource_version,
        }}});
        pvs.patch(pv, &pp, &Patch::Merge(&body))
            .await
            .map_err(|e| format!("binding PersistentVolume {pv:?} to claim {claim:?}: {e}"))?;
    }
    for claim in &vb.provision {
        let body = serde_json::json!({"metadata": {"annotations": {SELECTED_NODE_ANNOTATION: vb.node}}});
        pvcs.patch(claim, &pp, &Patch::Merge(&body))
            .await
            .map_err(|e| format!("annotating persistentvolumeclaim {claim:?} for its provisioner: {e}"))?;
    }
    let claims: Vec<&String> = vb.bind.iter().map(|(c, _)| c).chain(vb.provision.iter()).collect();
    let start = Instant::now();
    loop {
        let mut unbound = None;
        for claim in &claims {
            let c = pvcs.get(claim).await.map_err(|e| format!("persistentvolumeclaim {claim:?}: {e}"))?;
            let bound = c.spec.as_ref().and_then(|s| s.volume_name.as_deref()).is_some_and(|v| !v.is_empty())
                && c.metadata.annotations.as_ref().is_some_and(|a| a.contains_key(BIND_COMPLETED_ANNOTATION));
            if !bound {
                unbound = Some(*claim);
                break;
            }
        }
        let Some(claim) = unbound else { return Ok(()) };
        if start.elapsed() >= timeout {
            return Err(format!("persistentvolumeclaim {claim:?} was not bound within {}s", timeout.as_secs()));
        }
        tokio::time::sleep(POLL).await;
    }
}

/// kube-scheduler's `revertAssumedPVs`/`RevertAssumedPodVolumes` on the API: removes a claimRef
/// this binding wrote that the PV controller has not completed (the PV is not `Bound`), and the
/// selected-node annotation. Best effort: failures are logged.
async fn rollback(pvcs: &Api<PersistentVolumeClaim>, pvs: &Api<PersistentVolume>, vb: &VolumeBinding) {
    let pp = PatchParams::default();
    for (claim, pv) in &vb.bind {
        let Ok(v) = pvs.get(pv).await else { continue };
        let ours =
            v.spec.as_ref().and_then(|s| s.claim_ref.as_ref()).is_some_and(|r| {
                r.name.as_deref() == Some(claim.as_str()) && r.namespace.as_deref() == Some(vb.namespace.as_str())
            });
        let bound = v.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Bound");
        if ours && !bound {
            let body = serde_json::json!({"spec": {"claimRef": null}});
            if let Err(e) = pvs.patch(pv, &pp, &Patch::Merge(&body)).await {
                tracing::warn!(pv = %pv, "could not release the PersistentVolume after a failed volume binding: {e}");
            }
        }
    }
    for claim in &vb.provision {
        let body = serde_json::json!({"metadata": {"annotations": {SELECTED_NODE_ANNOTATION: null}}});
        if let Err(e) = pvcs.patch(claim, &pp, &Patch::Merge(&body)).await {
            tracing::warn!(claim = %claim, "could not remove the selected-node annotation after a failed volume binding: {e}");
        }
    }
}
