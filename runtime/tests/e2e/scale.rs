//! Sizes of the end-to-end scale runs: about a tenth of the full size by default (what CI runs),
//! the full size with `BASALT_E2E_FULL=1`.

use crate::support;

/// The environment variable that selects the full sizes: `1` (or `true`) full, unset, empty or
/// `0` (or `false`) the CI sizes.
pub const FULL_ENV: &str = "BASALT_E2E_FULL";

/// Whether [`FULL_ENV`] asks for the full sizes. Errors: it is set to anything else (named with
/// its value).
pub fn full() -> support::Result<bool> {
    match std::env::var(FULL_ENV).as_deref() {
        Err(_) | Ok("") | Ok("0") | Ok("false") => Ok(false),
        Ok("1") | Ok("true") => Ok(true),
        Ok(other) => Err(format!("{FULL_ENV}={other:?}: expected 1/true (full size) or 0/false (CI size)").into()),
    }
}

/// `full_size` when [`full`], else `ci`. Errors: as [`full`].
pub fn pick<T>(ci: T, full_size: T) -> support::Result<T> {
    Ok(if full()? { full_size } else { ci })
}
