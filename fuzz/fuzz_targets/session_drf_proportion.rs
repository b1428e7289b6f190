//! `session_drf_proportion`: the session driver with a conf that always holds drf and proportion: job shares, queue weights, capability, guarantee.
//! See `common/mod.rs` for the input and the invariants checked after every cycle.

#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: common::Input| common::run(&input, common::Family::DrfProportion));
