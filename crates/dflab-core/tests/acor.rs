//! The ACOR family's headline behaviour (Benito et al., JPDC'19), at reduced size: the paper's
//! FOGSim network (10-flit packets of 25 B, 25 GB/s links, speedup 2, 90 ns routers, 15/150 ns
//! links, per-class queues, cut through, FOGSim's shared output queues with transit first) on
//! dfly(3,6,3) with 19 groups, palmtree, a few µs.
//! The full-size numbers are in docs/acor-results.md.

mod common;

use dflab_core::config::{Arrangement, PhaseConfig};
use dflab_core::units::Time;
use dflab_core::Experiment;

use common::run;

/// The `acor-*` presets' network on dfly(3,6,3,19).
fn acor(routing: &str, pattern: &str, load: f64) -> Experiment {
    let mut e = Experiment::default();
    (e.topology.p, e.topology.a, e.topology.h) = (3, 6, 3);
    e.topology.arrangement = Arrangement::Palmtree;
    let n = &mut e.network;
    (n.flit_bytes, n.packet_flits) = (25, 10);
    (n.host_bw_gbps, n.local_bw_gbps, n.global_bw_gbps, n.xbar_bw_gbps) = (25.0, 25.0, 25.0, 50.0);
    (n.input_buffer_flits, n.host_buffer_flits, n.global_buffer_flits) = (720, Some(5040), Some(1800));
    n.output_buffer_flits = 250;
    (n.host_latency_ns, n.local_latency_ns, n.global_latency_ns) = (1.0, 15.0, 150.0);
    (n.input_latency_ns, n.output_latency_ns) = (0.0, 85.5);
    n.cut_through = true;
    (n.output_queue, n.transit_priority) = (dflab_core::config::OutputQueue::Shared, true);
    e.routing.algorithm = routing.into();
    e.traffic.pattern = pattern.into();
    e.traffic.load = load;
    e.run.warmup_us = 3.0;
    e.run.measure_us = 4.0;
    e.run.check = true;
    e
}

fn with(mut e: Experiment, params: &[(&str, serde_json::Value)]) -> Experiment {
    for (k, v) in params {
        e.routing.set(k, v.clone());
    }
    e
}

fn plain() -> Vec<(&'static str, serde_json::Value)> {
    vec![("restricted", false.into()), ("recompute", false.into())]
}

fn accepted(e: &Experiment) -> f64 {
    run(e).summary.accepted_load
}

#[test]
fn advl_min_carries_one_over_p_val_one_half_and_rval_everything() {
    // Fig. 4: every node sends to the next router of its group; MIN has one local link for
    // the p = 3 nodes of a router, VAL sends every packet through another group (two global
    // hops, h = 3 global links per router), RVAL detours inside the group.
    let min = accepted(&acor("MIN", "advl", 0.9));
    let val = accepted(&with(acor("VAL", "advl", 0.9), &plain()));
    let pb = accepted(&with(acor("PB", "advl", 0.9), &plain()));
    let rval = accepted(&with(acor("VAL", "advl", 0.9), &[("restricted", true.into())]));
    assert!((min - 1.0 / 3.0).abs() < 0.02, "MIN {min}");
    assert!((0.45..0.58).contains(&val), "VAL {val}");
    assert!((0.40..0.58).contains(&pb), "PB {pb}");
    assert!(rval > 0.88, "RVAL {rval}");
}

#[test]
fn under_adv_h_crg_gr_saturates_near_one_over_h_and_acor_switch_does_not() {
    // Phase A of CRG-Gr ends entering the intermediate group, so Phase B funnels every source
    // group's traffic through one local link there: throughput ≈ 1/h (§2.3).
    let crg_gr = accepted(&with(acor("VAL", "adv+h", 0.5), &[("policy", "crg-gr".into())]));
    let switch = run(&acor("ACOR", "adv+h", 0.5));
    let packet = |seq: &str| {
        accepted(&with(acor("ACOR", "adv+h", 0.5), &[("management", "packet".into()), ("sequence", seq.into())]))
    };
    let (packet_3l, packet_2lb) = (packet("3L"), packet("2LB"));
    assert!((0.27..0.38).contains(&crg_gr), "VAL-CRG-Gr {crg_gr}");
    assert!(switch.summary.accepted_load > 0.47, "ACOR-Switch {}", switch.summary.accepted_load);
    // Fig. 6: ACOR-Packet's packets start at level 1 (CRG-Gr for 3L, CRG-Sw for 2LB), so under
    // ADV+h 2LB carries more than 3L, and 3L less than ACOR-Switch.
    assert!(packet_3l < switch.summary.accepted_load - 0.05, "ACOR-Packet 3L {packet_3l}");
    assert!(packet_2lb > packet_3l + 0.04, "ACOR-Packet 2LB {packet_2lb} vs 3L {packet_3l}");
    // The switches left level 1: most delivered packets took CRG-Sw or RRG-Sw paths.
    let t = &switch.probes.totals;
    assert!(t["paths_level_2"] + t["paths_level_3"] > t["paths_level_1"], "{t:?}");
    assert!(switch.probes.per_router["reroutes"].iter().sum::<u64>() > 0);
}

