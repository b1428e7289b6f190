//! Regression tests for what the fuzz targets (`fuzz/`, see `fuzz/README.md`) found: each test
//! is the minimal input of one finding, named after it, with its cause. They assert behaviour,
//! not only the absence of a panic, because CI runs tests in the release profile where integer
//! overflow wraps silently instead of panicking.

use basalt_core::model::{HostPort, NodeSpec, PodGroupPhase, PodGroupSpec, PodPhase, PodSpec, QueueSpec};
use basalt_core::resource::ResourceList;
use basalt_core::{run_cycle, Cluster, CycleOptions, Decisions, Delta, SchedulerConf};

fn res(pairs: &[(&str, i64)]) -> ResourceList {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

fn node(name: &str, allocatable: &[(&str, i64)]) -> Delta {
    let allocatable = res(allocatable);
    Delta::Node(NodeSpec { name: name.into(), capacity: allocatable.clone(), allocatable, ready: true, ..Default::default() })
}

fn queue(name: &str) -> Delta {
    Delta::Queue(QueueSpec { name: name.into(), weight: 1, reclaimable: true, ..Default::default() })
}

fn group(name: &str, min_member: i32) -> Delta {
    Delta::PodGroup(PodGroupSpec {
        namespace: "ns".into(),
        name: name.into(),
        uid: format!("ns/{name}"),
        min_member,
        queue: "q".into(),
        phase: PodGroupPhase::Inqueue,
        ..Default::default()
    })
}

fn pod(name: &str, group: &str, requests: &[(&str, i64)]) -> Delta {
    let resreq = res(requests);
    Delta::Pod(PodSpec {
        namespace: "ns".into(),
        name: name.into(),
        uid: format!("ns/{name}"),
        group: Some(group.into()),
        scheduler_name: "volcano".into(),
        // kube's scoring defaults for a container without a request: 100m cpu, 200 MiB memory.
        nonzero_cpu_milli: resreq.get("cpu").copied().filter(|&v| v > 0).unwrap_or(100),
        nonzero_memory_bytes: resreq.get("memory").copied().filter(|&v| v > 0).unwrap_or(200 << 20),
        resreq,
        preemptable: true,
        ..Default::default()
    })
}

fn running(name: &str, node: &str, requests: &[(&str, i64)]) -> Delta {
    let Delta::Pod(mut p) = pod(name, "", requests) else { unreachable!() };
    p.group = None;
    p.node_name = node.into();
    p.phase = PodPhase::Running;
    Delta::Pod(p)
}

fn cycle_with(conf: &SchedulerConf, deltas: Vec<Delta>) -> (Cluster, Decisions) {
    let mut c = Cluster::new();
    for d in deltas {
        c.apply(d).expect("valid object");
    }
    let d = run_cycle(&c, conf, &CycleOptions { seed: 1, cycle: 1, now_ms: 0 });
    (c, d)
}

fn cycle(deltas: Vec<Delta>) -> (Cluster, Decisions) {
    cycle_with(&SchedulerConf::default(), deltas)
}

/// The node `pod` was bound to.
fn bound_node(c: &Cluster, d: &Decisions, pod: &str) -> Option<String> {
    let id = c.pod_id("ns", pod)?;
    d.binds.iter().find(|b| b.pod == id).map(|b| c.node(b.node).expect("node").spec.name.clone())
}

/// Found by `session_predicates_nodeorder_binpack`. The session's cluster total (Σ allocatable
/// of the Ready nodes, per resource) is summed in `i64`. Two nodes with `memory: 7Ei` (a
/// quantity the runtime accepts: 7·2^60 fits an `i64`, the sum does not) overflow it: a panic
/// in debug builds; in release builds the total wraps negative, so proportion's real capability
/// and deserved share of every queue become 0 and a small pod that fits easily is never bound.
#[test]
fn regression_total_allocatable_overflows_i64() {
    let big = &[("cpu", 4000), ("memory", 7 << 60), ("pods", 110)];
    let (_, d) = cycle(vec![
        queue("q"),
        node("n1", big),
        node("n2", big),
        group("pg", 1),
        pod("p-0", "pg", &[("cpu", 1000), ("memory", 1 << 30), ("pods", 1)]),
    ]);
    assert_eq!(d.binds.len(), 1, "the pod fits either node: {d:?}");
}

/// Found by `session_gang`. nodeorder multiplies each kube score (0–100) by its configured
/// weight in `i64` (`score * w.most`); Volcano computes `float64(score) * float64(weight)`. A
/// conf weight of `9223372036854775807` overflows: a panic in debug builds; in release builds
/// the product wraps (x · (2⁶³−1) ≡ −x for even x), so a higher MostAllocated score becomes a
/// lower node score and the pod lands on the emptier node instead of the fuller one.
#[test]
fn regression_nodeorder_weight_overflows_i64() {
    let conf = SchedulerConf::parse(
        "actions: allocate\ntiers:\n- plugins:\n  - name: predicates\n  - name: nodeorder\n    arguments:\n      \
         mostrequested.weight: 9223372036854775807\n      leastrequested.weight: 0\n      balancedresource.weight: 0\n",
    )
    .expect("conf parses")
    .0;
    let alloc = &[("cpu", 4000), ("memory", 8 << 30), ("pods", 110)];
    let (c, d) = cycle_with(
        &conf,
        vec![
            queue("q"),
            node("n1", alloc),
            node("n2", alloc),
            running("busy", "n1", &[("cpu", 2000), ("memory", 4 << 30), ("pods", 1)]),
            group("pg", 1),
            pod("p-0", "pg", &[("cpu", 1000), ("memory", 1 << 30), ("pods", 1)]),
        ],
    );
    assert_eq!(bound_node(&c, &d, "p-0").as_deref(), Some("n1"), "MostAllocated prefers the fuller node: {d:?}");
}

/// A conf of allocate with predicates and nodeorder scoring by LeastAllocated only.
fn least_allocated_conf() -> SchedulerConf {
    SchedulerConf::parse(
        "actions: allocate\ntiers:\n- plugins:\n  - name: predicates\n  - name: nodeorder\n    arguments:\n      \
         leastrequested.weight: 1\n      mostrequested.weight: 0\n      balancedresource.weight: 0\n",
    )
    .expect("conf parses")
    .0
}

/// Found by `session_gang`. nodeorder's LeastAllocated computes `(cap - req) * 100 / cap` in
/// `i64` (as kube-scheduler does in Go, where it wraps silently). A node whose allocatable
/// memory exceeds `i64::MAX / 100` (≈ 82 PiB, e.g. `memory: 7Ei`) overflows the product: a
/// panic in debug builds; in release builds the wrapped product makes the emptiest node score
/// ≈ 0, so the pod goes to the small node. The test pins the exact arithmetic (i128 or
/// dividing first), under which the huge node wins.
#[test]
fn regression_least_allocated_product_overflows_i64() {
    let (c, d) = cycle_with(
        &least_allocated_conf(),
        vec![
            queue("q"),
            node("n1", &[("cpu", 4000), ("memory", i64::MAX), ("pods", 110)]),
            node("n2", &[("cpu", 4000), ("memory", 8 << 30), ("pods", 110)]),
            group("pg", 1),
            pod("p-0", "pg", &[("cpu", 1000), ("memory", 1 << 30), ("pods", 1)]),
        ],
    );
    assert_eq!(bound_node(&c, &d, "p-0").as_deref(), Some("n1"), "LeastAllocated prefers the emptier node: {d:?}");
}

/// Found by `session_gang`. nodeorder adds the pod's non-zero request to the node's requested
/// total without saturation (`nonzero_mem[n] + nonzero_memory_bytes`). A node holding a running
/// pod of `memory: 9223372036854775807` overflows when a pod without a memory request (scored
/// with kube's 200 MiB default) is scored on it: a panic in debug builds; in release builds the
/// requested total wraps negative and the full node can outscore an empty one. Saturated, the
/// full node scores 0 on memory and the empty node wins.
#[test]
fn regression_nonzero_requested_sum_overflows_i64() {
    let (c, d) = cycle_with(
        &least_allocated_conf(),
        vec![
            queue("q"),
            node("n1", &[("cpu", 4000), ("memory", i64::MAX), ("pods", 110)]),
            node("n2", &[("cpu", 4000), ("memory", 8 << 30), ("pods", 110)]),
            running("hog", "n1", &[("cpu", 0), ("memory", i64::MAX), ("pods", 1)]),
            group("pg", 1),
            pod("p-0", "pg", &[("cpu", 1000), ("memory", 0), ("pods", 1)]),
        ],
    );
    assert_eq!(bound_node(&c, &d, "p-0").as_deref(), Some("n2"), "the node with free memory wins: {d:?}");
}

/// Found by `session_overcommit_enqueue` (its Statement check). Node sums saturate
/// (`State::node_add_task`), and saturating addition is not undone by saturating subtraction:
/// pipelining a 500m task and then a task of `cpu: i64::MAX` onto one node saturates
/// `pipelined` at `i64::MAX`; discarding the Statement subtracts both and leaves `pipelined`
/// at −500 instead of 0, so the node's FutureIdle is 500m larger than it is. Allocate only
/// pipelines within FutureIdle, which keeps its own sums below the bound; a caller of
/// `Session::pipeline` that does not check first (the property tests do not) breaks "discard
/// restores the session exactly".
#[test]
fn regression_discard_after_saturated_pipeline() {
    use basalt_core::framework::Session;
    use basalt_core::session::tables::{NodeIdx, TaskIdx};
    let mut c = Cluster::new();
    for d in [
        queue("q"),
        node("n1", &[("cpu", 4000), ("memory", 8 << 30), ("pods", 110)]),
        group("pg", 1),
        pod("p-0", "pg", &[("cpu", 500), ("memory", 1 << 30), ("pods", 1)]),
        pod("p-1", "pg", &[("cpu", i64::MAX), ("memory", 1 << 30), ("pods", 1)]),
    ] {
        c.apply(d).expect("valid object");
    }
    let conf = SchedulerConf::default();
    let arena = bumpalo::Bump::new();
    let mut ssn = Session::open(&arena, &c, &conf, &CycleOptions::default(), &basalt_core::plugins::REGISTRY);
    let pipelined = |s: &basalt_core::session::State<'_>| (0..s.dims).map(|d| s.pipelined(NodeIdx(0), d)).collect::<Vec<_>>();
    let before = pipelined(&ssn.state);
    let mut st = ssn.statement();
    ssn.pipeline(&mut st, TaskIdx(0), NodeIdx(0));
    ssn.pipeline(&mut st, TaskIdx(1), NodeIdx(0));
    ssn.discard(st);
    assert_eq!(pipelined(&ssn.state), before, "discard restores the pipelined column");
}

/// Found by `session_overcommit_enqueue` (its Statement check), same cause as
/// `regression_discard_after_saturated_pipeline` but through `Session::allocate`, the path the
/// allocate action takes: a node already holds a running pod of `memory: i64::MAX - 2`; a pod
/// without a memory request (scored as kube's 200 MiB) is allocated there — it fits, it asks no
/// memory — and `nonzero_mem` saturates; discarding the Statement leaves it 200 MiB lower than
/// before, so later scores on that node see less memory requested than there is.
#[test]
fn regression_discard_after_saturated_nonzero_request() {
    use basalt_core::framework::Session;
    use basalt_core::session::tables::{NodeIdx, TaskIdx};
    let mut c = Cluster::new();
    for d in [
        queue("q"),
        node("n1", &[("cpu", 4000), ("memory", 8 << 30), ("pods", 110)]),
        running("hog", "n1", &[("cpu", 0), ("memory", i64::MAX - 2), ("pods", 1)]),
        group("pg", 1),
        pod("p-0", "pg", &[("cpu", 500), ("memory", 0), ("pods", 1)]),
    ] {
        c.apply(d).expect("valid object");
    }
    let conf = SchedulerConf::default();
    let arena = bumpalo::Bump::new();
    let mut ssn = Session::open(&arena, &c, &conf, &CycleOptions::default(), &basalt_core::plugins::REGISTRY);
    let before = ssn.state.view.nonzero_mem(NodeIdx(0));
    let mut st = ssn.statement();
    assert!(ssn.allocate(&mut st, TaskIdx(0), NodeIdx(0)), "p-0 fits: it asks no memory");
    ssn.discard(st);
    assert_eq!(ssn.state.view.nonzero_mem(NodeIdx(0)), before, "discard restores the requested memory used for scoring");
}

/// `pod` with one host port `ip:port` (TCP).
fn with_port(p: Delta, ip: &str, port: i32) -> Delta {
    let Delta::Pod(mut p) = p else { unreachable!() };
    p.host_ports = vec![HostPort { host_ip: ip.into(), protocol: "TCP".into(), port }];
    Delta::Pod(p)
}

/// Not an invariant failure (the invariants reject impossible binds, not missed ones) but a
/// difference the `session_predicates_nodeorder_binpack` model showed: `cluster/compile.rs`
/// read host IP `::` as "every address", like `0.0.0.0`. kube-scheduler's NodePorts
/// (`HostPortInfo`) treats only an empty host IP and `0.0.0.0` as the wildcard; `::` is one
/// specific address, so a pod on `[::]:8080` and one on `10.0.0.1:8080` (same protocol) share a
/// node there, and Basalt refused the second. `0.0.0.0` still conflicts with both.
#[test]
fn host_ip_ipv6_unspecified_is_one_address() {
    let alloc = &[("cpu", 4000), ("memory", 8 << 30), ("pods", 110)];
    let req = &[("cpu", 100), ("memory", 1 << 20), ("pods", 1)];
    // Both pending: both fit the one node.
    let (c, d) = cycle(vec![
        queue("q"),
        node("n1", alloc),
        group("pg-a", 1),
        group("pg-b", 1),
        with_port(pod("a", "pg-a", req), "::", 8080),
        with_port(pod("b", "pg-b", req), "10.0.0.1", 8080),
    ]);
    assert_eq!(bound_node(&c, &d, "a").as_deref(), Some("n1"), "{d:?}");
    assert_eq!(bound_node(&c, &d, "b").as_deref(), Some("n1"), "`::` and 10.0.0.1 do not conflict: {d:?}");
    // One already running on the node, the other pending.
    for (held, asks, fits) in [
        ("::", "10.0.0.1", true),
        ("10.0.0.1", "::", true),
        ("::", "::", false),
        ("::", "0.0.0.0", false),
        ("10.0.0.1", "0.0.0.0", false),
        ("0.0.0.0", "::", false),
        ("0.0.0.0", "10.0.0.1", false),
        ("", "::", false),
    ] {
        let (c, d) = cycle(vec![
            queue("q"),
            node("n1", alloc),
            with_port(running("held", "n1", req), held, 8080),
            group("pg", 1),
            with_port(pod("p", "pg", req), asks, 8080),
        ]);
        let got = bound_node(&c, &d, "p");
        assert_eq!(got.is_some(), fits, "held {held:?}:8080, asks {asks:?}:8080: {d:?}");
        if !fits {
            let id = c.pod_id("ns", "p").expect("pod");
            assert!(d.unschedulable.iter().any(|u| u.pod == id), "held {held:?}, asks {asks:?}: reported unschedulable: {d:?}");
        }
    }
}
