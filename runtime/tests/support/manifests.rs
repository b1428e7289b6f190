//! Applying `deploy/`'s manifests to the test server: Volcano's CRDs and the scheduler's RBAC.

use super::Result;
use basalt_runtime::crd::Queue;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::PostParams;
use kube::{Api, Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The repository's `deploy/` folder.
pub fn deploy_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy")
}

/// Creates (or replaces, when present) every CRD in `deploy/crds/*.yaml` (its
/// `kustomization.yaml` aside) and waits until each
/// is `Established` (served). They load into v1.20 unchanged. Idempotent, so tests sharing a
/// server may all call it. Errors: unreadable/invalid YAML (file named), an API error, or a CRD
/// not established within 30 s.
pub async fn install_volcano_crds(client: &Client) -> Result<()> {
    let dir = deploy_dir().join("crds");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .filter(|p| p.file_stem().is_some_and(|s| s != "kustomization"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(format!("no CRD YAML files in {}", dir.display()).into());
    }
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let mut names = Vec::new();
    for file in &files {
        for doc in read_documents(file)? {
            let crd: CustomResourceDefinition =
                serde_json::from_value(doc).map_err(|e| format!("{}: not a CustomResourceDefinition: {e}", file.display()))?;
            let name = crd.name_any();
            create_or_replace(&api, &crd).await.map_err(|e| format!("{}: CRD {name}: {e}", file.display()))?;
            names.push(name);
        }
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    for name in names {
        loop {
            let crd = api.get(&name).await?;
            let established = crd
                .status
                .as_ref()
                .and_then(|s| s.conditions.as_ref())
                .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Established" && c.status == "True"));
            if established {
                break;
            }
            if tokio::time::Instant::now() > deadline {
                return Err(format!("CRD {name} not Established after 30 s: {:?}", crd.status).into());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    Ok(())
}

/// Applies `deploy/base/basalt.yaml`'s Namespace `volcano-system` and ServiceAccount and
/// `deploy/fresh/rbac.yaml`'s ClusterRole and ClusterRoleBinding: afterwards
/// [`super::TestApiserver::scheduler_kubeconfig`]'s identity has exactly the scheduler's role.
/// Idempotent. Errors: as [`apply_manifest`].
pub async fn apply_scheduler_rbac(client: &Client) -> Result<Vec<String>> {
    let mut applied = apply_manifest(client, &deploy_dir().join("base/basalt.yaml"), &["Namespace", "ServiceAccount"]).await?;
    applied.extend(apply_manifest(client, &deploy_dir().join("fresh/rbac.yaml"), &["ClusterRole", "ClusterRoleBinding"]).await?);
    Ok(applied)
}

/// Creates or replaces the documents of `path` whose `kind` is in `kinds` (others are skipped)
/// and returns `Kind/name` (or `Kind/namespace/name`) of each applied one, in file order.
/// Supported kinds: Namespace, ServiceAccount, ConfigMap, ClusterRole, ClusterRoleBinding, Role,
/// RoleBinding, PriorityClass, Queue. Errors: unreadable/invalid YAML, a listed kind that is not
/// supported, an API error (document named).
pub async fn apply_manifest(client: &Client, path: &Path, kinds: &[&str]) -> Result<Vec<String>> {
    let mut applied = Vec::new();
    for doc in read_documents(path)? {
        let kind = doc.get("kind").and_then(|k| k.as_str()).unwrap_or_default().to_string();
        if !kinds.contains(&kind.as_str()) {
            continue;
        }
        let name = doc.pointer("/metadata/name").and_then(|n| n.as_str()).unwrap_or_default().to_string();
        let ns = doc.pointer("/metadata/namespace").and_then(|n| n.as_str()).map(str::to_string);
        let what = match &ns {
            Some(ns) => format!("{kind}/{ns}/{name}"),
            None => format!("{kind}/{name}"),
        };
        let c = client.clone();
        let namespaced = |ns: &Option<String>| -> Result<String> {
            ns.clone().ok_or_else(|| format!("{}: {what}: metadata.namespace is not set", path.display()).into())
        };
        let result = match kind.as_str() {
            "Namespace" => apply_typed::<Namespace>(Api::all(c), doc).await,
            "ServiceAccount" => apply_typed::<ServiceAccount>(Api::namespaced(c, &namespaced(&ns)?), doc).await,
            "ConfigMap" => apply_typed::<ConfigMap>(Api::namespaced(c, &namespaced(&ns)?), doc).await,
            "ClusterRole" => apply_typed::<ClusterRole>(Api::all(c), doc).await,
            "ClusterRoleBinding" => apply_typed::<ClusterRoleBinding>(Api::all(c), doc).await,
            "Role" => apply_typed::<Role>(Api::namespaced(c, &namespaced(&ns)?), doc).await,
            "RoleBinding" => apply_typed::<RoleBinding>(Api::namespaced(c, &namespaced(&ns)?), doc).await,
            "PriorityClass" => apply_typed::<PriorityClass>(Api::all(c), doc).await,
            "Queue" => apply_typed::<Queue>(Api::all(c), doc).await,
            other => Err(format!("kind {other} is not supported by apply_manifest").into()),
        };
        result.map_err(|e| format!("{}: {what}: {e}", path.display()))?;
        applied.push(what);
    }
    Ok(applied)
}

async fn apply_typed<K>(api: Api<K>, doc: serde_json::Value) -> Result<()>
where
    K: Resource + Clone + Debug + Serialize + DeserializeOwned,
    K::DynamicType: Default,
{
    let obj: K = serde_json::from_value(doc)?;
    create_or_replace(&api, &obj).await?;
    Ok(())
}

/// Create; if it exists, replace it carrying the stored resourceVersion (custom resources reject
/// a PUT without one).
async fn create_or_replace<K>(api: &Api<K>, obj: &K) -> Result<K>
where
    K: Resource + Clone + Debug + Serialize + DeserializeOwned,
{
    match api.create(&PostParams::default(), obj).await {
        Ok(created) => Ok(created),
        Err(kube::Error::Api(s)) if s.code == 409 => {
            // Tests on the shared server install the same objects at once: a replace that
            // loses the race (409 on the resourceVersion) reads the object again and retries.
            let name = obj.meta().name.clone().unwrap_or_default();
            let mut attempt = 0;
            loop {
                let current = api.get(&name).await?;
                let mut next = obj.clone();
                next.meta_mut().resource_version = current.meta().resource_version.clone();
                match api.replace(&name, &PostParams::default(), &next).await {
                    Err(kube::Error::Api(s)) if s.code == 409 && attempt < 5 => attempt += 1,
                    r => return Ok(r?),
                }
            }
        }
        Err(e) => Err(e.into()),
    }
}

/// The non-empty YAML documents of `path`, as JSON values.
fn read_documents(path: &Path) -> Result<Vec<serde_json::Value>> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut docs = Vec::new();
    for (i, de) in serde_yaml::Deserializer::from_str(&text).enumerate() {
        let value = serde_yaml::Value::deserialize(de).map_err(|e| format!("{} document {}: {e}", path.display(), i + 1))?;
        if value.is_null() {
            continue;
        }
        docs.push(serde_json::to_value(value).map_err(|e| format!("{} document {}: {e}", path.display(), i + 1))?);
    }
    Ok(docs)
}

use serde::Deserialize as _;
