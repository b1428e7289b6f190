//! The live scheduler's cluster copy (`live::mirror::Mirror`) at scale, without a server
//! (issue 29, "the live path at that size"): what the first list of `--nodes` Nodes,
//! `--pods` Pods and their PodGroups costs in time and memory, what a relist of all of them
//! costs on top (it must not double the memory), and the session open after a 1 % change
//! applied as watch events. A bench: it prints numbers and fails only when the mirror loses or
//! refuses an object, never on a speed.
//!
//! ```text
//! cargo run --release -p basalt-runtime --example mirror_list -- --nodes 100000 --pods 1000000 [--output json]
//! ```
//!
//! The objects are shaped like a real cluster's (kubelet-reported node status with images and
//! conditions; pods of Volcano Jobs with owner references, labels, a container with requests
//! and limits, environment, mounts, the default tolerations and a Running status), 90 % of the
//! pods bound round-robin, the rest pending in PodGroups of 10. The watch events go through
//! `Mirror::handle` one object at a time, as kube-rs's watcher hands them over page by page
//! (500 objects a page, `watcher::Config`'s default, which the live watches keep), so the
//! transient cost of a page is not included; the JSON decoding of a page is not timed here.
//! Memory is the process's `VmRSS` (after) and `VmHWM` (peak) from `/proc/self/status`, with
//! the scheduler's allocator (mimalloc).

use basalt_runtime::live::mirror::{Kind, Mirror, Object, WatchEvent};
use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::DynamicObject;
use std::collections::BTreeMap;
use std::time::Instant;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `VmRSS` and `VmHWM` of this process, bytes.
fn memory() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn quantities(pairs: &[(&str, &str)]) -> BTreeMap<String, Quantity> {
    pairs.iter().map(|(k, v)| (k.to_string(), Quantity(v.to_string()))).collect()
}

fn node(i: usize) -> Object {
    let name = format!("node-{i:06}");
    let capacity = quantities(&[("cpu", "32"), ("memory", "131072Mi"), ("pods", "110"), ("ephemeral-storage", "500Gi")]);
    let images = (0..10)
        .map(|k| k8s::ContainerImage {
            names: Some(vec![
                format!("registry.example.com/team/image-{k}@sha256:{k:064x}"),
                format!("registry.example.com/team/image-{k}:v1"),
            ]),
            size_bytes: Some(200_000_000 + k as i64),
        })
        .collect();
    let conditions = ["MemoryPressure", "DiskPressure", "PIDPressure", "Ready"]
        .iter()
        .map(|t| k8s::NodeCondition {
            type_: t.to_string(),
            status: if *t == "Ready" { "True" } else { "False" }.into(),
            reason: Some(format!("Kubelet{t}")),
            message: Some(format!("kubelet reports {t}")),
            ..Default::default()
        })
        .collect();
    Object::Node(Box::new(k8s::Node {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            uid: Some(format!("00000000-0000-4000-8000-{i:012}")),
            resource_version: Some(format!("{}", 1000 + i)),
            labels: Some(map(&[
                ("kubernetes.io/hostname", &name),
                ("kubernetes.io/os", "linux"),
                ("kubernetes.io/arch", "amd64"),
                ("node.kubernetes.io/instance-type", "m6i.8xlarge"),
                ("topology.kubernetes.io/zone", ["zone-a", "zone-b", "zone-c"][i % 3]),
            ])),
            annotations: Some(map(&[
                ("node.alpha.kubernetes.io/ttl", "0"),
                ("volumes.kubernetes.io/controller-managed-attach-detach", "true"),
            ])),
            ..Default::default()
        },
        spec: Some(k8s::NodeSpec { pod_cidr: Some(format!("10.{}.{}.0/24", i / 256 % 256, i % 256)), ..Default::default() }),
        status: Some(k8s::NodeStatus {
            allocatable: Some(capacity.clone()),
            capacity: Some(capacity),
            conditions: Some(conditions),
            images: Some(images),
            addresses: Some(vec![
                k8s::NodeAddress { type_: "InternalIP".into(), address: format!("10.0.{}.{}", i / 256 % 256, i % 256) },
                k8s::NodeAddress { type_: "Hostname".into(), address: name },
            ]),
            ..Default::default()
        }),
    }))
}

