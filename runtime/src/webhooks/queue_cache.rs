//! The Queue cache the queue, job and PodGroup rules read (Volcano: a Queue informer with a
//! parent index): one watch on [`crate::plumbing::watch`]; a relist builds a fresh index and
//! swaps it in at its end, so a Queue deleted while the watch was down does not linger.

use crate::admission::QueueIndex;
use crate::crd::Queue;
use crate::plumbing::watch::{self, WatchStats};
use kube::api::Api;
use kube::runtime::watcher::{self as kwatcher, Event};
use std::sync::{Arc, RwLock};
use tokio::sync::watch as tokio_watch;

/// Applies one watch event to `ix`; `relist` holds the index being rebuilt by a relist. Returns
/// true when a list has just ended.
pub fn apply(ix: &RwLock<QueueIndex>, relist: &mut Option<QueueIndex>, ev: Event<Queue>) -> bool {
    let write = || ix.write().unwrap_or_else(|e| e.into_inner());
    match ev {
        Event::Init => *relist = Some(QueueIndex::default()),
        Event::InitApply(q) => relist.get_or_insert_with(QueueIndex::default).upsert(q),
        Event::InitDone => {
            *write() = relist.take().unwrap_or_default();
            return true;
        }
        Event::Apply(q) => write().upsert(q),
        Event::Delete(q) => {
            if let Some(n) = q.metadata.name.as_deref() {
                write().remove(n);
            }
        }
    }
    false
}

/// Starts the watch; the receiver turns true once the first list is in.
pub fn start(client: kube::Client, ix: Arc<RwLock<QueueIndex>>, stats: Arc<WatchStats>) -> tokio_watch::Receiver<bool> {
    let (tx, rx) = tokio_watch::channel(false);
    tokio::spawn(async move {
        let api: Api<Queue> = Api::all(client);
        let mut relist = None;
        watch::run("Queue", watch::stream(api, kwatcher::Config::default()), &stats, |ev| {
            if apply(&ix, &mut relist, ev) {
                let _ = tx.send(true);
            }
            std::future::ready(true)
        })
        .await;
    });
    rx
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(name: &str) -> Queue {
        Queue::new(name, Default::default())
    }

    #[test]
    fn a_relist_replaces_the_index() {
        let ix = RwLock::new(QueueIndex::default());
        let mut relist = None;
        for ev in [Event::Init, Event::InitApply(q("a")), Event::InitApply(q("b"))] {
            assert!(!apply(&ix, &mut relist, ev));
        }
        assert!(ix.read().unwrap().is_empty(), "nothing is visible before the list ends");
        assert!(apply(&ix, &mut relist, Event::InitDone));
        assert_eq!(ix.read().unwrap().len(), 2);
        apply(&ix, &mut relist, Event::Delete(q("a")));
        apply(&ix, &mut relist, Event::Apply(q("c")));
        for ev in [Event::Init, Event::InitApply(q("c")), Event::InitDone] {
            apply(&ix, &mut relist, ev);
        }
        let names: Vec<String> = ix.read().unwrap().all().filter_map(|q| q.metadata.name.clone()).collect();
        assert_eq!(names, ["c"], "b, gone while the watch was down, is dropped by the relist");
    }
}
