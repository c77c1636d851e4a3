//! The misrouting policies' path sets, hop and VC bounds, and the ladder on the paper's
//! example paths, walked hop by hop through VAL (the walk also checks that every later hop
//! answered without a view equals the routed one).

use std::collections::HashSet;

use super::*;
use crate::config::{Arrangement, Experiment};
use crate::routing::harness::{walk_pkt, Net, Step};
use crate::routing::val::{Val, ValParams};
use crate::routing::BuildCtx;
use LinkClass::{Global as G, Local as L};

/// dfly(2, 4, 2) with 9 groups, palmtree: the canonical shape of the paper (a·h+1 groups).
fn net() -> Net {
    let mut exp = Experiment::default();
    exp.topology.p = 2;
    exp.topology.a = 4;
    exp.topology.h = 2;
    exp.topology.arrangement = Arrangement::Palmtree;
    Net::of(Topology::new(&exp.topology).unwrap())
}

fn val(policy: Policy, restricted: bool) -> Val {
    let exp = Experiment::default();
    let topo = Topology::new(&exp.topology).unwrap();
    Val::new(&BuildCtx { topo: &topo, exp: &exp }, ValParams { policy, restricted, recompute: false })
}

fn classes(net: &Net, path: &[Step]) -> Vec<LinkClass> {
    path.iter().map(|s| net.topo.class_of_port(s.port)).collect()
}

/// The longest path of each policy (Table 1): Phase A, then minimal LGL.
fn longest(policy: Policy) -> usize {
    match policy {
        Policy::CrgGr => 4,
        Policy::CrgSw | Policy::RrgGr => 5,
        Policy::RrgSw => 6,
    }
}

#[test]
fn every_policy_keeps_its_path_set_and_bounds() {
    let net = net();
    let topo = &net.topo;
    let ladder = valiant_ladder();
    for policy in Policy::ALL {
        let alg = val(policy, false);
        let mut lengths = HashSet::new();
        let mut into_destination_group = 0;
        for (i, (src, dst)) in net.sample_pairs(4000, 11).into_iter().enumerate() {
            let (path, pkt) = walk_pkt(&net, &alg, src, dst, i as u64);
            let (s, d) = (topo.router_of_node(src), pkt.dst_router);
            if s == d {
                assert!(path.is_empty());
                continue;
            }
            let cls = classes(&net, &path);
            assert!(path.len() <= longest(policy), "{policy:?}: {cls:?}");
            lengths.insert(path.len());
            // Every misrouted path takes exactly two global hops (Phase A's and Phase B's),
            // unless its intermediate group is the destination group (then one).
            let h = hdr(&pkt);
            assert!(pkt.nonminimal);
            assert_ne!(h.inter_group, topo.group_of(s), "the source group is never the intermediate");
            let globals = cls.iter().filter(|&&c| c == G).count();
            if h.inter_group == topo.group_of(d) {
                into_destination_group += 1;
                assert_eq!(globals, 1);
            } else {
                assert_eq!(globals, 2, "{policy:?}: {cls:?}");
            }
            // CRG leaves by the source router's own global link: no local hop first.
            if !policy.any_router() {
                assert_eq!(cls[0], G, "{policy:?}: {cls:?}");
            }
            // Phase A of a -gr policy ends on entering the group: at most one local hop
            // there (to the gateway of Phase B); a -sw policy visits its switch.
            let in_inter = path.iter().filter(|st| topo.group_of(st.router) == h.inter_group && cls_of(topo, st) == L);
            if h.inter_group != topo.group_of(d) {
                let n = in_inter.count();
                if policy.to_switch() {
                    assert!(n <= 2);
                    assert!(path.iter().any(|st| st.router == h.inter_router) || h.inter_router == d);
                } else {
                    assert!(n <= 1, "{policy:?}: {cls:?}");
                }
            }
            // The VCs are the ladder's for the path's classes, so they only grow per class.
            let vcs: Vec<u8> = path.iter().map(|st| st.vc).collect();
            assert_eq!(Some(vcs), ladder.vcs_of_path(&cls), "{policy:?}");
            // The drawn path's hop count is the walked one.
            let drawn = Drawn {
                inter_router: h.inter_router,
                inter_group: h.inter_group,
                via_index: h.via_index,
                via_port: h.via_port,
                phase: TO_INTER_GROUP,
            };
            assert_eq!(path_hops(topo, s, d, &drawn) as usize, path.len(), "{policy:?}: {cls:?}");
        }
        assert!(lengths.contains(&longest(policy)), "{policy:?} reaches its longest path: {lengths:?}");
        assert!(into_destination_group > 0, "{policy:?}: the destination group may be the intermediate");
    }
}

