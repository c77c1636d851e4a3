//! IMB — increasingly minimal bias: a named, documented approximation of the production
//! adaptive routing of Cray/HPE Dragonflies (Aries; Slingshot's routing is proprietary). It
//! follows the public patent "Increasingly minimal bias routing" (Bataineh, Court, Roweth,
//! Cray Inc., US 9,577,918, 2017; continuations US 10,142,235 and US 10,757,022): every router
//! on the way picks the lighter of its candidate ports after adding a bias from a per-hop
//! table; the bias at injection is neutral or favours non-minimal paths (diversity at the
//! source) and favours minimal paths more at each later hop.
//!
//! HPE's tables, candidate sets and load estimates are not public. dflab's choices, each a
//! parameter or a stated assumption:
//! * Candidates are PAR's: the minimal port and the port toward a Valiant intermediate router
//!   drawn at the source (`routing.intermediate`, outside the source and destination groups by
//!   default), kept for the later decisions.
//! * Load: the whole port's occupancy (output-buffer flits plus used credits over its VCs), or
//!   the two VCs' when both candidates leave by the same port (the UGAL family's
//!   `candidate_occupancy`).
//! * Decision k takes the non-minimal candidate iff `q_nm + b_k < q_min` (ties minimal), with
//!   `b_k = routing.bias_schedule[k]` packets of the packet's flits; negative favours the
//!   non-minimal path. k = 0 at the source router. k = 1 at the second router of the source
//!   group, for every packet that reached it by a local hop from its source router: one still
//!   minimal decides again as in PAR (same intermediate); one that took the non-minimal
//!   candidate at k = 0 may turn back to the minimal path from here (its detour so far is one
//!   local hop, as Aries' non-minimal first hop). k = 2 at the entry router of the intermediate
//!   group, for a packet on its way to the intermediate router: its "minimal" candidate is to
//!   turn toward the destination group now, leaving out the rest of the detour, the other to go
//!   on to the intermediate router.
//! * Default schedule `[0, 1, 2]` packets (assumed): neutral at injection (the patent's first
//!   claim variant), then increasingly minimal.
//! * VCs: PAR's five (a packet that leaves its detour at k = 2 goes on on the to-destination VC),
//!   so at most 7 router hops.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::adaptive::{candidate_occupancy, AdaptiveParams};
use super::par::{at_second_decision, first_decision, second_decision, LAYOUT, VC_MIN, VC_NONMIN};
use super::paths::{port_to_group, port_to_router_id};
use super::valiant::{hdr, hdr_mut, TO_DESTINATION, TO_INTERMEDIATE_GROUP, TO_INTERMEDIATE_ROUTER};
use super::{Ctx, Hop, NoMsg, RouterView, Routing, VcCounts};
use crate::config::{Intermediate, IntraGroup, RoutingParams};
use crate::error::{Error, Result};
use crate::network::Packet;
use crate::topology::Topology;

/// The parameters of IMB.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ImbParams {
    /// The bias added to the non-minimal candidate's load at the source router, at the second
    /// router of the source group and at the entry router of the intermediate group, in packets
    /// (positive favours the minimal path). Increasingly minimal: each at least the one before.
    pub bias_schedule: [f64; 3],
    /// How the Valiant intermediate router is drawn (as for UGALn and PAR).
    pub intermediate: Intermediate,
    /// Intra-group packets: the direct hop, or the decision at k = 0 against a detour.
    pub intra_group: IntraGroup,
}

impl Default for ImbParams {
    fn default() -> ImbParams {
        let a = AdaptiveParams::default();
        ImbParams { bias_schedule: [0.0, 1.0, 2.0], intermediate: a.intermediate, intra_group: a.intra_group }
    }
}

impl RoutingParams for ImbParams {
    fn check(&self) -> Result<()> {
        let b = self.bias_schedule;
        if b.iter().any(|x| !x.is_finite() || x.abs() > 1.0e6) {
            return Err(Error::config(
                "routing.bias_schedule",
                format!("{b:?}: allowed: three finite numbers of packets, |b| <= 10^6"),
            ));
        }
        if !(b[0] <= b[1] && b[1] <= b[2]) {
            return Err(Error::config(
                "routing.bias_schedule",
                format!("{b:?} is not increasingly minimal; allowed: b0 <= b1 <= b2"),
            ));
        }
        Ok(())
    }
}

pub struct Imb {
    params: ImbParams,
    /// `bias_schedule` in flits.
    bias: [f64; 3],
}

impl Imb {
    pub fn new(params: ImbParams, packet_flits: u32) -> Imb {
        Imb { params, bias: params.bias_schedule.map(|b| b * packet_flits as f64) }
    }

