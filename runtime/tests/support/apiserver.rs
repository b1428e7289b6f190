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
///   ([`TestApiserver::controllers_kubeconfig`]);
/// * the webhook manager: `system:serviceaccount:volcano-system:volcano-admission`
///   ([`TestApiserver::admission_kubeconfig`]).
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
        TestApiserver::start_with(&[])
    }

    /// As [`TestApiserver::start`], with `flags` added to kube-apiserver's command line (e.g.
    /// `--watch-cache=false`, so watches are served by etcd and a compacted revision gives a real
    /// `410 Gone`). Errors: as [`TestApiserver::start`].
    pub fn start_with(flags: &[&str]) -> Result<TestApiserver> {
        let binary = build()?;
        let dir = instance_dir();
        let mut start = Command::new(script("start.sh"));
        start.arg(&dir).arg("--owner-pid").arg(std::process::id().to_string());
        if std::env::var(KEEP_ENV).as_deref() != Ok("1") {
            start.arg("--remove-on-exit");
        }
        let out = start
            .env("BASALT_KUBE_APISERVER", &binary)
            .env("BASALT_APISERVER_FLAGS", flags.join(" "))
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

    /// Kubeconfig of `system:serviceaccount:volcano-system:volcano-admission` (what
    /// `basalt webhook-manager` runs with; allowed nothing until `deploy/admission.yaml`'s RBAC
    /// is applied).
    pub fn admission_kubeconfig(&self) -> PathBuf {
        self.dir.join("admission.kubeconfig")
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

    /// Stops kube-apiserver (SIGTERM, SIGKILL after 10 s) and keeps etcd running; returns what
    /// [`TestApiserver::restart_kube_apiserver`] needs to start it again with the same command
    /// line. Clients see refused connections meanwhile. Errors: the pid file or the process's
    /// command line cannot be read.
    pub fn stop_kube_apiserver(&self) -> Result<StoppedApiserver> {
        let pid = self.kube_apiserver_pid()?;
        let cmdline = read_cmdline(pid)?;
        let _ = Command::new("kill").arg("-TERM").arg(pid.to_string()).status();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while alive(pid) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        if alive(pid) {
            let _ = Command::new("kill").arg("-KILL").arg(pid.to_string()).status();
        }
        Ok(StoppedApiserver { cmdline })
    }

    /// Starts kube-apiserver again as it was before [`TestApiserver::stop_kube_apiserver`] (same
    /// port, certificates, etcd; its log appended to `kube-apiserver.log`) and waits until
    /// `/readyz` answers `ok`. Blocking. Errors: it does not start or not become ready in 60 s.
    pub fn restart_kube_apiserver(&self, stopped: StoppedApiserver) -> Result<()> {
        let log = std::fs::OpenOptions::new().append(true).create(true).open(self.dir.join("kube-apiserver.log"))?;
        let (program, args) = stopped.cmdline.split_first().ok_or("empty kube-apiserver command line")?;
        let child = Command::new(program)
            .args(args)
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .map_err(|e| format!("restarting {program}: {e}"))?;
        std::fs::write(self.dir.join("kube-apiserver.pid"), format!("{}\n", child.id()))?;
        let token = self.admin_token()?;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            let out = Command::new("curl")
                .args(["-s", "--max-time", "2", "--cacert"])
                .arg(self.ca_path())
                .arg("-H")
                .arg(format!("Authorization: Bearer {token}"))
                .arg(format!("{}/readyz", self.server))
                .output()?;
            if String::from_utf8_lossy(&out.stdout).trim() == "ok" {
                return Ok(());
            }
            if std::time::Instant::now() > deadline {
                return Err(format!("kube-apiserver at {} not ready 60 s after its restart", self.server).into());
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }

    /// etcd's client URL (`http://127.0.0.1:PORT`), read from kube-apiserver's
    /// `--etcd-servers` flag. Errors: the process or the flag cannot be read.
    pub fn etcd_url(&self) -> Result<String> {
        let cmdline = read_cmdline(self.kube_apiserver_pid()?)?;
        cmdline
            .iter()
            .find_map(|a| a.strip_prefix("--etcd-servers=").map(str::to_string))
            .ok_or_else(|| "kube-apiserver has no --etcd-servers flag".into())
    }

    /// Compacts etcd's history up to its current revision (etcd's JSON gateway:
    /// `/v3/kv/range` for the revision, then `/v3/kv/compaction`, physical) and returns that
    /// revision: any watch that resumes from an older resourceVersion then fails with `410 Gone`
    /// (when the server runs with `--watch-cache=false`; the watch cache keeps its own window).
    /// Errors: etcd unreachable or an unexpected answer.
    pub fn compact_etcd(&self) -> Result<u64> {
        let url = self.etcd_url()?;
        let post = |path: &str, body: &str| -> Result<serde_json::Value> {
            let out = Command::new("curl")
                .args(["-s", "--max-time", "10", "-X", "POST", "-d", body])
                .arg(format!("{url}{path}"))
                .output()
                .map_err(|e| format!("curl {url}{path}: {e}"))?;
            let text = String::from_utf8_lossy(&out.stdout).to_string();
            serde_json::from_str(&text).map_err(|e| format!("etcd {path}: {e}: {text:?}").into())
        };
        let range = post("/v3/kv/range", r#"{"key":"AA=="}"#)?;
        let revision: u64 = range["header"]["revision"]
            .as_str()
            .and_then(|r| r.parse().ok())
            .ok_or_else(|| format!("etcd /v3/kv/range: no header.revision in {range}"))?;
        let done = post("/v3/kv/compaction", &format!(r#"{{"revision":"{revision}","physical":true}}"#))?;
        if done.get("error").is_some() {
            return Err(format!("etcd compaction at {revision}: {done}").into());
        }
        Ok(revision)
    }

    fn kube_apiserver_pid(&self) -> Result<u32> {
        let path = self.dir.join("kube-apiserver.pid");
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(text.trim().parse().map_err(|e| format!("{}: {e}", path.display()))?)
    }

    fn admin_token(&self) -> Result<String> {
        let path = self.dir.join("tokens.csv");
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        text.lines()
            .find(|l| l.split(',').nth(1) == Some("admin"))
            .and_then(|l| l.split(',').next())
            .map(str::to_string)
            .ok_or_else(|| format!("{}: no admin token", path.display()).into())
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

/// A kube-apiserver stopped by [`TestApiserver::stop_kube_apiserver`]: its command line.
#[derive(Debug)]
pub struct StoppedApiserver {
    cmdline: Vec<String>,
}

fn read_cmdline(pid: u32) -> Result<Vec<String>> {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).map_err(|e| format!("/proc/{pid}/cmdline: {e}"))?;
    Ok(raw.split(|b| *b == 0).filter(|a| !a.is_empty()).map(|a| String::from_utf8_lossy(a).to_string()).collect())
}

/// The process exists and is not a zombie.
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with('Z')),
        Err(_) => false,
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
