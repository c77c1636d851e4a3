//! Q-adaptive's table, learning rule and decision rules against the reference behaviour
//! (docs/qadaptive.md) and its validation targets, on the `qadaptive-1056` topology, without
//! the engine (through the routing harness).

use dflab_core::config::NetworkConfig;
use dflab_core::network::Packet;
use dflab_core::routing::harness::{Harness, Net};
use dflab_core::routing::paths::port_to_group;
use dflab_core::routing::q_adaptive::QAdaptive;
use dflab_core::routing::q_routing::QRouting;
use dflab_core::routing::q_table::{
    state_bytes_per_router, Feedback, QAdaptiveParams, QHeader, QParams, QRoutingParams, QTable,
};
use dflab_core::routing::{canonical_algorithm, Dest, Rng, Routing};
use dflab_core::topology::Topology;
use dflab_core::Experiment;
use rand::{Rng as _, SeedableRng};

fn topo_1056() -> Topology {
    Topology::new(&Experiment::default().topology).unwrap()
}

fn topo_2550() -> Topology {
    let mut e = Experiment::default();
    (e.topology.p, e.topology.a, e.topology.h) = (5, 10, 5);
    Topology::new(&e.topology).unwrap()
}

fn params(epsilon: f64) -> QParams {
    QParams { epsilon, ..QParams::adaptive(&QAdaptiveParams::default(), &NetworkConfig::default()) }
}

/// Q-adaptive on an empty `qadaptive-1056` network.
fn harness(p: QParams) -> Harness<QAdaptive> {
    let t = topo_1056();
    let q = QAdaptive::new(&t, p);
    Harness::new(Net::of(t), q, 1)
}

fn table(h: &Harness<QAdaptive>, r: u32) -> &QTable {
    h.state(r)
}

fn qh(pkt: &mut Packet) -> &mut QHeader {
    pkt.hdr_mut()
}

#[test]
fn initial_table_of_router_0_matches_the_reference() {
    let t = topo_1056();
    let q = QAdaptive::new(&t, params(0.001));
    let t0 = q.initial_table(&t, 0);
    assert_eq!((t0.rows, t0.cols), (128, 11));
    assert_eq!(t0.entries(), 1408);
    let mut n300 = 0;
    for row in 0..128 {
        let dg = row / 4; // destination group index with group 0 skipped: group dg + 1
        for col in 0..11 {
            let v = t0.get(row, col);
            let want = if dg < 4 && col == 7 + dg { 300.0 } else { 330.0 };
            assert_eq!(v, want, "row {row} col {col}");
            n300 += (v == 300.0) as usize;
        }
    }
    assert_eq!(n300, 16, "4 groups × 4 source slots");
    // Router 7 of group 0 reaches groups 29–32 on its global ports (columns 7–10).
    for (j, grp) in (29..=32).enumerate() {
        let row = (grp - 1) * 4 + 2;
        assert_eq!(q.initial_table(&t, 7).get(row, 7 + j), 300.0);
        assert_eq!(q.initial_table(&t, 7).get(row, 0), 330.0);
    }
    // Initial values follow the configured latencies.
    let mut net = NetworkConfig::default();
    (net.global_latency_ns, net.local_latency_ns) = (100.0, 20.0);
    let q2 = QAdaptive::new(&t, QParams::adaptive(&QAdaptiveParams::default(), &net));
    assert_eq!(q2.initial_table(&t, 0).get(0, 7), 100.0);
    assert_eq!(q2.initial_table(&t, 0).get(0, 8), 120.0);
}

#[test]
fn the_2550_table_is_250_by_14() {
    let t = topo_2550();
    let q = QAdaptive::new(&t, params(0.001)).initial_table(&t, 0);
    assert_eq!((q.rows, q.cols), (250, 14));
}

fn fb(dst: u32, src: u32, hop_delay_ps: u64, estimate: f64) -> Feedback {
    Feedback { dst, src, hop_delay: hop_delay_ps, estimate }
}

