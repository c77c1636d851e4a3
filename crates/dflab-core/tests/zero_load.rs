//! Zero-load latency equals the analytic sum of serialisation and fixed latencies on the path
//! (engine module comment): NIC → router `n·s_host + L_host + in`; each router hop
//! `n·x + n·s_c + out + L_c + in`; ejection `n·x + n·s_host + out + L_host`. With
//! `network.cut_through` every `n·s` but the ejection's becomes one flit's `s` (the head moves
//! on after its first flit; the tail reaches the node a packet-time after the head).

mod common;

use dflab_core::engine;
use dflab_core::units::{ns_to_ps, transfer_ps, Time};
use dflab_core::Experiment;

fn expected(e: &Experiment, local_hops: u64, global_hops: u64) -> Time {
    let n = &e.network;
    let f = n.packet_flits as u64;
    let whole = |bw: f64| f * transfer_ps(n.flit_bytes as u64, bw);
    let ser = |bw: f64| if n.cut_through { transfer_ps(n.flit_bytes as u64, bw) } else { whole(bw) };
    let x = f * transfer_ps(n.flit_bytes as u64, n.xbar_bw_gbps);
    let (inl, outl) = (ns_to_ps(n.input_latency_ns), ns_to_ps(n.output_latency_ns));
    let inject = ser(n.host_bw_gbps) + ns_to_ps(n.host_latency_ns) + inl;
    let local = x + ser(n.local_bw_gbps) + outl + ns_to_ps(n.local_latency_ns) + inl;
    let global = x + ser(n.global_bw_gbps) + outl + ns_to_ps(n.global_latency_ns) + inl;
    let eject = x + whole(n.host_bw_gbps) + outl + ns_to_ps(n.host_latency_ns);
    inject + local_hops * local + global_hops * global + eject
}

fn trace(e: &Experiment, src: u32, dst: u32) -> (u64, u64, Time) {
    let (p, t) = engine::trace(e, &[(src, dst)]).unwrap()[0];
    let g = p.global_hops as u64;
    (p.hops as u64 - g, g, t) // trace_one generates its packet at time 0
}

fn configs() -> Vec<Experiment> {
    let hpdc = Experiment::default();
    // Multi-flit packets, unequal link speeds and a faster crossbar: every term of the sum
    // differs, so a missing or doubled term shows.
    let mut odd = Experiment::default();
    odd.network.packet_flits = 4;
    odd.network.input_buffer_flits = 16;
    odd.network.output_buffer_flits = 12;
    odd.network.host_bw_gbps = 25.0;
    odd.network.local_bw_gbps = 12.5;
    odd.network.global_bw_gbps = 10.0;
    odd.network.xbar_bw_gbps = 100.0;
    odd.network.input_latency_ns = 7.0;
    odd.network.output_latency_ns = 3.0;
    odd.network.global_latency_ns = 250.0;
    // The same, cut through.
    let mut cut = odd.clone();
    cut.network.cut_through = true;
    vec![hpdc, odd, cut]
}

#[test]
fn same_router_path() {
    for e in configs() {
        let (l, g, lat) = trace(&e, 0, 1);
        assert_eq!((l, g), (0, 0));
        assert_eq!(lat, expected(&e, 0, 0));
    }
    // HPDC numbers by hand: 32+10+10 (inject) + 3.2+32+10+10 (eject) = 107.2 ns.
    let (_, _, lat) = trace(&Experiment::default(), 0, 1);
    assert_eq!(lat, 107_200);
}

#[test]
fn local_path() {
    for e in configs() {
        // node 0 (router 0) to node 4*3 (router 3, same group)
        let (l, g, lat) = trace(&e, 0, 12);
        assert_eq!((l, g), (1, 0));
        assert_eq!(lat, expected(&e, 1, 0));
    }
    // By hand for the HPDC setup: 52 + (3.2+32+10+30+10) + 55.2 = 192.4 ns.
    assert_eq!(trace(&Experiment::default(), 0, 12).2, 192_400);
}

#[test]
fn one_global_path() {
    for e in configs() {
        // router 0 of group 0 has the link to group 1; node 32*1 + 4*(router of group 1 whose
        // link returns to group 0 = router 0) -> direct global hop, no local hops.
        let (l, g, lat) = trace(&e, 0, 32);
        assert_eq!((l, g), (0, 1));
        assert_eq!(lat, expected(&e, 0, 1));
        // local + global + local: group 0 router 7 -> group 1 router 5.
        let (l, g, lat) = trace(&e, 7 * 4, 32 + 5 * 4);
        assert_eq!((l, g), (2, 1));
        assert_eq!(lat, expected(&e, 2, 1));
    }
}

#[test]
fn valiant_paths() {
    for mut e in configs() {
        e.routing.algorithm = "VALn".into();
        let mut lengths = std::collections::HashSet::new();
        for (i, dst) in [40u32, 100, 500, 1000, 777, 333].into_iter().enumerate() {
            e.seed = i as u64 + 1;
            let (l, g, lat) = trace(&e, 5, dst);
            assert_eq!(g, 2, "Valiant crosses two global links");
            assert_eq!(lat, expected(&e, l, g), "path with {l} local hops");
            lengths.insert(l);
        }
        assert!(lengths.len() > 1, "different intermediates give different path lengths");
    }
}

/// `traffic.process = "lockstep"` (SST's TrafficGen): every node generates at 1 ns + k·64 ns at
/// load 0.5, so a 6.4 us window holds exactly 100 rounds of all 72 nodes.
#[test]
fn lockstep_rounds_are_whole_and_simultaneous() {
    // dfly(2,4,2,9); 128-byte packets at 4 GB/s (the defaults): 32 ns slots, 64 ns at 0.5.
    let mut e = common::small(2, 4, 2, 1, dflab_core::config::Arrangement::Absolute, 0.0, 6.4);
    e.traffic.process = dflab_core::config::Process::Lockstep;
    e.traffic.load = 0.5;
    let r = dflab_core::simulate(&e).unwrap();
    assert_eq!(r.summary.packets_generated, 72 * 100);
}

/// `run.whole_ns_latency`: SST's whole-ns stamps. Every latency is whole, and the mean is below
/// the picosecond one by less than 1 ns.
#[test]
fn whole_ns_stamps_truncate_like_sst() {
    let mut e = dflab_core::Experiment::default();
    e.traffic.load = 0.05;
    e.run.warmup_us = 1.0;
    e.run.measure_us = 5.0;
    e.run.check = true;
    let ps = dflab_core::simulate(&e).unwrap().summary;
    e.run.whole_ns_latency = true;
    let ns = dflab_core::simulate(&e).unwrap().summary;
    assert_eq!(ps.packets_delivered, ns.packets_delivered);
    assert!(ns.latency_mean_ns < ps.latency_mean_ns && ps.latency_mean_ns - ns.latency_mean_ns < 1.0);
    assert_eq!(ns.latency_max_ns.fract(), 0.0);
    // Bernoulli packets are generated on whole-ns slot boundaries: only the arrival truncates.
    assert_eq!(ns.latency_max_ns, ps.latency_max_ns.floor());
    let sum = ns.latency_mean_ns * ns.packets_delivered as f64;
    assert!((sum - sum.round()).abs() < 1e-3 * ns.packets_delivered as f64, "whole-ns latencies sum to whole ns");
}
