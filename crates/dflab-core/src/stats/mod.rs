//! Measurement: latency histograms (HdrHistogram), throughput, hop counts and per-window time
//! series.
//!
//! Conventions (documented in docs/config.md): offered load counts packets *generated* in the
//! measurement window; accepted load, latency, hops and the minimal share count packets
//! *delivered* in the window (as the reference's post-processing of delivery logs does). Latency
//! runs from generation (source queueing included); network latency from the NIC's send.

pub mod online;
pub mod ports;
pub mod probes;
pub mod steady;

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::network::Stamps;
use crate::units::{ps_to_ns, ps_to_us, Time};

pub use probes::{ProbeKind, ProbeResults, ProbeSpec, Probes};
pub use steady::{diagnose, Diagnostics};

pub struct Stats {
    measure_start: Time,
    measure_end: Time,
    window: Time,
    latency: LatencyHist,
    net_latency: LatencyHist,
    lat_sum_ps: u128,
    net_lat_sum_ps: u128,
    lat_max: Time,
    net_lat_max: Time,
    minimal: u64,
    delivered: u64,
    bytes_delivered: u64,
    generated: u64,
    bytes_generated: u64,
    /// `hops[h]`: packets delivered after `h` hops (the header counts hops in a `u8`, so every
    /// count has a slot and recording needs no bounds check or growth).
    hops: [u64; 256],
    windows: Vec<Window>,
    /// The window found last, as `[start, end)` and index: consecutive records fall in the same
    /// window almost always, and comparing two times is cheaper than a 64-bit division.
    last_window: (Time, Time, usize),
}

#[derive(Default)]
struct Window {
    gen_bytes: u64,
    del_bytes: u64,
    lat_sum_ps: u128,
    count: u64,
    minimal: u64,
    /// The window's latency histogram (HdrHistogram, 2 significant digits) as its bucket counts:
    /// `lat_counts[win_index(ns)]`, grown to the highest bucket seen (at most [`WIN_BUCKETS`],
    /// nothing for a window without deliveries). Counting a bucket directly replaces
    /// HdrHistogram's `saturating_record` (about 60 instructions per delivered packet); the
    /// histogram is rebuilt from the counts when the series is read ([`Window::latency_p99`]).
    lat_counts: Vec<u32>,
}

impl Window {
    #[inline]
    fn record_latency(&mut self, ns: u64) {
        let i = win_index(ns);
        match self.lat_counts.get_mut(i) {
            Some(c) => *c = c.saturating_add(1),
            None => self.grow_and_record(i),
        }
    }

    #[cold]
    #[inline(never)]
    fn grow_and_record(&mut self, i: usize) {
        debug_assert!(i < WIN_BUCKETS);
        self.lat_counts.resize(i + 1, 0);
        self.lat_counts[i] = 1;
    }

    /// The 99th percentile of the window's latencies (NaN without deliveries).
    fn latency_p99(&self, scratch: &mut Histogram<u32>) -> f64 {
        if self.count == 0 {
            return f64::NAN;
        }
        self.rebuild_latency(scratch);
        scratch.value_at_quantile(0.99) as f64
    }

    /// Make `scratch` the HdrHistogram that recording each of the window's latencies would have
    /// built.
    fn rebuild_latency(&self, scratch: &mut Histogram<u32>) {
        scratch.reset();
        let mut counted = 0;
        for (i, &c) in self.lat_counts.iter().enumerate().filter(|(_, &c)| c > 0) {
            scratch.saturating_record_n(win_value(i), c);
            counted += c as u64;
        }
        // Each delivery counted one latency, so `count` is the histogram's total. Counters stuck
        // at u32::MAX (as HdrHistogram's own would be) left the excess out of `counted`: record it
        // at a full counter, which stays full while the total grows, as it did in HdrHistogram.
        let mut excess = self.count - counted;
        if excess > 0 {
            let full = self.lat_counts.iter().position(|&c| c == u32::MAX).expect("a full counter");
            while excess > 0 {
                let n = excess.min(u32::MAX as u64);
                scratch.saturating_record_n(win_value(full), n as u32);
                excess -= n;
            }
        }
    }
}

