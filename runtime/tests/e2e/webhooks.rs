//! `basalt webhook-manager` as the real kube-apiserver's admission webhook (issue 27), on a server
//! of its own (its webhook configurations see every namespace).
//!
//! The certificate comes from `deploy/admission-certs.sh` (`--san IP:127.0.0.1`); the webhook
//! configurations are `deploy/admission-webhooks.yaml`'s, with the Service reference swapped for a
//! `url` on the loopback port the manager listens on, plus `/pods/validate`, `/pods/mutate` and
//! `/podgroups/mutate` (Volcano's binary default, outside Helm's set) built from the same shape. The
//! manager runs with `deploy/admission.yaml`'s ClusterRole and writes its CA into every
//! configuration's `caBundle` itself; until then nothing is admitted (failurePolicy `Fail`).
//!
//! Through the apiserver, each path as Volcano's: a Job gets Volcano's defaults (queue, scheduler
//! name, maxRetry, minAvailable, task names and minAvailable, `svc` and `ssh` for `mpi`); Jobs
//! breaking a create rule, and an update changing what may not change, are refused with Volcano's
//! message (the webhook named by the server); Queues get weight 1 and `reclaimable`, a queue
//! deserving more than its capability, a missing parent and the `default` queue's delete are
//! refused; a PodGroup gets its namespace's queue and one naming a missing queue is refused; a pod
//! with a bad JDB annotation is refused; a HyperNode with a bad regex is refused; a CronJob with a
//! bad schedule or time zone is refused. The manager's
//! own requests are never refused (its role is enough).
//!
//! Then: a malformed AdmissionReview POSTed directly gets a clean `allowed: false` answer and the
//! manager keeps serving; a certificate file overwritten with garbage is not loaded (the last good
//! one is served, admission goes on); a new pair from the same CA is loaded; with the manager
//! stopped, `failurePolicy: Fail` refuses and `Ignore` admits (unmutated). A second test: a
//! missing or garbage certificate at start is an error naming the flag and file (exit 1).

use crate::{e2e, support};

use basalt_runtime::crd::{CronJob, HyperNode, Job, PodGroup, Queue};
use base64::Engine as _;
use e2e::free_port;
use e2e::process::SchedulerProcess;
use k8s_openapi::api::admissionregistration::v1::{MutatingWebhookConfiguration, ValidatingWebhookConfiguration};
use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Api, Client};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use support::{apply_manifest, create_queue, deploy_dir, fresh_namespace, install_volcano_crds, queue, wait_for, TestApiserver};

const ADMISSION_USER: &str = "system:serviceaccount:volcano-system:volcano-admission";
const WAIT: Duration = Duration::from_secs(60);
/// Every path the test registers, as `--enabled-admission`.
const PATHS: &str = "/jobs/mutate,/jobs/validate,/podgroups/mutate,/podgroups/validate,/queues/mutate,/queues/validate,/pods/mutate,/pods/validate,/hypernodes/validate,/cronjobs/validate";

