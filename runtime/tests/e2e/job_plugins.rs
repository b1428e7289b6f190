//! Volcano's job plugins in `basalt controller` against the real test apiserver, with `basalt
//! scheduler` and the test kubelet beside it; the controller runs with the ServiceAccount and
//! ClusterRole of `deploy/controller.yaml`, and the audit log must show none of its requests
//! refused.
//!
//! * An `mpi` job (which brings `svc` and `ssh`, as Volcano's webhook adds them) with `env`: the
//!   headless Service, the hosts ConfigMap, the NetworkPolicy and the ssh Secret exist, owned by
//!   the Job and marked in `status.controlledResources`; every pod has its hostname, subdomain,
//!   `VC_TASK_INDEX`, the hosts env and mounts, the master `MPI_HOST`. A `TerminateJob` Command
//!   (a whole-job kill, Volcano's `OnJobDelete`) deletes the four objects and the marks.
//! * A `svc --disable-network-policy` job: no NetworkPolicy. Deleting that Job leaves its
//!   Service and ConfigMap to the cluster's garbage collector (they name the Job as controller
//!   owner, as in Volcano); this test server runs none, so the test checks the owner reference.
//! * An unknown plugin name: the job still runs and the controller's log names job and plugin.
//! * A `tensorflow` job (ps 1, worker 2): every pod's containers carry `TF_CONFIG`, Volcano's
//!   cluster spec with the pod's own role and index; the svc plugin came with it.
//! * A `ray` job: the head Service `<job>-head-svc` with the gcs/dashboard/client-server ports,
//!   owned by the Job; the head container runs `ray start --head …`, the workers join it.
//! * An `hcclrank` job: masters ranked by index, workers after them (`hccl/rankIndex`).
//! * Job volumes: a `volumeClaim` entry gets a PVC `<job>-pvc-<12>` owned by the Job, its name
//!   written into `spec.volumes`, `volume-pvc-<name>` in `controlledResources`, and every pod
//!   mounts it; a `volumeClaimName` that does not exist holds the job `Pending` with no pods
//!   and a `PVCError` Event until the claim is created.
//! * A `partitionPolicy` task (4 workers in partitions of 2, at least 1, hard tier 1): pods
//!   labelled `volcano.sh/partition-id` 0,0,1,1, the PodGroup's `subGroupPolicy` and
//!   `minTaskMember`; a pod of partition 1 deleted (`PodEvicted` → `RestartPartition`) restarts
//!   both pods of partition 1 and leaves partition 0's pods alone.

use crate::{e2e, support};

use basalt_runtime::crd::{Command, Job, PodGroup};
use e2e::stack::{ControllerStack, StackSpec, QPS};
use k8s_openapi::api::core::v1::{ConfigMap, Container, Event, PersistentVolumeClaim, Pod, Secret, Service};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use kube::api::{DeleteParams, ListParams, PostParams};
use kube::{Api, Client, ResourceExt};
use std::time::Duration;
use support::{fresh_namespace, wait_for};

const WAIT: Duration = Duration::from_secs(90);

fn job_yaml(name: &str, plugins: &str, tasks: &[(&str, i32)]) -> String {
    let mut t = String::new();
    for (task, replicas) in tasks {
        t.push_str(&format!(
            "  - name: {task}\n    replicas: {replicas}\n    template:\n      spec:\n        restartPolicy: Never\n        \
             containers: [{{name: c, image: busybox, resources: {{requests: {{cpu: 100m, memory: 64Mi}}}}}}]\n        \
             initContainers: [{{name: setup, image: busybox}}]\n"
        ));
    }
    format!(
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {{name: {name}}}\nspec:\n  schedulerName: volcano\n  \
         plugins: {plugins}\n  tasks:\n{t}"
    )
}

async fn create_job(client: &Client, ns: &str, yaml: &str) -> support::Result<Job> {
    let job: Job = serde_yaml::from_str(yaml).map_err(|e| format!("job YAML: {e}\n{yaml}"))?;
    Ok(Api::<Job>::namespaced(client.clone(), ns).create(&PostParams::default(), &job).await?)
}

async fn wait_phase(client: &Client, ns: &str, name: &str, want: &str) -> support::Result<Job> {
    wait_for(&format!("Job {ns}/{name} {want}"), WAIT, || async {
        let j = Api::<Job>::namespaced(client.clone(), ns).get_opt(name).await?;
        Ok(j.filter(|j| j.status.as_ref().and_then(|s| s.state.phase.as_deref()) == Some(want)))
    })
    .await
}

