//! The Job table of `vcctl job list` and `vjobs` (Volcano's `job.PrintJobs`), byte for byte:
//! left-aligned columns `Name` (as wide as the longest name + 3), `Creation` 15, `Phase` 12,
//! `JobType` 12, `Replicas` 12, `Min` 6, `Pending` 10, `Running` 10, `Succeeded` 12,
//! `Failed` 10, `Unknown` 12, `RetryCount` 10; with `--all-namespaces` a `Namespace` column
//! first (as wide as the longest namespace + 3).

use super::human::date;
use crate::crd::Job;
use std::fmt::Write;

/// The label naming a Job's type (`volcano.sh/job-type`); a Job without it is `Batch`.
pub const JOB_TYPE_LABEL: &str = "volcano.sh/job-type";

/// The table of `jobs`, header first; `all_namespaces` adds the `Namespace` column.
pub fn jobs_table(jobs: &[Job], all_namespaces: bool) -> String {
    let name_w = jobs.iter().map(|j| j.metadata.name.as_deref().unwrap_or("").len()).fold("Name".len(), usize::max) + 3;
    let ns_w = jobs.iter().map(|j| j.metadata.namespace.as_deref().unwrap_or("").len()).fold("Namespace".len(), usize::max) + 3;
    let mut out = String::new();
    if all_namespaces {
        let _ = write!(out, "{:<ns_w$}", "Namespace");
    }
    let _ = writeln!(
        out,
        "{:<name_w$}{:<15}{:<12}{:<12}{:<12}{:<6}{:<10}{:<10}{:<12}{:<10}{:<12}{:<10}",
        "Name",
        "Creation",
        "Phase",
        "JobType",
        "Replicas",
        "Min",
        "Pending",
        "Running",
        "Succeeded",
        "Failed",
        "Unknown",
        "RetryCount"
    );
    for job in jobs {
        let st = job.status.clone().unwrap_or_default();
        let replicas: i32 = job.spec.tasks.iter().map(|t| t.replicas.unwrap_or(0)).sum();
        let job_type = job.metadata.labels.as_ref().and_then(|l| l.get(JOB_TYPE_LABEL)).filter(|t| !t.is_empty());
        if all_namespaces {
            let _ = write!(out, "{:<ns_w$}", job.metadata.namespace.as_deref().unwrap_or(""));
        }
        let _ = writeln!(
            out,
            "{:<name_w$}{:<15}{:<12}{:<12}{:<12}{:<6}{:<10}{:<10}{:<12}{:<10}{:<12}{:<10}",
            job.metadata.name.as_deref().unwrap_or(""),
            date(job.metadata.creation_timestamp.as_ref()),
            st.state.phase.as_deref().unwrap_or(""),
            job_type.map(String::as_str).unwrap_or("Batch"),
            replicas,
            st.min_available,
            st.pending,
            st.running,
            st.succeeded,
            st.failed,
            st.unknown,
            st.retry_count
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(yaml: &str) -> Job {
        serde_yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn the_table_is_volcanos() {
        let jobs = [
            job(r#"
metadata: {name: tf-training, namespace: team-a, creationTimestamp: "2025-06-01T10:00:00Z"}
spec: {tasks: [{replicas: 2}, {replicas: 3}]}
status: {state: {phase: Running}, minAvailable: 5, running: 4, pending: 1, retryCount: 2}
"#),
            job(r#"
metadata: {name: mpi, namespace: ns, labels: {volcano.sh/job-type: Mpi}, creationTimestamp: "2025-06-02T23:59:59Z"}
spec: {tasks: [{replicas: 1}]}
status: {state: {phase: Completed}, minAvailable: 1, succeeded: 1, failed: 2, unknown: 3}
"#),
        ];
        // Volcano's format strings, filled by hand: %-14s (len("tf-training") + 3) then the
        // fixed widths.
        let want = "\
Name          Creation       Phase       JobType     Replicas    Min   Pending   Running   Succeeded   Failed    Unknown     RetryCount
tf-training   2025-06-01     Running     Batch       5           5     1         4         0           0         0           2         
mpi           2025-06-02     Completed   Mpi         1           1     0         0         1           2         3           0         
";
        assert_eq!(jobs_table(&jobs, false), want);
        let all = jobs_table(&jobs, true);
        let lines: Vec<&str> = all.lines().collect();
        assert!(lines[0].starts_with("Namespace   Name          Creation"), "{}", lines[0]);
        assert!(lines[1].starts_with("team-a      tf-training   2025-06-01"), "{}", lines[1]);
        assert!(lines[2].starts_with("ns          mpi           2025-06-02"), "{}", lines[2]);
    }

    #[test]
    fn a_job_without_status_prints_zeros_and_an_empty_phase() {
        let t = jobs_table(&[job("metadata: {name: j}\nspec: {tasks: [{replicas: 2}]}\n")], false);
        assert_eq!(t.lines().nth(1).unwrap(), format!("j      0001-01-01     {:<12}Batch       2           0     0         0         0           0         0           0         ", ""));
    }
}
