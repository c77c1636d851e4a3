//! DGB's and EDGB's decision, samples, residuals and contention term on constructed states.

use rand::SeedableRng;

use super::*;
use crate::routing::harness::{Harness, Net};
use crate::routing::valiant::hdr;

/// dfly(4,8,4,33), router 0 of group 0: group 5 is reached through router 1 (3 hops to
/// router 1 of group 5); group 2 through router 0's own global link.
const FAR: u32 = 5 * 32 + 6;
const DIRECT: u32 = 2 * 32 + 6;

/// The ICS'24 BookSim network's numbers: 1 cycle = 1 ns, links 10 and 15 cycles, 256 flits.
fn experiment() -> Experiment {
    let mut exp = Experiment::default();
    let n = &mut exp.network;
    (n.flit_bytes, n.local_bw_gbps, n.global_bw_gbps, n.host_bw_gbps) = (64, 64.0, 64.0, 64.0);
    (n.local_latency_ns, n.global_latency_ns, n.input_buffer_flits) = (10.0, 15.0, 256);
    exp
}

fn harness<const E: bool>(p: DgbParams, contention: Option<Contention>, seed: u64) -> Harness<Dgb<E>> {
    let net = Net::new(4, 8, 4, 1);
    let alg = Dgb::<E>::build(&net.topo, &experiment(), p, contention).unwrap();
    Harness::new(net, alg, seed)
}

/// Every network port of router 0 at `q` flits, the minimal port toward `dst` at `q_min`,
/// and every bias of router 0 toward `dst` at `bias`: the packet's first hop.
fn decide(h: &mut Harness<Dgb<false>>, dst: u32, q_min: u32, q: u32, bias: f64) -> (Hop, Packet) {
    let topo = &h.net.topo;
    let min_port = topo.minimal_first_port(0, topo.router_of_node(dst)).unwrap().0;
    for port in topo.first_local_port()..topo.radix as u16 {
        h.net.set_used_credits(0, port, 0, if port == min_port { q_min } else { q });
    }
    // A fresh state: no samples, so no training at time 0.
    *h.state_mut(0) = h.alg.router_state(&h.net.topo, 0);
    let dest = h.net.topo.router_of_node(dst);
    for port in h.net.topo.first_local_port()..h.net.topo.radix as u16 {
        h.state_mut(0).table.set_bias(dest, port, bias);
    }
    let mut pkt = h.packet(0, dst);
    let in_port = h.net.topo.host_port_of_node(0);
    (h.route(0, in_port, &mut pkt), pkt)
}

/// The candidates UGAL-L draws for `pkt` at router 0 under `seed` (DGB draws the same: it
/// does not train at time 0).
fn candidates(h: &Harness<Dgb<false>>, pkt: &Packet, seed: u64) -> Choice {
    let inner = UgalL::new(UgalLParams { intermediate: Intermediate::Outside, ..UgalLParams::default() });
    let mut rng = crate::routing::Rng::seed_from_u64(seed);
    let mut seen = None;
    inner.decide_with(&h.net.view(0, h.net.topo.host_port_of_node(0)), &mut pkt.clone(), &mut rng, |ch, _| {
        seen = Some(*ch);
        true
    });
    seen.unwrap()
}

/// The decision `H_min·q_min <= ⌊H_nm·(q_nm + b)⌋⁺` on constructed queues, with the local
/// port's occupancy scaled against a global non-minimal port.
#[test]
fn the_decision_weighs_hops_bias_and_the_local_port_scale() {
    let p = |scale| DgbParams { intermediate: Intermediate::Outside, local_q_scale: scale, ..DgbParams::default() };
    let (mut scaled, mut equal) = (harness::<false>(p(Some(8.0)), None, 1), harness::<false>(p(None), None, 1));
    let global = |h: &Harness<Dgb<false>>, port: u16| h.net.topo.class_of_port(port) == LinkClass::Global;
    let (mut n_global, mut n_short) = (0, 0);
    for seed in 0..300 {
        // The minimal port holds 4 flits, every other 2.
        let run = |h: &mut Harness<Dgb<false>>, bias: f64| {
            h.reseed(seed);
            let (_, pkt) = decide(h, FAR, 4, 2, bias);
            (pkt.nonminimal, candidates(h, &h.packet(0, FAR), seed))
        };
        // b = 10, scale 8: a local Valiant port costs H_nm·12 >= 36 against 3·4; a global
        // one H_nm·12 <= 72 against 3·(4·8) = 96.
        let (nonmin, ch) = run(&mut scaled, 10.0);
        let nm_global = global(&scaled, ch.nm.port);
        assert_eq!(nonmin, nm_global, "seed {seed}: {ch:?}");
        n_global += nm_global as u32;
        // Equal buffers (scale 1): 3·4 against H_nm·12, always minimal.
        assert!(!run(&mut equal, 10.0).0, "seed {seed}");
        // b = 0, scale 8: a local Valiant port wins iff 12 > 2·H_nm (at its own port,
        // 12 > 4·H_nm never); a global one always.
        let (nonmin, ch) = run(&mut scaled, 0.0);
        let expect = nm_global || (ch.nm.port != ch.min.port && ch.nm.hops < 6);
        assert_eq!(nonmin, expect, "seed {seed}: {ch:?}");
        n_short += (!nm_global && expect) as u32;
    }
    assert!(n_global > 20 && n_short > 50, "{n_global} {n_short}");
    // A negative bias cannot make the right side negative: empty minimal port, minimal.
    for seed in 0..50 {
        scaled.reseed(seed);
        assert!(!decide(&mut scaled, FAR, 0, 2, -100.0).1.nonminimal);
    }
}

