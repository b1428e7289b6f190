//! `session_predicates_nodeorder_binpack`: the session driver with a conf that always holds predicates, nodeorder and binpack: selectors, taints, affinity, host ports, spread, scoring weights.
//! See `common/mod.rs` for the input and the invariants checked after every cycle.

#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: common::Input| common::run(&input, common::Family::PredicatesNodeorderBinpack));