    /// Decision `k`: whether the non-minimal candidate is lighter after its bias.
    fn nonminimal(&self, view: &RouterView, min_port: u16, nm_port: u16, k: usize) -> bool {
        let (q_min, q_nm) = candidate_occupancy(view, min_port, nm_port, VC_MIN, VC_NONMIN);
        (q_nm as f64) + self.bias[k] < q_min as f64
    }

    fn adaptive(&self) -> AdaptiveParams {
        AdaptiveParams {
            intermediate: self.params.intermediate,
            intra_group: self.params.intra_group,
            ..AdaptiveParams::default()
        }
    }

    /// Whether `pkt`, non-minimal since its source router, is at the second router of its
    /// source group (one local hop so far).
    fn at_source_group_detour(topo: &Topology, router: u32, pkt: &Packet) -> bool {
        pkt.hops == 1
            && hdr(pkt).phase == TO_INTERMEDIATE_GROUP
            && topo.group_of(router) == topo.group_of(topo.router_of_node(pkt.src))
            && topo.group_of(router) != topo.group_of(pkt.dst_router)
    }

    /// Decision 1 for a packet non-minimal since its source: back to the minimal path now, or
    /// on toward the intermediate group.
    fn turn_back_decision(&self, view: &RouterView, pkt: &mut Packet, rng: &mut super::Rng) -> Hop {
        let dst_group = view.topo.group_of(pkt.dst_router);
        let min_port = port_to_group(view, dst_group, rng);
        let nm_port = port_to_group(view, hdr(pkt).inter_group, rng);
        if self.nonminimal(view, min_port, nm_port, 1) {
            return Hop { port: nm_port, vc: LAYOUT.vc.to_group };
        }
        // (Still counted non-minimal: it took a local hop off its minimal path.)
        hdr_mut(pkt).phase = TO_DESTINATION;
        Hop { port: min_port, vc: LAYOUT.vc.to_destination }
    }

    /// Whether `pkt` at `router` is at the entry of its intermediate group, short of its
    /// intermediate router.
    fn at_intermediate_entry(topo: &Topology, router: u32, pkt: &Packet) -> bool {
        let h = hdr(pkt);
        h.phase == TO_INTERMEDIATE_GROUP && router != h.inter_router && topo.group_of(router) == h.inter_group
    }

    /// Decision 2: leave the detour for the destination group now, or go on to the
    /// intermediate router.
    fn third_decision(&self, view: &RouterView, pkt: &mut Packet, rng: &mut super::Rng) -> Hop {
        let dst_group = view.topo.group_of(pkt.dst_router);
        let min_port = port_to_group(view, dst_group, rng);
        let nm_port = port_to_router_id(view, hdr(pkt).inter_router);
        if self.nonminimal(view, min_port, nm_port, 2) {
            hdr_mut(pkt).phase = TO_INTERMEDIATE_ROUTER;
            return Hop { port: nm_port, vc: LAYOUT.vc.to_inter_router };
        }
        hdr_mut(pkt).phase = TO_DESTINATION;
        Hop { port: min_port, vc: LAYOUT.vc.to_destination }
    }
}