/// The residual at the destination is the time the wires, hops and source-group queues do
/// not explain; it reaches the source router, whose next minimal sample includes it.
#[test]
fn the_residual_travels_back_and_enters_the_next_sample() {
    let mut h = harness::<false>(DgbParams { inflight: Inflight::Exact, ..DgbParams::default() }, None, 1);
    let topo = h.net.topo.clone();
    let dest = topo.router_of_node(FAR);
    // Router 1's global link toward group 5 holds 7 flits in the next router's buffer and
    // 3 more on the wire (net 7, raw 10).
    let (r, k) = topo.gateways(0, 5)[0];
    assert_eq!(r, 1);
    h.net.set_used_credits(1, topo.first_global_port() + k, 0, 10);
    h.net.set_on_wire(1, topo.first_global_port() + k, 0, 3);
    // Walk the packet from node 0 (empty network: minimal, 3 hops).
    let mut pkt = h.packet(0, FAR);
    h.walk(&mut pkt);
    assert!(!pkt.nonminimal);
    assert_eq!((pkt.hops, pkt.global_hops), (3, 1));
    assert_eq!(pkt.hdr::<DgbHeader>().q_src, 7);
    // Delivered 100 cycles after the decision: 100 − (10 + 15 + 10) − 3 − 7 = 55.
    h.net.now = 100_000;
    let sent = h.deliver(&pkt);
    let expect = DgbMsg::Residual(Residual { from: dest, port: NO_PORT, d: 55.0 });
    assert_eq!(sent, vec![(Dest::Router { router: 0, delay: 0 }, expect)]);
    h.message(0, NO_PORT, expect);
    assert_eq!(h.state(0).table.feedback_min(dest), Some(55.0));
    // The first sample had no feedback: T = q + (H − 1)·q_g = 0 + 2·7 (net occupancies).
    // The next minimal decision's has: T = q + q_g + d + H = 0 + 7 + 55 + 3.
    let mut next = h.packet(1, FAR);
    h.net.now = 100_001;
    h.route(0, topo.host_port_of_node(1), &mut next);
    assert!(!next.nonminimal);
    assert_eq!(h.state(0).table.sizes(dest, 4).0, 2);
    assert_eq!(h.state(0).table.min_mean(dest), (14.0 + 65.0) / 2.0);
}

/// A packet whose intermediate falls in the source or the destination group goes minimal
/// without a decision; as in the fork it still gives a minimal sample (no feedback yet:
/// `q + (H − 1)·q_g` on net occupancies) and carries a residual back. With
/// `sample_forced = false` neither, and in both cases the same hop.
#[test]
fn undecided_minimal_packets_are_sampled_as_in_the_fork() {
    let topo = Net::new(4, 8, 4, 1).topo;
    let dest = topo.router_of_node(FAR);
    let (gateway, k) = topo.gateways(0, 5)[0];
    let gateway = gateway as u32; // in group 0 the index is the router
    let host = topo.host_port_of_node(0);
    let any = UgalL::new(UgalLParams { intermediate: Intermediate::AnyShortcut, ..UgalLParams::default() });
    let (mut forced_seen, mut decided_seen) = (0, 0);
    for seed in 0..200 {
        let mut hops = Vec::new();
        for on in [true, false] {
            let p = DgbParams { sample_forced: on, inflight: Inflight::Exact, ..DgbParams::default() };
            let mut h = harness::<false>(p, None, 1);
            // The gateway's global link: 10 flits used, 3 of them on the wire (net 7).
            h.net.set_used_credits(gateway, topo.first_global_port() + k, 0, 10);
            h.net.set_on_wire(gateway, topo.first_global_port() + k, 0, 3);
            let mut forced = false;
            let mut rng = crate::routing::Rng::seed_from_u64(seed);
            let view = h.net.view(0, host);
            any.decide_or_forced(&view, &mut h.packet(0, FAR), &mut rng, |_, _| true, |_| forced = true);
            h.reseed(seed);
            let mut pkt = h.packet(0, FAR);
            hops.push(h.route(0, host, &mut pkt));
            let (samples, train) = (h.state(0).table.sizes(dest, 4).0, pkt.hdr::<DgbHeader>().train & TRAIN);
            if !forced {
                // A decision: sampled either way.
                assert_eq!((samples + pkt.nonminimal as u32, train), (1, 1), "seed {seed}");
                decided_seen += on as u32;
                continue;
            }
            forced_seen += on as u32;
            assert!(!pkt.nonminimal, "seed {seed}");
            assert_eq!((samples, train), if on { (1, 1) } else { (0, 0) }, "seed {seed}, sample_forced {on}");
            if on {
                assert_eq!(h.state(0).table.min_mean(dest), 2.0 * 7.0);
                assert_eq!(pkt.hdr::<DgbHeader>().nm_port, NO_PORT);
            }
        }
        assert_eq!(hops[0], hops[1], "seed {seed}");
    }
    // Two groups of 33 hold a forced draw: about 6 % of the packets.
    assert!(forced_seen >= 4 && decided_seen >= 150, "{forced_seen} forced, {decided_seen} decided");
}

