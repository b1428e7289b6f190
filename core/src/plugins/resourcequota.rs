//! `resourcequota` (volcano-behaviour.md §3 resourcequota; Volcano
//! `plugins/resourcequota/resourcequota.go`): a PodGroup is enqueued only while its
//! `minResources` fits every ResourceQuota of its namespace. Registered as JobEnqueueable and
//! JobEnqueued. Arguments: none (quota scopes are not supported, as in Volcano).
//!
//! For each quota, on the resources named both in `minResources` and in the quota's `hard`
//! (names compared literally, as Volcano's `quota.Mask` does: `requests.cpu` in a quota does not
//! limit a `minResources` `cpu`): `used + enqueued this session + minResources ≤ hard`, where
//! "enqueued this session" is the `minResources` of the namespace's PodGroups this session's
//! enqueue action already admitted. A PodGroup without `minResources` is permitted. A refused
//! PodGroup stays Pending and gets Volcano's Normal `Unschedulable` event "resource quota
//! insufficient, requested: map[…], used: map[…], limited: map[…]" (the resources that exceed,
//! in name order, written as Kubernetes quantities; Volcano prints Go's raw `Quantity` structs
//! there).
//!
//! Difference from Volcano: Volcano adds a PodGroup to the session's pending usage as soon as
//! this plugin permits it, even when another plugin then refuses it; Basalt adds it when the
//! PodGroup is enqueued (JobEnqueued), so a PodGroup refused elsewhere takes no quota.

use super::Vote;
use crate::model::ResourceQuotaSpec;
use crate::resource::ResourceList;
use crate::session::tables::JobIdx;
use crate::session::State;
use std::fmt::Write;

/// The resourcequota plugin: per namespace, the `minResources` enqueued this session.
pub struct ResourceQuota<'a> {
    pending: Vec<(&'a str, ResourceList)>,
}

/// One quota's refusal: the exceeding resources' requested, used and hard amounts.
struct Exceeded<'q> {
    quota: &'q ResourceQuotaSpec,
    names: Vec<&'q str>,
}

/// A core-unit amount of resource `name` as a Kubernetes quantity: bytes (`memory`,
/// `ephemeral-storage`, also as `requests.`/`limits.` quota names) with the largest exact
/// binary suffix, `pods` and other whole counts as integers only when the name is `pods` or
/// `count/*`, everything else milli-scaled (`2`, `1500m`).
pub fn quantity(name: &str, v: i64) -> String {
    let base = name.strip_prefix("requests.").or_else(|| name.strip_prefix("limits.")).unwrap_or(name);
    let bytes = matches!(base, "memory" | "ephemeral-storage" | "storage");
    if base == "pods" || bytes {
        if bytes && v != 0 {
            for (suffix, shift) in [("Ei", 60), ("Pi", 50), ("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10)] {
                if v % (1i64 << shift) == 0 {
                    return format!("{}{suffix}", v / (1i64 << shift));
                }
            }
        }
        return v.to_string();
    }
    if v % 1000 == 0 {
        (v / 1000).to_string()
    } else {
        format!("{v}m")
    }
}

/// Go's `%v` of a resource list restricted to `names` (sorted): `map[cpu:2 memory:1Gi]`;
/// names the list lacks are left out.
fn go_map(list: &ResourceList, names: &[&str]) -> String {
    let mut s = String::from("map[");
    let mut first = true;
    for &n in names {
        if let Some(&v) = list.get(n) {
            if !first {
                s.push(' ');
            }
            first = false;
            let _ = write!(s, "{n}:{}", quantity(n, v));
        }
    }
    s.push(']');
    s
}

impl<'a> ResourceQuota<'a> {
    /// Session open: nothing enqueued yet.
    pub fn open() -> Self {
        ResourceQuota { pending: Vec::new() }
    }

    fn pending_in(&self, ns: &str) -> Option<&ResourceList> {
        self.pending.iter().find(|(n, _)| *n == ns).map(|(_, l)| l)
    }

    /// The first quota of job `j`'s namespace its `minResources` exceeds, if any.
    fn exceeded<'s>(&self, s: &State<'s>, j: JobIdx) -> Option<Exceeded<'s>> {
        let spec: &'s crate::model::PodGroupSpec = &s.jobs.rec[j.ix()].spec;
        let min = spec.min_resources.as_ref()?;
        let pending = self.pending_in(&spec.namespace);
        for quota in s.cluster.resource_quotas_in(&spec.namespace) {
            let names: Vec<&str> = min
                .iter()
                .filter_map(|(r, &want)| {
                    let &hard = quota.hard.get(r)?;
                    let used = quota.used.get(r).copied().unwrap_or(0);
                    let pend = pending.and_then(|p| p.get(r)).copied().unwrap_or(0);
                    (used.saturating_add(pend).saturating_add(want) > hard).then_some(r.as_str())
                })
                .collect();
            if !names.is_empty() {
                return Some(Exceeded { quota, names });
            }
        }
        None
    }

    /// Volcano's event message for a refused job (`None` when `j` is not refused).
    pub fn rejection(&self, s: &State<'_>, j: JobIdx) -> Option<String> {
        let e = self.exceeded(s, j)?;
        let min = s.jobs.rec[j.ix()].spec.min_resources.as_ref()?;
        Some(format!(
            "resource quota insufficient, requested: {}, used: {}, limited: {}",
            go_map(min, &e.names),
            go_map(&e.quota.used, &e.names),
            go_map(&e.quota.hard, &e.names)
        ))
    }
}

plugin_impl! {
    impl<'a> for ResourceQuota<'a> {
        fn name(&self) -> &'static str {
            "resourcequota"
        }
        fn job_enqueueable(&self, s: &State<'a>, j: JobIdx) -> Vote {
            if self.exceeded(s, j).is_some() {
                Vote::Reject
            } else {
                Vote::Permit
            }
        }
        fn job_enqueued(&mut self, s: &State<'a>, j: JobIdx) {
            let spec = &s.jobs.rec[j.ix()].spec;
            let Some(min) = spec.min_resources.as_ref() else {
                return;
            };
            let ns: &'a str = spec.namespace.as_str();
            let i = match self.pending.iter().position(|(n, _)| *n == ns) {
                Some(i) => i,
                None => {
                    self.pending.push((ns, ResourceList::new()));
                    self.pending.len() - 1
                }
            };
            for (r, &v) in min {
                let e = self.pending[i].1.entry(r.clone()).or_insert(0);
                *e = e.saturating_add(v);
            }
        }
        fn enqueue_rejection(&self, s: &State<'a>, j: JobIdx) -> Option<String> {
            self.rejection(s, j)
        }
    }
}

impl ResourceQuota<'_> {
    /// The functions this plugin registers (its capability set, Volcano's `Add…Fn` calls in its
    /// `OnSessionOpen`); `core/tests/plugin_fns.rs` checks it against the methods its
    /// `plugin_impl!` block writes.
    pub const FNS: u32 = {
        use crate::framework::Fn as F;
        F::JobEnqueueable.bit() | F::JobEnqueued.bit()
    };
}
