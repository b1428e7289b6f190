//! [`TestApiserver`]: a real etcd + kube-apiserver v1.20.2 on loopback, started by
//! `tests/apiserver/start.sh` (kubernetes-api.md §9).

use super::{AuditLog, Result};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

/// Set to `1` to keep an instance's folder (logs, audit log, kubeconfigs) after it stops.
pub const KEEP_ENV: &str = "BASALT_TEST_KEEP";

/// One running etcd + kube-apiserver (RBAC authorization, token authentication, audit log at
/// level Metadata), in its own temporary folder with free loopback ports.
///
/// Identities (static bearer tokens, see `start.sh`):
/// * admin: user `admin`, group `system:masters` ([`TestApiserver::admin_kubeconfig`]);
/// * the scheduler: `system:serviceaccount:volcano-system:volcano-scheduler`
///   ([`TestApiserver::scheduler_kubeconfig`]), allowed nothing until RBAC is applied
///   ([`super::apply_scheduler_rbac`]);
/// * the controllers: `system:serviceaccount:volcano-system:volcano-controllers`
///   ([`TestApiserver::controllers_kubeconfig`]).
///
/// Differences from a full cluster (§9): no kubelet (use [`super::Kubelet`]), no controllers
/// (no garbage collection, namespaces never finish terminating, new Nodes keep the
/// `node.kubernetes.io/not-ready:NoSchedule` taint unless removed: [`super::create_node`] does),
/// the 1.20 API surface.
///
/// Dropping it stops both processes and deletes the folder (unless `BASALT_TEST_KEEP=1`). A
/// watchdog started with it also stops it when the test process exits without dropping it (the
/// [`TestApiserver::shared`] instance, a killed test).
#[derive(Debug)]
pub struct TestApiserver {
    dir: PathBuf,
    server: String,
    stopped: bool,
}

static SHARED: OnceLock<std::result::Result<TestApiserver, String>> = OnceLock::new();
static INSTANCE: AtomicU32 = AtomicU32::new(0);

impl TestApiserver {
    /// Builds the server if it is not cached yet (`build.sh`: minutes, once per machine, never
    /// skipped), then starts a fresh instance (about 4 s) and waits until `/readyz` answers `ok`.
    ///
    /// Blocking (runs the scripts as child processes); fine to call inside a `#[tokio::test]`.
    /// Errors: the build or the start failed (the scripts' stderr, which is passed through, says
    /// why; the instance folder is kept then).
    pub fn start() -> Result<TestApiserver> {
        let binary = build()?;
        let dir = instance_dir();
        let mut start = Command::new(script("start.sh"));
        start.arg(&dir).arg("--owner-pid").arg(std::process::id().to_string());
        if std::env::var(KEEP_ENV).as_deref() != Ok("1") {
            start.arg("--remove-on-exit");
        }
        let out = start
            .env("BASALT_KUBE_APISERVER", &binary)
            .stdin(Stdio::null())
            .stderr(Stdio::inherit())
            .output()
            .map_err(|e| format!("running {}: {e}", script("start.sh").display()))?;
        if !out.status.success() {
            return Err(format!("start.sh {} failed ({}); logs kept in that folder", dir.display(), out.status).into());
        }
        let server = std::fs::read_to_string(dir.join("server"))
            .map_err(|e| format!("{}: {e}", dir.join("server").display()))?
            .trim()
            .to_string();
        Ok(TestApiserver { dir, server, stopped: false })
    }