/// EDGB: with 8 active routers toward group 5 (C = 8), the minimal estimate of a router
/// without a direct link grows by `q_min·7`; toward a group it links to directly, not.
#[test]
fn edgb_adds_the_contention_term_only_without_a_direct_link() {
    let c = Contention { window: 500_000, threshold: 5 };
    let p = DgbParams { intermediate: Intermediate::Outside, ..DgbParams::default() };
    let mut h = harness::<true>(p, Some(c), 1);
    let topo = h.net.topo.clone();
    let run = |h: &mut Harness<Dgb<true>>, dst: u32, seed: u64| {
        let min_port = topo.minimal_first_port(0, topo.router_of_node(dst)).unwrap().0;
        for port in topo.first_local_port()..topo.radix as u16 {
            h.net.set_used_credits(0, port, 0, if port == min_port { 1 } else { 2 });
        }
        *h.state_mut(0) = h.alg.router_state(&topo, 0);
        let j = topo.group_of(topo.router_of_node(dst)) as usize;
        for i in 0..8 {
            (0..6).for_each(|_| h.state_mut(0).counters.as_mut().unwrap().record(0, i, j));
        }
        h.reseed(seed);
        let mut pkt = h.packet(0, dst);
        let hop = h.route(0, topo.host_port_of_node(0), &mut pkt);
        (hop, pkt)
    };
    let (mut nonmin, mut dgb_nonmin) = (0, 0);
    let mut dgb = harness::<false>(p, None, 1);
    for seed in 0..300 {
        let (hop, pkt) = run(&mut h, FAR, seed);
        // Equal buffers (no scale): 3·1 + 1·7 = 10 against H_nm·2, so Valiant paths of at
        // most 4 hops win, and any through the minimal port itself (H_nm·1).
        if pkt.nonminimal {
            nonmin += 1;
            let ir = hdr(&pkt).inter_router;
            let h_nm = topo.min_hops(0, ir) + topo.min_hops(ir, pkt.dst_router);
            let min_port = topo.minimal_first_port(0, pkt.dst_router).unwrap().0;
            assert!(h_nm <= 4 || hop.port == min_port, "seed {seed}");
        }
        // DGB on the same state: 3·1 against H_nm·2.
        dgb.reseed(seed);
        dgb_nonmin += decide(&mut dgb, FAR, 1, 2, 0.0).1.nonminimal as u32;
        // Direct link: H_m·1 (H_m <= 2) against H_nm·2 (H_nm >= 3), no term: minimal.
        let (hop, pkt) = run(&mut h, DIRECT, seed);
        assert!(
            !pkt.nonminimal,
            "seed {seed}: {hop:?} {:?} {:?}",
            topo.minimal_first_port(0, pkt.dst_router),
            hdr(&pkt)
        );
    }
    assert!(nonmin > dgb_nonmin + 10, "EDGB {nonmin}, DGB {dgb_nonmin}");
}

