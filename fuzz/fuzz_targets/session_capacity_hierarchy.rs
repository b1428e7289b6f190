//! `session_capacity_hierarchy`: the capacity plugin with a queue hierarchy under enqueue, allocate, preempt and reclaim: capabilities hold up the tree, reclaim keeps guarantees, a job in a parent queue stops everything.
//! See `common/evict.rs` for the input, the cluster and the invariants checked after every cycle.

#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: common::evict::EvictInput| common::evict::run(&input, common::evict::EvictFamily::CapacityHierarchy));
