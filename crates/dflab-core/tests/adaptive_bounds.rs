//! Hop and VC bounds of the adaptive routings through the real engine (issue 3, must-show 2).
//!
//! With `run.check = true` the engine fails a run when a routing picks a VC at or above the
//! number it declares, or a hop beyond its declared bound. These tests pin the declared numbers
//! to the reference table (qadaptive-reference.md §7.3: MIN 2/3, UGALg 3/5, UGALn 4/6, PAR 5/7;
//! UGAL-L 4/6 and UGAL-G 3/5 as documented in their modules) and check the measured hop
//! histograms against them, over seeds, patterns, arrangements and routing knobs at loads past
//! saturation where the adaptive decisions go both ways.

mod common;
use common::{hpdc, run};
use dflab_core::config::{Arrangement, Experiment};
use dflab_core::routing::registry::declared_bounds;
use dflab_core::topology::Topology;

/// (name, VCs, max router hops)
const BOUNDS: [(&str, usize, usize); 14] = [
    ("MIN", 2, 3),
    ("UGALg", 3, 5),
    ("UGALn", 4, 6),
    ("UGAL-L", 4, 6),
    ("UGAL-LE", 4, 6),
    ("UGAL-G", 3, 5),
    ("UGAL-G-path", 4, 6),
    ("DGB", 4, 6),
    ("EDGB", 4, 6),
    ("PAR", 5, 7),
    ("VAL", 4, 6),
    ("PB", 4, 6),
    ("ACOR", 4, 6),
    ("PB-ACOR", 4, 6),
];

fn small(p: usize, a: usize, h: usize, l: usize, arr: Arrangement) -> Experiment {
    common::small(p, a, h, l, arr, 2.0, 5.0)
}

#[test]
fn declared_vcs_and_hop_bounds_match_the_reference_table() {
    for (name, vcs, hops) in BOUNDS {
        let mut e = Experiment::default();
        e.routing.algorithm = name.into();
        let topo = Topology::new(&e.topology).unwrap();
        let (got_vcs, got_hops) = declared_bounds(topo, &e).unwrap();
        assert_eq!((got_vcs, got_hops as usize), (vcs, hops), "{name}");
    }
}

#[test]
fn small_networks_stay_within_bounds_past_saturation() {
    let shapes = [
        (2, 4, 2, 1, Arrangement::Absolute),
        (2, 4, 2, 1, Arrangement::Palmtree),
        (3, 6, 3, 1, Arrangement::Relative),
        (4, 8, 4, 4, Arrangement::Absolute),
    ];
    for (i, &(p, a, h, l, arr)) in shapes.iter().enumerate() {
        for (name, _, bound) in BOUNDS {
            let mut longest = 0;
            for (j, (pattern, load)) in
                [("ur", 1.0), ("adv+1", 0.9), ("advc", 0.8), ("perm", 1.0)].into_iter().enumerate()
            {
                let mut e = small(p, a, h, l, arr);
                e.routing.algorithm = name.into();
                e.traffic.pattern = pattern.into();
                e.traffic.load = load;
                e.seed = (10 * i + j) as u64;
                if j == 1 {
                    // The other intermediate rule, several UGAL-L candidates, a lower threshold.
                    e.routing.set("intermediate", "any");
                    e.routing.set("nonmin_candidates", 3);
                    e.routing.set("adaptive_threshold", 1.0);
                    e.routing.set("bias", -2.0);
                    // The ACOR family: recomputation, the per-packet levels, another sequence.
                    e.routing.set("recompute", true);
                    e.routing.set("management", "packet");
                    e.routing.set("sequence", "2LB");
                }
                if j == 2 {
                    // The ACOR family: the shortest Phase A, restricted intra-group paths.
                    e.routing.set("policy", "crg-gr");
                    e.routing.set("restricted", true);
                }
                if j == 3 {
                    // Multi-flit packets in shallow buffers, and the intra-group detour.
                    e.network.packet_flits = 2;
                    e.network.input_buffer_flits = 6;
                    e.network.output_buffer_flits = 4;
                    e.routing.set("intra_group", "adaptive");
                }
                let r = dflab_core::simulate(&e).unwrap_or_else(|err| panic!("{name} {pattern} {arr:?} l={l}: {err}"));
                assert!(r.summary.packets_delivered > 0, "{name} {pattern}");
                assert!(r.hops_histogram.len() <= bound + 1, "{name} {pattern}: {:?}", r.hops_histogram);
                longest = longest.max(r.hops_histogram.len() - 1);
            }
            // The non-minimal paths really occur (MIN: the 3-hop minimal ones).
            assert!(longest + 1 >= bound, "{name} on {p},{a},{h},{l}: longest path {longest}");
        }
    }
}

#[test]
fn qadaptive_1056_stays_within_bounds_under_adversarial_load() {
    for (name, _, bound) in BOUNDS {
        let r = run(&hpdc(name, "adv+1", 0.6, 2.0, 4.0));
        assert!(r.hops_histogram.len() <= bound + 1, "{name}: {:?}", r.hops_histogram);
        if name != "MIN" {
            assert!(r.summary.minimal_fraction < 0.5, "{name} diverts most ADV+1 traffic");
        }
    }
}

#[test]
fn intra_group_detours_happen_only_when_asked() {
    // ADVl: all traffic goes to the next router of the group, p = 2 nodes per router share one
    // local link, so at load 0.9 the direct link is oversubscribed (1.8x).
    for name in ["UGALg", "UGALn", "UGAL-L", "UGAL-LE", "UGAL-G", "PAR"] {
        let mut e = small(2, 4, 2, 1, Arrangement::Absolute);
        e.routing.algorithm = name.into();
        e.traffic.pattern = "advl".into();
        e.traffic.load = 0.9;
        let direct = run(&e);
        assert_eq!(direct.hops_histogram, [0, direct.summary.packets_delivered], "{name}");
        e.routing.set("intra_group", "adaptive");
        let adaptive = run(&e);
        assert!(adaptive.hops_histogram.len() == 3 && adaptive.summary.minimal_fraction < 0.9, "{name}");
        assert!(adaptive.summary.accepted_load > direct.summary.accepted_load * 1.2, "{name}");
    }
}
