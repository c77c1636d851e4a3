//! What Q-adaptive and Q-routing share: the per-router Q-tables, the (hysteretic) learning rule,
//! the knobs read from the configuration, and the routing-state memory model.
//!
//! Values are nanoseconds held in `f64`. With `routing.q_truncate = true` (the default) every
//! update is truncated toward zero to an integer, as the reference code stores its tables as
//! `int64` (qadaptive-reference.md §1.4), and the hop delay is taken in whole nanoseconds (the
//! reference time-stamps with the simulator's integer ns clock).

use bytemuck::{Pod, Zeroable};
use rand::Rng as _;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Rng, RouterView};
use crate::config::{NetworkConfig, QUpdate, RoutingParams};
use crate::topology::{Topology, NONE};
use crate::units::Time;

/// The per-packet fields of the learning routings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Pod, Zeroable)]
#[repr(C)]
pub struct QHeader {
    /// Arrival at the previous router's input (set when the packet arrives at the next one).
    pub prev_arrival: Time,
    /// The estimate the router that routed the packet last attached (its min-Q), sent back
    /// upstream in the feedback of the packet's departure from there.
    pub estimate: f64,
}

/// The hop-by-hop feedback of the learning routings, as the Q-adaptive reference code sends it:
/// when a packet that came from another router leaves this router's input buffer (its crossbar
/// grant), this router sends it back over the same link to the upstream router, where it
/// arrives on the output port the packet left by, with the credit latency (output + link +
/// input latency), using no bandwidth.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Feedback {
    /// Destination node of the packet the feedback is about.
    pub dst: u32,
    /// Source node of that packet.
    pub src: u32,
    /// Per-hop delay: from the packet's arrival at the upstream router's input to its arrival at
    /// this router's input (the reference's `queueing_time`), in picoseconds.
    pub hop_delay: Time,
    /// This router's estimate of the remaining time (ns).
    pub estimate: f64,
}

/// The parameters of Q-adaptive (the HPDC'21 1056-node values; the 2550-node system uses
/// `q_thld1 = 0.05`, `q_thld2 = 0.4`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct QAdaptiveParams {
    /// α, the learning rate for targets below the current Q (good news).
    #[schemars(extend("exclusiveMinimum" = 0.0), range(max = 1.0))]
    pub learning_rate: f64,
    /// β, the learning rate for targets at or above the current Q (bad news).
    #[schemars(extend("exclusiveMinimum" = 0.0), range(max = 1.0))]
    pub learning_rate2: f64,
    /// ε-greedy exploration probability at the decision points.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub epsilon: f64,
    /// Relative threshold at the source router.
    pub q_thld1: f64,
    /// Relative threshold at the first router of an intermediate group.
    pub q_thld2: f64,
    /// Hysteretic (α/β) or plain (α only) update.
    pub q_update: QUpdate,
    /// Truncate Q to whole ns after each update (the reference's int64 tables).
    pub q_truncate: bool,
    /// Multiplies the initial values (the link latencies of each entry's path, as the
    /// reference sets them; 1, the default). Above 1 an untried port starts at a latency
    /// nearer the loaded one, so that on a machine with many ports per row an untried detour
    /// does not win the argmin over a measured minimal path (docs/real-machines.md).
    #[schemars(extend("exclusiveMinimum" = 0.0), range(max = 1000.0))]
    pub q_init_scale: f64,
}

impl Default for QAdaptiveParams {
    fn default() -> Self {
        QAdaptiveParams {
            learning_rate: 0.2,
            learning_rate2: 0.04,
            epsilon: 0.001,
            q_thld1: 0.2,
            q_thld2: 0.35,
            q_update: QUpdate::Hysteretic,
            q_truncate: true,
            q_init_scale: 1.0,
        }
    }
}

impl RoutingParams for QAdaptiveParams {}

