//! `vcctl` (and its shorthand links) against the real test apiserver, with `basalt controller`
//! acting on the Commands it creates and `basalt scheduler` plus the test kubelet running the
//! pods, on a server of its own (the controller and scheduler watch every namespace).
//!
//! Queues: `vcctl queue create` → the Queue exists with the weight asked and becomes Open;
//! `list`/`get` print Volcano's table with it; `operate -a close` → Closed, `-a open` → Open (by
//! `bus.volcano.sh` Commands the queue controller acts on), `-a update -w` patches the weight;
//! `delete` removes it. Jobs: `vcctl job run` → the Job exists and runs; `list`/`view` print it;
//! `suspend` → Aborted with its pods gone, `resume` → Running again with one retry; the same by
//! links named `vsuspend`/`vresume`; `vsub` and `vjobs` through links; `delete` and `vcancel`
//! remove Jobs. Bad input: a missing kubeconfig, an unknown queue or job is an error naming it,
//! with exit code 255, Volcano's `os.Exit(-1)`.

use crate::{e2e, support};

use basalt_runtime::crd::{Job, Queue};
use e2e::stack::{ControllerStack, StackSpec, QPS};
use k8s_openapi::api::core::v1::Pod;
use kube::api::ListParams;
use kube::{Api, Client};
use std::path::{Path, PathBuf};
use std::time::Duration;
use support::{fresh_namespace, wait_for};

const WAIT: Duration = Duration::from_secs(60);

/// What one `vcctl` run gave.
struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs `exe ARGS… --kubeconfig=KUBECONFIG`.
async fn run(exe: &Path, kubeconfig: &Path, args: &[&str]) -> support::Result<Out> {
    let out = tokio::process::Command::new(exe)
        .args(args)
        .arg(format!("--kubeconfig={}", kubeconfig.display()))
        .env_remove("KUBECONFIG")
        .output()
        .await?;
    Ok(Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

/// Runs `vcctl ARGS…` and expects success; returns its stdout.
async fn ok(exe: &Path, kubeconfig: &Path, args: &[&str]) -> support::Result<String> {
    let o = run(exe, kubeconfig, args).await?;
    if o.code != 0 {
        return Err(format!("{} {args:?}: exit {}\nstdout: {}\nstderr: {}", exe.display(), o.code, o.stdout, o.stderr).into());
    }
    Ok(o.stdout)
}

fn vcctl() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_vcctl"))
}

/// A link named `name` to the `vcctl` binary in `dir` (how Volcano's shorthand binaries are
/// installed from one `vcctl`).
fn link(dir: &Path, name: &str) -> support::Result<PathBuf> {
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    std::os::unix::fs::symlink(vcctl(), &path)?;
    Ok(path)
}

async fn queue_state(client: &Client, name: &str) -> support::Result<Option<String>> {
    Ok(Api::<Queue>::all(client.clone()).get_opt(name).await?.and_then(|q| q.status.and_then(|s| s.state)))
}

async fn wait_queue_state(client: &Client, name: &str, want: &str) -> support::Result<()> {
    wait_for(&format!("Queue {name} {want}"), WAIT, || async {
        Ok((queue_state(client, name).await?.as_deref() == Some(want)).then_some(()))
    })
    .await
}

fn phase(j: &Job) -> &str {
    j.status.as_ref().and_then(|s| s.state.phase.as_deref()).unwrap_or("")
}

async fn wait_job(client: &Client, ns: &str, name: &str, want: &str) -> support::Result<Job> {
    wait_for(&format!("Job {ns}/{name} {want}"), WAIT, || async {
        let j = Api::<Job>::namespaced(client.clone(), ns).get_opt(name).await?;
        Ok(j.filter(|j| phase(j) == want))
    })
    .await
}

async fn live_pods(client: &Client, ns: &str) -> support::Result<usize> {
    let pods = Api::<Pod>::namespaced(client.clone(), ns).list(&ListParams::default()).await?;
    Ok(pods.items.iter().filter(|p| p.metadata.deletion_timestamp.is_none()).count())
}

/// The row of `name` in a table printed by vcctl, split on blanks.
fn row<'a>(table: &'a str, name: &str) -> Option<Vec<&'a str>> {
    table.lines().map(|l| l.split_whitespace().collect::<Vec<_>>()).find(|cols| cols.first() == Some(&name))
}