async fn get<K>(client: &Client, ns: &str, name: &str) -> support::Result<Option<K>>
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
{
    Ok(Api::<K>::namespaced(client.clone(), ns).get_opt(name).await?)
}

/// `obj` names `job` as its controller owner.
fn owned_by(obj: &impl ResourceExt, job: &Job) -> bool {
    obj.owner_references().iter().any(|o| o.kind == "Job" && o.controller == Some(true) && Some(&o.uid) == job.uid().as_ref())
}

fn env_names(c: &Container) -> Vec<String> {
    c.env.iter().flatten().map(|e| e.name.clone()).collect()
}

fn env_value(c: &Container, name: &str) -> Option<String> {
    c.env.iter().flatten().find(|e| e.name == name).and_then(|e| e.value.clone())
}

fn mounts(c: &Container) -> Vec<String> {
    c.volume_mounts.iter().flatten().map(|m| m.mount_path.clone()).collect()
}

/// A `TerminateJob` Command for `job`, as `vcctl job terminate` issues it.
async fn terminate(client: &Client, ns: &str, job: &Job) -> support::Result<()> {
    let mut c = Command::for_object(ns, job, "TerminateJob");
    c.spec.reason = Some("test".into());
    Api::<Command>::namespaced(client.clone(), ns).create(&PostParams::default(), &c).await?;
    Ok(())
}