/// Whole-run summary; field names are a stable interface (docs/config.md).
#[derive(Debug, Clone, Serialize, Default)]
pub struct Summary {
    pub offered_load: f64,
    pub accepted_load: f64,
    pub offered_gbps_per_node: f64,
    pub accepted_gbps_per_node: f64,
    pub accepted_total_gbps: f64,
    pub latency_mean_ns: f64,
    pub latency_p50_ns: f64,
    pub latency_p95_ns: f64,
    pub latency_p99_ns: f64,
    pub latency_max_ns: f64,
    pub network_latency_mean_ns: f64,
    pub network_latency_p50_ns: f64,
    pub network_latency_p95_ns: f64,
    pub network_latency_p99_ns: f64,
    pub network_latency_max_ns: f64,
    pub hops_mean: f64,
    pub minimal_fraction: f64,
    pub packets_generated: u64,
    pub packets_delivered: u64,
    pub packets_in_flight_end: u64,
    pub source_queue_end: u64,
    pub sim_time_us: f64,
    pub router_traversals: u64,
    /// Where the measurement started, when `run.steady_warmup` ended the warm-up early.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measure_start_us: Option<f64>,
    /// Why the run stopped before its end (`"saturated"`: `run.stop_when_saturated`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

/// How a run was carried out, not what it found: the wall-clock time and the engine's work,
/// kept apart from the [`Summary`] so that results can be compared byte for byte.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Execution {
    pub wall_s: f64,
    /// Events handled (depends on the engine's version and the number of partitions).
    pub events: u64,
    pub ns_per_router_traversal: f64,
    pub sim_us_per_wall_s: f64,
    /// Logical partitions the run was cut into.
    pub partitions: usize,
}

/// Per-window time series, column-wise.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Series {
    pub window_start_us: Vec<f64>,
    pub window_end_us: Vec<f64>,
    pub offered_load: Vec<f64>,
    pub accepted_load: Vec<f64>,
    pub latency_mean_ns: Vec<f64>,
    pub latency_p99_ns: Vec<f64>,
    pub minimal_fraction: Vec<f64>,
    pub packets_delivered: Vec<u64>,
    pub in_measurement: Vec<bool>,
}

/// Latencies (ns) below this are counted directly (see [`LatencyHist`]): 32 µs covers every
/// packet of an unsaturated network.
const DIRECT_NS: usize = 1 << 15;

/// A whole-run latency histogram (HdrHistogram, 3 significant digits) fronted by one plain
/// counter per ns below [`DIRECT_NS`]. Recording a value there is an increment instead of
/// HdrHistogram's bucket search (about 60 instructions, twice per delivered packet); the
/// counters are added with `record_n` when the histogram is read, which gives exactly the
/// histogram that recording each value would have built. The counters are `u64` like the
/// histogram's own, so they need no overflow check: each counts delivered packets.
struct LatencyHist {
    direct: Vec<u64>,
    hdr: Histogram<u64>,
}

impl LatencyHist {
    fn new() -> LatencyHist {
        LatencyHist { direct: vec![0; DIRECT_NS], hdr: hist(3) }
    }

    #[inline]
    fn record(&mut self, ns: u64) {
        match self.direct.get_mut(ns as usize) {
            Some(c) => *c += 1,
            None => self.record_slow(ns),
        }
    }

    /// Out of line: latencies of 32 µs or more are rare, and keeping the call out of
    /// [`Stats::on_deliver`] saves it spilling registers around it on every delivery.
    #[cold]
    #[inline(never)]
    fn record_slow(&mut self, ns: u64) {
        self.hdr.saturating_record(ns);
    }

    /// The histogram of every recorded value.
    fn folded(&self) -> Histogram<u64> {
        let mut h = self.hdr.clone();
        for (ns, &c) in self.direct.iter().enumerate().filter(|(_, &c)| c > 0) {
            h.saturating_record_n(ns as u64, c);
        }
        h
    }
}

/// Buckets of a window histogram: HdrHistogram with lowest value 1, highest 10^9 and 2
/// significant digits has 256 sub-buckets (the power of two above 2 * 10^2) and 23 buckets,
/// 24 * 128 counts.
const WIN_BUCKETS: usize = 24 << 7;

/// HdrHistogram's count index of `ns` in a window histogram (`Histogram::index_for` with
/// unit magnitude 0, 256 sub-buckets, half count 128): bucket `b` is how many powers of two `ns`
/// lies above 255, and its upper 128 sub-buckets follow bucket `b - 1`'s at `b * 128`. The
/// tests check it against HdrHistogram bucket by bucket.
#[inline]
fn win_index(ns: u64) -> usize {
    let b = 56 - (ns | 255).leading_zeros();
    (((b as u64) << 7) + (ns >> b)) as usize
}

/// The lowest value of count index `i` (HdrHistogram's `value_for`): the inverse of
/// [`win_index`].
fn win_value(i: usize) -> u64 {
    if i < 256 {
        i as u64
    } else {
        ((i as u64 & 127) + 128) << ((i >> 7) - 1)
    }
}

