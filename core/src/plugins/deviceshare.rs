//! `deviceshare` (Volcano `plugins/deviceshare`, with `api/devices/nvidia/gpushare` and
//! `api/devices/nvidia/vgpu`):
//!
//! - `deviceshare.GPUSharingEnable`: a pod whose containers' limits ask `volcano.sh/gpu-memory`
//!   fits a node only when one of its healthy cards has that much memory free, and takes the
//!   first such card by id; `deviceshare.GPUNumberEnable`: a pod asking `volcano.sh/gpu-number`
//!   takes that many idle cards. The bind carries `volcano.sh/gpu-index` and
//!   `volcano.sh/predicate-time`.
//! - `deviceshare.VGPUEnable` (HAMi): cards from the node's `volcano.sh/node-vgpu-register`;
//!   each container limiting `volcano.sh/vgpu-number` / `volcano.sh/vgpu-memory` takes that
//!   many cards with that memory and `volcano.sh/vgpu-cores` each, filtered by the pod's
//!   `nvidia.com/use-gputype` / `nouse-gputype`, `volcano.sh/vgpu-use-gpuuuid` /
//!   `vgpu-nouse-gpuuuid`, `volcano.sh/vgpu-mode` and `volcano.sh/vgpu-podgroup-policy: spread`
//!   annotations; 100 cores = the card alone ([`crate::session::vgpu`]).
//!   `deviceshare.SchedulePolicy` (`binpack` / `spread`) orders the cards and, with
//!   `deviceshare.ScheduleWeight` > 0, scores the node. The bind carries
//!   `volcano.sh/vgpu-ids-new`, `volcano.sh/devices-to-allocate`, `volcano.sh/vgpu-node`,
//!   `volcano.sh/vgpu-time`, `volcano.sh/bind-time` and `volcano.sh/bind-phase: allocating`; a
//!   queue's `status.allocated` counts the cards' memory and cores.
//! - `deviceshare.NodeLockEnable`: a pod taking cards locks its node (annotation `hamivgpu` for
//!   vGPU, `gpu` for GPU share memory, RFC 3339 time): a node locked less than 5 minutes ago
//!   takes no such pod, so one per node until the device plugin releases it. Volcano writes the
//!   lock from the session's allocate; Basalt carries it in the bind decision and the live
//!   binder writes it before the Binding (and removes it when the Binding fails), so a
//!   discarded allocation locks nothing.
//!
//! GPU share and vGPU together, or share and number together, are refused as in Volcano (which
//! exits): the device table is then off. The cards live in the session's device table
//! ([`crate::session::devices`]), which only the Statement changes.
//!
//! Not implemented: Ascend NPUs, `deviceshare.GPUExclusiveRules`, and the device ConfigMap
//! (`KnownGeometriesCMName`: Basalt uses Volcano's default device config, so no MIG and no
//! memory-percentage resource).

use super::k8s::PodCtx;
use crate::conf::{ArgKind, ArgSpec, SchedulerConf};
use crate::session::devices::{CardPolicy, DeviceConf, DeviceMode};
use crate::session::fit::Reason;
use crate::session::tables::{NodeIdx, TaskIdx};
use crate::session::State;

/// The plugin's name.
pub const NAME: &str = "deviceshare";

