//! The text of `vcctl job view` (Volcano's `job.PrintJobInfo` and `job.PrintEvents`): the Job's
//! metadata, spec (tasks, containers, resources) and status as indented `Key:\tvalue` lines
//! (two spaces a level), then its Events as a table. `vjobs --name` prints the same without
//! the `Conditions` block, as Volcano's `vjobs` does.

use super::human::{go_time, since};
use crate::crd::Job;
use k8s_openapi::api::core::v1::{Container, Event};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::Resource;
use std::collections::BTreeMap;
use std::fmt::Write;

struct Out(String);

impl Out {
    /// Volcano's `WriteLine`: `level` × two spaces, then `text`.
    fn line(&mut self, level: usize, text: &str) {
        self.0.push_str(&"  ".repeat(level));
        self.0.push_str(text);
        self.0.push('\n');
    }
}

/// Go's `%v` of a `[]string`: `[a b]`, `[]` when empty or absent.
fn go_list(v: Option<&Vec<String>>) -> String {
    format!("[{}]", v.map(|v| v.join(" ")).unwrap_or_default())
}

/// Go's `json.Marshal` of a `map[string]string` (keys sorted), `<none>` when empty.
fn json_map(m: Option<&BTreeMap<String, String>>) -> String {
    match m.filter(|m| !m.is_empty()) {
        Some(m) => serde_json::to_string(m).unwrap_or_default(),
        None => "<none>".to_string(),
    }
}

/// A quantity of `list[name]` as printed by Volcano (`ResourceList.Cpu()`): `0` when absent.
/// Quantities are printed as stored (Go prints their canonical form: `1000m` as `1`).
fn quantity(list: Option<&BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>>, name: &str) -> String {
    list.and_then(|l| l.get(name)).map(|q| q.0.clone()).unwrap_or_else(|| "0".to_string())
}

fn container(o: &mut Out, c: &Container) {
    const L: usize = 2;
    o.line(L + 3, "Command:");
    for arg in c.command.iter().flatten() {
        o.line(L + 4, arg);
    }
    o.line(L + 3, &format!("Image:\t{}", c.image.as_deref().unwrap_or("")));
    o.line(L + 3, &format!("Name: \t{}", c.name));
    o.line(L + 3, "Ports:");
    for p in c.ports.iter().flatten() {
        o.line(L + 4, &format!("Container Port:\t{}", p.container_port));
        o.line(L + 4, &format!("Name:          \t{}", p.name.as_deref().unwrap_or("")));
    }
    let r = c.resources.clone().unwrap_or_default();
    o.line(L + 3, "Resources:");
    o.line(L + 4, "Limits:");
    o.line(L + 5, &format!("Cpu:   \t{}", quantity(r.limits.as_ref(), "cpu")));
    o.line(L + 5, &format!("Memory:\t{}", quantity(r.limits.as_ref(), "memory")));
    o.line(L + 4, "Requests:");
    o.line(L + 5, &format!("Cpu:   \t{}", quantity(r.requests.as_ref(), "cpu")));
    o.line(L + 5, &format!("Memory:\t{}", quantity(r.requests.as_ref(), "memory")));
    o.line(L + 4, &format!("Working Dir:\t{}", c.working_dir.as_deref().unwrap_or("")));
}

/// A Job condition's RFC 3339 time as Go prints a `metav1.Time`; unparsable text as is.
fn condition_time(t: Option<&str>) -> String {
    match t {
        None => go_time(None),
        Some(s) => s.parse().map(|ts| go_time(Some(&Time(ts)))).unwrap_or_else(|_| s.to_string()),
    }
}

