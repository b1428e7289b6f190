//! `basalt bench --variant devices` (issue 26's speed check): the `identical` shape with GPU
//! share cards on every node (8 cards of 16,000 MiB by default) and every pending pod asking
//! `--card-memory` MiB of one card ([`basalt_core::workload_devices`]), scheduled with the conf
//! (baseline: the memory is one extended resource pooled per node, no card chosen) and with the
//! conf plus `deviceshare` with `deviceshare.GPUSharingEnable: true` beside `predicates` (each
//! pod takes the first card with room, the card table changes through the Statement, the bind
//! carries `volcano.sh/gpu-index`). Same cluster, same seed, same process, `--volume-rounds`
//! alternating rounds each ([`super::bench_pair`]); the CPU-time medians and their ratio are
//! printed.

use super::bench::BenchArgs;
use basalt_core::conf::SchedulerConf;
use basalt_core::workload::{generate, Variant, WorkloadSpec};
use basalt_core::workload_devices::{gpu_share, DeviceMix};
use basalt_core::{Cluster, CycleOptions};
use serde::Serialize;

/// What `--variant devices` measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DevicesReport {
    /// Nodes.
    pub nodes: usize,
    /// Cards per node.
    pub cards_per_node: u32,
    /// Pending pods, each asking card memory.
    pub pods: usize,
    /// Rounds per conf.
    pub rounds: usize,
    /// Median cycle CPU time without device sharing, ms.
    pub pooled_cpu_ms: f64,
    /// Median cycle CPU time with GPU share, ms.
    pub share_cpu_ms: f64,
    /// Median wall time without device sharing, ms.
    pub pooled_wall_ms: f64,
    /// Median wall time with GPU share, ms.
    pub share_wall_ms: f64,
    /// `share_cpu_ms / pooled_cpu_ms` (issue 26's bound: 1.5).
    pub ratio: f64,
    /// Pods bound without and with GPU share.
    pub binds: (usize, usize),
}

/// `conf` without any `deviceshare` plugin, and `conf` with `deviceshare` (GPU share on) put
/// right after `predicates` (or at the end of the last tier when there is none).
pub fn confs(conf: &SchedulerConf) -> (SchedulerConf, SchedulerConf) {
    let mut pooled = conf.clone();
    for t in &mut pooled.tiers {
        t.plugins.retain(|p| p.name != basalt_core::plugins::deviceshare::NAME);
    }
    let snippet = "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: deviceshare\n    arguments:\n      deviceshare.GPUSharingEnable: true\n";
    let plugin = SchedulerConf::parse(snippet).expect("the deviceshare snippet parses").0.tiers[0].plugins[0].clone();
    let mut share = pooled.clone();
    let at = share
        .tiers
        .iter()
        .enumerate()
        .find_map(|(i, t)| t.plugins.iter().position(|p| p.name == "predicates").map(|j| (i, j + 1)));
    match at {
        Some((i, j)) => share.tiers[i].plugins.insert(j, plugin),
        None => match share.tiers.last_mut() {
            Some(t) => t.plugins.push(plugin),
            None => share.tiers.push(basalt_core::conf::Tier { plugins: vec![plugin] }),
        },
    }
    (pooled, share)
}

