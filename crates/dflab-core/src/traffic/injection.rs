//! Injection processes. A packet slot is the serialisation time of one packet on the host link;
//! the offered load is the fraction of slots that carry a packet.
//!
//! * `bernoulli` — every slot carries a packet with probability `load`, independently; the
//!   gap to the next packet is drawn directly (geometric number of empty slots) so the cost is
//!   one event per packet, not one per slot.
//! * `periodic` — one packet every `slot / load`, with a random phase per node so that nodes
//!   do not inject in lock step (SST `TrafficGen` with `delay_between_packets`).

use rand::Rng;

use crate::config::Process;
use crate::units::Time;

#[derive(Debug, Clone)]
pub struct Injector {
    process: Process,
    load: f64,
    slot: Time,
    /// ln(1 - load), precomputed for the geometric draw.
    ln_q: f64,
    /// `thresholds[j] = (1 - load)^(j + 1)`: the draw is at least `j + 1` exactly when the
    /// uniform variate is at or below it (see `empty_slots`).
    thresholds: Vec<f64>,
    period: f64,
}

/// Geometric draws of up to this many empty slots are found in the threshold table.
const TABLE: usize = 64;
/// A variate this close (relatively) to a threshold is decided by the logarithm formula itself,
/// so that the table never disagrees with it by floating-point rounding.
const GUARD: f64 = 1e-9;
/// Thresholds checked one by one before the binary search.
const LINEAR: usize = 4;

impl Injector {
    pub fn new(process: Process, load: f64, slot: Time) -> Injector {
        let ln_q = (1.0 - load).ln();
        let thresholds = if load < 1.0 { (1..=TABLE).map(|j| (j as f64 * ln_q).exp()).collect() } else { Vec::new() };
        Injector { process, load, slot, ln_q, thresholds, period: slot as f64 / load }
    }

    /// Time of a node's first packet.
    pub fn first<R: Rng>(&self, rng: &mut R) -> Time {
        match self.process {
            Process::Bernoulli => self.empty_slots(rng) * self.slot,
            Process::Periodic => (rng.gen::<f64>() * self.period) as Time,
        }
    }

    /// Time of the packet after one generated at `now` (`k` = packets generated so far by this
    /// node, used by the periodic process to avoid accumulating rounding drift).
    pub fn next<R: Rng>(&self, now: Time, first: Time, k: u64, rng: &mut R) -> Time {
        match self.process {
            Process::Bernoulli => now + (1 + self.empty_slots(rng)) * self.slot,
            Process::Periodic => first + (k as f64 * self.period).round() as Time,
        }
    }

    /// Bernoulli: slots from a packet's slot to the next one's (`next` is `now` plus this many
    /// slots, from the same draw).
    #[inline]
    pub fn slots_to_next<R: Rng>(&self, rng: &mut R) -> u64 {
        debug_assert_eq!(self.process, Process::Bernoulli);
        1 + self.empty_slots(rng)
    }

    fn empty_slots<R: Rng>(&self, rng: &mut R) -> u64 {
        if self.load >= 1.0 {
            return 0;
        }
        // Geometric: number of failures before the first success, P(success) = load.
        let u: f64 = 1.0 - rng.gen::<f64>(); // (0, 1]
        self.empty_slots_for(u)
    }

    /// ⌊ln u / ln q⌋ is the number of thresholds q^j (j ≥ 1) at or above u. A binary search of
    /// the table gives it without the logarithm (which was a third of the generation cost);
    /// beyond the table, or within rounding distance of a threshold, the formula decides.
    #[inline]
    fn empty_slots_for(&self, u: f64) -> u64 {
        let t = &self.thresholds;
        // Short gaps are the common case at moderate load: scan, then bisect the rest.
        let mut k = 0;
        while k < LINEAR && u <= t[k] {
            k += 1;
        }
        if k == LINEAR {
            k += t[LINEAR..].partition_point(|&th| u <= th);
        }
        let near = |j: usize| j < t.len() && (u - t[j]).abs() <= GUARD * t[j];
        if k == t.len() || near(k) || (k > 0 && near(k - 1)) {
            return self.formula(u);
        }
        k as u64
    }

    /// The geometric draw as its definition: ⌊ln u / ln(1 − load)⌋.
    #[inline]
    fn formula(&self, u: f64) -> u64 {
        (u.ln() / self.ln_q).floor() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn rate(process: Process, load: f64) -> f64 {
        let inj = Injector::new(process, load, 32_000);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
        let first = inj.first(&mut rng);
        let (mut t, mut k) = (first, 1);
        while t < 1_000_000_000 {
            t = inj.next(t, first, k, &mut rng);
            k += 1;
        }
        k as f64 * 32_000.0 / t as f64
    }

    #[test]
    fn both_processes_hit_the_offered_load() {
        for load in [0.05, 0.3, 0.5, 0.9, 1.0] {
            // 31k packets at load 1.0 down to 1.5k at 0.05: 5% covers Bernoulli noise.
            assert!((rate(Process::Bernoulli, load) - load).abs() < 0.05 * load, "{load}");
            assert!((rate(Process::Periodic, load) - load).abs() < 0.001, "{load}");
        }
    }

    /// The table lookup gives exactly the logarithm formula's draw, including variates on and
    /// around the thresholds and beyond the table.
    #[test]
    fn table_draw_equals_the_formula() {
        use rand::Rng as _;
        for load in [0.001, 0.05, 0.3, 0.5, 0.8, 0.999] {
            let inj = Injector::new(Process::Bernoulli, load, 32_000);
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
            let mut us: Vec<f64> = (0..200_000).map(|_| 1.0 - rng.gen::<f64>()).collect();
            for &th in &inj.thresholds {
                let mut x = th;
                for _ in 0..4 {
                    us.extend([x, f64::from_bits(x.to_bits() + 1), f64::from_bits(x.to_bits() - 1)]);
                    x = f64::from_bits(x.to_bits() + 7);
                }
                us.extend([th * (1.0 + 2.0 * GUARD), th * (1.0 - 2.0 * GUARD)]);
            }
            us.extend([1.0, f64::MIN_POSITIVE, 1e-300]);
            for u in us.into_iter().filter(|u| *u > 0.0 && *u <= 1.0) {
                assert_eq!(inj.empty_slots_for(u), inj.formula(u), "load {load} u {u:e}");
            }
        }
    }

    #[test]
    fn bernoulli_packets_sit_on_slot_boundaries() {
        let inj = Injector::new(Process::Bernoulli, 0.4, 32_000);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let mut t = inj.first(&mut rng);
        for k in 1..1000 {
            assert_eq!(t % 32_000, 0);
            let n = inj.next(t, 0, k, &mut rng);
            assert!(n > t);
            t = n;
        }
    }
}
