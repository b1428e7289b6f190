//! [`ControllerStack`]: the world of the controller tests (`controller`, `controller_burst`,
//! `job_plugins`, `podgroup_queue_controllers`, `vcctl`): a server of the test's own with
//! `deploy/`'s CRDs, the scheduler's and the controller's identities and ClusterRoles, a node
//! pool, optionally the test kubelet running the pods, `basalt scheduler` and
//! `basalt controller` as child processes; plus what every such test checks at its end (no
//! request of the controller outside its ClusterRole, both processes exit 0 on SIGTERM, the
//! kubelet saw no error).

use super::nodes;
use super::process::SchedulerProcess;
use crate::support::{self, apply_manifest, apply_scheduler_rbac, deploy_dir, install_volcano_crds, Kubelet, TestApiserver};
use kube::Client;

/// The controller's ServiceAccount user in the test apiserver (`deploy/controller.yaml`).
pub const CONTROLLER_USER: &str = "system:serviceaccount:volcano-system:volcano-controllers";

/// The client rate most stacks give the controller (`--kube-api-qps` and `--kube-api-burst`):
/// one the tests' handfuls of Jobs do not wait on.
pub const QPS: u32 = 200;

/// What [`ControllerStack::start`] builds.
pub struct StackSpec<'a> {
    /// Nodes `node-{i}` created, each with `cpu`, `memory` and 110 pods allocatable.
    pub nodes: usize,
    /// Per-node cpu (a quantity, e.g. `"8"`).
    pub cpu: &'a str,
    /// Per-node memory (a quantity, e.g. `"32Gi"`).
    pub memory: &'a str,
    /// The scheduler's `--schedule-period` (e.g. `"500ms"`).
    pub schedule_period: &'a str,
    /// Whether the test kubelet runs the bound pods (Jobs need it to complete).
    pub kubelet: bool,
    /// The controller's `--kube-api-qps` and `--kube-api-burst` (e.g. [`QPS`]).
    pub qps: u32,
    /// The controller's other flags, after `--leader-elect=false` and the client rate (a flag
    /// may be given once: these must not repeat those).
    pub controller_args: &'a [String],
}

/// A running controller stack; its processes are killed and the server stopped on drop.
pub struct ControllerStack {
    /// The dedicated server (its folder holds the logs and the audit log).
    pub server: TestApiserver,
    /// An admin client.
    pub admin: Client,
    /// `basalt scheduler` (log `scheduler.log`).
    pub scheduler: SchedulerProcess,
    /// `basalt controller` (log `controller.log`, or the name given to the last
    /// [`ControllerStack::restart_controller`]).
    pub controller: SchedulerProcess,
    kubelet: Option<Kubelet>,
    qps: u32,
}

impl ControllerStack {
    /// Starts a server, installs the CRDs and both RBAC sets, creates the node pool, starts the
    /// kubelet (if asked), the scheduler (`--leader-elect=false`) and the controller.
    pub async fn start(spec: StackSpec<'_>) -> support::Result<ControllerStack> {
        let server = TestApiserver::start()?;
        let admin = server.admin_client().await?;
        install_volcano_crds(&admin).await?;
        apply_scheduler_rbac(&admin).await?;
        apply_manifest(&admin, &deploy_dir().join("controller.yaml"), &["ServiceAccount", "ClusterRole", "ClusterRoleBinding"])
            .await?;
        nodes(&admin, "node", spec.nodes, spec.cpu, spec.memory).await?;
        let kubelet = spec.kubelet.then(|| Kubelet::start(admin.clone(), None));
        let period = format!("--schedule-period={}", spec.schedule_period);
        let scheduler = SchedulerProcess::start(
            server.dir(),
            "scheduler",
            &server.scheduler_kubeconfig(),
            &["--leader-elect=false", &period],
        )?;
        let controller = start_controller(&server, "controller", spec.qps, spec.controller_args)?;
        Ok(ControllerStack { server, admin, scheduler, controller, kubelet, qps: spec.qps })
    }

    /// Kills the controller (SIGKILL: no chance to finish anything) and starts a new one logging
    /// to `{log_name}.log` with the stack's client rate and `args`.
    pub fn restart_controller(&mut self, log_name: &str, args: &[String]) -> support::Result<()> {
        self.controller.kill();
        self.controller = start_controller(&self.server, log_name, self.qps, args)?;
        Ok(())
    }

    /// The controller's requests the server refused as outside its ClusterRole (403), as
    /// `verb uri`, leaving out those `expected` accepts.
    pub fn refused_except(&self, expected: impl Fn(&support::AuditEvent) -> bool) -> support::Result<Vec<String>> {
        Ok(self
            .server
            .audit()?
            .by_user(CONTROLLER_USER)
            .events()
            .iter()
            .filter(|e| e.code == 403 && !expected(e))
            .map(|e| format!("{} {}", e.verb, e.request_uri))
            .collect())
    }

    /// Panics when the controller made a request outside `deploy/controller.yaml`'s ClusterRole.
    pub fn assert_within_role(&self) -> support::Result<()> {
        let refused = self.refused_except(|_| false)?;
        assert!(refused.is_empty(), "requests outside deploy/controller.yaml's ClusterRole: {refused:?}");
        Ok(())
    }

    /// Stops the stack: SIGTERM to the controller and the scheduler, each must exit 0 (the
    /// controller's log tail of `tail` lines in the message otherwise), then the kubelet, which
    /// must have seen no error.
    pub async fn stop(mut self, tail: usize) -> support::Result<()> {
        let log = log_tail(&self.controller.log_text(), tail);
        assert_eq!(self.controller.terminate(), Some(0), "controller log:\n{log}");
        assert_eq!(self.scheduler.terminate(), Some(0), "scheduler log:\n{}", log_tail(&self.scheduler.log_text(), tail));
        if let Some(k) = self.kubelet.take() {
            let errors = k.stop().await;
            assert!(errors.is_empty(), "kubelet errors: {errors:?}");
        }
        Ok(())
    }
}

/// Starts `basalt controller` on `server` with the controllers' kubeconfig, logging to
/// `{log_name}.log`: one process (`--leader-elect=false`), `qps` as its client rate, then `args`.
fn start_controller(server: &TestApiserver, log_name: &str, qps: u32, args: &[String]) -> support::Result<SchedulerProcess> {
    let rate = [format!("--kube-api-qps={qps}"), format!("--kube-api-burst={qps}")];
    let all: Vec<&str> = std::iter::once("--leader-elect=false").chain(rate.iter().chain(args).map(String::as_str)).collect();
    Ok(SchedulerProcess::start_command("controller", server.dir(), log_name, &server.controllers_kubeconfig(), &all)?)
}

/// The last `lines` lines of `text`.
pub fn log_tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}
