//! `basalt scheduler` under faults, through the fault-injecting proxy (`tests/support/proxy.rs`)
//! in front of the real test apiserver, with `deploy/`'s ServiceAccount and ClusterRole. One
//! test per fault, each named after it. Every test shows:
//! * no lost pod: every pod that fits is bound in the end;
//! * no double bind: exactly one successful binding per pod in the audit log (and, where the
//!   fault makes it matter, no node over-committed);
//! * no busy loop: the requests the scheduler sent through the proxy while the fault lasted
//!   stay under a stated bound;
//! * recovery within a stated time after the fault ends (printed as `recovery:` lines).
//!
//! The tests share one apiserver and run one at a time (each on its own node pool and
//! namespace, with its own scheduler process and proxy); the 500, 503 and 504 answers share one
//! rig, one fault after the other. Faults that need a server of their own (the server stopped,
//! etcd compaction, leader renewals) are in `faults_server.rs`.

use crate::{e2e, support};

use e2e::rig::{Rig, Server};
use futures::FutureExt;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::{bind_pod, delete_pod_now, Action, ApiRequest, Rule, TestApiserver};

/// One test at a time: each runs a scheduler that sees the whole server.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// How long each error or dropped-watch fault lasts: long enough for several rounds of the
/// binder's retries (1.5 s) and schedule periods (1 s) and of the watchers' backoff (0.8 s
/// doubling), which the bounds below count; longer adds nothing they check.
const FAULT: Duration = Duration::from_secs(5);

async fn rig(name: &str, nodes: usize, cpu: &str) -> support::Result<Rig> {
    Rig::new(Server::Shared(TestApiserver::shared()?), name, nodes, cpu).await
}

fn scheduler_request(r: &ApiRequest) -> bool {
    r.user_agent.starts_with("basalt-scheduler/")
}

fn report(fault: &str, recovery: Duration, requests: usize) {
    eprintln!("recovery: {fault}: {:.1} s after the fault ended; {requests} requests during the fault", recovery.as_secs_f64());
}

/// The scheduler's requests in `[from, to)` by verb and resource, for the failure messages.
fn breakdown(rig: &Rig, from: Instant, to: Instant) -> String {
    let mut by: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    for r in rig.proxy.requests() {
        if scheduler_request(&r) && r.at.is_some_and(|t| t >= from && t < to) {
            let res = if r.subresource.is_empty() { r.resource.clone() } else { format!("{}/{}", r.resource, r.subresource) };
            *by.entry(format!("{} {res}", r.verb)).or_default() += 1;
        }
    }
    format!("{by:?}")
}

/// A rig with one scheduler and a first batch of pods bound before any fault; returns it and
/// that batch.
async fn error_rig(name: &str) -> support::Result<(Rig, Vec<String>)> {
    let mut rig = rig(name, 4, "8").await?;
    rig.start_single(&[])?;
    let first = rig.gangs("first", 4, 3, "500m").await?;
    rig.wait_bound(&first, Duration::from_secs(60)).await?;
    Ok((rig, first))
}

/// The requests sent while a rule answering `code` to everything was installed stay bounded,
/// and the scheduler recovers once the server answers again: installs the rule, creates gangs
/// `{prefix}-*` (12 pods of 500m), removes the rule after [`FAULT`], waits for those pods.
/// Returns (requests during the fault, recovery time, the pods, the requests by verb).
async fn answers_error(
    rig: &mut Rig,
    prefix: &str,
    code: u16,
    retry_after: Option<u32>,
) -> support::Result<(usize, Duration, Vec<String>, String)> {
    let rule = rig.proxy.add(Rule::new(scheduler_request, Action::Respond { code, retry_after }));
    let t0 = Instant::now();
    // Pods arrive through the watches opened before the fault, so the scheduler decides binds
    // and every bind and status write meets the error.
    let during = rig.gangs(prefix, 4, 3, "500m").await?;
    tokio::time::sleep(FAULT).await;
    let t1 = Instant::now();
    rig.proxy.remove(rule);
    let sent = rig.proxy.count_between(t0, t1, scheduler_request);
    let what = breakdown(rig, t0, t1);
    let (most, pod) = most_bind_calls(rig, &during, t0, t1);
    let bound = bind_calls_bound(t1 - t0, retry_after);
    eprintln!("{}/{prefix}: at most {most} binding calls for one pod ({pod}) during the fault; bound {bound}", rig.name);
    assert!(most <= bound, "{code}: pod {pod} got {most} binding calls in {:?} (bound {bound}): {what}", t1 - t0);
    eprintln!("{}/{prefix}: requests during the fault: {what}", rig.name);
    let recovery = rig.wait_bound(&during, Duration::from_secs(90)).await?;
    rig.assert_running();
    rig.assert_bound_once(&during).await?;
    Ok((sent, recovery, during, what))
}

