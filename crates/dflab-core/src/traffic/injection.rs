//! Injection processes. A packet slot is the serialisation time of one packet on the host link;
//! the offered load is the fraction of slots that carry a packet.
//!
//! * `bernoulli` — every slot carries a packet with probability `load`, independently; the
//!   gap to the next packet is drawn directly (geometric number of empty slots) so the cost is
//!   one event per packet, not one per slot.
//! * `periodic` — one packet every `slot / load`, with a random phase per node so that nodes
//!   do not inject in lock step.
//! * `lockstep` — SST/Merlin's TrafficGen (the Q-adaptive fork, `trafficgen.cc`): every node
//!   sends at 1 ns and then every `delay` = `slot / load` rounded to whole ns, all in the same
//!   instant (sst-port-timing.md §1.2). The offered load is then `slot / delay`, not exactly
//!   `load` (0.3 at 32 ns slots: 107 ns, 0.29907).

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
    /// The same table on the integers the variate is made of (see `empty_slots`), or None when
    /// there is no table (load 1) or its thresholds increase somewhere (then the float table
    /// decides every draw).
    limits: Option<Limits>,
    period: f64,
    /// `lockstep`: the whole-ns period, in ps.
    step: Time,
}

/// `lockstep`: the first packet of every node (SST's TrafficGen sends on its first 1 GHz tick).
pub const LOCKSTEP_START: Time = 1_000;

/// The threshold table as integers. A draw takes `m = next_u64() >> 11` and forms
/// `u = 1 − m·2⁻⁵³` (what `1.0 - rng.gen::<f64>()` computes), which is exact: `u = r·2⁻⁵³` with
/// `r = 2⁵³ − m` in `1..=2⁵³`. So `u <= thresholds[j]` exactly when `r <= limit[j] =
/// ⌊thresholds[j]·2⁵³⌋` (the product is exact too), and the count `k` of thresholds at or above
/// `u` is found with integer compares and no conversion. The float path hands a variate within
/// `GUARD` of `thresholds[k]` or `thresholds[k − 1]` to the formula; `safe_lo[k]` and
/// `safe_width[k]` bound the variates of count `k` that are far from both (with a wide margin),
/// and only the others, rare, take the float path unchanged.
#[derive(Debug, Clone)]
struct Limits {
    /// `limit[j]` for `j < TABLE`, then zeros (never reached: `r >= 1`), so the bisection below
    /// needs no bounds.
    limit: [u64; PADDED],
    /// `r` is far from the thresholds around count `k` when `r − safe_lo[k] < safe_width[k]`
    /// (wrapping); `safe_width[TABLE]` is 0 (beyond the table, the formula decides).
    safe_lo: [u64; TABLE + 1],
    safe_width: [u64; TABLE + 1],
}