/// The mpi job: objects, pods, then `TerminateJob` deletes the objects.
async fn mpi_job(client: Client) -> support::Result<()> {
    let ns = fresh_namespace(&client, "plug-mpi").await?;
    let yaml = job_yaml("lm", "{mpi: [], env: [], svc: [--publish-not-ready-addresses]}", &[("master", 1), ("worker", 2)]);
    create_job(&client, &ns, &yaml).await?;
    let job = wait_phase(&client, &ns, "lm", "Running").await?;
    let marks = job.status.clone().unwrap_or_default().controlled_resources;
    for p in ["env", "mpi", "ssh", "svc"] {
        assert_eq!(marks.get(&format!("plugin-{p}")).map(String::as_str), Some(p), "controlledResources: {marks:?}");
    }

    let svc: Service = get(&client, &ns, "lm").await?.ok_or("no Service lm")?;
    let spec = svc.spec.clone().unwrap_or_default();
    assert_eq!(spec.cluster_ip.as_deref(), Some("None"), "headless");
    assert_eq!(spec.publish_not_ready_addresses, Some(true));
    let sel = spec.selector.unwrap_or_default();
    assert_eq!(sel.get("volcano.sh/job-name").map(String::as_str), Some("lm"));
    assert_eq!(sel.get("volcano.sh/job-namespace"), Some(&ns));
    assert!(owned_by(&svc, &job));

    let cm: ConfigMap = get(&client, &ns, "lm-svc").await?.ok_or("no ConfigMap lm-svc")?;
    let data = cm.data.clone().unwrap_or_default();
    assert_eq!(data.get("worker.host").map(String::as_str), Some("lm-worker-0.lm\nlm-worker-1.lm"));
    assert_eq!(data.get("VC_MASTER_HOSTS").map(String::as_str), Some("lm-master-0.lm"));
    assert_eq!(data.get("VC_WORKER_NUM").map(String::as_str), Some("2"));
    assert!(owned_by(&cm, &job));

    let np: NetworkPolicy = get(&client, &ns, "lm").await?.ok_or("no NetworkPolicy lm")?;
    assert!(owned_by(&np, &job));

    let secret: Secret = get(&client, &ns, "lm-ssh").await?.ok_or("no Secret lm-ssh")?;
    let sd = secret.data.clone().unwrap_or_default();
    let text = |k: &str| sd.get(k).map(|b| String::from_utf8_lossy(&b.0).to_string()).unwrap_or_default();
    assert!(text("id_rsa").starts_with("-----BEGIN RSA PRIVATE KEY-----"), "id_rsa");
    assert!(text("id_rsa.pub").starts_with("ssh-rsa "), "id_rsa.pub");
    assert_eq!(text("authorized_keys"), text("id_rsa.pub"));
    assert!(text("config").contains("Host lm-worker-1\n  HostName lm-worker-1.lm\n"), "config: {}", text("config"));
    assert!(owned_by(&secret, &job));

    let pods = e2e::pods(&client, &ns).await?;
    assert_eq!(pods.keys().collect::<Vec<_>>(), ["lm-master-0", "lm-worker-0", "lm-worker-1"]);
    for (name, p) in &pods {
        let spec = p.spec.clone().unwrap_or_default();
        assert_eq!(spec.hostname.as_deref(), Some(name.as_str()));
        assert_eq!(spec.subdomain.as_deref(), Some("lm"));
        let c = &spec.containers[0];
        let idx = name.rsplit('-').next().unwrap_or_default();
        assert_eq!(env_value(c, "VC_TASK_INDEX").as_deref(), Some(idx), "{name}");
        assert_eq!(env_value(c, "VK_TASK_INDEX").as_deref(), Some(idx), "{name}");
        let names = env_names(c);
        for want in ["VC_MASTER_HOSTS", "VC_MASTER_NUM", "VC_WORKER_HOSTS", "VC_WORKER_NUM"] {
            assert!(names.iter().any(|n| n == want), "{name}: {want} in {names:?}");
        }
        let m = mounts(c);
        assert!(m.iter().any(|p| p == "/etc/volcano") && m.iter().any(|p| p == "/root/.ssh"), "{name}: {m:?}");
        assert!(mounts(&spec.init_containers.clone().unwrap_or_default()[0]).iter().any(|p| p == "/etc/volcano"));
        assert!(c.ports.iter().flatten().any(|p| p.container_port == 22), "{name}: ssh port opened");
        let host = env_value(c, "MPI_HOST");
        if name == "lm-master-0" {
            assert_eq!(host.as_deref(), Some("lm-worker-0.lm,lm-worker-1.lm"));
        } else {
            assert_eq!(host, None, "{name}");
        }
    }

    terminate(&client, &ns, &job).await?;
    let done = wait_phase(&client, &ns, "lm", "Terminated").await?;
    wait_for("the plugins' objects deleted by the whole-job kill", WAIT, || async {
        let left = [
            get::<Service>(&client, &ns, "lm").await?.is_some(),
            get::<ConfigMap>(&client, &ns, "lm-svc").await?.is_some(),
            get::<NetworkPolicy>(&client, &ns, "lm").await?.is_some(),
            get::<Secret>(&client, &ns, "lm-ssh").await?.is_some(),
        ];
        Ok((!left.contains(&true)).then_some(()))
    })
    .await?;
    let marks = wait_for("controlledResources cleared", WAIT, || async {
        let j: Option<Job> = get(&client, &ns, "lm").await?;
        let m = j.and_then(|j| j.status).map(|s| s.controlled_resources).unwrap_or_default();
        Ok(m.keys().all(|k| k == "plugin-env" || k == "plugin-mpi").then_some(m))
    })
    .await?;
    assert!(!marks.contains_key("plugin-svc") && !marks.contains_key("plugin-ssh"), "{marks:?} after {:?}", done.status);
    Ok(())
}

/// `svc --disable-network-policy`, then the Job deleted: owner references, no NetworkPolicy.
async fn svc_without_network_policy(client: Client) -> support::Result<()> {
    let ns = fresh_namespace(&client, "plug-svc").await?;
    create_job(&client, &ns, &job_yaml("web", "{svc: [--disable-network-policy]}", &[("ps", 1)])).await?;
    let job = wait_phase(&client, &ns, "web", "Running").await?;
    let svc: Service = get(&client, &ns, "web").await?.ok_or("no Service web")?;
    // false is the default: the server omits it
    assert_ne!(svc.spec.and_then(|s| s.publish_not_ready_addresses), Some(true));
    assert!(get::<NetworkPolicy>(&client, &ns, "web").await?.is_none(), "--disable-network-policy");
    let p: Pod = get(&client, &ns, "web-ps-0").await?.ok_or("no pod web-ps-0")?;
    let spec = p.spec.unwrap_or_default();
    assert_eq!((spec.hostname.as_deref(), spec.subdomain.as_deref()), (Some("web-ps-0"), Some("web")));
    Api::<Job>::namespaced(client.clone(), &ns).delete("web", &DeleteParams::default()).await?;
    wait_for("Job web gone", WAIT, || async { Ok(get::<Job>(&client, &ns, "web").await?.is_none().then_some(())) }).await?;
    // No garbage collector runs here: what a cluster's would delete names the Job as owner.
    let cm: ConfigMap = get(&client, &ns, "web-svc").await?.ok_or("no ConfigMap web-svc")?;
    assert!(owned_by(&cm, &job), "the ConfigMap is the garbage collector's to delete with the Job");
    let svc: Service = get(&client, &ns, "web").await?.ok_or("no Service web")?;
    assert!(owned_by(&svc, &job));
    Ok(())
}

