//! What a conf asks for that Basalt does not honour, found against a [`Registry`]: actions and
//! plugins it does not implement, plugin arguments it does not know, cannot read or reads out
//! of range, arguments and flags it accepts without acting on them. The runtime prints these
//! at the top of its outputs and, with `--strict`, refuses the conf when any is
//! [`Unhonoured::strict`].

use super::Registry;
use crate::conf::{distance, ArgKind, ArgSpec, Arguments, SchedulerConf};

/// What kind of thing is not honoured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnhonouredKind {
    /// An action Basalt does not implement (skipped).
    Action,
    /// A Volcano plugin Basalt does not implement (skipped).
    Plugin,
    /// A plugin argument: unknown, of the wrong type, out of range, or without effect.
    Argument,
    /// An enable flag Basalt accepts and does not act on.
    Flag,
}

impl UnhonouredKind {
    /// Lower-case name, as in the JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            UnhonouredKind::Action => "action",
            UnhonouredKind::Plugin => "plugin",
            UnhonouredKind::Argument => "argument",
            UnhonouredKind::Flag => "flag",
        }
    }
}

/// One thing of the conf that is not honoured as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unhonoured {
    /// Kind.
    pub kind: UnhonouredKind,
    /// The action, the plugin, or `plugin.key` / `plugin.flag`.
    pub name: String,
    /// What happens instead, in a sentence.
    pub message: String,
    /// Whether `--strict` refuses the conf for it: something the conf asks for that Basalt
    /// does not do. A wrong type or an out-of-range value is not: Basalt then does what
    /// Volcano does.
    pub strict: bool,
}

