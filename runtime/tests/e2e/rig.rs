//! [`Rig`]: one fault test's world: `basalt scheduler` processes talking to the real test
//! apiserver through a [`FaultProxy`], with the identity and ClusterRole of `deploy/`, on their
//! own labelled nodes (`--node-selector`) and scheduler name (`--scheduler-name`, the pods'
//! `schedulerName`), so tests sharing one server neither schedule onto each other's nodes nor pick
//! up each other's pods (a failed test's leftovers included); plus the checks every fault test makes (every pod bound, exactly one successful
//! binding per pod in the audit log, no node over-committed).

use super::process::SchedulerProcess;
use super::{node_of, pods, SCHEDULER_USER};
use crate::support::{
    self, apply_scheduler_rbac, create_nodes, create_pod_group, create_pods, fresh_namespace, install_volcano_crds, pod_group,
    wait_for, FaultProxy, TestApiserver, TestNode, TestPod,
};
use kube::{Client, ResourceExt};
use std::collections::BTreeMap;
use std::ops::Deref;
use std::time::{Duration, Instant};

/// The node label that puts a node in one test's pool.
pub const POOL_LABEL: &str = "basalt.dev/fault-pool";

/// The namespaces of the rigs this process made: the only ones [`sweep`] clears PodGroups in,
/// so tests on the same shared server that are not rigs keep theirs.
static RIG_NAMESPACES: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Held by every rig on the shared server for its lifetime, so they run one at a time whatever
/// file they are in: a rig's start [`sweep`]s every `fault-*` pod and the PodGroups of the
/// other rigs' namespaces, which would delete a concurrent rig's pods and PodGroups.
static SHARED_RIG: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The server a rig uses: the binary's shared one, or its own.
pub enum Server {
    /// [`TestApiserver::shared`].
    Shared(&'static TestApiserver),
    /// A dedicated instance (stopped with the rig).
    Own(TestApiserver),
}

impl Deref for Server {
    type Target = TestApiserver;
    fn deref(&self) -> &TestApiserver {
        match self {
            Server::Shared(s) => s,
            Server::Own(s) => s,
        }
    }
}

/// One fault test's cluster, proxy and schedulers.
pub struct Rig {
    /// The server.
    pub server: Server,
    /// An admin client (direct, not through the proxy).
    pub admin: Client,
    /// The proxy the schedulers talk through.
    pub proxy: FaultProxy,
    /// The test's namespace.
    pub ns: String,
    /// The test's name: node pool label value, node name prefix, log names.
    pub name: String,
    /// Per-node allocatable cpu, millicores.
    pub node_cpu: i64,
    /// Schedulers started, in order.
    pub schedulers: Vec<SchedulerProcess>,
    /// [`SHARED_RIG`], held while a rig on the shared server lives.
    _shared: Option<tokio::sync::MutexGuard<'static, ()>>,
}

/// `cpu` quantity in millicores.
pub fn milli(q: &str) -> i64 {
    basalt_runtime::convert::resources::amount("cpu", q).unwrap_or(0)
}

impl Rig {
    /// Installs `deploy/`'s CRDs and RBAC, creates a namespace and `nodes` nodes
    /// `{name}-{i}` with `cpu` CPUs (and 64Gi, 110 pods) in pool `name`, and starts the proxy.
    pub async fn new(server: Server, name: &str, nodes: usize, cpu: &str) -> support::Result<Rig> {
        let shared = match &server {
            Server::Shared(_) => Some(SHARED_RIG.lock().await),
            Server::Own(_) => None,
        };
        let admin = server.admin_client().await?;
        install_volcano_crds(&admin).await?;
        sweep(&admin).await?;
        apply_scheduler_rbac(&admin).await?;
        let ns = fresh_namespace(&admin, name).await?;
        RIG_NAMESPACES.lock().map_err(|e| format!("rig namespaces: {e}"))?.push(ns.clone());
        let node = TestNode::new(name)
            .allocatable("cpu", cpu)
            .allocatable("memory", "64Gi")
            .allocatable("pods", "110")
            .label(POOL_LABEL, name);
        create_nodes(&admin, &node, nodes).await?;
        let proxy = FaultProxy::start(&server).await?;
        Ok(Rig {
            server,
            admin,
            proxy,
            ns,
            name: name.to_string(),
            node_cpu: milli(cpu),
            schedulers: Vec::new(),
            _shared: shared,
        })
    }