/// Pod `i` of `pods`: job `i / 10`, bound to a node round-robin unless it is in the last
/// tenth (pending). `generation` varies the resourceVersion (a relist reports new versions).
fn pod(i: usize, nodes: usize, pods: usize, generation: usize) -> Object {
    let job = i / 10;
    let ns = format!("team-{}", job % 100);
    let job_name = format!("job-{job:06}");
    let bound = i < pods - pods / 10;
    let env = (0..3)
        .map(|k| k8s::EnvVar { name: format!("VAR_{k}"), value: Some(format!("value-{k}")), ..Default::default() })
        .collect();
    let toleration = |key: &str| k8s::Toleration {
        key: Some(key.into()),
        operator: Some("Exists".into()),
        effect: Some("NoExecute".into()),
        toleration_seconds: Some(300),
        ..Default::default()
    };
    Object::Pod(Box::new(k8s::Pod {
        metadata: ObjectMeta {
            name: Some(format!("{job_name}-worker-{}", i % 10)),
            namespace: Some(ns),
            uid: Some(format!("10000000-0000-4000-8000-{i:012}")),
            resource_version: Some(format!("{}", 1_000_000 + i + generation)),
            labels: Some(map(&[
                ("volcano.sh/job-name", &job_name),
                ("volcano.sh/queue-name", "default"),
                ("volcano.sh/task-spec", "worker"),
                ("app", "training"),
            ])),
            annotations: Some(map(&[
                ("scheduling.k8s.io/group-name", &format!("{job_name}-pg")),
                ("volcano.sh/job-name", &job_name),
                ("volcano.sh/task-spec", "worker"),
                ("volcano.sh/job-version", "0"),
            ])),
            owner_references: Some(vec![OwnerReference {
                api_version: "batch.volcano.sh/v1alpha1".into(),
                kind: "Job".into(),
                name: job_name.clone(),
                uid: format!("20000000-0000-4000-8000-{job:012}"),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }]),
            ..Default::default()
        },
        spec: Some(k8s::PodSpec {
            scheduler_name: Some("volcano".into()),
            node_name: bound.then(|| format!("node-{:06}", i % nodes)),
            containers: vec![k8s::Container {
                name: "worker".into(),
                image: Some("registry.example.com/team/image-1:v1".into()),
                command: Some(vec!["python".into(), "train.py".into()]),
                env: Some(env),
                resources: Some(k8s::ResourceRequirements {
                    requests: Some(quantities(&[("cpu", "1"), ("memory", "4Gi")])),
                    limits: Some(quantities(&[("cpu", "2"), ("memory", "4Gi")])),
                    ..Default::default()
                }),
                volume_mounts: Some(vec![k8s::VolumeMount {
                    name: "kube-api-access".into(),
                    mount_path: "/var/run/secrets/kubernetes.io/serviceaccount".into(),
                    read_only: Some(true),
                    ..Default::default()
                }]),
                ..Default::default()
            }],
            tolerations: Some(vec![toleration("node.kubernetes.io/not-ready"), toleration("node.kubernetes.io/unreachable")]),
            priority: Some(0),
            restart_policy: Some("OnFailure".into()),
            ..Default::default()
        }),
        status: Some(k8s::PodStatus {
            phase: Some(if bound { "Running" } else { "Pending" }.into()),
            host_ip: bound.then(|| "10.0.0.1".into()),
            pod_ip: bound.then(|| format!("172.16.{}.{}", i / 256 % 256, i % 256)),
            conditions: Some(
                ["Initialized", "Ready", "ContainersReady", "PodScheduled"]
                    .iter()
                    .map(|t| k8s::PodCondition {
                        type_: t.to_string(),
                        status: if bound { "True" } else { "False" }.into(),
                        ..Default::default()
                    })
                    .collect(),
            ),
            ..Default::default()
        }),
    }))
}

