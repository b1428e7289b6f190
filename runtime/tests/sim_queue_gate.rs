//! `basalt simulate` models Volcano's queue admission by scheduling gate
//! (`--feature-gates SchedulingGatesQueueAdmission=true`): a pod created gated by
//! `scheduling.volcano.sh/queue-allocation-gate` (as the webhook leaves it) and annotated to
//! opt in has its gate removed in the cycle its queue admits it, is bound in a later cycle, and
//! a pod its queue (capability) cannot take stays gated; the report says so.

use basalt_core::conf::SchedulerConf;
use basalt_runtime::sim::{self, SimOptions};

const CONF: &str = "actions: \"enqueue, allocate, backfill\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n  - name: conformance\n- plugins:\n  - name: drf\n  - name: predicates\n  - name: capacity\n  - name: nodeorder\n";

fn cluster() -> String {
    let mut y = String::from(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus:\n  allocatable: {cpu: \"8\", memory: 16Gi, pods: \"110\"}\n  capacity: {cpu: \"8\", memory: 16Gi, pods: \"110\"}\n---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\nspec:\n  weight: 1\n  capability: {cpu: \"2\"}\nstatus: {state: Open}\n",
    );
    for i in 0..3 {
        y.push_str(&format!(
            "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {{name: pg{i}, namespace: ns}}\nspec: {{minMember: 1, queue: q}}\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p{i}\n  namespace: ns\n  annotations:\n    scheduling.k8s.io/group-name: pg{i}\n    scheduling.volcano.sh/queue-allocation-gate: \"true\"\nspec:\n  schedulerName: volcano\n  schedulingGates: [{{name: scheduling.volcano.sh/queue-allocation-gate}}]\n  containers:\n  - name: c\n    image: busybox\n    resources: {{requests: {{cpu: \"1\", memory: 1Gi}}}}\n"
        ));
    }
    y
}

fn run(gate_on: bool) -> sim::SimOutput {
    let dir = std::env::temp_dir().join(format!("basalt-sim-queue-gate-{}-{gate_on}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("cluster.yaml");
    std::fs::write(&path, cluster()).unwrap();
    let mut conf = SchedulerConf::parse(CONF).unwrap().0;
    conf.options.scheduling_gates_queue_admission = gate_on;
    sim::run(&[path], &conf, &SimOptions { cycles: 4, ..Default::default() }).unwrap()
}

#[test]
fn gates_are_removed_as_the_queue_admits_and_pods_bound_in_a_later_cycle() {
    let out = run(true);
    let c = &out.cycles;
    let released = &c[0].gates_removed;
    assert_eq!(released.len(), 2, "capability 2 CPUs admits two 1-CPU pods: {released:?}");
    assert!(c[0].binds.is_empty(), "not bound in the cycle that releases them");
    let mut bound: Vec<String> = c[1].binds.iter().map(|b| b.pod.clone()).collect();
    bound.sort();
    let mut want = released.clone();
    want.sort();
    assert_eq!(bound, want, "bound in the next cycle");
    for later in &c[1..] {
        assert!(later.gates_removed.is_empty(), "the queue is full: the third pod stays gated");
    }
    assert_eq!(c.iter().map(|x| x.binds.len()).sum::<usize>(), 2);
    let text = sim::render_text(&out);
    assert!(text.contains("Scheduling gate removed (queue admitted them; scheduled from the next cycle): "), "{text}");
    let json = sim::render_json(&out);
    assert!(json.contains("\"gatesRemoved\""), "{json}");
}

#[test]
fn without_the_feature_gate_gated_pods_stay_gated() {
    let out = run(false);
    assert!(out.cycles.iter().all(|c| c.gates_removed.is_empty() && c.binds.is_empty()));
    assert!(!sim::render_json(&out).contains("gatesRemoved"), "absent when nothing is removed");
}