/// Requests per pending pod per second at most while the server answers errors: each pod is
/// decided again at most once per period after its bind failed, and each decision costs at most
/// 5 binding calls (100 ms doubling: 1.5 s), 3 calls for the `SchedulerError` condition and 3 for
/// the `FailedScheduling` event, about 4.4 a second, plus the PodGroup and Queue status writes.
/// A busy loop would be orders of magnitude above.
const PER_POD_PER_SECOND: usize = 8;

/// The binder's calls per decided bind (`BinderConfig::max_attempts`).
const BIND_ATTEMPTS: usize = 5;

/// The binder's waits between one bind's calls without `Retry-After`: 100 ms doubling, 1.5 s in
/// all for [`BIND_ATTEMPTS`] calls. The next decision of the same pod starts no earlier than its
/// last call.
const BIND_SPAN: Duration = Duration::from_millis(1500);

/// The stated bound of the one retry policy (docs/live-scheduler.md "One retry policy"), binding
/// calls for one pod while every call fails for `fault`: with `Retry-After: R`, every wait,
/// including the one before the bind is reported and decided again, is at least `R`, so at most
/// `1 + ⌊fault / R⌋`; without, decisions of [`BIND_ATTEMPTS`] calls that each span [`BIND_SPAN`]:
/// at most `BIND_ATTEMPTS × (⌊fault / BIND_SPAN⌋ + 1)`. The kube client adds none (its retry
/// layer is off); each call takes a token of the QPS limiter.
fn bind_calls_bound(fault: Duration, retry_after: Option<u32>) -> usize {
    match retry_after {
        Some(r) => 1 + (fault.as_secs() / u64::from(r)) as usize,
        None => BIND_ATTEMPTS * ((fault.as_millis() / BIND_SPAN.as_millis()) as usize + 1),
    }
}

/// The most binding calls any of `pods` got in `[from, to)`, with that pod.
fn most_bind_calls(rig: &Rig, pods: &[String], from: Instant, to: Instant) -> (usize, String) {
    let reqs = rig.proxy.requests();
    pods.iter()
        .map(|p| {
            let n = reqs
                .iter()
                .filter(|r| scheduler_request(r) && r.is_binding() && r.name == *p && r.at.is_some_and(|t| t >= from && t < to))
                .count();
            (n, p.clone())
        })
        .max()
        .unwrap_or_default()
}

/// Every request answered with an error for [`FAULT`], one fault after the other on one rig
/// (one scheduler, a new batch of pods per fault):
/// * 500 Internal Server Error: the binder retries a bind 5 times (100 ms doubling), then the
///   pod is pending again and the next cycle decides it again;
/// * 503 Service Unavailable (one call per binder attempt: kube-rs's own retry layer, which
///   would retry 503 up to 15 times inside each attempt, is off);
/// * 504 Gateway Timeout.
///
/// Each: bound [`PER_POD_PER_SECOND`] in all, and [`bind_calls_bound`] binding calls per pod
/// (20 in 5 s); recovery within 15 s; the pods bound before the faults stay bound once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_answers_500_503_504() -> support::Result<()> {
    let _serial = SERIAL.lock().await;
    let (mut rig, first) = error_rig("err5xx").await?;
    for code in [500, 503, 504] {
        let (sent, recovery, pods, what) = answers_error(&mut rig, &format!("during{code}"), code, None).await?;
        report(&format!("api_answers_{code}"), recovery, sent);
        let bound = PER_POD_PER_SECOND * pods.len() * FAULT.as_secs() as usize;
        assert!(sent <= bound, "{code}: {sent} requests in {FAULT:?} for {} pods (bound {bound}): {what}", pods.len());
        assert!(recovery <= Duration::from_secs(15), "{code}: recovered after {recovery:?}");
    }
    rig.assert_bound_once(&first).await?;
    Ok(())
}

