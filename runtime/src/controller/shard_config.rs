//! The sharding controller's configuration (Volcano's `pkg/controllers/sharding/config.go`), pure:
//! the `sharding.yaml` key of the sharding ConfigMap ([`parse_yaml`]) and the deprecated
//! `--scheduler-configs` strings `name:type:minUtil:maxUtil:preferWarmup:minNodes:maxNodes`
//! ([`parse_flag`]), both resolved into each scheduler's policy chain ([`ShardPolicy`]) with
//! Volcano's compatibility rules (`applyPolicyDefaults`):
//! * no `policies`: one `allocation-rate` policy from the scheduler-level `arguments`, or, when
//!   those are empty, from `cpuUtilizationMin`/`cpuUtilizationMax`; then a `warmup` policy when
//!   `preferWarmupNodes` is set (ConfigMap only: the flag form always has its `allocation-rate`
//!   policy, so its `preferWarmup` is only warned about, as in Volcano);
//! * scheduler-level `minNodes`/`maxNodes` (deprecated) > 0 and no `node-limit` policy: a
//!   `node-limit` policy with those bounds is appended.
//!
//! Errors name the field as Volcano's do (`schedulerConfigs[1] (agent): policies[0].name must not
//! be empty`). Basalt also refuses what Volcano only logs and then runs without (an unknown policy
//! name, a policy argument of the wrong type or out of range, an unparsable `shardSyncPeriod`)
//! and a scheduler name given twice: the caller keeps its last good configuration.

use crate::convert::duration::parse_go_duration;
use serde::Deserialize;
use serde_yaml::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// The ConfigMap key holding the YAML (Volcano's `ConfigMapDataKey`).
pub const CONFIGMAP_KEY: &str = "sharding.yaml";
/// `--sharding-configmap`'s default.
pub const DEFAULT_CONFIGMAP_NAME: &str = "volcano-sharding-configmap";
/// `--sharding-configmap-namespace`'s default.
pub const DEFAULT_CONFIGMAP_NAMESPACE: &str = "volcano-system";
/// `--scheduler-configs`' default entries (Volcano's).
pub const DEFAULT_SCHEDULER_CONFIGS: [&str; 2] =
    ["volcano:volcano:0.0:0.6:false:2:100", "agent-scheduler:agent:0.7:1.0:true:2:100"];
/// The warmup policy's default label key and value.
pub const WARMUP_LABEL: (&str, &str) = ("node.volcano.sh/warmup", "true");

/// One policy of a scheduler's chain, constructed and checked (Volcano's `policy/` packages).
#[derive(Clone, Debug, PartialEq)]
pub enum ShardPolicy {
    /// `allocation-rate` (filter + score): nodes whose CPU utilisation, rounded to two decimals,
    /// lies in `[min, max]` (bounds rounded the same way), scored by their place in that range.
    AllocationRate {
        /// `minCPUUtil`, rounded to 0.01.
        min: f64,
        /// `maxCPUUtil`, rounded to 0.01.
        max: f64,
    },
    /// `warmup` (score): 1 for a node whose label `label` equals `value` (a missing label reads
    /// as the empty string, as a Go map does), else 0.
    Warmup {
        /// `warmupLabel` (default `node.volcano.sh/warmup`).
        label: String,
        /// `warmupLabelValue` (default `true`).
        value: String,
    },
    /// `node-limit` (select): keeps at most `max` nodes of the sorted candidates (0: no bound);
    /// `min` is informational (a shortfall is logged, never padded).
    NodeLimit {
        /// `minNodes`.
        min: u64,
        /// `maxNodes` (0: unbounded).
        max: u64,
    },
}

impl ShardPolicy {
    /// The policy's registered name.
    pub fn name(&self) -> &'static str {
        match self {
            ShardPolicy::AllocationRate { .. } => "allocation-rate",
            ShardPolicy::Warmup { .. } => "warmup",
            ShardPolicy::NodeLimit { .. } => "node-limit",
        }
    }
}

/// A policy with its weight (≥ 1: an omitted or zero `weight` is 1, as Volcano's `toPolicyRefs`).
#[derive(Clone, Debug, PartialEq)]
pub struct WeightedPolicy {
    /// The policy.
    pub policy: ShardPolicy,
    /// Its score multiplier.
    pub weight: u32,
}

