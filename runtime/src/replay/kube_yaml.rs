//! Generic replay input: Kubernetes objects in YAML/JSON files (as `basalt simulate` reads them,
//! through [`crate::load::load_text`]) whose Pods and PodGroups carry the virtual-clock
//! annotations [`ARRIVAL_ANNOTATION`] and [`DURATION_ANNOTATION`] (seconds, decimals allowed).
//!
//! * A Pod arrives at its arrival (absent = 0) and runs for its duration once bound (absent =
//!   until the replay ends). A PodGroup arrives at its own arrival annotation, else with its
//!   first pod; a pod never arrives before its PodGroup.
//! * A pending pod without a PodGroup gets one, as Volcano's controller does: `podgroup-<pod>`,
//!   `minMember: 1`, in the queue of annotation `scheduling.volcano.sh/queue-name` (else the
//!   default queue).
//! * A pod already bound (`spec.nodeName`) is placed at its arrival without scheduling; pods
//!   that have finished (`Succeeded`, `Failed`) are left out.
//! * Queue `default` is created (weight 1) when the files define none of that name, as
//!   Volcano's controller does.
//!
//! Problems become [`InputIssue`]s with file and line (the document's first line with content;
//! JSON: the value's): a malformed annotation skips its object; conversion issues are the loader's.

use super::workload::{InputIssue, JobArrival, TaskArrival, VirtualMs, Workload, MS_PER_S};
use crate::load::{self, LoadIssue, LoadOptions, LoadReport};
use basalt_core::cluster::{Cluster, Delta};
use basalt_core::model::{PodGroupPhase, PodGroupSpec, PodPhase, QueueSpec};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;

/// Annotation: when the object is created, seconds of virtual time (the simulator's, which
/// reads it on Jobs too).
pub use crate::sim::jobs::ARRIVAL_ANNOTATION;
/// Annotation: how long a pod runs once bound, seconds of virtual time (the simulator's
/// kubelet's).
pub use crate::sim::kubelet::DURATION_ANNOTATION;

/// The replay annotations of one object.
#[derive(Clone, Debug, Default)]
struct Timing {
    arrival_ms: Option<VirtualMs>,
    duration_ms: Option<VirtualMs>,
    /// A malformed annotation: the object is skipped.
    bad: bool,
    /// Where the object is (file, first line of its document).
    file: String,
    line: usize,
}

/// What the annotation scan of all files found.
#[derive(Default)]
struct Scan {
    /// (`Pod`|`PodGroup`, `ns/name`) → timing.
    timing: HashMap<(&'static str, String), Timing>,
    /// PriorityClass names.
    priority_classes: BTreeSet<String>,
    /// (file, 1-based document) → first line.
    doc_lines: HashMap<(String, usize), usize>,
    issues: Vec<InputIssue>,
}

/// Parses a seconds annotation into ms.
fn seconds(v: &str) -> Result<VirtualMs, String> {
    match v.trim().parse::<f64>() {
        Ok(s) if (0.0..1e15).contains(&s) => Ok((s * MS_PER_S as f64).round() as VirtualMs),
        _ => Err(format!("not a number of seconds >= 0: {v:?}")),
    }
}

impl Scan {
    fn object(&mut self, file: &str, line: usize, v: &Value) {
        let kind = match v.get("kind").and_then(Value::as_str) {
            Some("Pod") => "Pod",
            Some("PodGroup") => "PodGroup",
            Some("PriorityClass") => {
                if let Some(n) = v.pointer("/metadata/name").and_then(Value::as_str) {
                    self.priority_classes.insert(n.to_string());
                }
                return;
            }
            Some(k) if k.ends_with("List") => {
                let item_kind = k.strip_suffix("List").unwrap_or("");
                for item in v.get("items").and_then(Value::as_array).into_iter().flatten() {
                    let mut item = item.clone();
                    if let (Value::Object(m), false) = (&mut item, item_kind.is_empty()) {
                        m.entry("kind").or_insert_with(|| Value::String(item_kind.to_string()));
                    }
                    self.object(file, line, &item);
                }
                return;
            }
            _ => return,
        };
        let Some(name) = v.pointer("/metadata/name").and_then(Value::as_str) else { return };
        let ns = v.pointer("/metadata/namespace").and_then(Value::as_str).filter(|s| !s.is_empty()).unwrap_or("default");
        let key = format!("{ns}/{name}");
        let ann = v.pointer("/metadata/annotations");
        let get = |k: &str| ann.and_then(|a| a.get(k)).map(|x| x.as_str().map(str::to_string).unwrap_or_else(|| x.to_string()));
        let mut t = Timing { file: file.to_string(), line, ..Default::default() };
        for (annotation, slot) in [(ARRIVAL_ANNOTATION, &mut t.arrival_ms), (DURATION_ANNOTATION, &mut t.duration_ms)] {
            if let Some(raw) = get(annotation) {
                match seconds(&raw) {
                    Ok(ms) => *slot = Some(ms),
                    Err(e) => {
                        self.issues.push(InputIssue {
                            file: file.to_string(),
                            line,
                            message: format!("{kind} {key}: field metadata.annotations[{annotation}]: {e}; {kind} skipped"),
                        });
                        t.bad = true;
                    }
                }
            }
        }
        self.timing.insert((kind, key), t);
    }

