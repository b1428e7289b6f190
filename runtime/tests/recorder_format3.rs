//! The flight recorder's format 3 (`BSLTREC3`): a recording keeps what formats 1 and 2 lost,
//! the nodes' vGPU cards (`NodeSpec::devices`), the pods' vGPU requests and cards
//! (`PodSpec::vgpu`), the queue-allocation gate flags (`PodSpec::volcano_gate_only`,
//! `queue_allocation_gate`), and the CPUs numa-aware keeps for the pods it bound
//! (`Delta::PodNumaAssumed`); a re-run of every recorded cycle decides the same.

use basalt_core::conf::SchedulerConf;
use basalt_runtime::live::cycle::{Outputs, Scheduler};
use basalt_runtime::live::mirror::{BindRequest, Kind, Mirror, Object, WatchEvent};
use basalt_runtime::live::status::Write;
use basalt_runtime::recorder::reader::walk;
use basalt_runtime::recorder::rerun::{rerun, RerunOptions};
use basalt_runtime::recorder::writer::{segment_files, Recorder, RecorderConfig};
use serde_json::json;
use std::cell::RefCell;
use std::io::Read;
use std::ops::ControlFlow;

#[derive(Default)]
struct Captured {
    binds: RefCell<Vec<BindRequest>>,
}

impl Outputs for Captured {
    fn bind(&self, r: BindRequest) {
        self.binds.borrow_mut().push(r);
    }
    fn write(&self, _: Write) {}
}

fn obj<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> Box<T> {
    Box::new(serde_json::from_value(v).unwrap())
}

/// vGPU node `g1` (two 16000 MiB cards) and NUMA node `c1` (CPUs 0-3 on NUMA node 0, 4-7 on
/// NUMA node 1, single-numa-node).
fn cluster(s: &mut Scheduler) {
    for k in Kind::ALL {
        s.mirror.handle(WatchEvent::Init(k));
    }
    let q = json!({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "default"},
        "spec": {"weight": 1, "reclaimable": true}, "status": {"state": "Open"}});
    s.mirror.handle(WatchEvent::InitApply(Object::Queue(obj(q))));
    let g1 = json!({"metadata": {"name": "g1", "annotations": {"volcano.sh/node-vgpu-register":
            "GPU-g1-0,10,16000,NVIDIA-Tesla-V100,true,hami-core:GPU-g1-1,10,16000,NVIDIA-Tesla-V100,true,hami-core:"}},
        "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110", "volcano.sh/vgpu-number": "20",
            "volcano.sh/vgpu-memory": "32000", "volcano.sh/vgpu-cores": "200"}}});
    s.mirror.handle(WatchEvent::InitApply(Object::Node(obj(g1))));
    let c1 = json!({"metadata": {"name": "c1"}, "status": {"allocatable": {"cpu": "32", "memory": "64Gi", "pods": "110"}}});
    s.mirror.handle(WatchEvent::InitApply(Object::Node(obj(c1))));
    let detail: serde_json::Map<String, serde_json::Value> =
        (0..8).map(|i| (i.to_string(), json!({"numa": i / 4, "socket": i / 4, "core": i % 4}))).collect();
    let topo = json!({"apiVersion": "nodeinfo.volcano.sh/v1alpha1", "kind": "Numatopology", "metadata": {"name": "c1"},
        "spec": {"policies": {"CPUManagerPolicy": "static", "TopologyManagerPolicy": "single-numa-node"},
            "numares": {"cpu": {"allocatable": "0-7", "capacity": 8}}, "cpuDetail": detail}});
    s.mirror.handle(WatchEvent::InitApply(Object::Numatopology(obj(topo))));
    for k in Kind::ALL {
        s.mirror.handle(WatchEvent::InitDone(k));
    }
}

/// A PodGroup of one pod, and the pod with `annotations` and container `limits`; `gates` are
/// its scheduling gates.
fn job(s: &mut Scheduler, name: &str, annotations: serde_json::Value, limits: serde_json::Value, gates: &[&str]) {
    let pg = json!({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "ns", "uid": format!("pg-{name}")},
        "spec": {"minMember": 1, "queue": "default"}, "status": {"phase": "Inqueue"}});
    s.mirror.handle(WatchEvent::Apply(Object::PodGroup(obj(pg))));
    let mut ann = annotations;
    ann["scheduling.k8s.io/group-name"] = json!(name);
    let gates: Vec<serde_json::Value> = gates.iter().map(|g| json!({"name": g})).collect();
    let pod = json!({"metadata": {"name": name, "namespace": "ns", "uid": format!("uid-{name}"), "annotations": ann},
        "spec": {"schedulerName": "volcano", "schedulingGates": gates,
            "containers": [{"name": "c", "resources": {"limits": limits.clone(), "requests": limits}}]},
        "status": {"phase": "Pending"}});
    s.mirror.handle(WatchEvent::Apply(Object::Pod(obj(pod))));
}

fn numa_job(s: &mut Scheduler, name: &str) {
    job(s, name, json!({"volcano.sh/numa-topology-policy": "single-numa-node"}), json!({"cpu": "4", "memory": "1Gi"}), &[]);
}

const CONF: &str = "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n- plugins:\n  - name: predicates\n  - name: deviceshare\n    arguments:\n      deviceshare.VGPUEnable: true\n  - name: numa-aware\n  - name: proportion\n";