fn hist<T: hdrhistogram::Counter>(sigfig: u8) -> Histogram<T> {
    // Latencies recorded in ns, 1 ns .. 1 s.
    Histogram::new_with_bounds(1, 1_000_000_000, sigfig).expect("valid histogram bounds")
}

/// `ps` rounded up to whole ns, clamped to the histograms' range 1 ns .. 1 s. Clamping at 10^12
/// ps first (whose ns is exactly 10^9) keeps `+ 999` from overflowing, so the ceiling needs no
/// remainder test (`div_ceil` computes one: 3.4 M more instructions in a 0.9 G-instruction run).
#[inline]
#[allow(clippy::manual_div_ceil)]
fn ns_bucket(ps: Time) -> u64 {
    ((ps.min(1_000_000_000_000) + 999) / 1000).max(1)
}

impl Stats {
    pub fn new(measure_start: Time, measure_end: Time, window: Time) -> Stats {
        let n = measure_end.div_ceil(window) as usize;
        Stats {
            measure_start,
            measure_end,
            window,
            latency: LatencyHist::new(),
            net_latency: LatencyHist::new(),
            lat_sum_ps: 0,
            net_lat_sum_ps: 0,
            lat_max: 0,
            net_lat_max: 0,
            minimal: 0,
            delivered: 0,
            bytes_delivered: 0,
            generated: 0,
            bytes_generated: 0,
            hops: [0; 256],
            windows: (0..n).map(|_| Window::default()).collect(),
            last_window: (Time::MAX, 0, 0),
        }
    }

    #[inline]
    pub fn in_measurement(&self, t: Time) -> bool {
        t >= self.measure_start && t < self.measure_end
    }

    #[inline]
    fn window_mut(&mut self, t: Time) -> Option<&mut Window> {
        let (start, end, i) = self.last_window;
        if t >= start && t < end {
            return Some(&mut self.windows[i]);
        }
        let i = (t / self.window) as usize;
        let w = self.windows.get_mut(i)?;
        self.last_window = (i as Time * self.window, (i as Time + 1) * self.window, i);
        Some(w)
    }

    /// `n` packets of `bytes` each generated at `t`.
    #[inline]
    pub fn on_generate(&mut self, t: Time, n: u64, bytes: u64) {
        if self.in_measurement(t) {
            self.generated += n;
            self.bytes_generated += n * bytes;
        }
        if let Some(w) = self.window_mut(t) {
            w.gen_bytes += n * bytes;
        }
    }

    /// A packet delivered at `t` after `hops` hops, on a minimal path or not, with its time
    /// stamps (the fields read, passed by value: nothing is read again through a reference).
    #[inline(always)]
    pub fn on_deliver(&mut self, t: Time, hops: u8, minimal: bool, stamps: Stamps, bytes: u64) {
        let lat = t - stamps.gen_time;
        let lat_ns = ns_bucket(lat);
        let minimal = minimal as u64;
        if let Some(w) = self.window_mut(t) {
            w.del_bytes += bytes;
            w.lat_sum_ps += lat as u128;
            w.count += 1;
            w.minimal += minimal;
            w.record_latency(lat_ns);
        }
        if self.in_measurement(t) {
            let net = t - stamps.inject_time;
            self.delivered += 1;
            self.bytes_delivered += bytes;
            self.lat_sum_ps += lat as u128;
            self.net_lat_sum_ps += net as u128;
            self.lat_max = self.lat_max.max(lat);
            self.net_lat_max = self.net_lat_max.max(net);
            self.minimal += minimal;
            // The hop sum is the histogram's (see `summary`).
            self.hops[hops as usize] += 1;
            // Last: their rare calls into HdrHistogram then leave little to keep in registers.
            self.latency.record(lat_ns);
            self.net_latency.record(ns_bucket(net));
        }
    }

    /// Packets per hop count, up to the highest count seen.
    pub fn hops_histogram(&self) -> Vec<u64> {
        let len = self.hops.iter().rposition(|&c| c > 0).map_or(0, |h| h + 1);
        self.hops[..len].to_vec()
    }

