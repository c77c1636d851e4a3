//! UGAL-G — UGAL with global information. **ORACLE**: it reads the queues of other routers
//! instantly ([`RouterView::remote_occupancy`]), which no router can do; it is an idealised
//! reference point (Kim et al. ISCA'08), not a realisable routing.
//!
//! Definition implemented: SST/macro's `dragonfly_ugalG` (commit 79bf8c68, `ugal_routing.cc`;
//! baseline-algorithms.md §1.1), decided once at the source router:
//! 1. the load of a global link is the occupancy of its output port at the router that owns it
//!    (output-buffer flits + used credits, all VCs);
//! 2. for every group I other than the source and destination groups,
//!    `cost(I) = least-loaded link (source group → I) + least-loaded link (I → destination)`;
//!    the cheapest I is the candidate (ties drawn uniformly);
//! 3. minimal iff the least-loaded link from the source group to the destination group is no
//!    more loaded than that cost.
//!
//! Only global links count: no local queues, no hop weighting. The first hop heads for the
//! chosen link (this router's own port or the local hop to its owner); later routers choose
//! their own minimal ports, which with one link per group pair is that same link.
//!
//! Path: Valiant to the *group* (as SST/macro), with UGALg's VC layout (VC0 to the intermediate
//! group, VC1 from it and on the minimal path, VC2 in the destination group — so UGAL-G and
//! UGALg differ only in their decision). SST/macro numbers VCs by global hops taken instead;
//! both orders are acyclic. 3 VCs, at most 5 router hops. `routing.intermediate` does not
//! apply (every group is evaluated). With `routing.intra_group = "adaptive"`, an intra-group
//! packet compares the direct local link with a detour through a random third router, the
//! detour's cost being both of its local links.

use rand::Rng as _;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::adaptive::route_intra_group;
use super::paths::port_to_gateway;
use super::valiant::{hdr_mut, Layout, ValiantHeader, LAYOUT_G, TO_DESTINATION, TO_INTERMEDIATE_GROUP};
use super::{Ctx, Hooks, Hop, NoMsg, OracleView, Rng, RouterView, Routing, VcCounts};
use crate::config::{IntraGroup, RoutingParams};
use crate::network::Packet;
use crate::topology::Topology;

const LAYOUT: Layout = LAYOUT_G;

/// The parameters of UGAL-G.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct UgalGParams {
    /// Intra-group packets: direct, or compared with a detour through a third router (both of
    /// its local links counted).
    pub intra_group: IntraGroup,
}

impl RoutingParams for UgalGParams {}

pub struct UgalGlobal {
    intra_group: IntraGroup,
}

/// The least-loaded global link from group `from` to group `to` (the first of equals).
fn least_loaded_link(oracle: &OracleView, topo: &Topology, from: u32, to: u32) -> (u32, (u16, u16)) {
    let mut best = (u32::MAX, (0, 0));
    for &(r, k) in topo.gateways(from, to) {
        let load = oracle.port_occupancy(from * topo.a as u32 + r as u32, topo.first_global_port() + k);
        if load < best.0 {
            best = (load, (r, k));
        }
    }
    best
}

impl UgalGlobal {
    pub fn new(params: UgalGParams) -> UgalGlobal {
        UgalGlobal { intra_group: params.intra_group }
    }

    fn decide_at_source(&self, view: &RouterView, oracle: &OracleView, pkt: &mut Packet, rng: &mut Rng) -> Hop {
        let topo = view.topo;
        let (src_group, dst_group) = (view.group, topo.group_of(pkt.dst_router));
        hdr_mut(pkt).phase = TO_DESTINATION;
        if src_group == dst_group {
            let dst_index = topo.index_in_group(pkt.dst_router);
            let (to_group, destination) = (LAYOUT.vc.to_group, LAYOUT.vc.destination);
            return route_intra_group(view, pkt, self.intra_group, to_group, destination, rng, |m, n| {
                let (mid, _) = topo.peer(view.router, n).expect("local ports are connected");
                let onward = topo.local_port(topo.index_in_group(mid), dst_index);
                view.port_occupancy(n) + oracle.port_occupancy(mid, onward) < view.port_occupancy(m)
            });
        }
        let (direct, direct_link) = least_loaded_link(oracle, topo, src_group, dst_group);
        // The cost of every intermediate group (recomputed when picking among ties: a function
        // of the queues, which do not change during the decision).
        let cost = |i: u32| {
            if i == src_group || i == dst_group {
                u32::MAX
            } else {
                least_loaded_link(oracle, topo, src_group, i).0 + least_loaded_link(oracle, topo, i, dst_group).0
            }
        };
        let groups = topo.g as u32;
        let best = (0..groups).map(cost).min().unwrap_or(u32::MAX);
        if best < direct {
            let ties = (0..groups).filter(|&i| cost(i) == best).count();
            let pick = rng.gen_range(0..ties);
            let inter =
                (0..groups).filter(|&i| cost(i) == best).nth(pick).expect("the best cost is attained by some group");
            let (_, link) = least_loaded_link(oracle, topo, src_group, inter);
            let h = hdr_mut(pkt);
            h.inter_group = inter;
            h.phase = TO_INTERMEDIATE_GROUP;
            pkt.nonminimal = true;
            return Hop { port: port_to_gateway(view, link), vc: LAYOUT.vc.to_group };
        }
        Hop { port: port_to_gateway(view, direct_link), vc: LAYOUT.vc.to_destination }
    }
}