/// Queue create/list/get/operate (close, open, update)/delete.
async fn queues(client: &Client, kc: &Path) -> support::Result<()> {
    let exe = vcctl();
    assert_eq!(ok(&exe, kc, &["queue", "create", "-n", "vc-team", "-w", "3"]).await?, "", "create prints nothing, as Volcano's");
    let q = Api::<Queue>::all(client.clone()).get("vc-team").await?;
    assert_eq!(q.spec.weight, Some(3));
    wait_queue_state(client, "vc-team", "Open").await?;

    let list = ok(&exe, kc, &["queue", "list"]).await?;
    assert!(
        list.starts_with("Name                     Weight  State   Parent  Inqueue Pending Running Unknown Completed\n"),
        "{list}"
    );
    // The queue controller gives it the parent root.
    wait_for("Queue vc-team parent root", WAIT, || async {
        let q = Api::<Queue>::all(client.clone()).get("vc-team").await?;
        Ok((q.spec.parent.as_deref() == Some("root")).then_some(()))
    })
    .await?;
    let get = ok(&exe, kc, &["queue", "get", "-n", "vc-team"]).await?;
    assert_eq!(get.lines().count(), 2, "{get}");
    assert_eq!(row(&get, "vc-team"), Some(vec!["vc-team", "3", "Open", "root", "0", "0", "0", "0", "0"]), "{get}");

    assert_eq!(ok(&exe, kc, &["queue", "operate", "-n", "vc-team", "-a", "close"]).await?, "");
    wait_queue_state(client, "vc-team", "Closed").await?;
    let get = ok(&exe, kc, &["queue", "get", "-n", "vc-team"]).await?;
    assert_eq!(row(&get, "vc-team").map(|r| r[2]), Some("Closed"), "{get}");
    ok(&exe, kc, &["queue", "operate", "-n", "vc-team", "-a", "open"]).await?;
    wait_queue_state(client, "vc-team", "Open").await?;
    ok(&exe, kc, &["queue", "operate", "-n", "vc-team", "-a", "update", "-w", "5"]).await?;
    assert_eq!(Api::<Queue>::all(client.clone()).get("vc-team").await?.spec.weight, Some(5));

    ok(&exe, kc, &["queue", "delete", "-n", "vc-team"]).await?;
    wait_for("Queue vc-team deleted", WAIT, || async {
        Ok(Api::<Queue>::all(client.clone()).get_opt("vc-team").await?.is_none().then_some(()))
    })
    .await?;
    Ok(())
}

/// Job run/list/view/suspend/resume/delete, and the shorthand links.
async fn jobs(client: &Client, kc: &Path, links: &Path) -> support::Result<()> {
    let exe = vcctl();
    let ns_owned = fresh_namespace(client, "vcctl").await?;
    let ns = ns_owned.as_str();
    let small = ["-R", "cpu=100m,memory=64Mi", "-L", "cpu=100m,memory=64Mi"];
    let mut args = vec!["job", "run", "-N", "demo", "-n", ns, "-r", "2", "-m", "2"];
    args.extend(small);
    assert_eq!(ok(&exe, kc, &args).await?, "run job demo successfully\n");
    let running = wait_job(client, ns, "demo", "Running").await?;
    assert_eq!(running.spec.scheduler_name.as_deref(), Some("volcano"));
    assert_eq!(live_pods(client, ns).await?, 2);

    let list = ok(&exe, kc, &["job", "list", "-n", ns]).await?;
    let cols = row(&list, "demo").ok_or_else(|| format!("no demo row in\n{list}"))?;
    assert_eq!(&cols[2..], ["Running", "Batch", "2", "2", "0", "2", "0", "0", "0", "0"], "{list}");
    assert_eq!(ok(&exe, kc, &["job", "list", "-n", ns, "-q", "other"]).await?, "No resources found\n");
    let all = ok(&exe, kc, &["job", "list", "--all-namespaces"]).await?;
    assert!(all.starts_with("Namespace") && all.contains(ns), "{all}");
    let view = ok(&exe, kc, &["job", "view", "-N", "demo", "-n", ns]).await?;
    for line in ["Name:       \tdemo\n", "  Min Available:     \t2\n", "    Replicas:\t2\n", "    Phase:\tRunning\n"] {
        assert!(view.contains(line), "{line:?} in\n{view}");
    }

    // Suspend: an AbortJob Command; the controller kills the pods and the Job is Aborted.
    assert_eq!(ok(&exe, kc, &["job", "suspend", "-N", "demo", "-n", ns]).await?, "");
    wait_job(client, ns, "demo", "Aborted").await?;
    wait_for("demo's pods gone", WAIT, || async { Ok((live_pods(client, ns).await? == 0).then_some(())) }).await?;
    // Resume: a ResumeJob Command; the Job restarts (one retry) and runs again.
    ok(&exe, kc, &["job", "resume", "-N", "demo", "-n", ns]).await?;
    let again = wait_job(client, ns, "demo", "Running").await?;
    assert_eq!(again.status.as_ref().map(|s| s.retry_count), Some(1));

    // The same through links named as Volcano's shorthand binaries (-n name, -N namespace).
    ok(&link(links, "vsuspend")?, kc, &["-n", "demo", "-N", ns]).await?;
    wait_job(client, ns, "demo", "Aborted").await?;
    ok(&link(links, "vresume")?, kc, &["-n", "demo", "-N", ns]).await?;
    wait_for("demo running again after vresume", WAIT, || async {
        let j = Api::<Job>::namespaced(client.clone(), ns).get("demo").await?;
        Ok((phase(&j) == "Running" && j.status.as_ref().map(|s| s.retry_count) == Some(2)).then_some(()))
    })
    .await?;

    let mut vsub_args = vec!["-n", "quick", "-N", ns, "-c", "sh -c 'sleep 1'"];
    vsub_args.extend(small);
    assert_eq!(ok(&link(links, "vsub")?, kc, &vsub_args).await?, "run job quick successfully\n");
    let quick = Api::<Job>::namespaced(client.clone(), ns).get("quick").await?;
    let c =
        &quick.spec.tasks[0].template.as_ref().and_then(|t| t.spec.as_ref()).map(|s| s.containers[0].clone()).unwrap_or_default();
    assert_eq!(c.command, Some(vec!["sh".to_string(), "-c".to_string(), "sleep 1".to_string()]));
    let vjobs = ok(&link(links, "vjobs")?, kc, &["-N", ns]).await?;
    assert!(row(&vjobs, "demo").is_some() && row(&vjobs, "quick").is_some(), "{vjobs}");
    let vqueues = ok(&link(links, "vqueues")?, kc, &["-n", "default"]).await?;
    assert!(vqueues.starts_with("Name                     Weight  State   Inqueue"), "{vqueues}");

    assert_eq!(ok(&link(links, "vcancel")?, kc, &["-n", "quick", "-N", ns]).await?, "cancel job quick successfully\n");
    assert_eq!(ok(&exe, kc, &["job", "delete", "-N", "demo", "-n", ns]).await?, "delete job demo successfully\n");
    let jobs = Api::<Job>::namespaced(client.clone(), ns);
    wait_for("both Jobs deleted", WAIT, || async { Ok(jobs.list(&ListParams::default()).await?.items.is_empty().then_some(())) })
        .await?;
    Ok(())
}