#[test]
fn hysteretic_update_with_truncation() {
    let mut q = harness(params(0.001));
    // Router 0, global port 11 (column 7) reaches group 1. Packet from node 5 (slot 1) to a
    // node of group 1 (nodes 32..63): row = 0·4 + 1.
    let (dst, src, port, row, col) = (40, 5, 11u16, 1, 7);
    let apply = |q: &mut Harness<QAdaptive>, hd_ps: u64, est: f64| {
        q.message(0, port, fb(dst, src, hd_ps, est));
        table(q, 0).get(row, col)
    };
    // β branch: 300 + 0.04·(320 − 300) = 300.8 → truncated to 300 (hop delay 320.9 ns → 320).
    assert_eq!(apply(&mut q, 320_900, 0.0), 300.0);
    // β branch: target 1000 + 500 → 300 + 0.04·1200 = 348.
    assert_eq!(apply(&mut q, 1_000_000, 500.0), 348.0);
    // α branch: target 48 → 348 + 0.2·(48 − 348) = 288.
    assert_eq!(apply(&mut q, 48_000, 0.0), 288.0);
    // β with a fraction: 288 + 0.04·52 = 290.08 → 290.
    assert_eq!(apply(&mut q, 40_000, 300.0), 290.0);
    // α with a fraction: 290 − 0.2·3 = 289.4 → 289 (truncation toward zero).
    assert_eq!(apply(&mut q, 287_000, 0.0), 289.0);
    // Equal target is the β branch and leaves the value.
    assert_eq!(apply(&mut q, 289_000, 0.0), 289.0);
    // Only that entry moved: same row other columns, same column other source slots.
    assert_eq!(table(&q, 0).get(row, 8), 330.0);
    assert_eq!(table(&q, 0).get(0, col), 300.0);
    assert_eq!(table(&q, 0).get(2, col), 300.0);
    // Feedback about the router's own group is ignored (no row for it).
    let before: Vec<f64> = (0..128).flat_map(|r| table(&q, 0).row(r).to_vec()).collect();
    q.message(0, 4, fb(3, 5, 10_000_000, 0.0));
    let after: Vec<f64> = (0..128).flat_map(|r| table(&q, 0).row(r).to_vec()).collect();
    assert_eq!(before, after);
    // Truncated values are whole nanoseconds: the table keeps its 4-byte entries.
    assert!(table(&q, 0).is_narrow());

    // Without truncation the fractions stay (the table widens to 8-byte entries to hold them).
    let mut q = harness(QParams { truncate: false, ..params(0.001) });
    q.message(0, port, fb(dst, src, 320_900, 0.0));
    assert!((table(&q, 0).get(row, col) - (300.0 + 0.04 * 20.9)).abs() < 1e-9);
    assert!(!table(&q, 0).is_narrow());
    // Plain update: α for bad news too.
    let plain = QAdaptiveParams { q_update: dflab_core::config::QUpdate::Plain, ..Default::default() };
    let mut q = harness(QParams::adaptive(&plain, &NetworkConfig::default()));
    q.message(0, port, fb(dst, src, 1_000_000, 500.0));
    assert_eq!(table(&q, 0).get(row, col), 300.0 + 0.2 * 1200.0);
}

#[test]
fn feedback_content_follows_the_reference_rules() {
    let mut q = harness(params(0.0));
    let t = q.net.topo.clone();
    // Packet 0 -> a node of group 5 (router 40), now at router 8 (group 1), arrived on global
    // port 11 from group 0: it arrived at router 0 at 1 µs and here at 1.4 µs.
    let mut pkt = q.packet(0, 5 * 32 + 3);
    pkt.arrival = 1_000_000;
    q.arrive(8, 11, &mut pkt);
    pkt.arrival = 1_400_000;
    pkt.hops = 1;
    q.route(8, 11, &mut pkt);
    // Estimate = min over router 8's row (group 5 seen from group 1 = index 4, slot 0).
    let row = q.alg.row(1, 5, 0);
    let want = table(&q, 8).row(row).iter().cloned().fold(f64::INFINITY, f64::min);
    assert_eq!(qh(&mut pkt).estimate, want);
    let sent = q.depart(8, 11, &pkt);
    assert_eq!(sent.len(), 1);
    let (dest, f) = sent[0];
    assert_eq!(dest, Dest::Upstream);
    assert_eq!((f.dst, f.src, f.hop_delay, f.estimate), (pkt.dst, 0, 400_000, want));

    // In the destination group: feedback with estimate 0 for a global arrival, none for local.
    let mut pkt = q.packet(0, 5 * 32 + 3);
    pkt.hops = 2;
    qh(&mut pkt).estimate = 123.0;
    q.route(41, t.first_global_port(), &mut pkt);
    assert_eq!(qh(&mut pkt).estimate, 0.0);
    assert_eq!(q.depart(41, t.first_global_port(), &pkt)[0].1.estimate, 0.0);
    assert!(q.depart(41, 4, &pkt).is_empty());
}

/// Route a packet from node `src` (at its source router, hop 0) and return (port, nonminimal).
fn route_at_source(q: &mut Harness<QAdaptive>, src: u32, dst: u32, seed: u64) -> (u16, bool) {
    let t = &q.net.topo;
    let (router, port) = (t.router_of_node(src), t.host_port_of_node(src));
    let mut pkt = q.packet(src, dst);
    q.reseed(seed);
    let hop = q.route(router, port, &mut pkt);
    assert_eq!(hop.vc, 0);
    (hop.port, pkt.nonminimal)
}