/// The parameters of Q-routing (the learning ones as Q-adaptive's).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct QRoutingParams {
    /// α, the learning rate for targets below the current Q (good news).
    #[schemars(extend("exclusiveMinimum" = 0.0), range(max = 1.0))]
    pub learning_rate: f64,
    /// β, the learning rate for targets at or above the current Q (bad news).
    #[schemars(extend("exclusiveMinimum" = 0.0), range(max = 1.0))]
    pub learning_rate2: f64,
    /// ε-greedy exploration probability.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub epsilon: f64,
    /// Router hops decided by the Q-table before minimal routing (VCs = max_q + 3).
    #[schemars(range(max = 32))]
    pub max_q: usize,
    /// Hysteretic (α/β) or plain (α only) update.
    pub q_update: QUpdate,
    /// Truncate Q to whole ns after each update.
    pub q_truncate: bool,
}

impl Default for QRoutingParams {
    fn default() -> Self {
        let q = QAdaptiveParams::default();
        QRoutingParams {
            learning_rate: q.learning_rate,
            learning_rate2: q.learning_rate2,
            epsilon: q.epsilon,
            max_q: 2,
            q_update: q.q_update,
            q_truncate: q.q_truncate,
        }
    }
}

impl RoutingParams for QRoutingParams {}

/// The learning routings' parameters as they run, with the link latencies of the initial
/// values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QParams {
    /// α, applied when the target is below the current value (good news).
    pub alpha: f64,
    /// β, applied when the target is at or above the current value (bad news).
    pub beta: f64,
    pub epsilon: f64,
    pub thld1: f64,
    pub thld2: f64,
    /// Q-routing: router hops decided by the table before the packet goes minimally.
    pub max_q: u32,
    pub truncate: bool,
    pub local_latency_ns: f64,
    pub global_latency_ns: f64,
    /// Q-adaptive's `q_init_scale` (1 for Q-routing).
    pub init_scale: f64,
}

impl QParams {
    /// Q-adaptive's parameters on network `n`.
    pub fn adaptive(p: &QAdaptiveParams, n: &NetworkConfig) -> QParams {
        let beta = if p.q_update == QUpdate::Hysteretic { p.learning_rate2 } else { p.learning_rate };
        QParams {
            alpha: p.learning_rate,
            beta,
            epsilon: p.epsilon,
            thld1: p.q_thld1,
            thld2: p.q_thld2,
            max_q: 0,
            truncate: p.q_truncate,
            local_latency_ns: n.local_latency_ns,
            global_latency_ns: n.global_latency_ns,
            init_scale: p.q_init_scale,
        }
    }

    /// Q-routing's parameters on network `n`.
    pub fn routing(p: &QRoutingParams, n: &NetworkConfig) -> QParams {
        let beta = if p.q_update == QUpdate::Hysteretic { p.learning_rate2 } else { p.learning_rate };
        QParams {
            alpha: p.learning_rate,
            beta,
            epsilon: p.epsilon,
            thld1: 0.0,
            thld2: 0.0,
            max_q: p.max_q as u32,
            truncate: p.q_truncate,
            local_latency_ns: n.local_latency_ns,
            global_latency_ns: n.global_latency_ns,
            init_scale: 1.0,
        }
    }
}

impl Default for QParams {
    /// Q-adaptive's defaults on the HPDC'21 network.
    fn default() -> QParams {
        let max_q = QRoutingParams::default().max_q as u32;
        QParams { max_q, ..QParams::adaptive(&QAdaptiveParams::default(), &NetworkConfig::default()) }
    }
}

impl QParams {
    /// Hysteretic Q-learning for costs, no discount (qadaptive-reference.md §1.4):
    /// `Δ = target − q`; `q + α·Δ` if Δ < 0, else `q + β·Δ`; truncated if configured.
    #[inline]
    pub fn learn(&self, q: f64, target: f64) -> f64 {
        let d = target - q;
        let v = if d < 0.0 { q + self.alpha * d } else { q + self.beta * d };
        if self.truncate {
            trunc(v)
        } else {
            v
        }
    }

