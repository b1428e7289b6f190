//! `session_devices`: the GPU share / GPU number card table under any sequence of allocate,
//! pipeline, evict, unpipeline, commit and discard, then under full cycles with preempt: no card
//! overcommitted, taken unhealthy or (whole cards) shared, and a discard restores every card.
//! See `common/devices.rs` for the input and the checks.

#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: common::devices::DevInput| common::devices::run(&input));
