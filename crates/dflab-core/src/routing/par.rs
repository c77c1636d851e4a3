//! PAR — Progressive Adaptive Routing (Jiang, Kim, Dally ISCA'09) as the Q-adaptive reference
//! code implements it (`route_PAR`; qadaptive-reference.md §2, baseline-algorithms.md §2).
//!
//! * At the source router: the UGALn decision (one minimal candidate, one random intermediate
//!   router outside the source and destination groups, whole-port occupancy = output-buffer
//!   flits + used credits, per-VC sets `vc_min = {0}`, `vc_nonmin = {1}` when both candidates
//!   share a port; non-minimal iff `q_min > floor(T · q_nm)`, `T = routing.adaptive_threshold`).
//!   Non-minimal is final; a minimal packet stays "unsure".
//! * At the second router of the source group (an unsure packet whose minimal path began with a
//!   local hop, so this router owns the global link): the same decision again, with the same
//!   intermediate router and the same VC sets. Non-minimal now: the packet heads for the
//!   intermediate group on VC1, possibly through a third source-group router. Minimal: it
//!   takes the global link on VC3. A minimal path takes at most one local hop in the source
//!   group, so there is at most one re-evaluation.
//!
//! VCs (5): VC0 minimal first hop; VC1 non-minimal in the source group including the global
//! hop out; VC2 the local hop to the intermediate router; VC3 from the intermediate router to
//! the destination group, and the global hop of a packet confirmed minimal at the second
//! router; VC4 the destination group. At most 7 router hops (L L G L L G L when the second
//! router diverts through a third one).
//!
//! Options: `routing.intermediate` and `routing.intra_group` as for UGALn (defaults are the
//! reference's). Not offered: drawing a new intermediate at the re-evaluation (Jiang's older
//! BookSim branch; the reference and Jiang's `SRP_IAR` branch keep the first one).

use super::adaptive::{draw_intermediate, reference_decision, route_intra_group, AdaptiveParams};
use super::paths::port_to_group;
use super::valiant::{hdr, hdr_mut, Layout, ValiantHeader, TO_DESTINATION, TO_INTERMEDIATE_GROUP};
use super::vc::PhaseVcs;
use super::{Ctx, Hop, NoMsg, Rng, RouterView, Routing, VcCounts};
use crate::network::Packet;
use crate::topology::Topology;

pub(super) const LAYOUT: Layout =
    Layout { to_router: true, vc: PhaseVcs { to_group: 1, to_inter_router: 2, to_destination: 3, destination: 4 } };
/// VC of a minimal first hop that may still be re-evaluated.
const VC_UNSURE: u8 = 0;
/// Per-VC sets of the reference's `adp_select_port` calls, at both decision points.
pub(super) const VC_MIN: u8 = 0;
pub(super) const VC_NONMIN: u8 = 1;
/// Phase of a packet routed minimally at its source router and not yet confirmed; distinct
/// from the Valiant phases of [`Layout`].
pub(super) const UNSURE_MINIMAL: u8 = 3;

pub struct Par {
    params: AdaptiveParams,
}

impl Par {
    pub fn new(params: AdaptiveParams) -> Par {
        Par { params }
    }

    fn decide(&self, view: &RouterView, min_port: u16, nm_port: u16) -> bool {
        reference_decision(view, min_port, nm_port, VC_MIN, VC_NONMIN, self.params.adaptive_threshold)
    }
}

/// The decision at the source router, with `nonminimal(view, min_port, nm_port)` as the rule
/// (PAR's, or IMB's biased one): non-minimal is final, a minimal packet keeps its intermediate
/// and stays unsure.
pub(super) fn first_decision(
    params: &AdaptiveParams,
    view: &RouterView,
    pkt: &mut Packet,
    rng: &mut Rng,
    nonminimal: impl Fn(&RouterView, u16, u16) -> bool,
) -> Hop {
    let topo = view.topo;
    let dst_group = topo.group_of(pkt.dst_router);
    hdr_mut(pkt).phase = TO_DESTINATION;
    if view.group == dst_group {
        let mode = params.intra_group;
        return route_intra_group(view, pkt, mode, LAYOUT.vc.to_group, LAYOUT.vc.destination, rng, |m, n| {
            nonminimal(view, m, n)
        });
    }
    let min_port = port_to_group(view, dst_group, rng);
    if let Some(ir) = draw_intermediate(view, params.intermediate, view.group, dst_group, rng) {
        let nm_port = port_to_group(view, topo.group_of(ir), rng);
        if nonminimal(view, min_port, nm_port) {
            LAYOUT.start_valiant(topo, pkt, ir);
            return Hop { port: nm_port, vc: LAYOUT.vc.to_group };
        }
        // Keep the intermediate for the second decision.
        let h = hdr_mut(pkt);
        h.inter_router = ir;
        h.inter_group = topo.group_of(ir);
        h.phase = UNSURE_MINIMAL;
    }
    Hop { port: min_port, vc: VC_UNSURE }
}