    /// The feedback's `hop_delay + estimate` in ns (the hop delay in whole ns when truncating).
    #[inline]
    pub fn target(&self, fb: &Feedback) -> f64 {
        hop_delay_ns(fb.hop_delay, self.truncate) + fb.estimate
    }
}

/// `v.trunc()` without the library call it compiles to on baseline x86-64 (no SSE4.1 `roundsd`):
/// every magnitude from 2^52 up is already an integer (and ∞ and NaN stay as they are), below
/// that the conversion through `i64` truncates toward zero, and `copysign` keeps the sign of a
/// zero (−0.3 truncates to −0.0). Equal to `f64::trunc` bit for bit (tested).
#[inline]
fn trunc(v: f64) -> f64 {
    if v.abs() < (1u64 << 52) as f64 {
        ((v as i64) as f64).copysign(v)
    } else {
        v
    }
}

#[inline]
fn hop_delay_ns(ps: Time, whole: bool) -> f64 {
    if whole {
        (ps / 1000) as f64
    } else {
        ps as f64 / 1000.0
    }
}

/// The table of one router: `rows × cols`, columns = the non-host ports (`port − p`). Columns
/// of unconnected global ports hold +∞ and are never chosen.
///
/// Entries are stored as `f32` while every value written is exactly an `f32` (whole nanoseconds
/// up to 2^24 ns, as with `routing.q_truncate`, and the initial latencies), halving the tables so
/// that those of a 1,056-node network fit a 2 MB last-level cache; the first value that is not
/// (a fraction of a nanosecond with `q_truncate = false`, or beyond 16.7 ms) widens the table to
/// `f64` for good. Reads convert exactly, so results are those of `f64` tables bit for bit.
#[derive(Debug, Clone)]
pub struct QTable {
    pub rows: usize,
    pub cols: usize,
    store: Store,
}

#[derive(Debug, Clone)]
enum Store {
    Narrow(Vec<f32>),
    Wide(Vec<f64>),
}

impl QTable {
    pub fn new(rows: usize, cols: usize, init: f64) -> QTable {
        let mut t = QTable { rows, cols, store: Store::Narrow(vec![0.0; rows * cols]) };
        t.fill(init);
        t
    }

    fn fill(&mut self, v: f64) {
        match &mut self.store {
            Store::Narrow(d) if exact_f32(v) => d.fill(v as f32),
            _ => self.store = Store::Wide(vec![v; self.rows * self.cols]),
        }
    }

    /// Whether the entries are held as `f32` (no value written so far needed more).
    pub fn is_narrow(&self) -> bool {
        matches!(self.store, Store::Narrow(_))
    }

    /// The values of row `row` (a copy, for inspection and tests).
    pub fn row(&self, row: usize) -> Vec<f64> {
        (0..self.cols).map(|c| self.get(row, c)).collect()
    }

    /// The column of row `row` with the smallest value (ties to the lowest column) and its value.
    #[inline]
    pub fn best(&self, row: usize) -> (usize, f64) {
        let b = row * self.cols;
        match &self.store {
            Store::Narrow(d) => {
                let c = argmin(&d[b..b + self.cols]);
                (c, d[b + c] as f64)
            }
            Store::Wide(d) => {
                let c = argmin(&d[b..b + self.cols]);
                (c, d[b + c])
            }
        }
    }

    #[inline]
    pub fn get(&self, row: usize, col: usize) -> f64 {
        let i = row * self.cols + col;
        match &self.store {
            Store::Narrow(d) => d[i] as f64,
            Store::Wide(d) => d[i],
        }
    }

