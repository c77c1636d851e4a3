//! UGALg and UGALn exactly as the Q-adaptive reference code (`route_ugal_3vc` = `ugal-g`,
//! `route_ugal_4vc` = `ugal-n`; qadaptive-reference.md §2, baseline-algorithms.md §1.2).
//!
//! One decision per packet, at the source router, between one minimal candidate and one
//! non-minimal candidate through a random router outside the source and destination groups:
//! * occupancy of a candidate = output-buffer flits + used credits summed over every VC of its
//!   first port; when both candidates leave by the same port, only the VC each would take
//!   (`vc_min`, `vc_nonmin` below);
//! * non-minimal iff `q_min > floor(T · q_nm)`, `T = routing.adaptive_threshold` (2.0);
//! * the decision is never revisited.
//!
//! | | VCs | non-minimal path | minimal path | vc_min / vc_nonmin | hops |
//! |---|---|---|---|---|---|
//! | UGALg | 3 | VC0 to the intermediate *group*, then minimal on VC1 | VC1 | 1 / 0 | ≤ 5 |
//! | UGALn | 4 | VC0 to I, VC1 to the intermediate *router*, minimal on VC2 | VC2 | 2 / 0 | ≤ 6 |
//!
//! The destination group uses the last VC. Options (defaults are the reference's):
//! `routing.intermediate = "any"` draws the intermediate from every router and goes minimal
//! when it falls in the source or destination group; `routing.intra_group = "adaptive"` applies
//! the same rule to intra-group packets against a detour through a random third router of the
//! group (the reference always routes them minimally).

use super::adaptive::{draw_intermediate, reference_decision, route_intra_group, AdaptiveParams};
use super::paths::port_to_group;
use super::valiant::{hdr_mut, Layout, ValiantHeader, LAYOUT_G, LAYOUT_N, TO_DESTINATION};
use super::{Ctx, Hop, NoMsg, Rng, RouterView, Routing, VcCounts};
use crate::network::Packet;
use crate::topology::Topology;

pub struct Ugal {
    layout: Layout,
    params: AdaptiveParams,
}

impl Ugal {
    /// UGALg: Valiant to a group, 3 VCs.
    pub fn to_group(params: AdaptiveParams) -> Ugal {
        Ugal { layout: LAYOUT_G, params }
    }

    /// UGALn: Valiant to a router, 4 VCs.
    pub fn to_router(params: AdaptiveParams) -> Ugal {
        Ugal { layout: LAYOUT_N, params }
    }

    fn decide_at_source(&self, view: &RouterView, pkt: &mut Packet, rng: &mut Rng) -> Hop {
        let topo = view.topo;
        let dst_group = topo.group_of(pkt.dst_router);
        let l = self.layout.vc;
        let threshold = self.params.adaptive_threshold;
        hdr_mut(pkt).phase = TO_DESTINATION;
        if view.group == dst_group {
            return route_intra_group(view, pkt, self.params.intra_group, l.to_group, l.destination, rng, |m, n| {
                reference_decision(view, m, n, l.destination, l.to_group, threshold)
            });
        }
        let min_port = port_to_group(view, dst_group, rng);
        if let Some(ir) = draw_intermediate(view, self.params.intermediate, view.group, dst_group, rng) {
            let nm_port = port_to_group(view, topo.group_of(ir), rng);
            if reference_decision(view, min_port, nm_port, l.to_destination, l.to_group, threshold) {
                self.layout.start_valiant(topo, pkt, ir);
                return Hop { port: nm_port, vc: l.to_group };
            }
        }
        Hop { port: min_port, vc: l.to_destination }
    }
}

impl Routing for Ugal {
    type Header = ValiantHeader;
    type RouterState = ();
    type Msg = NoMsg;

    fn vcs(&self) -> VcCounts {
        self.layout.vcs()
    }

    fn max_hops(&self) -> u32 {
        self.layout.max_hops()
    }

    fn router_state(&self, _topo: &Topology, _router: u32) {}

    fn route(&self, cx: &mut Ctx<'_, Self>, pkt: &mut Packet) -> Hop {
        if cx.view.is_source_router() && pkt.hops == 0 {
            return self.decide_at_source(&cx.view, pkt, cx.rng);
        }
        self.layout.next_hop(&cx.view, pkt, cx.rng)
    }