impl Routing for Imb {
    type Header = super::valiant::ValiantHeader;
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
        if view.is_source_router() && pkt.hops == 0 {
            return first_decision(&self.adaptive(), view, pkt, rng, |v, m, n| self.nonminimal(v, m, n, 0));
        }
        if at_second_decision(view, pkt) {
            return second_decision(view, pkt, rng, |v, m, n| self.nonminimal(v, m, n, 1));
        }
        if Self::at_source_group_detour(view.topo, view.router, pkt) {
            return self.turn_back_decision(view, pkt, rng);
        }
        if Self::at_intermediate_entry(view.topo, view.router, pkt) {
            return self.third_decision(view, pkt, rng);
        }
        LAYOUT.next_hop(view, pkt, rng)
    }

    /// The Layout's hop where no decision is taken: not at the source router, not for a packet
    /// still unsure at the second router, not at the intermediate group's entry.
    #[inline(always)]
    fn route_without_view(&self, topo: &Topology, router: u32, in_port: u16, pkt: &mut Packet) -> Option<Hop> {
        if Self::at_intermediate_entry(topo, router, pkt) || Self::at_source_group_detour(topo, router, pkt) {
            return None;
        }
        let hop = LAYOUT.table_hop_after_source(topo, router, in_port, pkt)?;
        if hdr(pkt).phase == super::par::UNSURE_MINIMAL && hop.vc == LAYOUT.vc.to_destination {
            return None;
        }
        Some(hop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::harness::{walk_pkt, Net};
    use crate::routing::valiant::ValiantHeader;

    const FLITS: u32 = 4;
    /// dfly(4,8,4,33): node 0 (router 0 of group 0) to group 5, whose link from group 0 is
    /// router 1's: the minimal path starts with the local hop to router 1.
    const FAR: u32 = 5 * 32 + 6;

    fn imb(bias_schedule: [f64; 3]) -> Imb {
        Imb::new(ImbParams { bias_schedule, ..ImbParams::default() }, FLITS)
    }

    #[test]
    fn the_source_takes_the_lighter_candidate_after_its_bias() {
        // b0 = 1 packet = 4 flits on the non-minimal candidate: the minimal port must hold more
        // than 4 flits (the non-minimal one is empty) for the packet to leave it.
        let mut net = Net::new(4, 8, 4, 1);
        let min_port = net.topo.local_port(0, 1);
        let alg = imb([1.0, 1.0, 2.0]);
        for (flits, misrouted) in [(0, 0), (4, 0), (5, 100)] {
            net.set_used_credits(0, min_port, 0, flits);
            let n = (0..100).filter(|&s| walk_pkt(&net, &alg, 0, FAR, s).1.nonminimal).count();
            // The candidates behind the same first port compare on their own VCs: none here.
            assert_eq!(n, misrouted, "{flits} flits");
        }
        // Neutral at injection (the default): any queue on the minimal port tips it.
        net.set_used_credits(0, min_port, 0, 1);
        let n = (0..100).filter(|&s| walk_pkt(&net, &imb([0.0, 1.0, 2.0]), 0, FAR, s).1.nonminimal).count();
        assert_eq!(n, 100);
        // A negative bias favours the non-minimal path even on an empty network.
        net.set_used_credits(0, min_port, 0, 0);
        let n = (0..100).filter(|&s| walk_pkt(&net, &imb([-1.0, 1.0, 2.0]), 0, FAR, s).1.nonminimal).count();
        assert_eq!(n, 100);
    }

    #[test]
    fn the_second_router_weighs_its_global_link_with_the_larger_bias() {
        // Router 1 owns the link to group 5. With b1 = 2 packets (8 flits) a packet minimal at
        // the source stays minimal at router 1 up to 8 flits on that link and leaves at 9.
        let mut net = Net::new(4, 8, 4, 1);
        let first = net.topo.first_global_port();
        let gw = (0..4u16).map(|k| first + k).find(|&p| net.topo.global_port_group(1, p) == 5).unwrap();
        let alg = imb([0.0, 2.0, 2.0]);
        for (flits, misrouted) in [(8, 0), (9, 100)] {
            net.set_used_credits(1, gw, 0, flits);
            let mut n = 0;
            for s in 0..100 {
                let (path, pkt) = walk_pkt(&net, &alg, 0, FAR, s);
                assert_eq!(path[0].vc, 0, "minimal at the source");
                n += pkt.nonminimal as usize;
            }
            assert_eq!(n, misrouted, "{flits} flits");
        }
    }

    #[test]
    fn a_detour_begun_at_the_source_turns_back_at_the_second_router_under_a_minimal_bias() {
        // b0 = -4 packets sends every packet off its minimal path at the source. Routers 2-7 of
        // group 0 hold 10 flits on every port, so at the second router both candidates weigh
        // 10: with b1 = 1 packet the packet turns back to its minimal path (on the
        // to-destination VC), with b1 = -3 it goes on toward its intermediate group.
        let mut net = Net::new(4, 8, 4, 1);
        for r in 2..8u32 {
            for port in net.topo.first_local_port()..net.topo.radix as u16 {
                net.set_used_credits(r, port, 0, 10);
            }
        }
        for (schedule, turns_back) in [([-4.0, 1.0, 2.0], true), ([-4.0, -3.0, 2.0], false)] {
            let alg = imb(schedule);
            let mut seen = 0;
            for s in 0..200 {
                let (path, pkt) = walk_pkt(&net, &alg, 0, FAR, s);
                assert!(pkt.nonminimal);
                let second = path[1].router;
                if path[0].vc != LAYOUT.vc.to_group || !(2..8).contains(&second) {
                    continue; // a detour over router 0's own global link, or through router 1
                }
                seen += 1;
                let leaves_for_group_5 = path[1].vc == LAYOUT.vc.to_destination;
                assert_eq!(leaves_for_group_5, turns_back, "{schedule:?} seed {s}: {path:?}");
                if turns_back {
                    // Minimal from here: at most a local hop to the gateway, the global link, one
                    // local hop: 5 hops in all.
                    assert!(path.len() <= 5, "{path:?}");
                }
            }
            assert!(seen > 50, "{seen}");
        }
    }

    #[test]
    fn the_intermediate_group_entry_leaves_the_detour_unless_the_way_on_is_much_lighter() {
        // A packet to group 5 on its detour through router 6 of group 9 enters group 9 at its
        // router 2. There decision 2 (b2 = 2 packets = 8 flits) compares the port toward group 5
        // with the local port toward router 6.
        let mut net = Net::new(4, 8, 4, 1);
        let topo = net.topo.clone();
        let (entry, ir) = (9 * 8 + 2, 9 * 8 + 6);
        let dst_group =
            (1..33u32).find(|&d| d != 9 && topo.gateways(9, d)[0].0 != 6 && topo.gateways(9, d)[0].0 != 2).unwrap();
        let dst = dst_group * 32 + 5;
        let (gw, k) = topo.gateways(9, dst_group)[0];
        let min_port = topo.local_port(2, gw as u32);
        let nm_port = topo.local_port(2, 6);
        assert_ne!(topo.class_of_port(min_port), crate::topology::LinkClass::Global, "gateway {gw} port {k}");
        let alg = imb([0.0, 1.0, 2.0]);
        let packet = |net: &Net| {
            let mut pkt = net.packet_for::<Imb>(0, dst);
            *pkt.hdr_mut::<ValiantHeader>() =
                ValiantHeader { inter_router: ir, inter_group: 9, phase: TO_INTERMEDIATE_GROUP, _pad: [0; 3] };
            pkt.nonminimal = true;
            pkt.hops = 2;
            pkt
        };
        let in_port = topo.first_global_port();
        for (q_min, q_nm, leaves) in [(0, 0, true), (8, 0, true), (9, 0, false), (20, 12, true), (21, 12, false)] {
            net.set_used_credits(entry, min_port, 0, q_min);
            net.set_used_credits(entry, nm_port, 0, q_nm);
            let mut pkt = packet(&net);
            assert_eq!(alg.route_without_view(&topo, entry, in_port, &mut pkt.clone()), None);
            let hop = net.route_once(&alg, entry, in_port, &mut pkt, 1);
            if leaves {
                assert_eq!((hop.port, hop.vc, hdr(&pkt).phase), (min_port, LAYOUT.vc.to_destination, TO_DESTINATION));
            } else {
                assert_eq!(
                    (hop.port, hop.vc, hdr(&pkt).phase),
                    (nm_port, LAYOUT.vc.to_inter_router, TO_INTERMEDIATE_ROUTER)
                );
            }
        }
    }

    #[test]
    fn every_path_keeps_seven_hops_and_increasing_vcs() {
        let mut net = Net::new(4, 8, 4, 1);
        for r in 0..net.topo.routers() as u32 {
            for port in net.topo.first_local_port()..net.topo.radix as u16 {
                if (r * 7 + port as u32).is_multiple_of(3) {
                    net.set_used_credits(r, port, (port % 3) as usize, 9);
                }
            }
        }
        let alg = imb([-0.5, 0.5, 1.0]);
        let (mut nonminimal, mut left_detour) = (0, 0);
        for (i, (src, dst)) in net.sample_pairs(4000, 5).into_iter().enumerate() {
            let (path, pkt) = walk_pkt(&net, &alg, src, dst, i as u64);
            assert!(path.len() <= 7);
            let vcs: Vec<u8> = path.iter().map(|h| h.vc).collect();
            assert!(vcs.windows(2).all(|w| w[0] <= w[1]), "{vcs:?}");
            assert!(vcs.iter().all(|&v| v < 5));
            nonminimal += pkt.nonminimal as u32;
            left_detour += (pkt.nonminimal && !path.iter().any(|h| h.router == hdr(&pkt).inter_router)) as u32;
        }
        assert!(nonminimal > 100, "{nonminimal}");
        assert!(left_detour > 0, "some detours end at the intermediate group's entry");
    }

    #[test]
    fn a_schedule_that_is_not_increasingly_minimal_is_refused() {
        let bad = ImbParams { bias_schedule: [1.0, 0.0, 2.0], ..ImbParams::default() };
        let e = bad.check().unwrap_err().to_string();
        assert!(e.starts_with("routing.bias_schedule"), "{e}");
        let nan = ImbParams { bias_schedule: [0.0, f64::NAN, 2.0], ..ImbParams::default() };
        assert!(nan.check().is_err());
        assert!(ImbParams::default().check().is_ok());
    }
}
