//! The verdicts a run takes on itself while it runs (`run.steady_warmup`,
//! `run.stop_when_saturated`), from the per-window series of its last `2k` windows split into
//! two halves of `k`: the same quantities and thresholds as the after-the-run diagnosis
//! ([`super::steady`]), so a run that ended its warm-up early or stopped saturated is judged
//! by the rule it would be judged by afterwards.
//!
//! * **Steady** (ends the warm-up): both halves delivered at least [`HALF_PACKETS`] packets;
//!   their mean latencies and their delivered bytes differ by at most the tolerance (relative
//!   to the first half); and the second half accepts at least [`SATURATED_BELOW`] of what was
//!   offered in it.
//! * **Saturated** (stops the run): in both halves the network accepted less than
//!   [`SATURATED_BELOW`] of the offered bytes (so the backlog grew in each), with at least
//!   [`HALF_PACKETS`] packets' worth offered in each.

use super::steady::SATURATED_BELOW;
use super::Stats;

/// Deliveries a half needs before its mean latency is trusted (the diagnosis asks 500 of a
/// half of the whole measurement).
pub const HALF_PACKETS: u64 = 250;

/// Totals over consecutive windows.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Span {
    pub gen_bytes: u64,
    pub del_bytes: u64,
    pub lat_sum_ps: u128,
    pub count: u64,
}

impl Span {
    fn mean_latency(&self) -> f64 {
        self.lat_sum_ps as f64 / self.count.max(1) as f64
    }

    fn accepts(&self) -> bool {
        self.del_bytes as f64 >= SATURATED_BELOW * self.gen_bytes as f64
    }
}

/// Whether the two halves `[a, b]` show a steady network (see the module's doc).
pub fn steady([a, b]: [Span; 2], tolerance: f64) -> bool {
    let close = |x: f64, y: f64| (y - x).abs() <= tolerance * x;
    a.count >= HALF_PACKETS
        && b.count >= HALF_PACKETS
        && close(a.mean_latency(), b.mean_latency())
        && close(a.del_bytes as f64, b.del_bytes as f64)
        && b.accepts()
}

/// Whether the two halves show a saturated network; `packet_bytes` sizes the minimum offered.
pub fn saturated(halves: [Span; 2], packet_bytes: u64) -> bool {
    halves.iter().all(|h| h.gen_bytes >= HALF_PACKETS * packet_bytes && !h.accepts())
}

impl Stats {
    /// The totals of windows `from..to` (indices of the series).
    pub fn span(&self, from: usize, to: usize) -> Span {
        let mut s = Span::default();
        for w in &self.windows[from.min(self.windows.len())..to.min(self.windows.len())] {
            s.gen_bytes += w.gen_bytes;
            s.del_bytes += w.del_bytes;
            s.lat_sum_ps += w.lat_sum_ps;
            s.count += w.count;
        }
        s
    }

    /// The two halves of `k` windows each that end with window `done - 1`, if there are `2k`.
    pub fn halves(&self, done: usize, k: usize) -> Option<[Span; 2]> {
        let first = done.checked_sub(2 * k)?;
        Some([self.span(first, first + k), self.span(first + k, done)])
    }

    /// Width of a window of the series.
    pub fn window(&self) -> crate::units::Time {
        self.window
    }

    /// The measurement starts at `at` (instead of the configured end of the warm-up) and ends
    /// at `end` at the latest: what happened before `at` is warm-up.
    pub fn begin_measurement(&mut self, at: crate::units::Time, end: crate::units::Time) {
        self.measure_start = at;
        self.measure_end = self.measure_end.min(end);
    }

    /// The measurement ends at `at`.
    pub fn end_measurement(&mut self, at: crate::units::Time) {
        self.measure_end = self.measure_end.min(at);
    }

    /// Start of the measurement.
    pub fn measure_start(&self) -> crate::units::Time {
        self.measure_start
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(offered: u64, delivered: u64, lat_ns: u64, count: u64) -> Span {
        Span { gen_bytes: offered, del_bytes: delivered, lat_sum_ps: (lat_ns * 1000 * count) as u128, count }
    }

    #[test]
    fn steady_needs_settled_latency_and_throughput_and_enough_packets() {
        let a = span(100_000, 100_000, 600, 1000);
        assert!(steady([a, span(100_000, 99_000, 620, 1000)], 0.05));
        // Latency still rising by 10 %: not steady at 5 %, steady at 20 %.
        let rising = span(100_000, 100_000, 660, 1000);
        assert!(!steady([a, rising], 0.05) && steady([a, rising], 0.2));
        // Throughput ramping (a warm-up filling the network).
        assert!(!steady([span(100_000, 80_000, 600, 800), a], 0.05));
        // Settled but accepting 80 % of the offered: saturated, not steady.
        assert!(!steady([span(100_000, 80_000, 600, 800), span(100_000, 80_000, 600, 800)], 0.05));
        // Too few packets to judge.
        assert!(!steady([span(10_000, 10_000, 600, 100), span(10_000, 10_000, 600, 100)], 0.05));
    }

    #[test]
    fn saturated_needs_a_deficit_in_both_halves() {
        let (deficit, fine) = (span(100_000, 60_000, 5000, 600), span(100_000, 99_000, 600, 990));
        assert!(saturated([deficit, deficit], 64));
        assert!(!saturated([deficit, fine], 64) && !saturated([fine, deficit], 64));
        // Too little offered to judge.
        assert!(!saturated([span(1000, 100, 5000, 1), span(1000, 100, 5000, 1)], 64));
    }

    #[test]
    fn halves_split_the_last_windows() {
        let mut s = Stats::new(0, 10_000, 1000);
        for w in 0..6u64 {
            s.on_generate(w * 1000 + 1, w + 1, 10);
        }
        let [a, b] = s.halves(6, 2).unwrap();
        assert_eq!((a.gen_bytes, b.gen_bytes), ((3 + 4) * 10, (5 + 6) * 10));
        assert!(s.halves(3, 2).is_none());
    }
}
