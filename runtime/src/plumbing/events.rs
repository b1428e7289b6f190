//! The `v1` Event recorder every process shares (`basalt scheduler`'s status writer,
//! [`crate::live::status`], and `basalt controller`), with client-go's `EventRecorder`
//! semantics (`tools/record`, the `EventCorrelator`'s event logger): an event with the same
//! involved object (kind, namespace, name, UID), type, reason, message and source component as
//! one recorded within [`CORRELATION_WINDOW`] is not created again: the Event already written
//! gets `count` + 1 and a new `lastTimestamp` by a merge patch. So a controller retrying a Job
//! whose pods the API server refuses shows one `FailedCreate` Event whose count grows, not a
//! new Event per retry.
//!
//! * [`Correlator`]: the pure part (which Events were written, create or patch), bounded to
//!   [`MAX_SEEN`] entries (client-go's LRU of 4096), the oldest dropped first;
//! * [`EventRecorder`]: one process's recorder (client, component, rate limit): [`EventRecorder::record`]
//!   writes one event and says how many calls it made; a patch that finds the Event gone (404:
//!   its TTL expired, someone deleted it) creates a new one, as client-go does;
//! * [`EventSink`]: a recorder behind a queue and one writer task (client-go's broadcaster):
//!   [`EventSink::event`] never waits; failures are logged at `warn`.
//!
//! Not done: client-go's spam filter (25 events per object and source, then one per 5 minutes)
//! and its aggregation of *similar* events (same reason, different messages) into
//! "(combined from similar events)".

use super::api_errors::{not_found, transient};
use super::limiter::RateLimiter;
use super::retry::Backoff;
use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, ObjectMeta, Patch, PatchParams, PostParams};
use kube::Client;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// How long after it was last recorded an event is still bumped instead of created again
/// (client-go's `defaultAggregateIntervalInSeconds`: 10 minutes).
pub const CORRELATION_WINDOW: Duration = Duration::from_secs(600);

/// Recorded events remembered at most (client-go's `maxLruCacheEntries`: 4096).
pub const MAX_SEEN: usize = 4096;

/// The object an event is about.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Involved {
    /// `Pod`, `PodGroup`, `Job`.
    pub kind: &'static str,
    /// `v1`, `scheduling.volcano.sh/v1beta1`, `batch.volcano.sh/v1alpha1`.
    pub api_version: &'static str,
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// UID (empty when unknown).
    pub uid: String,
}

/// `Normal` or `Warning` (the two types Kubernetes knows).
pub const NORMAL: &str = "Normal";
/// See [`NORMAL`].
pub const WARNING: &str = "Warning";

/// What makes two events the same one (client-go's `getEventKey` without the source host).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    involved: Involved,
    type_: String,
    reason: String,
    message: String,
}

#[derive(Clone, Debug)]
struct Seen {
    name: String,
    count: i32,
    first: Time,
    last: Instant,
}

/// What to write for one event.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// A new Event (count 1, or the count carried on after the old Event vanished).
    Create(Box<Event>),
    /// The same event was written as Event `name`: set its `count` and `lastTimestamp`.
    Patch {
        /// The Event's name (in the involved object's namespace).
        name: String,
        /// The new count.
        count: i32,
        /// The new `lastTimestamp`.
        last_timestamp: Time,
    },
}

/// The pure part of the recorder: the events written within the window, per [`Key`].
#[derive(Debug)]
pub struct Correlator {
    component: String,
    window: Duration,
    max: usize,
    seen: HashMap<Key, Seen>,
}

impl Correlator {
    /// A correlator for events of `component` (`source.component`, `reportingComponent`),
    /// remembering each for `window`, at most `max` at once.
    pub fn new(component: &str, window: Duration, max: usize) -> Correlator {
        Correlator { component: component.to_string(), window, max: max.max(1), seen: HashMap::new() }
    }

