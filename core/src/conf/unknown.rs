//! Plugin names a conf gives that Volcano does not register: what was skipped, and the nearest
//! registered name ("did you mean").

/// A plugin of `tiers[tier]` whose name no Volcano plugin has. Volcano's `OpenSession` logs
/// and skips a plugin without a builder; Basalt skips it too, warns with the nearest name, and
/// `--strict` refuses the conf (volcano-behaviour.md §1.2).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct UnknownPlugin {
    /// Index of the tier in `tiers`.
    pub tier: usize,
    /// The name as written.
    pub name: String,
    /// The registered plugin name nearest to it, if one is close (see [`nearest_plugin`]).
    pub did_you_mean: Option<String>,
}

impl UnknownPlugin {
    /// The unknown plugin `name` of tier `tier`, with its nearest registered name.
    pub fn new(tier: usize, name: &str) -> Self {
        UnknownPlugin { tier, name: name.to_string(), did_you_mean: nearest_plugin(name).map(str::to_string) }
    }

    /// `unknown plugin "proportoin" skipped (did you mean "proportion"?)`.
    pub fn message(&self) -> String {
        match &self.did_you_mean {
            Some(n) => format!("unknown plugin {:?} skipped (did you mean {n:?}?)", self.name),
            None => format!("unknown plugin {:?} skipped (no Volcano plugin has this name)", self.name),
        }
    }
}

/// The Volcano plugin name ([`super::VOLCANO_PLUGINS`]) nearest to `name` by edit distance
/// (case-insensitive), if it is within 3 edits and less than half of `name`'s length away;
/// ties go to the first in Volcano's registration order.
pub fn nearest_plugin(name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    let (best, d) = super::VOLCANO_PLUGINS.iter().map(|p| (*p, distance(&lower, p))).min_by_key(|&(_, d)| d)?;
    (d <= 3 && d * 2 < name.chars().count().max(1)).then_some(best)
}

/// What a reload from `running` to `new` loses because `new` names unknown plugins: one
/// sentence per plugin that `running` runs and `new` does not, when `new` has an unknown name
/// (`proportion` replaced by `proportoin` silently drops queue fairness). Empty when `new` names
/// no unknown plugin or drops nothing.
pub fn dropped_by_unknown(running: &super::SchedulerConf, new: &super::SchedulerConf) -> Vec<String> {
    if new.unknown_plugins.is_empty() {
        return Vec::new();
    }
    let has = |c: &super::SchedulerConf, n: &str| c.tiers.iter().any(|t| t.plugins.iter().any(|p| p.name == n));
    let unknown: Vec<String> = new.unknown_plugins.iter().map(UnknownPlugin::message).collect();
    let mut out = Vec::new();
    for t in &running.tiers {
        for p in &t.plugins {
            if !has(new, &p.name) && !out.iter().any(|o: &String| o.contains(&format!("plugin {:?} ", p.name))) {
                out.push(format!(
                    "the new conf drops plugin {:?} of the running conf and names an unknown plugin: {}",
                    p.name,
                    unknown.join("; ")
                ));
            }
        }
    }
    out
}

/// Levenshtein distance, for "did you mean".
pub(crate) fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conf::SchedulerConf;

    #[test]
    fn unknown_plugin_gets_did_you_mean() {
        assert_eq!(nearest_plugin("proportoin"), Some("proportion"));
        assert_eq!(nearest_plugin("Gang"), Some("gang"));
        assert_eq!(nearest_plugin("nodeordre"), Some("nodeorder"));
        assert_eq!(nearest_plugin("horovod"), None, "nothing near: no guess");
        assert_eq!(nearest_plugin("x"), None);
    }

    #[test]
    fn reload_that_drops_a_running_plugin_because_of_an_unknown_name_is_named() {
        let running = SchedulerConf::default();
        let typo = crate::conf::DEFAULT_CONF.replace("name: proportion", "name: proportoin");
        let new = SchedulerConf::parse(&typo).unwrap().0;
        assert_eq!(
            dropped_by_unknown(&running, &new),
            ["the new conf drops plugin \"proportion\" of the running conf and names an unknown plugin: unknown plugin \"proportoin\" skipped (did you mean \"proportion\"?)"]
        );
        assert!(dropped_by_unknown(&new, &running).is_empty(), "no unknown name: nothing to say");
        let removed = SchedulerConf::parse(&crate::conf::DEFAULT_CONF.replace("  - name: proportion\n", "")).unwrap().0;
        assert!(dropped_by_unknown(&running, &removed).is_empty(), "a plugin removed on purpose is a plain reload");
    }

    #[test]
    fn unknown_plugin_is_skipped_kept_and_warned_with_the_nearest_name() {
        let text = "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n- plugins:\n  - name: proportoin\n  - name: drf\n";
        let (c, w) = SchedulerConf::parse(text).unwrap();
        let names: Vec<&str> = c.tiers[1].plugins.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["drf"], "the unknown plugin is not run");
        assert_eq!(
            c.unknown_plugins,
            vec![UnknownPlugin { tier: 1, name: "proportoin".into(), did_you_mean: Some("proportion".into()) }]
        );
        assert!(w.is_empty(), "reported by the registry's check, not twice: {w:?}");
        let checked: Vec<(String, bool)> =
            crate::plugins::REGISTRY.check(&c).into_iter().map(|u| (u.message, u.strict)).collect();
        assert_eq!(
            checked,
            [("tier 1: unknown plugin \"proportoin\" skipped (did you mean \"proportion\"?)".to_string(), true)],
            "--strict refuses it"
        );
    }
}
