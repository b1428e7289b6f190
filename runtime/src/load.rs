//! Loading a cluster from files: YAML (multi-document) and JSON, as written by hand or printed
//! by `kubectl get -o yaml|json` (`kind: List` and `*List` kinds included), into a core
//! [`Cluster`] through [`Delta`]s.
//!
//! Owns file discovery (directories recursively, `*.yaml`/`*.yml`/`*.json`, sorted), document
//! splitting, dispatch by `apiVersion`/`kind`, and the scheduler-name filter. It refuses to stop
//! at the first problem: a malformed document or object becomes a [`LoadIssue`] naming the file,
//! the 1-based document index, the object and the field, and the rest still loads. No input can
//! make it panic, and none can stall it: a document nested deeper than
//! [`MAX_NESTING_DEPTH`] is refused before it is parsed ([`nesting`]).

pub mod nesting;

use crate::convert::{self, ConvertError, DEFAULT_NAMESPACE};
use crate::crd;
use basalt_core::cluster::{Cluster, ClusterError, Delta};
use k8s_openapi::api::core::v1::ResourceQuota;
use k8s_openapi::api::core::v1::{Node, PersistentVolume, PersistentVolumeClaim, Pod};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::api::storage::v1::{CSINode, StorageClass};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

pub use nesting::MAX_NESTING_DEPTH;

/// `apiVersion` of Volcano's batch Job (vcjob).
pub const JOB_API_VERSION: &str = "batch.volcano.sh/v1alpha1";

/// The scheduler name Volcano answers to by default (`--scheduler-name`).
pub const DEFAULT_SCHEDULER_NAME: &str = "volcano";

/// How to load.
#[derive(Clone, Debug)]
pub struct LoadOptions {
    /// Pods are scheduled only if `spec.schedulerName` equals this (default `volcano`); pods of
    /// other schedulers are kept only when already bound (they use node resources).
    pub scheduler_name: String,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions { scheduler_name: DEFAULT_SCHEDULER_NAME.into() }
    }
}

/// One problem met while loading; the object (or document, or file) it names was skipped
/// unless the message says otherwise.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadIssue {
    /// The file, as given or found.
    pub file: String,
    /// 1-based index of the document in the file; 0 when the issue is about the whole file.
    pub doc: usize,
    /// 0-based index in the `items` of a `List` document.
    pub item: Option<usize>,
    /// `kind` of the object, when known.
    pub kind: Option<String>,
    /// `namespace/name` (namespaced kinds) or `name`, when known.
    pub name: Option<String>,
    /// What is wrong, e.g. `field spec.containers[0].resources.requests.cpu: invalid quantity "abc"`.
    pub message: String,
}

impl fmt::Display for LoadIssue {
    /// `FILE doc N [items[I]] [Kind] [ns/name]: message`, or `FILE: message` for file issues.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        if self.doc > 0 {
            write!(f, " doc {}", self.doc)?;
        }
        if let Some(i) = self.item {
            write!(f, " items[{i}]")?;
        }
        if let Some(k) = &self.kind {
            write!(f, " {k}")?;
        }
        if let Some(n) = &self.name {
            write!(f, " {n}")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// A Volcano `batch.volcano.sh/v1alpha1` Job read from the files. It is not a cluster object
/// of the core: the simulator's job controller ([`crate::sim::jobs`]) turns it into a PodGroup
/// and pods (volcano-behaviour.md §5.1).
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedJob {
    /// The file it came from.
    pub file: String,
    /// 1-based document index in the file.
    pub doc: usize,
    /// The Job as written (namespace defaulted to `default`).
    pub job: crd::Job,
}

// `crd::Job` holds strings, integers and JSON, all with a reflexive `==`.
impl Eq for LoadedJob {}

/// A Volcano `batch.volcano.sh/v1alpha1` CronJob read from the files: the simulator's CronJob
/// controller ([`crate::sim::cronjobs`]) makes its Jobs on the virtual clock
/// (volcano-behaviour.md §5).
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedCronJob {
    /// The file it came from.
    pub file: String,
    /// 1-based document index in the file.
    pub doc: usize,
    /// The CronJob as written (namespace defaulted to `default`).
    pub cron_job: crd::CronJob,
}

// `crd::CronJob` holds strings, integers and JSON, all with a reflexive `==`.
impl Eq for LoadedCronJob {}

/// What a load did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadReport {
    /// Objects applied to the cluster, and Jobs read.
    pub loaded: usize,
    /// Volcano Jobs, in file order (a later Job with the same `namespace/name` replaces the
    /// earlier one, reported as an issue).
    pub jobs: Vec<LoadedJob>,
    /// Volcano CronJobs, in file order (a later one with the same `namespace/name` replaces the
    /// earlier one, reported as an issue).
    pub cron_jobs: Vec<LoadedCronJob>,
    /// Files read.
    pub files: usize,
    /// Unbound pods skipped because another scheduler is responsible for them.
    pub skipped_other_scheduler: usize,
    /// Problems, in file and document order.
    pub issues: Vec<LoadIssue>,
}

