//! MIN: minimal routing, at most 3 router hops (local, global, local).
//!
//! VCs as in the Q-adaptive reference code (qadaptive-reference.md §2 table): 2 VCs, VC0 in the
//! source group including the global hop, VC1 in the destination group; the ejection hop names
//! VC0.
//!
//! Option `routing.vc_layout = "booksim"`: BookSim2's `min_dragonflynew` (its "optical
//! dateline"): VC1 from the global hop on, the global hop included, and the ejection on the
//! packet's phase VC (VC1 after a global hop, VC0 within its source group). Only the VC labels
//! differ on the links, but the ejection port then has two VCs in use, which matters where
//! output VCs are allocated per packet (`network.timing = "booksim"`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::paths::{in_destination_group, port_to_group};
use super::{Ctx, Hop, NoMsg, Routing, VcCounts};
use crate::config::RoutingParams;
use crate::network::Packet;
use crate::topology::Topology;

/// The parameters of MIN.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct MinimalParams {
    /// Which VCs the hops take: the Q-adaptive reference code's, or BookSim2's.
    pub vc_layout: MinVcLayout,
}

impl RoutingParams for MinimalParams {}

/// The VC layout of MIN.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum MinVcLayout {
    /// VC0 up to and including the global hop, VC1 in the destination group, ejection on VC0.
    #[default]
    Reference,
    /// VC1 from the global hop on, ejection on the phase's VC (BookSim2 `min_dragonflynew`).
    Booksim,
}

pub struct Minimal {
    booksim: bool,
}

impl Minimal {
    pub fn new(_topo: &Topology) -> Minimal {
        Minimal { booksim: false }
    }

    pub fn with_params(p: MinimalParams) -> Minimal {
        Minimal { booksim: p.vc_layout == MinVcLayout::Booksim }
    }

    /// BookSim's phase VC of a hop from `router` onto `port`: 1 once the packet takes or has
    /// taken a global hop. Worked out from where the packet is, not from its count of global
    /// hops, which its arrival updates after the engine's prefetch stage predicted the hop
    /// (`predict_hop` must give the hop `route` will).
    #[inline(always)]
    fn booksim_vc(topo: &Topology, router: u32, port: u16, pkt: &Packet) -> u8 {
        let dst_group = topo.group_of(pkt.dst_router);
        let crossed = topo.group_of(router) == dst_group && topo.group_of(topo.router_of_node(pkt.src)) != dst_group;
        (crossed || port >= topo.first_global_port()) as u8
    }

    /// The hop of [`Minimal::table_hop`] in this instance's VC layout.
    #[inline(always)]
    fn hop(&self, topo: &Topology, router: u32, pkt: &Packet) -> Option<Hop> {
        let hop = Minimal::table_hop(topo, router, pkt)?;
        Some(if self.booksim { Hop { vc: Minimal::booksim_vc(topo, router, hop.port, pkt), ..hop } } else { hop })
    }

    /// The hop of [`Routing::route`] from the packet and the topology's first-port table alone,
    /// without a [`RouterView`] (MIN reads no congestion); None when the route needs the view:
    /// parallel links to the destination group (the less occupied of two drawn gateways), or a
    /// network too large for the table.
    #[inline(always)]
    pub fn table_hop(topo: &Topology, router: u32, pkt: &Packet) -> Option<Hop> {
        if pkt.dst_router == router {
            // `dst_router` is `dst / p`, so this is `host_port_of_node(dst)` without a division.
            debug_assert_eq!(topo.router_of_node(pkt.dst), router);
            return Some(Hop { port: (pkt.dst - router * topo.p as u32) as u16, vc: 0 });
        }
        let (port, in_group) = topo.minimal_first_port(router, pkt.dst_router)?;
        Some(Hop { port, vc: in_group as u8 })
    }
}

impl Routing for Minimal {
    type Header = ();
    type RouterState = ();
    type Msg = NoMsg;
    const PREDICTION_IS_ROUTE: bool = true;

    fn vcs(&self) -> VcCounts {
        VcCounts::uniform(2)
    }

    fn max_hops(&self) -> u32 {
        3
    }

    fn router_state(&self, _topo: &Topology, _router: u32) {}

