//! Valiant routing, always non-minimal for inter-group packets.
//!
//! * **VALn** — Valiant to a random intermediate *router* (the reference code's `VALn`,
//!   qadaptive-reference.md §2 table): source group to the intermediate group I on VC0; in I
//!   the local hop to the intermediate router on VC1 (skipped when the packet arrives on it);
//!   from there minimal to the destination group on VC2; destination group on VC3. 4 VCs,
//!   ≤ 6 router hops.
//! * **VALg** — Valiant to a random intermediate *group* (Kim et al. ISCA'08 as described in
//!   baseline-algorithms.md §1.1): VC0 until I, minimal from the entry router of I to the
//!   destination group on VC1, destination group on VC2. 3 VCs, ≤ 5 router hops.
//!
//! Intermediate choice: a router drawn uniformly outside the source and destination groups (the
//! reference's rule); VALg uses its group. Packets whose source and destination share a group
//! are routed minimally, as in the reference code (no local Valiant). With fewer than three
//! groups there is no intermediate group and packets go minimal.
//!
//! The path after the source router is [`Layout::next_hop`]; the adaptive routings (UGALg,
//! UGALn, UGAL-L, UGAL-G, PAR) reuse it with their own VC numbers once they have decided.

use super::paths::{in_destination_group, port_to_group, port_to_router_id, random_intermediate_router};
use super::{Hop, Rng, RouterView, Routing};
use crate::network::Packet;
use crate::topology::{FirstPort, Topology};

/// Routing phases written in `Packet::phase` by every routing that follows a [`Layout`].
pub const TO_INTERMEDIATE_GROUP: u8 = 0;
pub const TO_INTERMEDIATE_ROUTER: u8 = 1;
pub const TO_DESTINATION: u8 = 2;

/// The VC of each segment of a Valiant path. VCs only grow along a path, which is what makes
/// the channel dependency graph acyclic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Valiant to a router (`Packet::inter_router` is visited) rather than to a group.
    pub to_router: bool,
    /// Source group up to and including the global hop into the intermediate group.
    pub to_group: u8,
    /// In the intermediate group, the local hop to the intermediate router.
    pub to_inter_router: u8,
    /// From the intermediate router (or group) to the destination group; also the minimal path
    /// of the adaptive routings in the source group.
    pub to_destination: u8,
    /// Inside the destination group.
    pub destination: u8,
}

/// VALn, UGALn and UGAL-L (qadaptive-reference.md §2 table).
pub const LAYOUT_N: Layout =
    Layout { to_router: true, to_group: 0, to_inter_router: 1, to_destination: 2, destination: 3 };

/// VALg, UGALg and UGAL-G. `to_inter_router` is never used.
pub const LAYOUT_G: Layout =
    Layout { to_router: false, to_group: 0, to_inter_router: 0, to_destination: 1, destination: 2 };

impl Layout {
    pub fn vcs(&self) -> usize {
        self.destination as usize + 1
    }

    /// Router hops of the longest path: local, global, [local to the intermediate router,]
    /// local, global, local.
    pub fn max_hops(&self) -> u32 {
        if self.to_router {
            6
        } else {
            5
        }
    }

    /// Commit `pkt` to the Valiant path through router `ir`.
    pub fn start_valiant(&self, topo: &Topology, pkt: &mut Packet, ir: u32) {
        pkt.inter_group = topo.group_of(ir);
        pkt.inter_router = ir;
        pkt.phase = TO_INTERMEDIATE_GROUP;
        pkt.nonminimal = true;
    }

    /// Every hop once the phase is set: toward the intermediate group, its router, then minimal
    /// to the destination.
    pub fn next_hop(&self, view: &RouterView, pkt: &mut Packet, rng: &mut Rng) -> Hop {
        let topo = view.topo;
        let dst_group = topo.group_of(pkt.dst_router);
        if view.group == dst_group {
            return in_destination_group(view, pkt, self.destination);
        }
        if pkt.phase == TO_INTERMEDIATE_GROUP {
            if view.group != pkt.inter_group {
                return Hop { port: port_to_group(view, pkt.inter_group, rng), vc: self.to_group };
            }
            pkt.phase = if self.to_router { TO_INTERMEDIATE_ROUTER } else { TO_DESTINATION };
        }
        if pkt.phase == TO_INTERMEDIATE_ROUTER {
            if view.router != pkt.inter_router {
                return Hop { port: port_to_router_id(view, pkt.inter_router), vc: self.to_inter_router };
            }
            pkt.phase = TO_DESTINATION;
        }
        Hop { port: port_to_group(view, dst_group, rng), vc: self.to_destination }
    }

