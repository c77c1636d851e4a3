//! DGB's learning state at one source router (Kasan et al., ISCA'22; what the public DGB fork,
//! hanskasan/booksim2 `sst-macro` 8d00456e, does in `learning/dgb.cpp` with its default modes
//! `DGB_IDEAL`, `REMOVE_INFLIGHT`, `T_EST_END2END`, `DECOUPLING`):
//!
//! * a **bias** per (destination router, first port of the non-minimal candidate), starting at 0;
//! * **latency samples** `T` recorded at the source: the last [`N_HISTORY`] of minimal packets per
//!   destination router (never cleared), and a running sum of non-minimal ones per (destination,
//!   port), cleared by each training step;
//! * the newest **feedback** from each destination router: the residual `d` of its last minimal
//!   packet, and of its last non-minimal packet per first port.
//!
//! [`DgbTable::train`] is the fork's `DoTraining`, run before every decision (`GetBias`); its
//! trigger, gradient step, exploration, "emergency" step and clamp are documented on it. Times
//! and latencies are in cycles (the flit time of a local link), occupancies in flits.

use rand::Rng as _;

use super::Rng;
use crate::units::Time;

/// Minimal-path samples kept per destination router (the fork's `N_HISTORY`).
pub const N_HISTORY: usize = 5;

/// The constants of a training step.
#[derive(Debug, Clone, Copy)]
pub struct Learning {
    /// `η`, the learning rate (the fork's `LEARNING_RATE` 0.25; ICS'24 states 0.1, and 0.001 for
    /// EDGB).
    pub eta: f64,
    /// The fork's `EXPLORE_RATE` (0.25).
    pub explore_rate: f64,
    /// A (destination, port) pair is trained at least this often when asked (the fork's
    /// `EPOCH_SIZE`, 50 cycles), in ps.
    pub epoch: Time,
    /// Per-VC buffer sizes of local and global input buffers (flits): the exploration's vacancy
    /// fractions and the bias clamp `[−B_g, B_g·H_min/H_nm]`.
    pub local_buffer: u32,
    pub global_buffer: u32,
    /// A minimal first port that is global is explored by its vacancy in the global buffer
    /// (true) or, as in the fork, like a local one (false; see `DgbParams::explore_global_port`).
    pub global_port_vacancy: bool,
}

/// What the source router sees of the two candidates when it trains and decides. The `q` are
/// whole-port occupancies (flits in the output buffer plus used credits, every VC); the `_net`
/// ones leave out the flits and credits on the wires (the fork's `REMOVE_INFLIGHT`): the
/// decision and the exploration's vacancy read the former, the latency estimates the latter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Observation {
    pub dest: u32,
    /// The non-minimal candidate's first port (the bias key).
    pub nm_port: u16,
    /// Whether the minimal candidate's first port is a global port.
    pub min_global: bool,
    pub h_min: u32,
    pub h_nm: u32,
    pub q_min: u32,
    pub q_nm: u32,
    /// The occupancy of the global port by which each candidate leaves the source group (at
    /// the gateway router; the first port itself when it is global); −1 when not known
    /// (`feedback = "piggyback"` before the gateway's value has arrived, the fork's −1).
    pub q_min_g: i64,
    pub q_nm_g: i64,
    pub q_min_net: u32,
    pub q_nm_net: u32,
    pub q_min_g_net: u32,
    pub q_nm_g_net: u32,
    /// The non-minimal path's extra wire latency (cycles): the fork's `GetChanDiff`.
    pub chan_diff: f64,
}

#[derive(Debug, Clone, Copy, Default)]
struct History {
    vals: [f32; N_HISTORY],
    len: u8,
    next: u8,
}

impl History {
    fn push(&mut self, v: f32) {
        self.vals[self.next as usize] = v;
        self.next = ((self.next as usize + 1) % N_HISTORY) as u8;
        self.len = (self.len + 1).min(N_HISTORY as u8);
    }

