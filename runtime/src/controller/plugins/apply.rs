//! Carrying out the job plugins' hooks against the API server (Volcano's
//! `job_controller_plugins.go`): `OnJobAdd` creates each unmarked plugin's objects and marks
//! `status.controlledResources["plugin-<name>"]`; `OnJobDelete` deletes each marked plugin's
//! objects and removes the mark; `OnJobUpdate` creates or updates. ConfigMaps and Secrets are
//! created or, when they exist with other data, updated; Services and NetworkPolicies are
//! created when missing. Every call goes through the controller's rate limiter and is counted
//! in its API metrics. Each failure is returned (naming the job, plugin and object) so the
//! request is retried; the other plugins still run.

use super::{controlled_key, of_job, ObjectKey, ObjectKind, PluginObject};
use crate::controller::build::job_key;
use crate::controller::execute::{Context, ExecError};
use crate::controller::retry::Failure;
use crate::crd::{Job, JobStatus};
use k8s_openapi::api::core::v1::{ConfigMap, Secret, Service};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use kube::api::{Api, DeleteParams, PostParams};
use kube::Resource;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fmt::Debug;

fn status_code(e: &kube::Error) -> Option<u16> {
    match e {
        kube::Error::Api(s) => Some(s.code),
        _ => None,
    }
}

fn kind_name(kind: ObjectKind) -> &'static str {
    match kind {
        ObjectKind::ConfigMap => "ConfigMap",
        ObjectKind::Secret => "Secret",
        ObjectKind::Service => "Service",
        ObjectKind::NetworkPolicy => "NetworkPolicy",
    }
}

