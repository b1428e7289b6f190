//! The flight recorder end to end: `basalt scheduler --record DIR` schedules a real test
//! apiserver for six cycles while a kubelet runs and finishes pods and a second batch of jobs
//! arrives mid-run; then, offline, `basalt replay --recording DIR` re-runs every recorded
//! cycle and decides exactly what was recorded, the recorded binds are the binds the API
//! shows, and `basalt explain` tells why the gang that cannot fit stayed pending.

use crate::{e2e, support};

use e2e::process::SchedulerProcess;
use e2e::{node_of, pods};
use std::process::Command;
use support::{
    apply_scheduler_rbac, create_node, create_pod_group, create_pods, create_queue, fresh_namespace, install_volcano_crds,
    pod_group, queue, Kubelet, TestApiserver, TestNode, TestPod,
};

async fn jobs(admin: &kube::Client, ns: &str, prefix: &str, groups: usize, cpu: &str, seconds: u64) -> support::Result<usize> {
    let mut made = Vec::new();
    for g in 0..groups {
        let name = format!("{prefix}-{g}");
        let size = 1 + g % 3;
        let q = ["gold", "default"][g % 2];
        create_pod_group(admin, &pod_group(ns, &name, size as i32, Some(q))).await?;
        for i in 0..size {
            made.push(
                TestPod::new(ns, &format!("{name}-{i}"))
                    .group(&name)
                    .requests(&[("cpu", cpu), ("memory", "1Gi")])
                    .duration_seconds(seconds)
                    .build(),
            );
        }
    }
    create_pods(admin, &made).await?;
    Ok(made.len())
}

fn basalt(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_basalt")).args(args).output().expect("basalt runs")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_of_the_live_scheduler_replays_offline_with_identical_decisions() -> support::Result<()> {
    let server = TestApiserver::start()?;
    let admin = server.admin_client().await?;
    install_volcano_crds(&admin).await?;
    apply_scheduler_rbac(&admin).await?;
    let ns = fresh_namespace(&admin, "recorder").await?;
    for i in 0..12 {
        let n = TestNode::new(format!("node-{i:02}"))
            .allocatable("cpu", ["4", "8"][i % 2])
            .allocatable("memory", "32Gi")
            .allocatable("pods", "20");
        create_node(&admin, &n).await?;
    }
    for (name, w) in [("root", 1), ("default", 1), ("gold", 3)] {
        create_queue(&admin, &queue(name, w)).await?;
    }
    let first = jobs(&admin, &ns, "early", 24, "2", 2).await?;
    // A gang no node can hold: it stays pending with Volcano's aggregated fit errors.
    create_pod_group(&admin, &pod_group(&ns, "huge", 2, Some("gold"))).await?;
    create_pods(
        &admin,
        &(0..2)
            .map(|i| TestPod::new(&ns, &format!("huge-{i}")).group("huge").requests(&[("cpu", "16")]).build())
            .collect::<Vec<_>>(),
    )
    .await?;
    let kubelet = Kubelet::start(admin.clone(), Some(&ns));

    let rec = server.dir().join("recording");
    let rec_s = rec.to_string_lossy().to_string();
    let mut sched = SchedulerProcess::start(
        server.dir(),
        "scheduler",
        &server.scheduler_kubeconfig(),
        &["--leader-elect=false", "--max-cycles=6", "--seed=3", "--schedule-period=1s", &format!("--record={rec_s}")],
    )?;
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    let second = jobs(&admin, &ns, "late", 12, "1", 60).await?;
    let code = tokio::task::spawn_blocking(move || {
        let c = sched.wait();
        (c, sched.log_text())
    })
    .await?;
    assert_eq!(code.0, Some(0), "log:\n{}", code.1);
    let errors = kubelet.stop().await;
    assert!(errors.is_empty(), "kubelet: {errors:?}");

    // Offline: every recorded cycle re-runs to the recorded decisions.
    let out = basalt(&["replay", "--recording", &rec_s, "--output", "json"]);
    assert!(out.status.success(), "replay: {}\n{}", String::from_utf8_lossy(&out.stderr), String::from_utf8_lossy(&out.stdout));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    let cycles = report["cycles"].as_array().unwrap();
    assert_eq!(cycles.len(), 6, "{report}");
    assert_eq!(report["differing"], 0, "{report}");
    for c in cycles {
        assert_eq!(c["differences"].as_array().map(Vec::len), Some(0), "{c}");
        assert_eq!(c["binds"], c["rerunBinds"]);
    }
    // The recording holds exactly the binds the API shows (each pod bound once).
    let recorded: u64 = cycles.iter().map(|c| c["binds"].as_u64().unwrap()).sum();
    let live = pods(&admin, &ns).await?;
    let bound = live.values().filter(|p| !node_of(p).is_empty()).count() as u64;
    assert_eq!(recorded, bound, "recorded binds == bound pods");
    assert!(bound as usize > first / 2 && (bound as usize) < first + second + 2, "{bound} of {}", first + second);
    assert!(live.iter().any(|(n, p)| n.starts_with("late-") && !node_of(p).is_empty()), "the second batch was scheduled too");

    let one = basalt(&["replay", "--recording", &rec_s, "--cycle", &cycles[2]["cycle"].to_string()]);
    let text = String::from_utf8_lossy(&one.stdout);
    assert!(one.status.success() && text.contains("1 of 1 cycles decided exactly what was recorded"), "{text}");

    let ex = basalt(&["explain", "--recording", &rec_s, "--pod", &format!("{ns}/huge-0")]);
    let text = String::from_utf8_lossy(&ex.stdout);
    assert!(ex.status.success(), "{text}{}", String::from_utf8_lossy(&ex.stderr));
    let spans: Vec<&str> = text.lines().filter(|l| l.starts_with('#')).collect();
    assert!(!spans.is_empty() && spans.iter().all(|l| l.ends_with(": pending")), "pending at every cycle:\n{text}");
    assert!(text.contains("nodes are unavailable") && text.contains("Insufficient cpu"), "{text}");
    assert!(text.contains("tasks in gang unschedulable"), "the gang's reason:\n{text}");
    Ok(())
}
