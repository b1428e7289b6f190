//! Least privilege, enforced by the real test apiserver (RBAC authorization only):
//! * the end-to-end tests' scheduler identity is `deploy/`'s ServiceAccount, bound only through
//!   `deploy/`'s ClusterRoleBinding to its ClusterRole;
//! * a call outside the role is refused with the server's 403, and `basalt scheduler` reports
//!   it: the log line and the pod's `PodScheduled` condition carry the server's message, which
//!   names the verb and the resource; once the role allows the call again the pods are bound;
//! * the role grants nothing the scheduler does not use: the verbs and resources in the audit
//!   log of a run that exercises every API path (leader election, startup Queues, binds,
//!   conditions, events, PodGroup and Queue status) are exactly the role's rules, less the one
//!   grant listed in [`GRANTED_FOR_LATER`].

use crate::{e2e, support};

use e2e::process::SchedulerProcess;
use e2e::{node_of, pod_scheduled, SCHEDULER_USER};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, RoleBinding};
use kube::api::{ListParams, PostParams};
use kube::{Api, ResourceExt};
use std::collections::BTreeSet;
use std::time::Duration;
use support::{apply_scheduler_rbac, deploy_dir, fresh_namespace, install_volcano_crds, wait_for, TestApiserver};

/// One test at a time (each has its own server and changes RBAC on it).
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// `(apiGroup, resource[/subresource], verb)`.
type Grant = (String, String, String);

/// Grants the role holds for code paths a default-conf run does not reach, with the reason.
const GRANTED_FOR_LATER: &[(&str, &str, &str, &str)] = &[
    ("", "events", "patch", "an event repeated within 10 minutes bumps the Event's count (plumbing/events.rs)"),
    ("", "pods", "delete", "evicting preempt/reclaim victims (Write::Evict); the default conf runs neither action"),
    (
        "",
        "pods",
        "patch",
        "removing the queue-allocation gate (live/gate_removal.rs), only with --feature-gates=SchedulingGatesQueueAdmission=true; the v1.20 test server has no spec.schedulingGates",
    ),
    ("scheduling.volcano.sh", "podgroups", "get", "re-reading a PodGroup after a 409 conflict (e2e/status_writes.rs)"),
    ("", "persistentvolumeclaims", "get", "the volume binder waits for a claim to be bound (e2e/volumes.rs)"),
    ("", "persistentvolumeclaims", "patch", "the volume binder's selected-node annotation (e2e/volumes.rs)"),
    ("", "persistentvolumes", "get", "the volume binder's rollback reads the PV (e2e/volumes.rs)"),
    ("", "persistentvolumes", "patch", "the volume binder writes a static PV's claimRef (e2e/volumes.rs)"),
    ("shard.volcano.sh", "nodeshards", "list", "node sharding, --scheduler-sharding-mode hard|soft (e2e/sharding.rs)"),
    ("shard.volcano.sh", "nodeshards", "watch", "node sharding, --scheduler-sharding-mode hard|soft (e2e/sharding.rs)"),
    ("shard.volcano.sh", "nodeshards/status", "patch", "node sharding writes its NodeShard's status (e2e/sharding.rs)"),
    ("", "nodes", "get", "deviceshare.NodeLockEnable reads the node's lock before taking it (e2e/devices.rs)"),
    ("", "nodes", "patch", "deviceshare.NodeLockEnable writes the node lock annotation (e2e/devices.rs)"),
];

/// The rules of `deploy/fresh/rbac.yaml`'s ClusterRole `volcano-scheduler`, one grant per
/// group × resource × verb.
fn deploy_role_grants() -> support::Result<BTreeSet<Grant>> {
    let path = deploy_dir().join("fresh/rbac.yaml");
    let text = std::fs::read_to_string(&path)?;
    let mut grants = BTreeSet::new();
    for de in serde_yaml::Deserializer::from_str(&text) {
        let doc: serde_yaml::Value = serde::Deserialize::deserialize(de)?;
        if doc["kind"].as_str() != Some("ClusterRole") {
            continue;
        }
        let role: ClusterRole = serde_json::from_value(serde_json::to_value(&doc)?)?;
        for rule in role.rules.unwrap_or_default() {
            for g in rule.api_groups.clone().unwrap_or_default() {
                for r in rule.resources.clone().unwrap_or_default() {
                    for v in &rule.verbs {
                        grants.insert((g.clone(), r.clone(), v.clone()));
                    }
                }
            }
        }
    }
    if grants.is_empty() {
        return Err(format!("{}: no ClusterRole rules", path.display()).into());
    }
    Ok(grants)
}

