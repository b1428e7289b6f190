//! `session_reclaim`: reclaim with proportion on full production-like clusters: victims only Running, of reclaimable queues over their deserved share, each for a reclaimer of another queue pipelined on its node.
//! See `common/evict.rs` for the input, the cluster and the invariants checked after every cycle.

#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: common::evict::EvictInput| common::evict::run(&input, common::evict::EvictFamily::Reclaim));