    fn mean(&self) -> f64 {
        if self.len == 0 {
            return 0.0;
        }
        self.vals[..self.len as usize].iter().map(|&v| v as f64).sum::<f64>() / self.len as f64
    }
}

/// One source router's DGB state: dense tables over (destination router, non-host port).
pub struct DgbTable {
    first_port: u16,
    ports: usize,
    bias: Vec<f32>,
    last_train: Vec<Time>,
    nm_sum: Vec<f64>,
    nm_n: Vec<u32>,
    min_hist: Vec<History>,
    /// Feedback: NaN until the destination's first residual arrives.
    fb_min: Vec<f32>,
    fb_nm: Vec<f32>,
}

/// Bytes of one router's table for `routers` routers and `ports` non-host ports (to refuse
/// networks whose tables would not fit in memory).
pub fn table_bytes(routers: usize, ports: usize) -> usize {
    let per_pair = 4 + 8 + 8 + 4 + 4; // bias, last_train, nm_sum, nm_n, fb_nm
    let per_dest = std::mem::size_of::<History>() + 4;
    routers * (ports * per_pair + per_dest)
}

impl DgbTable {
    /// Tables for `routers` destination routers and the ports `first_port..first_port+ports`.
    pub fn new(routers: usize, first_port: u16, ports: usize) -> DgbTable {
        let pairs = routers * ports;
        DgbTable {
            first_port,
            ports,
            bias: vec![0.0; pairs],
            last_train: vec![0; pairs],
            nm_sum: vec![0.0; pairs],
            nm_n: vec![0; pairs],
            min_hist: vec![History::default(); routers],
            fb_min: vec![f32::NAN; routers],
            fb_nm: vec![f32::NAN; pairs],
        }
    }

    #[inline]
    fn at(&self, dest: u32, port: u16) -> usize {
        dest as usize * self.ports + (port - self.first_port) as usize
    }

    /// The bias of (`dest`, `port`) as the decision uses it: rounded to whole flits.
    pub fn bias(&self, dest: u32, port: u16) -> f64 {
        self.bias[self.at(dest, port)].round() as f64
    }

    /// The unrounded bias (for tests and series).
    pub fn raw_bias(&self, dest: u32, port: u16) -> f64 {
        self.bias[self.at(dest, port)] as f64
    }

    pub fn set_bias(&mut self, dest: u32, port: u16, b: f64) {
        let i = self.at(dest, port);
        self.bias[i] = b as f32;
    }

    /// A minimal packet's latency estimate toward `dest`.
    pub fn record_min(&mut self, dest: u32, t: f64) {
        self.min_hist[dest as usize].push(t as f32);
    }

    /// The mean of the minimal samples toward `dest` (0 without any).
    pub fn min_mean(&self, dest: u32) -> f64 {
        self.min_hist[dest as usize].mean()
    }

    /// A non-minimal packet's latency estimate toward `dest` through first port `port`.
    pub fn record_nm(&mut self, dest: u32, port: u16, t: f64) {
        let i = self.at(dest, port);
        self.nm_sum[i] += t;
        self.nm_n[i] += 1;
    }

    /// (minimal samples of `dest`, non-minimal samples of (`dest`, `port`)): the fork's
    /// `GetSizes`.
    pub fn sizes(&self, dest: u32, port: u16) -> (u32, u32) {
        (self.min_hist[dest as usize].len as u32, self.nm_n[self.at(dest, port)])
    }

    /// The newest minimal residual from `dest`, if any arrived.
    pub fn feedback_min(&self, dest: u32) -> Option<f64> {
        let d = self.fb_min[dest as usize];
        (!d.is_nan()).then_some(d as f64)
    }

    /// The newest non-minimal residual from `dest` for packets that left by `port`.
    pub fn feedback_nm(&self, dest: u32, port: u16) -> Option<f64> {
        let d = self.fb_nm[self.at(dest, port)];
        (!d.is_nan()).then_some(d as f64)
    }