#[test]
fn a_vgpu_cluster_a_gated_pod_and_kept_numa_cpus_survive_record_and_replay() {
    let dir = std::env::temp_dir().join(format!("basalt-recorder-format3-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut conf = SchedulerConf::parse(CONF).unwrap().0;
    conf.options.scheduling_gates_queue_admission = true;
    let mut s = Scheduler::new(Mirror::new(vec!["volcano".into()], vec![]), 5, 1000);
    let cfg = RecorderConfig { dir: dir.clone(), segment_bytes: 1 << 20, max_bytes: u64::MAX, args: vec![], wait_written: true };
    s.set_recorder(Box::new(Recorder::start(cfg).unwrap()));
    cluster(&mut s);
    let out = Captured::default();
    // Cycle 1: a vGPU pod, a NUMA pod and a pod gated by Volcano's queue-allocation gate.
    job(&mut s, "v0", json!({}), json!({"cpu": "1", "volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "12000"}), &[]);
    numa_job(&mut s, "a");
    job(
        &mut s,
        "gated",
        json!({"scheduling.volcano.sh/queue-allocation-gate": "true"}),
        json!({"cpu": "1"}),
        &["scheduling.volcano.sh/queue-allocation-gate"],
    );
    s.run_cycle(&conf, &out);
    let first_binds: Vec<BindRequest> = out.binds.borrow_mut().drain(..).collect();
    let first: Vec<String> = first_binds.iter().map(|b| format!("{}@{}", b.name, b.node)).collect();
    assert!(first.contains(&"v0@g1".to_string()) && first.contains(&"a@c1".to_string()), "{first:?}");
    let card = |b: &BindRequest| b.annotations["volcano.sh/vgpu-ids-new"].split(',').next().unwrap().to_string();
    let v0_card = card(first_binds.iter().find(|b| b.name == "v0").unwrap());
    // Cycle 2: a second 12000 MiB vGPU pod needs the other card (v0 holds 12000 of the first);
    // two more 4-CPU NUMA pods: one takes the NUMA node a left, the other finds none free
    // (a's CPUs are kept: no exporter lists a).
    job(&mut s, "v1", json!({}), json!({"cpu": "1", "volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "12000"}), &[]);
    numa_job(&mut s, "b");
    numa_job(&mut s, "c");
    s.run_cycle(&conf, &out);
    let second: Vec<BindRequest> = out.binds.borrow_mut().drain(..).collect();
    assert_eq!(second.iter().filter(|b| b.node == "c1").count(), 1, "{second:?}");
    let v1 = second.iter().find(|b| b.name == "v1").expect("v1 bound");
    assert_ne!(card(v1), v0_card, "v0's card has 4000 MiB left: {:?}", v1.annotations);
    drop(s.take_recorder());

    // Format 3 on disk.
    let files = segment_files(&dir).unwrap();
    let mut magic = [0u8; 8];
    flate2::read::GzDecoder::new(std::fs::File::open(&files[0].0).unwrap()).read_exact(&mut magic).unwrap();
    assert_eq!(&magic, b"BSLTREC3");

    // The cluster the reader rebuilds holds the vGPU cards, the pods' vGPU use, the gate flags
    // and numa-aware's kept CPUs.
    let mut seen = 0;
    walk(&dir, |at| {
        seen += 1;
        let c = &*at.cluster;
        let g1 = c.node(c.node_id("g1").unwrap()).unwrap();
        assert_eq!(g1.spec.devices.vgpu.as_ref().map(|v| v.cards.len()), Some(2), "vGPU registration recorded");
        let v0 = &c.pod(c.pod_id("ns", "v0").unwrap()).unwrap().spec;
        assert_eq!(v0.vgpu.requests.len(), 1, "vGPU request recorded");
        let gated = &c.pod(c.pod_id("ns", "gated").unwrap()).unwrap().spec;
        assert!(gated.volcano_gate_only && gated.queue_allocation_gate, "gate flags recorded");
        if at.seq == 1 {
            // The decisions recorded carry what the Bindings carried and numa-aware's CPUs.
            let v0_annotations = at.recorded.bind_annotations.iter().find(|(k, _)| k.1 == "v0").map(|(_, a)| a);
            assert!(
                v0_annotations.is_some_and(|a| a.contains_key("volcano.sh/vgpu-ids-new")),
                "v0's Binding annotations recorded: {:?}",
                at.recorded.bind_annotations
            );
            let a = at.recorded.numa_assignments.iter().find(|(k, _, _)| k.1 == "a");
            assert!(a.is_some_and(|(_, node, cpus)| node == "c1" && cpus.len() == 4), "{:?}", at.recorded.numa_assignments);
        }
        if at.seq == 2 {
            assert!(!v0.vgpu.held.is_empty(), "v0's card, assumed with its bind, recorded");
            assert_eq!(c.numa_pre_occupied("c1").len(), 4, "a's CPUs kept into cycle 2");
        }
        ControlFlow::Continue(())
    })
    .unwrap();
    assert_eq!(seen, 2);

    let r = rerun(&dir, &RerunOptions::default()).unwrap();
    assert_eq!(r.cycles.len(), 2);
    for c in &r.cycles {
        assert!(c.differences.is_empty(), "cycle {}: {:?}", c.cycle, c.differences);
    }
    assert_eq!(r.cycles[1].binds, second.len());
    let _ = std::fs::remove_dir_all(&dir);
}
