//! `session_overcommit_enqueue`: the session driver with a conf that always holds overcommit and the enqueue action: minResources, PodGroup phases, overcommit-factor.
//! See `common/mod.rs` for the input and the invariants checked after every cycle.

#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: common::Input| common::run(&input, common::Family::OvercommitEnqueue));
