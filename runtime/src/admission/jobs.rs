//! `/jobs/validate` and `/jobs/mutate` (Volcano master `pkg/webhooks/admission/jobs/`).
//!
//! Validate, on CREATE: at least one task; the mpi plugin's master task exists; `networkTopology`
//! not both `highestTierAllowed` and `highestTierName`; per task `minAvailable ≤ replicas`,
//! unique names, the lifecycle policies (event xor exitCode, known events and actions, no
//! duplicates, exit code not 0, `*` alone), the pod name (`<job>-<task>-<index>`) a qualified
//! name, the pod template (see [`template_errors`]), `topologyPolicy` with integer CPUs, the
//! partition arithmetic; the job name; `minAvailable ≤ Σ replicas`; the job's policies; known
//! job plugins; volumes (mountPath required and unique, claim xor claimName); the queue exists,
//! is `Open`, is not `root` and is a leaf; `dependsOn` forms a DAG. The messages are Volcano's,
//! concatenated in its order. On UPDATE: replicas and minAvailable bounds, no task added or
//! removed, and only `minAvailable`, `tasks[*].replicas`, `tasks[*].minAvailable` and
//! `priorityClassName` changed.
//!
//! Mutate, on CREATE: `queue` ← `default`, `schedulerName` ← the first `--scheduler-name`,
//! `maxRetry` 0 ← 3, task names `default<i>`, `ClusterFirstWithHostNet` for host-network tasks
//! without a DNS policy, task `minAvailable` ← `minPartitions × partitionSize` or replicas, task
//! `maxRetry` 0 ← 3, job `minAvailable` 0 ← Σ task minAvailable, and `svc` added for
//! tensorflow/mpi/pytorch/ray, `ssh` for mpi. Patches are per field (Volcano replaces the whole
//! task list; the result is the same object).

use super::names::{dns1123_subdomain, go_list, qualified_name};
use super::podgroups::both_tier_limits;
use super::{name_of, pointer_key, queue_not_found, Decision, Operation, PatchOp, QueueIndex};
use crate::convert::quantity;
use crate::crd::{Job, LifecyclePolicy, TaskSpec, VolumeSpec};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// The job plugins Volcano master registers (`pkg/controllers/job/plugins/factory.go`).
pub const JOB_PLUGINS: [&str; 8] = ["ssh", "env", "svc", "tensorflow", "mpi", "pytorch", "hcclrank", "ray"];
/// Events a policy may name.
pub const POLICY_EVENTS: [&str; 8] =
    ["*", "PodFailed", "PodEvicted", "PodPending", "Unknown", "TaskCompleted", "TaskFailed", "JobUpdated"];
/// Actions a policy may take.
pub const POLICY_ACTIONS: [&str; 8] =
    ["AbortJob", "RestartJob", "RestartTask", "RestartPod", "RestartPartition", "TerminateJob", "CompleteJob", "ResumeJob"];
/// The default `maxRetry` of a Job and of a task.
pub const DEFAULT_MAX_RETRY: i32 = 3;

/// hashicorp/go-multierror's `Error()`.
fn multierror(errs: &[String]) -> String {
    if errs.len() == 1 {
        return format!("1 error occurred:\n\t* {}\n\n", errs[0]);
    }
    let points: Vec<String> = errs.iter().map(|e| format!("* {e}")).collect();
    format!("{} errors occurred:\n\t{}\n\n", errs.len(), points.join("\n\t"))
}

