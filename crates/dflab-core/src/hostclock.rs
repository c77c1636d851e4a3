//! The core clock of the host, measured, for `dflab bench`.
//!
//! Wall nanoseconds per router traversal move with the host's clock far more than with most
//! engine changes: on the virtual machines this project runs on, the same binary has measured
//! 215 ns at about 1.65 GHz and 89 ns at about 4.1 GHz. A virtual machine's `/proc/cpuinfo`
//! shows the nominal TSC rate, not the clock the core runs at, so the bench times a chain of
//! dependent integer additions instead: each needs the previous result and takes one cycle on
//! every x86-64 core (the loop counter and branch run beside it), so additions per second is
//! cycles per second. Cycles per traversal then compare across hosts. The rate a thread gets can
//! still move during a run (while CI compiled on the other vCPU it read about 2 and about 4
//! GHz by turns, seconds apart; a busy loop there did not move it), which is why the bench
//! reads it before and after.
//!
//! The addend is a register, not an immediate: recent Intel cores fold chains of small
//! immediate additions at register renaming, several per cycle (an `add x, 1` chain read 20
//! "GHz" here), and a plain counting loop runs more than one iteration per cycle (it read 4.1
//! "GHz" while this probe read 3.3). A test holds the probe against a chain of `imul`, whose
//! latency is three cycles on every x86-64 core since 2008.

use std::time::Instant;

/// Dependent additions per loop iteration (16 per `asm!` block below).
const CHAIN: u64 = 16;

/// Run `iterations × CHAIN` dependent additions; return their count as the chain computed it
/// (so a probe that did not run them is caught) and the seconds they took.
#[cfg(target_arch = "x86_64")]
fn chain(iterations: u64) -> (u64, f64) {
    let (mut x, one): (u64, u64) = (0, 1);
    let started = Instant::now();
    for _ in 0..iterations {
        // SAFETY: register-only arithmetic on `x`; no memory, stack or control flow is touched.
        unsafe {
            std::arch::asm!(
                "add {x}, {one}", "add {x}, {one}", "add {x}, {one}", "add {x}, {one}",
                "add {x}, {one}", "add {x}, {one}", "add {x}, {one}", "add {x}, {one}",
                "add {x}, {one}", "add {x}, {one}", "add {x}, {one}", "add {x}, {one}",
                "add {x}, {one}", "add {x}, {one}", "add {x}, {one}", "add {x}, {one}",
                x = inout(reg) x,
                one = in(reg) one,
                options(nomem, nostack),
            );
        }
    }
    (x, started.elapsed().as_secs_f64())
}

/// The core clock in GHz: the fastest of `rounds` chains of about 16 M additions (4–20 ms
/// each; the fastest is the one least disturbed by interrupts or other guests). `None` where
/// the probe is not implemented (targets other than x86-64).
pub fn clock_ghz(rounds: u32) -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    {
        let iterations = 1 << 20;
        let mut best: f64 = 0.0;
        for _ in 0..rounds.max(1) {
            let (adds, seconds) = chain(iterations);
            assert_eq!(adds, iterations * CHAIN, "the clock probe's chain did not run");
            if seconds > 0.0 {
                best = best.max(adds as f64 / seconds / 1e9);
            }
        }
        (best > 0.0).then_some(best)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = rounds;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chain the compiler or the core folded would read as an absurd clock (or fail the count).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_clock_reads_like_a_real_core() {
        let ghz = clock_ghz(3).expect("x86-64 has the probe");
        assert!((0.2..8.0).contains(&ghz), "{ghz} GHz");
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_chain_counts_its_additions() {
        let (adds, seconds) = chain(1000);
        assert_eq!(adds, 1000 * CHAIN);
        assert!(seconds >= 0.0);
    }

    /// `iterations × 8` dependent `imul`s (three cycles each on every x86-64 core since
    /// Nehalem and on every Zen); the seconds they took.
    #[cfg(target_arch = "x86_64")]
    fn imul_chain(iterations: u64) -> f64 {
        let mut x: u64 = 3;
        let started = Instant::now();
        for _ in 0..iterations {
            // SAFETY: register-only arithmetic, as in `chain`.
            unsafe {
                std::arch::asm!(
                    "imul {x}, {x}", "imul {x}, {x}", "imul {x}, {x}", "imul {x}, {x}",
                    "imul {x}, {x}", "imul {x}, {x}", "imul {x}, {x}", "imul {x}, {x}",
                    x = inout(reg) x,
                    options(nomem, nostack),
                );
            }
        }
        std::hint::black_box(x);
        started.elapsed().as_secs_f64()
    }

    /// The addition chain runs at one step per cycle: three times the rate of a chain whose
    /// steps take three cycles. (Folded immediate additions read 20 "GHz" against 3.3 here, a
    /// ratio near 18.) The rate a thread gets moves on a shared host, and other tests run beside
    /// this one, so the chains alternate in short pairs of ~1 M cycles and the median decides.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn one_addition_per_cycle_like_imul_every_three() {
        let mut ratios: Vec<f64> = (0..41)
            .map(|_| {
                let (adds, add_s) = chain(1 << 16);
                let imul_s = imul_chain(1 << 15);
                (adds as f64 / add_s) / ((8u64 << 15) as f64 / imul_s)
            })
            .collect();
        ratios.sort_by(f64::total_cmp);
        let median = ratios[ratios.len() / 2];
        assert!((2.4..3.6).contains(&median), "additions / multiplications = {median}: {ratios:?}");
    }
}