/// `deploy/admission-certs.sh --out-dir DIR --san IP:127.0.0.1 [--ca CA]`.
fn make_certs(dir: &Path, ca: Option<&Path>) -> support::Result<()> {
    let mut cmd = Command::new(deploy_dir().join("admission-certs.sh"));
    cmd.arg("--out-dir").arg(dir).args(["--san", "IP:127.0.0.1"]);
    if let Some(ca) = ca {
        cmd.arg("--ca").arg(ca);
    }
    let out = cmd.output()?;
    if !out.status.success() {
        return Err(format!("admission-certs.sh: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(())
}

/// The documents of a multi-document YAML file, as JSON.
fn documents(path: &Path) -> support::Result<Vec<Value>> {
    let text = std::fs::read_to_string(path)?;
    let mut out = Vec::new();
    for d in serde_yaml::Deserializer::from_str(&text) {
        let v: Value = serde::Deserialize::deserialize(d)?;
        if !v.is_null() {
            out.push(v);
        }
    }
    Ok(out)
}

/// The shipped configurations plus the three binary-default paths, each pointing at `base`.
fn configurations(base: &str) -> support::Result<Vec<Value>> {
    let mut docs = documents(&deploy_dir().join("admission-webhooks.yaml"))?;
    let template = |kind: &str| docs.iter().find(|d| d["kind"] == kind).cloned().ok_or("no template");
    let (mutating, validating) = (template("MutatingWebhookConfiguration")?, template("ValidatingWebhookConfiguration")?);
    for (t, path, name, group, version, res) in [
        (&validating, "/pods/validate", "validatepod.volcano.sh", "", "v1", "pods"),
        (&mutating, "/pods/mutate", "mutatepod.volcano.sh", "", "v1", "pods"),
        (&mutating, "/podgroups/mutate", "mutatepodgroup.volcano.sh", "scheduling.volcano.sh", "v1beta1", "podgroups"),
    ] {
        let mut d = t.clone();
        d["metadata"]["name"] = json!(format!("volcano-admission-service{}", path.replace('/', "-")));
        let w = &mut d["webhooks"][0];
        w["name"] = json!(name);
        w["clientConfig"]["service"]["path"] = json!(path);
        w["rules"] =
            json!([{"apiGroups": [group], "apiVersions": [version], "operations": ["CREATE"], "resources": [res], "scope": "*"}]);
        docs.push(d);
    }
    for d in &mut docs {
        for w in d["webhooks"].as_array_mut().ok_or("webhooks")? {
            let path = w["clientConfig"]["service"]["path"].as_str().ok_or("clientConfig.service.path")?.to_string();
            w["clientConfig"] = json!({"url": format!("{base}{path}")});
        }
    }
    Ok(docs)
}

async fn register(client: &Client, docs: &[Value]) -> support::Result<()> {
    for d in docs {
        if d["kind"] == "MutatingWebhookConfiguration" {
            let c: MutatingWebhookConfiguration = serde_json::from_value(d.clone())?;
            Api::<MutatingWebhookConfiguration>::all(client.clone()).create(&PostParams::default(), &c).await?;
        } else {
            let c: ValidatingWebhookConfiguration = serde_json::from_value(d.clone())?;
            Api::<ValidatingWebhookConfiguration>::all(client.clone()).create(&PostParams::default(), &c).await?;
        }
    }
    Ok(())
}

/// Whether every registered webhook carries `ca` as its `caBundle`.
async fn bundles_in_place(client: &Client, docs: &[Value], ca: &[u8]) -> support::Result<bool> {
    for d in docs {
        let name = d["metadata"]["name"].as_str().unwrap_or_default();
        let bundles: Vec<Option<Vec<u8>>> = if d["kind"] == "MutatingWebhookConfiguration" {
            let c = Api::<MutatingWebhookConfiguration>::all(client.clone()).get(name).await?;
            c.webhooks.unwrap_or_default().into_iter().map(|w| w.client_config.ca_bundle.map(|b| b.0)).collect()
        } else {
            let c = Api::<ValidatingWebhookConfiguration>::all(client.clone()).get(name).await?;
            c.webhooks.unwrap_or_default().into_iter().map(|w| w.client_config.ca_bundle.map(|b| b.0)).collect()
        };
        if bundles.is_empty() || bundles.iter().any(|b| b.as_deref() != Some(ca)) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Sets `failurePolicy` of every webhook of the named configurations.
async fn set_failure_policy(client: &Client, names: &[(&str, bool)], policy: &str) -> support::Result<()> {
    for (name, mutating) in names {
        if *mutating {
            let api = Api::<MutatingWebhookConfiguration>::all(client.clone());
            let mut c = api.get(name).await?;
            c.webhooks.iter_mut().flatten().for_each(|w| w.failure_policy = Some(policy.into()));
            api.replace(name, &PostParams::default(), &c).await?;
        } else {
            let api = Api::<ValidatingWebhookConfiguration>::all(client.clone());
            let mut c = api.get(name).await?;
            c.webhooks.iter_mut().flatten().for_each(|w| w.failure_policy = Some(policy.into()));
            api.replace(name, &PostParams::default(), &c).await?;
        }
    }
    Ok(())
}

fn template() -> Value {
    json!({"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}})
}

fn job(name: &str, spec: Value) -> support::Result<Job> {
    let mut spec = spec;
    for t in spec["tasks"].as_array_mut().into_iter().flatten() {
        if t.get("template").is_none() {
            t["template"] = template();
        }
    }
    Ok(serde_json::from_value(json!({
        "apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": name}, "spec": spec
    }))?)
}

/// The server's refusal of a create, or an error when it was admitted.
fn refusal<T: std::fmt::Debug>(what: &str, r: Result<T, kube::Error>) -> support::Result<String> {
    match r {
        Ok(o) => Err(format!("{what} was admitted: {o:?}").into()),
        Err(kube::Error::Api(s)) => Ok(s.message),
        Err(e) => Err(format!("{what}: {e}").into()),
    }
}

/// Asserts `message` is webhook `hook`'s denial containing `text`.
fn assert_denied(what: &str, message: &str, hook: &str, text: &str) {
    assert!(
        message.starts_with(&format!("admission webhook \"{hook}\" denied the request")),
        "{what}: refused by {hook}: {message}"
    );
    assert!(message.contains(text), "{what}: Volcano's words {text:?} in {message}");
}

/// POSTs `body` to the manager directly (curl, trusting `ca`): (HTTP status, body).
fn post(url: &str, ca: &Path, body: &str) -> support::Result<(u16, String)> {
    let out = Command::new("curl")
        .args(["-s", "-o", "-", "-w", "\n%{http_code}", "-H", "Content-Type: application/json", "--data-binary", body])
        .arg("--cacert")
        .arg(ca)
        .arg(url)
        .output()?;
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", "0"));
    Ok((code.trim().parse().unwrap_or(0), body.to_string()))
}

async fn wait_log(m: &SchedulerProcess, text: &str) -> support::Result<()> {
    wait_for(&format!("{text:?} in the webhook manager's log"), WAIT, || async { Ok(m.log_text().contains(text).then_some(())) })
        .await
        .map_err(|e| format!("{e}\nlog:\n{}", m.log_text()).into())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_manager_admits_as_volcano_does() -> support::Result<()> {
    let server = TestApiserver::start()?;
    let admin = server.admin_client().await?;
    install_volcano_crds(&admin).await?;
    apply_manifest(&admin, &deploy_dir().join("base/basalt.yaml"), &["Namespace"]).await?;
    apply_manifest(&admin, &deploy_dir().join("admission.yaml"), &["ServiceAccount", "ClusterRole", "ClusterRoleBinding"])
        .await?;
    // Queues the cases need, before any webhook is registered.
    create_queue(&admin, &queue("default", 1)).await?;
    create_queue(&admin, &queue("team", 1)).await?;
    create_queue(&admin, &queue("shut", 1)).await?;
    let queues: Api<Queue> = Api::all(admin.clone());
    queues.patch_status("shut", &PatchParams::default(), &Patch::Merge(&json!({"status": {"state": "Closed"}}))).await?;

    let certs: PathBuf = server.dir().join("admission-certs");
    make_certs(&certs, None)?;
    let ca = std::fs::read(certs.join("ca.crt"))?;
    let port = free_port();
    let base = format!("https://127.0.0.1:{port}");
    // The admission conf: pods annotated for the `gpu` resource group go to GPU nodes.
    let conf_path = server.dir().join("volcano-admission.conf");
    let conf = |nodetype: &str| {
        format!(
            "resourceGroups:\n- resourceGroup: gpu\n  object: {{key: annotation, value: [\"volcano.sh/resource-group: gpu\"]}}\n  labels: {{volcano.sh/nodetype: {nodetype}}}\n  tolerations:\n  - {{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}\n"
        )
    };
    std::fs::write(&conf_path, conf("gpu"))?;
    let docs = configurations(&base)?;
    register(&admin, &docs).await?;

    let args: Vec<String> = vec![
        "--listen-address=127.0.0.1".into(),
        format!("--port={port}"),
        format!("--tls-cert-file={}", certs.join("tls.crt").display()),
        format!("--tls-private-key-file={}", certs.join("tls.key").display()),
        format!("--ca-cert-file={}", certs.join("ca.crt").display()),
        format!("--webhook-url={base}"),
        format!("--enabled-admission={PATHS}"),
        "--enable-healthz=true".into(),
        format!("--healthz-address=127.0.0.1:{}", free_port()),
        "--cert-reload-period=1s".into(),
        format!("--admission-conf={}", conf_path.display()),
        "--graceful-shutdown-time=2s".into(),
        "--feature-gates=SchedulingGatesQueueAdmission=true".into(),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut manager = SchedulerProcess::start_command(
        "webhook-manager",
        server.dir(),
        "webhook-manager",
        &server.admission_kubeconfig(),
        &args,
    )?;
    wait_for("the CA bundle in every webhook configuration", WAIT, || async {
        Ok(bundles_in_place(&admin, &docs, &ca).await?.then_some(()))
    })
    .await
    .map_err(|e| format!("{e}\nlog:\n{}", manager.log_text()))?;
    wait_log(&manager, "webhook manager serving").await?;

    let ns = fresh_namespace(&admin, "admission").await?;
    let jobs: Api<Job> = Api::namespaced(admin.clone(), &ns);
    let pp = PostParams::default();

    // /jobs/mutate: Volcano's defaults.
    let j = job("defaults", json!({"plugins": {"mpi": []}, "tasks": [{"name": "master", "replicas": 1}, {"replicas": 2}]}))?;
    let stored = jobs.create(&pp, &j).await.map_err(|e| format!("Job defaults: {e}\nlog:\n{}", manager.log_text()))?;
    let s = &stored.spec;
    assert_eq!(s.queue.as_deref(), Some("default"));
    assert_eq!(s.scheduler_name.as_deref(), Some("volcano"));
    assert_eq!(s.max_retry, Some(3));
    assert_eq!(s.min_available, Some(3), "the sum of the tasks' minAvailable");
    assert_eq!(s.tasks[1].name.as_deref(), Some("default1"));
    assert_eq!(s.tasks.iter().map(|t| t.min_available).collect::<Vec<_>>(), vec![Some(1), Some(2)]);
    assert!(s.tasks.iter().all(|t| t.max_retry == Some(3)));
    assert!(s.plugins.contains_key("svc") && s.plugins.contains_key("ssh"), "mpi brings svc and ssh: {:?}", s.plugins);

    // /jobs/validate, CREATE: each refused with Volcano's words.
    for (name, spec, text) in [
        (
            "too-few",
            json!({"minAvailable": 3, "tasks": [{"name": "w", "replicas": 2}]}),
            "job 'minAvailable' should not be greater than total replicas in tasks",
        ),
        ("dup", json!({"tasks": [{"name": "w", "replicas": 1}, {"name": "w", "replicas": 1}]}), "duplicated task name w"),
        ("lost", json!({"queue": "nowhere", "tasks": [{"name": "w", "replicas": 1}]}), "unable to find job queue"),
        (
            "closed",
            json!({"queue": "shut", "tasks": [{"name": "w", "replicas": 1}]}),
            "can only submit job to queue with state `Open`, queue `shut` status is `Closed`",
        ),
        (
            "bad-name",
            json!({"tasks": [{"name": "Worker_1", "replicas": 1}]}),
            "spec.task[0].metadata.name: Invalid value: \"Worker_1\": a lowercase RFC 1123 subdomain",
        ),
        ("plugin", json!({"plugins": {"nope": []}, "tasks": [{"name": "w", "replicas": 1}]}), "unable to find job plugin: nope"),
        (
            "policy",
            json!({"tasks": [{"name": "w", "replicas": 1}], "policies": [{"event": "PodFailed", "exitCode": 3, "action": "RestartJob"}]}),
            "must not specify event and exitCode simultaneously",
        ),
        (
            "no-master",
            json!({"plugins": {"mpi": []}, "tasks": [{"name": "w", "replicas": 1}]}),
            "The specified mpi master task was not found",
        ),
    ] {
        let msg = refusal(name, jobs.create(&pp, &job(name, spec)?).await)?;
        assert_denied(name, &msg, "validatejob.volcano.sh", text);
    }
    // UPDATE: replicas may change, the image may not.
    let mut scaled = stored.clone();
    scaled.spec.tasks[1].replicas = Some(3);
    let scaled = jobs.replace("defaults", &pp, &scaled).await?;
    let mut changed = scaled.clone();
    changed.spec.tasks[1].template =
        serde_json::from_value(json!({"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox:2"}]}}))?;
    let msg = refusal("an image change", jobs.replace("defaults", &pp, &changed).await)?;
    assert_denied(
        "an image change",
        &msg,
        "validatejob.volcano.sh",
        "job updates may not change fields other than `minAvailable`",
    );

    // /queues/mutate and /queues/validate.
    let q: Queue = serde_json::from_value(
        json!({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "fresh"}, "spec": {}}),
    )?;
    let q = queues.create(&pp, &q).await?;
    assert_eq!(q.spec.weight, Some(1), "weight 1 (the CRD's schema default; the webhook's 0 → 1 is unit-tested)");
    assert_eq!(q.spec.reclaimable, Some(true));
    for (name, spec, text) in [
        ("greedy", json!({"deserved": {"cpu": "8"}, "capability": {"cpu": "4"}}), "deserved[cpu]=8 must be <= capability[cpu]=4"),
        ("orphan", json!({"parent": "nope"}), "failed to get parent queue nope of queue orphan"),
    ] {
        let q: Queue = serde_json::from_value(
            json!({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name}, "spec": spec}),
        )?;
        let msg = refusal(name, queues.create(&pp, &q).await)?;
        assert_denied(name, &msg, "validatequeue.volcano.sh", text);
    }
    let msg = refusal("deleting default", queues.delete("default", &DeleteParams::default()).await)?;
    assert_denied("deleting default", &msg, "validatequeue.volcano.sh", "`default` queue can not be deleted");

    // /podgroups/mutate (the namespace's queue) and /podgroups/validate.
    let annotated = format!("{ns}-team");
    let n: Namespace = serde_json::from_value(
        json!({"metadata": {"name": annotated, "annotations": {"scheduling.volcano.sh/queue-name": "team"}}}),
    )?;
    Api::<Namespace>::all(admin.clone()).create(&pp, &n).await?;
    let pg = |name: &str, queue: &str| -> support::Result<PodGroup> {
        Ok(serde_json::from_value(json!({
            "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name}, "spec": {"minMember": 1, "queue": queue}
        }))?)
    };
    let stored = Api::<PodGroup>::namespaced(admin.clone(), &annotated).create(&pp, &pg("pg", "default")?).await?;
    assert_eq!(stored.spec.queue.as_deref(), Some("team"), "the namespace's scheduling.volcano.sh/queue-name");
    let pgs: Api<PodGroup> = Api::namespaced(admin.clone(), &ns);
    let msg = refusal("a PodGroup of a missing queue", pgs.create(&pp, &pg("lost", "nowhere")?).await)?;
    assert_denied("a PodGroup of a missing queue", &msg, "validatepodgroup.volcano.sh", "unable to find queue");
    let msg = refusal("a PodGroup of a closed queue", pgs.create(&pp, &pg("closed", "shut")?).await)?;
    assert_denied(
        "a PodGroup of a closed queue",
        &msg,
        "validatepodgroup.volcano.sh",
        "can only submit PodGroup to queue with state `Open`",
    );

    // /pods/mutate (no resource groups: unchanged) and /pods/validate (JDB annotations).
    let pod = |name: &str, ann: Value| -> support::Result<Pod> {
        Ok(serde_json::from_value(json!({
            "metadata": {"name": name, "annotations": ann},
            "spec": {"schedulerName": "volcano", "containers": [{"name": "c", "image": "busybox"}]}
        }))?)
    };
    let pods: Api<Pod> = Api::namespaced(admin.clone(), &ns);
    pods.create(&pp, &pod("fine", json!({"volcano.sh/jdb-min-available": "2"}))?).await?;
    let msg = refusal("a JDB of 0", pods.create(&pp, &pod("zero", json!({"volcano.sh/jdb-min-available": "0"}))?).await)?;
    assert_denied(
        "a JDB of 0",
        &msg,
        "validatepod.volcano.sh",
        "for volcano.sh/jdb-min-available, it must be a positive integer",
    );
    let both = json!({"volcano.sh/jdb-min-available": "1", "volcano.sh/jdb-max-unavailable": "1"});
    let msg = refusal("two JDB annotations", pods.create(&pp, &pod("both", both)?).await)?;
    assert_denied("two JDB annotations", &msg, "validatepod.volcano.sh", "not allow configure multiple annotations");

    // /pods/mutate: the resource group's node selector and toleration; the conf reloaded.
    let grouped = |name: &str| pod(name, json!({"volcano.sh/resource-group": "gpu"}));
    let nodetype = |p: &Pod| -> Option<String> { p.spec.as_ref()?.node_selector.as_ref()?.get("volcano.sh/nodetype").cloned() };
    let p = pods.create(&pp, &grouped("grouped")?).await?;
    assert_eq!(nodetype(&p).as_deref(), Some("gpu"), "{:?}", p.spec);
    let tolerates = p
        .spec
        .as_ref()
        .and_then(|s| s.tolerations.as_ref())
        .is_some_and(|t| t.iter().any(|t| t.key.as_deref() == Some("nvidia.com/gpu")));
    assert!(tolerates, "the group's toleration: {:?}", p.spec);
    assert_eq!(nodetype(&pods.get("fine").await?), None, "a pod outside every group is not patched");
    std::fs::write(&conf_path, conf("gpu-a100"))?;
    wait_log(&manager, &format!("admission conf {} reloaded", conf_path.display())).await?;
    wait_for("the reloaded conf applied", WAIT, || async {
        let name = format!("grouped-{}", std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_millis());
        let p = pods.create(&pp, &grouped(&name)?).await?;
        Ok((nodetype(&p).as_deref() == Some("gpu-a100")).then_some(()))
    })
    .await?;

    // /pods/mutate with SchedulingGatesQueueAdmission: an opted-in pod gets Volcano's scheduling
    // gate from the webhook (its answer, asked directly) and is admitted through the server, which
    // at v1.20 has no spec.schedulingGates (1.26) and drops the gate: the pod is stored ungated
    // and nothing else of it changes.
    let opt_in = json!({"scheduling.volcano.sh/queue-allocation-gate": "true"});
    let review = json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {
            "uid": "u-gate", "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "name": "opted-in", "namespace": ns, "operation": "CREATE", "userInfo": {},
            "object": serde_json::to_value(pod("opted-in", opt_in.clone())?)?, "oldObject": null, "dryRun": false,
        }
    });
    let (code, body) = post(&format!("{base}/pods/mutate"), &certs.join("ca.crt"), &review.to_string())?;
    assert_eq!(code, 200, "{body}");
    let answer: Value = serde_json::from_str(&body)?;
    let patch = base64::engine::general_purpose::STANDARD.decode(answer["response"]["patch"].as_str().unwrap_or(""))?;
    let patch: Value = serde_json::from_slice(&patch)?;
    assert_eq!(
        patch,
        json!([{"op": "add", "path": "/spec/schedulingGates", "value": [{"name": "scheduling.volcano.sh/queue-allocation-gate"}]}]),
        "{body}"
    );
    let stored = pods.create(&pp, &pod("opted-in", opt_in)?).await?;
    assert!(
        stored.spec.as_ref().and_then(|s| s.scheduling_gates.as_ref()).is_none_or(|g| g.is_empty()),
        "a v1.20 server keeps no scheduling gate: {:?}",
        stored.spec
    );
    assert_eq!(stored.spec.as_ref().and_then(|s| s.scheduler_name.as_deref()), Some("volcano"));

    // /hypernodes/validate.
    let h: HyperNode = serde_json::from_value(json!({
        "apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", "metadata": {"name": "s0"},
        "spec": {"tier": 1, "members": [{"type": "Node", "selector": {"regexMatch": {"pattern": "node-[0-9"}}}]}
    }))?;
    let msg = refusal("a bad regex", Api::<HyperNode>::all(admin.clone()).create(&pp, &h).await)?;
    assert_denied("a bad regex", &msg, "validatehypernodes.volcano.sh", "member regexMatch pattern is invalid");

    // /cronjobs/validate: a good schedule and time zone admitted, a bad one refused.
    let cron = |name: &str, schedule: &str, tz: &str| -> support::Result<CronJob> {
        Ok(serde_json::from_value(json!({
            "apiVersion": "batch.volcano.sh/v1alpha1", "kind": "CronJob", "metadata": {"name": name},
            "spec": {"schedule": schedule, "timeZone": tz, "jobTemplate": {"spec": {"tasks": [{"name": "w", "replicas": 1, "template": template()}]}}}
        }))?)
    };
    let crons: Api<CronJob> = Api::namespaced(admin.clone(), &ns);
    crons.create(&pp, &cron("nightly", "0 2 * * *", "Europe/Berlin")?).await?;
    for (name, schedule, tz, text) in [
        ("bad-hour", "0 25 * * *", "UTC", "schedule is not a valid cron expression"),
        ("with-tz", "CRON_TZ=UTC 0 2 * * *", "UTC", "schedule should not contain TZ or CRON_TZ"),
        ("mars", "@daily", "Mars/Olympus", "invalid timeZone"),
    ] {
        let msg = refusal(name, crons.create(&pp, &cron(name, schedule, tz)?).await)?;
        assert_denied(name, &msg, "validatecronjob.volcano.sh", text);
    }

    // A malformed AdmissionReview: a clean answer, and the manager keeps serving.
    let (code, body) = post(&format!("{base}/jobs/validate"), &certs.join("ca.crt"), "{not json")?;
    assert_eq!(code, 200, "{body}");
    let answer: Value = serde_json::from_str(&body)?;
    assert_eq!(answer["response"]["allowed"], false, "{body}");
    assert!(
        answer["response"]["status"]["message"].as_str().unwrap_or("").starts_with("cannot decode the AdmissionReview"),
        "{body}"
    );
    assert!(manager.running(), "still running after a malformed review");

    // A garbage certificate on reload: the last good one is still served.
    std::fs::write(certs.join("tls.crt"), "not a certificate\n")?;
    wait_log(&manager, "webhook certificate not reloaded").await?;
    let q: Queue = serde_json::from_value(
        json!({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "after-garbage"}, "spec": {}}),
    )?;
    assert_eq!(queues.create(&pp, &q).await?.spec.reclaimable, Some(true), "admitted and mutated with the last good certificate");
    // A new pair from the same CA: loaded, and the apiserver (same caBundle) still trusts it.
    let next = server.dir().join("admission-certs-next");
    make_certs(&next, Some(&certs))?;
    std::fs::copy(next.join("tls.key"), certs.join("tls.key"))?;
    std::fs::copy(next.join("tls.crt"), certs.join("tls.crt"))?;
    wait_log(&manager, "webhook certificate reloaded").await?;
    let q: Queue = serde_json::from_value(
        json!({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "after-rotation"}, "spec": {}}),
    )?;
    assert_eq!(queues.create(&pp, &q).await?.spec.reclaimable, Some(true), "admitted and mutated with the new certificate");

    let refused = server.audit()?.by_user(ADMISSION_USER).refused();
    assert!(refused.is_empty(), "requests outside deploy/admission.yaml's ClusterRole: {refused:?}");

    // The manager down: failurePolicy Fail refuses, Ignore admits without the mutation.
    assert_eq!(manager.terminate(), Some(0), "log:\n{}", manager.log_text());
    let q = |name: &str| -> support::Result<Queue> {
        Ok(serde_json::from_value(
            json!({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name}, "spec": {}}),
        )?)
    };
    let msg = refusal("a Queue with the webhook down", queues.create(&pp, &q("down")?).await)?;
    assert!(msg.contains("failed calling webhook \"mutatequeue.volcano.sh\""), "{msg}");
    let queue_hooks = [("volcano-admission-service-queues-mutate", true), ("volcano-admission-service-queues-validate", false)];
    set_failure_policy(&admin, &queue_hooks, "Ignore").await?;
    // The server reads webhook configurations through an informer: until it has seen the
    // change, a create still meets `Fail` (on a busy machine, for a moment). Retry those only.
    let ignored = q("ignored")?;
    let admitted = wait_for("a Queue admitted once the server uses failurePolicy Ignore", WAIT, || async {
        match queues.create(&pp, &ignored).await {
            Ok(created) => Ok(Some(created)),
            Err(e) if e.to_string().contains("failed calling webhook") => Ok(None),
            Err(e) => Err(e.into()),
        }
    })
    .await?;
    // The Queue CRD's schema defaults weight to 1; `reclaimable` is the webhook's alone.
    assert_eq!(admitted.spec.reclaimable, None, "admitted unmutated: {admitted:?}");
    Ok(())
}

#[test]
fn a_missing_or_bad_certificate_at_start_is_a_clear_error() -> support::Result<()> {
    let dir = std::env::temp_dir().join(format!("basalt-webhook-certs-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let run = |cert: &Path, key: &Path| -> support::Result<(Option<i32>, String)> {
        let out = Command::new(env!("CARGO_BIN_EXE_basalt"))
            .arg("webhook-manager")
            .arg(format!("--tls-cert-file={}", cert.display()))
            .arg(format!("--tls-private-key-file={}", key.display()))
            .arg("--webhook-url=https://127.0.0.1:1")
            .arg("--kubeconfig=/nonexistent")
            .output()?;
        Ok((out.status.code(), String::from_utf8_lossy(&out.stderr).to_string()))
    };
    let missing = dir.join("missing.crt");
    let (code, err) = run(&missing, &dir.join("missing.key"))?;
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains(&format!("--tls-cert-file {}", missing.display())), "names the flag and file: {err}");
    let garbage = dir.join("garbage.crt");
    std::fs::write(&garbage, "not a certificate\n")?;
    let (code, err) = run(&garbage, &dir.join("missing.key"))?;
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("no PEM certificate") || err.contains("not a PEM certificate"), "{err}");
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