#[test]
fn recomputation_lowers_latency_before_saturation() {
    // Fig. 5: VAL vs VAL-Recomp and PB vs PB-Recomp under ADV+1 at 0.45 (below saturation).
    for routing in ["VAL", "PB"] {
        for seed in [1, 2] {
            let mut base = acor(routing, "adv+1", 0.45);
            base.seed = seed;
            let once = run(&with(base.clone(), &[("restricted", true.into()), ("recompute", false.into())]));
            let again = run(&with(base, &[("restricted", true.into()), ("recompute", true.into())]));
            let (a, b) = (once.summary.latency_mean_ns, again.summary.latency_mean_ns);
            assert!(b < 0.98 * a, "{routing} seed {seed}: {b} with recomputation, {a} without");
        }
    }
}

/// FOGSim's output stage (`network.output_queue = "shared"`, `network.transit_priority`):
/// a hot global port's one queue fills with transit, which is served first, so a refused
/// injection head is refused there at every attempt and recomputation moves it to another
/// port. Past saturation under PERM that is what recomputation gains for VAL CRG-Gr (FOGSim:
/// +18 % on acor-1056; per-VC buffers, where injection keeps its VC's share of the link: +1 %),
/// and under HOT it is what lets Valiant carry FOGSim's load (acor-1056: 0.330 against
/// FOGSim's 0.331, 0.225 with per-VC buffers). docs/validation.md, "FOGSim".
#[test]
fn fogsim_output_queues_give_recomputation_its_gain_past_saturation() {
    let crg_gr = |pattern: &str, shared: bool, recompute: bool| {
        let mut e = with(acor("VAL", pattern, 0.7), &[("policy", "crg-gr".into()), ("recompute", recompute.into())]);
        e.routing.set("restricted", true);
        if !shared {
            e.network.output_queue = dflab_core::config::OutputQueue::PerVc;
            e.network.transit_priority = false;
        }
        accepted(&e)
    };
    let gain = |shared: bool| crg_gr("perm", shared, true) / crg_gr("perm", shared, false);
    let (per_vc, fogsim) = (gain(false), gain(true));
    assert!(fogsim > 1.08 && per_vc < 1.05, "PERM: recomputation gains {fogsim} (shared), {per_vc} (per VC)");
    let (per_vc, fogsim) = (crg_gr("hot", false, true), crg_gr("hot", true, true));
    assert!(fogsim > 1.3 * per_vc, "HOT: {fogsim} carried (shared), {per_vc} (per VC)");
}

#[test]
fn pb_acor_keeps_min_latency_under_uniform_traffic_up_to_three_quarters() {
    // Fig. 14: PB-ACOR's candidates start at CRG-Gr and its switches stay at level 1 under UN,
    // so PB's misrouting rarely happens; PB alone pays longer paths.
    for load in [0.5, 0.75] {
        let min = run(&acor("MIN", "ur", load)).summary.latency_mean_ns;
        let pb_acor = run(&acor("PB-ACOR", "ur", load)).summary.latency_mean_ns;
        let pb = run(&with(acor("PB", "ur", load), &[("restricted", true.into()), ("recompute", true.into())]));
        assert!((pb_acor / min - 1.0).abs() < 0.03, "{load}: PB-ACOR {pb_acor} vs MIN {min}");
        assert!(pb.summary.latency_mean_ns > 1.08 * min, "{load}: PB {} vs MIN {min}", pb.summary.latency_mean_ns);
    }
}

