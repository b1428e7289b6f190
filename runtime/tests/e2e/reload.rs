//! Conf hot reload of a running `basalt scheduler` on the real test apiserver, good → bad →
//! good: a bad conf is refused (logged, counted in `basalt_conf_reloads_total`) and the last good
//! one keeps scheduling; a new good conf that drops `allocate` stops binding; the default conf
//! again binds what waited. Also scrapes `/metrics` and `/healthz`.

use crate::{e2e, support};

use e2e::process::SchedulerProcess;
use e2e::{bound_count, create_queues, free_port, http_get as get, nodes, Gangs};
use std::time::Duration;
use support::{apply_scheduler_rbac, fresh_namespace, install_volcano_crds, wait_for, TestApiserver};

const DEFAULT_CONF: &str = "actions: \"enqueue, allocate, backfill\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n  - name: conformance\n- plugins:\n  - name: overcommit\n  - name: drf\n  - name: predicates\n  - name: proportion\n  - name: nodeorder\n";
const NO_ALLOCATE: &str = "actions: \"enqueue\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n";
const BAD: &str = "actions: \"enqueue, allocate, nosuchaction\"\n";

fn write_conf(path: &std::path::Path, text: &str) {
    // Write then rename, as an editor or the kubelet's ConfigMap update does.
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn good_bad_good_conf_reload_keeps_the_last_good_conf() -> support::Result<()> {
    let server = TestApiserver::start()?;
    let admin = server.admin_client().await?;
    install_volcano_crds(&admin).await?;
    apply_scheduler_rbac(&admin).await?;
    let ns = fresh_namespace(&admin, "reload").await?;
    nodes(&admin, "node", 10, "16", "64Gi").await?;
    let queues = vec!["q0".to_string()];
    create_queues(&admin, &queues).await?;
    let conf_dir = server.dir().join("conf");
    std::fs::create_dir_all(&conf_dir)?;
    let conf = conf_dir.join("volcano-scheduler.conf");
    write_conf(&conf, DEFAULT_CONF);
    let (mport, hport) = (free_port(), free_port());
    let conf_arg = format!("--scheduler-conf={}", conf.display());
    let (listen, healthz) = (format!("--listen-address=127.0.0.1:{mport}"), format!("--healthz-address=127.0.0.1:{hport}"));
    let mut sched = SchedulerProcess::start(
        server.dir(),
        "scheduler",
        &server.scheduler_kubeconfig(),
        &["--leader-elect=false", &conf_arg, "--enable-metrics", &listen, "--enable-healthz", &healthz],
    )?;
    let batch =
        |prefix: &'static str| Gangs { namespace: &ns, prefix, groups: 2, gang: 5, queues: &queues, cpu: "1", memory: "1Gi" };
    let bound = |n: usize| {
        let (admin, ns) = (admin.clone(), ns.clone());
        async move { Ok((bound_count(&admin, &ns).await? == n).then_some(())) }
    };

    batch("a").create(&admin).await?;
    wait_for("batch a bound under the first conf", Duration::from_secs(30), || bound(10)).await?;

    write_conf(&conf, BAD);
    wait_for("the bad conf refused in the log", Duration::from_secs(10), || async {
        Ok(sched.log_text().contains("nosuchaction").then_some(()))
    })
    .await?;
    batch("b").create(&admin).await?;
    wait_for("batch b bound under the last good conf", Duration::from_secs(30), || bound(20)).await?;

    write_conf(&conf, NO_ALLOCATE);
    // The reload is counted once the new conf is in force.
    wait_for("the enqueue-only conf taken", Duration::from_secs(10), || async {
        let (_, body) = get(&format!("http://127.0.0.1:{mport}/metrics")).await?;
        Ok(body.contains("basalt_conf_reloads_total{result=\"success\"} 1").then_some(()))
    })
    .await?;
    batch("c").create(&admin).await?;
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(bound_count(&admin, &ns).await?, 20, "without allocate nothing new is bound");

    write_conf(&conf, DEFAULT_CONF);
    wait_for("batch c bound after the default conf is back", Duration::from_secs(30), || bound(30)).await?;

    let (code, body) = get(&format!("http://127.0.0.1:{mport}/metrics")).await?;
    assert_eq!(code, 200);
    for name in [
        "volcano_e2e_scheduling_latency_milliseconds",
        "volcano_open_session_duration_milliseconds",
        "volcano_action_scheduling_latency_milliseconds",
        "basalt_pods_bound_total 30",
        "basalt_conf_reloads_total{result=\"failure\"} 1",
        "basalt_conf_reloads_total{result=\"success\"} 2",
        "basalt_api_writes_total{kind=\"binding\"}",
    ] {
        assert!(body.contains(name), "/metrics lacks {name}:\n{body}");
    }
    let (code, body) = get(&format!("http://127.0.0.1:{hport}/healthz")).await?;
    assert_eq!((code, body.as_str()), (200, "ok"));
    assert_eq!(sched.terminate(), Some(0));
    Ok(())
}

/// A conf naming a plugin Basalt does not implement, without `allocate`: taken, it would stop
/// binding.
const UNIMPLEMENTED: &str = "actions: \"enqueue\"\ntiers:\n- plugins:\n  - name: gang\n  - name: tdm\n";

/// `--strict` (issue 10): an unimplemented plugin in the first conf is an error at start (exit
/// 2, naming it, before any API call); on a reload such a conf is refused and the last good one
/// keeps binding.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strict_refuses_an_unimplemented_conf_at_start_and_on_reload() -> support::Result<()> {
    let server = TestApiserver::start()?;
    let admin = server.admin_client().await?;
    install_volcano_crds(&admin).await?;
    apply_scheduler_rbac(&admin).await?;
    let ns = fresh_namespace(&admin, "strict").await?;
    nodes(&admin, "node", 4, "16", "64Gi").await?;
    let queues = vec!["q0".to_string()];
    create_queues(&admin, &queues).await?;
    let conf_dir = server.dir().join("strict-conf");
    std::fs::create_dir_all(&conf_dir)?;
    let conf = conf_dir.join("volcano-scheduler.conf");
    let conf_arg = format!("--scheduler-conf={}", conf.display());

    write_conf(&conf, UNIMPLEMENTED);
    let mut refused = SchedulerProcess::start(
        server.dir(),
        "strict-start",
        &server.scheduler_kubeconfig(),
        &["--leader-elect=false", &conf_arg, "--strict"],
    )?;
    assert_eq!(refused.wait(), Some(2), "refused at start:\n{}", refused.log_text());
    let log = refused.log_text();
    assert!(log.contains("--strict") && log.contains("tdm") && log.contains(&conf.display().to_string()), "{log}");

    write_conf(&conf, DEFAULT_CONF);
    let mut sched = SchedulerProcess::start(
        server.dir(),
        "strict",
        &server.scheduler_kubeconfig(),
        &["--leader-elect=false", &conf_arg, "--strict=true"],
    )?;
    let batch =
        |prefix: &'static str| Gangs { namespace: &ns, prefix, groups: 1, gang: 4, queues: &queues, cpu: "1", memory: "1Gi" };
    let bound = |n: usize| {
        let (admin, ns) = (admin.clone(), ns.clone());
        async move { Ok((bound_count(&admin, &ns).await? == n).then_some(())) }
    };
    batch("a").create(&admin).await?;
    wait_for("batch a bound under the first conf", Duration::from_secs(30), || bound(4)).await?;
    write_conf(&conf, UNIMPLEMENTED);
    wait_for("the unimplemented conf refused in the log", Duration::from_secs(10), || async {
        Ok(sched.log_text().contains("--strict:").then_some(()))
    })
    .await?;
    batch("b").create(&admin).await?;
    wait_for("batch b bound under the last good conf", Duration::from_secs(30), || bound(8)).await?;
    assert_eq!(sched.terminate(), Some(0));
    Ok(())
}
