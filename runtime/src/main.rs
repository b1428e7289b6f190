//! The `basalt` binary: sets the global allocator and tells it to keep freed memory for a
//! while, then hands over to [`basalt_runtime::cli`].

use std::os::raw::c_long;
use std::process::ExitCode;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay`: position 15 of `mi_option_e` in the mimalloc headers
/// that libmimalloc-sys 0.1.49 builds (its v2 and v3 alike); the crate names no constant for it.
/// Checked by hand: with `MIMALLOC_PURGE_DELAY=1234` in the environment, option 15 reads 1234.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// How long memory the process freed stays with it before mimalloc gives it back to the
/// system, ms (mimalloc's default is 10). A scheduler cycle frees its decisions and the next
/// cycle, a second later, allocates as much again; on a VM that backs memory only when it is
/// first touched, memory given back in between cost the next cycle a page fault per 4 KiB
/// (about 0.45 s per cycle at 100,000 nodes / 1,000,000 pods; docs/performance.md, issue 29).
/// Ten seconds keeps it across cycles and still returns it once the scheduler goes quiet.
const KEEP_FREED_MS: c_long = 10_000;

fn main() -> ExitCode {
    keep_freed_memory();
    basalt_runtime::cli::main()
}

/// Sets [`KEEP_FREED_MS`] as mimalloc's purge delay (read at each purge, so setting it after
/// the allocator started is enough), unless `MIMALLOC_PURGE_DELAY` is set: mimalloc has read
/// the operator's value from it then, and it stays.
#[allow(unsafe_code)]
fn keep_freed_memory() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
        return;
    }
    // SAFETY: `mi_option_set` stores one integer option of the allocator; it touches no memory
    // of ours and any value is valid for the purge delay.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, KEEP_FREED_MS) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The call takes effect: the option reads back the value set (mimalloc refuses a
    /// position past its last option, which then reads 0). That position 15 is the purge delay
    /// was checked by hand, as [`MI_OPTION_PURGE_DELAY`] says; this test cannot tell options
    /// apart.
    #[test]
    #[allow(unsafe_code)]
    fn the_purge_delay_is_set() {
        keep_freed_memory();
        // SAFETY: reads one integer option of the allocator.
        let v = unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
        assert_eq!(v, KEEP_FREED_MS);
    }
}
