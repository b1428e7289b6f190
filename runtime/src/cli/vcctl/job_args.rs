//! `vcctl job …` arguments: Volcano's flags, short names and defaults (`pkg/cli/job`), each
//! turned into a [`super::Action`].

use super::{Action, CommonFlags};
use crate::vcctl::job::{ListOptions, RunOptions};
use clap::{Args, Subcommand};

/// `vcctl job` subcommands.
#[derive(Debug, Subcommand)]
pub enum JobCommand {
    /// run job by parameters from the command line
    Run(RunArgs),
    /// list job information
    List(ListArgs),
    /// show job information
    View(JobRef),
    /// abort a job
    Suspend(JobRef),
    /// resume a job
    Resume(JobRef),
    /// delete a job
    Delete(JobRef),
}

/// `vcctl job run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    common: CommonFlags,
    /// the container image of job
    #[arg(short = 'i', long, default_value = "busybox")]
    image: String,
    /// the namespace of job
    #[arg(short = 'n', long, default_value = "default")]
    namespace: String,
    /// the name of job
    #[arg(short = 'N', long, default_value = "")]
    name: String,
    /// the minimal available tasks of job
    #[arg(short = 'm', long, default_value_t = 1)]
    min: i32,
    /// the total tasks of job
    #[arg(short = 'r', long, default_value_t = 1)]
    replicas: i32,
    /// the resource request of the task
    #[arg(short = 'R', long, default_value = "cpu=1000m,memory=100Mi")]
    requests: String,
    /// the resource limit of the task
    #[arg(short = 'L', long, default_value = "cpu=1000m,memory=100Mi")]
    limits: String,
    /// the scheduler for this job
    #[arg(short = 'S', long, default_value = "volcano")]
    scheduler: String,
    /// the yaml file of job
    #[arg(short = 'f', long, default_value = "")]
    filename: String,
}

/// `vcctl job list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    common: CommonFlags,
    /// list job with specified queue name
    #[arg(short = 'q', long, default_value = "")]
    queue: String,
    /// the namespace of job
    #[arg(short = 'n', long, default_value = "default")]
    namespace: String,
    /// list job with specified scheduler name
    #[arg(short = 'S', long, default_value = "")]
    scheduler: String,
    /// list jobs in all namespaces
    #[arg(long)]
    all_namespaces: bool,
    /// fuzzy matching jobName
    #[arg(long, default_value = "")]
    selector: String,
}

/// `vcctl job view|suspend|resume|delete`: one Job by `--namespace`/`-n` and `--name`/`-N`.
#[derive(Debug, Args)]
pub struct JobRef {
    #[command(flatten)]
    common: CommonFlags,
    /// the namespace of job
    #[arg(short = 'n', long, default_value = "default")]
    namespace: String,
    /// the name of job
    #[arg(short = 'N', long, default_value = "")]
    name: String,
}

impl JobRef {
    fn named(&self, missing: &str) -> Result<(String, String), String> {
        if self.name.is_empty() {
            return Err(missing.to_string());
        }
        Ok((self.namespace.clone(), self.name.clone()))
    }
}

impl JobCommand {
    /// The common flags, the error prefix's words (`job run`) and the action.
    ///
    /// Errors: a Job name missing, in Volcano's words (`job name is mandatory to suspend a
    /// particular job`, …).
    pub fn plan(&self) -> (&CommonFlags, &'static str, Result<Action, String>) {
        match self {
            JobCommand::Run(a) => (
                &a.common,
                "job run",
                Ok(Action::JobRun(RunOptions {
                    name: a.name.clone(),
                    namespace: a.namespace.clone(),
                    image: a.image.clone(),
                    min_available: a.min,
                    replicas: a.replicas,
                    requests: a.requests.clone(),
                    limits: a.limits.clone(),
                    scheduler_name: a.scheduler.clone(),
                    filename: a.filename.clone(),
                    command: String::new(),
                })),
            ),
            JobCommand::List(a) => (
                &a.common,
                "job list",
                Ok(Action::JobList(ListOptions {
                    namespace: a.namespace.clone(),
                    all_namespaces: a.all_namespaces,
                    queue: a.queue.clone(),
                    scheduler_name: a.scheduler.clone(),
                    selector: a.selector.clone(),
                })),
            ),
            JobCommand::View(a) => (
                &a.common,
                "job view",
                a.named("job name (specified by --name or -N) is mandatory to view a particular job")
                    .map(|(namespace, name)| Action::JobView { namespace, name, conditions: true }),
            ),
            JobCommand::Suspend(a) => (
                &a.common,
                "job suspend",
                a.named("job name is mandatory to suspend a particular job").map(|(namespace, name)| Action::JobCommand {
                    namespace,
                    name,
                    action: "AbortJob",
                }),
            ),
            JobCommand::Resume(a) => (
                &a.common,
                "job resume",
                a.named("job name is mandatory to resume a particular job").map(|(namespace, name)| Action::JobCommand {
                    namespace,
                    name,
                    action: "ResumeJob",
                }),
            ),
            JobCommand::Delete(a) => (
                &a.common,
                "job delete",
                a.named("job name is mandatory to delete a particular job").map(|(namespace, name)| Action::JobDelete {
                    namespace,
                    name,
                    verb: "delete",
                }),
            ),
        }
    }
}