fn policy_errors(policies: &[LifecyclePolicy], path: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let mut events: BTreeSet<String> = BTreeSet::new();
    let mut codes: BTreeSet<i32> = BTreeSet::new();
    for p in policies {
        let has_event = p.event.as_deref().is_some_and(|e| !e.is_empty()) || !p.events.is_empty();
        if has_event && p.exit_code.is_some() {
            errs.push("must not specify event and exitCode simultaneously".to_string());
            break;
        }
        if !has_event && p.exit_code.is_none() {
            errs.push("either event and exitCode should be specified".to_string());
            break;
        }
        if has_event {
            let mut list: Vec<&str> = Vec::new();
            for e in p.events.iter().map(String::as_str).chain(p.event.as_deref().filter(|e| !e.is_empty())) {
                if !list.contains(&e) {
                    list.push(e);
                }
            }
            let action = p.action.as_deref().unwrap_or("");
            let mut stop = false;
            for e in list {
                if !POLICY_EVENTS.contains(&e) {
                    errs.push(format!("{path}: Invalid value: {e:?}: invalid policy event"));
                    stop = true;
                    break;
                }
                if !POLICY_ACTIONS.contains(&action) {
                    errs.push(format!("{path}: Invalid value: {action:?}: invalid policy action"));
                    stop = true;
                    break;
                }
                if !events.insert(e.to_string()) {
                    errs.push(format!("duplicate event {e}  across different policy"));
                    stop = true;
                    break;
                }
            }
            if stop {
                break;
            }
        } else if let Some(code) = p.exit_code {
            if code == 0 {
                errs.push("0 is not a valid error code".to_string());
                break;
            }
            if !codes.insert(code) {
                errs.push(format!("duplicate exitCode {code}"));
                break;
            }
        }
    }
    if events.contains("*") && events.len() > 1 {
        errs.push("if there's * here, no other policy should be here".to_string());
    }
    errs
}

fn write_policy_errors(b: &mut String, policies: &[LifecyclePolicy], path: &str) {
    let errs = policy_errors(policies, path);
    if !errs.is_empty() {
        b.push_str(&multierror(&errs));
        let _ = write!(b, " valid events are [{}], valid actions are [{}];", POLICY_EVENTS.join(" "), POLICY_ACTIONS.join(" "));
    }
}

/// What of Kubernetes' `ValidatePodTemplate` Basalt checks for a task's template (named after
/// the task), as `spec.task[i].<error>. ` strings: the template name a DNS-1123 subdomain, at
/// least one container, each container with a name and an image. Basalt does not run the rest
/// of Kubernetes' pod validation here: the API server refuses such pods when the controller
/// creates them, and the controller records that.
pub fn template_errors(task: &TaskSpec, index: usize) -> String {
    let mut errs: Vec<String> = Vec::new();
    let name = task.name.as_deref().unwrap_or("");
    if name.is_empty() {
        errs.push("metadata.name: Required value: name or generateName is required".to_string());
    } else {
        for m in dns1123_subdomain(name) {
            errs.push(format!("metadata.name: Invalid value: {name:?}: {m}"));
        }
    }
    let spec = task.template.as_ref().and_then(|t| t.spec.as_ref());
    let containers = spec.map(|s| s.containers.as_slice()).unwrap_or(&[]);
    if containers.is_empty() {
        errs.push("template.spec.containers: Required value".to_string());
    }
    for (i, c) in containers.iter().enumerate() {
        if c.name.is_empty() {
            errs.push(format!("template.spec.containers[{i}].name: Required value"));
        }
        if c.image.as_deref().unwrap_or("").is_empty() {
            errs.push(format!("template.spec.containers[{i}].image: Required value"));
        }
    }
    if errs.is_empty() {
        return topology_policy_error(task, index);
    }
    let mut msg = format!("spec.task[{index}].");
    for e in errs {
        let _ = write!(msg, "{e}. ");
    }
    msg
}

fn topology_policy_error(task: &TaskSpec, index: usize) -> String {
    match task.topology_policy.as_deref() {
        None | Some("") | Some("none") => return String::new(),
        _ => {}
    }
    let Some(spec) = task.template.as_ref().and_then(|t| t.spec.as_ref()) else { return String::new() };
    let all = spec.containers.iter().chain(spec.init_containers.iter().flatten());
    for (id, c) in all.enumerate() {
        let res = c.resources.as_ref();
        let requests = res.and_then(|r| r.requests.as_ref()).filter(|r| !r.is_empty()).or(res.and_then(|r| r.limits.as_ref()));
        let cpu = requests.and_then(|r| r.get("cpu")).map(|q| q.0.as_str()).unwrap_or("0");
        let milli = quantity::to_milli(cpu).unwrap_or(1);
        if milli == 0 || milli % 1000 != 0 {
            return format!("the cpu request isn't an integer in spec.task[{index}] container[{id}].");
        }
    }
    String::new()
}

