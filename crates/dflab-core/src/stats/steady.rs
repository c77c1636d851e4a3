//! Whether a run reached a steady state, judged from its own measurement (newcomer #13, #15: a
//! learning routing with a short warm-up, or a saturated baseline, gave numbers that depend on
//! the run's length, with nothing to say so). A run is not steady when the network accepts
//! clearly less than is offered (the backlog grows, latencies grow with the run), or when its
//! windowed mean latency still drifts between the two halves of the measurement. Too few
//! packets to judge give no verdict. Large source backlogs get their own warning: open-loop
//! sources queue without bound and a long saturated run can exhaust memory.

use serde::Serialize;

use super::{Series, Summary};

/// Accepted below this share of offered: saturated.
pub const SATURATED_BELOW: f64 = 0.95;
/// Relative change of the mean latency between the halves of the measurement: drifting.
const DRIFT_ABOVE: f64 = 0.10;
/// Packets a half needs for its mean latency to be trusted (and the run for any verdict).
const MIN_PACKETS: u64 = 500;
/// Source-queue packets per node at the end above which the backlog is reported.
const BACKLOG_PER_NODE: u64 = 64;
/// Bytes a queued packet holds (the packet and its stamps).
const BYTES_PER_QUEUED_PACKET: u64 = 88;

/// The verdict and what led to it.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Diagnostics {
    /// Whether the run reached a steady state; None when too few packets were measured.
    pub steady_state: Option<bool>,
    /// One sentence per finding, for users.
    pub warnings: Vec<String>,
}

/// Judge a run from its summary and per-window series on `nodes` nodes.
pub fn diagnose(summary: &Summary, series: &Series, nodes: usize) -> Diagnostics {
    let mut d = Diagnostics::default();
    if summary.source_queue_end > BACKLOG_PER_NODE * nodes as u64 {
        let mb = summary.source_queue_end * BYTES_PER_QUEUED_PACKET / 1_000_000;
        d.warnings.push(format!(
            "source queues hold {} packets at the end (about {mb} MB, growing with the run): open-loop sources \
             queue without bound; traffic.source_queue_packets bounds them",
            summary.source_queue_end
        ));
    }
    if summary.packets_generated < MIN_PACKETS {
        return d;
    }
    let mut steady = true;
    let (offered, accepted) = (summary.offered_load, summary.accepted_load);
    if offered > 0.0 && accepted < SATURATED_BELOW * offered {
        steady = false;
        d.warnings.push(format!(
            "not in steady state: the network accepts {accepted:.3} of the {offered:.3} offered, so the backlog \
             grows and latencies depend on the run's length (saturated, or a warm-up too short to settle)"
        ));
    }
    if let Some((first, second)) = half_means(series) {
        if (second - first).abs() > DRIFT_ABOVE * first {
            steady = false;
            d.warnings.push(format!(
                "not in steady state: the mean latency moves from {first:.0} ns in the first half of the \
                 measurement to {second:.0} ns in the second (run.warmup_us may be too short)"
            ));
        }
    }
    d.steady_state = Some(steady);
    d
}

/// Packet-weighted mean latency of the first and second half of the measured windows, when
/// each half has enough packets.
fn half_means(series: &Series) -> Option<(f64, f64)> {
    let measured: Vec<usize> = (0..series.in_measurement.len()).filter(|&i| series.in_measurement[i]).collect();
    if measured.len() < 2 {
        return None;
    }
    let mean = |idx: &[usize]| {
        let n: u64 = idx.iter().map(|&i| series.packets_delivered[i]).sum();
        let sum: f64 = idx
            .iter()
            .filter(|&&i| series.packets_delivered[i] > 0)
            .map(|&i| series.latency_mean_ns[i] * series.packets_delivered[i] as f64)
            .sum();
        (n >= MIN_PACKETS).then(|| sum / n as f64)
    };
    let (a, b) = measured.split_at(measured.len() / 2);
    Some((mean(a)?, mean(b)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(latencies: &[f64], packets: u64) -> Series {
        let n = latencies.len();
        Series {
            latency_mean_ns: latencies.to_vec(),
            packets_delivered: vec![packets; n],
            in_measurement: vec![true; n],
            ..Series::default()
        }
    }

    fn summary(offered: f64, accepted: f64) -> Summary {
        Summary { offered_load: offered, accepted_load: accepted, packets_generated: 10_000, ..Summary::default() }
    }

    #[test]
    fn a_settled_run_is_steady() {
        let d = diagnose(&summary(0.5, 0.5), &series(&[600.0, 610.0, 605.0, 598.0], 1000), 72);
        assert_eq!(d, Diagnostics { steady_state: Some(true), warnings: vec![] });
    }

    #[test]
    fn saturation_and_drift_are_named() {
        let d = diagnose(&summary(0.5, 0.3), &series(&[600.0; 4], 1000), 72);
        assert_eq!(d.steady_state, Some(false));
        assert!(d.warnings[0].contains("accepts 0.300 of the 0.500 offered"), "{:?}", d.warnings);
        // 600 -> 800 ns between the halves: drifting (a learning routing still settling).
        let d = diagnose(&summary(0.5, 0.5), &series(&[600.0, 600.0, 800.0, 800.0], 1000), 72);
        assert_eq!(d.steady_state, Some(false));
        assert!(d.warnings[0].contains("from 600 ns") && d.warnings[0].contains("to 800 ns"), "{:?}", d.warnings);
    }

    #[test]
    fn too_few_packets_give_no_verdict_and_backlogs_are_reported() {
        let mut s = summary(0.5, 0.1);
        s.packets_generated = 100;
        assert_eq!(diagnose(&s, &series(&[600.0; 4], 10), 72), Diagnostics::default());
        s.source_queue_end = 1_000_000;
        let d = diagnose(&s, &series(&[600.0; 4], 10), 72);
        assert!(d.warnings[0].starts_with("source queues hold 1000000 packets"), "{:?}", d.warnings);
    }
}
