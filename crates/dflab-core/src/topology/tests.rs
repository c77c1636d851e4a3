use super::*;
use crate::config::{Arrangement, GlobalPortOrder, TopologyConfig};
use proptest::prelude::*;

fn topo(p: usize, a: usize, h: usize, g: Option<usize>, l: usize, arr: Arrangement) -> Result<Topology> {
    Topology::new(&TopologyConfig {
        p,
        a,
        h,
        g,
        links_per_pair: Some(l),
        arrangement: arr,
        ..TopologyConfig::default()
    })
}

#[test]
fn hpdc_1056_matches_the_reference_wiring() {
    // qadaptive-reference.md §7.1: router 0 of group 0 reaches groups 1-4 on ports 11-14,
    // router 7 of group 0 reaches groups 29-32.
    let t = topo(4, 8, 4, None, 1, Arrangement::Absolute).unwrap();
    assert_eq!((t.g, t.radix, t.routers(), t.nodes()), (33, 15, 264, 1056));
    assert_eq!(t.link_counts(), (924, 528));
    for k in 0..4u16 {
        assert_eq!(t.global_port_group(0, 11 + k), 1 + k as u32);
        assert_eq!(t.global_port_group(7, 11 + k), 29 + k as u32);
    }
    // Router (G, r) slot j leads to group r*4+j, +1 if that is >= G.
    let r = 5 * 8 + 3; // group 5, router 3
    for k in 0..4u16 {
        let raw = 3 * 4 + k as u32;
        let want = if raw >= 5 { raw + 1 } else { raw };
        assert_eq!(t.global_port_group(r, 11 + k), want);
    }
    assert_eq!(t.diameter(), 3);
}

#[test]
fn practical_dfly_with_four_links_per_pair() {
    let t = topo(4, 8, 4, None, 4, Arrangement::Absolute).unwrap();
    assert_eq!(t.g, 9);
    for from in 0..9 {
        for to in 0..9 {
            if from != to {
                assert_eq!(t.gateways(from, to).len(), 4);
            }
        }
    }
}

/// `dfly(p, a, h, g)` without `links_per_pair` has as many parallel links per group pair as fit,
/// as the papers write it (ICS'24 Table 1: dfly(4,8,4,9) has 4); an explicit value still wins.
#[test]
fn links_per_pair_derived_from_g() {
    let derived = |g: Option<usize>, arr| {
        Topology::new(&TopologyConfig {
            p: 4,
            a: 8,
            h: 4,
            g,
            links_per_pair: None,
            arrangement: arr,
            ..TopologyConfig::default()
        })
        .unwrap()
    };
    let unused = |t: &Topology| t.a * t.h * t.g - 2 * t.link_counts().1;
    for arr in [Arrangement::Absolute, Arrangement::Relative, Arrangement::Palmtree] {
        let t = derived(Some(9), arr);
        assert_eq!((t.g, t.l, unused(&t)), (9, 4, 0), "{arr:?}");
        assert!((0..9).all(|x| (0..9).all(|y| x == y || t.gateways(x, y).len() == 4)), "{arr:?}");
        // 32 global ports per group, 9 other groups: 3 links each, 5 ports of a group unused.
        let t = derived(Some(10), arr);
        assert_eq!((t.g, t.l, unused(&t)), (10, 3, 10 * 5), "{arr:?}");
        assert!((0..10).all(|x| (0..10).all(|y| x == y || t.gateways(x, y).len() == 3)), "{arr:?}");
    }
    let t = derived(None, Arrangement::Absolute);
    assert_eq!((t.g, t.l), (33, 1));
    let t = derived(Some(1), Arrangement::Absolute);
    assert_eq!((t.g, t.l), (1, 1));
    // Explicit l = 1 keeps SST's sparse wiring: 24 of each group's 32 global ports unused.
    let t = topo(4, 8, 4, Some(9), 1, Arrangement::Absolute).unwrap();
    assert_eq!((t.l, unused(&t)), (1, 9 * 24));
}

#[test]
fn impossible_shapes_are_named() {
    let e = topo(4, 8, 4, Some(34), 1, Arrangement::Absolute).unwrap_err();
    assert!(e.to_string().starts_with("topology.g"), "{e}");
    let e = topo(4, 8, 3, None, 1, Arrangement::Circulant).unwrap_err();
    assert!(e.to_string().contains("even h"), "{e}");
    let e = topo(4, 8, 4, None, 3, Arrangement::Absolute).unwrap_err();
    assert!(e.to_string().starts_with("topology.links_per_pair"), "{e}");
    let e = topo(0, 8, 4, None, 1, Arrangement::Absolute).unwrap_err();
    assert!(e.to_string().starts_with("topology.p"), "{e}");
}