fn int(v: &serde_json::Value, key: &str) -> i64 {
    v.get(key).and_then(|x| x.as_i64()).unwrap_or(0)
}

fn partition_error(task: &TaskSpec, job: &str) -> String {
    let Some(pp) = task.partition_policy.as_ref() else { return String::new() };
    let mut msg = task.partition_problem(job).unwrap_or_default();
    if both_tier_limits(pp.get("networkTopology")) {
        msg.push_str("must not specify 'highestTierAllowed' and 'highestTierName' in networkTopology simultaneously");
    }
    msg
}

fn volume_error(volumes: &[VolumeSpec]) -> String {
    let mut seen = BTreeSet::new();
    for v in volumes {
        if v.mount_path.is_empty() {
            return " mountPath is required;".to_string();
        }
        if !seen.insert(v.mount_path.as_str()) {
            return format!(" duplicated mountPath: {};", v.mount_path);
        }
        let claim_name = v.volume_claim_name.as_deref().unwrap_or("");
        if v.volume_claim.is_none() && claim_name.is_empty() {
            return " either VolumeClaim or VolumeClaimName must be specified;".to_string();
        }
        if !claim_name.is_empty() {
            if v.volume_claim.is_some() {
                return "conflict: If you want to use an existing PVC, just specify VolumeClaimName.If you want to create a new PVC, you do not need to specify VolumeClaimName".to_string();
            }
            let errs = dns1123_subdomain(claim_name);
            if !errs.is_empty() {
                return format!("invalid VolumeClaimName {claim_name} : {}", go_list(&errs));
            }
        }
    }
    String::new()
}

/// Whether the tasks' `dependsOn` edges form a DAG (Volcano's `topoSort`).
fn is_dag(tasks: &[TaskSpec]) -> bool {
    let names: Vec<&str> = tasks.iter().map(|t| t.name.as_deref().unwrap_or("")).collect();
    let mut indegree: BTreeMap<&str, usize> = names.iter().map(|n| (*n, 0)).collect();
    let mut edges: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for t in tasks {
        let me = t.name.as_deref().unwrap_or("");
        for dep in t.depends_on.iter().flat_map(|d| d.name.iter()) {
            if edges.entry(dep.as_str()).or_default().insert(me) {
                *indegree.entry(me).or_insert(0) += 1;
            }
        }
    }
    let mut stack: Vec<&str> = indegree.iter().filter(|(_, d)| **d == 0).map(|(n, _)| *n).collect();
    let mut sorted = 0;
    while let Some(n) = stack.pop() {
        sorted += 1;
        for m in edges.remove(n).into_iter().flatten() {
            let d = indegree.get_mut(m).expect("every edge end has a degree");
            *d -= 1;
            if *d == 0 {
                stack.push(m);
            }
        }
    }
    sorted == indegree.len().max(names.len())
}

/// The `--master` of the mpi plugin's arguments (Go's flag syntax: `--master=x`, `-master x`),
/// `master` by default.
fn mpi_master(args: &[String]) -> String {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let flag = a.trim_start_matches('-');
        if a.starts_with('-') {
            if let Some(v) = flag.strip_prefix("master=") {
                return v.to_string();
            }
            if flag == "master" {
                if let Some(v) = it.next() {
                    return v.clone();
                }
            }
        }
    }
    "master".to_string()
}

fn queue_errors(b: &mut String, queue: &str, queues: &QueueIndex) {
    let Some(q) = queues.get(queue) else {
        let _ = write!(b, " unable to find job queue: {};", queue_not_found(queue));
        return;
    };
    let state = q.status.as_ref().and_then(|s| s.state.as_deref()).unwrap_or("");
    if state != "Open" {
        let _ = write!(b, " can only submit job to queue with state `Open`, queue `{queue}` status is `{state}`;");
    }
    if queue == "root" {
        b.push_str(" can not submit job to root queue;");
    } else {
        let children = queues.children(queue).count();
        if children > 0 {
            let _ = write!(b, " can only submit job to leaf queue, queue `{queue}` has {children} child queues;");
        }
    }
}

