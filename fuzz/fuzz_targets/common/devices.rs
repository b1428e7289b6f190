//! The device-model driver of `session_devices`: nodes with GPU share cards (some unhealthy,
//! some with pods already holding cards, some with a malformed `volcano.sh/gpu-index`), pods
//! asking card memory (GPU share) or whole cards (GPU number), or vGPU cards (HAMi: per card a
//! share count, memory and cores; pods asking one or two cards with memory and cores, some
//! already holding cards through `volcano.sh/vgpu-ids-new`), then
//!
//! 1. a sequence of Statement operations (allocate, pipeline, evict, unpipeline, backfill's
//!    allocate between Statements, commit, discard) on one session, checking the card table after every one
//!    against an independent recount from the tasks' held cards, that no operation puts a card
//!    over its memory (share, vGPU), its cores or share count (vGPU), or gives a busy card
//!    (number) or an unhealthy one (share, number), and that a discard puts every card back as
//!    it was;
//! 2. one to three full cycles (enqueue, allocate, preempt, backfill) whose binds are applied
//!    with their `volcano.sh/gpu-index` (`volcano.sh/vgpu-ids-new`) annotation, checking that
//!    every card that started within its memory stays within it, counted independently from the
//!    pods' annotations.

use arbitrary::Arbitrary;
use basalt_core::framework::Session;
use basalt_core::model::*;
use basalt_core::resource::ResourceList;
use basalt_core::session::devices::{DeviceMode, VgpuUse};
use basalt_core::session::tables::{NodeIdx, TaskIdx, TaskStatus};
use basalt_core::{run_cycle, Cluster, CycleOptions, Delta, SchedulerConf};

/// One node: cards (0 = registers none), memory per card, unhealthy card ids, CPU.
#[derive(Arbitrary, Debug)]
pub struct DevNode {
    cards: u8,
    memory: u8,
    unhealthy: Vec<u8>,
    cpu: u8,
}

/// One pod: card memory or whole cards asked, the node it already runs on (with the cards its
/// annotation names), its PodGroup and priority.
#[derive(Arbitrary, Debug)]
pub struct DevPod {
    memory: u8,
    number: u8,
    on_node: Option<u8>,
    index: Vec<u8>,
    index_malformed: bool,
    group: u8,
    high_priority: bool,
    cores: u8,
}

/// A Statement operation on task / node indices (taken modulo the table sizes).
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum DevOp {
    Allocate(u8, u8),
    Pipeline(u8, u8),
    AllocateNow(u8, u8),
    Evict(u8),
    Unpipeline(u8),
    Commit,
    Discard,
}

/// The whole input.
#[derive(Arbitrary, Debug)]
pub struct DevInput {
    number_mode: bool,
    vgpu_mode: bool,
    nodes: Vec<DevNode>,
    pods: Vec<DevPod>,
    ops: Vec<DevOp>,
    cycles: u8,
    seed: u64,
}

const UNIT: u64 = 1000;

fn conf(input: &DevInput) -> SchedulerConf {
    let flag = if input.vgpu_mode {
        "deviceshare.VGPUEnable"
    } else if input.number_mode {
        "deviceshare.GPUNumberEnable"
    } else {
        "deviceshare.GPUSharingEnable"
    };
    let text = format!(
        "actions: \"enqueue, allocate, preempt, backfill\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n\
         - plugins:\n  - name: predicates\n  - name: deviceshare\n    arguments:\n      {flag}: true\n  - name: proportion\n  - name: nodeorder\n"
    );
    SchedulerConf::parse(&text).expect("the device fuzz conf parses").0
}