    #[inline]
    pub fn set(&mut self, row: usize, col: usize, v: f64) {
        let i = row * self.cols + col;
        match &mut self.store {
            Store::Narrow(d) if exact_f32(v) => d[i] = v as f32,
            Store::Narrow(d) => {
                let mut w: Vec<f64> = d.iter().map(|&x| x as f64).collect();
                w[i] = v;
                self.store = Store::Wide(w);
            }
            Store::Wide(d) => d[i] = v,
        }
    }

    /// Apply one feedback to entry (row, col) with the learning rule of `params`.
    #[inline]
    pub fn learn(&mut self, row: usize, col: usize, params: &QParams, fb: &Feedback) {
        let v = params.learn(self.get(row, col), params.target(fb));
        self.set(row, col, v);
    }

    pub fn entries(&self) -> usize {
        self.rows * self.cols
    }
}

/// Whether `v` survives the round trip through `f32` (NaN never does: it widens the table).
#[inline(always)]
fn exact_f32(v: f64) -> bool {
    (v as f32) as f64 == v
}

/// Column of the smallest value; ties go to the lowest column (= lowest port).
#[inline]
pub fn argmin<T: Copy + PartialOrd>(row: &[T]) -> usize {
    // The best value is carried, not re-read through `row[best]` (a dependent load and a
    // bounds check per column on every Q-adaptive hop).
    let Some((&first, rest)) = row.split_first() else { return 0 };
    let (mut best, mut bv) = (0, first);
    for (c, &v) in rest.iter().enumerate() {
        if v < bv {
            (best, bv) = (c + 1, v);
        }
    }
    best
}

/// Whether a non-host port of `router` leads anywhere.
#[inline]
pub fn connected(topo: &Topology, router: u32, port: u16) -> bool {
    port < topo.first_global_port() || topo.global_port_group(router, port) != NONE
}

/// A non-host port drawn uniformly among the connected ones (ε-greedy exploration).
pub fn random_port(view: &RouterView, rng: &mut Rng) -> u16 {
    let topo = view.topo;
    let (lo, hi) = (topo.p as u16, topo.radix as u16);
    loop {
        let port = rng.gen_range(lo..hi);
        if connected(topo, view.router, port) {
            return port;
        }
    }
}

/// Bytes of routing state per router of the reference implementations: one `int64` per table
/// entry (dflab holds the same entries in 4 bytes while they are whole nanoseconds, see
/// [`QTable`]).
pub const BYTES_PER_ENTRY: usize = 8;

/// Table entries per router of Q-adaptive's two-level table: `(g−1)·p` rows × `(k−p)` columns.
pub fn q_adaptive_entries(topo: &Topology) -> usize {
    (topo.g - 1) * topo.p * (topo.radix - topo.p)
}

/// Table entries per router of Q-routing: one row per other router, `(g·a−1)` × `(k−p)`.
pub fn q_routing_entries(topo: &Topology) -> usize {
    (topo.g * topo.a - 1) * (topo.radix - topo.p)
}

/// Routing-state bytes per router: (Q-adaptive, Q-routing).
pub fn state_bytes_per_router(topo: &Topology) -> (usize, usize) {
    (q_adaptive_entries(topo) * BYTES_PER_ENTRY, q_routing_entries(topo) * BYTES_PER_ENTRY)
}

#[cfg(test)]
mod tests {
    use super::{argmin, trunc, QTable};
    use proptest::prelude::*;

    /// A plain `f64` table, the reference for the compact one.
    struct Wide {
        cols: usize,
        data: Vec<f64>,
    }

    impl Wide {
        fn best(&self, row: usize) -> (usize, f64) {
            let r = &self.data[row * self.cols..(row + 1) * self.cols];
            let c = argmin(r);
            (c, r[c])
        }
    }

