//! What of a scheduler conf Basalt does not honour, as every command reports it: `simulate`,
//! `replay` and the live scheduler log each item (volcano-behaviour.md §1.2: Volcano skips an
//! unknown action or plugin), and `--strict` refuses the conf instead. A thin layer over the
//! core's [`basalt_core::plugins::Registry::check`]; it knows no simulator and no live type.

use basalt_core::conf::SchedulerConf;
use basalt_core::plugins::REGISTRY;
use serde::Serialize;

/// Something of the conf Basalt does not honour as written (`{"kind", "name", "message"}`):
/// a skipped action or plugin, a plugin argument it does not know, cannot read, reads out of
/// range or accepts without effect, or a flag without effect ([`basalt_core::plugins::Registry::check`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct NotHonouredReport {
    /// Label of the conf (replay with several confs; absent in `simulate`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conf: Option<String>,
    /// `action`, `plugin`, `argument` or `flag`.
    pub kind: String,
    /// The action, the plugin, or `plugin.key`.
    pub name: String,
    /// What Basalt does instead.
    pub message: String,
}

impl NotHonouredReport {
    /// The reports of everything in `conf` that [`REGISTRY`] does not honour.
    pub fn of(conf: &SchedulerConf, label: Option<&str>) -> Vec<Self> {
        REGISTRY
            .check(conf)
            .into_iter()
            .map(|u| NotHonouredReport {
                conf: label.map(Into::into),
                kind: u.kind.as_str().into(),
                name: u.name,
                message: u.message,
            })
            .collect()
    }
}

/// `--strict`: an error naming every action, plugin, argument or flag of `conf` that Basalt
/// does not implement (`Ok` when there is none). `what` names the conf in the message.
pub fn strict_check(conf: &SchedulerConf, what: &str) -> Result<(), String> {
    let bad: Vec<String> = REGISTRY.check(conf).into_iter().filter(|u| u.strict).map(|u| u.message).collect();
    if bad.is_empty() {
        return Ok(());
    }
    Err(format!("--strict: {what} asks for what Basalt does not implement:\n  {}", bad.join("\n  ")))
}