fn deltas(input: &DevInput) -> Vec<Delta> {
    let mut out = vec![
        Delta::Queue(QueueSpec { name: "default".into(), weight: 1, ..Default::default() }),
        Delta::PriorityClass(PriorityClassSpec { name: "high".into(), value: 1000, global_default: false }),
    ];
    let nodes = &input.nodes[..input.nodes.len().min(6)];
    for (i, n) in nodes.iter().enumerate() {
        let number = u32::from(n.cards % 10);
        let per_card = (u64::from(n.memory % 16) + 1) * UNIT;
        let mut alloc = ResourceList::new();
        alloc.insert("cpu".into(), (i64::from(n.cpu % 8) + 1) * 1000);
        alloc.insert("memory".into(), 64 << 30);
        alloc.insert("pods".into(), 110);
        let vgpu = (input.vgpu_mode && number > 0).then(|| {
            alloc.insert(VGPU_NUMBER.into(), i64::from(number) * 4000);
            alloc.insert(VGPU_MEMORY.into(), (per_card * u64::from(number)) as i64 * 1000);
            alloc.insert(VGPU_CORES.into(), i64::from(number) * 100_000);
            let cards = (0..number)
                .map(|id| VgpuCard {
                    uuid: format!("GPU-n{i}-{id}"),
                    number: 1 + (id + u32::from(n.cpu)) % 4,
                    memory: per_card,
                    card_type: "NVIDIA-T4".into(),
                    health: !n.unhealthy.contains(&(id as u8)),
                })
                .collect();
            VgpuNode { cards, malformed: false }
        });
        let gpu_share = (number > 0 && !input.vgpu_mode).then(|| {
            alloc.insert(GPU_MEMORY.into(), (per_card * u64::from(number)) as i64);
            alloc.insert(GPU_NUMBER.into(), i64::from(number));
            let mut unhealthy: Vec<u32> = n.unhealthy.iter().take(3).map(|&u| u32::from(u % 10)).collect();
            unhealthy.sort_unstable();
            unhealthy.dedup();
            GpuShareNode { number, memory_per_card: per_card, unhealthy }
        });
        let name = format!("n{i}");
        let mut labels = Labels::new();
        labels.insert("kubernetes.io/hostname".into(), name.clone());
        out.push(Delta::Node(NodeSpec {
            name,
            labels,
            capacity: alloc.clone(),
            allocatable: alloc,
            ready: true,
            gpu_share,
            devices: NodeDevices { vgpu, locks: Vec::new() },
            ..Default::default()
        }));
    }
    for g in 0..3 {
        out.push(Delta::PodGroup(PodGroupSpec {
            uid: format!("ns/pg{g}"),
            namespace: "ns".into(),
            name: format!("pg{g}"),
            min_member: 1 + g,
            queue: "default".into(),
            phase: PodGroupPhase::Inqueue,
            ..Default::default()
        }));
    }
    for (i, p) in input.pods.iter().take(24).enumerate() {
        let mut gpu = PodGpu::default();
        let mut vgpu = PodVgpu::default();
        let vmem = u64::from(p.memory % 20) * UNIT / 2;
        let vcores = u32::from(p.cores % 11) * 10;
        if input.vgpu_mode {
            vgpu.requests = vec![VgpuRequest {
                number: 1 + u32::from(p.number % 2),
                memory: vmem,
                mem_percentage: if vmem == 0 { 100 } else { 101 },
                cores: vcores,
            }];
        } else if input.number_mode {
            gpu.number = u32::from(p.number % 4);
        } else {
            gpu.memory = u64::from(p.memory % 20) * UNIT / 2;
        }
        let mut resreq = ResourceList::new();
        resreq.insert("cpu".into(), 500);
        resreq.insert("memory".into(), 1 << 30);
        resreq.insert("pods".into(), 1);
        if gpu.memory > 0 {
            resreq.insert(GPU_MEMORY.into(), gpu.memory as i64);
        }
        if gpu.number > 0 {
            resreq.insert(GPU_NUMBER.into(), i64::from(gpu.number));
        }
        if input.vgpu_mode {
            resreq.insert(VGPU_NUMBER.into(), i64::from(vgpu.requests[0].number) * 1000);
        }
        let node_name = match p.on_node {
            Some(n) if !nodes.is_empty() => {
                gpu.index = p.index.iter().take(2).map(|&c| u32::from(c % 10)).collect();
                gpu.index_invalid = p.index_malformed && p.index.is_empty();
                let node = n as usize % nodes.len();
                // One entry per card: a pod holds a card once (HAMi core's AddPod).
                let ids: std::collections::BTreeSet<u32> = gpu.index.iter().copied().collect();
                let held = ids.into_iter().map(|id| VgpuHeld {
                    uuid: format!("GPU-n{node}-{id}"),
                    kind: "NVIDIA".into(),
                    memory: vmem,
                    cores: vcores,
                });
                vgpu.held = vec![held.collect()];
                vgpu.held_invalid = gpu.index_invalid;
                format!("n{node}")
            }
            _ => String::new(),
        };
        let running = !node_name.is_empty();
        out.push(Delta::Pod(PodSpec {
            uid: format!("ns/p{i}"),
            namespace: "ns".into(),
            name: format!("p{i}"),
            group: Some(format!("pg{}", p.group % 3)),
            scheduler_name: "volcano".into(),
            node_name,
            phase: if running { PodPhase::Running } else { PodPhase::Pending },
            priority: Some(if p.high_priority { 1000 } else { 0 }),
            nonzero_cpu_milli: 500,
            nonzero_memory_bytes: 1 << 30,
            resreq,
            gpu: gpu.into(),
            vgpu: vgpu.into(),
            preemptable: true,
            ..Default::default()
        }));
    }
    out
}

