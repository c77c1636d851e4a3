//! Division of 32-bit integers by a divisor fixed for the run (routers per group, nodes per
//! router, the packet slot), as a multiply instead of a hardware divide: every hop maps routers to
//! groups, and a `div` costs 12–20 cycles of latency on the critical path of the event handler.
//!
//! Lemire, Kaser and Kurz, "Faster Remainder by Direct Computation" (2019): with
//! `m = ⌊(2^64 − 1) / d⌋ + 1`, `n / d = ⌊m·n / 2^64⌋` and `n mod d = ⌊(m·n mod 2^64)·d / 2^64⌋`
//! for every 32-bit `n` and every divisor `d ≥ 1` (exact, no rounding cases).

#[derive(Debug, Clone, Copy)]
pub struct FastDiv {
    d: u32,
    m: u64,
}

impl FastDiv {
    pub fn new(d: u32) -> FastDiv {
        assert!(d > 0, "division by zero");
        FastDiv { d, m: (u64::MAX / d as u64).wrapping_add(1) }
    }

    #[inline(always)]
    pub fn div(self, n: u32) -> u32 {
        if self.d == 1 {
            return n; // m wraps to 0 for d = 1
        }
        ((self.m as u128 * n as u128) >> 64) as u32
    }

    #[inline(always)]
    pub fn rem(self, n: u32) -> u32 {
        if self.d == 1 {
            return 0;
        }
        let low = self.m.wrapping_mul(n as u64);
        ((low as u128 * self.d as u128) >> 64) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn matches_hardware_division(n in any::<u32>(), d in 1u32..=u32::MAX) {
            let f = FastDiv::new(d);
            prop_assert_eq!(f.div(n), n / d);
            prop_assert_eq!(f.rem(n), n % d);
        }

        #[test]
        fn matches_for_small_divisors(n in any::<u32>(), d in 1u32..5000) {
            let f = FastDiv::new(d);
            prop_assert_eq!(f.div(n), n / d);
            prop_assert_eq!(f.rem(n), n % d);
        }
    }

    #[test]
    fn edges() {
        for d in [1u32, 2, 3, 7, 8, 33, 4096, u32::MAX] {
            let f = FastDiv::new(d);
            for n in [0u32, 1, d - 1, d, d.wrapping_add(1), u32::MAX - 1, u32::MAX] {
                assert_eq!(f.div(n), n / d, "{n}/{d}");
                assert_eq!(f.rem(n), n % d, "{n}%{d}");
            }
        }
    }
}