fn validate_create(job: &Job, queues: &QueueIndex) -> Decision {
    let spec = &job.spec;
    let job_name = name_of(&job.metadata);
    if spec.tasks.is_empty() {
        return Decision::deny("No task specified in job spec");
    }
    if let Some(args) = spec.plugins.get("mpi") {
        let master = mpi_master(args);
        if !spec.tasks.iter().any(|t| t.name.as_deref() == Some(master.as_str())) {
            return Decision::deny("The specified mpi master task was not found");
        }
    }
    let mut b = String::new();
    if both_tier_limits(spec.network_topology.as_ref()) {
        b.push_str("must not specify 'highestTierAllowed' and 'highestTierName' in networkTopology simultaneously");
    }
    let mut names = BTreeSet::new();
    let mut total: i64 = 0;
    for (index, task) in spec.tasks.iter().enumerate() {
        let name = task.name.as_deref().unwrap_or("");
        let replicas = task.replicas.unwrap_or(0);
        if task.min_available.is_some_and(|m| m > replicas) {
            let _ = write!(b, " 'minAvailable' is greater than 'replicas' in task: {name}, job: {job_name};");
        }
        total += i64::from(replicas);
        if !names.insert(name) {
            let _ = write!(b, " duplicated task name {name};");
            break;
        }
        write_policy_errors(&mut b, &task.policies, "spec.tasks.policies");
        let pod_name = format!("{job_name}-{name}-{index}");
        let errs = qualified_name(&pod_name);
        if !errs.is_empty() {
            let _ = write!(b, "create pod with name {pod_name} validate failed {};", go_list(&errs));
        }
        b.push_str(&template_errors(task, index));
        b.push_str(&partition_error(task, job_name));
    }
    let errs = qualified_name(job_name);
    if !errs.is_empty() {
        let _ = write!(b, "create job with name {job_name} validate failed {}", go_list(&errs));
    }
    if total < i64::from(spec.min_available.unwrap_or(0)) {
        b.push_str(" job 'minAvailable' should not be greater than total replicas in tasks;");
    }
    write_policy_errors(&mut b, &spec.policies, "spec.policies");
    for name in spec.plugins.keys() {
        if !JOB_PLUGINS.contains(&name.as_str()) {
            let _ = write!(b, " unable to find job plugin: {name};");
        }
    }
    b.push_str(&volume_error(&spec.volumes));
    queue_errors(&mut b, spec.queue.as_deref().unwrap_or(""), queues);
    if spec.tasks.iter().any(|t| t.depends_on.is_some()) && !is_dag(&spec.tasks) {
        b.push_str(" job has dependencies between tasks, but doesn't form a directed acyclic graph(DAG);");
    }
    if b.is_empty() {
        Decision::allow()
    } else {
        Decision::deny(b.trim())
    }
}

fn validate_update(old: &Job, new: &Job) -> Decision {
    let mut total: i64 = 0;
    let job_name = name_of(&new.metadata);
    for task in &new.spec.tasks {
        let name = task.name.as_deref().unwrap_or("");
        let replicas = task.replicas.unwrap_or(0);
        if replicas < 0 {
            return Decision::deny(format!("'replicas' must be >= 0 in task: {name}"));
        }
        if let Some(m) = task.min_available {
            if m < 0 {
                return Decision::deny(format!("'minAvailable' must be >= 0 in task: {name}"));
            }
            if m > replicas {
                return Decision::deny(format!("'minAvailable' must be <= 'replicas' in task: {name}"));
            }
        }
        let msg = partition_error(task, job_name);
        if !msg.is_empty() {
            return Decision::deny(msg);
        }
        total += i64::from(replicas);
    }
    let min = i64::from(new.spec.min_available.unwrap_or(0));
    if min > total {
        return Decision::deny("job 'minAvailable' must not be greater than total replicas");
    }
    if min < 0 {
        return Decision::deny("job 'minAvailable' must be >= 0");
    }
    if both_tier_limits(new.spec.network_topology.as_ref()) {
        return Decision::deny("must not specify 'highestTierAllowed' and 'highestTierName' in networkTopology simultaneously");
    }
    if old.spec.tasks.len() != new.spec.tasks.len() {
        return Decision::deny("job updates may not add or remove tasks");
    }
    let mut a = new.spec.clone();
    let mut b = old.spec.clone();
    a.min_available = b.min_available;
    a.priority_class_name = b.priority_class_name.clone();
    for (t, o) in a.tasks.iter_mut().zip(&b.tasks) {
        t.replicas = o.replicas;
        t.min_available = o.min_available;
    }
    for v in a.volumes.iter_mut().chain(b.volumes.iter_mut()) {
        if v.volume_claim.is_some() {
            v.volume_claim_name = None;
        }
    }
    if a != b {
        return Decision::deny(
            "job updates may not change fields other than `minAvailable`, `tasks[*].replicas under spec` and `PriorityClassName`",
        );
    }
    Decision::allow()
}

