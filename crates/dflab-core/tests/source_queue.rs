//! Bounded source queues (`traffic.source_queue_packets`): past saturation the sources stall
//! instead of building an unbounded backlog, as SST's TrafficGen defers its rounds while the NIC
//! is full; below saturation the bound is never reached and changes nothing.

mod common;
use common::{run, small};
use dflab_core::config::{Arrangement, Process};

#[test]
fn below_saturation_a_bound_changes_nothing() {
    let mut e = small(2, 4, 2, 1, Arrangement::Absolute, 2.0, 8.0);
    e.traffic.load = 0.3;
    let free = run(&e);
    e.traffic.source_queue_packets = Some(8);
    let bounded = run(&e);
    // Identical run: no node ever had 8 packets waiting at load 0.3.
    assert_eq!(free.summary.packets_delivered, bounded.summary.packets_delivered);
    assert_eq!(free.summary.latency_mean_ns, bounded.summary.latency_mean_ns);
}

#[test]
fn past_saturation_sources_stall_and_latency_stays_bounded() {
    for process in [Process::Bernoulli, Process::Periodic] {
        // MIN under ADV+1 on dfly(2,4,2,9): one global link per group pair caps accepted at 1/8.
        let mut e = small(2, 4, 2, 1, Arrangement::Absolute, 10.0, 20.0);
        e.traffic.pattern = "adv+1".into();
        e.traffic.load = 0.6;
        e.traffic.process = process;
        let free = run(&e);
        e.traffic.source_queue_packets = Some(4);
        let bounded = run(&e);
        let (f, b) = (&free.summary, &bounded.summary);
        // Open loop: generation runs at the offered 0.6 and the backlog grows.
        assert!((f.offered_load - 0.6).abs() < 0.03, "{process:?}: {}", f.offered_load);
        assert!(f.source_queue_end > 72 * 20, "{process:?}: {}", f.source_queue_end);
        // Stalling sources: generation follows what the network carries, at most 4 queued per node.
        assert!(b.source_queue_end <= 72 * 4, "{process:?}: {}", b.source_queue_end);
        assert!(b.offered_load < 0.2, "{process:?}: offered {}", b.offered_load);
        assert!((b.accepted_load - f.accepted_load).abs() < 0.02, "{process:?}: same capacity");
        // Source queueing (latency minus network latency): a node is served once per
        // 32 ns / accepted ≈ 256 ns, so 4 queued packets wait ~1 µs; the open-loop backlog far more.
        let source_wait = |s: &dflab_core::stats::Summary| s.latency_mean_ns - s.network_latency_mean_ns;
        assert!(source_wait(b) < 3_000.0, "{process:?}: bounded source wait {}", source_wait(b));
        assert!(source_wait(f) > 3.0 * source_wait(b), "{process:?}: {} vs {}", source_wait(f), source_wait(b));
        assert!(b.packets_delivered > 0);
    }
}

#[test]
fn zero_is_rejected_with_the_field_name() {
    let mut e = small(2, 4, 2, 1, Arrangement::Absolute, 1.0, 1.0);
    e.traffic.source_queue_packets = Some(0);
    assert!(e.validate().unwrap_err().to_string().starts_with("traffic.source_queue_packets"));
}
