//! Every traffic pattern through the real engine (issue 3, must-show 4, end to end): it parses,
//! samples valid destinations, and its structure shows in the hop histogram of minimal routing.
//! The destination sets themselves are unit-tested in `traffic/pattern/`.

use dflab_core::config::Experiment;

/// dfly(2,4,2,9): 72 nodes, 36 routers; default 3D grid 2×4×9.
fn small(pattern: &str, routing: &str, load: f64) -> Experiment {
    let mut e = Experiment::default();
    e.topology.p = 2;
    e.topology.a = 4;
    e.topology.h = 2;
    e.routing.algorithm = routing.into();
    e.traffic.pattern = pattern.into();
    e.traffic.load = load;
    e.run.warmup_us = 2.0;
    e.run.measure_us = 6.0;
    e.run.check = true;
    e
}

fn hops(pattern: &str, load: f64) -> Vec<f64> {
    let r = dflab_core::simulate(&small(pattern, "MIN", load)).unwrap_or_else(|e| panic!("{pattern}: {e}"));
    let total: u64 = r.hops_histogram.iter().sum();
    assert!(total > 1000, "{pattern}: {total} packets");
    r.hops_histogram.iter().map(|&c| c as f64 / total as f64).collect()
}

#[test]
fn every_pattern_runs_with_every_family_of_routing() {
    for pattern in [
        "ur",
        "adv+1",
        "adv+h",
        "advc",
        "advl",
        "hot",
        "hot:50:25",
        "perm",
        "router-mix:adv+1:25",
        "node-mix:perm:50",
        "stencil",
        "stencil:6x3x4",
        "m2m",
        "rn",
        "rn-fixed:2:4",
    ] {
        for routing in ["MIN", "VALn", "UGALn", "PAR"] {
            let r = dflab_core::simulate(&small(pattern, routing, 0.7))
                .unwrap_or_else(|e| panic!("{pattern} {routing}: {e}"));
            assert!(r.summary.packets_delivered > 0, "{pattern} {routing}");
        }
    }
}

#[test]
fn advl_traffic_never_leaves_the_group() {
    // Minimal routing: one local hop for every packet.
    assert_eq!(hops("advl", 0.3), [0.0, 1.0]);
}

#[test]
fn stencil_rounds_split_evenly_between_router_group_and_network_neighbours() {
    // Default grid p×a×g: ±x stays on the router (0 hops), ±y stays in the group (1 hop), ±z
    // goes to a neighbouring group (1 to 3 hops). Each node cycles through its 6 neighbours, so
    // the x class is a third of the packets up to the rounds cut by the window, and the y
    // class at least a third of the 1-hop packets.
    let h = hops("stencil", 0.3);
    assert!((h[0] - 1.0 / 3.0).abs() < 0.02, "{h:?}");
    assert!(h[1] > 1.0 / 3.0 - 0.02, "{h:?}");
    // Uniform traffic, by contrast, almost never stays on the router.
    assert!(hops("ur", 0.3)[0] < 0.05);
}

#[test]
fn many_to_many_on_the_default_grid_only_crosses_groups() {
    // Same (host, router index), another group: never 0 hops, and at least the global one.
    let h = hops("m2m", 0.3);
    assert_eq!(h[0], 0.0, "{h:?}");
    let mean: f64 = h.iter().enumerate().map(|(i, s)| i as f64 * s).sum();
    assert!(mean > 2.0, "{h:?}");
}
