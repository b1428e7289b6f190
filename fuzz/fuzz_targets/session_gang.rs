//! `session_gang`: the session driver with a conf that always holds gang (with priority and conformance around it): minMember, minTaskMember, BestEffort members, gang readiness.
//! See `common/mod.rs` for the input and the invariants checked after every cycle.

#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: common::Input| common::run(&input, common::Family::Gang));
