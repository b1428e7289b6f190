//! The `vcctl` command line (clap derive): Volcano's command tree, flags and messages
//! (volcano-behaviour.md §8.2; Volcano's `cmd/cli`): `vcctl job run|list|view|suspend|resume|
//! delete`, `vcctl queue create|delete|operate|list|get`, `vcctl version`, and the shorthand
//! binaries `vsub`, `vjobs`, `vqueues`, `vcancel`, `vsuspend`, `vresume` both as subcommands
//! (`vcctl vsub …`) and by name: the binary started through a link called `vsub` behaves as
//! `vsub` ([`args_for`]).
//!
//! Arguments become an [`Action`] first (so a missing name is reported without a cluster), then
//! the API client is built ([`crate::vcctl::config`]) and the action runs
//! ([`crate::vcctl::job`], [`crate::vcctl::queue`]). Results go to stdout as Volcano prints them;
//! a failure prints Volcano's `Failed to <command path>: <error>` (on stderr, where Volcano
//! uses stdout) and exits with [`EXIT_FAILED`], Volcano's `os.Exit(-1)`.

pub mod job_args;
pub mod queue_args;
pub mod shorthand_args;

use crate::plumbing::client::block_on;
use crate::vcctl::{self, job::ListOptions, job::RunOptions, queue::Operation};
use clap::{Args, Parser, Subcommand};
use std::ffi::OsString;
use std::path::Path;
use std::process::ExitCode;

/// Exit code of a failed command: 255, what Volcano's `os.Exit(-1)` gives (clap's usage errors
/// exit with 2).
pub const EXIT_FAILED: u8 = 255;

/// The shorthand binaries of Volcano that `vcctl` also is, by the name it is started as.
pub const SHORTHANDS: &[&str] = &["vsub", "vjobs", "vqueues", "vcancel", "vsuspend", "vresume"];

/// `vcctl`.
#[derive(Debug, Parser)]
#[command(name = "vcctl", about = "vcctl: Volcano's command line, from Basalt")]
pub struct VcctlCli {
    /// The subcommand.
    #[command(subcommand)]
    pub command: VcctlCommand,
}

/// `vcctl`'s subcommands.
#[derive(Debug, Subcommand)]
pub enum VcctlCommand {
    /// vcctl command line operation job
    Job {
        /// The job subcommand.
        #[command(subcommand)]
        command: job_args::JobCommand,
    },
    /// Queue Operations
    Queue {
        /// The queue subcommand.
        #[command(subcommand)]
        command: queue_args::QueueCommand,
    },
    /// Print the version information
    Version,
    /// submit a job with specified name and arguments (Volcano's `vsub`)
    Vsub(shorthand_args::VsubArgs),
    /// view information of a job with specified name or jobs from the same namespace (`vjobs`)
    Vjobs(shorthand_args::VjobsArgs),
    /// view information of a queue with specified name or all queues (`vqueues`)
    Vqueues(shorthand_args::VqueuesArgs),
    /// cancel a running, pending, or aborted job with specified name (`vcancel`)
    Vcancel(shorthand_args::ShortJobRef),
    /// suspend a running or pending job with specified name (`vsuspend`)
    Vsuspend(shorthand_args::ShortJobRef),
    /// resume an aborted job with specified name (`vresume`)
    Vresume(shorthand_args::ShortJobRef),
}

/// The flags every Volcano command has.
#[derive(Debug, Clone, Args)]
pub struct CommonFlags {
    /// the address of apiserver
    #[arg(short = 's', long, default_value = "")]
    pub master: String,
    /// (optional) absolute path to the kubeconfig file
    #[arg(short = 'k', long, default_value = "")]
    pub kubeconfig: String,
}

/// What a command line asks for, checked and ready to run against the API server.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// `vcctl version`.
    Version,
    /// `vcctl job run`, `vsub`.
    JobRun(RunOptions),
    /// `vcctl job list`.
    JobList(ListOptions),
    /// `vjobs` without a name.
    VjobsList(ListOptions),
    /// `vcctl job view` (with conditions), `vjobs --name` (without).
    JobView {
        /// Namespace.
        namespace: String,
        /// Job name.
        name: String,
        /// Print `status.conditions`.
        conditions: bool,
    },
    /// A Command on a Job: `AbortJob` (`suspend`, `vsuspend`), `ResumeJob` (`resume`,
    /// `vresume`).
    JobCommand {
        /// Namespace.
        namespace: String,
        /// Job name.
        name: String,
        /// The Command's action.
        action: &'static str,
    },
    /// `vcctl job delete` (`delete`), `vcancel` (`cancel`).
    JobDelete {
        /// Namespace.
        namespace: String,
        /// Job name.
        name: String,
        /// The verb printed: `delete job x successfully`.
        verb: &'static str,
    },
    /// `vcctl queue create`.
    QueueCreate {
        /// Queue name.
        name: String,
        /// `spec.weight`.
        weight: i32,
        /// `status.state` asked for.
        state: String,
    },
    /// `vcctl queue delete`.
    QueueDelete {
        /// Queue name.
        name: String,
    },
    /// `vcctl queue operate`.
    QueueOperate {
        /// Queue name.
        name: String,
        /// Open, close or update.
        op: Operation,
    },
    /// `vcctl queue list`.
    QueueList,
    /// `vcctl queue get`.
    QueueGet {
        /// Queue name.
        name: String,
    },
    /// `vqueues` (empty name: all).
    Vqueues {
        /// Queue name.
        name: String,
    },
}