/// Card usage as the table holds it, for comparison before and after a discard: memory, pods,
/// held masks, cores (vGPU), per-task vGPU uses and node locks.
type Usage = (Vec<u64>, Vec<u32>, Vec<u64>, Vec<u32>, Vec<Vec<VgpuUse>>, Vec<u32>);

fn usage(ssn: &Session<'_>) -> Usage {
    let d = &ssn.state.devices;
    let uses = (0..ssn.state.tasks.len).map(|i| d.vgpu_held(TaskIdx(i as u32)).to_vec()).collect();
    (d.used_memory().to_vec(), d.pods().to_vec(), d.held().to_vec(), d.used_cores().to_vec(), uses, d.locks().to_vec())
}

/// Recounts every card's memory in use and sharing pods from the tasks' held cards and checks
/// the table agrees; a task holds cards only while it sits on a node and is not releasing.
fn check_table(ssn: &Session<'_>) {
    let s = &ssn.state;
    let d = &s.devices;
    let mut memory = vec![0u64; d.memory.len()];
    let mut pods = vec![0u32; d.memory.len()];
    if d.mode == DeviceMode::Vgpu {
        let mut cores = vec![0u32; d.memory.len()];
        for i in 0..s.tasks.len {
            let t = TaskIdx(i as u32);
            let uses = d.vgpu_held(t);
            let mask = uses.iter().fold(0u64, |m, u| m | (1 << u.card));
            assert_eq!(d.held()[i], mask, "task {i}'s card mask differs from its vGPU uses");
            if uses.is_empty() {
                continue;
            }
            let n = s.tasks.node_of(t).expect("a task holding cards is on a node");
            assert_ne!(s.tasks.status()[i], TaskStatus::Releasing, "a releasing task still holds cards");
            let cards = d.cards(n);
            for u in uses {
                let c = cards.start + u.card as usize;
                assert!(c < cards.end, "task {i} holds card {}, which its node does not have", u.card);
                memory[c] += u.memory;
                cores[c] += u.cores;
                pods[c] += 1;
            }
        }
        assert_eq!(memory, d.used_memory(), "vGPU card memory in use differs from the holders' sum");
        assert_eq!(cores, d.used_cores(), "vGPU card cores in use differ from the holders' sum");
        assert_eq!(pods, d.pods(), "vGPU card pod counts differ from the holders' count");
        return;
    }
    for i in 0..s.tasks.len {
        let t = TaskIdx(i as u32);
        let held = d.held()[i];
        if held == 0 {
            continue;
        }
        let n = s.tasks.node_of(t).expect("a task holding cards is on a node");
        assert_ne!(s.tasks.status()[i], TaskStatus::Releasing, "a releasing task still holds cards");
        let cards = d.cards(n);
        for id in basalt_core::session::devices::ids(held) {
            let c = cards.start + id as usize;
            assert!(c < cards.end, "task {i} holds card {id}, which its node does not have");
            memory[c] += s.tasks.rec[i].spec.gpu.memory;
            pods[c] += 1;
        }
    }
    assert_eq!(memory, d.used_memory(), "card memory in use differs from the holders' sum");
    assert_eq!(pods, d.pods(), "card pod counts differ from the holders' count");
}