/// At the second source-group router of a packet still minimal, the same rule again.
pub(super) fn second_decision(
    view: &RouterView,
    pkt: &mut Packet,
    rng: &mut Rng,
    nonminimal: impl Fn(&RouterView, u16, u16) -> bool,
) -> Hop {
    let dst_group = view.topo.group_of(pkt.dst_router);
    let min_port = port_to_group(view, dst_group, rng);
    let nm_port = port_to_group(view, hdr(pkt).inter_group, rng);
    if nonminimal(view, min_port, nm_port) {
        hdr_mut(pkt).phase = TO_INTERMEDIATE_GROUP;
        pkt.nonminimal = true;
        return Hop { port: nm_port, vc: LAYOUT.vc.to_group };
    }
    hdr_mut(pkt).phase = TO_DESTINATION;
    Hop { port: min_port, vc: LAYOUT.vc.to_destination }
}

/// Whether `pkt`, routed at `view` after its source router, is a minimal packet still unsure
/// at the second router of its source group (its minimal first hop was local: a global one
/// ends in the destination group).
pub(super) fn at_second_decision(view: &RouterView, pkt: &Packet) -> bool {
    hdr(pkt).phase == UNSURE_MINIMAL && view.group != view.topo.group_of(pkt.dst_router)
}

impl Routing for Par {
    type Header = ValiantHeader;
    type RouterState = ();
    type Msg = NoMsg;

    fn vcs(&self) -> VcCounts {
        LAYOUT.vcs()
    }

    fn max_hops(&self) -> u32 {
        7
    }

    fn router_state(&self, _topo: &Topology, _router: u32) {}

    fn route(&self, cx: &mut Ctx<'_, Self>, pkt: &mut Packet) -> Hop {
        let (view, rng) = (&cx.view, &mut *cx.rng);
        let rule = |v: &RouterView, m: u16, n: u16| self.decide(v, m, n);
        if view.is_source_router() && pkt.hops == 0 {
            return first_decision(&self.params, view, pkt, rng, rule);
        }
        if at_second_decision(view, pkt) {
            return second_decision(view, pkt, rng, rule);
        }
        LAYOUT.next_hop(view, pkt, rng)
    }