/// A checked command line: the client flags, the words of the error prefix (`job run`; empty
/// for a shorthand binary, whose Volcano prefix is `Failed to: `) and the action or why not.
pub struct Plan {
    /// `--kubeconfig`, `--master`.
    pub common: CommonFlags,
    /// The command path in Volcano's `Failed to <path>: …`.
    pub path: &'static str,
    /// The action, or the error message.
    pub action: Result<Action, String>,
}

impl Plan {
    /// Volcano's error line: `Failed to job run: <message>`, `Failed to: <message>` for a
    /// shorthand.
    pub fn failure(&self, message: &str) -> String {
        if self.path.is_empty() {
            format!("Failed to: {message}")
        } else {
            format!("Failed to {}: {message}", self.path)
        }
    }
}

impl VcctlCli {
    /// The [`Plan`] of this command line.
    pub fn plan(&self) -> Plan {
        let none = CommonFlags { master: String::new(), kubeconfig: String::new() };
        let (common, path, action) = match &self.command {
            VcctlCommand::Job { command } => command.plan(),
            VcctlCommand::Queue { command } => command.plan(),
            VcctlCommand::Version => (&none, "version", Ok(Action::Version)),
            VcctlCommand::Vsub(a) => with_path(a.plan()),
            VcctlCommand::Vjobs(a) => with_path(a.plan()),
            VcctlCommand::Vqueues(a) => with_path(a.plan()),
            VcctlCommand::Vcancel(a) => with_path(a.plan("cancel")),
            VcctlCommand::Vsuspend(a) => with_path(a.plan("suspend")),
            VcctlCommand::Vresume(a) => with_path(a.plan("resume")),
        };
        Plan { common: common.clone(), path, action }
    }
}

fn with_path<T>((common, action): (&CommonFlags, T)) -> (&CommonFlags, &'static str, T) {
    (common, "", action)
}

/// The command line to parse: `argv` itself, or, when the program was started as one of the
/// [`SHORTHANDS`] (its file name, e.g. a link `vsub` to `vcctl`), `vcctl <shorthand> <rest>`.
pub fn args_for(argv: Vec<OsString>) -> Vec<OsString> {
    let Some(first) = argv.first() else { return argv };
    let stem = Path::new(first).file_stem().and_then(|s| s.to_str()).unwrap_or("");
    if SHORTHANDS.contains(&stem) {
        let mut out = vec![OsString::from("vcctl"), OsString::from(stem)];
        out.extend(argv.into_iter().skip(1));
        return out;
    }
    argv
}

/// Runs `action` against the API server of `client`; returns what to print on stdout.
///
/// Errors: the action's (API errors carry the API server's message).
pub async fn execute(client: &kube::Client, action: Action) -> Result<String, String> {
    use vcctl::{job, queue};
    match action {
        Action::Version => Ok(vcctl::version::text()),
        Action::JobRun(o) => job::run(client, &o).await,
        Action::JobList(o) => job::list(client, &o).await,
        Action::VjobsList(o) => job::vjobs_list(client, &o).await,
        Action::JobView { namespace, name, conditions } => job::view(client, &namespace, &name, conditions).await,
        Action::JobCommand { namespace, name, action } => job::command(client, &namespace, &name, action).await,
        Action::JobDelete { namespace, name, verb } => job::delete(client, &namespace, &name, verb).await,
        Action::QueueCreate { name, weight, state } => queue::create(client, &name, weight, &state).await,
        Action::QueueDelete { name } => queue::delete(client, &name).await,
        Action::QueueOperate { name, op } => queue::operate(client, &name, op).await,
        Action::QueueList => queue::list(client).await,
        Action::QueueGet { name } => queue::get(client, &name).await,
        Action::Vqueues { name } => queue::vqueues(client, &name).await,
    }
}

/// Runs a parsed command line: prints the result on stdout and returns 0, or prints
/// [`Plan::failure`] on stderr and returns [`EXIT_FAILED`].
pub fn run(cli: &VcctlCli) -> u8 {
    let plan = cli.plan();
    let action = match plan.action.clone() {
        Ok(Action::Version) => {
            print!("{}", vcctl::version::text());
            return 0;
        }
        Ok(a) => a,
        Err(e) => {
            eprintln!("{}", plan.failure(&e));
            return EXIT_FAILED;
        }
    };
    block_on(EXIT_FAILED, async {
        let result = match vcctl::config::client(&plan.common.kubeconfig, &plan.common.master).await {
            Ok(client) => execute(&client, action).await,
            Err(e) => Err(e),
        };
        match result {
            Ok(out) => {
                print!("{out}");
                0
            }
            Err(e) => {
                eprintln!("{}", plan.failure(&e));
                EXIT_FAILED
            }
        }
    })
}

/// The `vcctl` binary's main: [`args_for`] the process's arguments, parse (clap prints help
/// and usage errors itself), [`run`].
pub fn main() -> ExitCode {
    let cli = VcctlCli::parse_from(args_for(std::env::args_os().collect()));
    ExitCode::from(run(&cli))
}

#[cfg(test)]
mod tests;