/// Issues with the same kind and message that occur this many times or more are printed as one
/// line with a count ([`grouped_issue_lines`]).
pub const GROUP_ISSUES_FROM: usize = 4;
/// Objects named on a grouped issue line.
pub const GROUP_EXAMPLES: usize = 3;

/// `issues` as readable lines, every object once: an issue whose kind and message occur fewer
/// than [`GROUP_ISSUES_FROM`] times is its own line (as [`LoadIssue`]'s `Display`); a more
/// frequent one (62 Services, say) becomes one line at its first occurrence, with the count and
/// the first [`GROUP_EXAMPLES`] places:
/// `Service ×62: unsupported kind v1 Service; skipped (a.yaml doc 1 default/a, a.yaml doc 2
/// default/b, a.yaml doc 3 default/c and 59 more)`. Order: first occurrence.
pub fn grouped_issue_lines(issues: &[LoadIssue]) -> Vec<String> {
    let key = |i: &LoadIssue| (i.kind.clone(), i.message.clone());
    let mut counts: std::collections::HashMap<(Option<String>, String), Vec<&LoadIssue>> = std::collections::HashMap::new();
    for i in issues {
        counts.entry(key(i)).or_default().push(i);
    }
    let mut lines = Vec::new();
    for i in issues {
        let k = key(i);
        let Some(group) = counts.get(&k) else { continue };
        if group.len() < GROUP_ISSUES_FROM {
            lines.push(i.to_string());
            continue;
        }
        let places: Vec<String> = group
            .iter()
            .take(GROUP_EXAMPLES)
            .map(|g| {
                let place = LoadIssue { kind: None, message: String::new(), ..(*g).clone() }.to_string();
                place.trim_end_matches(": ").to_string()
            })
            .collect();
        let what = i.kind.as_deref().unwrap_or("objects");
        let more = group.len() - places.len();
        lines.push(format!("{what} ×{}: {} ({} and {more} more)", group.len(), i.message, places.join(", ")));
        counts.remove(&k);
    }
    lines
}

/// The files under `paths`: a file as given (any extension), a directory walked recursively
/// for `*.yaml`, `*.yml` and `*.json`, each directory's files sorted by path. Paths that cannot
/// be read become issues.
pub fn discover(paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<LoadIssue>) {
    let mut files = Vec::new();
    let mut issues = Vec::new();
    let mut seen_dirs = BTreeSet::new();
    for p in paths {
        match std::fs::metadata(p) {
            Ok(m) if m.is_dir() => walk(p, &mut files, &mut issues, &mut seen_dirs),
            Ok(_) => files.push(p.clone()),
            Err(e) => issues.push(file_issue(p, format!("cannot read: {e}"))),
        }
    }
    (files, issues)
}

fn file_issue(p: &Path, message: String) -> LoadIssue {
    LoadIssue { file: p.display().to_string(), doc: 0, item: None, kind: None, name: None, message }
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>, issues: &mut Vec<LoadIssue>, seen: &mut BTreeSet<PathBuf>) {
    // Symlinked directories could form a cycle: visit each real directory once.
    let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    if !seen.insert(real) {
        return;
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => return issues.push(file_issue(dir, format!("cannot read directory: {e}"))),
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            walk(&p, files, issues, seen);
        } else if matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml" | "json")) {
            files.push(p);
        }
    }
}