fn cls_of(topo: &Topology, st: &Step) -> LinkClass {
    topo.class_of_port(st.port)
}

#[test]
fn restricted_valiant_stays_in_the_group_on_l0_l1() {
    let net = net();
    let topo = &net.topo;
    let (p, a) = (topo.p as u32, topo.a as u32);
    let (mut two, mut one) = (0, 0);
    for policy in Policy::ALL {
        let alg = val(policy, true);
        // Node 0 (router 0) to each other router of group 0.
        for dst_router in 1..a {
            for seed in 0..200 {
                let (path, pkt) = walk_pkt(&net, &alg, 0, dst_router * p, seed);
                let cls = classes(&net, &path);
                assert!(cls.iter().all(|&c| c == L) && path.len() <= 2, "{cls:?}");
                assert!(path.iter().all(|st| topo.group_of(st.router) == 0));
                let vcs: Vec<u8> = path.iter().map(|st| st.vc).collect();
                if path.len() == 2 {
                    assert!(pkt.nonminimal);
                    assert_eq!(vcs, vec![0, 1], "the paper's RVAL example: l0, l1");
                    two += 1;
                } else {
                    assert!(!pkt.nonminimal, "a draw of the source or destination switch is minimal");
                    one += 1;
                }
            }
        }
    }
    // The switch is drawn over all a of the group: 2 of the a draws are minimal.
    let share = one as f64 / (one + two) as f64;
    assert!((share - 2.0 / a as f64).abs() < 0.03, "minimal share {share}");
}

#[test]
fn unrestricted_intra_group_packets_leave_the_group() {
    let net = net();
    let alg = val(Policy::RrgSw, false);
    let mut local = 0;
    for seed in 0..2000 {
        let (path, _) = walk_pkt(&net, &alg, 0, 2 * net.topo.p as u32, seed);
        let cls = classes(&net, &path);
        assert_eq!(cls.iter().filter(|&&c| c == G).count(), 2, "{path:?}");
        local += cls.iter().filter(|&&c| c == L).count();
    }
    // Four local hops, each taken unless its two ends coincide (1 in a = 4): 3 on average,
    // also when the drawn global link is the destination router's (FOGSim's 3.5 for a = 8).
    let mean = local as f64 / 2000.0;
    assert!((mean - 3.0).abs() < 0.1, "{mean} local hops");
}

#[test]
fn crg_gr_walks_the_papers_example_path() {
    // G-LGL: the source router's global link, Phase B's local, global, local: g0, l1, g1, l3.
    let net = net();
    let topo = &net.topo;
    let alg = val(Policy::CrgGr, false);
    let mut seen = false;
    for (i, (src, dst)) in net.sample_pairs(2000, 3).into_iter().enumerate() {
        let (path, _) = walk_pkt(&net, &alg, src, dst, i as u64);
        if classes(&net, &path) == [G, L, G, L] {
            let vcs: Vec<u8> = path.iter().map(|st| st.vc).collect();
            assert_eq!(vcs, vec![0, 1, 1, 3]);
            seen = true;
        }
        let _ = topo;
    }
    assert!(seen);
}

#[test]
fn rrg_draws_every_global_link_of_the_group_uniformly() {
    let net = net();
    let topo = &net.topo;
    let mut rng = <Rng as rand::SeedableRng>::seed_from_u64(5);
    let (a, h) = (topo.a, topo.h);
    let mut counts = vec![0u32; a * h];
    let n = 80_000;
    let dst = 5 * topo.a as u32; // a router of group 5
    for _ in 0..n {
        let d = draw(topo, 1, dst, Policy::RrgGr, false, &mut rng);
        counts[d.via_index as usize * h + (d.via_port - topo.first_global_port()) as usize] += 1;
    }
    let expect = n as f64 / (a * h) as f64;
    for c in counts {
        assert!((c as f64 - expect).abs() < 0.06 * expect, "{c} vs {expect}");
    }
    // CRG: only the source router's own links.
    for _ in 0..1000 {
        assert_eq!(draw(topo, 1, dst, Policy::CrgSw, false, &mut rng).via_index, 1);
    }
}