    /// Starts `basalt scheduler` through the proxy (scheduler identity), on this rig's node
    /// pool, every 1 s, with `extra` flags; its log is `{name}-{label}.log` in the server's folder.
    pub fn start_scheduler(&mut self, label: &str, extra: &[&str]) -> support::Result<usize> {
        let kubeconfig = self.server.dir().join(format!("{}-{label}.kubeconfig", self.name));
        self.proxy.write_kubeconfig(&self.server.scheduler_kubeconfig(), &kubeconfig)?;
        let selector = format!("--node-selector={POOL_LABEL}:{}", self.name);
        let scheduler = format!("--scheduler-name={}", self.scheduler_name());
        // The Lease keeps Volcano's name: the ClusterRole allows only `volcano`.
        let mut args =
            vec!["--schedule-period=1s", selector.as_str(), scheduler.as_str(), "--leader-elect-resource-name=volcano"];
        args.extend_from_slice(extra);
        let p = SchedulerProcess::start(self.server.dir(), &format!("{}-{label}", self.name), &kubeconfig, &args)?;
        self.schedulers.push(p);
        Ok(self.schedulers.len() - 1)
    }

    /// The `schedulerName` of this rig's pods and schedulers: `fault-{name}`.
    pub fn scheduler_name(&self) -> String {
        format!("fault-{}", self.name)
    }

    /// Starts one scheduler without leader election (`--leader-elect=false`) plus `extra`.
    pub fn start_single(&mut self, extra: &[&str]) -> support::Result<()> {
        let mut args = vec!["--leader-elect=false"];
        args.extend_from_slice(extra);
        self.start_scheduler("scheduler", &args).map(|_| ())
    }

    /// Creates `groups` PodGroups `{prefix}-{g}` of `gang` pods each (minMember = gang) in the
    /// default queue, each pod asking `cpu`. Returns the pod names.
    pub async fn gangs(&self, prefix: &str, groups: usize, gang: usize, cpu: &str) -> support::Result<Vec<String>> {
        let mut pods = Vec::new();
        for g in 0..groups {
            let group = format!("{prefix}-{g}");
            create_pod_group(&self.admin, &pod_group(&self.ns, &group, gang as i32, None)).await?;
            for i in 0..gang {
                pods.push(
                    TestPod::new(&self.ns, &format!("{group}-{i}"))
                        .scheduler(&self.scheduler_name())
                        .group(&group)
                        .requests(&[("cpu", cpu), ("memory", "64Mi")])
                        .build(),
                );
            }
        }
        create_pods(&self.admin, &pods).await?;
        Ok(pods.iter().map(|p| p.name_any()).collect())
    }

    /// Waits until every pod in `names` is bound and returns how long that took from the call.
    /// Errors: not within `timeout` (with the scheduler logs' tails).
    pub async fn wait_bound(&self, names: &[String], timeout: Duration) -> support::Result<Duration> {
        let start = Instant::now();
        let r = wait_for(&format!("{} pods bound", names.len()), timeout, || async {
            let all = pods(&self.admin, &self.ns).await?;
            let bound = names.iter().filter(|n| all.get(*n).is_some_and(|p| !node_of(p).is_empty())).count();
            Ok((bound == names.len()).then_some(()))
        })
        .await;
        match r {
            Ok(()) => Ok(start.elapsed()),
            Err(e) => Err(format!("{e}\n{}", self.log_tails(15)).into()),
        }
    }

    /// How many of `names` are bound now.
    pub async fn bound(&self, names: &[String]) -> support::Result<usize> {
        let all = pods(&self.admin, &self.ns).await?;
        Ok(names.iter().filter(|n| all.get(*n).is_some_and(|p| !node_of(p).is_empty())).count())
    }