/// The fork's in-flight estimate (`inflight = "window"`, the default): the flits a port sent
/// within twice its link's latency are left out, whether they are still on the wire or not.
#[test]
fn the_window_estimate_leaves_out_the_flits_sent_within_twice_the_latency() {
    let mut h = harness::<false>(DgbParams::default(), None, 1);
    let topo = h.net.topo.clone();
    let (r, k) = topo.gateways(0, 5)[0];
    let exit = topo.first_global_port() + k;
    // 2 × 15 ns of the global link. At 40 ns: 3 flits sent at 20 ns count as in flight, 2
    // sent at 5 ns do not (raw 10, window estimate 7), whatever is on the wire.
    h.net.keep_sent(30_000);
    h.net.set_used_credits(r as u32, exit, 0, 10);
    h.net.record_sent(r as u32, exit, 0, 5_000, 2);
    h.net.record_sent(r as u32, exit, 0, 20_000, 3);
    h.net.now = 40_000;
    let mut pkt = h.packet(0, FAR);
    h.walk(&mut pkt);
    assert!(!pkt.nonminimal);
    assert_eq!(pkt.hdr::<DgbHeader>().q_src, 7);
    // `exact` reads the wire, which holds nothing here: the raw 10.
    let mut exact = harness::<false>(DgbParams { inflight: Inflight::Exact, ..DgbParams::default() }, None, 1);
    exact.net.set_used_credits(r as u32, exit, 0, 10);
    let mut pkt = exact.packet(0, FAR);
    exact.walk(&mut pkt);
    assert_eq!(pkt.hdr::<DgbHeader>().q_src, 10);
}

/// When both candidates leave by the same local port, the second router works out the other
/// class's residual, `(t₂ − q₁) + (H_other − 1)·q₂`, and the destination sends it after the
/// chosen class's; with `same_port_residual = false` only the chosen one is sent.
#[test]
fn a_shared_first_port_gives_the_other_class_a_residual_from_the_second_router() {
    let topo = Net::new(4, 8, 4, 1).topo;
    let dest = topo.router_of_node(FAR);
    let min_global = topo.first_global_port() + topo.gateways(0, 5)[0].1;
    let mut found = 0;
    for on in [true, false] {
        let p = DgbParams { inflight: Inflight::Exact, same_port_residual: on, ..DgbParams::default() };
        let mut h = harness::<false>(p, None, 1);
        for seed in 0..400 {
            h.reseed(seed);
            h.net.now = 0;
            h.net.set_used_credits(1, min_global, 0, 0);
            // Every port at 1 flit and every bias at −200: Valiant.
            let (hop, mut pkt) = decide(&mut h, FAR, 1, 1, -200.0);
            let hd = *pkt.hdr::<DgbHeader>();
            if hop.port != topo.local_port(0, 1) || hd.nm_port != hop.port {
                continue;
            }
            assert!(pkt.nonminimal, "seed {seed}");
            assert_eq!(hd.train & SAME_PORT != 0, on);
            assert_eq!((hd.q_src, hd.h_other), (1, 3));
            // At router 1, 25 cycles after the decision; its link toward group 5 (where the
            // minimal path would go on) holds 9 flits.
            h.net.set_used_credits(1, min_global, 0, 9);
            h.net.now = 25_000;
            pkt.hops = 1;
            h.route(1, topo.local_port(1, 0), &mut pkt);
            let sent = h.deliver(&pkt);
            if !on {
                assert_eq!(pkt.hdr::<DgbHeader>().train & OTHER, 0);
                assert_eq!(sent.len(), 1);
                continue;
            }
            found += 1;
            // (25 − 10 − 1 − 1) + (3 − 1)·9.
            assert_eq!(pkt.hdr::<DgbHeader>().d_other, 31, "seed {seed}");
            let other = DgbMsg::Residual(Residual { from: dest, port: NO_PORT, d: 31.0 });
            assert_eq!(sent.len(), 2);
            assert!(matches!(sent[0].1, DgbMsg::Residual(Residual { port, .. }) if port == hop.port));
            assert_eq!(sent[1], (Dest::Router { router: 0, delay: 0 }, other));
        }
    }
    assert!(found >= 5, "{found} same-port decisions");
}

/// `minimal_vc = "shared"` (the fork's VCs): a minimal packet takes the Valiant packets' VC
/// in its source group, global hop included, and the destination group's VC after it;
/// `own` keeps UGAL-L's VC toward the destination group.
#[test]
fn minimal_packets_share_the_valiant_vc_in_the_source_group() {
    for (vc, expect) in [(MinimalVc::Shared, [0, 0, 3]), (MinimalVc::Own, [2, 2, 3])] {
        let mut h = harness::<false>(DgbParams { minimal_vc: vc, ..DgbParams::default() }, None, 1);
        let topo = h.net.topo.clone();
        let mut pkt = h.packet(0, FAR);
        let (mut router, mut in_port, mut vcs) = (0, topo.host_port_of_node(0), Vec::new());
        loop {
            let hop = h.route(router, in_port, &mut pkt);
            if topo.is_host_port(hop.port) {
                break;
            }
            vcs.push(hop.vc);
            (router, in_port) = topo.peer(router, hop.port).unwrap();
            pkt.hops += 1;
        }
        assert!(!pkt.nonminimal);
        assert_eq!(vcs, expect, "{vc:?}");
    }
}
