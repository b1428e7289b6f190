//! The sharding controller's decisions, pure (Volcano's `ShardingManager.runPipeline`, its
//! built-in policies and the controller's change rules in `pkg/controllers/sharding`):
//! * [`assign`]: the schedulers in configuration order each take, from the nodes no earlier
//!   scheduler took, those every filter accepts (`allocation-rate`), sorted by the weighted sum
//!   of the scores (`allocation-rate`, `warmup`; stable, highest first), cut by the selectors
//!   (`node-limit`) — so the shards are disjoint;
//! * [`utilization`]: a node's CPU or memory utilisation, requests of its active pods over its
//!   capacity, at most 1;
//! * [`significant`], [`node_changed`]: when a pod or node event asks for a new assignment;
//! * [`needs_update`]: when a NodeShard's `spec.nodesDesired` is rewritten.
//!
//! Two deliberate differences from Volcano: nodes are taken in name order (ties in score
//! keep it; Volcano's order is its informer cache's, which varies), and clusters of more than
//! 50 nodes are assigned in one pass (Volcano assigns each batch of 50 nodes separately and
//! concatenates, so a `node-limit` `maxNodes` bounds each batch, not the shard).

use super::shard_config::{round_util, SchedulerShard, ShardPolicy};
use std::collections::{BTreeMap, HashSet};

/// Utilisation change that asks for a new assignment (Volcano's `nodeUsageChangeThreshold`).
pub const USAGE_CHANGE_THRESHOLD: f64 = 0.5;

/// What the policies see of one node.
#[derive(Clone, Copy, Debug)]
pub struct NodeView<'a> {
    /// Node name.
    pub name: &'a str,
    /// CPU utilisation in [0, 1] ([`utilization`]).
    pub cpu_util: f64,
    /// The node's labels.
    pub labels: &'a BTreeMap<String, String>,
}

/// One scheduler's shard as [`assign`] decided it.
#[derive(Clone, Debug, PartialEq)]
pub struct Assignment {
    /// The scheduler (and NodeShard) name.
    pub name: String,
    /// `spec.nodesDesired`, best first.
    pub nodes: Vec<String>,
    /// The largest `node-limit` `minNodes` the result falls short of (logged; never padded).
    pub short_of: Option<u64>,
}

/// CPU and memory utilisation of a node, each in [0, 1].
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Util {
    /// CPU requests / CPU capacity.
    pub cpu: f64,
    /// Memory requests / memory capacity.
    pub memory: f64,
}

/// `requested / capacity`, at most 1; 0 when the capacity is 0 or unknown (Volcano's
/// `calculateMetricsFromPodsAndNode`: the node's `status.capacity`, not allocatable).
pub fn utilization(requested: i64, capacity: i64) -> f64 {
    if capacity <= 0 {
        return 0.0;
    }
    (requested as f64 / capacity as f64).min(1.0)
}

/// Whether a node's utilisation moved enough since its last event to reassign: always for a
/// node not seen before, else when CPU or memory moved by more than
/// [`USAGE_CHANGE_THRESHOLD`] (Volcano's `isUtilizationSignificantlyChanged`; the comparison
/// is with the node's previous event, not the last assignment).
pub fn significant(old: Option<Util>, new: Util) -> bool {
    match old {
        None => true,
        Some(o) => (new.cpu - o.cpu).abs() > USAGE_CHANGE_THRESHOLD || (new.memory - o.memory).abs() > USAGE_CHANGE_THRESHOLD,
    }
}

/// The facts of a node update Volcano looks at (`isNodeSignificantlyChanged`).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct NodeFacts {
    /// Labels.
    pub labels: BTreeMap<String, String>,
    /// Annotations.
    pub annotations: BTreeMap<String, String>,
    /// `status.capacity.cpu`, millicores.
    pub cpu_capacity: i64,
}

