//! `volcano-scheduler.conf`: schema, Volcano's built-in default, argument access and
//! validation (Volcano `pkg/scheduler/conf`, `util.go`, `framework/arguments.go`;
//! volcano-behaviour.md §1.2).

mod args;
mod flags;
mod parse;
mod unknown;
pub(crate) use unknown::distance;

pub use args::{parse_go_duration_ns, ArgKind, ArgSpec, Arguments};
pub use flags::{EnableFlags, Flag};
pub use parse::{ConfError, ConfWarning};
pub use unknown::{dropped_by_unknown, nearest_plugin, UnknownPlugin};

/// Every plugin name Volcano registers (`plugins/factory.go`).
pub const VOLCANO_PLUGINS: &[&str] = &[
    "drf",
    "gang",
    "deviceshare",
    "predicates",
    "priority",
    "nodeorder",
    "conformance",
    "binpack",
    "resource-strategy-fit",
    "tdm",
    "overcommit",
    "sla",
    "task-topology",
    "numa-aware",
    "cdp",
    "rescheduling",
    "usage",
    "pdb",
    "nodegroup",
    "network-topology-aware",
    "proportion",
    "capacity",
    "extender",
    "resourcequota",
];

/// An action name (`actions: "enqueue, allocate, backfill"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum ActionKind {
    /// `enqueue`.
    Enqueue,
    /// `allocate`.
    Allocate,
    /// `backfill`.
    Backfill,
    /// `preempt`.
    Preempt,
    /// `reclaim`.
    Reclaim,
    /// `shuffle`.
    Shuffle,
    /// `gangpreempt`.
    GangPreempt,
    /// `gangreclaim`.
    GangReclaim,
}

impl ActionKind {
    /// Parses a Volcano action name.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "enqueue" => ActionKind::Enqueue,
            "allocate" => ActionKind::Allocate,
            "backfill" => ActionKind::Backfill,
            "preempt" => ActionKind::Preempt,
            "reclaim" => ActionKind::Reclaim,
            "shuffle" => ActionKind::Shuffle,
            "gangpreempt" => ActionKind::GangPreempt,
            "gangreclaim" => ActionKind::GangReclaim,
            _ => return None,
        })
    }

    /// The Volcano name.
    pub fn name(self) -> &'static str {
        match self {
            ActionKind::Enqueue => "enqueue",
            ActionKind::Allocate => "allocate",
            ActionKind::Backfill => "backfill",
            ActionKind::Preempt => "preempt",
            ActionKind::Reclaim => "reclaim",
            ActionKind::Shuffle => "shuffle",
            ActionKind::GangPreempt => "gangpreempt",
            ActionKind::GangReclaim => "gangreclaim",
        }
    }

    /// Whether Basalt implements the action (every action Volcano registers is; kept for the
    /// conf checks, [`crate::plugins::Registry::check`]).
    pub fn implemented(self) -> bool {
        true
    }
}

/// One plugin entry of a tier.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PluginOption {
    /// Plugin name (`priority`, `gang`, …).
    pub name: String,
    /// `arguments`.
    pub arguments: Arguments,
    /// Enable flags (`enableJobOrder`, …), unset = Volcano's default.
    pub flags: EnableFlags,
}

/// A tier: plugins whose votes combine before the next tier is asked.
#[derive(Clone, Debug, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Tier {
    /// Plugins in order.
    pub plugins: Vec<PluginOption>,
}