    /// What to write for an event observed at `now` (monotonic; `wall` the same instant as a
    /// timestamp): [`Decision::Patch`] when the same event was written within the window,
    /// else [`Decision::Create`]. The decision is remembered as written; call [`Self::forget`]
    /// when the write failed.
    pub fn observe(
        &mut self,
        now: Instant,
        wall: Timestamp,
        involved: &Involved,
        type_: &str,
        reason: &str,
        message: &str,
    ) -> Decision {
        let key = Key {
            involved: involved.clone(),
            type_: type_.to_string(),
            reason: reason.to_string(),
            message: message.to_string(),
        };
        let stamp = Time(wall);
        if let Some(s) = self.seen.get_mut(&key) {
            if now.saturating_duration_since(s.last) <= self.window {
                s.count += 1;
                s.last = now;
                return Decision::Patch { name: s.name.clone(), count: s.count, last_timestamp: stamp };
            }
        }
        if self.seen.len() >= self.max && !self.seen.contains_key(&key) {
            if let Some(oldest) = self.seen.iter().min_by_key(|(_, s)| s.last).map(|(k, _)| k.clone()) {
                self.seen.remove(&oldest);
            }
        }
        let name = format!("{}.{:x}", involved.name, wall.as_nanosecond());
        let ev = self.event(&name, involved, type_, reason, message, 1, stamp.clone(), stamp.clone());
        self.seen.insert(key, Seen { name, count: 1, first: stamp, last: now });
        Decision::Create(Box::new(ev))
    }

    /// The Event to create when a patch found Event `gone` deleted: a new name, the count and
    /// first timestamp carried on (client-go recreates it the same way).
    pub fn recreate(&mut self, wall: Timestamp, involved: &Involved, type_: &str, reason: &str, message: &str) -> Option<Event> {
        let key = Key {
            involved: involved.clone(),
            type_: type_.to_string(),
            reason: reason.to_string(),
            message: message.to_string(),
        };
        let s = self.seen.get_mut(&key)?;
        s.name = format!("{}.{:x}", involved.name, wall.as_nanosecond());
        let (name, count, first) = (s.name.clone(), s.count, s.first.clone());
        Some(self.event(&name, involved, type_, reason, message, count, first, Time(wall)))
    }

    /// Forgets an event whose write failed, so the next one creates it again.
    pub fn forget(&mut self, involved: &Involved, type_: &str, reason: &str, message: &str) {
        let key = Key {
            involved: involved.clone(),
            type_: type_.to_string(),
            reason: reason.to_string(),
            message: message.to_string(),
        };
        self.seen.remove(&key);
    }

    /// Events remembered.
    pub fn len(&self) -> usize {
        self.seen.len()
    }

    /// Whether none is remembered.
    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }

    #[allow(clippy::too_many_arguments)]
    fn event(
        &self,
        name: &str,
        involved: &Involved,
        type_: &str,
        reason: &str,
        message: &str,
        count: i32,
        first: Time,
        last: Time,
    ) -> Event {
        Event {
            metadata: ObjectMeta {
                name: Some(name.to_string()),
                namespace: Some(involved.namespace.clone()),
                ..Default::default()
            },
            involved_object: ObjectReference {
                kind: Some(involved.kind.into()),
                api_version: Some(involved.api_version.into()),
                namespace: Some(involved.namespace.clone()),
                name: Some(involved.name.clone()),
                uid: (!involved.uid.is_empty()).then(|| involved.uid.clone()),
                ..Default::default()
            },
            reason: Some(reason.into()),
            message: Some(message.into()),
            type_: Some(type_.into()),
            source: Some(EventSource { component: Some(self.component.clone()), host: None }),
            reporting_component: Some(self.component.clone()),
            reporting_instance: Some(self.component.clone()),
            first_timestamp: Some(first),
            last_timestamp: Some(last),
            count: Some(count),
            ..Default::default()
        }
    }
}