/// Checks the cards `t` just took: healthy, and within memory (share) or idle before (number).
fn check_taken(ssn: &Session<'_>, t: TaskIdx, pods_before: &[u32]) {
    let s = &ssn.state;
    let d = &s.devices;
    let held = d.held()[t.ix()];
    let Some(n) = s.tasks.node_of(t) else { return };
    let cards = d.cards(n);
    for id in basalt_core::session::devices::ids(held) {
        let c = cards.start + id as usize;
        if d.mode == DeviceMode::Vgpu {
            // Volcano's vGPU filter does not read health.
            assert!(d.used_memory()[c] <= d.memory[c], "vGPU card {id} of node {} over its memory", n.0);
            assert!(d.used_cores()[c] <= 100, "vGPU card {id} of node {} over 100 cores", n.0);
            assert!(d.pods()[c] <= d.share_limit[c], "vGPU card {id} of node {} over its share count", n.0);
            continue;
        }
        assert!(d.healthy[c], "task {} took unhealthy card {id}", t.0);
        match d.mode {
            DeviceMode::Share => assert!(d.used_memory()[c] <= d.memory[c], "card {id} of node {} overcommitted", n.0),
            DeviceMode::Number => assert_eq!(pods_before[c], 0, "task {} took busy card {id}", t.0),
            DeviceMode::Off | DeviceMode::Vgpu => panic!("cards taken with device sharing off"),
        }
    }
}

fn statement_ops(cluster: &Cluster, conf: &SchedulerConf, ops: &[DevOp]) {
    let arena = bumpalo::Bump::new();
    let mut ssn = Session::open(&arena, cluster, conf, &CycleOptions::default(), &basalt_core::plugins::REGISTRY);
    check_table(&ssn);
    let (nt, nn) = (ssn.state.tasks.len, ssn.state.nodes.len);
    if nt == 0 || nn == 0 {
        return;
    }
    let mut st = ssn.statement();
    let mut at_start = usage(&ssn);
    for &op in ops.iter().take(48) {
        let pods_before = ssn.state.devices.pods().to_vec();
        let status = |ssn: &Session<'_>, t: TaskIdx| ssn.state.tasks.status()[t.ix()];
        match op {
            DevOp::Allocate(t, n) | DevOp::Pipeline(t, n) | DevOp::AllocateNow(t, n) => {
                let t = TaskIdx(u32::from(t) % nt as u32);
                let n = NodeIdx(u32::from(n) % nn as u32);
                if status(&ssn, t) != TaskStatus::Pending || ssn.state.device_fit(t, n).is_err() {
                    continue;
                }
                // Backfill's allocate is outside any Statement: only between Statements here,
                // so a later discard has a known state to return to.
                if matches!(op, DevOp::AllocateNow(..)) && !st.is_empty() {
                    continue;
                }
                match op {
                    DevOp::Allocate(..) => {
                        ssn.allocate(&mut st, t, n);
                    }
                    DevOp::Pipeline(..) => ssn.pipeline(&mut st, t, n),
                    _ => {
                        ssn.allocate_now(t, n);
                        at_start = usage(&ssn);
                    }
                }
                check_taken(&ssn, t, &pods_before);
            }
            DevOp::Evict(t) => {
                let t = TaskIdx(u32::from(t) % nt as u32);
                if matches!(status(&ssn, t), TaskStatus::Running | TaskStatus::Allocated) {
                    ssn.evict(&mut st, t, "preempt");
                }
            }
            DevOp::Unpipeline(t) => ssn.unpipeline(&mut st, TaskIdx(u32::from(t) % nt as u32)),
            DevOp::Commit => {
                let done = std::mem::replace(&mut st, ssn.statement());
                ssn.commit(done);
                at_start = usage(&ssn);
            }
            DevOp::Discard => {
                let done = std::mem::replace(&mut st, ssn.statement());
                ssn.discard(done);
                assert_eq!(usage(&ssn), at_start, "Statement discard did not restore the card table");
            }
        }
        check_table(&ssn);
    }
}