/// One scheduler's shard specification: the NodeShard `name` and its policy chain.
#[derive(Clone, Debug, PartialEq)]
pub struct SchedulerShard {
    /// The scheduler (and NodeShard) name.
    pub name: String,
    /// `type` (informational, e.g. `volcano`, `agent`).
    pub kind: String,
    /// The chain, in configuration order.
    pub policies: Vec<WeightedPolicy>,
}

/// A whole configuration: the schedulers in order (earlier ones choose first) and the
/// ConfigMap's optional top-level settings.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ShardingConfig {
    /// `schedulerConfigs`, resolved.
    pub schedulers: Vec<SchedulerShard>,
    /// `shardSyncPeriod` when given.
    pub shard_sync_period: Option<Duration>,
    /// `enableNodeEventTrigger` when given.
    pub enable_node_event_trigger: Option<bool>,
    /// Volcano's deprecation warnings for this configuration (to be logged when it is applied).
    pub warnings: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct RawConfig {
    #[serde(default)]
    scheduler_configs: Vec<RawScheduler>,
    #[serde(default)]
    shard_sync_period: String,
    #[serde(default)]
    enable_node_event_trigger: Option<bool>,
}

#[derive(Deserialize, Default, Clone)]
#[serde(rename_all = "camelCase")]
struct RawScheduler {
    #[serde(default)]
    name: String,
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    policies: Vec<RawPolicy>,
    #[serde(default)]
    arguments: BTreeMap<String, Value>,
    #[serde(default)]
    cpu_utilization_min: f64,
    #[serde(default)]
    cpu_utilization_max: f64,
    #[serde(default)]
    prefer_warmup_nodes: bool,
    #[serde(default)]
    min_nodes: i64,
    #[serde(default)]
    max_nodes: i64,
}

#[derive(Deserialize, Default, Clone)]
struct RawPolicy {
    #[serde(default)]
    name: String,
    #[serde(default)]
    weight: i64,
    #[serde(default)]
    arguments: BTreeMap<String, Value>,
}

/// Parses the ConfigMap's `sharding.yaml` (Volcano's `ParseShardingConfig`, then the policy
/// chains built as its `ShardingManager` does).
///
/// Errors: YAML that does not parse or has a field of the wrong type (serde's message with the
/// path), no `schedulerConfigs`, or the first rule broken, naming `schedulerConfigs[i] (name)`
/// and the field.
pub fn parse_yaml(text: &str) -> Result<ShardingConfig, String> {
    let raw: RawConfig = serde_yaml::from_str(text).map_err(|e| format!("sharding config: {e}"))?;
    if raw.scheduler_configs.is_empty() {
        return Err("sharding config must contain at least one schedulerConfig entry".into());
    }
    let shard_sync_period = match raw.shard_sync_period.trim() {
        "" => None,
        s => Some(parse_go_duration(s).map_err(|e| format!("shardSyncPeriod: {e}"))?),
    };
    let mut warnings = Vec::new();
    let mut schedulers = Vec::new();
    for (i, sc) in raw.scheduler_configs.iter().enumerate() {
        check_scalars(i, sc)?;
        schedulers.push(resolve(i, sc.clone(), &mut warnings)?);
    }
    check_unique(&schedulers)?;
    Ok(ShardingConfig { schedulers, shard_sync_period, enable_node_event_trigger: raw.enable_node_event_trigger, warnings })
}