/// Whether a node update is worth recomputing the node's utilisation for: labels or annotations
/// changed, or its CPU capacity in whole cores (rounded up, as `Quantity.Value`) moved by more
/// than half of old + 1.
pub fn node_changed(old: &NodeFacts, new: &NodeFacts) -> bool {
    if old.labels != new.labels || old.annotations != new.annotations {
        return true;
    }
    let cores = |m: i64| (m + 999).div_euclid(1000);
    let (o, n) = (cores(old.cpu_capacity), cores(new.cpu_capacity));
    (n - o).abs() as f64 / (o + 1) as f64 > USAGE_CHANGE_THRESHOLD
}

/// Whether NodeShard `current` (`spec.nodesDesired`) is rewritten with `desired` (Volcano's
/// `assignmentNeedsUpdate`): when the counts differ, or when at least max(1, ⌊|desired|/10⌋)
/// desired nodes are missing from it. A change below that threshold is not written.
pub fn needs_update(current: &[String], desired: &[String]) -> bool {
    if current.len() != desired.len() {
        return true;
    }
    let have: HashSet<&str> = current.iter().map(String::as_str).collect();
    let threshold = (desired.len() / 10).max(1);
    desired.iter().filter(|n| !have.contains(n.as_str())).count() >= threshold
}

