//! How big the flight recorder's recording gets at 5,000 nodes (docs/flight-recorder.md).
//!
//! A live `Scheduler` (no API server) over 5,000 nodes of 32 CPUs starts with 40,000 running
//! pods; every cycle 25 gangs of 8 pods arrive, the API confirms every bind decided (one pod
//! update each) and as many of the oldest pods finish (deleted), so each cycle carries about
//! 600 deltas and 200 binds, the churn of a busy batch cluster with a cycle every second. The
//! recorder writes with `wait_written`, and the segment's size is read after each cycle.
//!
//! ```sh
//! cargo run --release -p basalt-runtime --example recorder_size -- [NODES] [RUNNING] [CYCLES]
//! ```
//! Then two cycles with nothing arriving. Prints the first cycle's bytes (the initial list), the
//! mean bytes of the following busy cycles, the second quiet cycle's bytes, the checkpoint's bytes, and what that makes per hour at one cycle a
//! second.

use basalt_core::conf::SchedulerConf;
use basalt_runtime::live::cycle::{Outputs, Scheduler};
use basalt_runtime::live::mirror::{BindRequest, Kind, Mirror, Object, WatchEvent};
use basalt_runtime::live::status::Write;
use basalt_runtime::recorder::writer::{checkpoint, segment_files, Recorder, RecorderConfig};
use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kube::api::{DynamicObject, ObjectMeta};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::io::Write as _;

#[derive(Default)]
struct Captured(RefCell<Vec<BindRequest>>);

impl Outputs for Captured {
    fn bind(&self, r: BindRequest) {
        self.0.borrow_mut().push(r);
    }
    fn write(&self, _: Write) {}
}

fn q(v: &str) -> Quantity {
    Quantity(v.to_string())
}

fn node(i: usize) -> Object {
    Object::Node(Box::new(k8s::Node {
        metadata: ObjectMeta {
            name: Some(format!("node-{i:05}")),
            labels: Some(
                [
                    ("topology.kubernetes.io/zone".to_string(), format!("zone-{}", i % 4)),
                    ("kubernetes.io/hostname".to_string(), format!("node-{i:05}")),
                ]
                .into(),
            ),
            ..Default::default()
        },
        status: Some(k8s::NodeStatus {
            allocatable: Some(
                [("cpu".to_string(), q("32")), ("memory".to_string(), q("128Gi")), ("pods".to_string(), q("110"))].into(),
            ),
            ..Default::default()
        }),
        ..Default::default()
    }))
}

fn pod(name: &str, group: &str, node: &str, t: i64) -> k8s::Pod {
    k8s::Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("batch".into()),
            uid: Some(uid(name)),
            creation_timestamp: Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                k8s_openapi::jiff::Timestamp::from_second(1_700_000_000 + t).unwrap(),
            )),
            annotations: Some([("scheduling.k8s.io/group-name".to_string(), group.to_string())].into()),
            labels: Some([("app".to_string(), "trainer".to_string()), ("job".to_string(), group.to_string())].into()),
            ..Default::default()
        },
        spec: Some(k8s::PodSpec {
            scheduler_name: Some("volcano".into()),
            node_name: (!node.is_empty()).then(|| node.to_string()),
            containers: vec![k8s::Container {
                name: "main".into(),
                image: Some("registry.example/trainer:1.4".into()),
                resources: Some(k8s::ResourceRequirements {
                    requests: Some([("cpu".to_string(), q("2")), ("memory".to_string(), q("4Gi"))].into()),
                    ..Default::default()
                }),
                ..Default::default()
            }],
            ..Default::default()
        }),
        status: Some(k8s::PodStatus {
            phase: Some(if node.is_empty() { "Pending" } else { "Running" }.into()),
            ..Default::default()
        }),
    }
}

/// A UID as random-looking as the API server's (a v4 UUID), derived from the name so runs repeat.
fn uid(name: &str) -> String {
    let mut h: u64 = 0x9e37_79b9_7f4a_7c15;
    for b in name.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
    }
    let mut next = || {
        h = h.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = h;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let (a, b) = (next(), next());
    format!("{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}", a >> 32, (a >> 16) & 0xffff, a & 0xfff, b >> 48, b & 0xffff_ffff_ffff)
}

fn pod_group(name: &str, min: usize, phase: &str) -> Object {
    let v = serde_json::json!({
        "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "batch", "uid": format!("pg-{name}")},
        "spec": {"minMember": min, "queue": "default"},
        "status": {"phase": phase},
    });
    Object::PodGroup(Box::new(serde_json::from_value::<DynamicObject>(v).expect("PodGroup JSON")))
}

