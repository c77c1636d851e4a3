//! Q-adaptive and Q-routing through the engine, with the invariant checks on (`run.check`; the
//! engine also asserts the declared hop bound and VC count on every hop).
//!
//! Size reduction: the learning tests run on dfly(2,4,2,9) (72 nodes, 36 routers, 9 groups)
//! instead of the 1056-node system. Q-adaptive needs a few hundred µs from an empty network to
//! converge (HPDC'21 §5.5: "within 500 µs"); on 1056 nodes that is ~40 M router traversals, a
//! few minutes of wall time per run, while dfly(2,4,2,9) converges in the same simulated time
//! for ~1.5 M traversals (~2 s). It keeps what the algorithm needs: several routers per group
//! (so source routers without a direct link and local detours exist), several global ports per
//! router (global detours) and intermediate groups without a direct link to the destination
//! group (the q_thld2 decision). Link latencies, bandwidths and buffers are the HPDC'21 ones.
//! The 1056-node system is exercised by a short bounds run.

mod common;

use common::{hpdc, run};
use dflab_core::Experiment;

fn small(routing: &str, pattern: &str, load: f64, warmup_us: f64, measure_us: f64) -> Experiment {
    let mut e = hpdc(routing, pattern, load, warmup_us, measure_us);
    (e.topology.p, e.topology.a, e.topology.h) = (2, 4, 2);
    e
}

fn max_hops(hist: &[u64]) -> usize {
    hist.iter().rposition(|&c| c > 0).unwrap_or(0)
}

#[test]
fn q_adaptive_stays_within_5_hops_and_5_vcs_under_load() {
    for (pattern, load) in [("ur", 0.9), ("adv+1", 0.5), ("adv+4", 0.5)] {
        let r = run(&small("Q-adaptive", pattern, load, 50.0, 250.0));
        assert!(r.summary.packets_delivered > 10_000, "{pattern}: {:?}", r.summary);
        assert!(max_hops(&r.hops_histogram) <= 5, "{pattern}: {:?}", r.hops_histogram);
    }
    // Full exploration reaches the 5-hop worst case, and never beyond.
    let mut e = small("Q-adaptive", "ur", 0.3, 10.0, 100.0);
    e.routing.set("epsilon", 1.0);
    let r = run(&e);
    assert_eq!(max_hops(&r.hops_histogram), 5, "{:?}", r.hops_histogram);
    // The real system, briefly, at a load past MIN's UR saturation.
    let r = run(&hpdc("Q-adaptive", "adv+1", 0.5, 5.0, 15.0));
    assert!(r.summary.packets_delivered > 10_000);
    assert!(max_hops(&r.hops_histogram) <= 5);
}

#[test]
fn q_adaptive_learns_non_minimal_routing_under_adv1() {
    // ADV+1 at 0.4 from an empty network: the global link between consecutive groups carries
    // 8 nodes × 0.4 = 3.2 times its capacity if routed minimally, so the routers must learn to
    // divert most packets. Windows of 5 µs over 400 µs; the last 100 µs are the measurement.
    let mut e = small("Q-adaptive", "adv+1", 0.4, 300.0, 100.0);
    e.run.window_us = 5.0;
    let r = run(&e);
    let s = &r.series;
    let n = s.minimal_fraction.len();
    assert_eq!(n, 80);
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    // Untrained tables route minimally: the first window is mostly minimal.
    assert!(s.minimal_fraction[0] > 0.6, "first window {:?}", &s.minimal_fraction[..4]);
    // Within 100 µs non-minimal packets are the majority, and stay so.
    let first_majority = s.minimal_fraction.iter().position(|&m| m < 0.5).expect("never diverted");
    assert!(s.window_start_us[first_majority] < 100.0, "diverted only at {} µs", s.window_start_us[first_majority]);
    let late = n - 20; // last 100 µs
    assert!(mean(&s.minimal_fraction[late..]) < 0.4, "{:?}", &s.minimal_fraction[late..]);
    // Settled: the network carries the offered load and the typical packet is fast again.
    assert!(mean(&s.accepted_load[late..]) > 0.38, "{:?}", &s.accepted_load[late..]);
    let peak = s.latency_mean_ns.iter().cloned().fold(0.0, f64::max);
    assert!(peak > 4000.0, "the start is congested (peak {peak} ns)");
    let m = &r.summary;
    assert!(m.latency_p50_ns < 1200.0 && m.latency_p50_ns < peak / 4.0, "p50 {} ns, peak {peak} ns", m.latency_p50_ns);
    assert!(m.network_latency_mean_ns < 1500.0, "network latency {} ns", m.network_latency_mean_ns);
    // The *mean* latency is not asserted to settle: on most seeds a few source routers stay
    // stuck on a port whose VC0 is starved while their source queues grow (seeds 1-8 here: mean
    // 1.3-5.6 µs, p50 0.94-1.0 µs, network latency 0.9-1.35 µs; before the 2026-11-22 arbiter
    // wake-up fix 4 of 8 seeds stalled). That is the reference algorithm's behaviour,
    // not a model artefact: docs/qadaptive-results.md §"Why some sources stall" explains it.
    // MIN cannot carry this load (the comparison that makes the above meaningful).
    let m = run(&small("MIN", "adv+1", 0.4, 100.0, 100.0));
    assert!(m.summary.accepted_load < 0.2, "MIN accepted {}", m.summary.accepted_load);
}

#[test]
fn q_adaptive_matches_min_latency_under_ur() {
    let q = run(&small("Q-adaptive", "ur", 0.5, 100.0, 200.0));
    let m = run(&small("MIN", "ur", 0.5, 100.0, 200.0));
    let (lq, lm) = (q.summary.latency_mean_ns, m.summary.latency_mean_ns);
    assert!((lq - lm).abs() < 0.10 * lm, "Q-adaptive {lq} ns vs MIN {lm} ns");
    assert!(q.summary.minimal_fraction > 0.9, "UR should stay mostly minimal: {}", q.summary.minimal_fraction);
}

#[test]
fn q_routing_respects_max_q_plus_3() {
    for max_q in [0usize, 2, 4] {
        for (pattern, load, eps) in [("ur", 0.8, 0.001), ("adv+1", 0.4, 0.001), ("ur", 0.2, 1.0)] {
            let mut e = small("Q-routing", pattern, load, 20.0, 150.0);
            e.routing.set("max_q", max_q);
            e.routing.set("epsilon", eps);
            let r = run(&e);
            assert!(r.summary.packets_delivered > 5_000);
            let longest = max_hops(&r.hops_histogram);
            assert!(longest <= max_q + 3, "max_q {max_q} {pattern}: {:?}", r.hops_histogram);
            if eps == 1.0 && max_q > 0 {
                assert!(longest > 3, "exploration must produce non-minimal paths");
            }
        }
    }
}

#[test]
fn q_routing_diverts_under_adv1() {
    let mut e = small("Q-routing", "adv+1", 0.4, 200.0, 100.0);
    e.routing.set("max_q", 2);
    let r = run(&e);
    let m = run(&small("MIN", "adv+1", 0.4, 200.0, 100.0));
    assert!(r.summary.minimal_fraction < 0.8, "{}", r.summary.minimal_fraction);
    assert!(
        r.summary.accepted_load > m.summary.accepted_load + 0.1,
        "{} vs MIN {}",
        r.summary.accepted_load,
        m.summary.accepted_load
    );
}