/// Assigns `nodes` (any order) to `schedulers` (earlier first): see the module doc.
pub fn assign(schedulers: &[SchedulerShard], nodes: &[NodeView<'_>]) -> Vec<Assignment> {
    let mut sorted: Vec<&NodeView<'_>> = nodes.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(b.name));
    let mut taken: HashSet<&str> = HashSet::new();
    let mut out = Vec::with_capacity(schedulers.len());
    for s in schedulers {
        let picked = pipeline(s, sorted.iter().copied().filter(|n| !taken.contains(n.name)).collect());
        let short_of = s
            .policies
            .iter()
            .filter_map(|p| match p.policy {
                ShardPolicy::NodeLimit { min, .. } if min > picked.len() as u64 => Some(min),
                _ => None,
            })
            .max();
        taken.extend(picked.iter().map(|n| n.name));
        out.push(Assignment { name: s.name.clone(), nodes: picked.iter().map(|n| n.name.to_string()).collect(), short_of });
    }
    out
}

/// Filter (every filter), score (weighted sum, stable sort, highest first), select (in order).
fn pipeline<'n, 'a>(s: &SchedulerShard, mut candidates: Vec<&'n NodeView<'a>>) -> Vec<&'n NodeView<'a>> {
    candidates.retain(|n| s.policies.iter().all(|p| filter(&p.policy, n)));
    let scorers = s.policies.iter().filter(|p| !matches!(p.policy, ShardPolicy::NodeLimit { .. })).count();
    if candidates.len() > 1 && scorers > 0 {
        let mut scored: Vec<(f64, &NodeView<'a>)> =
            candidates.iter().map(|n| (s.policies.iter().map(|p| f64::from(p.weight) * score(&p.policy, n)).sum(), *n)).collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        candidates = scored.into_iter().map(|(_, n)| n).collect();
    }
    for p in &s.policies {
        if let ShardPolicy::NodeLimit { max, .. } = p.policy {
            if max > 0 && candidates.len() as u64 > max {
                candidates.truncate(max as usize);
            }
        }
        if candidates.is_empty() {
            break;
        }
    }
    candidates
}

fn filter(p: &ShardPolicy, n: &NodeView<'_>) -> bool {
    match *p {
        ShardPolicy::AllocationRate { min, max } => {
            let u = round_util(n.cpu_util);
            n.cpu_util >= 0.0 && u >= min && u <= max
        }
        _ => true,
    }
}

fn score(p: &ShardPolicy, n: &NodeView<'_>) -> f64 {
    match p {
        ShardPolicy::AllocationRate { min, max } => {
            if n.cpu_util < 0.0 {
                return 0.0;
            }
            let range = max - min;
            if range == 0.0 {
                return 1.0;
            }
            ((round_util(n.cpu_util) - min) / range).clamp(0.0, 1.0)
        }
        ShardPolicy::Warmup { label, value } => {
            if n.labels.get(label).map(String::as_str).unwrap_or("") == value {
                1.0
            } else {
                0.0
            }
        }
        ShardPolicy::NodeLimit { .. } => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::shard_config::{parse_flag, parse_yaml, DEFAULT_SCHEDULER_CONFIGS};

    struct Nodes(Vec<(String, f64, BTreeMap<String, String>)>);

    impl Nodes {
        /// Nodes `n{i}` with the given CPU utilisations; `warm` lists the warmup-labelled ones.
        fn new(utils: &[f64], warm: &[usize]) -> Nodes {
            Nodes(
                utils
                    .iter()
                    .enumerate()
                    .map(|(i, u)| {
                        let mut l = BTreeMap::new();
                        if warm.contains(&i) {
                            l.insert("node.volcano.sh/warmup".to_string(), "true".to_string());
                        }
                        (format!("n{i}"), *u, l)
                    })
                    .collect(),
            )
        }
        fn views(&self) -> Vec<NodeView<'_>> {
            self.0.iter().rev().map(|(n, u, l)| NodeView { name: n, cpu_util: *u, labels: l }).collect()
        }
    }

    fn shards(cfg: &str, nodes: &Nodes) -> Vec<(String, Vec<String>)> {
        let c = parse_yaml(cfg).unwrap();
        assign(&c.schedulers, &nodes.views()).into_iter().map(|a| (a.name, a.nodes)).collect()
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn default_flags_split_by_utilisation_and_pack_busy_nodes_first() {
        // Volcano's default: `volcano` takes nodes at 0–0.6 CPU, `agent-scheduler` 0.7–1.0,
        // each sorted by utilisation within its range (busier first).
        let c = parse_flag(&DEFAULT_SCHEDULER_CONFIGS.map(String::from)).unwrap();
        let nodes = Nodes::new(&[0.1, 0.9, 0.5, 0.65, 0.7, 0.0, 1.0], &[]);
        let a = assign(&c.schedulers, &nodes.views());
        assert_eq!(a[0].nodes, names(&["n2", "n0", "n5"]), "0.5, 0.1, 0.0; 0.65 is in neither range");
        assert_eq!(a[1].nodes, names(&["n6", "n1", "n4"]));
        assert_eq!((a[0].short_of, a[1].short_of), (None, None));
    }

    #[test]
    fn earlier_schedulers_choose_first_and_shards_are_disjoint() {
        let cfg = "schedulerConfigs:\n- {name: a, policies: [{name: allocation-rate, arguments: {maxCPUUtil: 1}}, {name: node-limit, arguments: {maxNodes: 2}}]}\n- {name: b, policies: [{name: allocation-rate, arguments: {maxCPUUtil: 1}}]}";
        let nodes = Nodes::new(&[0.0, 0.0, 0.0, 0.0, 0.0], &[]);
        assert_eq!(shards(cfg, &nodes), [("a".into(), names(&["n0", "n1"])), ("b".into(), names(&["n2", "n3", "n4"]))]);
        // Busier nodes rank first: a keeps the two where its pods run.
        let nodes = Nodes::new(&[0.0, 0.0, 0.0, 0.5, 1.0], &[]);
        assert_eq!(shards(cfg, &nodes), [("a".into(), names(&["n4", "n3"])), ("b".into(), names(&["n0", "n1", "n2"]))]);
    }

    #[test]
    fn allocation_rate_bounds_are_inclusive_after_rounding() {
        let cfg =
            "schedulerConfigs: [{name: a, policies: [{name: allocation-rate, arguments: {minCPUUtil: 0.3, maxCPUUtil: 0.6}}]}]";
        // 0.604 rounds to 0.60 (in), 0.296 to 0.30 (in), 0.294 to 0.29 (out), 0.606 to 0.61 (out).
        let nodes = Nodes::new(&[0.604, 0.296, 0.294, 0.606, 0.45], &[]);
        assert_eq!(shards(cfg, &nodes)[0].1, names(&["n0", "n4", "n1"]));
        // A zero-width range scores every node 1: name order stays.
        let cfg = "schedulerConfigs: [{name: a, cpuUtilizationMin: 0.5, cpuUtilizationMax: 0.5}]";
        let nodes = Nodes::new(&[0.5, 0.2, 0.5, 0.501], &[]);
        assert_eq!(shards(cfg, &nodes)[0].1, names(&["n0", "n2", "n3"]));
        // Volcano's zero-value legacy config: only idle nodes.
        let nodes = Nodes::new(&[0.0, 0.004, 0.01], &[]);
        assert_eq!(shards("schedulerConfigs: [{name: a}]", &nodes)[0].1, names(&["n0", "n1"]));
    }

    #[test]
    fn warmup_weight_decides_against_utilisation() {
        // Score = 1 × normalised util + w × warmup. With w = 2 an idle warmup node (0 + 2) beats
        // a full plain one (1 + 0).
        let nodes = Nodes::new(&[1.0, 0.0, 0.5], &[1, 2]);
        let cfg = |w: u32| {
            format!(
                "schedulerConfigs: [{{name: a, policies: [{{name: allocation-rate, arguments: {{maxCPUUtil: 1}}}}, {{name: warmup, weight: {w}}}, {{name: node-limit, arguments: {{maxNodes: 2}}}}]}}]"
            )
        };
        assert_eq!(shards(&cfg(2), &nodes)[0].1, names(&["n2", "n1"]), "2.5, 2.0, 1.0");
        // Without the limit and weight 1: n2 (1.5), then n0 and n1 tie at 1.0 and keep name order.
        let cfg1 =
            "schedulerConfigs: [{name: a, policies: [{name: allocation-rate, arguments: {maxCPUUtil: 1}}, {name: warmup}]}]";
        assert_eq!(shards(cfg1, &nodes)[0].1, names(&["n2", "n0", "n1"]));
        // A custom label and value; the deprecated preferWarmupNodes adds the default one.
        let mut nodes = Nodes::new(&[0.0, 0.0], &[]);
        nodes.0[1].2.insert("pool".into(), "hot".into());
        let cfg =
            "schedulerConfigs: [{name: a, policies: [{name: warmup, arguments: {warmupLabel: pool, warmupLabelValue: hot}}]}]";
        assert_eq!(shards(cfg, &nodes)[0].1, names(&["n1", "n0"]));
        let nodes = Nodes::new(&[0.0, 0.0], &[1]);
        let cfg = "schedulerConfigs: [{name: a, preferWarmupNodes: true}]";
        assert_eq!(shards(cfg, &nodes)[0].1, names(&["n1", "n0"]));
    }

    #[test]
    fn warmup_with_an_empty_value_matches_unlabelled_nodes() {
        // Go reads a missing label as "": value "" matches every node without the label.
        let mut nodes = Nodes::new(&[0.0, 0.0, 0.0], &[]);
        nodes.0[0].2.insert("role".into(), "x".into());
        let cfg =
            "schedulerConfigs: [{name: a, policies: [{name: warmup, arguments: {warmupLabel: role, warmupLabelValue: ''}}]}]";
        assert_eq!(shards(cfg, &nodes)[0].1, names(&["n1", "n2", "n0"]));
    }

    #[test]
    fn node_limit_truncates_and_reports_a_shortfall() {
        let cfg = "schedulerConfigs: [{name: a, policies: [{name: node-limit, arguments: {minNodes: 4, maxNodes: 6}}]}]";
        let c = parse_yaml(cfg).unwrap();
        let few = Nodes::new(&[0.0; 3], &[]);
        let a = assign(&c.schedulers, &few.views());
        assert_eq!((a[0].nodes.len(), a[0].short_of), (3, Some(4)));
        let many = Nodes::new(&[0.0; 9], &[]);
        let a = assign(&c.schedulers, &many.views());
        assert_eq!((a[0].nodes.len(), a[0].short_of), (6, None));
        // No filter at all: every node (no allocation-rate in an explicit chain).
        assert_eq!(a[0].nodes, names(&["n0", "n1", "n2", "n3", "n4", "n5"]));
    }

    #[test]
    fn max_nodes_bounds_the_whole_cluster() {
        // Volcano would cut each batch of 50 nodes to 40 and give 80 of 100; Basalt gives 40.
        let cfg = "schedulerConfigs: [{name: a, minNodes: 1, maxNodes: 40, cpuUtilizationMax: 1}]";
        let nodes = Nodes::new(&[0.2; 100], &[]);
        assert_eq!(shards(cfg, &nodes)[0].1.len(), 40);
    }

    #[test]
    fn a_later_scheduler_gets_what_is_left_or_nothing() {
        let cfg = "schedulerConfigs: [{name: a, cpuUtilizationMax: 1}, {name: b, cpuUtilizationMax: 1}]";
        let nodes = Nodes::new(&[0.3, 0.4], &[]);
        assert_eq!(shards(cfg, &nodes), [("a".into(), names(&["n1", "n0"])), ("b".into(), vec![])]);
        assert_eq!(shards(cfg, &Nodes(vec![])), [("a".into(), vec![]), ("b".into(), vec![])]);
    }

    #[test]
    fn utilisation_is_requests_over_capacity_capped_at_one() {
        assert_eq!(utilization(1500, 2000), 0.75);
        assert_eq!(utilization(5000, 2000), 1.0);
        assert_eq!(utilization(5, 0), 0.0);
    }

    #[test]
    fn only_big_moves_or_new_nodes_are_significant() {
        let u = |cpu, memory| Util { cpu, memory };
        assert!(significant(None, u(0.0, 0.0)), "a new node");
        assert!(!significant(Some(u(0.0, 0.0)), u(0.5, 0.5)), "exactly 0.5 is not more than 0.5");
        assert!(significant(Some(u(0.0, 0.0)), u(0.51, 0.0)));
        assert!(significant(Some(u(0.9, 0.9)), u(0.9, 0.3)));
    }

    #[test]
    fn node_updates_that_count() {
        let base = NodeFacts { cpu_capacity: 4000, ..Default::default() };
        let mut n = base.clone();
        n.cpu_capacity = 6000; // 2 of 5: 0.4
        assert!(!node_changed(&base, &n));
        n.cpu_capacity = 7000; // 3 of 5: 0.6
        assert!(node_changed(&base, &n));
        let mut n = base.clone();
        n.labels.insert("k".into(), "v".into());
        assert!(node_changed(&base, &n));
        let mut n = base.clone();
        n.annotations.insert("k".into(), "v".into());
        assert!(node_changed(&base, &n));
        assert!(!node_changed(&base, &base.clone()));
    }

    #[test]
    fn small_changes_are_not_written() {
        let list = |r: std::ops::Range<usize>| r.map(|i| format!("n{i}")).collect::<Vec<_>>();
        assert!(needs_update(&list(0..3), &list(0..4)), "count differs");
        assert!(needs_update(&list(0..3), &list(1..4)), "one of three differs: threshold 1");
        let mut swapped = list(0..20);
        swapped[0] = "x".into();
        assert!(!needs_update(&list(0..20), &swapped), "one of twenty is below 10%");
        swapped[1] = "y".into();
        assert!(needs_update(&list(0..20), &swapped), "two of twenty reach 10%");
        let reordered: Vec<String> = list(0..5).into_iter().rev().collect();
        assert!(!needs_update(&list(0..5), &reordered), "order alone is no change");
        assert!(!needs_update(&[], &[]));
    }
}