#[test]
fn source_threshold_keeps_or_diverts() {
    // Node 0 (router 0, slot 0) to group 5: router 1 owns the link, so the minimal port is the
    // local port 4 (column 0). Candidate: global port 12 (column 8).
    let (src, dst) = (0, 5 * 32 + 7);
    let row = 4 * 4;
    let mut q = harness(params(0.0));
    let set = |q: &mut Harness<QAdaptive>, qmin: f64, qbest: f64| {
        let tb = q.state_mut(0);
        for c in 0..11 {
            tb.set(row, c, 5000.0);
        }
        tb.set(row, 0, qmin);
        tb.set(row, 8, qbest);
    };
    set(&mut q, 1000.0, 810.0); // ΔV = 0.19 < 0.2: keep minimal
    assert_eq!(route_at_source(&mut q, src, dst, 1), (4, false));
    set(&mut q, 1000.0, 800.0); // ΔV = 0.2, not < 0.2: divert
    assert_eq!(route_at_source(&mut q, src, dst, 1), (12, true));
    set(&mut q, 1000.0, 600.0);
    assert_eq!(route_at_source(&mut q, src, dst, 1), (12, true));
    // Other source slots use other rows: node 1 still goes minimally.
    assert_eq!(route_at_source(&mut q, 1, dst, 1), (4, false));
    // The decision uses the row's argmin with ties to the lowest port: two equal candidates.
    set(&mut q, 1000.0, 600.0);
    q.state_mut(0).set(row, 3, 600.0);
    assert_eq!(route_at_source(&mut q, src, dst, 1), (7, true));
    // A local detour is a candidate too.
    set(&mut q, 1000.0, 5000.0);
    q.state_mut(0).set(row, 5, 700.0);
    assert_eq!(route_at_source(&mut q, src, dst, 1), (9, true));
    // The 2550 value of q_thld1 (0.05) diverts on a 10 % advantage.
    let mut q = harness(QParams { thld1: 0.05, ..params(0.0) });
    set(&mut q, 1000.0, 900.0);
    assert_eq!(route_at_source(&mut q, src, dst, 1), (12, true));
}

#[test]
fn intermediate_threshold_keeps_or_diverts() {
    // Router 8 = router 0 of group 1, entered from group 0 on global port 11. Destination group
    // 10: group 1's link to it is on router index 2, so the minimal port is local port 5.
    let (src, dst, me) = (0u32, 10 * 32 + 1, 8u32);
    let row = 9 * 4; // group 10 seen from group 1
    let min_port = 5u16;
    let run = |q: &mut Harness<QAdaptive>, seed: u64| {
        let mut pkt = q.packet(src, dst);
        pkt.hops = 1;
        q.reseed(seed);
        let hop = q.route(me, 11, &mut pkt);
        assert_eq!(hop.vc, 1);
        assert!(pkt.nonminimal);
        hop.port
    };
    let mut q = harness(params(0.0));
    let set = |q: &mut Harness<QAdaptive>, qmin: f64, qother: f64| {
        let tb = q.state_mut(me);
        for c in 0..11 {
            tb.set(row, c, qother);
        }
        tb.set(row, (min_port - 4) as usize, qmin);
    };
    // ΔV = 0.34 < 0.35: always minimal.
    set(&mut q, 1000.0, 660.0);
    assert!((0..500).all(|s| run(&mut q, s) == min_port));
    // ΔV = 0.36: a random other router of the group; minimal only when it is the gateway.
    set(&mut q, 1000.0, 640.0);
    let mut counts = [0usize; 15];
    for s in 0..7000 {
        counts[run(&mut q, s) as usize] += 1;
    }
    assert!(counts[11..].iter().all(|&c| c == 0), "only local candidates: {counts:?}");
    for (port, &c) in counts.iter().enumerate().take(11).skip(4) {
        assert!((800..1200).contains(&c), "port {port}: {c} of 7000 (expected ≈ 1000)");
    }
    // Global candidates are not considered even when their Q is the best.
    set(&mut q, 1000.0, 5000.0);
    q.state_mut(me).set(row, 8, 10.0);
    assert!((0..200).all(|s| run(&mut q, s) == min_port));
    // A router with a direct link to the destination group takes it whatever its table says:
    // router 8 reaches group 2 on port 12 (column 8).
    let row2 = 4; // group 2 seen from group 1 (index 1), slot 0
    for c in 0..11 {
        q.state_mut(me).set(row2, c, 10.0);
    }
    q.state_mut(me).set(row2, 8, 9999.0);
    let mut pkt = q.packet(src, 2 * 32 + 5);
    pkt.hops = 1;
    q.reseed(3);
    assert_eq!(q.route(me, 11, &mut pkt).port, 12);
}