/// The `arguments` keys deviceshare reads.
pub const ARGS: &[ArgSpec] = &[
    ArgSpec::new("deviceshare.GPUSharingEnable", ArgKind::Bool, "false"),
    ArgSpec::new("deviceshare.GPUNumberEnable", ArgKind::Bool, "false"),
    ArgSpec::new("deviceshare.NodeLockEnable", ArgKind::Bool, "false"),
    ArgSpec::new("deviceshare.VGPUEnable", ArgKind::Bool, "false"),
    ArgSpec::new("deviceshare.SchedulePolicy", ArgKind::Str, "\"\""),
    ArgSpec::new("deviceshare.ScheduleWeight", ArgKind::Int, "0"),
    ArgSpec::new("deviceshare.GPUExclusiveRules", ArgKind::Yaml, "none").ignored("GPU exclusivity rules are not implemented"),
    ArgSpec::new("deviceshare.KnownGeometriesCMName", ArgKind::Str, "\"volcano-vgpu-device-config\"")
        .ignored("Basalt reads no device ConfigMap: Volcano's default device config (no MIG)"),
    ArgSpec::new("deviceshare.KnownGeometriesCMNamespace", ArgKind::Str, "\"kube-system\"")
        .ignored("Basalt reads no device ConfigMap: Volcano's default device config (no MIG)"),
    ArgSpec::new("deviceshare.AscendMindClusterVNPUEnable", ArgKind::Bool, "false").ignored("Ascend NPUs are not implemented"),
    ArgSpec::new("deviceshare.AscendHAMiVNPUEnable", ArgKind::Bool, "false").ignored("Ascend NPUs are not implemented"),
];

/// The device settings a conf asks for ([`crate::plugins::REGISTRY`]'s `devices`, the
/// session's device table follows them): the first `deviceshare` plugin's arguments (Volcano
/// keeps them in globals). Share and number both on, or either with vGPU, is mode `Off`:
/// Volcano exits with "can not define true in both gpu sharing and gpu number" / "gpu-share and
/// vgpu can't be used together" ([`conflict`] says which).
pub fn device_conf(conf: &SchedulerConf) -> DeviceConf {
    let Some(p) = conf.tiers.iter().flat_map(|t| &t.plugins).find(|p| p.name == NAME) else {
        return DeviceConf::default();
    };
    let a = &p.arguments;
    let flag = |k: &str| a.bool(k).unwrap_or(false);
    let (share, number, vgpu) =
        (flag("deviceshare.GPUSharingEnable"), flag("deviceshare.GPUNumberEnable"), flag("deviceshare.VGPUEnable"));
    let mode = match (share, number, vgpu) {
        (true, false, false) => DeviceMode::Share,
        (false, true, false) => DeviceMode::Number,
        (false, false, true) => DeviceMode::Vgpu,
        _ => DeviceMode::Off,
    };
    let policy = match a.string("deviceshare.SchedulePolicy").as_deref() {
        Some("binpack") => CardPolicy::Binpack,
        Some("spread") => CardPolicy::Spread,
        _ => CardPolicy::Default,
    };
    DeviceConf {
        mode,
        policy,
        weight: a.int("deviceshare.ScheduleWeight").unwrap_or(0),
        node_lock: flag("deviceshare.NodeLockEnable"),
    }
}

/// Volcano's fatal device flag combinations, as its message (`None` when the flags are fine).
pub fn conflict(conf: &SchedulerConf) -> Option<&'static str> {
    let p = conf.tiers.iter().flat_map(|t| &t.plugins).find(|p| p.name == NAME)?;
    let flag = |k: &str| p.arguments.bool(k).unwrap_or(false);
    let (share, number, vgpu) =
        (flag("deviceshare.GPUSharingEnable"), flag("deviceshare.GPUNumberEnable"), flag("deviceshare.VGPUEnable"));
    if share && number {
        Some("can not define true in both gpu sharing and gpu number")
    } else if (share || number) && vgpu {
        Some("gpu-share and vgpu can't be used together")
    } else {
        None
    }
}

/// The deviceshare plugin; its state is the session's device table.
pub struct DeviceShare;

