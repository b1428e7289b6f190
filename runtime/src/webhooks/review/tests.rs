use super::*;
use base64::Engine;
use serde_json::{json, Value};

fn ctx() -> Context {
    let open: Queue =
        serde_json::from_value(json!({"metadata": {"name": "default"}, "spec": {}, "status": {"state": "Open"}})).unwrap();
    Context {
        queues: Arc::new(RwLock::new(QueueIndex::new([open]))),
        queue_rules: QueueRules::default(),
        scheduler_names: vec!["volcano".into()],
        admission_conf: Default::default(),
        scheduling_gates_queue_admission: false,
    }
}

fn review(op: &str, resource: (&str, &str, &str), obj: Value, old: Value) -> Vec<u8> {
    let (group, version, plural) = resource;
    serde_json::to_vec(&json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "uid-1",
            "kind": {"group": group, "version": version, "kind": "X"},
            "resource": {"group": group, "version": version, "resource": plural},
            "name": obj["metadata"]["name"].as_str().or(old["metadata"]["name"].as_str()).unwrap_or("x"),
            "namespace": "ns",
            "operation": op,
            "userInfo": {},
            "object": obj,
            "oldObject": old,
            "dryRun": false
        }
    }))
    .unwrap()
}

async fn call(path: &str, body: &[u8], ns: Option<BTreeMap<String, String>>) -> Value {
    let out = answer(path, body, &ctx(), move |_| std::future::ready(ns)).await;
    serde_json::from_slice(&out).unwrap()
}

const JOB: (&str, &str, &str) = ("batch.volcano.sh", "v1alpha1", "jobs");

fn job(spec: Value) -> Value {
    json!({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j", "namespace": "ns"}, "spec": spec})
}

#[tokio::test]
async fn a_denial_carries_the_uid_and_volcanos_message() {
    let spec = json!({"queue": "default", "minAvailable": 3, "tasks": [{"name": "w", "replicas": 2, "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}]});
    let r = call("/jobs/validate", &review("CREATE", JOB, job(spec), Value::Null), None).await;
    assert_eq!(r["apiVersion"], "admission.k8s.io/v1");
    assert_eq!(r["kind"], "AdmissionReview");
    assert_eq!(r["response"]["uid"], "uid-1");
    assert_eq!(r["response"]["allowed"], false);
    assert_eq!(r["response"]["status"]["message"], "job 'minAvailable' should not be greater than total replicas in tasks;");
}

#[tokio::test]
async fn a_mutation_is_a_base64_json_patch() {
    let spec = json!({"tasks": [{"name": "w", "replicas": 2}]});
    let r = call("/jobs/mutate", &review("CREATE", JOB, job(spec), Value::Null), None).await;
    assert_eq!(r["response"]["allowed"], true);
    assert_eq!(r["response"]["patchType"], "JSONPatch");
    let bytes = base64::engine::general_purpose::STANDARD.decode(r["response"]["patch"].as_str().unwrap()).unwrap();
    let patch: Value = serde_json::from_slice(&bytes).unwrap();
    let paths: Vec<&str> = patch.as_array().unwrap().iter().map(|p| p["path"].as_str().unwrap()).collect();
    assert_eq!(
        paths,
        [
            "/spec/queue",
            "/spec/schedulerName",
            "/spec/maxRetry",
            "/spec/tasks/0/minAvailable",
            "/spec/tasks/0/maxRetry",
            "/spec/minAvailable"
        ]
    );
}

#[tokio::test]
async fn podgroup_mutation_reads_the_namespace() {
    let pg = json!({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": "pg", "namespace": "ns"}, "spec": {"queue": "default"}});
    let ann: BTreeMap<String, String> = [("scheduling.volcano.sh/queue-name".to_string(), "team".to_string())].into();
    let r = call(
        "/podgroups/mutate",
        &review("CREATE", ("scheduling.volcano.sh", "v1beta1", "podgroups"), pg, Value::Null),
        Some(ann),
    )
    .await;
    let bytes = base64::engine::general_purpose::STANDARD.decode(r["response"]["patch"].as_str().unwrap()).unwrap();
    assert_eq!(String::from_utf8(bytes).unwrap(), r#"[{"op":"add","path":"/spec/queue","value":"team"}]"#);
}

#[tokio::test]
async fn queue_delete_reads_the_old_object_and_the_cache() {
    let q = json!({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "default"}, "spec": {}});
    let r =
        call("/queues/validate", &review("DELETE", ("scheduling.volcano.sh", "v1beta1", "queues"), Value::Null, q), None).await;
    assert_eq!(r["response"]["status"]["message"], "`default` queue can not be deleted");
}

#[tokio::test]
async fn malformed_input_gets_a_clean_answer() {
    let r = call("/jobs/validate", b"{not json", None).await;
    assert_eq!(r["response"]["allowed"], false);
    assert!(r["response"]["status"]["message"].as_str().unwrap().starts_with("cannot decode the AdmissionReview: "));
    let r = call("/jobs/validate", br#"{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}"#, None).await;
    assert_eq!(r["response"]["status"]["message"], "the AdmissionReview has no request");
    let bad =
        json!({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j"}, "spec": {"tasks": "nope"}});
    let r = call("/jobs/validate", &review("CREATE", JOB, bad, Value::Null), None).await;
    assert_eq!(r["response"]["uid"], "uid-1");
    assert!(r["response"]["status"]["message"].as_str().unwrap().starts_with("cannot decode the Job: "));
}
