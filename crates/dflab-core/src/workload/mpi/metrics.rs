//! What the MPI layer measures per job (the SC'22 study's application metrics,
//! `../shared/reference/workloads.md` §3.4): one row per job, one per rank and iteration, the
//! bytes each job received in fixed windows, and its packet latency distributions (from
//! injection, and from entering the source queue).

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::units::{ps_to_ns, ps_to_us, Time};

/// One iteration of one rank: when it started and stopped, and the part of it not spent
/// computing (Ember's per-iteration `comm`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct IterationRow {
    pub job: u32,
    pub rank: u32,
    pub iteration: u32,
    pub start_us: f64,
    pub stop_us: f64,
    pub comm_us: f64,
}

/// One job's totals. Times are from the start of the run (the paper's execution time includes
/// the `wait2start` compute).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct JobRow {
    pub job: u32,
    pub name: String,
    pub motif: String,
    pub ranks: u32,
    /// Whether every rank ran every iteration before the run ended.
    pub finished: bool,
    /// When the last rank finished (or the end of the run), us.
    pub exec_us: f64,
    /// Point-to-point messages sent (collectives' included; rendezvous control messages not).
    pub messages: u64,
    pub payload_bytes: u64,
    /// Bytes on the wire: payload, match headers and rendezvous control messages.
    pub wire_bytes: u64,
    /// `wire_bytes / exec`, GB/s (the paper's message injection rate).
    pub injection_rate_gbs: f64,
    /// The largest payload one rank posted back to back before waiting (the paper's peak
    /// ingress volume).
    pub peak_ingress_bytes: u64,
    /// Per rank, the communication time summed over its iterations: mean, standard deviation
    /// over ranks, maximum (us).
    pub comm_mean_us: f64,
    pub comm_std_us: f64,
    pub comm_max_us: f64,
    pub packets: u64,
    #[serde(flatten)]
    pub latency: PacketLatency,
    /// Packet latency from entering the NIC's source queue to delivery (the wait for the NIC
    /// included, as SST counts from `LinkControl::send`), ns.
    pub packet_latency_mean_ns: f64,
    pub packet_latency_q1_ns: f64,
    pub packet_latency_p50_ns: f64,
    pub packet_latency_q3_ns: f64,
    pub packet_latency_p95_ns: f64,
    pub packet_latency_p99_ns: f64,
    pub packet_latency_max_ns: f64,
}

/// Packet latency from injection to delivery, ns (flattened into the rows that carry it, so
/// its fields keep their `latency_*_ns` names in the results).
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Default)]
pub struct PacketLatency {
    #[serde(rename = "latency_mean_ns")]
    pub mean_ns: f64,
    #[serde(rename = "latency_q1_ns")]
    pub q1_ns: f64,
    #[serde(rename = "latency_p50_ns")]
    pub p50_ns: f64,
    #[serde(rename = "latency_q3_ns")]
    pub q3_ns: f64,
    #[serde(rename = "latency_p95_ns")]
    pub p95_ns: f64,
    #[serde(rename = "latency_p99_ns")]
    pub p99_ns: f64,
    #[serde(rename = "latency_max_ns")]
    pub max_ns: f64,
}

/// The latencies of one set of packets (a job's, or the background traffic's): a histogram for
/// the quantiles and an exact sum for the mean.
pub struct LatencyRecorder {
    histogram: Histogram<u64>,
    sum: u128,
}

impl Default for LatencyRecorder {
    fn default() -> Self {
        // 1 ps to 1 s at 3 significant digits (about 0.6 MB).
        let histogram = Histogram::new_with_bounds(1, 1_000_000_000_000, 3).expect("valid bounds");
        LatencyRecorder { histogram, sum: 0 }
    }
}

impl LatencyRecorder {
    #[inline]
    pub fn record(&mut self, latency: Time) {
        self.histogram.saturating_record(latency.max(1));
        self.sum += latency as u128;
    }

    pub fn packets(&self) -> u64 {
        self.histogram.len()
    }