/// Parses the `--scheduler-configs` entries (Volcano's `ParseConfig`/`parseOldFormat`): each
/// `name:type:minUtil:maxUtil:preferWarmup:minNodes:maxNodes`, a utilisation `inf`/`infinity`
/// reading 1.0 and `-inf`/`-infinity` 0.0. Adds Volcano's warning that the flag is deprecated.
///
/// Errors: the entry quoted and the part that is wrong (count, number, bool) or the rule broken.
pub fn parse_flag(entries: &[String]) -> Result<ShardingConfig, String> {
    let mut warnings =
        vec!["--scheduler-configs is deprecated and will be removed in a future release; migrate to the sharding ConfigMap"
            .to_string()];
    let mut schedulers = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let bad = |why: String| format!("--scheduler-configs {entry:?}: {why}");
        let parts: Vec<&str> = entry.split(':').collect();
        if parts.len() != 7 {
            return Err(bad(format!(
                "expected 7 colon-separated parts (name:type:min_util:max_util:prefer_warmup:min_nodes:max_nodes), got {}",
                parts.len()
            )));
        }
        let min = utilization(parts[2]).map_err(|e| bad(format!("invalid min utilization: {e}")))?;
        let max = utilization(parts[3]).map_err(|e| bad(format!("invalid max utilization: {e}")))?;
        let warm = go_bool(parts[4]).ok_or_else(|| bad(format!("invalid prefer warmup flag {:?}", parts[4])))?;
        let min_nodes: i64 = parts[5].parse().map_err(|_| bad(format!("invalid min nodes {:?}", parts[5])))?;
        let max_nodes: i64 = parts[6].parse().map_err(|_| bad(format!("invalid max nodes {:?}", parts[6])))?;
        let args: BTreeMap<String, Value> =
            [("minCPUUtil".to_string(), Value::from(min)), ("maxCPUUtil".to_string(), Value::from(max))].into();
        let raw = RawScheduler {
            name: parts[0].to_string(),
            kind: parts[1].to_string(),
            policies: vec![RawPolicy { name: "allocation-rate".into(), weight: 1, arguments: args.clone() }],
            arguments: args,
            cpu_utilization_min: min,
            cpu_utilization_max: max,
            prefer_warmup_nodes: warm,
            min_nodes,
            max_nodes,
        };
        if raw.name.is_empty() {
            return Err(bad("name must not be empty".into()));
        }
        schedulers.push(resolve(i, raw, &mut warnings).map_err(bad)?);
    }
    check_unique(&schedulers)?;
    Ok(ShardingConfig { schedulers, shard_sync_period: None, enable_node_event_trigger: None, warnings })
}

fn utilization(s: &str) -> Result<f64, String> {
    match s {
        "inf" | "infinity" => Ok(1.0),
        "-inf" | "-infinity" => Ok(0.0),
        _ => s.parse::<f64>().ok().filter(|v| v.is_finite()).ok_or_else(|| format!("{s:?} is not a number")),
    }
}

/// Go's `strconv.ParseBool`.
fn go_bool(s: &str) -> Option<bool> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// Volcano's per-entry checks of `ParseShardingConfig` (name, deprecated ranges and bounds).
fn check_scalars(i: usize, sc: &RawScheduler) -> Result<(), String> {
    let at = format!("schedulerConfigs[{i}] ({})", sc.name);
    if sc.name.is_empty() {
        return Err(format!("schedulerConfigs[{i}]: name must not be empty"));
    }
    for (field, v) in [("cpuUtilizationMin", sc.cpu_utilization_min), ("cpuUtilizationMax", sc.cpu_utilization_max)] {
        if !(0.0..=1.0).contains(&v) {
            return Err(format!("{at}: {field} {v:.2} out of range [0,1]"));
        }
    }
    if sc.cpu_utilization_min > sc.cpu_utilization_max {
        return Err(format!(
            "{at}: cpuUtilizationMin ({:.2}) must be <= cpuUtilizationMax ({:.2})",
            sc.cpu_utilization_min, sc.cpu_utilization_max
        ));
    }
    if sc.min_nodes < 0 {
        return Err(format!("{at}: minNodes must be >= 0"));
    }
    if sc.max_nodes < sc.min_nodes {
        return Err(format!("{at}: maxNodes ({}) must be >= minNodes ({})", sc.max_nodes, sc.min_nodes));
    }
    Ok(())
}

fn check_unique(schedulers: &[SchedulerShard]) -> Result<(), String> {
    let mut seen = BTreeSet::new();
    for (i, s) in schedulers.iter().enumerate() {
        if !seen.insert(s.name.as_str()) {
            return Err(format!("schedulerConfigs[{i}] ({}): name given twice (one NodeShard per scheduler)", s.name));
        }
    }
    Ok(())
}