    #[inline(always)]
    fn route_without_view(&self, topo: &Topology, router: u32, _in_port: u16, pkt: &mut Packet) -> Option<Hop> {
        self.hop(topo, router, pkt)
    }

    #[inline(always)]
    fn predict_hop(&self, topo: &Topology, router: u32, pkt: &Packet) -> Option<Hop> {
        self.hop(topo, router, pkt)
    }

    #[inline]
    fn route(&self, cx: &mut Ctx<'_, Self>, pkt: &mut Packet) -> Hop {
        let view = &cx.view;
        let dst_group = view.topo.group_of(pkt.dst_router);
        let hop = if view.group == dst_group {
            in_destination_group(view, pkt, 1)
        } else {
            Hop { port: port_to_group(view, dst_group, cx.rng), vc: 0 }
        };
        if self.booksim {
            Hop { vc: Minimal::booksim_vc(view.topo, view.router, hop.port, pkt), ..hop }
        } else {
            hop
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::harness::{walk, Net};

    #[test]
    fn paths_are_minimal_with_the_reference_vcs() {
        let net = Net::new(4, 8, 4, 1);
        let alg = Minimal::new(&net.topo);
        for (src, dst) in net.sample_pairs(2000, 1) {
            let path = walk(&net, &alg, src, dst, 7);
            let sr = net.topo.router_of_node(src);
            let dr = net.topo.router_of_node(dst);
            assert_eq!(path.len() as u32, net.topo.min_hops(sr, dr), "{src}->{dst}");
            let dg = net.topo.group_of(dr);
            for h in &path {
                let want = if net.topo.group_of(h.router) == dg { 1 } else { 0 };
                assert_eq!(h.vc, want);
            }
        }
    }

    /// BookSim's layout: VC1 from the global hop on (it included), ejection on VC1 after a
    /// global hop and on VC0 within the source group; the same ports as the reference layout.
    #[test]
    fn booksim_layout_switches_vc_at_the_global_hop() {
        let net = Net::new(2, 4, 2, 1);
        let (reference, booksim) =
            (Minimal::new(&net.topo), Minimal::with_params(MinimalParams { vc_layout: MinVcLayout::Booksim }));
        for (src, dst) in net.sample_pairs(1000, 3) {
            let (a, b) = (walk(&net, &reference, src, dst, 7), walk(&net, &booksim, src, dst, 7));
            assert_eq!(a.iter().map(|h| h.port).collect::<Vec<_>>(), b.iter().map(|h| h.port).collect::<Vec<_>>());
            let mut global_seen = false;
            for h in &b {
                global_seen |= h.port >= net.topo.first_global_port();
                assert_eq!(h.vc, global_seen as u8, "{src}->{dst}: {b:?}");
            }
        }
    }

    /// The table hop agrees with the hop `route` computes from the view (division, gateway lists)
    /// for every (router, destination node) pair, wherever it answers; and it answers for every
    /// pair of the one-link shapes.
    #[test]
    fn table_hop_agrees_with_the_view() {
        for (net, always) in [(Net::new(4, 8, 4, 1), true), (Net::new(2, 4, 2, 1), true), (Net::new(4, 8, 4, 4), false)]
        {
            let topo = &net.topo;
            for router in 0..topo.routers() as u32 {
                for dst in 0..topo.nodes() as u32 {
                    let pkt = net.packet(0, dst);
                    let Some(hop) = Minimal::table_hop(topo, router, &pkt) else {
                        assert!(!always, "router {router} to node {dst}");
                        continue;
                    };
                    let want = net.route_once(&Minimal::new(topo), router, topo.p as u16, &mut pkt.clone(), 1);
                    assert_eq!(hop, want, "router {router} to node {dst}");
                }
            }
        }
    }

    #[test]
    fn parallel_links_stay_minimal() {
        let net = Net::new(4, 8, 4, 4);
        let alg = Minimal::new(&net.topo);
        for (src, dst) in net.sample_pairs(2000, 2) {
            let path = walk(&net, &alg, src, dst, 3);
            assert!(path.len() <= 3);
            let globals = path.iter().filter(|h| net.topo.class_of_port(h.port) == crate::topology::LinkClass::Global);
            assert!(globals.count() <= 1);
        }
    }
}