    /// No double bind: each pod of `names` has exactly one successful binding by the scheduler
    /// in the audit log, and is bound (no lost pod).
    pub async fn assert_bound_once(&self, names: &[String]) -> support::Result<()> {
        let all = pods(&self.admin, &self.ns).await?;
        let counts = self.server.audit()?.by_user(SCHEDULER_USER).binding_counts();
        let mut bad = Vec::new();
        for n in names {
            let c = counts.get(&(self.ns.clone(), n.clone())).copied().unwrap_or_default();
            let node = all.get(n).map(node_of).unwrap_or("<missing>");
            if c.succeeded != 1 || node.is_empty() || node == "<missing>" {
                bad.push(format!("{n}: {c:?} on {node:?}"));
            }
        }
        if bad.is_empty() {
            Ok(())
        } else {
            Err(format!("pods not bound exactly once: {bad:?}\n{}", self.log_tails(15)).into())
        }
    }

    /// No over-commit: on every node of the pool, the cpu requests of the namespace's bound
    /// pods fit the node's allocatable.
    pub async fn assert_fit(&self) -> support::Result<()> {
        let mut used: BTreeMap<String, i64> = BTreeMap::new();
        for p in pods(&self.admin, &self.ns).await?.values() {
            let node = node_of(p);
            if node.is_empty() {
                continue;
            }
            let cpu: i64 = p
                .spec
                .as_ref()
                .map(|s| {
                    s.containers
                        .iter()
                        .filter_map(|c| c.resources.as_ref()?.requests.as_ref()?.get("cpu").map(|q| milli(&q.0)))
                        .sum()
                })
                .unwrap_or(0);
            *used.entry(node.to_string()).or_default() += cpu;
        }
        for (node, cpu) in &used {
            assert!(*cpu <= self.node_cpu, "node {node} over-committed: {cpu}m of {}m", self.node_cpu);
        }
        Ok(())
    }

    /// The last `n` lines of every scheduler's log.
    pub fn log_tails(&self, n: usize) -> String {
        let mut out = String::new();
        for p in &self.schedulers {
            let text = p.log_text();
            let lines: Vec<&str> = text.lines().collect();
            out.push_str(&format!("--- {} (last {n} lines)\n", p.log.display()));
            out.push_str(&lines[lines.len().saturating_sub(n)..].join("\n"));
            out.push('\n');
        }
        out
    }

    /// Every scheduler still running (none exited or crashed).
    pub fn assert_running(&mut self) {
        let tails = self.log_tails(30);
        for p in &mut self.schedulers {
            assert!(p.running(), "scheduler {} exited:\n{tails}", p.log.display());
        }
    }
}

/// Deletes the pods and PodGroups earlier rigs on the same server left (pods of a `fault-*`
/// scheduler, the PodGroups of [`RIG_NAMESPACES`]): bound pods of other schedulers count in
/// their PodGroup's queue as they do in Volcano, so leftovers would eat the default queue's share
/// of the next test.
async fn sweep(admin: &Client) -> support::Result<()> {
    use basalt_runtime::crd::PodGroup;
    use k8s_openapi::api::core::v1::Pod;
    use kube::api::{DeleteParams, ListParams};
    use kube::Api;
    let now = DeleteParams { grace_period_seconds: Some(0), ..Default::default() };
    for p in Api::<Pod>::all(admin.clone()).list(&ListParams::default()).await?.items {
        let ours = p.spec.as_ref().and_then(|s| s.scheduler_name.as_deref()).is_some_and(|n| n.starts_with("fault-"));
        if let (true, Some(ns)) = (ours, p.namespace()) {
            match Api::<Pod>::namespaced(admin.clone(), &ns).delete(&p.name_any(), &now).await {
                Ok(_) => {}
                Err(kube::Error::Api(s)) if s.code == 404 => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
    let rig_namespaces = RIG_NAMESPACES.lock().map_err(|e| format!("rig namespaces: {e}"))?.clone();
    for g in Api::<PodGroup>::all(admin.clone()).list(&ListParams::default()).await?.items {
        if let Some(ns) = g.namespace().filter(|ns| rig_namespaces.contains(ns)) {
            match Api::<PodGroup>::namespaced(admin.clone(), &ns).delete(&g.name_any(), &now).await {
                Ok(_) => {}
                Err(kube::Error::Api(s)) if s.code == 404 => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
    Ok(())
}
