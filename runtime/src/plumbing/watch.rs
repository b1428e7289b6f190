//! The one watch loop every process runs: a kube-rs `watcher` stream (which relists on its own
//! after a `410 Gone` or a broken stream, with its default exponential backoff on errors; a
//! relist arrives as `Init … InitApply … InitDone`), each event counted and handed to a handler,
//! each stream error counted and logged with the kind it watches. The scheduler's watches
//! ([`crate::live::watch`]) and the controller's ([`crate::controller::run`],
//! [`crate::controller::pg_controller`], [`crate::controller::queue_controller`]) are this loop
//! with their own handlers.

use futures::{Stream, StreamExt};
use kube::api::Api;
use kube::runtime::watcher::{self, watcher, Event};
use kube::runtime::WatchStreamExt;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};

/// Counters of the watch streams.
#[derive(Debug, Default)]
pub struct WatchStats {
    /// Events delivered.
    pub events: AtomicU64,
    /// Stream errors (each followed by a backoff and a retry).
    pub errors: AtomicU64,
    /// Relists started (the first list included).
    pub relists: AtomicU64,
}

/// The event stream of `api` under `cfg`, with kube-rs's default backoff after errors.
pub fn stream<K>(api: Api<K>, cfg: watcher::Config) -> impl Stream<Item = Result<Event<K>, watcher::Error>>
where
    K: kube::Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned + Send + 'static,
{
    watcher(api, cfg).default_backoff()
}

/// Runs `events` to its end (a kube-rs watcher never ends on its own): every event is counted in
/// `stats` (an `Init` also as a relist) and passed to `handle`, whose `false` stops the loop;
/// every error is counted and logged as `<what> watch failed (retrying with backoff)`, and the
/// stream goes on (it retries itself). `what` names the watched kind (`Pod`, `PodGroup`, …).
pub async fn run<K, S, F, Fut>(what: &str, events: S, stats: &WatchStats, mut handle: F)
where
    S: Stream<Item = Result<Event<K>, watcher::Error>>,
    F: FnMut(Event<K>) -> Fut,
    Fut: Future<Output = bool>,
{
    futures::pin_mut!(events);
    while let Some(item) = events.next().await {
        match item {
            Ok(ev) => {
                stats.events.fetch_add(1, Ordering::Relaxed);
                if matches!(ev, Event::Init) {
                    stats.relists.fetch_add(1, Ordering::Relaxed);
                }
                if !handle(ev).await {
                    return;
                }
            }
            Err(e) => {
                stats.errors.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(kind = what, "{what} watch failed (retrying with backoff): {e}");
            }
        }
    }
}

/// Whether `ev` ends a watch's first list: true once, for the first `InitDone` seen through the
/// same `first` flag (the controller's workers wait for every watch's first list).
pub fn first_listed<K>(ev: &Event<K>, first: &mut bool) -> bool {
    if matches!(ev, Event::InitDone) && *first {
        *first = false;
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::stream;
    use std::sync::atomic::Ordering::Relaxed;

    fn ok(e: Event<u32>) -> Result<Event<u32>, watcher::Error> {
        Ok(e)
    }

    #[tokio::test]
    async fn every_event_reaches_the_handler_and_is_counted() {
        let events = stream::iter(vec![
            ok(Event::Init),
            ok(Event::InitApply(1)),
            ok(Event::InitDone),
            ok(Event::Apply(2)),
            Err(watcher::Error::NoResourceVersion),
            ok(Event::Delete(1)),
            ok(Event::Init),
            ok(Event::InitDone),
        ]);
        let stats = WatchStats::default();
        let mut seen = Vec::new();
        let mut first = true;
        let mut listed = 0;
        run("Thing", events, &stats, |ev| {
            if first_listed(&ev, &mut first) {
                listed += 1;
            }
            seen.push(format!("{ev:?}"));
            std::future::ready(true)
        })
        .await;
        assert_eq!(seen.len(), 7, "{seen:?}");
        assert_eq!(seen[4], "Delete(1)");
        assert_eq!((stats.events.load(Relaxed), stats.errors.load(Relaxed), stats.relists.load(Relaxed)), (7, 1, 2));
        assert_eq!(listed, 1, "only the first InitDone ends the first list");
    }

    #[tokio::test]
    async fn a_false_from_the_handler_stops_the_loop() {
        let events = stream::iter(vec![ok(Event::Apply(1)), ok(Event::Apply(2)), ok(Event::Apply(3))]);
        let stats = WatchStats::default();
        let mut n = 0;
        run("Thing", events, &stats, |_| {
            n += 1;
            std::future::ready(n < 2)
        })
        .await;
        assert_eq!((n, stats.events.load(Relaxed)), (2, 2));
    }
}
