//! `basalt scheduler` as a child process of the bench: started with the RBAC-restricted
//! scheduler kubeconfig, its log to a file, stopped with SIGTERM (as a Deployment's pod is) and
//! killed if it does not exit; killed as well when the bench fails and drops it.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::process::{Child, Command};

/// A running `basalt scheduler`.
pub struct SchedulerChild {
    child: Child,
    pid: u32,
    /// When it was spawned.
    pub started: Instant,
}

impl SchedulerChild {
    /// Starts `basalt scheduler --kubeconfig KUBECONFIG --leader-elect=false --schedule-period=1s`
    /// plus `extra` flags, stderr and stdout appended to `log`, with `RUST_LOG` = `rust_log`.
    /// Errors: the binary cannot be started or the log not created (path named).
    pub fn start(
        basalt: &Path,
        kubeconfig: &Path,
        extra: &[String],
        log: &Path,
        rust_log: &str,
    ) -> Result<SchedulerChild, String> {
        let out = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
        let err = out.try_clone().map_err(|e| format!("{}: {e}", log.display()))?;
        let started = Instant::now();
        let child = Command::new(basalt)
            .arg("scheduler")
            .arg(format!("--kubeconfig={}", kubeconfig.display()))
            .arg("--leader-elect=false")
            .arg("--schedule-period=1s")
            .args(extra)
            .env("RUST_LOG", rust_log)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("starting {} scheduler: {e}", basalt.display()))?;
        let pid = child.id().ok_or("the scheduler exited at once")?;
        Ok(SchedulerChild { child, pid, started })
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Exited already? (with its status).
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Sends SIGTERM and waits up to `grace` for the exit (SIGKILL after). Returns the exit
    /// status. Errors: `kill` could not be run or the wait failed.
    pub async fn terminate(mut self, grace: Duration) -> Result<std::process::ExitStatus, String> {
        if let Some(status) = self.exited() {
            return Ok(status);
        }
        let sent = std::process::Command::new("kill")
            .args(["-TERM", &self.pid.to_string()])
            .status()
            .map_err(|e| format!("running kill -TERM {}: {e}", self.pid))?;
        if !sent.success() {
            return Err(format!("kill -TERM {} failed ({sent})", self.pid));
        }
        match tokio::time::timeout(grace, self.child.wait()).await {
            Ok(r) => r.map_err(|e| format!("waiting for the scheduler: {e}")),
            Err(_) => {
                eprintln!("live_bench: the scheduler did not exit {grace:?} after SIGTERM; killing it");
                let _ = self.child.kill().await;
                self.child.wait().await.map_err(|e| format!("waiting for the scheduler: {e}"))
            }
        }
    }
}