/// Scheduler flags that change decisions (Volcano `cmd/scheduler/app/options`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SchedulerOptions {
    /// `--percentage-nodes-to-find`: percentage of nodes a predicate scan stops at once that
    /// many feasible nodes are found. Volcano's default is 0 (adaptive: `max(50 − N/125,
    /// minimum-percentage)`); **Basalt's default is 100**, a full scan, because a full scan of
    /// 10,000 nodes costs microseconds here and gives the best-scored node. Pass 0 for Volcano's
    /// adaptive sampling.
    pub percentage_nodes_to_find: i32,
    /// `--minimum-feasible-nodes` (100): below this many nodes every node is scanned.
    pub minimum_feasible_nodes: i32,
    /// `--minimum-percentage-nodes-to-find` (5).
    pub minimum_percentage_nodes_to_find: i32,
    /// `--default-queue` (`default`): the queue of a PodGroup whose `spec.queue` is empty.
    pub default_queue: String,
    /// Basalt's optimised paths: incremental node choice for task classes
    /// ([`crate::select::class_cache`]), the inter-pod affinity index
    /// ([`crate::session::affinity_index`]) and the HyperNode gradient path's shortcuts (skip
    /// HyperNodes that cannot hold the job, stop at the first solution when HyperNode order is
    /// off). Off gives the plain reference scans and searches; decisions are the same either
    /// way. On by default.
    pub class_cache: bool,
    /// At most this many task classes kept per action (`None`: as many as
    /// [`crate::select::class_cache::CLASS_MEMORY_BYTES`] holds). Bounds the classes' memory;
    /// decisions are the same for any value.
    pub class_limit: Option<usize>,
    /// `--scheduler-sharding-mode` (`none`): whether and how the scheduler keeps to the nodes of
    /// its NodeShard ([`crate::model::ShardingMode`]). Absent from confs recorded before node
    /// sharding: `none`.
    #[serde(default)]
    pub sharding_mode: crate::model::ShardingMode,
    /// `--scheduler-sharding-name` (`volcano`): the NodeShard whose nodes this scheduler uses
    /// when `sharding_mode` is not `none`.
    #[serde(default = "default_shard_name")]
    pub sharding_name: String,
    /// Volcano's feature gate `SchedulingGatesQueueAdmission` (`--feature-gates`, off by
    /// default): allocate considers pending pods gated only by
    /// [`crate::model::QUEUE_ALLOCATION_GATE`], and for those that opted in and that their
    /// queue admits it decides to remove the gate
    /// ([`crate::decision::Decisions::gate_removals`]); `capacity` reserves their requests in
    /// the queue until they are allocated. Absent from confs recorded before it: off.
    #[serde(default)]
    pub scheduling_gates_queue_admission: bool,
}

/// Volcano's default `--scheduler-sharding-name`.
pub const DEFAULT_SHARD_NAME: &str = "volcano";

fn default_shard_name() -> String {
    DEFAULT_SHARD_NAME.to_string()
}

impl Default for SchedulerOptions {
    fn default() -> Self {
        SchedulerOptions {
            percentage_nodes_to_find: 100,
            minimum_feasible_nodes: 100,
            minimum_percentage_nodes_to_find: 5,
            default_queue: "default".into(),
            class_cache: true,
            class_limit: None,
            sharding_mode: crate::model::ShardingMode::None,
            sharding_name: default_shard_name(),
            scheduling_gates_queue_admission: false,
        }
    }
}

impl SchedulerOptions {
    /// How many feasible nodes a predicate scan over `n` nodes looks for (Volcano
    /// `CalculateNumOfFeasibleNodesToFind`).
    pub fn nodes_to_find(&self, n: usize) -> usize {
        let n32 = n as i64;
        if n32 <= self.minimum_feasible_nodes as i64 || self.percentage_nodes_to_find >= 100 {
            return n;
        }
        let mut pct = self.percentage_nodes_to_find as i64;
        if pct <= 0 {
            pct = (50 - n32 / 125).max(self.minimum_percentage_nodes_to_find as i64);
        }
        let k = n32 * pct / 100;
        k.max(self.minimum_feasible_nodes as i64).min(n32) as usize
    }
}

/// A parsed `volcano-scheduler.conf` plus the flags that change decisions.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SchedulerConf {
    /// Actions in order.
    pub actions: Vec<ActionKind>,
    /// Tiers in order.
    pub tiers: Vec<Tier>,
    /// `configurations[]`: action name → arguments.
    pub configurations: Vec<(String, Arguments)>,
    /// Scheduler flags.
    pub options: SchedulerOptions,
    /// Plugins the conf names that Volcano does not register (a typo such as `proportoin`):
    /// skipped, as Volcano's `OpenSession` skips a plugin it has no builder for; kept here so
    /// that `--strict` can refuse them and a reload can say which running plugin they drop.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_plugins: Vec<UnknownPlugin>,
}

/// Volcano's built-in default conf (`DefaultSchedulerConf`).
pub const DEFAULT_CONF: &str = r#"actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
"#;

impl Default for SchedulerConf {
    fn default() -> Self {
        SchedulerConf::parse(DEFAULT_CONF).expect("built-in default conf parses").0
    }
}

impl SchedulerConf {
    /// Arguments of action `name` from `configurations[]` (empty when absent).
    pub fn action_arguments(&self, name: &str) -> Arguments {
        self.configurations.iter().find(|(n, _)| n == name).map(|(_, a)| a.clone()).unwrap_or_default()
    }

    /// Whether `action` is configured.
    pub fn has_action(&self, action: ActionKind) -> bool {
        self.actions.contains(&action)
    }
}
