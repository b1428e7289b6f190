//! `Command` (`bus.volcano.sh/v1alpha1`, namespaced): a one-shot request to a controller,
//! e.g. `AbortJob`/`ResumeJob` for a Job or `OpenQueue`/`CloseQueue` for a Queue
//! (volcano-behaviour.md §4, §5.1, §5.3), as `vcctl job suspend/resume` and `vcctl queue
//! operate` create them.
//!
//! Unlike most resources it has no `spec`: `action`, `target`, `reason` and `message` sit at the
//! top level beside `metadata` (Volcano's Go type embeds them in the object). The type is derived
//! with kube's `CustomResource` in `no_spec` mode: [`CommandSpec`] holds the four fields on the
//! Rust side (`command.spec.action`) and is flattened onto the object on the wire, and the
//! derived `Serialize` writes `apiVersion: bus.volcano.sh/v1alpha1` and `kind: Command`, so a
//! typed `Api<Command>` can create Commands. [`command_crd`] is the definition to install.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::{CustomResource, CustomResourceExt, Resource};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The fields of a `bus.volcano.sh/v1alpha1` Command (on the wire at the object's top level,
/// not under a `spec`). The controller acting on a Command deletes it first, then acts, so a
/// Command is acted on at most once.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "bus.volcano.sh",
    version = "v1alpha1",
    kind = "Command",
    namespaced,
    no_spec,
    derive = "Default",
    derive = "PartialEq",
    doc = "A one-shot request to a Volcano controller (AbortJob, ResumeJob, OpenQueue, …)."
)]
#[serde(rename_all = "camelCase")]
pub struct CommandSpec {
    /// `action`: what to do (`AbortJob`, `ResumeJob`, `RestartJob`, `TerminateJob`,
    /// `CompleteJob`, `OpenQueue`, `CloseQueue`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// `target`: the object acted on, as an owner reference (`kind`, `name`, `uid`,
    /// `apiVersion`); a Job target is looked up in the Command's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::schema::opaque_object")]
    pub target: Option<OwnerReference>,
    /// `reason`: one word, CamelCase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `message`: for humans.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl Command {
    /// Command `action` on `object`, created in `namespace`, as `vcctl` builds one (`vcctl job
    /// suspend/resume/terminate`, `vcctl queue operate`): named by the server from
    /// `<object>-<action in lower case>-`, `target` the object's controller reference
    /// ([`Command::target_of`]), which is also the Command's owner, so deleting the object deletes
    /// its pending Commands. An object without a UID (not read from the API) is targeted by name
    /// only and owns nothing.
    pub fn for_object<K: Resource<DynamicType = ()>>(namespace: &str, object: &K, action: &str) -> Command {
        let target = Command::target_of(object);
        let owners = (!target.uid.is_empty()).then(|| vec![target.clone()]);
        Command {
            metadata: ObjectMeta {
                generate_name: Some(format!("{}-{}-", target.name, action.to_lowercase())),
                namespace: Some(namespace.to_string()),
                owner_references: owners,
                ..Default::default()
            },
            spec: CommandSpec { action: Some(action.to_string()), target: Some(target), reason: None, message: None },
        }
    }