/// Volcano's `validatePolicies`, `applyPolicyDefaults` and policy construction for entry `i`.
fn resolve(i: usize, mut sc: RawScheduler, warnings: &mut Vec<String>) -> Result<SchedulerShard, String> {
    let at = format!("schedulerConfigs[{i}] ({})", sc.name);
    for (j, p) in sc.policies.iter().enumerate() {
        if p.name.is_empty() {
            return Err(format!("{at}: policies[{j}].name must not be empty"));
        }
        if p.weight < 0 {
            return Err(format!("{at}: policies[{j}] ({}): weight must be >= 0 (omit for default of 1)", p.name));
        }
        if p.name != "node-limit" {
            for key in ["minNodes", "maxNodes"] {
                if p.arguments.contains_key(key) {
                    return Err(format!("{at}: policies[{j}] ({}): {key} is only supported by the node-limit policy", p.name));
                }
            }
        }
    }
    if sc.policies.is_empty() {
        if sc.arguments.is_empty() {
            sc.arguments = [
                ("minCPUUtil".to_string(), Value::from(sc.cpu_utilization_min)),
                ("maxCPUUtil".to_string(), Value::from(sc.cpu_utilization_max)),
            ]
            .into();
        }
        sc.policies.push(RawPolicy { name: "allocation-rate".into(), weight: 1, arguments: sc.arguments.clone() });
        if sc.prefer_warmup_nodes {
            sc.policies.push(RawPolicy { name: "warmup".into(), weight: 1, arguments: BTreeMap::new() });
        }
    } else if sc.prefer_warmup_nodes {
        warnings.push(format!(
            "scheduler {:?}: preferWarmupNodes is no longer honored by the allocation-rate policy; use policy=warmup to prioritize warmup nodes",
            sc.name
        ));
    }
    if (sc.min_nodes > 0 || sc.max_nodes > 0) && !sc.policies.iter().any(|p| p.name == "node-limit") {
        warnings.push(format!(
            "scheduler {:?}: scheduler-level minNodes/maxNodes are deprecated; configure the node-limit policy with minNodes/maxNodes arguments instead",
            sc.name
        ));
        let args = [("minNodes".to_string(), Value::from(sc.min_nodes)), ("maxNodes".to_string(), Value::from(sc.max_nodes))];
        sc.policies.push(RawPolicy { name: "node-limit".into(), weight: 0, arguments: args.into() });
    }
    let mut policies = Vec::new();
    for (j, p) in sc.policies.iter().enumerate() {
        let at = format!("{at}: policies[{j}] ({})", p.name);
        let policy = build_policy(p, &at)?;
        policies.push(WeightedPolicy { policy, weight: u32::try_from(p.weight.max(1)).unwrap_or(u32::MAX) });
    }
    Ok(SchedulerShard { name: sc.name, kind: sc.kind, policies })
}

/// Rounds a utilisation to two decimals (Volcano's `roundUtil`).
pub fn round_util(u: f64) -> f64 {
    (u * 100.0).round() / 100.0
}

/// One policy's `Initialize`, strict about argument types.
fn build_policy(p: &RawPolicy, at: &str) -> Result<ShardPolicy, String> {
    let args = |key: &str| p.arguments.get(key).filter(|v| !v.is_null());
    let float = |key: &str, default: f64| -> Result<f64, String> {
        match args(key) {
            None => Ok(default),
            Some(v) => {
                v.as_f64().filter(|f| f.is_finite()).ok_or_else(|| format!("{at}: arguments.{key}: {} is not a number", show(v)))
            }
        }
    };
    let int = |key: &str| -> Result<i64, String> {
        match args(key) {
            None => Ok(0),
            Some(v) => v.as_i64().ok_or_else(|| format!("{at}: arguments.{key}: {} is not an integer", show(v))),
        }
    };
    let string = |key: &str, default: &str| -> Result<String, String> {
        match args(key) {
            None => Ok(default.to_string()),
            Some(v) => {
                v.as_str().map(str::to_string).ok_or_else(|| format!("{at}: arguments.{key}: {} is not a string", show(v)))
            }
        }
    };
    match p.name.as_str() {
        "allocation-rate" => {
            let (min, max) = (float("minCPUUtil", 0.0)?, float("maxCPUUtil", 0.0)?);
            if min < 0.0 || max > 1.0 || min > max {
                return Err(format!(
                    "{at}: invalid CPU utilization range [{min:.2}, {max:.2}] (arguments.minCPUUtil, arguments.maxCPUUtil): must be within [0.0, 1.0] and min <= max"
                ));
            }
            Ok(ShardPolicy::AllocationRate { min: round_util(min), max: round_util(max) })
        }
        "warmup" => {
            let label = string("warmupLabel", WARMUP_LABEL.0)?;
            if label.is_empty() {
                return Err(format!("{at}: arguments.warmupLabel cannot be empty"));
            }
            Ok(ShardPolicy::Warmup { label, value: string("warmupLabelValue", WARMUP_LABEL.1)? })
        }
        "node-limit" => {
            let (min, max) = (int("minNodes")?, int("maxNodes")?);
            if min < 0 {
                return Err(format!("{at}: invalid arguments.minNodes {min}: must be >= 0"));
            }
            if max > 0 && max < min {
                return Err(format!("{at}: invalid bounds [{min}, {max}]: arguments.maxNodes must be >= arguments.minNodes"));
            }
            Ok(ShardPolicy::NodeLimit { min: min as u64, max: max.max(0) as u64 })
        }
        other => Err(format!("{at}: unknown policy {other:?} (known: allocation-rate, warmup, node-limit)")),
    }
}