/// How one [`EventRecorder::record`] ended.
#[derive(Debug)]
pub struct Recorded {
    /// API calls made (creates, patches, retries).
    pub calls: u32,
    /// `Ok`, or the last error.
    pub outcome: Result<(), String>,
}

/// One process's event recorder.
pub struct EventRecorder {
    client: Client,
    limiter: Option<Arc<RateLimiter>>,
    timeout: Duration,
    max_attempts: u32,
    correlator: Mutex<Correlator>,
}

impl EventRecorder {
    /// A recorder writing as `component` through `client`, each call behind `limiter` (when
    /// given) and `timeout`, a transient failure (timeout, transport, 429, 5xx) retried up to
    /// `max_attempts` calls.
    pub fn new(
        client: Client,
        component: &str,
        limiter: Option<Arc<RateLimiter>>,
        timeout: Duration,
        max_attempts: u32,
    ) -> EventRecorder {
        EventRecorder {
            client,
            limiter,
            timeout,
            max_attempts: max_attempts.max(1),
            correlator: Mutex::new(Correlator::new(component, CORRELATION_WINDOW, MAX_SEEN)),
        }
    }

    async fn call<T>(
        &self,
        calls: &mut u32,
        f: impl std::future::Future<Output = Result<T, kube::Error>>,
    ) -> Result<T, kube::Error> {
        if let Some(l) = &self.limiter {
            l.acquire().await;
        }
        *calls += 1;
        match tokio::time::timeout(self.timeout, f).await {
            Ok(r) => r,
            Err(_) => Err(kube::Error::Service(format!("timed out after {:?}", self.timeout).into())),
        }
    }

    fn correlator(&self) -> std::sync::MutexGuard<'_, Correlator> {
        self.correlator.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records one event: creates it, or bumps the Event written for the same one within
    /// [`CORRELATION_WINDOW`]. Events of one recorder should be recorded one at a time (as
    /// [`EventSink`] does): two at once of the same event may both be created.
    pub async fn record(&self, involved: &Involved, type_: &str, reason: &str, message: &str) -> Recorded {
        let decision = self.correlator().observe(Instant::now(), Timestamp::now(), involved, type_, reason, message);
        let api: Api<Event> = Api::namespaced(self.client.clone(), &involved.namespace);
        let mut calls = 0;
        let mut last = String::new();
        let mut create = match decision {
            Decision::Create(ev) => Some(*ev),
            Decision::Patch { name, count, last_timestamp } => {
                let body = serde_json::json!({"count": count, "lastTimestamp": last_timestamp});
                let mut gone = false;
                let mut backoff = Backoff::new(Duration::from_millis(200), Duration::from_secs(5));
                for _ in 0..self.max_attempts {
                    match self.call(&mut calls, api.patch(&name, &PatchParams::default(), &Patch::Merge(&body))).await {
                        Ok(_) => return Recorded { calls, outcome: Ok(()) },
                        Err(e) if not_found(&e) => {
                            gone = true;
                            break;
                        }
                        Err(e) if transient(&e) => {
                            last = e.to_string();
                            tokio::time::sleep(backoff.delay(Some(&e))).await;
                        }
                        Err(e) => {
                            last = e.to_string();
                            break;
                        }
                    }
                }
                if !gone {
                    return Recorded {
                        calls,
                        outcome: Err(format!("Event {}/{name}: patching count: {last}", involved.namespace)),
                    };
                }
                self.correlator().recreate(Timestamp::now(), involved, type_, reason, message)
            }
        };
        let Some(ev) = create.take() else { return Recorded { calls, outcome: Ok(()) } };
        let mut backoff = Backoff::new(Duration::from_millis(200), Duration::from_secs(5));
        for _ in 0..self.max_attempts {
            match self.call(&mut calls, api.create(&PostParams::default(), &ev)).await {
                Ok(_) => return Recorded { calls, outcome: Ok(()) },
                Err(e) if transient(&e) => {
                    last = e.to_string();
                    tokio::time::sleep(backoff.delay(Some(&e))).await;
                }
                Err(e) => {
                    last = e.to_string();
                    break;
                }
            }
        }
        self.correlator().forget(involved, type_, reason, message);
        Recorded {
            calls,
            outcome: Err(format!(
                "Event {reason} on {} {}/{}: creating: {last}",
                involved.kind, involved.namespace, involved.name
            )),
        }
    }