    /// A residual from destination router `dest`: for minimal packets (`port` None) or for
    /// non-minimal ones that left this router by `port`. Only the newest is kept.
    pub fn receive(&mut self, dest: u32, port: Option<u16>, d: f64) {
        match port {
            None => self.fb_min[dest as usize] = d as f32,
            Some(p) => {
                let i = self.at(dest, p);
                self.fb_nm[i] = d as f32;
            }
        }
    }

    /// The fork's `DoTraining` for (`o.dest`, `o.nm_port`) at `now`:
    ///
    /// * **Trigger**: at least `epoch` since this pair's last training, or at least one minimal
    ///   and one non-minimal sample, or at least three samples in all. Otherwise nothing.
    /// * **Exploration**: `p` = the minimal path's vacancy fraction: the smaller of the first
    ///   port's in a local buffer and the gateway's global port's (with
    ///   `global_port_vacancy`, a global first port's alone), `explore_step =
    ///   p·explore_rate·chan_diff` (0 if no vacancy).
    /// * **Both kinds of samples**: `step = η·(mean T_nm − mean T_min)`; if `step <
    ///   explore_step` and a draw `< p`, the step is `explore_step` instead. The non-minimal
    ///   samples are cleared.
    /// * **One kind only**: with probability `p`, add `explore_step` (only if non-minimal samples
    ///   exist or the bias is ≤ 0). Otherwise estimate the missing side from the net occupancies
    ///   and the feedback (`q + q_g + d + H`, or `q + (H − 1)·q_g` without feedback) and add
    ///   `η·(T_nm − T_min)` only when the sampled side is the slower.
    /// * **Clamp** to `[−B_g, ⌊B_g·H_min/H_nm⌋]`.
    pub fn train(&mut self, now: Time, o: &Observation, l: &Learning, rng: &mut Rng) {
        let i = self.at(o.dest, o.nm_port);
        let (min_n, nm_n) = self.sizes(o.dest, o.nm_port);
        let due = now.saturating_sub(self.last_train[i]) >= l.epoch;
        if !(due || (min_n >= 1 && nm_n >= 1) || min_n + nm_n >= 3) {
            return;
        }
        self.last_train[i] = now;
        let (prob, explore_step) = exploration(o, l);
        let mut bias = self.bias[i] as f64;
        if min_n > 0 && nm_n > 0 {
            let min_avg = self.min_hist[o.dest as usize].mean();
            let nm_avg = self.nm_sum[i] / nm_n as f64;
            let mut step = l.eta * (nm_avg - min_avg);
            if step < explore_step && rng.gen::<f64>() < prob {
                step = explore_step;
            }
            bias += step;
            self.nm_sum[i] = 0.0;
            self.nm_n[i] = 0;
        } else if rng.gen::<f64>() < prob {
            if nm_n > 0 || bias <= 0.0 {
                bias += explore_step;
            }
        } else if min_n > 0 {
            let min_avg = self.min_hist[o.dest as usize].mean();
            let nm_avg = match self.feedback_nm(o.dest, o.nm_port) {
                Some(d) => (o.q_nm_net + o.q_nm_g_net) as f64 + d + o.h_nm as f64,
                None => o.q_nm_net as f64 + (o.h_nm - 1) as f64 * o.q_nm_g_net as f64,
            };
            if min_avg > nm_avg {
                bias += l.eta * (nm_avg - min_avg);
            }
        } else if nm_n > 0 {
            let nm_avg = self.nm_sum[i] / nm_n as f64;
            let min_avg = match self.feedback_min(o.dest) {
                Some(d) => (o.q_min_net + o.q_min_g_net) as f64 + d + o.h_min as f64,
                None => o.q_min_net as f64 + (o.h_min - 1) as f64 * o.q_min_g_net as f64,
            };
            if nm_avg > min_avg {
                bias += l.eta * (nm_avg - min_avg);
            }
        }
        let hi = (l.global_buffer as u64 * o.h_min as u64 / o.h_nm.max(1) as u64) as f64;
        self.bias[i] = bias.clamp(-(l.global_buffer as f64), hi) as f32;
    }
}

