//! The admission bench (issue 27): latency and throughput of `basalt webhook-manager`'s
//! `/jobs/validate` with `--queues` Queues in its cache, beside the kube-apiserver's own Job
//! create rate without a webhook, all on one fresh real kube-apiserver v1.20.2 + etcd. A bench, not
//! a test: it prints numbers and fails only when something is wrong (a request refused that should
//! be admitted, a create that failed), never on a speed.
//!
//! ```text
//! cargo build --release -p basalt-runtime --bin basalt
//! cargo run --release -p basalt-runtime --example admission_bench -- [--queues 1000] [--jobs 2000] [--concurrency 16] [--output json]
//! ```
//!
//! One run:
//! 1. a fresh server (`runtime/tests/apiserver/start.sh`), `deploy/`'s CRDs, `deploy/admission.yaml`'s
//!    RBAC, `--queues` Open Queues `q-0…`;
//! 2. **apiserver alone**: `--jobs` Volcano Jobs (one task of one pod, queue `q-i mod queues`)
//!    created in namespace `alone`, `--concurrency` in flight, no webhook registered;
//! 3. `basalt webhook-manager --enabled-admission=/jobs/validate` as a child (the
//!    `volcano-admission` identity, a certificate from `deploy/admission-certs.sh`), once its Queue
//!    cache holds every Queue;
//! 4. **webhook direct**: `--jobs` AdmissionReviews (CREATE of the same Jobs) POSTed to
//!    `/jobs/validate` over HTTPS from this process, `--concurrency` in flight: every one must be
//!    allowed (and one naming a missing queue refused, as a check that the rule ran);
//! 5. **apiserver + webhook**: the ValidatingWebhookConfiguration
//!    `volcano-admission-service-jobs-validate` registered (URL on loopback, `failurePolicy: Fail`)
//!    and `--jobs` Jobs created in namespace `with-webhook` as in step 2.
//!
//! Latencies are per request, measured by the client from send to answer; p50/p99 over all
//! requests of a step; rate = requests / wall time of the step. Both processes share this
//! machine's cores with the server, so the numbers say what one machine does, not a cluster.

#[path = "../../tests/support/mod.rs"]
mod support;

mod measure;
mod objects;

use base64::Engine;
use clap::Parser;
use measure::Stats;
use std::path::PathBuf;
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::Duration;
use support::TestApiserver;

/// Command line of the admission bench.
#[derive(Debug, Parser)]
#[command(about = "Latency and throughput of basalt webhook-manager's /jobs/validate beside the apiserver's own create rate")]
struct Args {
    /// Queues in the cluster (and in the webhook manager's cache).
    #[arg(long, default_value_t = 1000)]
    queues: usize,
    /// Requests per step (Jobs created, AdmissionReviews sent).
    #[arg(long, default_value_t = 2000)]
    jobs: usize,
    /// Requests in flight.
    #[arg(long, default_value_t = 16)]
    concurrency: usize,
    /// The `basalt` binary.
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/release/basalt"))]
    basalt: PathBuf,
    /// `text` or `json`.
    #[arg(long, default_value = "text")]
    output: String,
}

/// Kills the webhook manager when the bench ends, whichever way.
struct Manager(Child);

impl Drop for Manager {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("admission bench: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: &Args) -> support::Result<()> {
    if !args.basalt.exists() {
        return Err(format!("{} not found: cargo build --release -p basalt-runtime --bin basalt", args.basalt.display()).into());
    }
    let server = TestApiserver::start()?;
    let admin = server.admin_client().await?;
    objects::install(&admin, &server, args.queues).await?;

    // Step 2: the apiserver alone.
    let alone = objects::create_jobs(&admin, "alone", args.jobs, args.queues, args.concurrency).await?;

    // Step 3: the webhook manager.
    let certs = server.dir().join("admission-certs");
    let out = Command::new(support::deploy_dir().join("admission-certs.sh"))
        .arg("--out-dir")
        .arg(&certs)
        .args(["--san", "IP:127.0.0.1"])
        .output()?;
    if !out.status.success() {
        return Err(format!("admission-certs.sh: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    let port = free_port()?;
    let base = format!("https://127.0.0.1:{port}");
    let log = std::fs::File::create(server.dir().join("webhook-manager.log"))?;
    let child = Command::new(&args.basalt)
        .arg("webhook-manager")
        .arg(format!("--kubeconfig={}", server.admission_kubeconfig().display()))
        .args(["--listen-address=127.0.0.1", &format!("--port={port}"), &format!("--webhook-url={base}")])
        .arg(format!("--tls-cert-file={}", certs.join("tls.crt").display()))
        .arg(format!("--tls-private-key-file={}", certs.join("tls.key").display()))
        // No --ca-cert-file: step 5 registers the configuration with its caBundle itself.
        .arg("--enabled-admission=/jobs/validate")
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()?;
    let mut manager = Manager(child);
    let ca_pem = std::fs::read_to_string(certs.join("ca.crt"))?;
    let webhook = webhook_client(&base, &ca_pem)?;
    objects::wait_until_cached(&webhook, args.queues, &mut manager.0).await?;

    // Step 4: AdmissionReviews straight to /jobs/validate.
    let direct = objects::post_reviews(&webhook, args.jobs, args.queues, args.concurrency).await?;

    // Step 5: the apiserver calling the webhook.
    objects::register(&admin, &base, ca_pem.as_bytes()).await?;
    let through = objects::create_jobs(&admin, "with-webhook", args.jobs, args.queues, args.concurrency).await?;
    let cpu = measure::cpu_seconds(manager.0.id()).unwrap_or(f64::NAN);
    drop(manager);

    print(args, &alone, &direct, &through, cpu);
    Ok(())
}

/// A client for the webhook's own HTTPS server, trusting only `ca_pem`.
fn webhook_client(base: &str, ca_pem: &str) -> support::Result<kube::Client> {
    let body: String = ca_pem.lines().filter(|l| !l.starts_with("-----")).collect();
    let der = base64::engine::general_purpose::STANDARD.decode(body.trim())?;
    let mut config = kube::Config::new(base.parse()?);
    config.root_cert = Some(vec![der]);
    config.read_timeout = Some(Duration::from_secs(10));
    Ok(kube::Client::try_from(config)?)
}

fn free_port() -> support::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

fn print(args: &Args, alone: &Stats, direct: &Stats, through: &Stats, cpu: f64) {
    let rows = [
        ("apiserver alone (Job create)", alone),
        ("webhook direct (/jobs/validate)", direct),
        ("apiserver + webhook (Job create)", through),
    ];
    if args.output == "json" {
        let steps: Vec<serde_json::Value> = rows
            .iter()
            .map(|(name, s)| {
                serde_json::json!({"step": name, "requests": s.count(), "per_second": s.rate(), "p50_ms": s.percentile_ms(0.5), "p99_ms": s.percentile_ms(0.99)})
            })
            .collect();
        let doc = serde_json::json!({"queues": args.queues, "jobs": args.jobs, "concurrency": args.concurrency, "webhook_cpu_seconds": cpu, "steps": steps});
        println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        return;
    }
    println!("admission bench: {} Queues, {} requests per step, {} in flight", args.queues, args.jobs, args.concurrency);
    println!("{:<34} {:>10} {:>10} {:>10}", "step", "per s", "p50 ms", "p99 ms");
    for (name, s) in rows {
        println!("{name:<34} {:>10.0} {:>10.2} {:>10.2}", s.rate(), s.percentile_ms(0.5), s.percentile_ms(0.99));
    }
    println!("webhook manager CPU: {cpu:.2} s over steps 3-5");
}
