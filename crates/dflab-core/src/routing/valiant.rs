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

use bytemuck::{Pod, Zeroable};

use super::paths::{in_destination_group, port_to_group, port_to_router_id, random_intermediate_router};
use super::vc::PhaseVcs;
use super::{Ctx, Hop, NoMsg, Rng, RouterView, Routing, VcCounts};
use crate::network::Packet;
use crate::topology::{FirstPort, Topology, NONE};

/// Routing phases written in [`ValiantHeader::phase`] by every routing that follows a
/// [`Layout`].
pub const TO_INTERMEDIATE_GROUP: u8 = 0;
pub const TO_INTERMEDIATE_ROUTER: u8 = 1;
pub const TO_DESTINATION: u8 = 2;

/// The per-packet fields of Valiant paths, shared by the UGAL family and PAR.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct ValiantHeader {
    /// Intermediate router (Valiant to a router) or NONE.
    pub inter_router: u32,
    /// Intermediate group or NONE.
    pub inter_group: u32,
    /// Where the packet is on its path (the constants above; PAR adds its own).
    pub phase: u8,
    pub _pad: [u8; 3],
}

impl Default for ValiantHeader {
    fn default() -> Self {
        ValiantHeader { inter_router: NONE, inter_group: NONE, phase: 0, _pad: [0; 3] }
    }
}

/// The packet's Valiant fields.
#[inline(always)]
pub fn hdr(pkt: &Packet) -> &ValiantHeader {
    pkt.hdr()
}

/// The packet's Valiant fields, to write.
#[inline(always)]
pub fn hdr_mut(pkt: &mut Packet) -> &mut ValiantHeader {
    pkt.hdr_mut()
}

/// A Valiant path: to a router or to a group, and its VC per segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Valiant to a router (`inter_router` is visited) rather than to a group.
    pub to_router: bool,
    pub vc: PhaseVcs,
}

/// VALn, UGALn and UGAL-L (the Q-adaptive reference code's 4-VC layout).
pub const LAYOUT_N: Layout =
    Layout { to_router: true, vc: PhaseVcs { to_group: 0, to_inter_router: 1, to_destination: 2, destination: 3 } };

/// VALg, UGALg and UGAL-G. `to_inter_router` is never used.
pub const LAYOUT_G: Layout =
    Layout { to_router: false, vc: PhaseVcs { to_group: 0, to_inter_router: 0, to_destination: 1, destination: 2 } };

impl Layout {
    pub fn vcs(&self) -> VcCounts {
        self.vc.vcs()
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
        let h = hdr_mut(pkt);
        h.inter_group = topo.group_of(ir);
        h.inter_router = ir;
        h.phase = TO_INTERMEDIATE_GROUP;
        pkt.nonminimal = true;
    }

    /// Every hop once the phase is set: toward the intermediate group, its router, then minimal
    /// to the destination.
    pub fn next_hop(&self, view: &RouterView, pkt: &mut Packet, rng: &mut Rng) -> Hop {
        let topo = view.topo;
        let dst_group = topo.group_of(pkt.dst_router);
        if view.group == dst_group {
            return in_destination_group(view, pkt, self.vc.destination);
        }
        let h = hdr_mut(pkt);
        if h.phase == TO_INTERMEDIATE_GROUP {
            if view.group != h.inter_group {
                return Hop { port: port_to_group(view, h.inter_group, rng), vc: self.vc.to_group };
            }
            h.phase = if self.to_router { TO_INTERMEDIATE_ROUTER } else { TO_DESTINATION };
        }
        if h.phase == TO_INTERMEDIATE_ROUTER {
            if view.router != h.inter_router {
                return Hop { port: port_to_router_id(view, h.inter_router), vc: self.vc.to_inter_router };
            }
            h.phase = TO_DESTINATION;
        }
        Hop { port: port_to_group(view, dst_group, rng), vc: self.vc.to_destination }
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
                return Some(Hop {
                    port: topo.local_port_to(router, pkt.dst_router, dst_group),
                    vc: self.vc.destination,
                })
            }
            FirstPort::Port(port) => port,
            FirstPort::Unknown => return None,
        };
        let h = hdr_mut(pkt);
        if h.phase == TO_INTERMEDIATE_GROUP {
            match topo.first_port_to_group(router, h.inter_group) {
                FirstPort::Port(port) => return Some(Hop { port, vc: self.vc.to_group }),
                FirstPort::Unknown => return None,
                FirstPort::OwnGroup => h.phase = if self.to_router { TO_INTERMEDIATE_ROUTER } else { TO_DESTINATION },
            }
        }
        if h.phase == TO_INTERMEDIATE_ROUTER {
            if router != h.inter_router {
                // `port_to_router_id`, with this router's index computed only here.
                let index = topo.index_in_group(router);
                let port = topo.local_port(index, index.wrapping_add(h.inter_router).wrapping_sub(router));
                return Some(Hop { port, vc: self.vc.to_inter_router });
            }
            h.phase = TO_DESTINATION;
        }
        Some(Hop { port: to_destination, vc: self.vc.to_destination })
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
    pub fn to_router() -> Valiant {
        Valiant { layout: LAYOUT_N }
    }

    pub fn to_group() -> Valiant {
        Valiant { layout: LAYOUT_G }
    }
}

impl Routing for Valiant {
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
        let (view, rng) = (&cx.view, &mut *cx.rng);
        let topo = view.topo;
        let dst_group = topo.group_of(pkt.dst_router);
        if view.is_source_router() && pkt.hops == 0 {
            hdr_mut(pkt).phase = TO_DESTINATION;
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
    use crate::routing::harness::{walk, Net};
    use crate::topology::LinkClass;

    #[test]
    fn valn_visits_the_intermediate_router_within_six_hops() {
        let net = Net::new(4, 8, 4, 1);
        let alg = Valiant::to_router();
        let mut six = 0;
        for (i, (src, dst)) in net.sample_pairs(3000, 5).into_iter().enumerate() {
            let (path, pkt) = crate::routing::harness::walk_pkt(&net, &alg, src, dst, i as u64);
            assert!(path.len() <= 6);
            six += (path.len() == 6) as u32;
            let (sg, dg) = (net.topo.group_of(net.topo.router_of_node(src)), net.topo.group_of(pkt.dst_router));
            if sg == dg {
                assert!(!pkt.nonminimal && path.len() <= 1);
                continue;
            }
            assert!(pkt.nonminimal);
            let h = hdr(&pkt);
            assert!(h.inter_group != sg && h.inter_group != dg);
            // the packet is at the intermediate router after some hop (or arrives on it)
            assert!(path.iter().any(|s| s.router == h.inter_router), "{src}->{dst}");
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
        let alg = Valiant::to_group();
        for (i, (src, dst)) in net.sample_pairs(3000, 6).into_iter().enumerate() {
            let (path, pkt) = crate::routing::harness::walk_pkt(&net, &alg, src, dst, i as u64);
            assert!(path.len() <= 5);
            if pkt.nonminimal {
                assert!(path.iter().any(|h| net.topo.group_of(h.router) == hdr(&pkt).inter_group));
                assert!(path.iter().all(|h| h.vc <= 2));
            }
        }
        assert_eq!(walk(&net, &alg, 0, 1, 0).len(), 0);
    }
}