/// 429 Too Many Requests with `Retry-After: 2` to every request for [`FAULT`]: the scheduler
/// waits as told between calls and before a failed bind is decided again, so each pod's bind is
/// tried at most `1 + ⌊5 s / 2 s⌋ = 3` times ([`bind_calls_bound`], checked in
/// [`answers_error`]), and all requests stay under [`PER_POD_PER_SECOND`]. Recovery within 15 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_answers_429_with_retry_after() -> support::Result<()> {
    let _serial = SERIAL.lock().await;
    let (mut rig, first) = error_rig("err429").await?;
    let (sent, recovery, pods, what) = answers_error(&mut rig, "during", 429, Some(2)).await?;
    report("api_answers_429_with_retry_after", recovery, sent);
    let reqs = rig.proxy.requests();
    let most = bind_calls_bound(FAULT, Some(2));
    let all = PER_POD_PER_SECOND * pods.len() * FAULT.as_secs() as usize;
    assert!(sent <= all, "{sent} requests in {FAULT:?} for {} pods (bound {all}): {what}", pods.len());
    for p in &pods {
        let tries = reqs.iter().filter(|r| r.is_binding() && r.name == *p && r.code == 429).count();
        assert!(tries <= most, "pod {p}: {tries} bind tries answered 429 in {FAULT:?}, Retry-After 2 s (at most {most})");
    }
    assert!(recovery <= Duration::from_secs(15), "recovered after {recovery:?}");
    rig.assert_bound_once(&first).await?;
    Ok(())
}

/// Every watch stream is reset, and every new watch is reset for [`FAULT`]: the watchers back
/// off (kube-rs: 0.8 s doubling, jittered) and the pods created meanwhile are bound once the
/// watches are back. Bound: 12 watch requests per kind while it lasts; recovery within 30 s
/// (one backoff step after the failures, plus a cycle).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_stream_dropped() -> support::Result<()> {
    let _serial = SERIAL.lock().await;
    let mut rig = rig("wdrop", 4, "8").await?;
    rig.start_single(&[])?;
    let first = rig.gangs("first", 4, 3, "500m").await?;
    rig.wait_bound(&first, Duration::from_secs(60)).await?;

    let t0 = Instant::now();
    let rule = rig.proxy.add(Rule::new(|r| scheduler_request(r) && r.is_watch(), Action::Reset));
    rig.proxy.drop_watches();
    let during = rig.gangs("during", 4, 3, "500m").await?;
    tokio::time::sleep(FAULT).await;
    let t1 = Instant::now();
    rig.proxy.remove(rule);
    let watches = rig.proxy.count_between(t0, t1, |r| scheduler_request(r) && r.is_watch());
    let all = rig.proxy.count_between(t0, t1, scheduler_request);
    assert_eq!(rig.bound(&during).await?, 0, "no watch, no news: nothing bound during the fault");
    let recovery = rig.wait_bound(&during, Duration::from_secs(90)).await?;
    report("watch_stream_dropped", recovery, all);
    assert!(watches <= 12 * 7, "{watches} watch requests in {FAULT:?} for 7 kinds");
    assert!(recovery <= Duration::from_secs(30), "recovered after {recovery:?}");
    rig.assert_running();
    rig.assert_bound_once(&first).await?;
    rig.assert_bound_once(&during).await?;
    Ok(())
}