fn show(v: &Value) -> String {
    serde_yaml::to_string(v).map(|s| s.trim().to_string()).unwrap_or_else(|_| format!("{v:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flag(entries: &[&str]) -> Result<ShardingConfig, String> {
        parse_flag(&entries.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn volcano_default_flags_become_allocation_rate_and_node_limit() {
        let c = flag(&DEFAULT_SCHEDULER_CONFIGS).unwrap();
        assert_eq!(c.schedulers.len(), 2);
        let v = &c.schedulers[0];
        assert_eq!((v.name.as_str(), v.kind.as_str()), ("volcano", "volcano"));
        let chain: Vec<ShardPolicy> = v.policies.iter().map(|p| p.policy.clone()).collect();
        assert_eq!(chain, [ShardPolicy::AllocationRate { min: 0.0, max: 0.6 }, ShardPolicy::NodeLimit { min: 2, max: 100 }]);
        // preferWarmup=true in the flag form adds no warmup policy (Volcano only warns).
        let a = &c.schedulers[1];
        assert!(a.policies.iter().all(|p| p.policy.name() != "warmup"), "{a:?}");
        assert!(
            c.warnings.iter().any(|w| w.contains("\"agent-scheduler\": preferWarmupNodes is no longer honored")),
            "{:?}",
            c.warnings
        );
        assert!(c.warnings[0].contains("--scheduler-configs is deprecated"));
    }

    #[test]
    fn flag_spellings_and_errors() {
        let c = flag(&["s:t:-inf:infinity:T:0:0"]).unwrap();
        assert_eq!(c.schedulers[0].policies.len(), 1, "no node-limit when both bounds are 0");
        assert_eq!(c.schedulers[0].policies[0].policy, ShardPolicy::AllocationRate { min: 0.0, max: 1.0 });
        assert!(flag(&["a:b:0:1"]).unwrap_err().contains("expected 7 colon-separated parts"));
        assert!(flag(&["a:b:x:1:false:0:0"]).unwrap_err().contains("invalid min utilization"));
        assert!(flag(&["a:b:0:1:yes:0:0"]).unwrap_err().contains("invalid prefer warmup flag \"yes\""));
        assert!(flag(&["a:b:0:1:false:two:0"]).unwrap_err().contains("invalid min nodes \"two\""));
        let e = flag(&["a:b:0.8:0.2:false:0:0"]).unwrap_err();
        assert!(
            e.starts_with("--scheduler-configs \"a:b:0.8:0.2:false:0:0\"") && e.contains("invalid CPU utilization range"),
            "{e}"
        );
        assert!(flag(&["a:b:0:1:false:0:0", "a:c:0:1:false:0:0"]).unwrap_err().contains("name given twice"));
    }

    #[test]
    fn yaml_policies_in_order_with_weights_and_defaults() {
        let c = parse_yaml(
            r#"
schedulerConfigs:
  - name: volcano
    type: volcano
    policies:
      - name: allocation-rate
        arguments: {minCPUUtil: 0.0, maxCPUUtil: 0.604}
      - name: warmup
        weight: 2
      - name: node-limit
        arguments: {minNodes: 2, maxNodes: 100}
shardSyncPeriod: "2m"
enableNodeEventTrigger: false
"#,
        )
        .unwrap();
        let p = &c.schedulers[0].policies;
        assert_eq!(p[0], WeightedPolicy { policy: ShardPolicy::AllocationRate { min: 0.0, max: 0.6 }, weight: 1 });
        assert_eq!(
            p[1],
            WeightedPolicy {
                policy: ShardPolicy::Warmup { label: "node.volcano.sh/warmup".into(), value: "true".into() },
                weight: 2
            }
        );
        assert_eq!(p[2].policy, ShardPolicy::NodeLimit { min: 2, max: 100 });
        assert_eq!(c.shard_sync_period, Some(Duration::from_secs(120)));
        assert_eq!(c.enable_node_event_trigger, Some(false));
        assert!(c.warnings.is_empty());
    }

    #[test]
    fn yaml_legacy_fields_synthesize_the_chain() {
        // Volcano's example ConfigMap: the deprecated scalar fields only.
        let c = parse_yaml(
            r#"
schedulerConfigs:
  - {name: agent-scheduler, type: agent, cpuUtilizationMin: 0.7, cpuUtilizationMax: 1.0, preferWarmupNodes: true, minNodes: 1, maxNodes: 100}
  - {name: volcano, type: volcano, cpuUtilizationMin: 0.0, cpuUtilizationMax: 0.69, minNodes: 1, maxNodes: 100}
  - {name: legacy-args, type: volcano, arguments: {minCPUUtil: 0.2, maxCPUUtil: 0.3}}
"#,
        )
        .unwrap();
        let names = |i: usize| c.schedulers[i].policies.iter().map(|p| p.policy.name()).collect::<Vec<_>>();
        assert_eq!(names(0), ["allocation-rate", "warmup", "node-limit"]);
        assert_eq!(names(1), ["allocation-rate", "node-limit"]);
        assert_eq!(c.schedulers[1].policies[0].policy, ShardPolicy::AllocationRate { min: 0.0, max: 0.69 });
        assert_eq!(c.schedulers[2].policies[0].policy, ShardPolicy::AllocationRate { min: 0.2, max: 0.3 });
        assert_eq!(c.warnings.iter().filter(|w| w.contains("minNodes/maxNodes are deprecated")).count(), 2);
    }

    #[test]
    fn bad_yaml_names_the_field() {
        let err = |y: &str| parse_yaml(y).unwrap_err();
        assert_eq!(err("shardSyncPeriod: 1m"), "sharding config must contain at least one schedulerConfig entry");
        assert_eq!(err("schedulerConfigs: [{type: x}]"), "schedulerConfigs[0]: name must not be empty");
        assert!(err("schedulerConfigs: [{name: a, cpuUtilizationMax: 1.5}]")
            .contains("schedulerConfigs[0] (a): cpuUtilizationMax 1.50 out of range"));
        assert!(err("schedulerConfigs: [{name: a, minNodes: 3, maxNodes: 1}]").contains("maxNodes (1) must be >= minNodes (3)"));
        assert_eq!(
            err("schedulerConfigs: [{name: a}, {name: b, policies: [{name: ''}]}]"),
            "schedulerConfigs[1] (b): policies[0].name must not be empty"
        );
        assert!(err("schedulerConfigs: [{name: a, policies: [{name: warmup, weight: -1}]}]")
            .contains("policies[0] (warmup): weight must be >= 0"));
        assert!(err("schedulerConfigs: [{name: a, policies: [{name: warmup, arguments: {maxNodes: 3}}]}]")
            .contains("policies[0] (warmup): maxNodes is only supported by the node-limit policy"));
        assert!(err("schedulerConfigs: [{name: a, policies: [{name: binpack}]}]")
            .contains("policies[0] (binpack): unknown policy \"binpack\""));
        assert!(err("schedulerConfigs: [{name: a, policies: [{name: allocation-rate, arguments: {minCPUUtil: '0.5'}}]}]")
            .contains("arguments.minCPUUtil: '0.5' is not a number"));
        assert!(err(
            "schedulerConfigs: [{name: a, policies: [{name: allocation-rate, arguments: {minCPUUtil: 0.9, maxCPUUtil: 0.1}}]}]"
        )
        .contains("invalid CPU utilization range [0.90, 0.10]"));
        assert!(err("schedulerConfigs: [{name: a, policies: [{name: node-limit, arguments: {minNodes: 5, maxNodes: 2}}]}]")
            .contains("arguments.maxNodes must be >= arguments.minNodes"));
        assert!(err("schedulerConfigs: [{name: a, policies: [{name: warmup, arguments: {warmupLabel: ''}}]}]")
            .contains("arguments.warmupLabel cannot be empty"));
        assert!(
            err("schedulerConfigs: [{name: a}]\nshardSyncPeriod: soon").starts_with("shardSyncPeriod: invalid duration \"soon\"")
        );
        assert!(err("schedulerConfigs: [{name: a, minNodes: many}]").contains("minNodes"), "serde names the field");
        assert!(err("schedulerConfigs: [{name: a}, {name: a}]").contains("schedulerConfigs[1] (a): name given twice"));
    }

    #[test]
    fn node_limit_without_max_is_unbounded_and_weights_default_to_one() {
        let c = parse_yaml("schedulerConfigs: [{name: a, policies: [{name: node-limit, weight: 0, arguments: {minNodes: 3}}]}]")
            .unwrap();
        assert_eq!(c.schedulers[0].policies[0], WeightedPolicy { policy: ShardPolicy::NodeLimit { min: 3, max: 0 }, weight: 1 });
        assert_eq!(round_util(0.606), 0.61);
        assert_eq!(round_util(0.6049), 0.6);
    }
}