plugin_impl! {
    impl<'a> for DeviceShare {
        fn name(&self) -> &'static str {
            NAME
        }
        fn predicate(&self, s: &State<'a>, _ctx: &PodCtx, t: TaskIdx, n: NodeIdx) -> Result<(), Reason> {
            s.device_fit(t, n)
        }
        fn node_order(&self, s: &State<'a>, _ctx: &PodCtx, t: TaskIdx, n: NodeIdx) -> f64 {
            s.device_score(t, n)
        }
        fn class_key(&self, s: &State<'a>, t: TaskIdx) -> Option<u64> {
            // The result depends on the task through what it asks of the cards (and, for a
            // vGPU pod spreading its PodGroup, on the PodGroup); card usage changes only with a
            // node's accounting.
            let spec = &s.tasks.rec[t.ix()].spec;
            let g = &spec.gpu;
            let mut key = g.memory.rotate_left(16) ^ u64::from(g.number);
            if s.devices.mode == DeviceMode::Vgpu && spec.vgpu.requests() {
                use std::hash::{Hash, Hasher};
                let mut h = std::collections::hash_map::DefaultHasher::new();
                spec.vgpu.requests.hash(&mut h);
                (&spec.vgpu.use_types, &spec.vgpu.nouse_types, &spec.vgpu.use_uuids, &spec.vgpu.nouse_uuids).hash(&mut h);
                (&spec.vgpu.mode, spec.vgpu.group_spread).hash(&mut h);
                if spec.vgpu.group_spread && spec.group.is_some() {
                    s.tasks.job_of(t).map(|j| j.0).hash(&mut h);
                }
                key ^= h.finish();
            }
            Some(key)
        }
    }
}

impl DeviceShare {
    /// The functions this plugin registers (Volcano's `AddPredicateFn` and `AddNodeOrderFn`;
    /// its `BatchNodeOrderFn` scores only Ascend NPUs and is not registered);
    /// `core/tests/plugin_fns.rs` checks it against the methods its `plugin_impl!` block
    /// writes.
    pub const FNS: u32 = {
        use crate::framework::Fn as F;
        F::Predicate.bit() | F::NodeOrder.bit()
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &str) -> SchedulerConf {
        let text = format!("actions: \"allocate\"\ntiers:\n- plugins:\n  - name: deviceshare\n    arguments: {{{args}}}\n");
        SchedulerConf::parse(&text).unwrap().0
    }

    #[test]
    fn vgpu_settings_are_read_from_the_arguments() {
        let c = device_conf(&parse(
            "deviceshare.VGPUEnable: true, deviceshare.SchedulePolicy: binpack, deviceshare.ScheduleWeight: 10, deviceshare.NodeLockEnable: true",
        ));
        assert_eq!(c, DeviceConf { mode: DeviceMode::Vgpu, policy: CardPolicy::Binpack, weight: 10, node_lock: true });
        let c = device_conf(&parse("deviceshare.VGPUEnable: true, deviceshare.SchedulePolicy: spread"));
        assert_eq!((c.policy, c.weight, c.node_lock), (CardPolicy::Spread, 0, false));
        assert_eq!(
            device_conf(&parse("deviceshare.VGPUEnable: true, deviceshare.SchedulePolicy: other")).policy,
            CardPolicy::Default
        );
    }

    #[test]
    fn flags_volcano_refuses_together_turn_devices_off_and_are_named() {
        for (args, why) in [
            (
                "deviceshare.GPUSharingEnable: true, deviceshare.GPUNumberEnable: true",
                "can not define true in both gpu sharing and gpu number",
            ),
            ("deviceshare.GPUSharingEnable: true, deviceshare.VGPUEnable: true", "gpu-share and vgpu can't be used together"),
            ("deviceshare.GPUNumberEnable: true, deviceshare.VGPUEnable: true", "gpu-share and vgpu can't be used together"),
        ] {
            assert_eq!(device_conf(&parse(args)).mode, DeviceMode::Off, "{args}");
            assert_eq!(conflict(&parse(args)), Some(why), "{args}");
            let report = crate::plugins::REGISTRY.check(&parse(args));
            assert!(report.iter().any(|u| u.message.contains(why) && u.strict), "{report:?}");
        }
        assert_eq!(conflict(&parse("deviceshare.VGPUEnable: true")), None);
    }
}
