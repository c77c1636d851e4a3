//! UGAL-G-path — UGAL with global information in the path-sum form. **ORACLE**: it reads the
//! queues of every router on its candidate paths instantly, which no router can do; it is the
//! idealised reference the ICS'24 authors' group uses (Xin Yuan's SC'19 T-UGAL BookSim code,
//! `make_UGAL_G_path_choice` in `dragonfly_full.cpp`; baseline-algorithms.md §1.1), beside
//! `UGAL-G`, SST/macro's global-link form (`ugal_global.rs`). Decided once at the source router:
//!
//! * the cost of a candidate path is the sum, over its router-to-router hops, of the occupancy of
//!   the output port it takes at each router (output-buffer flits + used credits, all VCs; with
//!   the BookSim timing, BookSim's `GetUsedCredit`);
//! * one minimal and one Valiant candidate (the code hard-codes one of each); the Valiant one
//!   goes through a router drawn by `routing.intermediate`;
//! * minimal iff `Σq_min <= Σq_vlb` (no hop weighting, ties minimal).
//!
//! With several links per group pair a candidate segment between two groups is costed through
//! each of their gateways and the cheapest is taken (the code's topology has one); the first hop
//! heads for the chosen gateway, and later routers choose their own minimal ports (the Valiant
//! layout's), which can be another gateway. Path and VCs: UGALn's (Valiant to a router, 4 VCs,
//! at most 6 hops). Intra-group packets go minimally.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::adaptive::{draw_intermediate, route_intra_group};
use super::paths::port_to_gateway;
use super::valiant::{hdr_mut, Layout, ValiantHeader, LAYOUT_N, TO_DESTINATION};
use super::{Ctx, Hooks, Hop, NoMsg, OracleView, Rng, RouterView, Routing, VcCounts};
use crate::config::{Intermediate, IntraGroup, RoutingParams};
use crate::network::Packet;
use crate::topology::Topology;

const LAYOUT: Layout = LAYOUT_N;

/// The parameters of UGAL-G-path.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct UgalGPathParams {
    /// How the Valiant candidate's intermediate router is drawn.
    pub intermediate: Intermediate,
}

impl RoutingParams for UgalGPathParams {}

pub struct UgalGlobalPath {
    intermediate: Intermediate,
}

/// The cost of the minimal segment from router `from` to router `to`, through gateway `gw` of
/// `from`'s group when the groups differ, and that gateway.
fn segment(oracle: &OracleView, topo: &Topology, from: u32, to: u32, gw: Option<(u16, u16)>) -> u32 {
    if from == to {
        return 0;
    }
    let local = |r: u32, t: u32| oracle.port_occupancy(r, topo.local_port_to(r, t, topo.group_of(r)));
    let Some((r, k)) = gw else {
        return local(from, to); // the same group: one local hop
    };
    let gw_router = topo.group_of(from) * topo.a as u32 + r as u32;
    let port = topo.first_global_port() + k;
    let landing = topo.peer(gw_router, port).expect("a gateway's link is connected").0;
    let mut cost = oracle.port_occupancy(gw_router, port);
    if from != gw_router {
        cost += local(from, gw_router);
    }
    if landing != to {
        cost += local(landing, to);
    }
    cost
}

/// The cheapest minimal segment from `from` to `to` over the gateways between their groups
/// (the first of equals), with its gateway (None within a group).
fn cheapest(oracle: &OracleView, topo: &Topology, from: u32, to: u32) -> (u32, Option<(u16, u16)>) {
    let (gf, gt) = (topo.group_of(from), topo.group_of(to));
    if gf == gt {
        return (segment(oracle, topo, from, to, None), None);
    }
    let mut best = (u32::MAX, None);
    for &gw in topo.gateways(gf, gt) {
        let cost = segment(oracle, topo, from, to, Some(gw));
        if cost < best.0 {
            best = (cost, Some(gw));
        }
    }
    best
}

impl UgalGlobalPath {
    pub fn new(params: UgalGPathParams) -> UgalGlobalPath {
        UgalGlobalPath { intermediate: params.intermediate }
    }

    fn decide_at_source(&self, view: &RouterView, oracle: &OracleView, pkt: &mut Packet, rng: &mut Rng) -> Hop {
        let topo = view.topo;
        let (src_group, dst_group) = (view.group, topo.group_of(pkt.dst_router));
        hdr_mut(pkt).phase = TO_DESTINATION;
        if src_group == dst_group {
            let (to_group, destination) = (LAYOUT.vc.to_group, LAYOUT.vc.destination);
            return route_intra_group(view, pkt, IntraGroup::Minimal, to_group, destination, rng, |_, _| false);
        }
        let (min_cost, min_gw) = cheapest(oracle, topo, view.router, pkt.dst_router);
        let min_gw = min_gw.expect("another group is reached through a gateway");
        if let Some(ir) = draw_intermediate(view, self.intermediate, src_group, dst_group, rng) {
            let (to_ir, ir_gw) = cheapest(oracle, topo, view.router, ir);
            let (from_ir, _) = cheapest(oracle, topo, ir, pkt.dst_router);
            if to_ir + from_ir < min_cost {
                LAYOUT.start_valiant(topo, pkt, ir);
                let gw = ir_gw.expect("the intermediate router is in another group");
                return Hop { port: port_to_gateway(view, gw), vc: LAYOUT.vc.to_group };
            }
        }
        Hop { port: port_to_gateway(view, min_gw), vc: LAYOUT.vc.to_destination }
    }
}

