//! `session_preempt`: preempt (between and within jobs, normal and topology-aware) on full production-like clusters: victims only of lower priority in the preemptor's queue, each for a preemptor pipelined on its node.
//! See `common/evict.rs` for the input, the cluster and the invariants checked after every cycle.

#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: common::evict::EvictInput| common::evict::run(&input, common::evict::EvictFamily::Preempt));
