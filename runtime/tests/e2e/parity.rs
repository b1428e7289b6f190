//! `basalt simulate` and `basalt scheduler` decide the same on the same cluster: a mixed cluster
//! (node sizes, labels, a taint, node selectors, tolerations, gangs that fit and gangs that do
//! not, three queues) is loaded into the real test apiserver, read back from it into files (so
//! both see the same UIDs and timestamps), simulated for one cycle, then scheduled by one cycle
//! of `basalt scheduler --max-cycles 1`; the pods the API shows bound are exactly the
//! simulation's binds, to the same nodes.

use crate::{e2e, support};

use e2e::process::SchedulerProcess;
use e2e::{node_of, pods};
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::ListParams;
use kube::{Api, Client};
use std::collections::BTreeMap;
use support::{
    apply_scheduler_rbac, create_node, create_pod_group, create_pods, create_queue, fresh_namespace, install_volcano_crds,
    pod_group, queue, TestApiserver, TestNode, TestPod,
};

async fn dump(client: &Client, dir: &std::path::Path) -> support::Result<()> {
    let nodes = Api::<Node>::all(client.clone()).list(&ListParams::default()).await?;
    let pods = Api::<Pod>::all(client.clone()).list(&ListParams::default()).await?;
    let pgs = Api::<basalt_runtime::crd::PodGroup>::all(client.clone()).list(&ListParams::default()).await?;
    let qs = Api::<basalt_runtime::crd::Queue>::all(client.clone()).list(&ListParams::default()).await?;
    let write = |name: &str, items: Vec<serde_json::Value>| -> support::Result<()> {
        let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items});
        std::fs::write(dir.join(name), serde_json::to_string_pretty(&list)?)?;
        Ok(())
    };
    write("nodes.json", nodes.items.iter().map(serde_json::to_value).collect::<Result<_, _>>()?)?;
    write("pods.json", pods.items.iter().map(serde_json::to_value).collect::<Result<_, _>>()?)?;
    write("podgroups.json", pgs.items.iter().map(serde_json::to_value).collect::<Result<_, _>>()?)?;
    write("queues.json", qs.items.iter().map(serde_json::to_value).collect::<Result<_, _>>()?)?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_cycle_of_scheduler_binds_what_simulate_binds() -> support::Result<()> {
    let server = TestApiserver::start()?;
    let admin = server.admin_client().await?;
    install_volcano_crds(&admin).await?;
    apply_scheduler_rbac(&admin).await?;
    let ns = fresh_namespace(&admin, "parity").await?;
    for i in 0..40 {
        let cpu = ["4", "8", "16"][i % 3];
        let mut n =
            TestNode::new(format!("node-{i:02}")).allocatable("cpu", cpu).allocatable("memory", "32Gi").allocatable("pods", "20");
        n = n.label("zone", if i % 2 == 0 { "a" } else { "b" });
        if i % 7 == 0 {
            n = n.taint("dedicated", "gpu", "NoSchedule");
        }
        create_node(&admin, &n).await?;
    }
    // The scheduler creates root and default at start; make them first so the dump has them.
    for (name, w) in [("root", 1), ("default", 1), ("gold", 3), ("silver", 1)] {
        create_queue(&admin, &queue(name, w)).await?;
    }
    let mut pods_to_make = Vec::new();
    for g in 0..40usize {
        let size = 1 + g % 5;
        let q = ["gold", "silver", "default"][g % 3];
        let name = format!("job-{g:02}");
        create_pod_group(&admin, &pod_group(&ns, &name, size as i32, Some(q))).await?;
        for i in 0..size {
            let cpu = ["500m", "1", "2", "3", "6"][(g + i) % 5];
            let mut p = TestPod::new(&ns, &format!("{name}-{i}")).group(&name).requests(&[("cpu", cpu), ("memory", "2Gi")]);
            if g % 4 == 1 {
                p = p.node_selector("zone", "a");
            }
            if g % 6 == 2 {
                p = p.toleration("dedicated", "gpu", "NoSchedule");
            }
            if g % 13 == 5 {
                p = p.requests(&[("cpu", "20"), ("memory", "2Gi")]);
            }
            pods_to_make.push(p.build());
        }
    }
    create_pods(&admin, &pods_to_make).await?;

    let dir = server.dir().join("parity-dump");
    std::fs::create_dir_all(&dir)?;
    dump(&admin, &dir).await?;
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_basalt"))
        .args(["simulate", "--cycles", "1", "--seed", "7", "--output", "json", "--cluster"])
        .arg(&dir)
        .output()?;
    assert!(out.status.success(), "simulate failed: {}", String::from_utf8_lossy(&out.stderr));
    let sim: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    let want: BTreeMap<String, String> = sim["cycles"][0]["binds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["pod"].as_str().unwrap().to_string(), b["node"].as_str().unwrap().to_string()))
        .collect();
    assert!(want.len() > 20, "the simulation binds a fair share of the pods: {}", want.len());
    assert!(want.len() < pods_to_make.len(), "and leaves some pending");

    let mut sched = SchedulerProcess::start(
        server.dir(),
        "scheduler",
        &server.scheduler_kubeconfig(),
        &["--leader-elect=false", "--max-cycles=1", "--seed=7"],
    )?;
    let code = sched.wait();
    assert_eq!(code, Some(0), "log:\n{}", sched.log_text());
    let got: BTreeMap<String, String> = pods(&admin, &ns)
        .await?
        .iter()
        .filter(|(_, p)| !node_of(p).is_empty())
        .map(|(name, p)| (format!("{ns}/{name}"), node_of(p).to_string()))
        .collect();
    assert_eq!(got, want, "live binds == simulated binds");
    Ok(())
}
