//! `Command` (`bus.volcano.sh/v1alpha1`, namespaced): a one-shot request to a controller,
//! e.g. `AbortJob`/`ResumeJob` for a Job or `OpenQueue`/`CloseQueue` for a Queue
//! (volcano-behaviour.md §4, §5.1). Unlike most resources it has no `spec`: `action`, `target`,
//! `reason` and `message` sit at the top level, so the type implements [`kube::Resource`] by hand
//! instead of deriving `CustomResource`, and [`command_crd`] builds its definition.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionNames, CustomResourceDefinitionSpec, CustomResourceDefinitionVersion,
    CustomResourceValidation, JSONSchemaProps,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::core::NamespaceResourceScope;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// A `bus.volcano.sh/v1alpha1` Command. The controller acting on it deletes it first, then
/// acts (so a Command is acted on at most once).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Command {
    /// `metadata`.
    #[schemars(schema_with = "metadata_schema")]
    pub metadata: ObjectMeta,
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

fn metadata_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "object"})
}

impl kube::Resource for Command {
    type DynamicType = ();
    type Scope = NamespaceResourceScope;

    fn kind(_: &()) -> Cow<'_, str> {
        "Command".into()
    }
    fn group(_: &()) -> Cow<'_, str> {
        "bus.volcano.sh".into()
    }
    fn version(_: &()) -> Cow<'_, str> {
        "v1alpha1".into()
    }
    fn api_version(_: &()) -> Cow<'_, str> {
        "bus.volcano.sh/v1alpha1".into()
    }
    fn plural(_: &()) -> Cow<'_, str> {
        "commands".into()
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

/// The Command CRD: `commands.bus.volcano.sh`, namespaced, no subresources, schema generated
/// from [`Command`] (with `apiVersion` and `kind`).
///
/// Errors: none; a schema that does not convert is a bug caught by the drift test.
pub fn command_crd() -> CustomResourceDefinition {
    let mut gen = schemars::generate::SchemaSettings::openapi3().into_generator();
    let mut schema = serde_json::to_value(gen.root_schema_for::<Command>()).unwrap_or_default();
    if let Some(obj) = schema.as_object_mut() {
        for k in ["$schema", "title", "definitions", "$defs", "required"] {
            obj.remove(k);
        }
        obj.insert(
            "description".into(),
            "A one-shot request to a Volcano controller (AbortJob, ResumeJob, OpenQueue, …).".into(),
        );
        if let Some(props) = obj.get_mut("properties").and_then(|p| p.as_object_mut()) {
            props.insert("apiVersion".into(), serde_json::json!({"type": "string"}));
            props.insert("kind".into(), serde_json::json!({"type": "string"}));
            // The apiserver allows nothing but `type: object` on `metadata` (no description).
            props.insert("metadata".into(), serde_json::json!({"type": "object"}));
        }
    }
    let props: JSONSchemaProps = serde_json::from_value(schema).unwrap_or_default();
    CustomResourceDefinition {
        metadata: ObjectMeta {
            name: Some("commands.bus.volcano.sh".into()),
            labels: Some(BTreeMap::from([("app.kubernetes.io/part-of".to_string(), "basalt".to_string())])),
            ..Default::default()
        },
        spec: CustomResourceDefinitionSpec {
            group: "bus.volcano.sh".into(),
            names: CustomResourceDefinitionNames {
                kind: "Command".into(),
                list_kind: Some("CommandList".into()),
                plural: "commands".into(),
                singular: Some("command".into()),
                ..Default::default()
            },
            scope: "Namespaced".into(),
            versions: vec![CustomResourceDefinitionVersion {
                name: "v1alpha1".into(),
                served: true,
                storage: true,
                schema: Some(CustomResourceValidation { open_api_v3_schema: Some(props) }),
                ..Default::default()
            }],
            ..Default::default()
        },
        status: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::Resource;

    #[test]
    fn identity_matches_volcano() {
        assert_eq!(Command::api_version(&()), "bus.volcano.sh/v1alpha1");
        assert_eq!(Command::plural(&()), "commands");
        let crd = command_crd();
        assert_eq!(crd.spec.scope, "Namespaced");
        let schema = crd.spec.versions[0].schema.as_ref().unwrap().open_api_v3_schema.as_ref().unwrap();
        let props = schema.properties.as_ref().unwrap();
        for key in ["action", "target", "reason", "message", "metadata", "apiVersion", "kind"] {
            assert!(props.contains_key(key), "{key}");
        }
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
        assert_eq!(c.action.as_deref(), Some("AbortJob"));
        assert_eq!(c.target.as_ref().unwrap().name, "j1");
        let json = serde_json::to_value(&c).unwrap();
        assert_eq!(json["target"]["kind"], "Job");
    }
}
