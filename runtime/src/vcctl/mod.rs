//! `vcctl`: Volcano's command line for Jobs and Queues (volcano-behaviour.md §8.2; Volcano's
//! `cmd/cli` and `pkg/cli`), the work behind the `vcctl` binary. The clap parsing lives in
//! `cli::vcctl`; this module holds what each command does against the API server and what it
//! prints, as plain option structs in and the text for stdout out:
//!
//! * [`config`]: the API client from `--kubeconfig` / `$KUBECONFIG` / in-cluster, `--master`;
//! * [`job`]: `vcctl job run|list|view|suspend|resume|delete` (and `vsub`, `vjobs`, `vcancel`,
//!   `vsuspend`, `vresume`); suspend/resume create `AbortJob`/`ResumeJob` Commands;
//! * [`queue`]: `vcctl queue create|delete|operate|list|get` (and `vqueues`); open/close create
//!   `OpenQueue`/`CloseQueue` Commands, update merge-patches `spec.weight`;
//! * the printing, byte for byte as Volcano's: [`job_table`] (`job list`, `vjobs`),
//!   [`job_view`] (`job view`), [`queue_table`] (`queue list|get`, `vqueues`), with
//!   [`human`] for ages and timestamps;
//! * [`resources`] (`--requests cpu=1,memory=1Gi`), [`shell_words`] (`vsub --command`),
//!   [`version`].
//!
//! Errors are plain messages: an API error is the API server's own message (`queues.scheduling.volcano.sh
//! "x" not found`, as client-go's error prints), everything else names the flag or object.

pub mod config;
pub mod human;
pub mod job;
pub mod job_table;
pub mod job_view;
pub mod queue;
pub mod queue_table;
pub mod resources;
pub mod shell_words;
pub mod version;

/// The message of an API call's error: the API server's `Status.message` for a refused request
/// (what client-go's `StatusError` prints, e.g. `jobs.batch.volcano.sh "x" not found`), else
/// kube's description of the failure (connection refused, TLS, …).
pub fn api_error(e: kube::Error) -> String {
    match e {
        kube::Error::Api(s) if !s.message.is_empty() => s.message,
        other => other.to_string(),
    }
}
