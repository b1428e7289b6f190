//! A hint to bring a memory line into the cache ahead of its use.

/// Asks the processor to start loading the cache line holding `x` into all cache levels,
/// without waiting for it. A hint only: it reads nothing architecturally, so it can neither
/// fault nor change a result; on other architectures it does nothing.
#[inline(always)]
pub fn line<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 is a hint that never dereferences its operand architecturally (no
    // fault, no read observable by the program), and SSE is part of the x86_64 baseline; `x`
    // is a live reference in any case.
    #[allow(unsafe_code)]
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>((x as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}