/// `TABLE` rounded up so that the bisection's probes (at most `LINEAR + 63`) stay inside.
const PADDED: usize = 128;
/// `2⁻⁵³`: rand's scale from 53 random bits to `[0, 1)`.
const SCALE: f64 = 1.0 / (1u64 << 53) as f64;

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
        let limits = Limits::new(&thresholds);
        let period = slot as f64 / load;
        let step = ((period / 1000.0).round() as Time).max(1) * 1000;
        Injector { process, load, slot, ln_q, thresholds, limits, period, step }
    }

    /// Time of a node's first packet.
    pub fn first<R: Rng>(&self, rng: &mut R) -> Time {
        match self.process {
            Process::Bernoulli => self.empty_slots(rng) * self.slot,
            Process::Periodic => (rng.gen::<f64>() * self.period) as Time,
            Process::Lockstep => LOCKSTEP_START,
        }
    }

    /// Time of the packet after one generated at `now` (`k` = packets generated so far by this
    /// node, used by the periodic process to avoid accumulating rounding drift).
    pub fn next<R: Rng>(&self, now: Time, first: Time, k: u64, rng: &mut R) -> Time {
        match self.process {
            Process::Bernoulli => now + (1 + self.empty_slots(rng)) * self.slot,
            Process::Periodic => first + (k as f64 * self.period).round() as Time,
            Process::Lockstep => first + k * self.step,
        }
    }

    /// Lock-step: the time of packet `k` after the one at `first` (what `next` gives, without
    /// a generator: the process draws nothing).
    pub fn lockstep_time(&self, first: Time, k: u64) -> Time {
        debug_assert_eq!(self.process, Process::Lockstep);
        first + k * self.step
    }

    /// Bernoulli: slots from a packet's slot to the next one's (`next` is `now` plus this many
    /// slots, from the same draw).
    #[inline(always)]
    pub fn slots_to_next<R: Rng>(&self, rng: &mut R) -> u64 {
        debug_assert_eq!(self.process, Process::Bernoulli);
        1 + self.empty_slots(rng)
    }

    /// Geometric: number of failures before the first success, P(success) = load. The
    /// variate is `1.0 - rng.gen::<f64>()`, in (0, 1], built from the same 53 bits.
    #[inline(always)]
    fn empty_slots<R: Rng>(&self, rng: &mut R) -> u64 {
        match &self.limits {
            Some(limits) => self.empty_slots_int(limits, rng.next_u64() >> 11),
            None => self.empty_slots_float(rng),
        }
    }

    /// Without the integer table: load 1 (no draw) or the float table.
    #[cold]
    #[inline(never)]
    fn empty_slots_float<R: Rng>(&self, rng: &mut R) -> u64 {
        if self.load >= 1.0 {
            return 0;
        }
        self.empty_slots_for(1.0 - rng.gen::<f64>())
    }

    /// `empty_slots_for(1 − m·2⁻⁵³)`, found on the integer table (see [`Limits`]).
    #[inline(always)]
    fn empty_slots_int(&self, limits: &Limits, m: u64) -> u64 {
        let r = (1u64 << 53) - m;
        let lim = &limits.limit;
        // Short gaps are the common case at moderate load: count the first `LINEAR` thresholds
        // at or above `r` without a branch (they are a prefix: the limits do not increase, see
        // `Limits::new`; a scan stopping at the first one below mispredicted its exit on most
        // draws), then bisect the rest (branch-free; the zeros past the table end the count).
        let mut k: usize = lim[..LINEAR].iter().map(|&l| (r <= l) as usize).sum();
        if k == LINEAR {
            for step in [32, 16, 8, 4, 2, 1] {
                if r <= lim[(k + step - 1) % PADDED] {
                    k += step;
                }
            }
        }
        let k = k.min(TABLE);
        if r.wrapping_sub(limits.safe_lo[k]) < limits.safe_width[k] {
            return k as u64;
        }
        self.near_threshold(m)
    }

    /// A variate near a threshold or beyond the table: the float path decides.
    #[cold]
    #[inline(never)]
    fn near_threshold(&self, m: u64) -> u64 {
        self.empty_slots_for(1.0 - m as f64 * SCALE)
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

impl Limits {
    fn new(thresholds: &[f64]) -> Option<Limits> {
        // The count of thresholds at or above u is a prefix only if they do not increase (both tables
        // search them as sorted); load 1 has no table.
        if thresholds.len() != TABLE || thresholds.windows(2).any(|w| w[1] > w[0]) || thresholds[0] >= 1.0 {
            return None;
        }
        let mut limit = [0; PADDED];
        let mut band = [0; TABLE];
        for (j, &t) in thresholds.iter().enumerate() {
            limit[j] = (t * (1u64 << 53) as f64).floor() as u64;
            // The float path's guard is GUARD·t (exact differences near t, by Sterbenz), so
            // |r − limit| < GUARD·t·2⁵³·(1 + 2⁻⁵²) + 1 for every variate it finds near t: twice
            // the guard and 2 more hold them all.
            band[j] = (2.0 * GUARD * limit[j] as f64).ceil() as u64 + 2;
        }
        // Count k: limit[k] < r <= limit[k − 1] (2⁵³ for k = 0); far from both thresholds when
        // limit[k] + band[k] < r < limit[k − 1] − band[k − 1].
        let mut safe_lo = [0; TABLE + 1];
        let mut safe_width = [0; TABLE + 1];
        for k in 0..TABLE {
            let lo = limit[k] + band[k] + 1;
            let hi = if k == 0 { (1u64 << 53) + 1 } else { limit[k - 1].saturating_sub(band[k - 1]) };
            safe_lo[k] = lo;
            safe_width[k] = hi.saturating_sub(lo);
        }
        Some(Limits { limit, safe_lo, safe_width })
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

    /// SST's TrafficGen: 1 ns, then every round(32 ns / load) whole ns, with no random draw
    /// (every node the same); at load 0.3 the period is 107 ns, the offered load 32/107.
    #[test]
    fn lockstep_sends_on_whole_ns_from_1_ns() {
        let inj = Injector::new(Process::Lockstep, 0.3, 32_000);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
        let untouched = rng.clone();
        let first = inj.first(&mut rng);
        let times: Vec<Time> = (1..4).map(|k| inj.next(0, first, k, &mut rng)).collect();
        assert_eq!((first, times), (1_000, vec![108_000, 215_000, 322_000]));
        assert_eq!(rng, untouched, "no draw");
        assert!((rate(Process::Lockstep, 0.3) - 32.0 / 107.0).abs() < 1e-4);
        assert_eq!(Injector::new(Process::Lockstep, 0.5, 32_000).next(0, 1_000, 1, &mut rng), 65_000);
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

    /// The integer table gives exactly the float table's draw for the same 53 random bits,
    /// including variates on, around and at the guard bands of every threshold.
    #[test]
    fn integer_draw_equals_the_float_draw() {
        use rand::RngCore as _;
        for load in [1e-6, 0.001, 0.05, 0.3, 0.5, 0.8, 0.999, 0.999_999] {
            let inj = Injector::new(Process::Bernoulli, load, 32_000);
            let limits = inj.limits.as_ref().expect("a decreasing table");
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
            let top = 1u64 << 53;
            let mut ms: Vec<u64> = (0..200_000).map(|_| rng.next_u64() >> 11).collect();
            for (j, &t) in inj.thresholds.iter().enumerate() {
                let l = limits.limit[j] as i64;
                let guard = (GUARD * t * top as f64) as i64;
                let (lo, hi) = (limits.safe_lo[j] as i64, (limits.safe_lo[j] + limits.safe_width[j]) as i64);
                for c in [l, l - guard, l + guard, lo, hi] {
                    for d in -3..=3 {
                        let r = c + d;
                        if r >= 1 && r <= top as i64 {
                            ms.push(top - r as u64);
                        }
                    }
                }
            }
            ms.extend([0, 1, top - 1, top - 2]);
            for m in ms {
                let u = 1.0 - m as f64 * SCALE;
                assert_eq!(inj.empty_slots_int(limits, m), inj.empty_slots_for(u), "load {load} m {m}");
            }
        }
    }

    /// `empty_slots` draws what `1.0 - rng.gen::<f64>()` fed to the float table gives.
    #[test]
    fn draw_uses_rands_float() {
        use rand::Rng as _;
        for load in [0.05, 0.5] {
            let inj = Injector::new(Process::Bernoulli, load, 32_000);
            let mut a = Xoshiro256PlusPlus::seed_from_u64(11);
            let mut b = a.clone();
            for _ in 0..10_000 {
                assert_eq!(inj.empty_slots(&mut a), inj.empty_slots_for(1.0 - b.gen::<f64>()));
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