#[test]
fn acor_switch_levels_rise_under_a_load_step_and_return_after_it() {
    // Figs. 9-10: ADV+h from 5 % to 25 % at 3 µs and back to 5 % at 7 µs.
    let mut e = acor("ACOR", "adv+h", 0.05);
    e.traffic.load = 0.05;
    e.traffic.phases = vec![
        PhaseConfig { start_us: 3.0, load: Some(0.45), pattern: None },
        PhaseConfig { start_us: 7.0, load: Some(0.05), pattern: None },
    ];
    (e.run.warmup_us, e.run.measure_us) = (1.0, 10.0);
    let r = run(&e);
    let trace = &r.probes.traces["acor_level"];
    let us = |t: Time| t as f64 / 1e6;
    assert!(trace.iter().all(|c| us(c.time_ps) > 3.0), "no level change before the step: {:?}", &trace[..1]);
    let first_up = trace.iter().find(|c| c.value >= 2).expect("a switch goes up");
    assert!(us(first_up.time_ps) < 4.0, "up within 1 µs of the step: {}", us(first_up.time_ps));
    // Every switch that went up is back at level 1 within 2 µs of the step down.
    let mut last = std::collections::HashMap::new();
    for c in trace {
        last.insert(c.router, (c.time_ps, c.value));
    }
    for (router, (t, level)) in last {
        assert_eq!(level, 1, "router {router} ends at level {level}");
        assert!(us(t) < 9.0, "router {router} back at {} µs", us(t));
    }
}

#[test]
fn recomputation_happens_only_at_the_head_of_an_injection_queue() {
    // Every path is written by `misroute::commit`, which asserts the packet has taken no hop
    // (the engine asks only the heads of host-port inputs): thousands of re-routes under load,
    // none in transit, and the per-router count adds up to them.
    let runs = [
        with(acor("VAL", "adv+1", 0.5), &[("restricted", true.into()), ("recompute", true.into())]),
        with(acor("PB", "adv+1", 0.5), &[("recompute", true.into())]),
        acor("ACOR", "adv+h", 0.5),
        acor("PB-ACOR", "adv+h", 0.5),
    ];
    for e in runs {
        let r = run(&e);
        let reroutes: u64 = r.probes.per_router["reroutes"].iter().sum();
        assert!(reroutes > 1000, "{}: {reroutes}", e.routing.algorithm);
    }
    // Without recomputation the refused heads are counted but keep their path.
    let once = run(&with(acor("VAL", "adv+1", 0.5), &[("recompute", false.into())]));
    assert!(once.probes.per_router["reroutes"].iter().sum::<u64>() > 0);
}

#[test]
fn with_fixed_windows_the_switches_come_down_together_one_window_after_the_step_down() {
    // §4.2.2 as written (`routing.hysteresis = "fixed"`): every switch's windows end on the grid
    // of HI = 500 ns, so the first window that ends after a step down at 7 µs (a grid point)
    // holds only low-load time and the switches go down together at 7.5 µs, the paper's "to a
    // lower level in less than 0.5 µs" (Fig. 10); a switch still congested then, or two
    // levels up, follows a window later. FOGSim's restart leaves each switch's window where
    // its last increase put it: most straddle the step and come down up to a window later, at
    // times off the grid.
    let step = |hysteresis: &str| {
        let mut e = with(acor("ACOR", "adv+h", 0.05), &[("hysteresis", hysteresis.into())]);
        e.traffic.phases = vec![
            PhaseConfig { start_us: 3.0, load: Some(0.45), pattern: None },
            PhaseConfig { start_us: 7.0, load: Some(0.05), pattern: None },
        ];
        (e.run.warmup_us, e.run.measure_us) = (1.0, 10.0);
        let trace = run(&e).probes.traces["acor_level"].clone();
        let mut last = std::collections::HashMap::new();
        for c in trace.iter().filter(|c| c.time_ps > 7_000_000) {
            last.insert(c.router, (c.time_ps, c.value));
        }
        assert!(last.len() > 50, "{hysteresis}: {} switches came down", last.len());
        assert!(last.values().all(|&(_, level)| level == 1), "{hysteresis}: {last:?}");
        let times: Vec<Time> = last.values().map(|&(t, _)| t).collect();
        let by_7_5 = times.iter().filter(|&&t| t <= 7_500_000).count() as f64 / times.len() as f64;
        let on_grid = times.iter().all(|t| t % 500_000 == 0);
        (by_7_5, on_grid, *times.iter().max().unwrap())
    };
    let (fixed, restart) = (step("fixed"), step("restart"));
    // (Three quarters: 80 % here with FOGSim's shared output queues, 85 % with per-VC ones.)
    assert!(fixed.0 > 0.75 && fixed.1 && fixed.2 <= 8_000_000, "fixed windows: {fixed:?}");
    assert!(restart.0 < 0.5 && !restart.1 && restart.2 > fixed.2, "restart: {restart:?}");
}