/// Every watch stream goes silent with its connection open (a half-open connection). The
/// scheduler runs with `--watch-timeout=5s`: a stream silent for 5 s + 5 s is dropped and
/// reopened from its last resourceVersion, so pods created meanwhile are bound within 10 s of
/// the stall plus a cycle and the binds: recovery within 20 s of the stall's start. (With the
/// default `--watch-timeout=60s`, within 65 s; kube-rs's own default is 290 s.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_stream_stalled() -> support::Result<()> {
    let _serial = SERIAL.lock().await;
    let mut rig = rig("wstall", 4, "8").await?;
    rig.start_single(&["--watch-timeout=5s"])?;
    let first = rig.gangs("first", 4, 3, "500m").await?;
    rig.wait_bound(&first, Duration::from_secs(60)).await?;

    // Right after the watches reopen (each lasts 5 s), so the stall starts on fresh streams.
    let t0 = Instant::now();
    rig.proxy.stall_watches();
    let during = rig.gangs("during", 4, 3, "500m").await?;
    let recovery = rig.wait_bound(&during, Duration::from_secs(90)).await?;
    let sent = rig.proxy.count_since(t0, |r| scheduler_request(r) && r.is_watch());
    report("watch_stream_stalled", recovery, sent);
    assert!(recovery <= Duration::from_secs(20), "recovered {recovery:?} after the stall");
    // Reopened once per kind per 5 s, no faster.
    let secs = t0.elapsed().as_secs() as usize;
    assert!(sent <= 5 * (secs / 5 + 2), "{sent} watch requests in {secs} s");
    rig.assert_running();
    rig.assert_bound_once(&first).await?;
    rig.assert_bound_once(&during).await?;
    Ok(())
}

/// Every watch stream ends with an in-stream ERROR event `410 Gone`: each watcher relists (one
/// list per kind) and the mirror resyncs, losing nothing. Recovery within 10 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_ends_with_410_gone() -> support::Result<()> {
    let _serial = SERIAL.lock().await;
    let mut rig = rig("w410", 4, "8").await?;
    rig.start_single(&[])?;
    let first = rig.gangs("first", 4, 3, "500m").await?;
    rig.wait_bound(&first, Duration::from_secs(60)).await?;

    let t0 = Instant::now();
    rig.proxy.expire_watches();
    let during = rig.gangs("during", 4, 3, "500m").await?;
    let recovery = rig.wait_bound(&during, Duration::from_secs(60)).await?;
    report("watch_ends_with_410_gone", recovery, rig.proxy.count_since(t0, scheduler_request));
    // Each watcher relists after its backoff (0.8 s, jittered): all eleven within 15 s.
    let lists = support::wait_for("a relist of every kind", Duration::from_secs(15), || async {
        let n = rig.proxy.count_since(t0, |r| scheduler_request(r) && r.verb == "list");
        Ok((n >= 7).then_some(n))
    })
    .await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let lists = lists.max(rig.proxy.count_since(t0, |r| scheduler_request(r) && r.verb == "list"));
    assert!(lists <= 14, "one relist per kind after the 410, got {lists} lists");
    assert!(recovery <= Duration::from_secs(10), "recovered after {recovery:?}");
    rig.assert_running();
    rig.assert_bound_once(&first).await?;
    rig.assert_bound_once(&during).await?;
    Ok(())
}

/// Every bind is held 3 s before it reaches the server (the period is 1 s): a decided bind
/// keeps its node reserved, so nothing is decided twice and no node is over-committed. The
/// cluster is exactly full: 4 nodes × 2 cpu, 12 pods of 1 cpu in gangs of 2 (8 fit, 2 gangs
/// wait). One binding request per bound pod, none for the others.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binds_delayed_past_the_period() -> support::Result<()> {
    let _serial = SERIAL.lock().await;
    let mut rig = rig("slowbind", 4, "2").await?;
    let rule = rig.proxy.add(Rule::new(ApiRequest::is_binding, Action::Delay(Duration::from_secs(3))));
    rig.start_single(&[])?;
    let t0 = Instant::now();
    let pods = rig.gangs("job", 6, 2, "1").await?;
    let bound = support::wait_for("8 pods bound", Duration::from_secs(60), || async {
        let n = rig.bound(&pods).await?;
        Ok((n >= 8).then_some(n))
    })
    .await?;
    // Several more periods with the binds long done: nothing else may be bound.
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(rig.bound(&pods).await?, 8, "exactly the 8 that fit are bound (was {bound})");
    rig.assert_fit().await?;
    let binds = rig.proxy.count_since(t0, ApiRequest::is_binding);
    report("binds_delayed_past_the_period", t0.elapsed(), binds);
    assert_eq!(binds, 8, "one binding request per bound pod: no bind decided twice");
    let audit = rig.server.audit()?.by_user(e2e::SCHEDULER_USER);
    let counts = audit.binding_counts();
    for p in &pods {
        let c = counts.get(&(rig.ns.clone(), p.clone())).copied().unwrap_or_default();
        assert!(c.succeeded <= 1 && c.failed == 0, "pod {p}: {c:?}");
    }
    rig.proxy.remove(rule);
    rig.assert_running();
    Ok(())
}