#[test]
fn exploration_is_off_at_eps_0_and_uniform_at_eps_1() {
    let t = topo_1056();
    let mut pick = Rng::seed_from_u64(9);
    let mut q0 = harness(params(0.0));
    let mut q1 = harness(params(1.0));
    let mut counts = [0usize; 15];
    let n = 22_000;
    let mut decisions = 0;
    for i in 0..n {
        let src = pick.gen_range(0..t.nodes() as u32);
        let dst = pick.gen_range(0..t.nodes() as u32);
        let (sr, dr) = (t.router_of_node(src), t.router_of_node(dst));
        if t.group_of(sr) == t.group_of(dr) {
            continue;
        }
        decisions += 1;
        let mut rng = Rng::seed_from_u64(i);
        let min_port = port_to_group(&q0.net.view(sr, 0), t.group_of(dr), &mut rng);
        // Untrained tables: the thresholds keep every packet minimal unless it explores.
        assert_eq!(route_at_source(&mut q0, src, dst, i).0, min_port);
        counts[route_at_source(&mut q1, src, dst, i).0 as usize] += 1;
    }
    assert!(counts[..4].iter().all(|&c| c == 0));
    let expect = decisions as f64 / 11.0;
    for (port, &c) in counts.iter().enumerate().skip(4) {
        assert!((c as f64 - expect).abs() < 0.1 * expect, "port {port}: {c}, expected ≈ {expect:.0}");
    }
}

#[test]
fn state_bytes_q_adaptive_vs_q_routing() {
    // (g−1)·p·(k−p) vs (g·a−1)·(k−p) entries of 8 bytes (reference int64).
    assert_eq!(state_bytes_per_router(&topo_1056()), (128 * 11 * 8, 263 * 11 * 8));
    assert_eq!(state_bytes_per_router(&topo_2550()), (250 * 14 * 8, 509 * 14 * 8));
    for t in [topo_1056(), topo_2550()] {
        let (qa, qr) = state_bytes_per_router(&t);
        let ratio = qa as f64 / qr as f64;
        assert!((0.48..0.50).contains(&ratio), "ratio {ratio}");
    }
}

#[test]
fn names_parse_and_build_with_the_reference_bounds() {
    for name in ["Q-adaptive", "qadaptive", "Q-ADAPTIVE", " q-adaptive "] {
        assert_eq!(canonical_algorithm(name).unwrap(), "Q-adaptive");
    }
    for name in ["Q-routing", "qrouting", "QROUTING"] {
        assert_eq!(canonical_algorithm(name).unwrap(), "Q-routing");
    }
    let e = Experiment::default();
    let t = topo_1056();
    let r = QAdaptive::new(&t, QParams::adaptive(&QAdaptiveParams::default(), &e.network));
    let learning = dflab_core::routing::Hooks::DEPART.with(dflab_core::routing::Hooks::MSG);
    assert_eq!((r.vcs().max(), r.max_hops(), QAdaptive::HOOKS.has(learning)), (5, 5, true));
    let four = QRoutingParams { max_q: 4, ..Default::default() };
    let r = QRouting::new(&t, QParams::routing(&four, &e.network));
    assert_eq!((r.vcs().max(), r.max_hops(), QRouting::HOOKS.has(learning)), (7, 7, true));
    // Knob validation names the field.
    for (doc, field) in [
        (r#"{"routing": {"learning_rate": 0}}"#, "routing.learning_rate"),
        (r#"{"routing": {"learning_rate2": 1.5}}"#, "routing.learning_rate2"),
        (r#"{"routing": {"epsilon": -0.1}}"#, "routing.epsilon"),
        (r#"{"routing": {"max_q": 40}}"#, "routing.max_q"),
        (r#"{"routing": {"q_update": "fast"}}"#, "routing.q_update"),
    ] {
        let err = Experiment::from_json(doc).unwrap_err().to_string();
        assert!(err.starts_with(field), "{doc}: {err}");
    }
    let e =
        Experiment::from_json(r#"{"routing": {"algorithm": "Q-adaptive", "q_thld1": 0.05, "q_thld2": 0.4}}"#).unwrap();
    let p = e.canonical().unwrap().routing.params;
    assert_eq!(
        (p["q_thld1"].as_f64(), p["q_thld2"].as_f64(), p["learning_rate"].as_f64()),
        (Some(0.05), Some(0.4), Some(0.2))
    );
}