    /// Summary figures; `capacity_bytes_per_ps` is the injection bandwidth of one node.
    pub fn summary(&self, nodes: usize, node_bw_gbps: f64) -> Summary {
        let span_ns = ps_to_ns(self.measure_end - self.measure_start);
        let capacity = nodes as f64 * node_bw_gbps * span_ns; // bytes the nodes could inject
        let per_node = |bytes: u64| bytes as f64 / nodes as f64 / span_ns; // GB/s
                                                                           // Statistics of an empty sample are NaN, which results carry as null (newcomer #11: a
                                                                           // 0.0 there biased means over seeds and drew as a real value).
        let none = self.delivered == 0;
        let d = self.delivered as f64;
        let (latency, net_latency) = (self.latency.folded(), self.net_latency.folded());
        // Percentiles come from whole-ns buckets (rounded up), the maximum is exact: a
        // percentile is clamped to the maximum (newcomer #18).
        let q = |h: &Histogram<u64>, p: f64, max: Time| {
            if none {
                f64::NAN
            } else {
                (h.value_at_quantile(p) as f64).min(ps_to_ns(max))
            }
        };
        let per_packet = |x: f64| if none { f64::NAN } else { x / d };
        let ns_mean = |sum_ps: u128| if none { f64::NAN } else { ps_to_ns((sum_ps as f64 / d) as Time) };
        let ns_max = |ps: Time| if none { f64::NAN } else { ps_to_ns(ps) };
        Summary {
            offered_load: self.bytes_generated as f64 / capacity,
            accepted_load: self.bytes_delivered as f64 / capacity,
            offered_gbps_per_node: per_node(self.bytes_generated),
            accepted_gbps_per_node: per_node(self.bytes_delivered),
            accepted_total_gbps: self.bytes_delivered as f64 / span_ns,
            latency_mean_ns: ns_mean(self.lat_sum_ps),
            latency_p50_ns: q(&latency, 0.50, self.lat_max),
            latency_p95_ns: q(&latency, 0.95, self.lat_max),
            latency_p99_ns: q(&latency, 0.99, self.lat_max),
            latency_max_ns: ns_max(self.lat_max),
            network_latency_mean_ns: ns_mean(self.net_lat_sum_ps),
            network_latency_p50_ns: q(&net_latency, 0.50, self.net_lat_max),
            network_latency_p95_ns: q(&net_latency, 0.95, self.net_lat_max),
            network_latency_p99_ns: q(&net_latency, 0.99, self.net_lat_max),
            network_latency_max_ns: ns_max(self.net_lat_max),
            hops_mean: per_packet(self.hops.iter().enumerate().map(|(h, &c)| h as u64 * c).sum::<u64>() as f64),
            minimal_fraction: per_packet(self.minimal as f64),
            packets_generated: self.generated,
            packets_delivered: self.delivered,
            ..Summary::default()
        }
    }

    pub fn series(&self, nodes: usize, node_bw_gbps: f64) -> Series {
        let mut s = Series::default();
        let mut scratch = hist(2);
        // Up to the run's end (which a stopped run moved earlier).
        let windows = self.measure_end.div_ceil(self.window) as usize;
        for (i, w) in self.windows.iter().enumerate().take(windows) {
            let start = i as Time * self.window;
            let end = (start + self.window).min(self.measure_end);
            let cap = nodes as f64 * node_bw_gbps * ps_to_ns(end - start);
            s.window_start_us.push(ps_to_us(start));
            s.window_end_us.push(ps_to_us(end));
            s.offered_load.push(w.gen_bytes as f64 / cap);
            s.accepted_load.push(w.del_bytes as f64 / cap);
            let c = w.count.max(1) as f64;
            s.latency_mean_ns.push(if w.count == 0 { f64::NAN } else { w.lat_sum_ps as f64 / c / 1000.0 });
            s.latency_p99_ns.push(w.latency_p99(&mut scratch));
            s.minimal_fraction.push(if w.count == 0 { f64::NAN } else { w.minimal as f64 / c });
            s.packets_delivered.push(w.count);
            s.in_measurement.push(start >= self.measure_start);
        }
        s
    }
}

#[cfg(test)]
mod tests {

    use crate::network::Stamps as PacketStamps;