#[test]
fn unused_ports_when_fewer_groups() {
    // g = 20 < a*h+1: slots >= 19 stay unconnected but every pair keeps one link.
    let t = topo(2, 8, 4, Some(20), 1, Arrangement::Absolute).unwrap();
    let (_, global) = t.link_counts();
    assert_eq!(global, 20 * 19 / 2);
}

fn check_wiring(t: &Topology) {
    let gp = t.first_global_port();
    for r in 0..t.routers() as u32 {
        for port in t.p as u16..t.radix as u16 {
            if let Some((pr, pp)) = t.peer(r, port) {
                // symmetric, class-preserving, never a self loop
                assert_eq!(t.peer(pr, pp), Some((r, port)), "router {r} port {port}");
                assert_eq!(t.class_of_port(port), t.class_of_port(pp));
                assert_ne!(pr, r);
                if port >= gp {
                    assert_eq!(t.global_port_group(r, port), t.group_of(pr));
                    assert_ne!(t.group_of(pr), t.group_of(r));
                } else {
                    assert_eq!(t.group_of(pr), t.group_of(r));
                }
            }
        }
    }
    // every pair of groups has exactly l links when all ports are used
    for x in 0..t.g as u32 {
        for y in 0..t.g as u32 {
            if x != y {
                assert!(!t.gateways(x, y).is_empty());
                assert_eq!(t.gateways(x, y).len(), t.gateways(y, x).len());
            }
        }
    }
}

#[test]
fn every_arrangement_is_symmetric_on_canonical_shapes() {
    for arr in [Arrangement::Absolute, Arrangement::Relative, Arrangement::Palmtree, Arrangement::Circulant] {
        let t = topo(2, 4, 2, None, 1, arr).unwrap();
        check_wiring(&t);
        assert_eq!(t.diameter(), 3, "{arr:?}");
        let t = topo(4, 8, 4, None, 1, arr).unwrap();
        check_wiring(&t);
    }
}