    /// `object`'s controller reference (`apiVersion`, `kind`, `name`, `uid`, `controller` and
    /// `blockOwnerDeletion` true), what `vcctl` puts in `target` (`metav1.NewControllerRef`).
    pub fn target_of<K: Resource<DynamicType = ()>>(object: &K) -> OwnerReference {
        OwnerReference {
            api_version: K::api_version(&()).into_owned(),
            kind: K::kind(&()).into_owned(),
            name: object.meta().name.clone().unwrap_or_default(),
            uid: object.meta().uid.clone().unwrap_or_default(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }
    }
}

/// The Command CRD: `commands.bus.volcano.sh`, namespaced, `listKind: CommandList` (as
/// Volcano's), no subresources, labelled `app.kubernetes.io/part-of: basalt`, schema derived from
/// [`CommandSpec`] at the top level (kube's `no_spec`).
///
/// Errors: none.
pub fn command_crd() -> CustomResourceDefinition {
    let mut crd = Command::crd();
    crd.metadata.labels = Some(BTreeMap::from([("app.kubernetes.io/part-of".to_string(), "basalt".to_string())]));
    crd.spec.names.list_kind = Some("CommandList".into());
    for v in &mut crd.spec.versions {
        let Some(root) = v.schema.as_mut().and_then(|s| s.open_api_v3_schema.as_mut()) else { continue };
        root.required = None;
    }
    crd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_matches_volcano() {
        assert_eq!(Command::api_version(&()), "bus.volcano.sh/v1alpha1");
        assert_eq!(Command::kind(&()), "Command");
        assert_eq!(Command::plural(&()), "commands");
        let crd = command_crd();
        assert_eq!(crd.metadata.name.as_deref(), Some("commands.bus.volcano.sh"));
        assert_eq!(crd.spec.scope, "Namespaced");
        assert_eq!(crd.spec.names.list_kind.as_deref(), Some("CommandList"));
        let v = &crd.spec.versions[0];
        assert_eq!((v.name.as_str(), v.served, v.storage), ("v1alpha1", true, true));
        assert!(v.subresources.is_none(), "Volcano's Command has no status subresource");
        let schema = v.schema.as_ref().unwrap().open_api_v3_schema.as_ref().unwrap();
        let props = schema.properties.as_ref().unwrap();
        for key in ["action", "target", "reason", "message"] {
            assert!(props.contains_key(key), "{key} at the top level, as Volcano's Command");
        }
        assert!(!props.contains_key("spec"), "a Command has no spec");
    }

    #[test]
    fn vcctl_command_parses() {
        let yaml = r#"
apiVersion: bus.volcano.sh/v1alpha1
kind: Command
metadata: {name: j1-abort-x, namespace: ns}
action: AbortJob
target: {apiVersion: batch.volcano.sh/v1alpha1, kind: Job, name: j1, uid: u1}
reason: by vcctl
"#;
        let c: Command = serde_yaml::from_str(yaml).unwrap();
        assert_eq!(c.spec.action.as_deref(), Some("AbortJob"));
        assert_eq!(c.spec.target.as_ref().unwrap().name, "j1");
        assert_eq!(c.spec.reason.as_deref(), Some("by vcctl"));
        assert_eq!(c.metadata.namespace.as_deref(), Some("ns"));
    }

    #[test]
    fn round_trips_with_api_version_and_kind() {
        let mut queue = crate::crd::Queue::new("team", Default::default());
        queue.metadata.uid = Some("q-uid".into());
        let mut c = Command::for_object("ns", &queue, "CloseQueue");
        c.spec.reason = Some("test".into());
        let json = serde_json::to_value(&c).unwrap();
        assert_eq!(json["apiVersion"], "bus.volcano.sh/v1alpha1");
        assert_eq!(json["kind"], "Command");
        assert_eq!(json["action"], "CloseQueue", "fields at the top level, not under spec");
        assert_eq!(json["reason"], "test");
        assert!(json.get("spec").is_none());
        assert!(json.get("message").is_none(), "unset fields are omitted");
        assert_eq!(json["metadata"]["generateName"], "team-closequeue-");
        assert_eq!(json["metadata"]["namespace"], "ns");
        let target = &json["target"];
        assert_eq!(
            (&target["apiVersion"], &target["kind"], &target["name"], &target["uid"]),
            (&"scheduling.volcano.sh/v1beta1".into(), &"Queue".into(), &"team".into(), &"q-uid".into())
        );
        assert_eq!((&target["controller"], &target["blockOwnerDeletion"]), (&true.into(), &true.into()), "a controller ref");
        assert_eq!(json["metadata"]["ownerReferences"][0], *target, "the target owns the Command, as vcctl sets it");
        let back: Command = serde_json::from_value(json).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn an_object_without_uid_owns_nothing() {
        let job = crate::crd::Job::new("tf", Default::default());
        let c = Command::for_object("ns", &job, "AbortJob");
        assert_eq!(c.metadata.owner_references, None, "the apiserver refuses an owner without UID");
        let t = c.spec.target.unwrap();
        assert_eq!((t.api_version.as_str(), t.kind.as_str(), t.name.as_str()), ("batch.volcano.sh/v1alpha1", "Job", "tf"));
        assert_eq!(c.metadata.generate_name.as_deref(), Some("tf-abortjob-"));
    }
}