impl Routing for UgalGlobal {
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
    use crate::topology::LinkClass;

    /// A node of group 5; from node 0 the minimal path uses router 1's link to group 5, which
    /// router 0 cannot see locally.
    const FAR: u32 = 5 * 32 + 6;

    fn alg(net: &Net) -> UgalGlobal {
        let _ = net;
        UgalGlobal::new(UgalGParams::default())
    }

    /// Put `flits` on every global link from group `from` to group `to`.
    fn load_link(net: &mut Net, from: u32, to: u32, flits: u32) {
        let gws: Vec<(u16, u16)> = net.topo.gateways(from, to).to_vec();
        for (r, k) in gws {
            let router = from * net.topo.a as u32 + r as u32;
            net.set_used_credits(router, net.topo.first_global_port() + k, 0, flits);
        }
    }

    #[test]
    fn remote_congestion_on_the_minimal_global_link_diverts() {
        let mut net = Net::new(4, 8, 4, 1);
        let ugal = alg(&net);
        for seed in 0..50 {
            assert!(!walk_pkt(&net, &ugal, 0, FAR, seed).1.nonminimal);
        }
        // Router 1's link to group 5 holds 8 flits; every Valiant path costs 0.
        load_link(&mut net, 0, 5, 8);
        for seed in 0..200 {
            let (path, pkt) = walk_pkt(&net, &ugal, 0, FAR, seed);
            assert!(pkt.nonminimal);
            assert!(path.len() <= 5);
            assert_eq!(path[0].vc, 0);
            assert!(![0, 5].contains(&super::super::valiant::hdr(&pkt).inter_group));
        }
    }

    #[test]
    fn the_cost_includes_the_links_out_of_the_intermediate_group() {
        // Every link toward group 5 from the other groups holds 3 flits; group 0's own link
        // holds 2: every Valiant cost is 0 + 3 > 2, so minimal. At 4 flits it diverts.
        let mut net = Net::new(4, 8, 4, 1);
        for i in 1..33 {
            if i != 5 {
                load_link(&mut net, i, 5, 3);
            }
        }
        load_link(&mut net, 0, 5, 2);
        let ugal = alg(&net);
        for seed in 0..100 {
            let (path, pkt) = walk_pkt(&net, &ugal, 0, FAR, seed);
            assert!(!pkt.nonminimal);
            assert_eq!(path.iter().map(|h| h.vc).collect::<Vec<_>>(), [1, 1, 2]);
        }
        load_link(&mut net, 0, 5, 4);
        assert!((0..100).all(|s| walk_pkt(&net, &ugal, 0, FAR, s).1.nonminimal));
    }

    #[test]
    fn the_cheapest_intermediate_group_is_chosen() {
        // All links out of group 0 hold 5 flits except the one to group 9, and every link into
        // group 5 holds 5 except group 9's: only the path through group 9 costs 0.
        let mut net = Net::new(4, 8, 4, 1);
        for i in 1..33 {
            if i != 9 {
                load_link(&mut net, 0, i, 5);
                if i != 5 {
                    load_link(&mut net, i, 5, 5);
                }
            }
        }
        let ugal = alg(&net);
        for seed in 0..100 {
            let (path, pkt) = walk_pkt(&net, &ugal, 0, FAR, seed);
            assert!(pkt.nonminimal);
            assert_eq!(super::super::valiant::hdr(&pkt).inter_group, 9);
            let globals: Vec<u32> = path
                .iter()
                .filter(|h| net.topo.class_of_port(h.port) == LinkClass::Global)
                .map(|h| net.topo.global_port_group(h.router, h.port))
                .collect();
            assert_eq!(globals, [9, 5]);
        }
    }

    #[test]
    fn ties_between_intermediate_groups_are_drawn_uniformly() {
        let mut net = Net::new(4, 8, 4, 1);
        load_link(&mut net, 0, 5, 1);
        let ugal = alg(&net);
        let mut seen = std::collections::HashSet::new();
        for seed in 0..2000 {
            seen.insert(walk_pkt(&net, &ugal, 0, FAR, seed).1.routing.get::<ValiantHeader>().inter_group);
        }
        assert_eq!(seen.len(), 31);
    }
}
