//! The process runner the long-running commands share (`basalt scheduler` in
//! [`crate::live::runner`], `basalt controller` in [`crate::controller::run`]), from start to
//! signal: [`Process::start`] (the identity, the Lease configuration from the leader-election
//! flags, the API client), [`Process::serve`] (`/metrics` and `/healthz`), [`Process::lead`]
//! (the Lease, or leading at once with `--leader-elect=false`), [`until_stopped`] (SIGTERM/SIGINT
//! or the lease lost) and [`Process::shutdown`] (the Lease released as client-go's
//! `ReleaseOnCancel`, the HTTP servers stopped). What each command runs between start and stop
//! stays with it. The exit codes are the same for both.

use super::client::{api_client, lease_config, serve, wait_for_signal, ElectionFlags, Endpoints};
use super::http::HttpServer;
use super::leader::{self, LeaderConfig, LeaderError, Leadership};
use kube::Client;
use std::future::Future;

/// Exit code: stopped by a signal (after draining, for the scheduler).
pub const EXIT_OK: u8 = 0;
/// Exit code: a fatal runtime error (no API server, lost leadership, a port in use).
pub const EXIT_FATAL: u8 = 1;
/// Exit code: a flag (or the scheduler's conf) is invalid.
pub const EXIT_BAD_INPUT: u8 = 2;

/// What [`Process::start`] needs from the command line.
pub struct ProcessFlags<'a> {
    /// `--kubeconfig` (empty: in-cluster, then the usual lookup).
    pub kubeconfig: &'a str,
    /// `--master` (empty: the kubeconfig's server).
    pub master: &'a str,
    /// The process name in the `User-Agent` (`basalt-scheduler`, `basalt-controller`).
    pub component: &'a str,
    /// The leader-election flags.
    pub election: ElectionFlags<'a>,
}

/// A started process: who it is, its Lease and its API client; plus the HTTP servers once
/// [`Process::serve`] started them.
pub struct Process {
    /// The candidate identity in the Lease (`<hostname>_<uuid>`, as client-go's).
    pub identity: String,
    /// The Lease configuration (checked when `--leader-elect` is on).
    pub lease: LeaderConfig,
    /// The API client.
    pub client: Client,
    elect: bool,
    http: Option<(tokio::sync::watch::Sender<bool>, Vec<HttpServer>)>,
}

impl Process {
    /// The identity, the Lease configuration and the API client, in that order.
    ///
    /// Errors: the message is printed as `error: …` and the exit code returned:
    /// [`EXIT_BAD_INPUT`] for election flags that break client-go's rules or a lock other than
    /// `leases`, [`EXIT_FATAL`] for no hostname or a client that cannot be built (kubeconfig
    /// unreadable, TLS material missing).
    pub async fn start(f: &ProcessFlags<'_>) -> Result<Process, u8> {
        let identity = leader::default_identity().map_err(|e| fail(e, EXIT_FATAL))?;
        let lease = lease_config(&f.election, &identity).map_err(|e| fail(e, EXIT_BAD_INPUT))?;
        let client = api_client(f.kubeconfig, f.master, f.component, &identity).await.map_err(|e| fail(e, EXIT_FATAL))?;
        Ok(Process { identity, lease, client, elect: f.election.elect, http: None })
    }

    /// Starts the [`Endpoints`] asked for; they serve until [`Process::shutdown`].
    ///
    /// Errors: an address that does not parse or cannot be bound, printed naming the flag;
    /// returns [`EXIT_FATAL`].
    pub async fn serve(&mut self, endpoints: Endpoints) -> Result<(), u8> {
        let (tx, rx) = tokio::sync::watch::channel(false);
        let servers = serve(endpoints, rx).await.map_err(|e| fail(e, EXIT_FATAL))?;
        self.http = Some((tx, servers));
        Ok(())
    }

    /// Leadership: the Lease acquired (waits while another identity holds it), or
    /// [`Leadership::unelected`] at once with `--leader-elect=false`.
    ///
    /// Errors: the Lease cannot be read or written for a reason other than a conflict.
    pub async fn lead(&self) -> Result<Leadership, LeaderError> {
        if self.elect {
            leader::acquire(self.client.clone(), self.lease.clone()).await
        } else {
            Ok(Leadership::unelected())
        }
    }

    /// Releases `leadership` (when held) and stops the HTTP servers.
    pub async fn shutdown(mut self, leadership: Option<Leadership>) {
        if let Some(l) = leadership {
            l.release().await;
        }
        if let Some((tx, servers)) = self.http.take() {
            let _ = tx.send(true);
            drop(servers);
        }
    }
}

/// Why a process stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// SIGTERM or SIGINT: exit [`EXIT_OK`].
    Signal,
    /// The leader lease was lost (`lost` resolved): exit [`EXIT_FATAL`], as Volcano's
    /// processes exit when they stop leading.
    LostLease,
}

impl Stop {
    /// The exit code for this stop.
    pub fn code(self) -> u8 {
        match self {
            Stop::Signal => EXIT_OK,
            Stop::LostLease => EXIT_FATAL,
        }
    }
}

/// Waits for a stop signal or for `lost` ([`Leadership::lost`]), whichever comes first.
pub async fn until_stopped(lost: impl Future<Output = ()>) -> Stop {
    tokio::select! {
        _ = wait_for_signal() => Stop::Signal,
        _ = lost => Stop::LostLease,
    }
}

/// Prints `error: {e}` and returns `code`.
fn fail(e: impl std::fmt::Display, code: u8) -> u8 {
    eprintln!("error: {e}");
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_stop_has_its_exit_code() {
        assert_eq!(Stop::Signal.code(), EXIT_OK);
        assert_eq!(Stop::LostLease.code(), EXIT_FATAL);
    }

    #[tokio::test]
    async fn a_lost_lease_stops_the_process() {
        assert_eq!(until_stopped(std::future::ready(())).await, Stop::LostLease);
    }

    #[tokio::test]
    async fn bad_election_flags_are_bad_input() {
        let f = ProcessFlags {
            kubeconfig: "/nonexistent/kubeconfig",
            master: "",
            component: "basalt-test",
            election: ElectionFlags {
                elect: true,
                resource_lock: "configmaps",
                namespace: "volcano-system".into(),
                name: "volcano".into(),
                lease_duration: std::time::Duration::from_secs(15),
                renew_deadline: std::time::Duration::from_secs(10),
                retry_period: std::time::Duration::from_secs(2),
            },
        };
        assert_eq!(Process::start(&f).await.err(), Some(EXIT_BAD_INPUT));
        let f = ProcessFlags { election: ElectionFlags { resource_lock: "leases", ..f.election }, ..f };
        assert_eq!(Process::start(&f).await.err(), Some(EXIT_FATAL), "an unreadable kubeconfig is fatal");
    }
}