#[test]
fn palmtree_mirrors_routers_and_ports() {
    // baseline-algorithms.md §7: palmtree peer is r' = a-1-r, k' = h-1-k.
    let t = topo(2, 4, 2, None, 1, Arrangement::Palmtree).unwrap();
    let gp = t.first_global_port();
    for r in 0..t.routers() as u32 {
        for k in 0..2u16 {
            let (pr, pp) = t.peer(r, gp + k).unwrap();
            assert_eq!(t.index_in_group(pr), 3 - t.index_in_group(r));
            assert_eq!(pp - gp, 1 - k);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn wiring_is_consistent_for_any_shape(p in 1usize..4, a in 1usize..7, h in 1usize..5, l in 1usize..4,
                                          arr in 0usize..3, shrink in 0usize..4) {
        prop_assume!((a * h) % l == 0);
        let gmax = a * h / l + 1;
        let g = gmax.saturating_sub(shrink).max(1);
        let arr = [Arrangement::Absolute, Arrangement::Relative, Arrangement::Palmtree][arr];
        let t = topo(p, a, h, Some(g), l, arr).unwrap();
        check_wiring(&t);
        prop_assert!(t.diameter() <= 3);
        // The counting shortcut agrees with the search wherever it answers.
        prop_assert_eq!(t.diameter(), t.diameter_by_search());
        for x in 0..t.routers() as u32 {
            for y in 0..t.routers() as u32 {
                prop_assert!(t.min_hops(x, y) <= 3);
            }
        }
        check_first_ports(&t);
    }
}

/// The first-port table answers exactly for the group pairs with one link: that link's global
/// port at its owner, the local port to the owner elsewhere.
fn check_first_ports(t: &Topology) {
    for x in 0..t.routers() as u32 {
        let (grp, index) = (t.group_of(x), t.index_in_group(x));
        for to in 0..t.g as u32 {
            let want = match *t.gateways(grp, to) {
                [(r, k)] if to != grp => {
                    Some(if r as u32 == index { t.first_global_port() + k } else { t.local_port(index, r as u32) })
                }
                _ => None,
            };
            assert_eq!(t.single_link_first_port(x, to), want, "router {x} to group {to}");
            let entry = match want {
                _ if to == grp => FirstPort::OwnGroup,
                Some(port) => FirstPort::Port(port),
                None => FirstPort::Unknown,
            };
            assert_eq!(t.first_port_to_group(x, to), entry, "router {x} to group {to}");
        }
        // The router-to-router form: the local port computed from the indices in the own group,
        // the single-link first port elsewhere.
        for y in (0..t.routers() as u32).filter(|&y| y != x) {
            let to = t.group_of(y);
            let want = if to == grp {
                Some((t.local_port(index, t.index_in_group(y)), true))
            } else {
                t.single_link_first_port(x, to).map(|port| (port, false))
            };
            assert_eq!(t.minimal_first_port(x, y), want, "router {x} to router {y}");
            if to == grp {
                assert_eq!(t.local_port_to(x, y, grp), t.local_port(index, t.index_in_group(y)));
            }
        }
        assert_eq!(t.first_port_to_group(x, NONE), FirstPort::Unknown);
    }
}

#[test]
fn first_ports_of_the_canonical_shapes() {
    for arr in [Arrangement::Absolute, Arrangement::Relative, Arrangement::Palmtree, Arrangement::Circulant] {
        check_first_ports(&topo(4, 8, 4, None, 1, arr).unwrap());
    }
    check_first_ports(&topo(4, 8, 4, None, 4, Arrangement::Absolute).unwrap());
}

/// Newcomer #12: the diameter of a large Dragonfly is known without an all-pairs search
/// (dfly(16,32,16,513): 16,416 routers; the search took minutes).
#[test]
fn large_networks_get_their_diameter_without_a_search() {
    let t = topo(16, 32, 16, Some(513), 1, Arrangement::Absolute).unwrap();
    assert!(t.routers() as u64 > t.reach_in_two_hops() && t.all_group_pairs_linked());
    assert_eq!(t.diameter(), 3);
}

/// Every global port's peer leads back to it, and the group each port names is its peer's.
fn assert_links_symmetric(t: &Topology) {
    let first = t.first_global_port();
    for r in 0..t.routers() as u32 {
        for k in 0..t.h as u16 {
            let port = first + k;
            if let Some((pr, pp)) = t.peer(r, port) {
                assert_eq!(t.peer(pr, pp), Some((r, port)), "router {r} port {port}");
                assert_eq!(t.global_port_group(r, port), t.group_of(pr));
                assert_ne!(t.group_of(pr), t.group_of(r));
            } else {
                assert_eq!(t.global_port_group(r, port), NONE);
            }
        }
    }
}

fn shaped(p: usize, a: usize, h: usize, g: usize, l: usize, arr: Arrangement, order: GlobalPortOrder) -> Topology {
    let cfg = TopologyConfig {
        p,
        a,
        h,
        g: Some(g),
        links_per_pair: Some(l),
        arrangement: arr,
        global_port_order: order,
        ..TopologyConfig::default()
    };
    Topology::new(&cfg).unwrap()
}

/// Global links per router of group `grp`.
fn links_per_router(t: &Topology, grp: u32) -> Vec<usize> {
    let first = t.first_global_port();
    (0..t.a as u32)
        .map(|i| (0..t.h as u16).filter(|&k| t.peer(grp * t.a as u32 + i, first + k).is_some()).count())
        .collect()
}

#[test]
fn round_robin_spreads_a_tapered_groups_links_over_its_routers() {
    // Frontier class: 32 switches of 17 global ports, 74 groups, 4 links per group pair: 292 of
    // a group's 544 global ports are cabled. By router, switches 0-16 take 17 links, switch 17
    // takes 3 and the 14 others none; round robin gives each switch 9 or 10.
    for arr in [Arrangement::Absolute, Arrangement::Relative, Arrangement::Palmtree] {
        let by_router = shaped(16, 32, 17, 74, 4, arr, GlobalPortOrder::ByRouter);
        let spread = shaped(16, 32, 17, 74, 4, arr, GlobalPortOrder::RoundRobin);
        for t in [&by_router, &spread] {
            assert_eq!(t.link_counts().1, 74 * 73 / 2 * 4, "{arr:?}");
            assert_links_symmetric(t);
            assert!((0..74).all(|x| (0..74).all(|y| x == y || t.gateways(x, y).len() == 4)), "{arr:?}");
        }
        for grp in [0, 37, 73] {
            let counts = links_per_router(&by_router, grp);
            assert_eq!((counts[0], counts[17], counts[18]), (17, 3, 0), "{arr:?}");
            let counts = links_per_router(&spread, grp);
            assert!(counts.iter().all(|&c| c == 9 || c == 10), "{arr:?} {counts:?}");
            assert_eq!(counts.iter().sum::<usize>(), 292);
        }
    }
}

#[test]
fn round_robin_on_a_full_network_is_another_valid_wiring() {
    // All a·h slots cabled: every port used either way, the same pairs connected, different ports.
    let by_router = shaped(4, 8, 4, 33, 1, Arrangement::Absolute, GlobalPortOrder::ByRouter);
    let spread = shaped(4, 8, 4, 33, 1, Arrangement::Absolute, GlobalPortOrder::RoundRobin);
    assert_links_symmetric(&spread);
    assert_eq!(spread.link_counts(), by_router.link_counts());
    assert!(links_per_router(&spread, 5).iter().all(|&c| c == 4));
    let first = spread.first_global_port();
    assert_ne!(spread.global_port_group(0, first + 1), by_router.global_port_group(0, first + 1));
    let cfg = TopologyConfig {
        arrangement: Arrangement::Circulant,
        global_port_order: GlobalPortOrder::RoundRobin,
        ..TopologyConfig::default()
    };
    let e = Topology::new(&cfg).unwrap_err();
    assert!(e.to_string().starts_with("topology.global_port_order"), "{e}");
}

proptest! {
    #[test]
    fn round_robin_wires_every_shape_symmetrically(a in 2usize..9, h in 1usize..6, extra in 0usize..4, l in 1usize..4) {
        let max_g = a * h / l + 1;
        prop_assume!(max_g >= 2);
        let g = (max_g - extra.min(max_g - 2)).max(2);
        for arr in [Arrangement::Absolute, Arrangement::Relative, Arrangement::Palmtree] {
            let t = shaped(2, a, h, g, l, arr, GlobalPortOrder::RoundRobin);
            assert_links_symmetric(&t);
            for x in 0..g as u32 {
                for y in 0..g as u32 {
                    prop_assert!(x == y || t.gateways(x, y).len() == l);
                }
                let counts = links_per_router(&t, x);
                prop_assert!(counts.iter().max().unwrap() - counts.iter().min().unwrap() <= 1);
            }
        }
    }
}

#[test]
fn aurora_class_wiring_has_two_links_per_group_pair() {
    // Aurora class: 175 groups (166 compute, 9 not) of 32 switches of 17 global ports, 2 links
    // per group pair: 348 of a group's 544 global ports cabled, 10 or 11 per switch in round
    // robin; every link exists once, in both directions.
    let t = shaped(16, 32, 17, 175, 2, Arrangement::Absolute, GlobalPortOrder::RoundRobin);
    assert_eq!((t.routers(), t.link_counts().1), (5_600, 175 * 174 / 2 * 2));
    assert_links_symmetric(&t);
    assert!((0..175).all(|x| (0..175).all(|y| x == y || t.gateways(x, y).len() == 2)));
    for grp in [0, 100, 165, 174] {
        let counts = links_per_router(&t, grp);
        assert!(counts.iter().all(|&c| c == 10 || c == 11), "{counts:?}");
        assert_eq!(counts.iter().sum::<usize>(), 348);
    }
}

#[test]
fn nics_and_compute_groups_are_checked_and_counted() {
    let cfg = |p, nics, compute| TopologyConfig {
        p,
        a: 4,
        h: 2,
        nics_per_node: nics,
        compute_groups: compute,
        ..TopologyConfig::default()
    };
    let t = Topology::new(&cfg(4, 2, Some(5))).unwrap();
    assert_eq!((t.g, t.nodes(), t.compute_endpoints(), t.compute_nodes()), (9, 144, 80, 40));
    assert!(!t.all_endpoints_compute());
    let view = t.pattern_view().unwrap();
    assert_eq!((view.p, view.a, view.g, view.nics, view.nodes()), (2, 4, 5, 1, 40));
    let plain = Topology::new(&cfg(4, 1, None)).unwrap();
    assert!(plain.all_endpoints_compute());
    assert!(matches!(plain.pattern_view().unwrap(), std::borrow::Cow::Borrowed(_)));
    for (bad, field) in [
        (cfg(4, 3, None), "topology.nics_per_node"),
        (cfg(4, 0, None), "topology.nics_per_node"),
        (cfg(4, 1, Some(0)), "topology.compute_groups"),
        (cfg(4, 1, Some(10)), "topology.compute_groups"),
    ] {
        let e = Topology::new(&bad).unwrap_err().to_string();
        assert!(e.starts_with(field) && e.contains("allowed"), "{e}");
    }
}