/// The first binding of each pod reaches the server and binds it, but its answer is dropped
/// (connection closed): the binder retries, the server answers 409 "already assigned to node
/// X" with X the node chosen, and that counts as bound. Exactly one successful binding and one
/// `Scheduled` event per pod; at most 2 binding requests per pod. Recovery within 10 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bind_response_dropped() -> support::Result<()> {
    let _serial = SERIAL.lock().await;
    let mut rig = rig("dropbind", 4, "8").await?;
    let seen: Arc<Mutex<HashSet<String>>> = Arc::default();
    let first_bind = {
        let seen = seen.clone();
        move |r: &ApiRequest| r.is_binding() && seen.lock().map(|mut s| s.insert(r.name.clone())).unwrap_or(false)
    };
    rig.proxy.add(Rule::new(first_bind, Action::DropResponse));
    rig.start_single(&[])?;
    let t0 = Instant::now();
    let pods = rig.gangs("job", 4, 3, "500m").await?;
    let took = rig.wait_bound(&pods, Duration::from_secs(60)).await?;
    report("bind_response_dropped", took, rig.proxy.count_since(t0, ApiRequest::is_binding));
    assert!(took <= Duration::from_secs(10), "bound after {took:?}");
    rig.assert_bound_once(&pods).await?;
    // The `Scheduled` event is written once the binder has its answer: after the retry.
    let events = support::wait_for("a Scheduled event per pod", Duration::from_secs(30), || async {
        let evs = e2e::events(&rig.admin, &rig.ns).await?;
        let scheduled: Vec<String> = evs
            .iter()
            // Pods' events only: a PodGroup that becomes Running gets a `Scheduled` event too.
            .filter(|e| e.reason.as_deref() == Some("Scheduled") && e.involved_object.kind.as_deref() == Some("Pod"))
            .filter_map(|e| e.involved_object.name.clone())
            .collect();
        Ok((scheduled.len() >= pods.len()).then_some(scheduled))
    })
    .await?;
    let distinct: HashSet<&String> = events.iter().collect();
    assert_eq!((events.len(), distinct.len()), (pods.len(), pods.len()), "one Scheduled event per pod: {events:?}");
    let reqs = rig.proxy.requests();
    for p in &pods {
        let n = reqs.iter().filter(|r| r.is_binding() && r.name == *p).count();
        assert_eq!(n, 2, "pod {p}: {n} binding requests (the dropped one and one retry)");
    }
    rig.assert_running();
    Ok(())
}

/// The pod named in the scheduler's first binding is bound by a second client to another node
/// (outside the scheduler's pool) just before the scheduler's binding reaches the server: the
/// server refuses it (409, assigned elsewhere), the scheduler takes the API's word, does not
/// try again and binds the others. No binding of that pod by the scheduler succeeds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn second_client_binds_the_pod_first() -> support::Result<()> {
    let _serial = SERIAL.lock().await;
    let mut rig = rig("racebind", 4, "8").await?;
    let outsider = format!("{}-outsider", rig.name);
    support::create_node(&rig.admin, &support::TestNode::new(&outsider)).await?;
    let victim: Arc<Mutex<Option<String>>> = Arc::default();
    let (admin, ns, node, v) = (rig.admin.clone(), rig.ns.clone(), outsider.clone(), victim.clone());
    let first_bind = move |r: &ApiRequest| r.is_binding();
    rig.proxy.add(
        Rule::new(
            first_bind,
            Action::Before(Arc::new(move |r: ApiRequest| {
                let (admin, ns, node, v) = (admin.clone(), ns.clone(), node.clone(), v.clone());
                async move {
                    if let Ok(mut g) = v.lock() {
                        *g = Some(r.name.clone());
                    }
                    if let Err(e) = bind_pod(&admin, &ns, &r.name, &node).await {
                        eprintln!("second client's bind of {}: {e}", r.name);
                    }
                }
                .boxed()
            })),
        )
        .times(1),
    );
    rig.start_single(&[])?;
    let t0 = Instant::now();
    let pods = rig.gangs("job", 6, 1, "500m").await?;
    let took = rig.wait_bound(&pods, Duration::from_secs(60)).await?;
    let victim = victim.lock().map(|g| g.clone()).unwrap_or_default().ok_or("no binding was intercepted")?;
    // A few more cycles: the scheduler must not try the victim again.
    tokio::time::sleep(Duration::from_secs(3)).await;
    report("second_client_binds_the_pod_first", took, rig.proxy.count_since(t0, scheduler_request));
    let all = e2e::pods(&rig.admin, &rig.ns).await?;
    assert_eq!(e2e::node_of(&all[&victim]), outsider, "the second client's bind stands");
    let audit = rig.server.audit()?.by_user(e2e::SCHEDULER_USER);
    let c = audit.bindings_of(&rig.ns, &victim);
    assert_eq!(c.succeeded, 0, "the scheduler never bound {victim}: {c:?}");
    let tries = rig.proxy.count_since(t0, |r| r.is_binding() && r.name == victim);
    assert!(tries <= 2, "{tries} binding requests for {victim}");
    let others: Vec<String> = pods.iter().filter(|p| **p != victim).cloned().collect();
    rig.assert_bound_once(&others).await?;
    let writes = rig.proxy.count_since(t0, |r| r.name == victim && r.subresource == "status" && r.verb == "update");
    assert!(writes <= 1, "{writes} status writes for {victim}: no condition loop");
    rig.assert_running();
    Ok(())
}