/// Runs the device comparison with `args`' shape (nodes, pods, gang, queues, seed, threads);
/// returns the exit code.
pub fn run(args: &BenchArgs, conf: &SchedulerConf) -> u8 {
    let spec = WorkloadSpec {
        nodes: args.nodes,
        pods: args.pods.unwrap_or(args.nodes * args.pods_per_node),
        gang: args.gang.max(1),
        queues: args.queues.max(1),
        variant: Variant::Identical,
        seed: args.seed,
    };
    let mix = DeviceMix { pod_memory: args.card_memory, ..DeviceMix::default() };
    let mut cluster = Cluster::new();
    for d in generate(&spec) {
        if let Err(e) = cluster.apply(d) {
            eprintln!("warning: {e}");
        }
    }
    gpu_share(&mut cluster, mix);
    cluster.prepare(&conf.options.default_queue);
    let (pooled, share) = confs(conf);
    let opts = CycleOptions { seed: args.seed, cycle: 1, now_ms: 0 };
    let threads = super::bench_pair::threads(args);
    let t = match super::bench_pair::measure(threads, (&cluster, &pooled), (&cluster, &share), &opts, args.volume_rounds) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let report = DevicesReport {
        nodes: spec.nodes,
        cards_per_node: mix.cards,
        pods: spec.pods,
        rounds: t.rounds,
        pooled_cpu_ms: t.a_cpu_ms,
        share_cpu_ms: t.b_cpu_ms,
        pooled_wall_ms: t.a_wall_ms,
        share_wall_ms: t.b_wall_ms,
        ratio: t.ratio,
        binds: t.binds,
    };
    super::bench_pair::print(args.output, &report, |report| {
        format!(
            "{} nodes x {} GPU share cards of {} MiB, {} pending pods asking {} MiB of a card (identical), {threads} thread(s), \
             median of {} alternating rounds (CPU time): memory pooled per node {:.1} ms ({} binds), deviceshare GPU share \
             {:.1} ms ({} binds): {:.2}x (wall {:.1} / {:.1} ms)",
            report.nodes,
            mix.cards,
            mix.card_memory,
            report.pods,
            mix.pod_memory,
            report.rounds,
            report.pooled_cpu_ms,
            report.binds.0,
            report.share_cpu_ms,
            report.binds.1,
            report.ratio,
            report.pooled_wall_ms,
            report.share_wall_ms
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_core::model::GPU_INDEX;

    #[test]
    fn deviceshare_goes_right_after_predicates_and_only_in_the_share_conf() {
        let (pooled, share) = confs(&SchedulerConf::default());
        let names = |c: &SchedulerConf| c.tiers.iter().flat_map(|t| t.plugins.iter().map(|p| p.name.clone())).collect::<Vec<_>>();
        assert!(!names(&pooled).contains(&"deviceshare".to_string()));
        let share_names = names(&share);
        let at = share_names.iter().position(|n| n == "predicates").expect("the default conf has predicates");
        assert_eq!(share_names[at + 1], "deviceshare");
        assert_eq!(basalt_core::plugins::deviceshare::device_conf(&share).mode, basalt_core::session::devices::DeviceMode::Share);
    }

    #[test]
    fn the_bench_cluster_binds_every_pod_with_a_card_in_share_and_none_pooled() {
        let spec = WorkloadSpec { nodes: 20, pods: 200, gang: 1, queues: 1, variant: Variant::Identical, seed: 7 };
        let mut c = Cluster::new();
        for d in generate(&spec) {
            c.apply(d).expect("generated object is valid");
        }
        gpu_share(&mut c, DeviceMix::default());
        let conf = SchedulerConf::default();
        c.prepare(&conf.options.default_queue);
        let (pooled, share) = confs(&conf);
        let opts = CycleOptions { seed: 7, cycle: 1, now_ms: 0 };
        let a = basalt_core::run_cycle(&c, &pooled, &opts);
        let b = basalt_core::run_cycle(&c, &share, &opts);
        assert_eq!(a.binds.len(), 200);
        assert_eq!(b.binds.len(), 200);
        assert!(a.binds.iter().all(|x| !x.annotations.contains_key(GPU_INDEX)));
        // Two 6,000 MiB pods per 16,000 MiB card: no (node, card) holds more than two.
        let mut per_card = std::collections::HashMap::new();
        for x in &b.binds {
            let card = x.annotations.get(GPU_INDEX).expect("a GPU share bind names its card").clone();
            *per_card.entry((x.node, card)).or_insert(0) += 1;
        }
        assert!(per_card.values().all(|&n| n <= 2), "a card holds more than its memory: {per_card:?}");
    }
}