/// An unknown plugin: the job runs without it.
async fn unknown_plugin(client: Client) -> support::Result<()> {
    let ns = fresh_namespace(&client, "plug-unknown").await?;
    create_job(&client, &ns, &job_yaml("odd", "{env: [], horovod: []}", &[("w", 1)])).await?;
    let job = wait_phase(&client, &ns, "odd", "Running").await?;
    let marks = job.status.unwrap_or_default().controlled_resources;
    assert_eq!(marks.keys().collect::<Vec<_>>(), ["plugin-env"], "only the known plugin is marked");
    Ok(())
}

/// A tensorflow job: `TF_CONFIG` on every pod.
async fn tensorflow_job(client: Client) -> support::Result<()> {
    let ns = fresh_namespace(&client, "plug-tf").await?;
    create_job(&client, &ns, &job_yaml("tf", "{tensorflow: [--port=2223]}", &[("ps", 1), ("worker", 2)])).await?;
    let job = wait_phase(&client, &ns, "tf", "Running").await?;
    let marks = job.status.unwrap_or_default().controlled_resources;
    assert!(marks.contains_key("plugin-tensorflow") && marks.contains_key("plugin-svc"), "{marks:?}");
    let pods = e2e::pods(&client, &ns).await?;
    assert_eq!(pods.len(), 3);
    let cluster = r#"{"cluster":{"ps":["tf-ps-0.tf:2223"],"worker":["tf-worker-0.tf:2223","tf-worker-1.tf:2223"]}"#;
    for (name, p) in &pods {
        let c = &p.spec.clone().unwrap_or_default().containers[0];
        let tf = env_value(c, "TF_CONFIG").ok_or(format!("{name}: no TF_CONFIG"))?;
        let (role, index) = name.strip_prefix("tf-").and_then(|r| r.split_once('-')).ok_or("pod name")?;
        assert_eq!(tf, format!(r#"{cluster},"task":{{"type":"{role}","index":{index}}}}}"#), "{name}");
    }
    Ok(())
}

/// A ray job: the head Service and the commands.
async fn ray_job(client: Client) -> support::Result<()> {
    let ns = fresh_namespace(&client, "plug-ray").await?;
    let yaml = job_yaml("rc", "{ray: [--headContainer=c, --workerContainer=c]}", &[("head", 1), ("worker", 2)]);
    create_job(&client, &ns, &yaml).await?;
    let job = wait_phase(&client, &ns, "rc", "Running").await?;
    let svc: Service = get(&client, &ns, "rc-head-svc").await?.ok_or("no Service rc-head-svc")?;
    assert!(owned_by(&svc, &job));
    let spec = svc.spec.unwrap_or_default();
    let ports: Vec<(String, i32)> = spec.ports.iter().flatten().map(|p| (p.name.clone().unwrap_or_default(), p.port)).collect();
    assert_eq!(ports, [("gcs".to_string(), 6379), ("dashboard".into(), 8265), ("client-server".into(), 10001)]);
    assert_eq!(spec.selector.unwrap_or_default().get("volcano.sh/task-spec").map(String::as_str), Some("head"));
    let pods = e2e::pods(&client, &ns).await?;
    let cmd = |name: &str| pods[name].spec.clone().unwrap_or_default().containers[0].command.clone().unwrap_or_default();
    assert!(cmd("rc-head-0")[2].starts_with("ray start --head --block"), "{:?}", cmd("rc-head-0"));
    assert_eq!(cmd("rc-worker-1")[2], "ray start --block --address=rc-head-0.rc:6379");
    Ok(())
}

/// An hcclrank job: ranks as annotations.
async fn hcclrank_job(client: Client) -> support::Result<()> {
    let ns = fresh_namespace(&client, "plug-hccl").await?;
    create_job(&client, &ns, &job_yaml("hc", "{hcclrank: []}", &[("master", 2), ("worker", 2)])).await?;
    wait_phase(&client, &ns, "hc", "Running").await?;
    let pods = e2e::pods(&client, &ns).await?;
    let rank = |name: &str| pods[name].annotations().get("hccl/rankIndex").cloned();
    let got: Vec<Option<String>> = ["hc-master-0", "hc-master-1", "hc-worker-0", "hc-worker-1"].iter().map(|n| rank(n)).collect();
    assert_eq!(got, ["0", "1", "2", "3"].map(|r| Some(r.to_string())));
    Ok(())
}

/// Job volumes: a created claim, and a named claim that does not exist yet.
async fn job_volumes(client: Client) -> support::Result<()> {
    let ns = fresh_namespace(&client, "plug-vol").await?;
    let mut yaml = job_yaml("vj", "{}", &[("worker", 2)]);
    yaml.push_str(
        "  volumes:\n  - mountPath: /data\n    volumeClaim:\n      accessModes: [ReadWriteOnce]\n      \
         resources: {requests: {storage: 1Gi}}\n",
    );
    create_job(&client, &ns, &yaml).await?;
    let claims = Api::<PersistentVolumeClaim>::namespaced(client.clone(), &ns);
    let pvc =
        wait_for("the job's PVC", WAIT, || async { Ok(claims.list(&ListParams::default()).await?.items.into_iter().next()) })
            .await?;
    let name = pvc.name_any();
    assert!(name.starts_with("vj-pvc-") && name.len() == "vj-pvc-".len() + 12, "{name}");
    let job = wait_for("the claim name in spec.volumes", WAIT, || async {
        let j: Option<Job> = get(&client, &ns, "vj").await?;
        Ok(j.filter(|j| j.spec.volumes[0].volume_claim_name.is_some()))
    })
    .await?;
    assert_eq!(job.spec.volumes[0].volume_claim_name.as_deref(), Some(name.as_str()));
    assert!(owned_by(&pvc, &job), "the PVC is the garbage collector's to delete with the Job");
    let pods = wait_for("two pods", WAIT, || async {
        let p = e2e::pods(&client, &ns).await?;
        Ok((p.len() == 2).then_some(p))
    })
    .await?;
    for (pname, p) in &pods {
        let spec = p.spec.clone().unwrap_or_default();
        let vol =
            spec.volumes.iter().flatten().find(|v| v.persistent_volume_claim.is_some()).ok_or(format!("{pname}: no claim"))?;
        assert_eq!(vol.persistent_volume_claim.as_ref().map(|c| c.claim_name.as_str()), Some(name.as_str()), "{pname}");
        assert!(mounts(&spec.containers[0]).iter().any(|m| m == "/data"), "{pname}");
    }
    let marks = wait_for("volume-pvc mark", WAIT, || async {
        let j: Option<Job> = get(&client, &ns, "vj").await?;
        let m = j.and_then(|j| j.status).map(|s| s.controlled_resources).unwrap_or_default();
        Ok(m.contains_key(&format!("volume-pvc-{name}")).then_some(m))
    })
    .await?;
    assert_eq!(marks[&format!("volume-pvc-{name}")], name);

    let mut yaml = job_yaml("named", "{}", &[("worker", 1)]);
    yaml.push_str("  volumes:\n  - mountPath: /cache\n    volumeClaimName: later\n");
    create_job(&client, &ns, &yaml).await?;
    let events = Api::<Event>::namespaced(client.clone(), &ns);
    let ev = wait_for("PVCError on Job named", WAIT, || async {
        let l = events.list(&ListParams::default()).await?;
        Ok(l.items
            .into_iter()
            .find(|e| e.involved_object.name.as_deref() == Some("named") && e.reason.as_deref() == Some("PVCError")))
    })
    .await?;
    assert!(ev.message.unwrap_or_default().contains("pvc later is not found"), "the event names the claim");
    assert!(!e2e::pods(&client, &ns).await?.keys().any(|k| k.starts_with("named-")), "no pod before the claim exists");
    let later: PersistentVolumeClaim = serde_yaml::from_str(
        "metadata: {name: later}\nspec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n",
    )?;
    claims.create(&PostParams::default(), &later).await?;
    wait_for("the pod of Job named, once its claim exists", WAIT, || async {
        Ok(e2e::pods(&client, &ns).await?.contains_key("named-worker-0").then_some(()))
    })
    .await?;
    Ok(())
}

/// A partitioned task: labels, sub-groups, and RestartPartition.
async fn partitioned_job(client: Client) -> support::Result<()> {
    let ns = fresh_namespace(&client, "plug-part").await?;
    let mut yaml = job_yaml("pt", "{}", &[("worker", 4)]);
    yaml = yaml.replace(
        "  - name: worker\n    replicas: 4\n",
        "  - name: worker\n    replicas: 4\n    partitionPolicy: {totalPartitions: 2, partitionSize: 2, minPartitions: 1, \
         networkTopology: {mode: hard, highestTierAllowed: 1}}\n    policies: [{event: PodEvicted, action: RestartPartition}]\n",
    );
    create_job(&client, &ns, &yaml).await?;
    let job = wait_phase(&client, &ns, "pt", "Running").await?;
    let pods = e2e::pods(&client, &ns).await?;
    let ids: Vec<(String, String)> =
        pods.iter().map(|(n, p)| (n.clone(), p.labels().get("volcano.sh/partition-id").cloned().unwrap_or_default())).collect();
    assert_eq!(
        ids,
        [("pt-worker-0", "0"), ("pt-worker-1", "0"), ("pt-worker-2", "1"), ("pt-worker-3", "1")]
            .map(|(a, b)| (a.to_string(), b.to_string()))
    );
    let pg_name = format!("pt-{}", job.uid().unwrap_or_default());
    let pg: PodGroup = get(&client, &ns, &pg_name).await?.ok_or("no PodGroup")?;
    let sub = pg.spec.sub_group_policy.clone().ok_or("no subGroupPolicy")?;
    assert_eq!(sub[0]["name"], "worker");
    assert_eq!((sub[0]["subGroupSize"].as_i64(), sub[0]["minSubGroups"].as_i64()), (Some(2), Some(1)));
    assert_eq!(sub[0]["matchLabelKeys"][0], "volcano.sh/partition-id");
    assert_eq!(sub[0]["networkTopology"]["mode"], "hard");
    assert_eq!(pg.spec.min_task_member.unwrap_or_default().get("worker"), Some(&2), "minPartitions × partitionSize");

    let uid = |p: &Pod| p.uid().unwrap_or_default();
    let before: std::collections::BTreeMap<String, String> = pods.iter().map(|(n, p)| (n.clone(), uid(p))).collect();
    Api::<Pod>::namespaced(client.clone(), &ns).delete("pt-worker-2", &DeleteParams::default()).await?;
    let after = wait_for("partition 1 restarted", WAIT, || async {
        let now = e2e::pods(&client, &ns).await?;
        let fresh = |n: &str| now.get(n).is_some_and(|p| uid(p) != before[n] && p.metadata.deletion_timestamp.is_none());
        Ok((fresh("pt-worker-2") && fresh("pt-worker-3")).then_some(now))
    })
    .await?;
    for n in ["pt-worker-0", "pt-worker-1"] {
        assert_eq!(after.get(n).map(uid).as_deref(), Some(before[n].as_str()), "{n} of partition 0 is left alone");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn job_plugins_create_their_objects_and_mutate_pods() -> support::Result<()> {
    let stack = ControllerStack::start(StackSpec {
        nodes: 2,
        cpu: "16",
        memory: "64Gi",
        schedule_period: "500ms",
        kubelet: true,
        qps: QPS,
        controller_args: &[],
    })
    .await?;
    let (admin, controller) = (&stack.admin, &stack.controller);
    let results = tokio::join!(
        mpi_job(admin.clone()),
        svc_without_network_policy(admin.clone()),
        unknown_plugin(admin.clone()),
        tensorflow_job(admin.clone()),
        ray_job(admin.clone()),
        hcclrank_job(admin.clone()),
        job_volumes(admin.clone()),
        partitioned_job(admin.clone()),
    );
    for (name, r) in [
        ("mpi job", results.0),
        ("svc without NetworkPolicy", results.1),
        ("unknown plugin", results.2),
        ("tensorflow job", results.3),
        ("ray job", results.4),
        ("hcclrank job", results.5),
        ("job volumes", results.6),
        ("partitioned job", results.7),
    ] {
        if let Err(e) = r {
            panic!("{name}: {e}\ncontroller log:\n{}", controller.log_text());
        }
    }
    let log = controller.log_text();
    assert!(log.contains("spec.plugins.horovod: unknown job plugin"), "the unknown plugin is reported:\n{log}");
    stack.assert_within_role()?;
    stack.stop(60).await
}