    #[test]
    fn whole_nanoseconds_stay_narrow_and_a_fraction_widens_exactly() {
        let mut t = QTable::new(3, 4, 150.0);
        t.set(0, 1, f64::INFINITY);
        t.set(1, 2, 16_777_216.0); // 2^24: still exact in f32
        t.set(2, 3, -0.0);
        assert!(t.is_narrow());
        assert_eq!(t.get(2, 3).to_bits(), (-0.0f64).to_bits());
        t.set(1, 0, 16_777_217.0); // 2^24 + 1 is not an f32
        assert!(!t.is_narrow());
        assert_eq!(t.get(1, 0), 16_777_217.0);
        assert_eq!((t.get(0, 1), t.get(1, 2), t.get(0, 0)), (f64::INFINITY, 16_777_216.0, 150.0));
        let mut f = QTable::new(2, 2, 20.5); // 20.5 is an f32: narrow
        assert!(f.is_narrow());
        f.set(0, 0, 0.1);
        assert!(!f.is_narrow());
        assert_eq!((f.get(0, 0), f.get(1, 1)), (0.1, 20.5));
    }

    proptest! {
        /// Any sequence of writes gives the same reads and the same best column as an `f64`
        /// table, whether the values are whole nanoseconds (narrow) or not (widened on the way).
        #[test]
        fn compact_table_reads_as_an_f64_table(
            writes in prop::collection::vec((0usize..4, 0usize..5, -3e7f64..3e7, any::<bool>()), 0..60)
        ) {
            let (rows, cols) = (4, 5);
            let mut t = QTable::new(rows, cols, 300.0);
            let mut w = Wide { cols, data: vec![300.0; rows * cols] };
            for (r, c, v, whole) in writes {
                let v = if whole { v.trunc() } else { v };
                t.set(r, c, v);
                w.data[r * cols + c] = v;
            }
            for r in 0..rows {
                for c in 0..cols {
                    prop_assert_eq!(t.get(r, c).to_bits(), w.data[r * cols + c].to_bits());
                }
                let (tb, tv) = t.best(r);
                let (wb, wv) = w.best(r);
                prop_assert_eq!((tb, tv.to_bits()), (wb, wv.to_bits()));
            }
        }
    }

    #[test]
    fn trunc_is_f64_trunc_bit_for_bit_on_edge_values() {
        let two52 = (1u64 << 52) as f64;
        let edges = [
            0.0,
            -0.0,
            0.3,
            -0.3,
            0.999_999_999,
            -0.999_999_999,
            1.0,
            -1.0,
            329.7,
            -329.7,
            two52 - 0.5,
            -(two52 - 0.5),
            two52,
            -two52,
            two52 + 1.0,
            1e300,
            -1e300,
            f64::MAX,
            f64::MIN,
            f64::MIN_POSITIVE,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        for v in edges {
            assert_eq!(trunc(v).to_bits(), v.trunc().to_bits(), "{v}");
        }
        assert!(trunc(f64::NAN).is_nan());
    }

    proptest! {
        /// Any finite or infinite value, drawn as bits (so every exponent is covered).
        #[test]
        fn trunc_is_f64_trunc_bit_for_bit(bits in any::<u64>()) {
            let v = f64::from_bits(bits);
            prop_assume!(!v.is_nan());
            prop_assert_eq!(trunc(v).to_bits(), v.trunc().to_bits());
        }

        #[test]
        fn trunc_matches_on_q_value_magnitudes(v in -1e7f64..1e7) {
            prop_assert_eq!(trunc(v).to_bits(), v.trunc().to_bits());
        }

        /// The first column holding the row's minimum (ties to the lowest port), values drawn
        /// from a few levels so that ties are common, +∞ as for unconnected ports included.
        #[test]
        fn argmin_is_the_first_smallest_column(levels in prop::collection::vec(0u8..5, 1..24)) {
            let row: Vec<f64> = levels.iter().map(|&l| if l == 4 { f64::INFINITY } else { 100.0 * l as f64 }).collect();
            let min = row.iter().cloned().fold(f64::INFINITY, f64::min);
            let first = row.iter().position(|&v| v == min).unwrap();
            prop_assert_eq!(argmin(&row), first);
        }
    }
}