/// Creates `obj`; when it exists and `update` is set, replaces it if `differs(existing)`.
/// `calls` names the create, get and update calls in the API metrics.
async fn create_or_update<K>(
    ctx: &Context,
    ns: &str,
    obj: K,
    calls: [&'static str; 3],
    update: bool,
    differs: impl Fn(&K) -> bool,
) -> Result<(), Failure>
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope> + Clone + DeserializeOwned + Serialize + Debug,
    K::DynamicType: Default,
{
    let api: Api<K> = Api::namespaced(ctx.client.clone(), ns);
    let name = obj.meta().name.clone().unwrap_or_default();
    ctx.limiter.acquire().await;
    ctx.metrics.record_api(calls[0]);
    match api.create(&PostParams::default(), &obj).await {
        Ok(_) => return Ok(()),
        Err(e) if status_code(&e) == Some(409) => {}
        Err(e) => return Err(Failure::api("creating", &e)),
    }
    if !update {
        return Ok(());
    }
    ctx.limiter.acquire().await;
    ctx.metrics.record_api(calls[1]);
    let existing = api.get(&name).await.map_err(|e| Failure::api("reading the existing one", &e))?;
    if !differs(&existing) {
        return Ok(());
    }
    let mut new = obj;
    new.meta_mut().resource_version = existing.meta().resource_version.clone();
    ctx.limiter.acquire().await;
    ctx.metrics.record_api(calls[2]);
    api.replace(&name, &PostParams::default(), &new).await.map(|_| ()).map_err(|e| Failure::api("updating", &e))
}

/// Creates (or updates) one plugin object in `ns`.
async fn put(ctx: &Context, ns: &str, obj: PluginObject) -> Result<(), Failure> {
    match obj {
        PluginObject::ConfigMap(cm) => {
            let data = cm.data.clone();
            create_or_update(
                ctx,
                ns,
                cm,
                ["create_configmap", "get_configmap", "update_configmap"],
                true,
                move |old: &ConfigMap| old.data != data,
            )
            .await
        }
        PluginObject::Secret(s) => {
            let data = s.data.clone();
            create_or_update(ctx, ns, s, ["create_secret", "get_secret", "update_secret"], true, move |old: &Secret| {
                old.data != data
            })
            .await
        }
        PluginObject::Service(s) => create_or_update(ctx, ns, s, ["create_service", "", ""], false, |_: &Service| false).await,
        PluginObject::NetworkPolicy(n) => {
            create_or_update(ctx, ns, n, ["create_networkpolicy", "", ""], false, |_: &NetworkPolicy| false).await
        }
    }
}

fn describe(obj: &PluginObject) -> String {
    let (kind, name) = match obj {
        PluginObject::ConfigMap(o) => ("ConfigMap", o.metadata.name.clone()),
        PluginObject::Secret(o) => ("Secret", o.metadata.name.clone()),
        PluginObject::Service(o) => ("Service", o.metadata.name.clone()),
        PluginObject::NetworkPolicy(o) => ("NetworkPolicy", o.metadata.name.clone()),
    };
    format!("{kind} {}", name.unwrap_or_default())
}

async fn delete_one<K>(ctx: &Context, ns: &str, name: &str, call: &'static str) -> Result<(), Failure>
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope> + Clone + DeserializeOwned + Debug,
    K::DynamicType: Default,
{
    let api: Api<K> = Api::namespaced(ctx.client.clone(), ns);
    ctx.limiter.acquire().await;
    ctx.metrics.record_api(call);
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(()),
        Err(e) if status_code(&e) == Some(404) => Ok(()),
        Err(e) => Err(Failure::api("deleting", &e)),
    }
}

async fn delete(ctx: &Context, ns: &str, key: &ObjectKey) -> Result<(), Failure> {
    match key.kind {
        ObjectKind::ConfigMap => delete_one::<ConfigMap>(ctx, ns, &key.name, "delete_configmap").await,
        ObjectKind::Secret => delete_one::<Secret>(ctx, ns, &key.name, "delete_secret").await,
        ObjectKind::Service => delete_one::<Service>(ctx, ns, &key.name, "delete_service").await,
        ObjectKind::NetworkPolicy => delete_one::<NetworkPolicy>(ctx, ns, &key.name, "delete_networkpolicy").await,
    }
}

fn marked(status: &JobStatus, name: &str) -> bool {
    status.controlled_resources.get(&controlled_key(name)).is_some_and(|v| v == name)
}

/// `OnJobAdd` of every plugin of `job` not marked in `status`; marks those whose objects all
/// exist now. The objects are built off the async workers (the ssh plugin generates a key).
pub async fn on_job_add(ctx: &Context, job: &Job, status: &mut JobStatus) -> Vec<ExecError> {
    let pending: Vec<String> = of_job(job)
        .iter()
        .filter(|p| p.marks_controlled())
        .map(|p| p.name().to_string())
        .filter(|n| !marked(status, n))
        .collect();
    if pending.is_empty() {
        return Vec::new();
    }
    let owned = job.clone();
    let wanted = pending.clone();
    let built = tokio::task::spawn_blocking(move || {
        of_job(&owned)
            .into_iter()
            .filter(|p| wanted.iter().any(|w| w == p.name()))
            .map(|p| (p.name(), p.on_job_add(&owned)))
            .collect::<Vec<_>>()
    })
    .await;
    let key = job_key(job);
    let built = match built {
        Ok(b) => b,
        Err(e) => return vec![format!("Job {key}: job plugins {pending:?}: building their objects: {e}").into()],
    };
    let ns = job.metadata.namespace.clone().unwrap_or_default();
    let mut errors = Vec::new();
    for (name, objects) in built {
        let objects = match objects {
            Ok(o) => o,
            Err(e) => {
                errors.push(e.into());
                continue;
            }
        };
        let mut ok = true;
        for obj in objects {
            let what = describe(&obj);
            if let Err(e) = put(ctx, &ns, obj).await {
                errors.push(e.context(format_args!("Job {key}: plugin {name}: {what}")));
                ok = false;
            }
        }
        if ok {
            status.controlled_resources.insert(controlled_key(name), name.to_string());
        }
    }
    errors
}

/// `OnJobDelete` of every plugin of `job` marked in `status`; unmarks those whose objects are
/// all gone.
pub async fn on_job_delete(ctx: &Context, job: &Job, status: &mut JobStatus) -> Vec<ExecError> {
    let key = job_key(job);
    let ns = job.metadata.namespace.clone().unwrap_or_default();
    let mut errors = Vec::new();
    for p in of_job(job) {
        if !marked(status, p.name()) {
            continue;
        }
        let mut ok = true;
        for obj in p.on_job_delete(job) {
            if let Err(e) = delete(ctx, &ns, &obj).await {
                errors.push(e.context(format_args!("Job {key}: plugin {}: {} {}", p.name(), kind_name(obj.kind), obj.name)));
                ok = false;
            }
        }
        if ok {
            status.controlled_resources.remove(&controlled_key(p.name()));
        }
    }
    errors
}

/// `OnJobUpdate` of every plugin of `job`.
pub async fn on_job_update(ctx: &Context, job: &Job) -> Vec<ExecError> {
    let key = job_key(job);
    let ns = job.metadata.namespace.clone().unwrap_or_default();
    let mut errors = Vec::new();
    for p in of_job(job) {
        for obj in p.on_job_update(job) {
            let what = describe(&obj);
            if let Err(e) = put(ctx, &ns, obj).await {
                errors.push(e.context(format_args!("Job {key}: plugin {}: {what}", p.name())));
            }
        }
    }
    errors
}