/// Memory in use per (node, card) counted from the pods' `volcano.sh/gpu-index` (share mode).
fn card_use(cluster: &Cluster, input: &DevInput) -> Vec<(String, u32, u64, u64)> {
    let mut out = Vec::new();
    for (i, n) in input.nodes.iter().take(6).enumerate() {
        let number = u32::from(n.cards % 10);
        let per_card = (u64::from(n.memory % 16) + 1) * UNIT;
        for id in 0..number {
            let name = format!("n{i}");
            let uuid = format!("GPU-{name}-{id}");
            let used = if input.vgpu_mode {
                cluster
                    .pods()
                    .filter(|(_, p)| p.spec.node_name == name && !p.spec.vgpu.held_invalid)
                    .flat_map(|(_, p)| p.spec.vgpu.held.iter().flatten().filter(|h| h.uuid == uuid).map(|h| h.memory))
                    .sum()
            } else {
                cluster
                    .pods()
                    .filter(|(_, p)| p.spec.node_name == name && !p.spec.gpu.index_invalid && p.spec.gpu.index.contains(&id))
                    .map(|(_, p)| p.spec.gpu.memory)
                    .sum()
            };
            out.push((name, id, used, per_card));
        }
    }
    out
}

fn cycles(cluster: &mut Cluster, conf: &SchedulerConf, input: &DevInput) {
    let within = |cluster: &Cluster| -> Vec<bool> { card_use(cluster, input).iter().map(|c| c.2 <= c.3).collect() };
    let start = within(cluster);
    for i in 0..u64::from(input.cycles % 3 + 1) {
        let opts = CycleOptions { seed: input.seed.wrapping_add(i), cycle: i + 1, now_ms: 0 };
        let d = run_cycle(cluster, conf, &opts);
        let mut reactions = Vec::new();
        for b in &d.binds {
            if let (Some(p), Some(n)) = (cluster.pod(b.pod), cluster.node(b.node)) {
                let mut spec = p.spec.bound(&n.spec.name, &b.annotations);
                spec.phase = PodPhase::Running;
                reactions.push(Delta::Pod(spec));
            }
        }
        for e in &d.evictions {
            if let Some(p) = cluster.pod(e.pod) {
                reactions.push(Delta::PodDeleted { namespace: p.spec.namespace.clone(), name: p.spec.name.clone() });
            }
        }
        for r in reactions {
            let _ = cluster.apply(r);
        }
        if !input.number_mode {
            for ((ok_before, ok_now), c) in start.iter().zip(within(cluster)).zip(card_use(cluster, input)) {
                assert!(!ok_before || ok_now, "cycle {}: card {} of {} holds {} of {}", i + 1, c.1, c.0, c.2, c.3);
            }
        }
    }
}

/// Runs one device fuzz case.
pub fn run(input: &DevInput) {
    let conf = conf(input);
    let mut cluster = Cluster::new();
    for d in deltas(input) {
        let _ = cluster.apply(d);
    }
    statement_ops(&cluster, &conf, &input.ops);
    cycles(&mut cluster, &conf, input);
}