    /// [`Layout::next_hop`] from the packet and the first-port table alone, without a view: the
    /// same steps, with the table telling whether a group is this router's own. None, before
    /// any change to `pkt`, when a hop to another group is not in the table (parallel links:
    /// `next_hop` compares two drawn gateways).
    #[inline(always)]
    pub fn table_next_hop(&self, topo: &Topology, router: u32, pkt: &mut Packet) -> Option<Hop> {
        if pkt.dst_router == router {
            // `dst_router` is `dst / p`: `host_port_of_node(dst)` without a division.
            return Some(Hop { port: (pkt.dst - router * topo.p as u32) as u16, vc: 0 });
        }
        let dst_group = topo.group_of(pkt.dst_router);
        let to_destination = match topo.first_port_to_group(router, dst_group) {
            FirstPort::OwnGroup => {
                return Some(Hop { port: topo.local_port_to(router, pkt.dst_router, dst_group), vc: self.destination })
            }
            FirstPort::Port(port) => port,
            FirstPort::Unknown => return None,
        };
        if pkt.phase == TO_INTERMEDIATE_GROUP {
            match topo.first_port_to_group(router, pkt.inter_group) {
                FirstPort::Port(port) => return Some(Hop { port, vc: self.to_group }),
                FirstPort::Unknown => return None,
                FirstPort::OwnGroup => pkt.phase = if self.to_router { TO_INTERMEDIATE_ROUTER } else { TO_DESTINATION },
            }
        }
        if pkt.phase == TO_INTERMEDIATE_ROUTER {
            if router != pkt.inter_router {
                // `port_to_router_id`, with this router's index computed only here.
                let index = topo.index_in_group(router);
                let port = topo.local_port(index, index.wrapping_add(pkt.inter_router).wrapping_sub(router));
                return Some(Hop { port, vc: self.to_inter_router });
            }
            pkt.phase = TO_DESTINATION;
        }
        Some(Hop { port: to_destination, vc: self.to_destination })
    }

    /// [`Layout::table_next_hop`] for a routing whose only decision is made at the source router
    /// (the packet's first hop, from a host port): None there.
    #[inline(always)]
    pub fn table_hop_after_source(&self, topo: &Topology, router: u32, in_port: u16, pkt: &mut Packet) -> Option<Hop> {
        if topo.is_host_port(in_port) && pkt.hops == 0 {
            return None;
        }
        self.table_next_hop(topo, router, pkt)
    }
}

pub struct Valiant {
    layout: Layout,
}

impl Valiant {
    pub fn to_router(_topo: &Topology) -> Valiant {
        Valiant { layout: LAYOUT_N }
    }

    pub fn to_group(_topo: &Topology) -> Valiant {
        Valiant { layout: LAYOUT_G }
    }
}

impl Routing for Valiant {
    fn vcs(&self) -> usize {
        self.layout.vcs()
    }

    fn max_hops(&self) -> u32 {
        self.layout.max_hops()
    }

    fn route(&mut self, view: &RouterView, pkt: &mut Packet, rng: &mut Rng) -> Hop {
        let topo = view.topo;
        let dst_group = topo.group_of(pkt.dst_router);
        if view.is_source_router() && pkt.hops == 0 {
            pkt.phase = TO_DESTINATION;
            if view.group != dst_group {
                if let Some(ir) = random_intermediate_router(view, view.group, dst_group, rng) {
                    self.layout.start_valiant(topo, pkt, ir);
                }
            }
        }
        self.layout.next_hop(view, pkt, rng)
    }

    #[inline(always)]
    fn route_without_view(&self, topo: &Topology, router: u32, in_port: u16, pkt: &mut Packet) -> Option<Hop> {
        self.layout.table_hop_after_source(topo, router, in_port, pkt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::testkit::{walk, Net};
    use crate::topology::LinkClass;

    #[test]
    fn valn_visits_the_intermediate_router_within_six_hops() {
        let net = Net::new(4, 8, 4, 1);
        let mut alg = Valiant::to_router(&net.topo);
        let mut six = 0;
        for (i, (src, dst)) in net.sample_pairs(3000, 5).into_iter().enumerate() {
            let (path, pkt) = crate::routing::testkit::walk_pkt(&net, &mut alg, src, dst, i as u64);
            assert!(path.len() <= 6);
            six += (path.len() == 6) as u32;
            let (sg, dg) = (net.topo.group_of(net.topo.router_of_node(src)), net.topo.group_of(pkt.dst_router));
            if sg == dg {
                assert!(!pkt.nonminimal && path.len() <= 1);
                continue;
            }
            assert!(pkt.nonminimal);
            assert!(pkt.inter_group != sg && pkt.inter_group != dg);
            // the packet is at the intermediate router after some hop (or arrives on it)
            assert!(path.iter().any(|h| h.router == pkt.inter_router), "{src}->{dst}");
            // VCs never decrease along the path and follow the layout of the reference code
            let vcs: Vec<u8> = path.iter().map(|h| h.vc).collect();
            assert!(vcs.windows(2).all(|w| w[0] <= w[1]), "{vcs:?}");
            let globals = path.iter().filter(|h| net.topo.class_of_port(h.port) == LinkClass::Global).count();
            assert_eq!(globals, 2);
            for h in &path {
                let g = net.topo.group_of(h.router);
                let want = if g == sg {
                    0
                } else if g == dg {
                    3
                } else if h.vc == 1 {
                    1
                } else {
                    2
                };
                assert_eq!(h.vc, want);
            }
        }
        assert!(six > 0, "some path should use all six hops");
    }

    #[test]
    fn valg_goes_through_the_intermediate_group_within_five_hops() {
        let net = Net::new(4, 8, 4, 1);
        let mut alg = Valiant::to_group(&net.topo);
        for (i, (src, dst)) in net.sample_pairs(3000, 6).into_iter().enumerate() {
            let (path, pkt) = crate::routing::testkit::walk_pkt(&net, &mut alg, src, dst, i as u64);
            assert!(path.len() <= 5);
            if pkt.nonminimal {
                assert!(path.iter().any(|h| net.topo.group_of(h.router) == pkt.inter_group));
                assert!(path.iter().all(|h| h.vc <= 2));
            }
        }
        assert_eq!(walk(&net, &mut alg, 0, 1, 0).len(), 0);
    }
}