    /// Scans one file's text, recording document lines the way the loader numbers documents.
    fn text(&mut self, file: &str, text: &str, json: bool) {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        if json {
            let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
            let mut doc = 0;
            loop {
                let start = stream.byte_offset();
                let Some(Ok(v)) = stream.next() else { break };
                doc += 1;
                let body = &text[start..];
                let skipped = body.len() - body.trim_start().len();
                let line = 1 + text[..start + skipped].matches('\n').count();
                self.doc_lines.insert((file.to_string(), doc), line);
                self.object(file, line, &v);
            }
            return;
        }
        for (i, (first, doc)) in split_yaml(text).into_iter().enumerate() {
            // Report the document's first line with content, not its `---` marker.
            let line = first + doc.lines().position(|l| !l.trim().is_empty() && !l.trim().starts_with('#')).unwrap_or(0);
            self.doc_lines.insert((file.to_string(), i + 1), line);
            // The loader reports a document nested too deep; parsing it here would stall.
            if load::nesting::check_depth(&doc, load::MAX_NESTING_DEPTH).is_err() {
                continue;
            }
            if let Ok(v) = serde_yaml::from_str::<Value>(&doc) {
                self.object(file, line, &v);
            }
        }
    }
}

/// Splits YAML text into documents with content, as `crate::load` does: (first line, text).
fn split_yaml(text: &str) -> Vec<(usize, String)> {
    let mut docs = Vec::new();
    let (mut first, mut cur, mut content) = (1usize, String::new(), false);
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let marker = line.strip_prefix("---").filter(|r| r.is_empty() || r.starts_with([' ', '\t']));
        let blank = |l: &str| l.trim().is_empty() || l.trim().starts_with('#');
        if let Some(rest) = marker {
            if content {
                docs.push((first, std::mem::take(&mut cur)));
            }
            cur.clear();
            first = n;
            content = !blank(rest);
            cur.push_str(rest);
            cur.push('\n');
        } else if line.strip_prefix("...").is_some_and(|r| r.trim().is_empty() || r.trim_start().starts_with('#')) {
            if content {
                docs.push((first, std::mem::take(&mut cur)));
            }
            cur.clear();
            first = n + 1;
            content = false;
        } else if !content && line.starts_with('%') {
            cur.push('\n');
        } else {
            content |= !blank(line);
            cur.push_str(line);
            cur.push('\n');
        }
    }
    if content {
        docs.push((first, cur));
    }
    docs
}