    /// After the source router, except for the second decision of a packet still unsure: the
    /// Layout's hop toward the destination group (its unsure phase is none of the Valiant ones,
    /// so nothing was written to the packet).
    #[inline(always)]
    fn route_without_view(&self, topo: &Topology, router: u32, in_port: u16, pkt: &mut Packet) -> Option<Hop> {
        let hop = LAYOUT.table_hop_after_source(topo, router, in_port, pkt)?;
        if hdr(pkt).phase == UNSURE_MINIMAL && hop.vc == LAYOUT.vc.to_destination {
            return None;
        }
        Some(hop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::harness::{walk_pkt, Net};
    use crate::topology::LinkClass;

    /// dfly(4,8,4,33). From node 0 (router 0 of group 0) to group 5 the minimal path is the
    /// local hop to router 1 (global ports to groups 5-8), then its global link.
    fn net() -> Net {
        Net::new(4, 8, 4, 1)
    }
    const FAR: u32 = 5 * 32 + 6;

    #[test]
    fn source_decision_is_the_ugal_rule() {
        let mut net = net();
        let alg = Par::new(AdaptiveParams::default());
        for seed in 0..100 {
            assert!(!walk_pkt(&net, &alg, 0, FAR, seed).1.nonminimal);
        }
        // Congest the minimal local port at the source router: diverts at the source.
        let min_port = net.topo.local_port(0, 1);
        net.set_used_credits(0, min_port, 0, 6);
        let mut at_source = 0;
        for seed in 0..300 {
            let (path, pkt) = walk_pkt(&net, &alg, 0, FAR, seed);
            if path[0].port != min_port {
                assert!(pkt.nonminimal && path[0].vc == 1);
                at_source += 1;
            }
        }
        assert!(at_source > 200, "{at_source}");
    }

    #[test]
    fn second_router_switches_to_nonminimal_when_its_global_link_is_congested() {
        // Router 1 of group 0 (router id 1) owns the link to group 5. Congest it there: the
        // source router sees nothing and goes minimal; router 1 re-decides and diverts unless
        // the intermediate is behind the same global port (only group 5 itself, excluded).
        let mut net = net();
        let gw_port = (0..4u16)
            .map(|k| net.topo.first_global_port() + k)
            .find(|&p| net.topo.global_port_group(1, p) == 5)
            .unwrap();
        net.set_used_credits(1, gw_port, 0, 8);
        let alg = Par::new(AdaptiveParams::default());
        for seed in 0..300 {
            let (path, pkt) = walk_pkt(&net, &alg, 0, FAR, seed);
            assert_eq!((path[0].router, path[0].vc), (0, VC_UNSURE), "decided minimal at the source");
            assert!(pkt.nonminimal, "seed {seed}: {path:?}");
            assert_eq!((path[1].router, path[1].vc), (1, 1));
            assert_ne!(path[1].port, gw_port);
            assert!(path.len() <= 7);
            let vcs: Vec<u8> = path.iter().map(|h| h.vc).collect();
            assert!(vcs.windows(2).all(|w| w[0] <= w[1]), "{vcs:?}");
        }
    }

    #[test]
    fn second_router_stays_minimal_below_the_threshold() {
        // Global link at router 1 holds 6 flits; every other port of router 1 holds 3, so
        // q_min = 6 <= floor(2·3): the packet keeps the global link, on VC3.
        let mut net = net();
        let gw_port = (0..4u16)
            .map(|k| net.topo.first_global_port() + k)
            .find(|&p| net.topo.global_port_group(1, p) == 5)
            .unwrap();
        for port in net.topo.first_local_port()..net.topo.radix as u16 {
            net.set_used_credits(1, port, 0, if port == gw_port { 6 } else { 3 });
        }
        let alg = Par::new(AdaptiveParams::default());
        for seed in 0..300 {
            let (path, pkt) = walk_pkt(&net, &alg, 0, FAR, seed);
            assert!(!pkt.nonminimal, "seed {seed}");
            let vcs: Vec<u8> = path.iter().map(|h| h.vc).collect();
            assert_eq!(vcs[..2], [0, 3]);
            assert_eq!(path[1].port, gw_port);
            assert!(vcs[2..].iter().all(|&v| v == 4));
        }
        // One more flit tips it over for every intermediate not reached through the same port.
        net.set_used_credits(1, gw_port, 0, 7);
        let diverted = (0..300).filter(|&s| walk_pkt(&net, &alg, 0, FAR, s).1.nonminimal).count();
        assert_eq!(diverted, 300);
    }

    #[test]
    fn packets_at_a_gateway_source_are_never_re_evaluated() {
        // Node 0 reaches group 2 over router 0's own global link: no second router.
        let net = net();
        let alg = Par::new(AdaptiveParams::default());
        let (path, pkt) = walk_pkt(&net, &alg, 0, 2 * 32 + 5, 3);
        assert!(!pkt.nonminimal);
        assert_eq!(net.topo.class_of_port(path[0].port), LinkClass::Global);
        assert_eq!(path[0].vc, 0);
        assert!(path[1..].iter().all(|h| h.vc == 4));
    }

    #[test]
    fn all_paths_respect_seven_hops_and_increasing_vcs() {
        let mut net = net();
        for r in 0..16u32 {
            for port in net.topo.first_local_port()..net.topo.radix as u16 {
                if (r + port as u32).is_multiple_of(3) {
                    net.set_used_credits(r, port, (port % 2) as usize, 7);
                }
            }
        }
        let alg = Par::new(AdaptiveParams::default());
        let mut seen_seven = false;
        let mut second = 0;
        for (i, (src, dst)) in net.sample_pairs(4000, 11).into_iter().enumerate() {
            let (path, pkt) = walk_pkt(&net, &alg, src % 64, dst, i as u64);
            assert!(path.len() <= 7);
            seen_seven |= path.len() == 7;
            let vcs: Vec<u8> = path.iter().map(|h| h.vc).collect();
            assert!(vcs.windows(2).all(|w| w[0] <= w[1]), "{vcs:?}");
            assert!(vcs.iter().all(|&v| v < 5));
            second += (pkt.nonminimal && path.len() > 1 && path[0].vc == 0) as u32;
        }
        assert!(second > 0, "some packets diverted at the second router");
        assert!(seen_seven, "the L L G L L G L path occurs");
    }
}