/// Bad input: a clear message naming the object or file, exit code 255.
async fn bad_input(kc: &Path) -> support::Result<()> {
    let exe = vcctl();
    let o = run(&exe, kc, &["queue", "get", "-n", "no-such-queue"]).await?;
    assert_eq!(o.code, 255, "{}", o.stderr);
    assert_eq!(o.stderr, "Failed to queue get: queues.scheduling.volcano.sh \"no-such-queue\" not found\n");
    assert_eq!(o.stdout, "");
    let o = run(&exe, kc, &["queue", "operate", "-n", "no-such-queue", "-a", "close"]).await?;
    assert_eq!(
        (o.code, o.stderr.as_str()),
        (255, "Failed to queue operate: queues.scheduling.volcano.sh \"no-such-queue\" not found\n")
    );
    let o = run(&exe, kc, &["job", "suspend", "-N", "no-such-job"]).await?;
    assert_eq!((o.code, o.stderr.as_str()), (255, "Failed to job suspend: jobs.batch.volcano.sh \"no-such-job\" not found\n"));
    let o = run(&exe, kc, &["job", "view", "-N", "no-such-job", "-n", "default"]).await?;
    assert_eq!((o.code, o.stderr.as_str()), (255, "Failed to job view: jobs.batch.volcano.sh \"no-such-job\" not found\n"));
    let o = run(&exe, Path::new("/nonexistent/kubeconfig"), &["queue", "list"]).await?;
    assert_eq!(o.code, 255);
    assert!(o.stderr.starts_with("Failed to queue list: --kubeconfig /nonexistent/kubeconfig: "), "{}", o.stderr);
    // $KUBECONFIG is read when --kubeconfig is not given.
    let o = tokio::process::Command::new(&exe).args(["queue", "get", "-n", "default"]).env("KUBECONFIG", kc).output().await?;
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("\ndefault "));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vcctl_drives_queues_and_jobs_through_the_controller() -> support::Result<()> {
    let stack = ControllerStack::start(StackSpec {
        nodes: 2,
        cpu: "8",
        memory: "32Gi",
        schedule_period: "200ms",
        kubelet: true,
        qps: QPS,
        controller_args: &[],
    })
    .await?;
    let (server, admin) = (&stack.server, &stack.admin);
    // The scheduler creates the `default` queue the Jobs go to.
    wait_queue_state(admin, "default", "Open").await?;
    let kc = server.admin_kubeconfig();
    let results = tokio::join!(queues(admin, &kc), jobs(admin, &kc, server.dir()), bad_input(&kc));
    for (name, r) in [("queues", results.0), ("jobs", results.1), ("bad input", results.2)] {
        if let Err(e) = r {
            panic!("{name}: {e}\ncontroller log:\n{}", stack.controller.log_text());
        }
    }
    stack.stop(60).await
}