/// A loader issue as an input issue with a line number.
fn from_load_issue(i: &LoadIssue, doc_lines: &HashMap<(String, usize), usize>) -> InputIssue {
    let line = if i.doc > 0 { doc_lines.get(&(i.file.clone(), i.doc)).copied().unwrap_or(0) } else { 0 };
    let mut what = String::new();
    if i.doc > 0 {
        what.push_str(&format!("doc {}", i.doc));
    }
    if let Some(item) = i.item {
        what.push_str(&format!(" items[{item}]"));
    }
    for s in [&i.kind, &i.name].into_iter().flatten() {
        what.push(' ');
        what.push_str(s);
    }
    let message = if what.is_empty() { i.message.clone() } else { format!("{}: {}", what.trim(), i.message) };
    InputIssue { file: i.file.clone(), line, message }
}

/// Reads `paths` (files or directories, as `basalt simulate --cluster`) into a workload.
/// Only pods whose `spec.schedulerName` is `scheduler_name` are scheduled.
pub fn import(paths: &[PathBuf], scheduler_name: &str) -> Workload {
    let opts = LoadOptions { scheduler_name: scheduler_name.to_string() };
    let (files, discover_issues) = load::discover(paths);
    let mut report = LoadReport { issues: discover_issues, ..Default::default() };
    let mut staging = Cluster::new();
    let mut scan = Scan::default();
    for f in &files {
        let label = f.display().to_string();
        let text = match std::fs::read(f) {
            Err(e) => {
                report.issues.push(LoadIssue {
                    file: label,
                    doc: 0,
                    item: None,
                    kind: None,
                    name: None,
                    message: format!("cannot read: {e}"),
                });
                continue;
            }
            Ok(b) => match String::from_utf8(b) {
                Ok(t) => t,
                Err(_) => {
                    report.issues.push(LoadIssue {
                        file: label,
                        doc: 0,
                        item: None,
                        kind: None,
                        name: None,
                        message: "not UTF-8 text; skipped".into(),
                    });
                    continue;
                }
            },
        };
        report.files += 1;
        let json = f.extension().and_then(|e| e.to_str()) == Some("json");
        load::load_text(&label, &text, json, &mut staging, &opts, &mut report);
        scan.text(&label, &text, json);
    }
    build(&staging, scan, &report, paths)
}