impl Routing for UgalGlobalPath {
    type Header = ValiantHeader;
    type RouterState = ();
    type Msg = NoMsg;
    const HOOKS: Hooks = Hooks::ORACLE;

    fn vcs(&self) -> VcCounts {
        LAYOUT.vcs()
    }

    fn max_hops(&self) -> u32 {
        LAYOUT.max_hops()
    }

    fn router_state(&self, _topo: &Topology, _router: u32) {}

    fn route(&self, cx: &mut Ctx<'_, Self>, pkt: &mut Packet) -> Hop {
        if cx.view.is_source_router() && pkt.hops == 0 {
            let oracle = cx.oracle();
            return self.decide_at_source(&cx.view, &oracle, pkt, cx.rng);
        }
        LAYOUT.next_hop(&cx.view, pkt, cx.rng)
    }

    #[inline(always)]
    fn route_without_view(&self, topo: &Topology, router: u32, in_port: u16, pkt: &mut Packet) -> Option<Hop> {
        LAYOUT.table_hop_after_source(topo, router, in_port, pkt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::harness::{walk_pkt, Net};

    /// A node on router 6 of group 5: from node 0 the minimal path is router 0 → router 1 (its
    /// link to group 5) → the landing router of group 5 → router 6.
    const FAR: u32 = 5 * 32 + 6 * 4;

    fn alg() -> UgalGlobalPath {
        UgalGlobalPath::new(UgalGPathParams::default())
    }

    /// The minimal path's routers and ports from router 0 to FAR's router.
    fn minimal_hops(net: &Net) -> Vec<(u32, u16)> {
        walk_pkt(net, &alg(), 0, FAR, 1).0.iter().map(|s| (s.router, s.port)).collect()
    }

    /// Congestion on any hop of the minimal path counts, the last local hop in the destination
    /// group included (UGAL-G's global-link form and UGAL-L see none of it): most packets
    /// divert, and none onto a path through the congested port (its cost would tie).
    #[test]
    fn the_cost_is_the_sum_over_every_hop_of_the_path() {
        let empty = Net::new(4, 8, 4, 1);
        let hops = minimal_hops(&empty);
        assert_eq!(hops.len(), 3, "{hops:?}");
        for seed in 0..50 {
            assert!(!walk_pkt(&empty, &alg(), 0, FAR, seed).1.nonminimal);
        }
        for &(router, port) in &hops {
            let mut net = Net::new(4, 8, 4, 1);
            net.set_used_credits(router, port, 1, 6);
            let mut nonmin = 0;
            for seed in 0..200 {
                let (path, pkt) = walk_pkt(&net, &alg(), 0, FAR, seed);
                if pkt.nonminimal {
                    assert!(path.iter().all(|s| (s.router, s.port) != (router, port)), "seed {seed}: {path:?}");
                    nonmin += 1;
                }
            }
            assert!(nonmin > 140, "6 flits at router {router} port {port}: {nonmin} of 200 diverted");
        }
    }

    /// Minimal iff its sum is no larger than the Valiant candidate's: with 2 flits on each hop
    /// of the minimal path (6) and 3 on every other port, no Valiant path (2 hops or more) is
    /// cheaper; with 17 on the minimal path, the Valiant paths costing under 17 win (5 hops or
    /// fewer, 15 and less) and no other.
    #[test]
    fn the_cheaper_sum_wins_and_ties_are_minimal() {
        let mut net = Net::new(4, 8, 4, 1);
        let hops = minimal_hops(&net);
        let mut q = std::collections::HashMap::new();
        for r in 0..net.topo.routers() as u32 {
            for port in net.topo.first_local_port()..net.topo.radix as u16 {
                let flits = if hops.contains(&(r, port)) { 2 } else { 3 };
                net.set_used_credits(r, port, 0, flits);
                q.insert((r, port), flits);
            }
        }
        for seed in 0..200 {
            assert!(!walk_pkt(&net, &alg(), 0, FAR, seed).1.nonminimal, "seed {seed}");
        }
        net.set_used_credits(hops[1].0, hops[1].1, 0, 13);
        q.insert(hops[1], 13);
        let mut nonmin = 0;
        for seed in 0..400 {
            let (path, pkt) = walk_pkt(&net, &alg(), 0, FAR, seed);
            if pkt.nonminimal {
                let cost: u32 = path.iter().map(|s| q[&(s.router, s.port)]).sum();
                assert!(cost < 17, "seed {seed}: a Valiant path of cost {cost} beat 17: {path:?}");
                nonmin += 1;
            }
        }
        assert!(nonmin > 100, "Valiant paths costing under 17: {nonmin} of 400");
    }
}