/// The pod named in the scheduler's first binding is deleted by a second client just before
/// the binding reaches the server (404): the scheduler drops it, frees its reservation and
/// binds the rest. The cluster is exactly full (2 nodes × 2 cpu, 4 pods of 1 cpu), and a fifth
/// pod created afterwards fits only in the deleted pod's place: it is bound within 10 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn second_client_deletes_the_pod_first() -> support::Result<()> {
    let _serial = SERIAL.lock().await;
    let mut rig = rig("racedel", 2, "2").await?;
    let victim: Arc<Mutex<Option<String>>> = Arc::default();
    let (admin, ns, v) = (rig.admin.clone(), rig.ns.clone(), victim.clone());
    rig.proxy.add(
        Rule::new(
            ApiRequest::is_binding,
            Action::Before(Arc::new(move |r: ApiRequest| {
                let (admin, ns, v) = (admin.clone(), ns.clone(), v.clone());
                async move {
                    if let Ok(mut g) = v.lock() {
                        *g = Some(r.name.clone());
                    }
                    if let Err(e) = delete_pod_now(&admin, &ns, &r.name).await {
                        eprintln!("second client's delete of {}: {e}", r.name);
                    }
                }
                .boxed()
            })),
        )
        .times(1),
    );
    rig.start_single(&[])?;
    let t0 = Instant::now();
    let pods = rig.gangs("job", 4, 1, "1").await?;
    let victim = support::wait_for("the intercepted binding", Duration::from_secs(30), || async {
        Ok(victim.lock().map(|g| g.clone()).unwrap_or_default())
    })
    .await?;
    let others: Vec<String> = pods.iter().filter(|p| **p != victim).cloned().collect();
    rig.wait_bound(&others, Duration::from_secs(60)).await?;
    let late = rig.gangs("late", 1, 1, "1").await?;
    let took = rig.wait_bound(&late, Duration::from_secs(30)).await?;
    report("second_client_deletes_the_pod_first", took, rig.proxy.count_since(t0, scheduler_request));
    assert!(took <= Duration::from_secs(10), "the freed place was used after {took:?}");
    assert!(!e2e::pods(&rig.admin, &rig.ns).await?.contains_key(&victim), "{victim} stays deleted");
    let audit = rig.server.audit()?.by_user(e2e::SCHEDULER_USER);
    assert_eq!(audit.bindings_of(&rig.ns, &victim).succeeded, 0);
    let tries = rig.proxy.count_since(t0, |r| r.is_binding() && r.name == victim);
    assert_eq!(tries, 1, "the deleted pod is not tried again");
    rig.assert_bound_once(&others).await?;
    rig.assert_bound_once(&late).await?;
    rig.assert_fit().await?;
    rig.assert_running();
    Ok(())
}