    /// Newcomer #11 and #18: an empty sample gives NaN (null in results), never 0; a percentile
    /// never exceeds the maximum although it comes from whole-ns buckets.
    #[test]
    fn empty_samples_are_nan_and_percentiles_stay_below_the_maximum() {
        let mut s = Stats::new(0, 1_000_000, 1_000_000);
        s.on_generate(10, 1, 64);
        let e = s.summary(4, 4.0);
        for v in [e.latency_mean_ns, e.latency_p50_ns, e.latency_p99_ns, e.latency_max_ns, e.network_latency_p95_ns] {
            assert!(v.is_nan());
        }
        assert!(e.hops_mean.is_nan() && e.minimal_fraction.is_nan());
        assert_eq!((e.accepted_load, e.packets_delivered), (0.0, 0));
        // One packet of 494.4 ns: its bucket is 495 ns, the percentiles are its exact latency.
        s.on_deliver(494_400, 3, true, PacketStamps { gen_time: 0, inject_time: 0 }, 64);
        let one = s.summary(4, 4.0);
        assert_eq!(one.latency_max_ns, 494.4);
        assert_eq!((one.latency_p50_ns, one.latency_p99_ns), (494.4, 494.4));
        assert_eq!((one.hops_mean, one.minimal_fraction), (3.0, 1.0));
    }
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The direct counters change nothing: the folded histogram equals one built by
        /// recording every value into HdrHistogram, on both sides of `DIRECT_NS`.
        #[test]
        fn folded_histogram_equals_recording_each_value(values in proptest::collection::vec(1u64..3 * DIRECT_NS as u64, 1..2000)) {
            let mut fast = LatencyHist::new();
            let mut plain = hist::<u64>(3);
            for &v in &values {
                fast.record(v);
                plain.saturating_record(v);
            }
            let folded = fast.folded();
            prop_assert!(folded == plain);
            prop_assert_eq!(folded.len(), values.len() as u64);
            prop_assert_eq!(folded.max(), plain.max());
            prop_assert_eq!(folded.value_at_quantile(0.99), plain.value_at_quantile(0.99));
        }
    }

    proptest! {
        /// A window's bucket counts rebuild exactly the histogram that recording each latency
        /// would have built, from single-ns buckets to the clamp at 1 s.
        #[test]
        fn window_histogram_equals_recording_each_value(
            values in proptest::collection::vec(prop_oneof![1u64..2000, 1u64..100_000, 1u64..=1_000_000_000], 1..2000)
        ) {
            let mut w = Window::default();
            let mut plain = hist::<u32>(2);
            for &v in &values {
                w.record_latency(v);
                w.count += 1;
                plain.saturating_record(v);
            }
            let mut rebuilt = hist(2);
            w.rebuild_latency(&mut rebuilt);
            prop_assert!(rebuilt == plain);
            prop_assert_eq!(w.latency_p99(&mut rebuilt), plain.value_at_quantile(0.99) as f64);
        }

        #[test]
        fn ns_bucket_is_the_clamped_ceiling(ps in prop_oneof![0u64..5000, 0u64..2_000_000_000_000, any::<u64>()]) {
            prop_assert_eq!(ns_bucket(ps), ps.div_ceil(1000).clamp(1, 1_000_000_000));
        }
    }

    /// `win_index` is HdrHistogram's index at every bucket boundary: each value maps to the index
    /// whose lowest value is the value's lowest equivalent, and indices increase one at a time.
    #[test]
    fn window_index_matches_hdrhistogram() {
        let h = hist::<u32>(2);
        let mut last = 0;
        let mut v = 1;
        while v <= 1_000_000_000 {
            let i = win_index(v);
            assert_eq!(win_value(i), h.lowest_equivalent(v), "value {v}");
            assert!(i == last || i == last + 1, "value {v}");
            assert!(i < WIN_BUCKETS);
            last = i;
            // Step within the value's bucket: every sub-bucket boundary is visited.
            v += h.equivalent_range(v);
        }
        assert_eq!(last, win_index(1_000_000_000));
        assert_eq!(h.distinct_values(), WIN_BUCKETS);
        for v in 1..70_000 {
            assert_eq!(win_value(win_index(v)), h.lowest_equivalent(v));
        }
    }

    #[test]
    fn full_window_counters_keep_the_total() {
        let mut w = Window::default();
        let mut plain = hist::<u32>(2);
        w.record_latency(700);
        w.lat_counts[win_index(700)] = u32::MAX - 1;
        w.count = u32::MAX as u64 - 1;
        plain.saturating_record_n(700, u32::MAX - 1);
        for _ in 0..3 {
            w.record_latency(700);
            w.count += 1;
            plain.saturating_record(700);
        }
        w.record_latency(5000);
        w.count += 1;
        plain.saturating_record(5000);
        let mut rebuilt = hist(2);
        w.rebuild_latency(&mut rebuilt);
        assert!(rebuilt == plain);
        assert_eq!(rebuilt.len(), u32::MAX as u64 + 3);
        assert_eq!(w.latency_p99(&mut rebuilt), plain.value_at_quantile(0.99) as f64);
    }

    #[test]
    fn hops_histogram_ends_at_the_highest_hop_count() {
        let mut s = Stats::new(0, 10, 10);
        assert!(s.hops_histogram().is_empty());
        s.hops[3] = 2;
        s.hops[1] = 1;
        assert_eq!(s.hops_histogram(), vec![0, 1, 0, 2]);
    }
}
