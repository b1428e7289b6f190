//! Inputs that reach a finding still open in the core (listed in `fuzz/README.md`). The driver
//! skips them so the targets keep looking for new findings instead of re-finding the old one;
//! set `BASALT_FUZZ_KNOWN=1` to run them anyway. Remove a guard once its regression test in
//! `core/tests/fuzz_regressions.rs` passes.

use basalt_core::{Delta, SchedulerConf};

/// Whether the guards are off (`BASALT_FUZZ_KNOWN=1`).
pub fn disabled() -> bool {
    std::env::var_os("BASALT_FUZZ_KNOWN").is_some_and(|v| v == "1")
}

/// Whether `deltas` and `conf` reach an open finding (and the guards are on). None is open:
/// the guards of the findings listed in `fuzz/README.md` were removed with their fixes.
/// A guard reads `!disabled() && <what reaches the finding>`.
pub fn skip(_deltas: &[Delta], _conf: &SchedulerConf) -> bool {
    false
}