/// Loads every file under `paths` (see [`discover`]) into `cluster`, in order; later objects
/// replace earlier ones with the same identity (reported as an issue).
pub fn load_paths(paths: &[PathBuf], cluster: &mut Cluster, opts: &LoadOptions) -> LoadReport {
    let (files, issues) = discover(paths);
    let mut report = LoadReport { issues, ..Default::default() };
    for f in files {
        let label = f.display().to_string();
        match std::fs::read(&f) {
            Err(e) => report.issues.push(file_issue(&f, format!("cannot read: {e}"))),
            Ok(bytes) => {
                report.files += 1;
                match String::from_utf8(bytes) {
                    Err(_) => report.issues.push(file_issue(&f, "not UTF-8 text; skipped".into())),
                    Ok(text) => {
                        let json = f.extension().and_then(|e| e.to_str()) == Some("json");
                        load_text(&label, &text, json, cluster, opts, &mut report);
                    }
                }
            }
        }
    }
    report
}

/// Loads the text of one file (`file` labels issues). `json`: parse as a stream of JSON values
/// instead of multi-document YAML. Adds to `report`.
pub fn load_text(file: &str, text: &str, json: bool, cluster: &mut Cluster, opts: &LoadOptions, report: &mut LoadReport) {
    let mut ld = Loader { file, cluster, opts, report };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if json {
        let stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
        for (i, v) in stream.enumerate() {
            match v {
                Ok(v) => ld.document(i + 1, v),
                Err(e) => {
                    ld.issue(
                        Loc { doc: i + 1, item: None },
                        None,
                        None,
                        format!("invalid JSON: {e}; the rest of the file is skipped"),
                    );
                    break;
                }
            }
        }
        return;
    }
    for (i, d) in split_yaml(text).into_iter().enumerate() {
        if let Err(deep) = nesting::check_depth(&d.text, MAX_NESTING_DEPTH) {
            let line = d.first_line + deep.line - 1;
            let message = format!(
                "nested more than {MAX_NESTING_DEPTH} levels deep at line {line} (MAX_NESTING_DEPTH); document skipped unparsed"
            );
            ld.issue(Loc { doc: i + 1, item: None }, None, None, message);
            continue;
        }
        match serde_yaml::from_str::<Value>(&d.text) {
            Ok(v) => ld.document(i + 1, v),
            Err(e) => ld.issue(Loc { doc: i + 1, item: None }, None, None, yaml_error(&e, d.first_line)),
        }
    }
}

/// A YAML document cut out of a file.
#[derive(Debug, PartialEq, Eq)]
struct YamlDoc {
    /// File line (1-based) of the document's first line.
    first_line: usize,
    /// The document text.
    text: String,
}

/// True for a line that is blank or only a comment.
fn is_blank(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

/// Splits YAML text at document markers (`---` lines, `...` ends), keeping only documents with
/// content. YAML forbids `---` at the start of a line inside any scalar, so splitting by lines
/// is exact, and a broken document cannot hide the documents after it.
fn split_yaml(text: &str) -> Vec<YamlDoc> {
    let mut docs = Vec::new();
    let mut cur = YamlDoc { first_line: 1, text: String::new() };
    let mut has_content = false;
    let mut flush = |cur: &mut YamlDoc, has_content: &mut bool, next_first: usize| {
        let done = std::mem::replace(cur, YamlDoc { first_line: next_first, text: String::new() });
        if *has_content {
            docs.push(done);
        }
        *has_content = false;
    };
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let marker_rest = line.strip_prefix("---").filter(|r| r.is_empty() || r.starts_with([' ', '\t']));
        if let Some(rest) = marker_rest {
            flush(&mut cur, &mut has_content, n);
            has_content = !is_blank(rest);
            cur.text.push_str(rest);
            cur.text.push('\n');
        } else if line.strip_prefix("...").is_some_and(|r| r.trim().is_empty() || r.trim_start().starts_with('#')) {
            flush(&mut cur, &mut has_content, n + 1);
        } else if !has_content && line.starts_with('%') {
            // A directive before the marker: not content; keep line numbers aligned.
            cur.text.push('\n');
        } else {
            has_content |= !is_blank(line);
            cur.text.push_str(line);
            cur.text.push('\n');
        }
    }
    flush(&mut cur, &mut has_content, 0);
    docs
}