/// `/jobs/validate`: `old` is the old object on UPDATE.
pub fn validate(op: Operation, job: &Job, old: Option<&Job>, queues: &QueueIndex) -> Decision {
    match (op, old) {
        (Operation::Create, _) => validate_create(job, queues),
        (Operation::Update, Some(old)) => validate_update(old, job),
        (Operation::Update, None) => Decision::deny("an UPDATE review without oldObject"),
        _ => Decision::deny("expect operation to be 'CREATE' or 'UPDATE'"),
    }
}

/// `/jobs/mutate` on CREATE; `scheduler_name` is the first `--scheduler-name`.
pub fn mutate(op: Operation, job: &Job, scheduler_name: &str) -> Decision {
    if op != Operation::Create {
        return Decision::deny("expect operation to be 'CREATE' ");
    }
    let spec = &job.spec;
    let mut patch = Vec::new();
    if spec.queue.as_deref().unwrap_or("").is_empty() {
        patch.push(PatchOp::add("/spec/queue", "default"));
    }
    if spec.scheduler_name.as_deref().unwrap_or("").is_empty() {
        patch.push(PatchOp::add("/spec/schedulerName", scheduler_name));
    }
    if spec.max_retry.unwrap_or(0) == 0 {
        patch.push(PatchOp::add("/spec/maxRetry", DEFAULT_MAX_RETRY));
    }
    let mut job_min: i64 = 0;
    for (i, t) in spec.tasks.iter().enumerate() {
        let base = format!("/spec/tasks/{i}");
        if t.name.as_deref().unwrap_or("").is_empty() {
            patch.push(PatchOp::add(format!("{base}/name"), format!("default{i}")));
        }
        if let Some(ps) = t.template.as_ref().and_then(|t| t.spec.as_ref()) {
            if ps.host_network == Some(true) && ps.dns_policy.as_deref().unwrap_or("").is_empty() {
                patch.push(PatchOp::add(format!("{base}/template/spec/dnsPolicy"), "ClusterFirstWithHostNet"));
            }
        }
        let min = match t.min_available {
            Some(m) => m,
            None => {
                let pp = t.partition_policy.as_ref();
                let (min_parts, size) = pp.map(|p| (int(p, "minPartitions"), int(p, "partitionSize"))).unwrap_or((0, 0));
                let m = if min_parts > 0 { (min_parts * size) as i32 } else { t.replicas.unwrap_or(0) };
                patch.push(PatchOp::add(format!("{base}/minAvailable"), m));
                m
            }
        };
        job_min += i64::from(min);
        if t.max_retry.unwrap_or(0) == 0 {
            patch.push(PatchOp::add(format!("{base}/maxRetry"), DEFAULT_MAX_RETRY));
        }
    }
    if spec.min_available.unwrap_or(0) == 0 {
        patch.push(PatchOp::add("/spec/minAvailable", job_min));
    }
    let has = |p: &str| spec.plugins.contains_key(p);
    if ["tensorflow", "mpi", "pytorch", "ray"].iter().any(|p| has(p)) && !has("svc") {
        patch.push(PatchOp::add(format!("/spec/plugins/{}", pointer_key("svc")), serde_json::json!([])));
    }
    if has("mpi") && !has("ssh") {
        patch.push(PatchOp::add("/spec/plugins/ssh", serde_json::json!([])));
    }
    Decision::patched(patch)
}

#[cfg(test)]
mod tests;
