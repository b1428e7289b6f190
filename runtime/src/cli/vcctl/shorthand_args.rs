//! The arguments of Volcano's shorthand binaries (`cmd/cli/v*`, `pkg/cli/v*`), reached as
//! `vcctl vsub …` or through a link named `vsub` (see [`super::args_for`]). Unlike `vcctl job`,
//! they spell the name `--name`/`-n` and the namespace `--namespace`/`-N`; `vsub` reads its
//! defaults from `VOLCANO_SCHEDULER_NAME`, `VOLCANO_DEFAULT_IMAGE` and
//! `VOLCANO_DEFAULT_JOB_NAMESPACE` when the flag is not given.

use super::{Action, CommonFlags};
use crate::vcctl::job::{ListOptions, RunOptions};
use clap::Args;

/// `vsub`: submit a job.
#[derive(Debug, Args)]
pub struct VsubArgs {
    #[command(flatten)]
    common: CommonFlags,
    /// the container image of job, overwrite the value of 'VOLCANO_DEFAULT_IMAGE' (default "busybox")
    #[arg(short = 'i', long, default_value = "")]
    image: String,
    /// the namespace of job, overwrite the value of 'VOLCANO_DEFAULT_JOB_NAMESPACE' (default "default")
    #[arg(short = 'N', long, default_value = "")]
    namespace: String,
    /// the name of job
    #[arg(short = 'n', long, default_value = "")]
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
    /// the scheduler for this job, overwrite the value of 'VOLCANO_SCHEDULER_NAME' (default "volcano")
    #[arg(short = 'S', long, default_value = "")]
    scheduler: String,
    /// the command of job
    #[arg(short = 'c', long, default_value = "")]
    command: String,
}

/// `vjobs`: view job information (one Job with `--name`, else a table).
#[derive(Debug, Args)]
pub struct VjobsArgs {
    #[command(flatten)]
    common: CommonFlags,
    /// the namespace of job
    #[arg(short = 'N', long, default_value = "default")]
    namespace: String,
    /// the name of job
    #[arg(short = 'n', long, default_value = "")]
    name: String,
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

/// `vqueues`: view queue information (one Queue with `--name`, else all).
#[derive(Debug, Args)]
pub struct VqueuesArgs {
    #[command(flatten)]
    common: CommonFlags,
    /// the name of queue
    #[arg(short = 'n', long, default_value = "")]
    name: String,
}

/// `vcancel`, `vsuspend`, `vresume`: one Job by `--name`/`-n` and `--namespace`/`-N`.
#[derive(Debug, Args)]
pub struct ShortJobRef {
    #[command(flatten)]
    common: CommonFlags,
    /// the namespace of job
    #[arg(short = 'N', long, default_value = "default")]
    namespace: String,
    /// the name of job
    #[arg(short = 'n', long, default_value = "")]
    name: String,
}

/// The flag's value when given, else `env`'s value when set and non-empty, else `default`.
pub fn or_env(flag: &str, env: Option<String>, default: &str) -> String {
    if !flag.is_empty() {
        return flag.to_string();
    }
    env.filter(|v| !v.is_empty()).unwrap_or_else(|| default.to_string())
}

impl VsubArgs {
    /// `vsub`'s action; an empty name is refused when the Job is built (`job name cannot be
    /// left blank`).
    pub fn plan(&self) -> (&CommonFlags, Result<Action, String>) {
        let env = |k: &str| std::env::var(k).ok();
        let o = RunOptions {
            name: self.name.clone(),
            namespace: or_env(&self.namespace, env("VOLCANO_DEFAULT_JOB_NAMESPACE"), "default"),
            image: or_env(&self.image, env("VOLCANO_DEFAULT_IMAGE"), "busybox"),
            min_available: self.min,
            replicas: self.replicas,
            requests: self.requests.clone(),
            limits: self.limits.clone(),
            scheduler_name: or_env(&self.scheduler, env("VOLCANO_SCHEDULER_NAME"), "volcano"),
            filename: String::new(),
            command: self.command.clone(),
        };
        if o.name.is_empty() {
            return (&self.common, Err("job name cannot be left blank".into()));
        }
        (&self.common, Ok(Action::JobRun(o)))
    }
}

impl VjobsArgs {
    /// `vjobs`: one Job's view with `--name`, else the filtered table.
    pub fn plan(&self) -> (&CommonFlags, Result<Action, String>) {
        if !self.name.is_empty() {
            return (
                &self.common,
                Ok(Action::JobView { namespace: self.namespace.clone(), name: self.name.clone(), conditions: false }),
            );
        }
        let o = ListOptions {
            namespace: self.namespace.clone(),
            all_namespaces: self.all_namespaces,
            queue: String::new(),
            scheduler_name: self.scheduler.clone(),
            selector: self.selector.clone(),
        };
        (&self.common, Ok(Action::VjobsList(o)))
    }
}

impl VqueuesArgs {
    /// `vqueues`: one Queue or all.
    pub fn plan(&self) -> (&CommonFlags, Result<Action, String>) {
        (&self.common, Ok(Action::Vqueues { name: self.name.clone() }))
    }
}

impl ShortJobRef {
    /// `vcancel` (`verb` `cancel`: delete), `vsuspend` (`suspend`: AbortJob) and `vresume`
    /// (`resume`: ResumeJob).
    ///
    /// Errors: no name (`job name is mandatory to <verb> a particular job`).
    pub fn plan(&self, verb: &'static str) -> (&CommonFlags, Result<Action, String>) {
        if self.name.is_empty() {
            return (&self.common, Err(format!("job name is mandatory to {verb} a particular job")));
        }
        let (namespace, name) = (self.namespace.clone(), self.name.clone());
        let action = match verb {
            "cancel" => Action::JobDelete { namespace, name, verb },
            "suspend" => Action::JobCommand { namespace, name, action: "AbortJob" },
            _ => Action::JobCommand { namespace, name, action: "ResumeJob" },
        };
        (&self.common, Ok(action))
    }
}