/// A YAML error with its line numbers counted in the file, not the document: every
/// `line N` in serde_yaml's message is shifted by the document's first line.
fn yaml_error(e: &serde_yaml::Error, first_line: usize) -> String {
    let msg = e.to_string();
    let offset = first_line.saturating_sub(1);
    let mut out = String::with_capacity(msg.len() + 8);
    let mut rest = msg.as_str();
    while let Some(at) = rest.find("line ") {
        let (head, tail) = rest.split_at(at + "line ".len());
        out.push_str(head);
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        match tail[..digits].parse::<usize>() {
            Ok(n) => out.push_str(&(n.saturating_add(offset)).to_string()),
            Err(_) => out.push_str(&tail[..digits]),
        }
        rest = &tail[digits..];
    }
    out.push_str(rest);
    format!("invalid YAML: {out}")
}

#[derive(Clone, Copy)]
struct Loc {
    doc: usize,
    item: Option<usize>,
}

struct Loader<'a> {
    file: &'a str,
    cluster: &'a mut Cluster,
    opts: &'a LoadOptions,
    report: &'a mut LoadReport,
}

/// The kinds Basalt reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Node,
    Pod,
    PodGroup,
    Queue,
    PriorityClass,
    Job,
    CronJob,
    PodDisruptionBudget,
    ResourceQuota,
    PersistentVolumeClaim,
    PersistentVolume,
    StorageClass,
    CsiNode,
    HyperNode,
    NodeShard,
    Numatopology,
}

/// `(apiVersion, kind)` of every object Basalt reads; other objects are skipped (counted per
/// kind in the load report).
const KINDS: &[(&str, &str, Kind)] = &[
    ("v1", "Node", Kind::Node),
    ("v1", "Pod", Kind::Pod),
    (crd::API_VERSION, "PodGroup", Kind::PodGroup),
    (crd::API_VERSION, "Queue", Kind::Queue),
    ("scheduling.k8s.io/v1", "PriorityClass", Kind::PriorityClass),
    (JOB_API_VERSION, "Job", Kind::Job),
    (JOB_API_VERSION, "CronJob", Kind::CronJob),
    // v1beta1 (servers before 1.21) has the same fields the plugin reads.
    ("policy/v1", "PodDisruptionBudget", Kind::PodDisruptionBudget),
    ("policy/v1beta1", "PodDisruptionBudget", Kind::PodDisruptionBudget),
    ("v1", "ResourceQuota", Kind::ResourceQuota),
    ("v1", "PersistentVolumeClaim", Kind::PersistentVolumeClaim),
    ("v1", "PersistentVolume", Kind::PersistentVolume),
    ("storage.k8s.io/v1", "StorageClass", Kind::StorageClass),
    ("storage.k8s.io/v1", "CSINode", Kind::CsiNode),
    ("topology.volcano.sh/v1alpha1", "HyperNode", Kind::HyperNode),
    ("shard.volcano.sh/v1alpha1", "NodeShard", Kind::NodeShard),
    ("nodeinfo.volcano.sh/v1alpha1", "Numatopology", Kind::Numatopology),
];

fn kind_of(api_version: &str, kind: &str) -> Option<Kind> {
    KINDS.iter().find(|(v, k, _)| *v == api_version && *k == kind).map(|(_, _, k)| *k)
}

/// The kinds Basalt reads (`Node`, `Pod`, `PodGroup`, …), each once: what `simulate
/// --cluster`'s help must list.
pub fn kind_names() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for (_, k, _) in KINDS {
        if !out.contains(k) {
            out.push(k);
        }
    }
    out
}

fn namespaced(kind: &str) -> bool {
    !matches!(
        kind,
        "Node"
            | "Queue"
            | "PriorityClass"
            | "Namespace"
            | "PersistentVolume"
            | "StorageClass"
            | "CSINode"
            | "ClusterRole"
            | "ClusterRoleBinding"
            | "CustomResourceDefinition"
            | "HyperNode"
            | "NodeShard"
            | "Numatopology"
    )
}