impl std::fmt::Display for Unhonoured {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

fn describe(v: &serde_yaml::Value) -> String {
    match v {
        serde_yaml::Value::String(s) => format!("{s:?}"),
        other => serde_yaml::to_string(other).map(|s| s.trim().to_string()).unwrap_or_default(),
    }
}

/// Whether `v` is read by Volcano's getter of `kind` (see [`Arguments`]).
fn readable(kind: ArgKind, v: &serde_yaml::Value) -> bool {
    let mut one = Arguments::default();
    one.0.insert("k".into(), v.clone());
    match kind {
        ArgKind::Int => one.int("k").is_some(),
        ArgKind::Float => one.float("k").is_some(),
        ArgKind::Bool => one.bool("k").is_some(),
        ArgKind::Str => one.string("k").is_some(),
        ArgKind::Yaml => v.is_sequence() || v.is_mapping(),
        ArgKind::Duration => one.duration_ns("k").is_some(),
    }
}

fn check_arguments(plugin: &str, specs: &[ArgSpec], args: &Arguments, out: &mut Vec<Unhonoured>) {
    for (key, v) in &args.0 {
        let name = format!("{plugin}.{key}");
        let Some(spec) = specs.iter().find(|s| s.matches(key)) else {
            let near = specs.iter().filter(|s| !s.prefix).min_by_key(|s| distance(key, s.key));
            let hint = match near {
                Some(s) if distance(key, s.key) <= 3 => {
                    format!(" (did you mean {:?}? its default {} is used)", s.key, s.default)
                }
                _ if specs.is_empty() => format!(" ({plugin} takes no arguments)"),
                _ => String::new(),
            };
            out.push(Unhonoured {
                kind: UnhonouredKind::Argument,
                message: format!("plugin {plugin}: unknown argument {key:?} ignored{hint}"),
                name,
                strict: true,
            });
            continue;
        };
        if !readable(spec.kind, v) {
            out.push(Unhonoured {
                kind: UnhonouredKind::Argument,
                message: format!(
                    "plugin {plugin}: argument {key:?}: {} is not {}; the default {} is used, as Volcano does",
                    describe(v),
                    spec.kind.word(),
                    spec.default
                ),
                name,
                strict: false,
            });
            continue;
        }
        if let (Some(min), Some(x)) = (spec.min, v.as_f64().or_else(|| v.as_i64().map(|i| i as f64))) {
            if x < min {
                out.push(Unhonoured {
                    kind: UnhonouredKind::Argument,
                    message: format!("plugin {plugin}: argument {key:?}: {} is below {min}; {}", describe(v), spec.below_min),
                    name,
                    strict: false,
                });
                continue;
            }
        }
        if !spec.honoured {
            out.push(Unhonoured {
                kind: UnhonouredKind::Argument,
                message: format!("plugin {plugin}: argument {key:?} has no effect in Basalt: {}", spec.why_ignored),
                name,
                strict: true,
            });
        }
    }
}

impl Registry {
    /// Everything of `conf` that Basalt does not honour as written, in conf order: actions it
    /// does not implement, Volcano plugins the registry lacks, and for the plugins it has, the
    /// argument problems (unknown key, wrong type, out of range, no effect).
    pub fn check(&self, conf: &SchedulerConf) -> Vec<Unhonoured> {
        let mut out = Vec::new();
        for a in conf.actions.iter().filter(|a| !a.implemented()) {
            out.push(Unhonoured {
                kind: UnhonouredKind::Action,
                name: a.name().into(),
                message: format!("action {:?} is not implemented in this Basalt version; it is skipped", a.name()),
                strict: true,
            });
        }
        for u in &conf.unknown_plugins {
            out.push(Unhonoured {
                kind: UnhonouredKind::Plugin,
                name: u.name.clone(),
                message: format!("tier {}: {}", u.tier, u.message()),
                strict: true,
            });
        }
        for (ti, tier) in conf.tiers.iter().enumerate() {
            for p in &tier.plugins {
                let Some(entry) = self.get(&p.name) else {
                    out.push(Unhonoured {
                        kind: UnhonouredKind::Plugin,
                        name: p.name.clone(),
                        message: format!(
                            "tier {ti}: plugin {:?} is not implemented in this Basalt version; it is skipped (its functions and arguments have no effect)",
                            p.name
                        ),
                        strict: true,
                    });
                    continue;
                };
                check_arguments(entry.name, entry.args, &p.arguments, &mut out);
                if entry.name == super::deviceshare::NAME {
                    if let Some(why) = super::deviceshare::conflict(conf) {
                        out.push(Unhonoured {
                            kind: UnhonouredKind::Argument,
                            name: p.name.clone(),
                            message: format!("plugin deviceshare: {why} (Volcano exits); Basalt turns device sharing off"),
                            strict: true,
                        });
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::REGISTRY;
    use super::*;

    fn check(conf: &str) -> Vec<Unhonoured> {
        REGISTRY.check(&SchedulerConf::parse(conf).expect("valid conf").0)
    }

    fn plugin(name: &str, args: &str) -> String {
        format!("actions: \"allocate\"\ntiers:\n- plugins:\n  - name: {name}\n    arguments: {{{args}}}\n")
    }

    #[test]
    fn unknown_key_names_plugin_key_and_the_default_used() {
        let w = check(&plugin("nodeorder", "leastrequsted.weight: 2"));
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].name, "nodeorder.leastrequsted.weight");
        assert_eq!(
            w[0].message,
            "plugin nodeorder: unknown argument \"leastrequsted.weight\" ignored (did you mean \"leastrequested.weight\"? its default 1 is used)"
        );
        assert!(w[0].strict);
        let w = check(&plugin("gang", "foo: 1"));
        assert_eq!(w[0].message, "plugin gang: unknown argument \"foo\" ignored (gang takes no arguments)");
    }

    #[test]
    fn wrong_type_names_the_default_used() {
        let w = check(&plugin("nodeorder", "leastrequested.weight: \"two\""));
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(
            w[0].message,
            "plugin nodeorder: argument \"leastrequested.weight\": \"two\" is not an integer; the default 1 is used, as Volcano does"
        );
        assert!(!w[0].strict);
        // A float where Volcano reads an integer is the wrong type too; an integer where it
        // reads a float is not.
        assert_eq!(check(&plugin("binpack", "binpack.cpu: 1.5")).len(), 1);
        assert!(check(&plugin("overcommit", "overcommit-factor: 2")).is_empty());
    }

    #[test]
    fn out_of_range_says_what_is_used() {
        let w = check(&plugin("binpack", "binpack.weight: -3, binpack.cpu: -1"));
        let msgs: Vec<&str> = w.iter().map(|x| x.message.as_str()).collect();
        assert_eq!(
            msgs,
            vec![
                "plugin binpack: argument \"binpack.cpu\": -1 is below 0; 1 is used, as Volcano does",
                "plugin binpack: argument \"binpack.weight\": -3 is below 0; used as given, as Volcano does (binpack then prefers emptier nodes)",
            ]
        );
        let w = check(&plugin("overcommit", "overcommit-factor: 0.5"));
        assert_eq!(
            w[0].message,
            "plugin overcommit: argument \"overcommit-factor\": 0.5 is below 1; 1.2 is used, as Volcano does"
        );
        // binpack.resources.<name> is a family of keys.
        assert!(check(&plugin("binpack", "binpack.resources: nvidia.com/gpu, binpack.resources.nvidia.com/gpu: 2")).is_empty());
    }

    #[test]
    fn accepted_arguments_without_effect_are_listed() {
        // The volume filters run now, so VolumeBindingEnable has an effect; DRA is not modelled.
        let w = check(&plugin(
            "predicates",
            "predicate.VolumeBindingEnable: true, predicate.DynamicResourceAllocationEnable: true, predicate.NodePortsEnable: false",
        ));
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(
            w[0].message,
            "plugin predicates: argument \"predicate.DynamicResourceAllocationEnable\" has no effect in Basalt: dynamic resource allocation is not modelled"
        );
        assert!(w[0].strict);
    }

    #[test]
    fn skipped_actions_plugins_and_flags() {
        let w = check(
            "actions: \"enqueue, allocate, shuffle, gangpreempt, gangreclaim\"\ntiers:\n- plugins:\n  - name: capacity\n  - name: tdm\n  - name: drf\n    enableHierarchy: true\n  - name: rescheduling\n    arguments: {interval: 5m}\n",
        );
        let got: Vec<(UnhonouredKind, &str)> = w.iter().map(|x| (x.kind, x.name.as_str())).collect();
        // Every Volcano action runs; rescheduling's `interval` is honoured.
        assert_eq!(got, vec![(UnhonouredKind::Plugin, "tdm")]);
        assert!(w.iter().all(|x| x.strict));
        // An `interval` that is not a positive duration is warned about and read as 5m.
        let w = check("actions: \"shuffle\"\ntiers:\n- plugins:\n  - name: rescheduling\n    arguments: {interval: 0s}\n");
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].name, "rescheduling.interval");
        assert!(w[0].message.contains("the default 5m is used"), "{}", w[0].message);
        assert!(!w[0].strict);
        assert!(check("").is_empty(), "Volcano's default conf is fully honoured");
    }
}