    /// One instance per test binary, started on first use and shared by every test in it (they
    /// must not interfere: separate namespaces via [`super::fresh_namespace`]; cluster-scoped
    /// objects such as Nodes and Queues are seen by all of them). Never dropped: the watchdog
    /// stops it and removes its folder when the test process exits.
    ///
    /// Errors: as [`TestApiserver::start`]; a failed start is remembered, later calls return the
    /// same error.
    pub fn shared() -> Result<&'static TestApiserver> {
        match SHARED.get_or_init(|| TestApiserver::start().map_err(|e| e.to_string())) {
            Ok(server) => Ok(server),
            Err(e) => Err(format!("the shared test apiserver did not start: {e}").into()),
        }
    }

    /// The instance's folder (certificates, kubeconfigs, `audit.log`, `kube-apiserver.log`,
    /// `etcd.log`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `https://127.0.0.1:PORT`.
    pub fn server_url(&self) -> &str {
        &self.server
    }

    /// The CA certificate (PEM) that signed the serving certificate.
    pub fn ca_path(&self) -> PathBuf {
        self.dir.join("ca.crt")
    }

    /// Kubeconfig of user `admin` (group `system:masters`).
    pub fn admin_kubeconfig(&self) -> PathBuf {
        self.dir.join("admin.kubeconfig")
    }

    /// Kubeconfig of `system:serviceaccount:volcano-system:volcano-scheduler`: what a scheduler
    /// under test (`basalt scheduler`) runs with, `KUBECONFIG=<this>`.
    pub fn scheduler_kubeconfig(&self) -> PathBuf {
        self.dir.join("scheduler.kubeconfig")
    }

    /// Kubeconfig of `system:serviceaccount:volcano-system:volcano-controllers`.
    pub fn controllers_kubeconfig(&self) -> PathBuf {
        self.dir.join("controllers.kubeconfig")
    }

    /// A new admin client. Make one per tokio runtime (each `#[tokio::test]` has its own): a
    /// client's connections belong to the runtime it was first used in.
    pub async fn admin_client(&self) -> Result<Client> {
        client_from_kubeconfig(&self.admin_kubeconfig()).await
    }

    /// A new client with the scheduler's identity (see [`TestApiserver::admin_client`]).
    pub async fn scheduler_client(&self) -> Result<Client> {
        client_from_kubeconfig(&self.scheduler_kubeconfig()).await
    }

    /// A new client with the controllers' identity (see [`TestApiserver::admin_client`]).
    pub async fn controllers_client(&self) -> Result<Client> {
        client_from_kubeconfig(&self.controllers_kubeconfig()).await
    }

    /// Path of the audit log: one JSON `audit.k8s.io/v1` Event per request, written (blocking
    /// mode) before the response is sent.
    pub fn audit_log_path(&self) -> PathBuf {
        self.dir.join("audit.log")
    }

    /// The audit log as it is now.
    pub fn audit(&self) -> Result<AuditLog> {
        AuditLog::read(&self.audit_log_path())
    }

    /// Stops both processes now and removes the folder (as dropping does).
    pub fn stop(mut self) -> Result<()> {
        self.stop_inner()
    }

    fn stop_inner(&mut self) -> Result<()> {
        if self.stopped {
            return Ok(());
        }
        self.stopped = true;
        let status = Command::new(script("stop.sh"))
            .arg(&self.dir)
            .stdin(Stdio::null())
            .status()
            .map_err(|e| format!("running stop.sh: {e}"))?;
        if !status.success() {
            return Err(format!("stop.sh {} failed ({status})", self.dir.display()).into());
        }
        if std::env::var(KEEP_ENV).as_deref() == Ok("1") {
            eprintln!("test apiserver: kept {}", self.dir.display());
        } else {
            std::fs::remove_dir_all(&self.dir).map_err(|e| format!("removing {}: {e}", self.dir.display()))?;
        }
        Ok(())
    }
}

impl Drop for TestApiserver {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("test apiserver at {}: logs in {} (set {KEEP_ENV}=1 to keep them)", self.server, self.dir.display());
        }
        if let Err(e) = self.stop_inner() {
            eprintln!("test apiserver: {e}");
        }
    }
}

/// A client for the kubeconfig at `path` (its current context).
pub async fn client_from_kubeconfig(path: &Path) -> Result<Client> {
    let kubeconfig = Kubeconfig::read_from(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default()).await?;
    Ok(Client::try_from(config)?)
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/apiserver").join(name)
}

/// Runs `build.sh` (a no-op when the binary is cached; builds under a lock otherwise) and
/// returns the binary's path.
fn build() -> Result<PathBuf> {
    let out = Command::new(script("build.sh"))
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("running {}: {e}", script("build.sh").display()))?;
    if !out.status.success() {
        return Err(format!("{} failed ({}): see its output above", script("build.sh").display(), out.status).into());
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    match stdout.lines().last() {
        Some(path) if !path.trim().is_empty() => Ok(PathBuf::from(path.trim())),
        _ => Err("build.sh printed no binary path".into()),
    }
}

fn instance_dir() -> PathBuf {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    let n = INSTANCE.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("basalt-apiserver-{}-{n}-{nanos:08x}", std::process::id()))
}