impl Loader<'_> {
    fn issue(&mut self, at: Loc, kind: Option<&str>, name: Option<&str>, message: String) {
        tracing::debug!(file = self.file, doc = at.doc, %message, "load issue");
        self.report.issues.push(LoadIssue {
            file: self.file.to_string(),
            doc: at.doc,
            item: at.item,
            kind: kind.map(str::to_string),
            name: name.map(str::to_string),
            message,
        });
    }

    fn document(&mut self, doc: usize, v: Value) {
        if v.is_null() {
            return;
        }
        self.object(Loc { doc, item: None }, v);
    }

    fn object(&mut self, at: Loc, v: Value) {
        let Value::Object(mut map) = v else {
            return self.issue(at, None, None, "not an object with apiVersion and kind; skipped".into());
        };
        let api_version = map.get("apiVersion").and_then(Value::as_str).unwrap_or("").to_string();
        let kind = map.get("kind").and_then(Value::as_str).unwrap_or("").to_string();
        let meta = map.get("metadata");
        let meta_str =
            |k: &str| meta.and_then(|m| m.get(k)).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string);
        let name = meta_str("name").map(|n| {
            if namespaced(&kind) {
                format!("{}/{n}", meta_str("namespace").unwrap_or_else(|| DEFAULT_NAMESPACE.into()))
            } else {
                n
            }
        });
        let kind_opt = (!kind.is_empty()).then_some(kind.as_str());
        if api_version.is_empty() || kind.is_empty() {
            return self.issue(at, kind_opt, name.as_deref(), "missing apiVersion or kind; skipped".into());
        }
        if kind.ends_with("List") {
            return self.list(at, &api_version, &kind, map.remove("items"));
        }
        let Some(k) = kind_of(&api_version, &kind) else {
            return self.issue(at, kind_opt, name.as_deref(), format!("unsupported kind {api_version} {kind}; skipped"));
        };
        if k == Kind::PodDisruptionBudget {
            // Read as `policy/v1`, whose type checks the apiVersion it is given.
            map.insert("apiVersion".into(), Value::String("policy/v1".into()));
        }
        if matches!(k, Kind::PodGroup | Kind::Queue) && matches!(map.get("spec"), None | Some(Value::Null)) {
            map.insert("spec".into(), Value::Object(Default::default()));
        }
        let name = name.as_deref();
        let v = Value::Object(map);
        if k == Kind::Job {
            return self.job(at, name, v);
        }
        if k == Kind::CronJob {
            return self.cron_job(at, name, v);
        }
        if k == Kind::Pod {
            return self.pod(at, &kind, name, v);
        }
        let delta = match k {
            Kind::Node => self.convert(at, &kind, name, v, |n: Node| convert::convert_node(&n).map(Delta::Node)),
            Kind::Pod => return,
            Kind::PodGroup => {
                self.convert(at, &kind, name, v, |g: crd::PodGroup| convert::convert_pod_group(&g).map(Delta::PodGroup))
            }
            Kind::Queue => self.convert(at, &kind, name, v, |q: crd::Queue| convert::convert_queue(&q).map(Delta::Queue)),
            Kind::PriorityClass => {
                self.convert(at, &kind, name, v, |p: PriorityClass| convert::convert_priority_class(&p).map(Delta::PriorityClass))
            }
            Kind::Job | Kind::CronJob => return,
            Kind::PodDisruptionBudget => self.convert(at, &kind, name, v, |b: PodDisruptionBudget| {
                convert::convert_pod_disruption_budget(&b).map(Delta::PodDisruptionBudget)
            }),
            Kind::ResourceQuota => {
                self.convert(at, &kind, name, v, |q: ResourceQuota| convert::convert_resource_quota(&q).map(Delta::ResourceQuota))
            }
            Kind::PersistentVolumeClaim => self.convert(at, &kind, name, v, |c: PersistentVolumeClaim| {
                convert::convert_persistent_volume_claim(&c).map(Delta::PersistentVolumeClaim)
            }),
            Kind::PersistentVolume => self.convert(at, &kind, name, v, |p: PersistentVolume| {
                convert::convert_persistent_volume(&p).map(Delta::PersistentVolume)
            }),
            Kind::StorageClass => {
                self.convert(at, &kind, name, v, |c: StorageClass| convert::convert_storage_class(&c).map(Delta::StorageClass))
            }
            Kind::CsiNode => self.convert(at, &kind, name, v, |n: CSINode| convert::convert_csi_node(&n).map(Delta::CsiNode)),
            Kind::HyperNode => {
                self.convert(at, &kind, name, v, |h: crd::HyperNode| convert::convert_hyper_node(&h).map(Delta::HyperNode))
            }
            Kind::NodeShard => {
                self.convert(at, &kind, name, v, |s: crd::NodeShard| convert::convert_node_shard(&s).map(Delta::NodeShard))
            }
            Kind::Numatopology => self
                .convert(at, &kind, name, v, |t: crd::Numatopology| convert::convert_numatopology(&t).map(Delta::Numatopology)),
        };
        if let Some(d) = delta {
            self.apply(at, &kind, name, d);
        }
    }

    /// Reads a pod, and what the numa-aware plugin reads of it ([`convert::pod_numa`]) once the
    /// pod is stored (a redefinition that no longer asks for anything clears it).
    fn pod(&mut self, at: Loc, kind: &str, name: Option<&str>, v: Value) {
        let mut numa = None;
        let delta = self.convert(at, kind, name, v, |p: Pod| {
            numa = Some(convert::pod_numa(&p));
            convert::convert_pod(&p).map(Delta::Pod)
        });
        let Some(Delta::Pod(spec)) = delta else { return };
        let (ns, pod_name) = (spec.namespace.clone(), spec.name.clone());
        self.apply(at, kind, name, Delta::Pod(spec));
        let stored = self.cluster.pod_id(&ns, &pod_name).is_some();
        if let Some(numa) = numa.filter(|n| stored && (n.relevant() || self.cluster.pod_numa(&ns, &pod_name).is_some())) {
            let _ = self.cluster.apply(Delta::PodNuma { namespace: ns, name: pod_name, numa });
        }
    }

    /// Reads a Volcano Job into [`LoadReport::jobs`]; it must have a name and at least one task.
    fn job(&mut self, at: Loc, name: Option<&str>, v: Value) {
        let mut job: crd::Job = match serde_json::from_value(v) {
            Ok(j) => j,
            Err(e) => return self.issue(at, Some("Job"), name, format!("cannot read Job: {e}; skipped")),
        };
        if job.metadata.name.as_deref().is_none_or(str::is_empty) {
            return self.issue(at, Some("Job"), name, "field metadata.name: required; skipped".into());
        }
        if job.spec.tasks.is_empty() {
            return self.issue(at, Some("Job"), name, "field spec.tasks: a Job needs at least one task; skipped".into());
        }
        job.metadata.namespace.get_or_insert_with(|| DEFAULT_NAMESPACE.into());
        let key = crate::controller::build::job_key(&job);
        let entry = LoadedJob { file: self.file.to_string(), doc: at.doc, job };
        self.report.loaded += 1;
        if let Some(i) = self.report.jobs.iter().position(|j| crate::controller::build::job_key(&j.job) == key) {
            self.report.jobs[i] = entry;
            self.issue(at, Some("Job"), Some(&key), "defined more than once; this definition replaces the earlier one".into());
        } else {
            self.report.jobs.push(entry);
        }
    }

    /// Reads a Volcano CronJob into [`LoadReport::cron_jobs`]; it must have a name and a
    /// schedule (a schedule that does not parse is reported by the simulator's CronJob
    /// controller, as `basalt controller` reports it: an Event, no Jobs).
    fn cron_job(&mut self, at: Loc, name: Option<&str>, v: Value) {
        let mut cron_job: crd::CronJob = match serde_json::from_value(v) {
            Ok(c) => c,
            Err(e) => return self.issue(at, Some("CronJob"), name, format!("cannot read CronJob: {e}; skipped")),
        };
        if cron_job.metadata.name.as_deref().is_none_or(str::is_empty) {
            return self.issue(at, Some("CronJob"), name, "field metadata.name: required; skipped".into());
        }
        if cron_job.spec.schedule.trim().is_empty() {
            return self.issue(at, Some("CronJob"), name, "field spec.schedule: required; skipped".into());
        }
        cron_job.metadata.namespace.get_or_insert_with(|| DEFAULT_NAMESPACE.into());
        let key = format!(
            "{}/{}",
            cron_job.metadata.namespace.as_deref().unwrap_or_default(),
            cron_job.metadata.name.as_deref().unwrap_or_default()
        );
        let entry = LoadedCronJob { file: self.file.to_string(), doc: at.doc, cron_job };
        self.report.loaded += 1;
        let same = |c: &LoadedCronJob| {
            c.cron_job.metadata.namespace == entry.cron_job.metadata.namespace
                && c.cron_job.metadata.name == entry.cron_job.metadata.name
        };
        if let Some(i) = self.report.cron_jobs.iter().position(same) {
            self.report.cron_jobs[i] = entry;
            self.issue(
                at,
                Some("CronJob"),
                Some(&key),
                "defined more than once; this definition replaces the earlier one".into(),
            );
        } else {
            self.report.cron_jobs.push(entry);
        }
    }

    fn list(&mut self, at: Loc, api_version: &str, kind: &str, items: Option<Value>) {
        if at.item.is_some() {
            return self.issue(at, Some(kind), None, "a list inside a list is not supported; skipped".into());
        }
        let items = match items {
            Some(Value::Array(a)) => a,
            None | Some(Value::Null) => Vec::new(),
            Some(_) => return self.issue(at, Some(kind), None, "field items: must be a list; skipped".into()),
        };
        // `PodList` items from a real server carry no kind or apiVersion of their own.
        let item_kind = kind.strip_suffix("List").filter(|k| !k.is_empty());
        for (i, mut item) in items.into_iter().enumerate() {
            if let Value::Object(m) = &mut item {
                if let Some(k) = item_kind {
                    m.entry("kind").or_insert_with(|| Value::String(k.to_string()));
                    m.entry("apiVersion").or_insert_with(|| Value::String(api_version.to_string()));
                }
            }
            self.object(Loc { doc: at.doc, item: Some(i) }, item);
        }
    }

    /// Deserializes `v` as `T` and converts it; problems become issues and `None`.
    fn convert<T: DeserializeOwned>(
        &mut self,
        at: Loc,
        kind: &str,
        name: Option<&str>,
        v: Value,
        f: impl FnOnce(T) -> Result<Delta, ConvertError>,
    ) -> Option<Delta> {
        let typed: T = match serde_json::from_value(v) {
            Ok(t) => t,
            Err(e) => {
                self.issue(at, Some(kind), name, format!("cannot read {kind}: {e}; skipped"));
                return None;
            }
        };
        match f(typed) {
            Ok(d) => Some(d),
            Err(e) => {
                let ConvertError { name: obj_name, field, message, .. } = e;
                self.issue(at, Some(kind), Some(&obj_name), format!("field {field}: {message}; skipped"));
                None
            }
        }
    }

    fn apply(&mut self, at: Loc, kind: &str, name: Option<&str>, d: Delta) {
        let c = &*self.cluster;
        let (key, duplicate) = match &d {
            Delta::Node(n) => (n.name.clone(), c.node_id(&n.name).is_some()),
            Delta::Pod(p) => {
                if p.scheduler_name != self.opts.scheduler_name && p.node_name.is_empty() {
                    tracing::debug!(pod = %format!("{}/{}", p.namespace, p.name), scheduler = %p.scheduler_name, "pod of another scheduler skipped");
                    self.report.skipped_other_scheduler += 1;
                    return;
                }
                (format!("{}/{}", p.namespace, p.name), c.pod_id(&p.namespace, &p.name).is_some())
            }
            Delta::PodGroup(g) => (format!("{}/{}", g.namespace, g.name), c.pod_group_id(&g.namespace, &g.name).is_some()),
            Delta::Queue(q) => (q.name.clone(), c.queue(&q.name).is_some()),
            Delta::PriorityClass(p) => (p.name.clone(), c.priority_class(&p.name).is_some()),
            _ => (name.unwrap_or("").to_string(), false),
        };
        match self.cluster.apply(d) {
            Ok(()) => {
                self.report.loaded += 1;
                if duplicate {
                    self.issue(
                        at,
                        Some(kind),
                        Some(&key),
                        "defined more than once; this definition replaces the earlier one".into(),
                    );
                }
            }
            Err(e) => self.issue(at, Some(kind), Some(&key), format!("{}; skipped", cluster_error_message(&e))),
        }
    }
}

