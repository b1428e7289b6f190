//! `basalt scheduler` as a child process of a test, with its log in the server's folder.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// A running `basalt scheduler`; killed on drop.
pub struct SchedulerProcess {
    child: Option<Child>,
    /// Its stderr log.
    pub log: PathBuf,
}

impl SchedulerProcess {
    /// Starts `basalt scheduler --kubeconfig KUBECONFIG ARGS…` logging to `DIR/NAME.log`.
    pub fn start(dir: &Path, name: &str, kubeconfig: &Path, args: &[&str]) -> std::io::Result<SchedulerProcess> {
        Self::start_command("scheduler", dir, name, kubeconfig, args)
    }

    /// Starts `basalt SUBCOMMAND --kubeconfig KUBECONFIG ARGS…` (e.g. `controller`) logging to
    /// `DIR/NAME.log`.
    pub fn start_command(
        subcommand: &str,
        dir: &Path,
        name: &str,
        kubeconfig: &Path,
        args: &[&str],
    ) -> std::io::Result<SchedulerProcess> {
        let log = dir.join(format!("{name}.log"));
        let err = std::fs::File::create(&log)?;
        let child = Command::new(env!("CARGO_BIN_EXE_basalt"))
            .arg(subcommand)
            .arg(format!("--kubeconfig={}", kubeconfig.display()))
            .args(args)
            .env("RUST_LOG", "basalt_runtime=debug,warn")
            .stdout(Stdio::null())
            .stderr(err)
            .spawn()?;
        Ok(SchedulerProcess { child: Some(child), log })
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map(|c| c.id()).unwrap_or(0)
    }

    /// SIGKILL, no chance to finish anything.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// SIGTERM, then waits for the exit; returns the exit code.
    pub fn terminate(&mut self) -> Option<i32> {
        let mut c = self.child.take()?;
        let _ = Command::new("kill").arg("-TERM").arg(c.id().to_string()).status();
        let status = c.wait().ok()?;
        status.code()
    }

    /// Waits for the process to exit by itself; returns the exit code.
    pub fn wait(&mut self) -> Option<i32> {
        let mut c = self.child.take()?;
        c.wait().ok()?.code()
    }

    /// Whether it is still running.
    pub fn running(&mut self) -> bool {
        match self.child.as_mut() {
            Some(c) => matches!(c.try_wait(), Ok(None)),
            None => false,
        }
    }

    /// The log so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for SchedulerProcess {
    fn drop(&mut self) {
        self.kill();
    }
}