    #[inline(always)]
    fn route_without_view(&self, topo: &Topology, router: u32, in_port: u16, pkt: &mut Packet) -> Option<Hop> {
        self.layout.table_hop_after_source(topo, router, in_port, pkt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::IntraGroup;
    use crate::routing::harness::{walk_pkt, Net};
    use crate::topology::LinkClass;

    /// dfly(4,8,4,33) with one link per group pair, as the HPDC setup. Node 0 sits on router 0
    /// of group 0, whose global ports lead to groups 1–4; router 1 of group 0 leads to 5–8.
    fn hpdc() -> Net {
        Net::new(4, 8, 4, 1)
    }

    /// A node of group 5 (reached from router 0 of group 0 through the local port to router 1).
    const FAR: u32 = 5 * 32 + 6;
    /// A node of group 2 (reached from router 0 of group 0 through its own global port).
    const NEAR: u32 = 2 * 32 + 9;

    fn decide(alg: &Ugal, net: &Net, dst: u32, seeds: std::ops::Range<u64>) -> (u32, u32) {
        let (mut nonmin, mut total) = (0, 0);
        for seed in seeds {
            let (_, pkt) = walk_pkt(net, alg, 0, dst, seed);
            nonmin += pkt.nonminimal as u32;
            total += 1;
        }
        (nonmin, total)
    }

    #[test]
    fn empty_network_routes_minimally() {
        let net = hpdc();
        for alg in [Ugal::to_group(AdaptiveParams::default()), Ugal::to_router(AdaptiveParams::default())] {
            assert_eq!(decide(&alg, &net, FAR, 0..200).0, 0);
            assert_eq!(decide(&alg, &net, NEAR, 0..200).0, 0);
        }
    }

    #[test]
    fn congested_minimal_port_diverts_past_the_threshold() {
        // Minimal first hop of 0 -> FAR is the local port to router 1. With 5 flits on it and
        // every other port empty, q_min = 5 > floor(2 · 0): every packet diverts unless its
        // intermediate group is also behind router 1 (then the ports coincide and the per-VC
        // rule applies, see the next test).
        let mut net = hpdc();
        let min_port = net.topo.local_port(0, 1);
        net.set_used_credits(0, min_port, 0, 5);
        for alg in [Ugal::to_group(AdaptiveParams::default()), Ugal::to_router(AdaptiveParams::default())] {
            for seed in 0..300 {
                let (path, pkt) = walk_pkt(&net, &alg, 0, FAR, seed);
                let same_port = path[0].port == min_port;
                assert_eq!(pkt.nonminimal, !same_port, "seed {seed}: {path:?}");
            }
        }
    }

    #[test]
    fn threshold_keeps_minimal_until_twice_the_nonminimal_occupancy() {
        // Every port of router 0 except the minimal one carries 3 flits: q_nm = 3, so the packet
        // stays minimal up to q_min = floor(2·3) = 6 and diverts at 7.
        let mut net = hpdc();
        let min_port = net.topo.local_port(0, 1);
        for port in net.topo.first_local_port()..net.topo.radix as u16 {
            if port != min_port {
                net.set_used_credits(0, port, 0, 3);
            }
        }
        let alg = Ugal::to_router(AdaptiveParams::default());
        net.set_used_credits(0, min_port, 0, 6);
        let stays: Vec<bool> = (0..200).map(|s| !walk_pkt(&net, &alg, 0, FAR, s).1.nonminimal).collect();
        assert!(stays.iter().all(|&m| m));
        net.set_used_credits(0, min_port, 0, 7);
        let (nonmin, total) = decide(&alg, &net, FAR, 0..200);
        // Intermediates behind router 1 (groups 5-8, 4 of 31 groups) share the minimal port.
        assert!(nonmin > total * 3 / 4, "{nonmin}/{total}");
    }

    #[test]
    fn same_port_compares_only_the_vcs_each_path_would_take() {
        // When the intermediate group is one of 5-8, both candidates leave by the local port to
        // router 1. Load on that port's vc_nonmin alone must keep the packet minimal; the same
        // load on vc_min alone must divert it (q_nm = 0); load on another VC counts for neither.
        // Packets whose non-minimal port differs see the whole-port sum and always divert here,
        // so every packet whose first hop uses the shared port is a same-port decision.
        let port = hpdc().topo.local_port(0, 1);
        for (make, vc_min, vc_nonmin, other) in
            [(Ugal::to_group as fn(AdaptiveParams) -> Ugal, 1usize, 0usize, 2usize), (Ugal::to_router, 2, 0, 1)]
        {
            for (vc, want_nonmin) in [(vc_nonmin, false), (vc_min, true), (other, false)] {
                let mut net = hpdc();
                net.set_used_credits(0, port, vc, 10);
                let alg = make(AdaptiveParams::default());
                let mut same_port = 0;
                for seed in 0..2000 {
                    let (path, pkt) = walk_pkt(&net, &alg, 0, FAR, seed);
                    if path[0].port != port {
                        assert!(pkt.nonminimal);
                        continue;
                    }
                    assert_eq!(pkt.nonminimal, want_nonmin, "vc {vc} seed {seed}");
                    assert!((5..=8).contains(&super::super::valiant::hdr(&pkt).inter_group) || !pkt.nonminimal);
                    let want_vc = if want_nonmin { 0 } else { vc_min as u8 };
                    assert_eq!(path[0].vc, want_vc);
                    same_port += 1;
                }
                // 4 of the 31 candidate groups are behind router 1: about 258 of 2000.
                assert!(same_port > 150, "vc {vc}: {same_port}");
            }
        }
    }

    #[test]
    fn paths_follow_the_reference_vc_layouts() {
        let mut net = hpdc();
        // Congest router 0's minimal ports toward far groups so that both kinds of path occur.
        for port in net.topo.first_local_port()..net.topo.radix as u16 {
            if port % 2 == 0 {
                net.set_used_credits(0, port, 0, 9);
            }
        }
        for (alg, bound, last) in
            [(Ugal::to_group(AdaptiveParams::default()), 5, 2u8), (Ugal::to_router(AdaptiveParams::default()), 6, 3)]
        {
            let (mut min, mut nonmin) = (0, 0);
            for seed in 0..3000u64 {
                let dst = (seed * 37 % net.topo.nodes() as u64) as u32;
                let (path, pkt) = walk_pkt(&net, &alg, (seed % 4) as u32, dst, seed);
                assert!(path.len() <= bound);
                let vcs: Vec<u8> = path.iter().map(|h| h.vc).collect();
                assert!(vcs.windows(2).all(|w| w[0] <= w[1]), "{vcs:?}");
                let dg = net.topo.group_of(pkt.dst_router);
                for h in &path {
                    if net.topo.group_of(h.router) == dg {
                        assert_eq!(h.vc, last);
                    }
                }
                let globals = path.iter().filter(|h| net.topo.class_of_port(h.port) == LinkClass::Global).count();
                if pkt.nonminimal {
                    nonmin += 1;
                    assert_eq!(globals, 2);
                    assert_eq!(path[0].vc, 0);
                    if bound == 6 {
                        assert!(path.iter().any(|h| h.router == super::super::valiant::hdr(&pkt).inter_router));
                    }
                } else if dg != 0 {
                    min += 1;
                    assert!(globals == 1 && path.len() <= 3);
                    assert!(path.iter().all(|h| net.topo.group_of(h.router) == dg || h.vc == last - 1));
                }
            }
            assert!(min > 100 && nonmin > 100, "{min} {nonmin}");
        }
    }

    #[test]
    fn intra_group_packets_are_minimal_unless_asked() {
        let mut net = hpdc();
        // 0 -> node 12 (router 3 of group 0), with the direct local port congested.
        let direct = net.topo.local_port(0, 3);
        net.set_used_credits(0, direct, 3, 8);
        let alg = Ugal::to_router(AdaptiveParams::default());
        let (path, pkt) = walk_pkt(&net, &alg, 0, 12, 1);
        assert!(!pkt.nonminimal && path.len() == 1);
        let adaptive = AdaptiveParams { intra_group: IntraGroup::Adaptive, ..AdaptiveParams::default() };
        let alg = Ugal::to_router(adaptive);
        for seed in 0..50 {
            let (path, pkt) = walk_pkt(&net, &alg, 0, 12, seed);
            assert!(pkt.nonminimal && path.len() == 2, "{path:?}");
            assert_eq!((path[0].vc, path[1].vc), (0, 3));
        }
    }
}