/// The exploration probability and step of a training (see [`DgbTable::train`]).
pub fn exploration(o: &Observation, l: &Learning) -> (f64, f64) {
    let (bl, bg) = (l.local_buffer as f64, l.global_buffer as f64);
    let (vacancy, prob) = if o.min_global && l.global_port_vacancy {
        let v = bg - o.q_min as f64;
        (v, v / bg)
    } else {
        let (vl, vg) = (bl - o.q_min as f64, bg - o.q_min_g as f64);
        (vl.min(vg), (vl / bl).min(vg / bg))
    };
    let step = if vacancy <= 0.0 { 0.0 } else { (prob * l.explore_rate * o.chan_diff).max(0.0) };
    (prob, step)
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    const LEARN: Learning = Learning {
        eta: 0.25,
        explore_rate: 0.25,
        epoch: 50,
        local_buffer: 32,
        global_buffer: 256,
        global_port_vacancy: false,
    };

    /// A full minimal path (no vacancy: no exploration), 3 minimal hops against 5.
    fn full(dest: u32) -> Observation {
        Observation {
            dest,
            nm_port: 6,
            min_global: false,
            h_min: 3,
            h_nm: 5,
            q_min: 40,
            q_nm: 10,
            q_min_g: 300,
            q_nm_g: 20,
            q_min_net: 40,
            q_nm_net: 10,
            q_min_g_net: 300,
            q_nm_g_net: 20,
            chan_diff: 110.0,
        }
    }

    fn table() -> DgbTable {
        DgbTable::new(8, 4, 11)
    }

    #[test]
    fn the_gradient_step_is_eta_times_the_latency_gap_and_clears_the_nonminimal_samples() {
        let mut t = table();
        let mut rng = Rng::seed_from_u64(1);
        for v in [100.0, 120.0] {
            t.record_min(3, v);
        }
        t.record_nm(3, 6, 150.0);
        t.record_nm(3, 6, 170.0);
        t.train(10, &full(3), &LEARN, &mut rng);
        // 0.25·(160 − 110) = 12.5.
        assert_eq!(t.raw_bias(3, 6), 12.5);
        assert_eq!(t.bias(3, 6), 13.0);
        assert_eq!(t.sizes(3, 6), (2, 0));
        // Minimal samples stay: one new non-minimal sample triggers the next step.
        t.record_nm(3, 6, 50.0);
        t.train(11, &full(3), &LEARN, &mut rng);
        assert_eq!(t.raw_bias(3, 6), 12.5 + 0.25 * (50.0 - 110.0));
    }

    #[test]
    fn the_minimal_history_keeps_the_last_five() {
        let mut t = table();
        for v in 1..=7 {
            t.record_min(2, v as f64 * 10.0);
        }
        t.record_nm(2, 6, 50.0);
        t.train(0, &full(2), &LEARN, &mut Rng::seed_from_u64(1));
        // Mean of 30..70 is 50: no step.
        assert_eq!(t.raw_bias(2, 6), 0.0);
    }

    #[test]
    fn the_bias_is_clamped_to_the_global_buffer() {
        let mut t = table();
        let mut rng = Rng::seed_from_u64(1);
        t.record_min(1, 0.0);
        t.record_nm(1, 6, 10_000.0);
        t.train(0, &full(1), &LEARN, &mut rng);
        // ⌊256·3/5⌋ = 153.
        assert_eq!(t.raw_bias(1, 6), 153.0);
        t.record_nm(1, 6, 0.0);
        t.record_min(1, 100_000.0);
        t.record_min(1, 100_000.0);
        t.train(1, &full(1), &LEARN, &mut rng);
        assert_eq!(t.raw_bias(1, 6), -256.0);
    }

    #[test]
    fn no_training_without_a_trigger() {
        let mut t = table();
        let mut rng = Rng::seed_from_u64(1);
        t.record_nm(5, 6, 10_000.0);
        // One non-minimal sample, 10 ps after the last training: not due.
        t.train(10, &full(5), &LEARN, &mut rng);
        let i = t.at(5, 6);
        t.last_train[i] = 10;
        t.record_nm(5, 6, 10_000.0);
        assert_eq!(t.sizes(5, 6), (0, 2));
        // Two samples, 49 ps later: still nothing; at 50 ps the epoch has passed.
        t.train(59, &full(5), &LEARN, &mut rng);
        assert_eq!(t.raw_bias(5, 6), 0.0);
        // Due: non-minimal samples only, no feedback, so T_min = 40 + 2·300 = 640 < 10 000 and
        // the emergency step 0.25·(10 000 − 640) is clamped to ⌊256·3/5⌋.
        t.train(60, &full(5), &LEARN, &mut rng);
        assert_eq!(t.raw_bias(5, 6), 153.0);
    }

    #[test]
    fn one_sided_samples_take_the_emergency_step_only_when_the_sampled_side_is_slower() {
        let mut rng = Rng::seed_from_u64(1);
        // Minimal samples only, no feedback: T_nm = 10 + 4·20 = 90.
        let mut t = table();
        for _ in 0..3 {
            t.record_min(4, 130.0);
        }
        t.train(0, &full(4), &LEARN, &mut rng);
        assert_eq!(t.raw_bias(4, 6), 0.25 * (90.0 - 130.0));
        // Faster minimal samples: no step.
        let mut t = table();
        for _ in 0..3 {
            t.record_min(4, 50.0);
        }
        t.train(0, &full(4), &LEARN, &mut rng);
        assert_eq!(t.raw_bias(4, 6), 0.0);
        // Non-minimal samples only, with feedback d = 7: T_min = 40 + 300 + 7 + 3 = 350.
        let mut t = table();
        t.receive(4, None, 7.0);
        for _ in 0..3 {
            t.record_nm(4, 6, 400.0);
        }
        t.train(0, &full(4), &LEARN, &mut rng);
        assert_eq!(t.raw_bias(4, 6), 0.25 * (400.0 - 350.0));
    }

    #[test]
    fn exploration_follows_the_minimal_paths_vacancy() {
        // Local first port 8/32 used, gateway 64/256: p = min(0.75, 0.75), step = p·0.25·110.
        let o = Observation { q_min: 8, q_min_g: 64, ..full(0) };
        let (p, step) = exploration(&o, &LEARN);
        assert_eq!(p, 0.75);
        assert_eq!(step, 0.75 * 0.25 * 110.0);
        // A global first port (128 of 256 used): as the fork does, like a local one, so no
        // vacancy in a 32-flit buffer; with `global_port_vacancy`, its own vacancy over the
        // global buffer.
        let o = Observation { min_global: true, q_min: 128, q_min_g: 128, ..full(0) };
        assert_eq!(exploration(&o, &LEARN).1, 0.0);
        let global = Learning { global_port_vacancy: true, ..LEARN };
        assert_eq!(exploration(&o, &global), (0.5, 0.5 * 0.25 * 110.0));
        // No vacancy: no step (and a negative probability never draws).
        assert_eq!(exploration(&full(0), &LEARN).1, 0.0);
        // With both kinds of samples and an empty minimal path, a small gradient step is
        // replaced by the exploration step whenever the draw falls under p = 1.
        let mut t = table();
        t.record_min(0, 100.0);
        t.record_nm(0, 6, 100.0);
        let o = Observation { q_min: 0, q_min_g: 0, ..full(0) };
        t.train(0, &o, &LEARN, &mut Rng::seed_from_u64(3));
        assert_eq!(t.raw_bias(0, 6), 0.25 * 110.0);
    }
}