    /// Events this recorder remembers (for tests and metrics).
    pub fn remembered(&self) -> usize {
        self.correlator().len()
    }
}

/// An [`EventRecorder`] behind a queue and one writer task, as client-go's broadcaster: events
/// are written in order, one at a time, and [`EventSink::event`] never waits. Dropping every
/// clone stops the writer once the queue is empty.
#[derive(Clone)]
pub struct EventSink {
    tx: mpsc::UnboundedSender<(Involved, &'static str, String, String)>,
}

impl EventSink {
    /// Starts the writer task of `recorder` (on the current tokio runtime).
    pub fn spawn(recorder: Arc<EventRecorder>) -> EventSink {
        let (tx, mut rx) = mpsc::unbounded_channel::<(Involved, &'static str, String, String)>();
        tokio::spawn(async move {
            while let Some((involved, type_, reason, message)) = rx.recv().await {
                if let Err(e) = recorder.record(&involved, type_, &reason, &message).await.outcome {
                    tracing::warn!("event not recorded: {e}");
                }
            }
        });
        EventSink { tx }
    }

    /// Queues an event of `type_` ([`NORMAL`] or [`WARNING`]) about `involved`.
    pub fn event(&self, involved: Involved, type_: &'static str, reason: &str, message: &str) {
        let _ = self.tx.send((involved, type_, reason.to_string(), message.to_string()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str) -> Involved {
        Involved { kind: "Pod", api_version: "v1", namespace: "ns".into(), name: name.into(), uid: format!("uid-{name}") }
    }

    fn at(c: &mut Correlator, t0: Instant, secs: u64, who: &str, reason: &str, msg: &str) -> Decision {
        let wall = Timestamp::from_second(1_700_000_000 + secs as i64).unwrap();
        c.observe(t0 + Duration::from_secs(secs), wall, &pod(who), WARNING, reason, msg)
    }

    #[test]
    fn the_same_event_within_the_window_bumps_count_and_last_timestamp() {
        let mut c = Correlator::new("vc-controller-manager", CORRELATION_WINDOW, MAX_SEEN);
        let t0 = Instant::now();
        let Decision::Create(first) = at(&mut c, t0, 0, "p", "FailedCreate", "boom") else { panic!("first is created") };
        assert_eq!(first.count, Some(1));
        assert_eq!(first.source.as_ref().and_then(|s| s.component.as_deref()), Some("vc-controller-manager"));
        assert_eq!(first.involved_object.uid.as_deref(), Some("uid-p"));
        let name = first.metadata.name.clone().unwrap();
        assert!(name.starts_with("p."), "{name}");
        match at(&mut c, t0, 30, "p", "FailedCreate", "boom") {
            Decision::Patch { name: n, count, last_timestamp } => {
                assert_eq!((n.as_str(), count), (name.as_str(), 2));
                assert_eq!(last_timestamp.0.as_second(), 1_700_000_030);
            }
            d => panic!("a repeat is a patch: {d:?}"),
        }
        // The window runs from the last repeat.
        assert!(matches!(at(&mut c, t0, 600, "p", "FailedCreate", "boom"), Decision::Patch { count: 3, .. }));
        assert_eq!(c.len(), 1);
    }

    #[test]
    fn another_message_reason_type_or_object_is_another_event() {
        let mut c = Correlator::new("volcano", CORRELATION_WINDOW, MAX_SEEN);
        let t0 = Instant::now();
        assert!(matches!(at(&mut c, t0, 0, "p", "FailedCreate", "a"), Decision::Create(_)));
        assert!(matches!(at(&mut c, t0, 1, "p", "FailedCreate", "b"), Decision::Create(_)), "message differs");
        assert!(matches!(at(&mut c, t0, 2, "p", "FailedDelete", "a"), Decision::Create(_)), "reason differs");
        assert!(matches!(at(&mut c, t0, 3, "q", "FailedCreate", "a"), Decision::Create(_)), "object differs");
        let normal = c.observe(t0 + Duration::from_secs(4), Timestamp::now(), &pod("p"), NORMAL, "FailedCreate", "a");
        assert!(matches!(normal, Decision::Create(_)), "type differs");
        let mut other_uid = pod("p");
        other_uid.uid = "recreated".into();
        let d = c.observe(t0 + Duration::from_secs(5), Timestamp::now(), &other_uid, WARNING, "FailedCreate", "a");
        assert!(matches!(d, Decision::Create(_)), "a recreated object (new UID) is another object");
        assert!(matches!(at(&mut c, t0, 6, "p", "FailedCreate", "a"), Decision::Patch { count: 2, .. }));
    }

    #[test]
    fn past_the_window_the_event_is_created_again() {
        let mut c = Correlator::new("volcano", Duration::from_secs(60), MAX_SEEN);
        let t0 = Instant::now();
        assert!(matches!(at(&mut c, t0, 0, "p", "R", "m"), Decision::Create(_)));
        let Decision::Create(again) = at(&mut c, t0, 61, "p", "R", "m") else { panic!("61 s later: created again") };
        assert_eq!(again.count, Some(1));
        assert!(matches!(at(&mut c, t0, 62, "p", "R", "m"), Decision::Patch { count: 2, .. }));
    }

    #[test]
    fn a_failed_write_is_forgotten_and_a_vanished_event_recreated_with_its_count() {
        let mut c = Correlator::new("volcano", CORRELATION_WINDOW, MAX_SEEN);
        let t0 = Instant::now();
        at(&mut c, t0, 0, "p", "R", "m");
        c.forget(&pod("p"), WARNING, "R", "m");
        assert!(matches!(at(&mut c, t0, 1, "p", "R", "m"), Decision::Create(_)), "the failed create is not patched");
        assert!(matches!(at(&mut c, t0, 2, "p", "R", "m"), Decision::Patch { count: 2, .. }));
        let wall = Timestamp::from_second(1_700_000_100).unwrap();
        let ev = c.recreate(wall, &pod("p"), WARNING, "R", "m").expect("remembered");
        assert_eq!(ev.count, Some(2), "the count carries on");
        assert_eq!(ev.first_timestamp.as_ref().map(|t| t.0.as_second()), Some(1_700_000_001));
        let Decision::Patch { name, count, .. } = at(&mut c, t0, 3, "p", "R", "m") else { panic!("patch") };
        assert_eq!((name, count), (ev.metadata.name.unwrap(), 3), "later repeats patch the new Event");
        assert!(c.recreate(wall, &pod("never"), WARNING, "R", "m").is_none());
    }

    #[test]
    fn the_oldest_entry_goes_when_full() {
        let mut c = Correlator::new("volcano", CORRELATION_WINDOW, 2);
        let t0 = Instant::now();
        at(&mut c, t0, 0, "a", "R", "m");
        at(&mut c, t0, 1, "b", "R", "m");
        at(&mut c, t0, 2, "a", "R", "m");
        at(&mut c, t0, 3, "c", "R", "m");
        assert_eq!(c.len(), 2);
        assert!(matches!(at(&mut c, t0, 4, "a", "R", "m"), Decision::Patch { count: 3, .. }), "a was used last");
        assert!(matches!(at(&mut c, t0, 5, "b", "R", "m"), Decision::Create(_)), "b was the oldest");
    }
}