fn pod_group(job: usize) -> Object {
    let value = serde_json::json!({
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {
            "name": format!("job-{job:06}-pg"),
            "namespace": format!("team-{}", job % 100),
            "uid": format!("30000000-0000-4000-8000-{job:012}"),
            "resourceVersion": "1",
            "ownerReferences": [{"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                "name": format!("job-{job:06}"), "uid": format!("20000000-0000-4000-8000-{job:012}"), "controller": true}],
        },
        "spec": {"minMember": 10, "queue": "default", "minResources": {"cpu": "10", "memory": "40Gi"}},
        "status": {"phase": "Running", "running": 10},
    });
    let obj: DynamicObject = serde_json::from_value(value).expect("the PodGroup literal is a valid object");
    Object::PodGroup(Box::new(obj))
}

fn queue() -> Object {
    let value = serde_json::json!({
        "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
        "metadata": {"name": "default", "uid": "40000000-0000-4000-8000-000000000000", "resourceVersion": "1"},
        "spec": {"weight": 1, "reclaimable": true}, "status": {"state": "Open"},
    });
    Object::Queue(Box::new(serde_json::from_value(value).expect("the Queue literal is a valid object")))
}

/// Lists every kind once: each watcher's `Init`, its objects, `InitDone`. Returns the
/// process's `VmRSS` after the Nodes, the Pods and the PodGroups, bytes.
fn list(m: &mut Mirror, nodes: usize, pods: usize, generation: usize) -> [u64; 3] {
    let mut rss = [0; 3];
    for k in Kind::ALL {
        m.handle(WatchEvent::Init(k));
        match k {
            Kind::Node => (0..nodes).for_each(|i| {
                m.handle(WatchEvent::InitApply(node(i)));
            }),
            Kind::Pod => (0..pods).for_each(|i| {
                m.handle(WatchEvent::InitApply(pod(i, nodes, pods, generation)));
            }),
            Kind::PodGroup => (0..pods.div_ceil(10)).for_each(|j| {
                m.handle(WatchEvent::InitApply(pod_group(j)));
            }),
            Kind::Queue => {
                m.handle(WatchEvent::InitApply(queue()));
            }
            _ => {}
        }
        m.handle(WatchEvent::InitDone(k));
        match k {
            Kind::Node => rss[0] = memory().0,
            Kind::Pod => rss[1] = memory().0,
            Kind::PodGroup => rss[2] = memory().0,
            _ => {}
        }
    }
    rss
}

fn arg(args: &[String], name: &str, default: usize) -> usize {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let nodes = arg(&args, "--nodes", 10_000).max(1);
    let pods = arg(&args, "--pods", nodes * 10);
    let json = args.iter().any(|a| a == "json");
    let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
    let (rss0, _) = memory();
    let mut m = Mirror::new(vec!["volcano".into()], vec![]);

    let t = Instant::now();
    let [after_nodes, after_pods, after_groups] = list(&mut m, nodes, pods, 0);
    let first_s = t.elapsed().as_secs_f64();
    let (rss1, hwm1) = memory();
    assert!(m.synced(), "every kind is listed");
    assert_eq!(m.refused, 0, "no generated object may be refused");
    let counts = |m: &Mirror| (m.cluster.counts().0, m.cluster.counts().1);
    assert_eq!(counts(&m), (nodes, pods), "the cluster copy holds every listed node and pod");

    let t = Instant::now();
    list(&mut m, nodes, pods, 1);
    let relist_s = t.elapsed().as_secs_f64();
    let (rss2, hwm2) = memory();
    assert_eq!(counts(&m), (nodes, pods), "a relist keeps every object");

    // A live cycle's change: 1 % of the pods, half deleted, half replaced by new pending pods.
    let conf = basalt_core::conf::SchedulerConf::default();
    let dq = conf.options.default_queue.clone();
    let opts = basalt_core::CycleOptions { seed: 1, cycle: 1, now_ms: 0 };
    let mut arena = bumpalo::Bump::new();
    let mut open = |m: &mut Mirror| {
        arena.reset();
        let t = Instant::now();
        m.cluster.prepare(&dq);
        let s = basalt_core::framework::Session::open(&arena, &m.cluster, &conf, &opts, &basalt_core::plugins::REGISTRY);
        std::hint::black_box(s.state.tasks.len);
        t.elapsed().as_secs_f64() * 1e3
    };
    let cold_ms = open(&mut m);
    let unchanged_ms = open(&mut m);
    let change = (pods / 100).max(2);
    for k in 0..change / 2 {
        let i = (k * 199) % pods;
        m.handle(WatchEvent::Delete(pod(i, nodes, pods, 1)));
        m.handle(WatchEvent::Apply(pod(pods + k, nodes, pods + change, 2)));
    }
    let open_ms = open(&mut m);

    // Kind::ALL lists Nodes, then Pods, then PodGroups.
    let per_node = after_nodes.saturating_sub(rss0) as f64 / nodes as f64;
    let per_pod = after_pods.saturating_sub(after_nodes) as f64 / pods.max(1) as f64;
    let per_group = after_groups.saturating_sub(after_pods) as f64 / pods.div_ceil(10).max(1) as f64;
    if json {
        println!(
            "{}",
            serde_json::json!({
                "nodes": nodes, "pods": pods, "pod_groups": pods.div_ceil(10),
                "first_list_s": first_s, "rss_after_first_list_bytes": rss1, "peak_after_first_list_bytes": hwm1,
                "relist_s": relist_s, "rss_after_relist_bytes": rss2, "peak_after_relist_bytes": hwm2,
                "open_cold_ms": cold_ms, "open_unchanged_ms": unchanged_ms, "open_after_change_ms": open_ms, "changed_pods": change,
                "bytes_per_node": per_node, "bytes_per_pod": per_pod, "bytes_per_pod_group": per_group,
            })
        );
    } else {
        println!("{nodes} nodes, {pods} pods, {} PodGroups", pods.div_ceil(10));
        println!("first list: {first_s:.1} s, RSS {:.0} MiB (from {:.0} MiB), peak {:.0} MiB", mib(rss1), mib(rss0), mib(hwm1));
        println!(
            "  growth of the process's RSS: {per_node:.0} bytes per node, {per_pod:.0} per pod, {per_group:.0} per PodGroup"
        );
        println!(
            "relist of everything: {relist_s:.1} s, RSS {:.0} MiB, peak {:.0} MiB (+{:.0} MiB over the first list's RSS)",
            mib(rss2),
            mib(hwm2),
            mib(hwm2.saturating_sub(rss1))
        );
        println!("session open: cold {cold_ms:.1} ms, unchanged {unchanged_ms:.1} ms, after {change} pods changed through the mirror {open_ms:.1} ms");
    }
}
