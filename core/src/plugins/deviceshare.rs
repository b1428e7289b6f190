//! `deviceshare` (Volcano `plugins/deviceshare`, GPU share and GPU number of
//! `api/devices/nvidia/gpushare`): with `deviceshare.GPUSharingEnable` a pod whose containers'
//! limits ask `volcano.sh/gpu-memory` fits a node only when one of its healthy cards has that
//! much memory free, and takes the first such card by id; with `deviceshare.GPUNumberEnable` a
//! pod asking `volcano.sh/gpu-number` takes that many idle cards. The cards live in the
//! session's device table ([`crate::session::devices`]), which the Statement changes; the
//! chosen cards reach the bind as `volcano.sh/gpu-index` (and `volcano.sh/predicate-time`).
//!
//! Not implemented: vGPU (`VGPUEnable`), Ascend NPUs, `NodeLockEnable`, `SchedulePolicy` and
//! `ScheduleWeight` (their node score is 0 for GPU share in Volcano too).

use super::k8s::PodCtx;
use crate::conf::{ArgKind, ArgSpec, SchedulerConf};
use crate::session::devices::DeviceMode;
use crate::session::fit::Reason;
use crate::session::tables::{NodeIdx, TaskIdx};
use crate::session::State;

/// The plugin's name.
pub const NAME: &str = "deviceshare";

/// The `arguments` keys deviceshare reads.
pub const ARGS: &[ArgSpec] = &[
    ArgSpec::new("deviceshare.GPUSharingEnable", ArgKind::Bool, "false"),
    ArgSpec::new("deviceshare.GPUNumberEnable", ArgKind::Bool, "false"),
    ArgSpec::new("deviceshare.NodeLockEnable", ArgKind::Bool, "false")
        .ignored("Basalt takes no node lock: one scheduler decides every card"),
    ArgSpec::new("deviceshare.VGPUEnable", ArgKind::Bool, "false").ignored("vGPU is not implemented"),
    ArgSpec::new("deviceshare.SchedulePolicy", ArgKind::Str, "\"\"").ignored("vGPU is not implemented"),
    ArgSpec::new("deviceshare.ScheduleWeight", ArgKind::Int, "0").ignored("vGPU is not implemented"),
];

/// The GPU share mode a conf asks for ([`crate::plugins::REGISTRY`]'s `devices`, the session's
/// device table follows it): the first `deviceshare` plugin's flags (Volcano keeps them in
/// globals). Both flags on is `Off`: Volcano exits with "can not define true in both gpu sharing
/// and gpu number" (the runtime's conf check reports it).
pub fn mode(conf: &SchedulerConf) -> DeviceMode {
    let Some(p) = conf.tiers.iter().flat_map(|t| &t.plugins).find(|p| p.name == NAME) else {
        return DeviceMode::Off;
    };
    let share = p.arguments.bool("deviceshare.GPUSharingEnable").unwrap_or(false);
    let number = p.arguments.bool("deviceshare.GPUNumberEnable").unwrap_or(false);
    match (share, number) {
        (true, false) => DeviceMode::Share,
        (false, true) => DeviceMode::Number,
        _ => DeviceMode::Off,
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
        fn class_key(&self, s: &State<'a>, t: TaskIdx) -> Option<u64> {
            // The result depends on the task through what it asks of the cards; card usage
            // changes only with a node's accounting.
            let g = &s.tasks.rec[t.ix()].spec.gpu;
            Some(g.memory.rotate_left(16) ^ u64::from(g.number))
        }
    }
}

impl DeviceShare {
    /// The functions this plugin registers (Volcano's `AddPredicateFn`; its `NodeOrderFn` and
    /// `BatchNodeOrderFn` score 0 without vGPU/NPU and are not registered);
    /// `core/tests/plugin_fns.rs` checks it against the methods its `plugin_impl!` block
    /// writes.
    pub const FNS: u32 = {
        use crate::framework::Fn as F;
        F::Predicate.bit()
    };
}