    pub fn report(&self) -> PacketLatency {
        let h = &self.histogram;
        if h.is_empty() {
            return PacketLatency::default();
        }
        let q = |f: f64| ps_to_ns(h.value_at_quantile(f));
        PacketLatency {
            mean_ns: ps_to_ns((self.sum / h.len() as u128) as Time),
            q1_ns: q(0.25),
            p50_ns: q(0.5),
            q3_ns: q(0.75),
            p95_ns: q(0.95),
            p99_ns: q(0.99),
            max_ns: ps_to_ns(h.max()),
        }
    }
}

/// The per-job results of a workload run.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct WorkloadReport {
    pub jobs: Vec<JobRow>,
    pub iterations: Vec<IterationRow>,
    /// Bytes each job received per window (by delivery time): `throughput[job][w]` for the
    /// window starting at `w * throughput_window_us`.
    pub throughput_window_us: f64,
    pub throughput_bytes: Vec<Vec<u64>>,
}

/// What is counted for one job while it runs.
pub struct JobStats {
    pub messages: u64,
    pub payload_bytes: u64,
    pub wire_bytes: u64,
    pub peak_ingress: u64,
    pub latency: LatencyRecorder,
    /// From entering the source queue (`Stamps::gen_time`).
    pub queued: LatencyRecorder,
    pub received: Vec<u64>,
    window: Time,
    /// Per rank, communication time so far (ps).
    pub comm: Vec<Time>,
    /// When the last rank finished.
    pub done_at: Option<Time>,
    pub ranks_done: u32,
}

impl JobStats {
    pub fn new(ranks: u32, window: Time) -> JobStats {
        JobStats {
            messages: 0,
            payload_bytes: 0,
            wire_bytes: 0,
            peak_ingress: 0,
            latency: LatencyRecorder::default(),
            queued: LatencyRecorder::default(),
            received: Vec::new(),
            window,
            comm: vec![0; ranks as usize],
            done_at: None,
            ranks_done: 0,
        }
    }

    /// A packet of `bytes` bytes of this job was delivered at `now`, `latency` ps after its
    /// injection and `queued` ps after it entered the source queue.
    #[inline]
    pub fn on_packet(&mut self, now: Time, latency: Time, queued: Time, bytes: u64) {
        self.latency.record(latency);
        self.queued.record(queued);
        let w = (now / self.window) as usize;
        if self.received.len() <= w {
            self.received.resize(w + 1, 0);
        }
        self.received[w] += bytes;
    }

    /// The job's row, the run having ended at `end`.
    pub fn row(&self, job: u32, name: &str, motif: &str, end: Time) -> JobRow {
        let ranks = self.comm.len() as u32;
        let exec = self.done_at.unwrap_or(end);
        let comm_us: Vec<f64> = self.comm.iter().map(|&c| ps_to_us(c)).collect();
        let mean = comm_us.iter().sum::<f64>() / comm_us.len().max(1) as f64;
        let var = comm_us.iter().map(|c| (c - mean) * (c - mean)).sum::<f64>() / comm_us.len().max(1) as f64;
        let packets = self.latency.packets();
        let queued = self.queued.report();
        JobRow {
            job,
            name: name.to_string(),
            motif: motif.to_string(),
            ranks,
            finished: self.done_at.is_some(),
            exec_us: ps_to_us(exec),
            messages: self.messages,
            payload_bytes: self.payload_bytes,
            wire_bytes: self.wire_bytes,
            // Bytes per ns are GB/s.
            injection_rate_gbs: if exec > 0 { self.wire_bytes as f64 / ps_to_ns(exec) } else { 0.0 },
            peak_ingress_bytes: self.peak_ingress,
            comm_mean_us: mean,
            comm_std_us: var.sqrt(),
            comm_max_us: comm_us.iter().cloned().fold(0.0, f64::max),
            packets,
            latency: self.latency.report(),
            packet_latency_mean_ns: queued.mean_ns,
            packet_latency_q1_ns: queued.q1_ns,
            packet_latency_p50_ns: queued.p50_ns,
            packet_latency_q3_ns: queued.q3_ns,
            packet_latency_p95_ns: queued.p95_ns,
            packet_latency_p99_ns: queued.p99_ns,
            packet_latency_max_ns: queued.max_ns,
        }
    }
}