/// A cluster refusal without the object name the issue already carries.
fn cluster_error_message(e: &ClusterError) -> String {
    match e {
        ClusterError::TooManyResources { field, dropped, .. } => {
            format!("field {field}: too many distinct resource names in the cluster; dropped {dropped:?}")
        }
        ClusterError::Invalid { field, message, .. } => format!("field {field}: {message}"),
        #[allow(unreachable_patterns)]
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs(text: &str) -> Vec<(usize, String)> {
        split_yaml(text).into_iter().map(|d| (d.first_line, d.text)).collect()
    }

    #[test]
    fn splitting_documents() {
        assert_eq!(docs(""), vec![]);
        assert_eq!(docs("---\n# only a comment\n---\n"), vec![]);
        assert_eq!(docs("a: 1\n"), vec![(1, "a: 1\n".to_string())]);
        assert_eq!(docs("---\na: 1\n---\nb: 2\n"), vec![(1, "\na: 1\n".to_string()), (3, "\nb: 2\n".to_string())]);
        assert_eq!(docs("a: 1\n...\nb: 2\n"), vec![(1, "a: 1\n".to_string()), (3, "b: 2\n".to_string())]);
        assert_eq!(docs("--- {c: 3}\n"), vec![(1, " {c: 3}\n".to_string())]);
        assert_eq!(docs("%YAML 1.2\n---\nd: 4\n"), vec![(2, "\nd: 4\n".to_string())]);
        assert_eq!(docs("a: |\n  ---x\n----\n").len(), 1, "---x inside a scalar and ---- are not markers");
    }

    #[test]
    fn yaml_errors_count_lines_in_the_file() {
        let e = serde_yaml::from_str::<Value>("a: 1\nb: [1,\n  c: d\n").unwrap_err();
        assert_eq!(
            yaml_error(&e, 10),
            "invalid YAML: did not find expected ',' or ']' at line 13 column 1, while parsing a flow sequence at line 11 column 4"
        );
        let e = serde_yaml::from_str::<Value>("a: b: c\n").unwrap_err();
        assert_eq!(yaml_error(&e, 1), "invalid YAML: mapping values are not allowed in this context at line 1 column 5");
    }

    #[test]
    fn cluster_refusals_become_issues_naming_the_field() {
        let resources: Vec<String> = (0..70).map(|i| format!("example.com/r{i}: '1'")).collect();
        let text = format!(
            "apiVersion: v1\nkind: Node\nmetadata: {{name: wide}}\nstatus: {{allocatable: {{{}}}}}\n",
            resources.join(", ")
        );
        let mut c = Cluster::new();
        let mut r = LoadReport::default();
        load_text("wide.yaml", &text, false, &mut c, &LoadOptions::default(), &mut r);
        assert_eq!(r.loaded, 0);
        assert_eq!(r.issues.len(), 1);
        let line = r.issues[0].to_string();
        assert!(
            line.starts_with("wide.yaml doc 1 Node wide: field status.allocatable: too many distinct resource names"),
            "{line}"
        );
    }

    #[test]
    fn budgets_of_both_policy_versions_and_quotas_load_and_bad_ones_name_the_field() {
        let text = "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: old, namespace: ns}\n\
                    spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}\n---\n\
                    apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: new, namespace: ns}\n\
                    spec: {maxUnavailable: 10%, selector: {matchLabels: {app: web}}}\n---\n\
                    apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q, namespace: ns}\nspec: {hard: {cpu: '4'}}\n---\n\
                    apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: bad, namespace: ns}\n\
                    spec: {minAvailable: 200%}\n";
        let mut c = Cluster::new();
        let mut r = LoadReport::default();
        load_text("b.yaml", text, false, &mut c, &LoadOptions::default(), &mut r);
        assert_eq!(r.loaded, 3, "{:?}", r.issues);
        let names: Vec<&str> = c.disruption_budgets().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["new", "old"]);
        assert_eq!(c.resource_quotas_in("ns").map(|q| q.hard.get("cpu").copied()).collect::<Vec<_>>(), [Some(4000)]);
        assert_eq!(r.issues.len(), 1);
        let line = r.issues[0].to_string();
        assert!(line.starts_with("b.yaml doc 4 PodDisruptionBudget ns/bad: field spec.minAvailable:"), "{line}");
    }

    #[test]
    fn issue_display() {
        let i = LoadIssue {
            file: "c.yaml".into(),
            doc: 3,
            item: Some(1),
            kind: Some("Pod".into()),
            name: Some("ns/p".into()),
            message: "m".into(),
        };
        assert_eq!(i.to_string(), "c.yaml doc 3 items[1] Pod ns/p: m");
        assert_eq!(file_issue(Path::new("x"), "gone".into()).to_string(), "x: gone");
    }
}