fn build(c: &Cluster, scan: Scan, report: &LoadReport, paths: &[PathBuf]) -> Workload {
    let mut issues: Vec<InputIssue> = report.issues.iter().map(|i| from_load_issue(i, &scan.doc_lines)).collect();
    let mut skipped = report.issues.iter().filter(|i| !i.message.contains("replaces the earlier one")).count();
    skipped += scan.issues.len();
    issues.extend(scan.issues.iter().cloned());
    let timing = |kind: &'static str, key: &str| scan.timing.get(&(kind, key.to_string())).cloned().unwrap_or_default();

    let mut setup: Vec<Delta> = Vec::new();
    for name in &scan.priority_classes {
        if let Some(pc) = c.priority_class(name) {
            setup.push(Delta::PriorityClass(pc.clone()));
        }
    }
    let mut notes = Vec::new();
    let mut queues: Vec<QueueSpec> = c.queues().map(|q| q.spec.clone()).collect();
    if !queues.iter().any(|q| q.name == "default") {
        queues.push(QueueSpec { name: "default".into(), weight: 1, reclaimable: true, ..Default::default() });
        notes.push("queue \"default\" created (weight 1): the input defines none".into());
    }
    setup.extend(queues.into_iter().map(Delta::Queue));
    setup.extend(c.nodes().map(|(_, n)| Delta::Node(n.spec.clone())));
    setup.extend(c.hyper_nodes().map(|h| Delta::HyperNode(h.clone())));
    // NUMA: the nodes' Numatopologies, and the pods' NUMA requests (kept by namespace/name, so
    // they apply to the pods when they arrive).
    setup.extend(c.numatopologies().map(|t| Delta::Numatopology(t.clone())));
    setup.extend(c.pod_numas().map(|(ns, name, numa)| Delta::PodNuma {
        namespace: ns.to_string(),
        name: name.to_string(),
        numa: numa.clone(),
    }));

    // Jobs from PodGroups, then one per pod without a PodGroup.
    let mut jobs: Vec<JobArrival> = Vec::new();
    let mut job_of: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (_, g) in c.pod_groups() {
        let key = format!("{}/{}", g.spec.namespace, g.spec.name);
        let t = timing("PodGroup", &key);
        if t.bad {
            continue;
        }
        job_of.insert((g.spec.namespace.clone(), g.spec.name.clone()), jobs.len());
        jobs.push(JobArrival { group: g.spec.clone(), arrival_ms: t.arrival_ms.unwrap_or(VirtualMs::MAX), tasks: Vec::new() });
    }
    let (mut finished, mut orphans) = (0, 0);
    for (_, p) in c.pods() {
        let key = format!("{}/{}", p.spec.namespace, p.spec.name);
        let t = timing("Pod", &key);
        if t.bad {
            continue;
        }
        if matches!(p.spec.phase, PodPhase::Succeeded | PodPhase::Failed) {
            finished += 1;
            continue;
        }
        let mut pod = p.spec.clone();
        if !pod.node_name.is_empty() {
            pod.phase = PodPhase::Running;
        }
        let mut task = TaskArrival { pod, arrival_ms: t.arrival_ms.unwrap_or(0), duration_ms: t.duration_ms };
        let job = match &p.spec.group {
            Some(g) => match job_of.get(&(p.spec.namespace.clone(), g.clone())) {
                Some(&j) => j,
                None => {
                    orphans += 1;
                    issues.push(InputIssue {
                        file: t.file.clone(),
                        line: t.line,
                        message: format!(
                            "Pod {key}: PodGroup {}/{g} is not defined (or was skipped); pod skipped",
                            p.spec.namespace
                        ),
                    });
                    continue;
                }
            },
            None => {
                let name = format!("podgroup-{}", p.spec.name);
                task.pod.group = Some(name.clone());
                jobs.push(JobArrival {
                    group: PodGroupSpec {
                        namespace: p.spec.namespace.clone(),
                        uid: format!("{}/{name}", p.spec.namespace),
                        name,
                        min_member: 1,
                        queue: p.spec.queue_name.clone(),
                        priority_class_name: p.spec.priority_class_name.clone(),
                        min_resources: Some(super::shapes::min_resources([&p.spec])),
                        phase: PodGroupPhase::Pending,
                        ..Default::default()
                    },
                    arrival_ms: VirtualMs::MAX,
                    tasks: Vec::new(),
                });
                jobs.len() - 1
            }
        };
        jobs[job].tasks.push(task);
    }
    skipped += orphans;
    for j in &mut jobs {
        let first = j.tasks.iter().map(|t| t.arrival_ms).min().unwrap_or(0);
        if j.arrival_ms == VirtualMs::MAX {
            j.arrival_ms = first;
        }
        j.group.creation_ms = j.arrival_ms;
        for t in &mut j.tasks {
            t.arrival_ms = t.arrival_ms.max(j.arrival_ms);
            t.pod.creation_ms = t.arrival_ms;
        }
    }
    jobs.sort_by_key(|j| j.arrival_ms);
    if finished > 0 {
        notes.push(format!("{finished} finished pod(s) (Succeeded/Failed) left out"));
    }
    if report.skipped_other_scheduler > 0 {
        notes.push(format!("{} pending pod(s) of other schedulers left out", report.skipped_other_scheduler));
    }
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    Workload { name: format!("kubernetes objects {}", names.join(" ")), setup, jobs, issues, skipped, notes }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_and_documents() {
        assert_eq!(seconds("1.5"), Ok(1500));
        assert!(seconds("-1").is_err() && seconds("soon").is_err() && seconds("NaN").is_err());
        let docs = split_yaml("a: 1\n---\n# c\n---\nb: 2\n...\nc: 3\n");
        assert_eq!(docs.iter().map(|d| d.0).collect::<Vec<_>>(), vec![1, 4, 7]);
    }
}