/// The subjects name the scheduler's ServiceAccount, its user, or a ServiceAccount group it is in
/// (`system:authenticated`, bound by the server's defaults only, is not checked).
fn names_scheduler(subjects: &[k8s_openapi::api::rbac::v1::Subject]) -> bool {
    subjects.iter().any(|s| match s.kind.as_str() {
        "ServiceAccount" => s.name == "volcano-scheduler" && s.namespace.as_deref() == Some("volcano-system"),
        "User" => s.name == SCHEDULER_USER,
        "Group" => s.name == "system:serviceaccounts" || s.name == "system:serviceaccounts:volcano-system",
        _ => false,
    })
}

async fn set_up(server: &TestApiserver) -> support::Result<(kube::Client, String)> {
    let admin = server.admin_client().await?;
    install_volcano_crds(&admin).await?;
    apply_scheduler_rbac(&admin).await?;
    let ns = fresh_namespace(&admin, "rbac").await?;
    e2e::nodes(&admin, "node", 4, "8", "32Gi").await?;
    Ok((admin, ns))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_role_grants_only_what_the_scheduler_uses() -> support::Result<()> {
    let _serial = SERIAL.lock().await;
    let server = TestApiserver::start()?;
    let (admin, ns) = set_up(&server).await?;

    // The scheduler's identity is bound through deploy/'s ClusterRoleBinding only.
    let crbs = Api::<ClusterRoleBinding>::all(admin.clone()).list(&ListParams::default()).await?;
    // The server's own default bindings (label `kubernetes.io/bootstrapping: rbac-defaults`, e.g.
    // `system:service-account-issuer-discovery` for every ServiceAccount) are not deploy/'s.
    let default_binding =
        |b: &ClusterRoleBinding| b.labels().get("kubernetes.io/bootstrapping").is_some_and(|v| v == "rbac-defaults");
    let bound: Vec<(String, String)> = crbs
        .items
        .iter()
        .filter(|b| !default_binding(b) && names_scheduler(b.subjects.as_deref().unwrap_or_default()))
        .map(|b| (b.name_any(), b.role_ref.name.clone()))
        .collect();
    assert_eq!(bound, vec![("volcano-scheduler-role".to_string(), "volcano-scheduler".to_string())]);
    let rbs = Api::<RoleBinding>::all(admin.clone()).list(&ListParams::default()).await?;
    let ns_bound: Vec<String> =
        rbs.items.iter().filter(|b| names_scheduler(b.subjects.as_deref().unwrap_or_default())).map(|b| b.name_any()).collect();
    assert!(ns_bound.is_empty(), "RoleBindings naming the scheduler: {ns_bound:?}");

    // A run through every API path: fitting gangs, a gang that cannot fit (conditions, events,
    // PodGroup status), queue allocations, leader election with release on SIGTERM.
    let queues = vec!["q0".to_string()];
    e2e::create_queues(&admin, &queues).await?;
    let fit = e2e::Gangs { namespace: &ns, prefix: "fit", groups: 3, gang: 3, queues: &queues, cpu: "1", memory: "1Gi" }
        .create(&admin)
        .await?;
    let _ = e2e::Gangs { namespace: &ns, prefix: "big", groups: 1, gang: 2, queues: &queues, cpu: "17", memory: "1Gi" }
        .create(&admin)
        .await?;
    let mut sched = SchedulerProcess::start(
        server.dir(),
        "scheduler",
        &server.scheduler_kubeconfig(),
        &["--leader-elect=true", "--schedule-period=1s"],
    )?;
    wait_for("the fitting pods bound", Duration::from_secs(60), || async {
        Ok((e2e::bound_count(&admin, &ns).await? == fit.len()).then_some(()))
    })
    .await?;
    wait_for("every write path used", Duration::from_secs(60), || async {
        let audit = server.audit()?.by_user(SCHEDULER_USER);
        let used = |res: &str, sub: &str, verb: &str| {
            !audit.filter(|e| e.resource == res && e.subresource == sub && e.verb == verb).events().is_empty()
        };
        Ok((used("pods", "status", "update")
            && used("events", "", "create")
            && used("podgroups", "", "update")
            && used("queues", "status", "update"))
        .then_some(()))
    })
    .await?;
    assert_eq!(sched.terminate(), Some(0), "graceful stop (releases the Lease)");

    let audit = server.audit()?.by_user(SCHEDULER_USER);
    let refused = audit.filter(|e| e.code == 403);
    assert!(refused.events().is_empty(), "calls outside the role: {:?}", refused.events());
    let used: BTreeSet<Grant> = audit
        .events()
        .iter()
        .filter(|e| !e.resource.is_empty())
        .map(|e| {
            let res = if e.subresource.is_empty() { e.resource.clone() } else { format!("{}/{}", e.resource, e.subresource) };
            (e.api_group.clone(), res, e.verb.clone())
        })
        .collect();
    let granted = deploy_role_grants()?;
    let outside: Vec<&Grant> = used.difference(&granted).collect();
    assert!(outside.is_empty(), "used without a grant: {outside:?}");
    let later: BTreeSet<Grant> =
        GRANTED_FOR_LATER.iter().map(|(g, r, v, _)| (g.to_string(), r.to_string(), v.to_string())).collect();
    let unused: Vec<&Grant> = granted.difference(&used).filter(|g| !later.contains(*g)).collect();
    assert!(unused.is_empty(), "granted by deploy/'s ClusterRole but never used by the scheduler: {unused:?}");
    for g in &later {
        assert!(granted.contains(g), "{g:?} is listed as granted for later but the role does not grant it");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_outside_the_role_is_refused_with_403_and_reported() -> support::Result<()> {
    let _serial = SERIAL.lock().await;
    let server = TestApiserver::start()?;
    let (admin, ns) = set_up(&server).await?;
    // The role without its binding rule.
    let roles: Api<ClusterRole> = Api::all(admin.clone());
    let mut role = roles.get("volcano-scheduler").await?;
    let rules = role.rules.take().unwrap_or_default();
    let kept: Vec<_> =
        rules.into_iter().filter(|r| !r.resources.as_deref().unwrap_or_default().iter().any(|x| x == "pods/binding")).collect();
    role.rules = Some(kept);
    roles.replace("volcano-scheduler", &PostParams::default(), &role).await?;

    let queues = vec!["q0".to_string()];
    e2e::create_queues(&admin, &queues).await?;
    let names = e2e::Gangs { namespace: &ns, prefix: "job", groups: 1, gang: 2, queues: &queues, cpu: "1", memory: "1Gi" }
        .create(&admin)
        .await?;
    let mut sched = SchedulerProcess::start(
        server.dir(),
        "scheduler",
        &server.scheduler_kubeconfig(),
        &["--leader-elect=false", "--schedule-period=1s"],
    )?;
    let pods: Api<Pod> = Api::namespaced(admin.clone(), &ns);
    let cond = wait_for("the refused bind on the pod's condition", Duration::from_secs(60), || async {
        let p = pods.get(&names[0]).await?;
        Ok(pod_scheduled(&p).filter(|c| c.1 == "SchedulerError"))
    })
    .await?;
    assert_eq!(cond.0, "False");
    assert!(
        cond.2.contains("forbidden") && cond.2.contains("cannot create resource \"pods/binding\""),
        "the condition names the verb and resource: {cond:?}"
    );
    let refused = server.audit()?.by_user(SCHEDULER_USER).filter(|e| e.is_binding() && e.code == 403);
    assert!(!refused.events().is_empty(), "the server refused the binding with 403");
    let log = wait_for("the refusal in the scheduler's log", Duration::from_secs(10), || async {
        let log = sched.log_text();
        Ok(log.lines().find(|l| l.contains("WARN") && l.contains("cannot create resource \"pods/binding\"")).map(str::to_string))
    })
    .await?;
    assert!(log.contains(&format!("{ns}/{}", names[0])) || log.contains(&format!("{ns}/{}", names[1])), "names the pod: {log}");

    // The role as deploy/ has it: the same pods are bound, once each.
    apply_scheduler_rbac(&admin).await?;
    wait_for("pods bound once the role allows it", Duration::from_secs(60), || async {
        let all = e2e::pods(&admin, &ns).await?;
        Ok(names.iter().all(|n| all.get(n).is_some_and(|p| !node_of(p).is_empty())).then_some(()))
    })
    .await?;
    let counts = server.audit()?.by_user(SCHEDULER_USER).binding_counts();
    for n in &names {
        assert_eq!(counts.get(&(ns.clone(), n.clone())).map(|c| c.succeeded), Some(1), "pod {n}");
    }
    assert_eq!(sched.terminate(), Some(0));
    Ok(())
}