fn main() {
    let arg = |i: usize, d: usize| std::env::args().nth(i).and_then(|a| a.parse().ok()).unwrap_or(d);
    let (nodes, running, cycles) = (arg(1, 5000), arg(2, 40_000), arg(3, 30));
    let (gang, gangs_per_cycle) = (8usize, 25usize);
    let dir = std::env::temp_dir().join(format!("basalt-recorder-size-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let cfg = RecorderConfig { dir: dir.clone(), segment_bytes: u64::MAX, max_bytes: u64::MAX, args: vec![], wait_written: true };
    let mut s = Scheduler::new(Mirror::new(vec!["volcano".into()], vec![]), 1, 0);
    s.set_recorder(Box::new(Recorder::start(cfg).expect("recording directory")));
    for k in Kind::ALL {
        s.mirror.handle(WatchEvent::Init(k));
    }
    for i in 0..nodes {
        s.mirror.handle(WatchEvent::InitApply(node(i)));
    }
    let queue = serde_json::json!({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "default"}, "spec": {"weight": 1}});
    s.mirror.handle(WatchEvent::InitApply(Object::Queue(Box::new(serde_json::from_value(queue).expect("Queue JSON")))));
    let mut alive: VecDeque<(String, String)> = VecDeque::new();
    for g in 0..running / gang {
        let name = format!("run-{g}");
        s.mirror.handle(WatchEvent::InitApply(pod_group(&name, gang, "Running")));
        for i in 0..gang {
            let p = format!("{name}-{i}");
            let n = format!("node-{:05}", (g * gang + i) % nodes);
            s.mirror.handle(WatchEvent::InitApply(Object::Pod(Box::new(pod(&p, &name, &n, 0)))));
            alive.push_back((p, name.clone()));
        }
    }
    for k in Kind::ALL {
        s.mirror.handle(WatchEvent::InitDone(k));
    }
    let conf = SchedulerConf::default();
    let out = Captured::default();
    let size = || segment_files(&dir).expect("segments").iter().map(|(_, n)| n).sum::<u64>();
    let mut sizes = Vec::new();
    let mut binds = 0usize;
    let started = std::time::Instant::now();
    for c in 0..cycles {
        {
            for g in 0..gangs_per_cycle {
                let name = format!("new-{c}-{g}");
                s.mirror.handle(WatchEvent::Apply(pod_group(&name, gang, "Pending")));
                for i in 0..gang {
                    s.mirror.handle(WatchEvent::Apply(Object::Pod(Box::new(pod(
                        &format!("{name}-{i}"),
                        &name,
                        "",
                        10 + c as i64,
                    )))));
                }
            }
        }
        s.run_cycle(&conf, &out);
        sizes.push(size());
        let decided: Vec<BindRequest> = out.0.borrow_mut().drain(..).collect();
        binds += decided.len();
        for b in &decided {
            let group = b.name.rsplit_once('-').map(|(g, _)| g.to_string()).unwrap_or_default();
            s.mirror.handle(WatchEvent::Apply(Object::Pod(Box::new(pod(&b.name, &group, &b.node, 10 + c as i64)))));
            alive.push_back((b.name.clone(), group));
        }
        for _ in 0..decided.len() {
            if let Some((p, g)) = alive.pop_front() {
                s.mirror.handle(WatchEvent::Delete(Object::Pod(Box::new(pod(&p, &g, "", 0)))));
            }
        }
        print!(".");
        let _ = std::io::stdout().flush();
    }
    // Two cycles with nothing arriving: the second one sees only the first one's assumed binds.
    for _ in 0..2 {
        s.run_cycle(&conf, &out);
        sizes.push(size());
        binds += out.0.borrow_mut().drain(..).count();
    }
    println!();
    let ck = checkpoint(&s.mirror.cluster);
    let raw = postcard::to_stdvec(&ck).expect("checkpoint encodes");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&raw).expect("in memory");
    let ck_bytes = gz.finish().expect("in memory").len();
    drop(s.take_recorder());
    let first = sizes[0];
    let busy = cycles.saturating_sub(1).max(1);
    let steady = (sizes[cycles - 1] - sizes[0]) as f64 / busy as f64;
    let idle = (sizes[cycles + 1] - sizes[cycles]) as f64;
    let mib = |b: f64| b / (1 << 20) as f64;
    println!("recorder size at {nodes} nodes, {running} running pods, {gangs_per_cycle} gangs of {gang} arriving per cycle ({binds} binds in {} cycles, {:.1} s)", cycles + 2, started.elapsed().as_secs_f64());
    println!("  first cycle (initial list of every object): {:.2} MiB", mib(first as f64));
    println!(
        "  busy cycle (~{} deltas, {} binds): {:.1} KiB",
        gangs_per_cycle * gang * 3,
        gangs_per_cycle * gang,
        steady / 1024.0
    );
    println!("  idle cycle (nothing arrived or changed): {idle:.0} bytes");
    println!("  checkpoint of the whole cluster (each new segment): {:.2} MiB", mib(ck_bytes as f64));
    println!("  per hour at one busy cycle a second: {:.0} MiB; idle: {:.1} MiB", mib(steady * 3600.0), mib(idle * 3600.0));
    let _ = std::fs::remove_dir_all(&dir);
}