/// The job part of `vcctl job view`; `conditions` adds the `Conditions` block (`job view` does,
/// `vjobs` does not).
pub fn job_info(job: &Job, conditions: bool) -> String {
    let mut o = Out(String::new());
    let m = &job.metadata;
    o.line(0, &format!("Name:       \t{}", m.name.as_deref().unwrap_or("")));
    o.line(0, &format!("Namespace:  \t{}", m.namespace.as_deref().unwrap_or("")));
    o.line(0, &format!("Labels:     \t{}", json_map(m.labels.as_ref())));
    o.line(0, &format!("Annotations:\t{}", json_map(m.annotations.as_ref())));
    o.line(0, &format!("API Version:\t{}", Job::api_version(&())));
    o.line(0, &format!("Kind:       \t{}", Job::kind(&())));
    o.line(0, "Metadata:");
    o.line(1, &format!("Creation Timestamp:\t{}", go_time(m.creation_timestamp.as_ref())));
    o.line(1, &format!("Generate Name:     \t{}", m.generate_name.as_deref().unwrap_or("")));
    o.line(1, &format!("Generation:        \t{}", m.generation.unwrap_or(0)));
    o.line(1, &format!("Resource Version:  \t{}", m.resource_version.as_deref().unwrap_or("")));
    o.line(1, &format!("UID:               \t{}", m.uid.as_deref().unwrap_or("")));

    let s = &job.spec;
    o.line(0, "Spec:");
    o.line(1, &format!("Min Available:     \t{}", s.min_available.unwrap_or(0)));
    o.line(1, "Plugins:");
    o.line(2, &format!("Env:\t{}", go_list(s.plugins.get("env"))));
    o.line(2, &format!("Ssh:\t{}", go_list(s.plugins.get("ssh"))));
    o.line(1, &format!("Scheduler Name:    \t{}", s.scheduler_name.as_deref().unwrap_or("")));
    o.line(1, "Tasks:");
    for t in &s.tasks {
        let tpl = t.template.clone().unwrap_or_default();
        let meta = tpl.metadata.unwrap_or_default();
        let ann = |k: &str| meta.annotations.as_ref().and_then(|a| a.get(k).cloned()).unwrap_or_default();
        o.line(2, &format!("Name:\t{}", t.name.as_deref().unwrap_or("")));
        o.line(2, &format!("Replicas:\t{}", t.replicas.unwrap_or(0)));
        o.line(2, "Template:");
        o.line(3, "Metadata:");
        o.line(4, "Annotations:");
        o.line(5, &format!("Cri . Cci . Io / Container - Type:          \t{}", ann("cri.cci.io/container-type")));
        o.line(5, &format!("Kubernetes . Io / Availablezone:            \t{}", ann("kubernetes.io/availablezone")));
        o.line(5, &format!("Network . Alpha . Kubernetes . Io / Network:\t{}", ann("network.alpha.kubernetes.io/network")));
        o.line(4, &format!("Creation Timestamp:\t{}", go_time(meta.creation_timestamp.as_ref())));
        let spec = tpl.spec.unwrap_or_default();
        o.line(3, "Spec:");
        o.line(4, "Containers:");
        for c in &spec.containers {
            container(&mut o, c);
        }
        o.line(4, "Image Pull Secrets:");
        for sec in spec.image_pull_secrets.iter().flatten() {
            o.line(5, &format!("Name:     \t{}", sec.name));
        }
        o.line(4, &format!("Restart Policy:   \t{}", spec.restart_policy.as_deref().unwrap_or("")));
    }

    let st = job.status.clone().unwrap_or_default();
    o.line(0, "Status:");
    for (label, v) in [
        ("Succeeded:    ", st.succeeded),
        ("Pending:      ", st.pending),
        ("Running:      ", st.running),
        ("Failed:       ", st.failed),
        ("Terminating:  ", st.terminating),
        ("Unknown:      ", st.unknown),
        ("RetryCount:   ", st.retry_count),
        ("Min Available:", st.min_available),
        ("Version:      ", st.version),
    ] {
        if v > 0 {
            o.line(1, &format!("{label}\t{v}"));
        }
    }
    o.line(1, "State:");
    o.line(2, &format!("Phase:\t{}", st.state.phase.as_deref().unwrap_or("")));
    if !st.controlled_resources.is_empty() {
        o.line(1, "Controlled Resources:");
        for (k, v) in &st.controlled_resources {
            o.line(2, &format!("{k}: \t{v}"));
        }
    }
    if conditions && !st.conditions.is_empty() {
        o.line(1, "Conditions:\n    Status\tTransitionTime");
        for c in &st.conditions {
            o.line(2, &format!("{} \t{} ", c.status.as_deref().unwrap_or(""), condition_time(c.last_transition_time.as_deref())));
        }
    }
    o.0
}

/// The Events of job `job_name` among `events`: those named `<job>.<suffix>`, as Volcano picks
/// them (the recorder names an Event after its object).
pub fn job_events<'a>(events: &'a [Event], job_name: &str) -> Vec<&'a Event> {
    let prefix = format!("{job_name}.");
    events.iter().filter(|e| e.metadata.name.as_deref().is_some_and(|n| n.starts_with(&prefix))).collect()
}

/// The Events table of `vcctl job view` (`Type` 15, `Reason` 40, `Age` 30, `Form` 40 — sic —
/// and `Message`, tab separated), ages relative to `now_seconds` (Unix time); `Events: \t<none>`
/// when there are none.
pub fn events_table(events: &[&Event], now_seconds: i64) -> String {
    if events.is_empty() {
        return "Events: \t<none>\n".to_string();
    }
    let mut out = String::new();
    let _ = writeln!(out, "Events:\n{:<15}\t{:<40}\t{:<30}\t{:<40}\tMessage", "Type", "Reason", "Age", "Form");
    let _ = writeln!(out, "{:<15}\t{:<40}\t{:<30}\t{:<40}\t-------", "-------", "-------", "-------", "-------");
    for e in events {
        let count = e.count.unwrap_or(0);
        let interval = if count > 1 {
            format!(
                "{} (x{count} over {})",
                since(e.last_timestamp.as_ref(), now_seconds),
                since(e.first_timestamp.as_ref(), now_seconds)
            )
        } else {
            since(e.first_timestamp.as_ref(), now_seconds)
        };
        let src = e.source.clone().unwrap_or_default();
        let mut from = vec![src.component.unwrap_or_default()];
        if let Some(h) = src.host.filter(|h| !h.is_empty()) {
            from.push(h);
        }
        let _ = writeln!(
            out,
            "{:<15}\t{:<40}\t{:<30}\t{:<40}\t{}",
            e.type_.as_deref().unwrap_or(""),
            e.reason.as_deref().unwrap_or(""),
            interval,
            from.join(", "),
            e.message.as_deref().unwrap_or("").trim()
        );
    }
    out
}

#[cfg(test)]
mod tests;
