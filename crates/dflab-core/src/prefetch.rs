//! Software prefetch: ask the cache for an element the engine will touch soon.
//!
//! The engine's state (packets, ports, credits, queues) outgrows the L2 cache on the presets,
//! and an event's handler touches lines last used thousands of events earlier: a CPU-clock
//! profile of MIN UR 0.5 on `qadaptive-1056` put 15 % of all samples on the first load of the
//! arriving packet alone. The next event is known one event ahead (the head of the event
//! queue), so the loop prefetches what its handler will read while the current one runs (see
//! `Simulation::prefetch_for`). A prefetch is only a hint: results do not depend on it.

/// Prefetch element `i` of `slice` into all cache levels (no effect on targets without a
/// prefetch instruction). `i` is not bounds-checked: prefetching any address is harmless, and
/// the check cost two instructions per call on the hot path.
#[inline(always)]
pub fn prefetch<T>(slice: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = slice.as_ptr().wrapping_add(i);
        // SAFETY: a prefetch has no architectural effect: it cannot fault (an invalid address is
        // ignored), read into the program or change memory.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (slice, i);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_index_is_harmless() {
        let v = vec![1u64, 2, 3];
        for i in [0, 2, 3, usize::MAX] {
            prefetch(&v, i);
        }
        prefetch::<u8>(&[], 0);
        assert_eq!(v, [1, 2, 3]);
    }
}
