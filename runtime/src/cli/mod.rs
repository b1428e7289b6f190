//! The `basalt` command line (clap derive): parses arguments and dispatches to one module per
//! subcommand. Owns exit codes and what goes to stdout (results) versus stderr (warnings and
//! errors); the work itself lives in [`crate::sim`], [`crate::replay`], [`crate::load`] and
//! [`crate::convert`].

pub mod bench;
pub mod bench_devices;
pub mod bench_pair;
pub mod bench_plot;
pub mod bench_sweep;
pub mod bench_volumes;
pub mod controller;
pub mod feature_gates;
#[cfg(test)]
mod help_text;
pub mod log_format;
pub mod recording;
pub mod replay;
pub mod scheduler;
pub mod simulate;
pub mod vcctl;
pub mod webhook_manager;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Exit code: success.
pub const EXIT_OK: u8 = 0;
/// Exit code: no object at all could be loaded from the cluster paths.
pub const EXIT_NOTHING_LOADED: u8 = 1;
/// Exit code: the scheduler conf could not be read or is invalid (clap also uses 2 for usage
/// errors).
pub const EXIT_BAD_CONF: u8 = 2;

/// `basalt`: a Volcano-compatible batch scheduler.
#[derive(Debug, Parser)]
#[command(name = "basalt", version, about = "Basalt: a Volcano-compatible batch scheduler", propagate_version = true)]
pub struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
    /// How the log on stderr is written: `text` (coloured only on a terminal, never with
    /// `NO_COLOR` set) or `json` (one object a line, for log collectors).
    #[arg(long, global = true, value_enum, default_value_t = log_format::LogFormat::Text)]
    pub log_format: log_format::LogFormat,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Schedule a cluster read from YAML/JSON files for N cycles and print the decisions.
    Simulate(simulate::SimulateArgs),
    /// Replay a workload over virtual time (the embedded default, the Alibaba GPU trace, or
    /// annotated YAML) and print a report.
    Replay(replay::ReplayArgs),
    /// Time one session open and one full cycle of a seeded synthetic workload (session open
    /// ms, cycle ms, pods/s, peak memory); `--sweep` repeats it over cluster sizes and `--plot`
    /// draws the growth.
    Bench(bench::BenchArgs),
    /// Run as the cluster's scheduler in place of Volcano's vc-scheduler: watch the API server,
    /// schedule every `--schedule-period`, bind pods and write statuses (vc-scheduler's flags).
    Scheduler(Box<scheduler::SchedulerArgs>),
    /// Say, for one pod, at each cycle of a flight recording, whether it was pending or bound
    /// and why.
    Explain(recording::ExplainArgs),
    /// Run as the cluster's Volcano controller-manager: turn `batch.volcano.sh` Jobs into
    /// PodGroups and pods and drive them through their lifecycle (vc-controller-manager's flags).
    Controller(Box<controller::ControllerArgs>),
    /// Run as the cluster's Volcano admission webhook server (vc-webhook-manager's flags):
    /// defaults and validation of Jobs, Queues, PodGroups, pods and HyperNodes.
    WebhookManager(Box<webhook_manager::WebhookManagerArgs>),
}

/// Runs a parsed command line; returns the process exit code.
pub fn run(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Simulate(args) => ExitCode::from(simulate::run(&args)),
        Command::Replay(args) => ExitCode::from(replay::run(&args)),
        Command::Bench(args) => ExitCode::from(bench::run(&args)),
        Command::Scheduler(args) => ExitCode::from(scheduler::run(&args)),
        Command::Explain(args) => ExitCode::from(recording::explain(&args)),
        Command::Controller(args) => ExitCode::from(controller::run(&args)),
        Command::WebhookManager(args) => ExitCode::from(webhook_manager::run(&args)),
    }
}

/// Parses `std::env::args` (clap prints help or usage errors and exits itself), starts logging
/// to stderr (`RUST_LOG` wins; else `warn`, or the scheduler's `--v` level) and runs.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let default = match &cli.command {
        Command::Scheduler(a) => a.log_filter(),
        Command::Controller(a) => a.log_filter(),
        Command::WebhookManager(a) => a.log_filter(),
        _ => "warn",
    };
    let filter =
        tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    log_format::init(filter, cli.log_format);
    run(cli)
}
