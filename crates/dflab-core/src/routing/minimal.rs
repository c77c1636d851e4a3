//! MIN: minimal routing, at most 3 router hops (local, global, local).
//!
//! VCs as in the Q-adaptive reference code (qadaptive-reference.md §2 table): 2 VCs, VC0 in the
//! source group including the global hop, VC1 in the destination group.

use super::paths::{in_destination_group, port_to_group};
use super::{Hop, Rng, RouterView, Routing};
use crate::network::Packet;
use crate::topology::Topology;

pub struct Minimal;

impl Minimal {
    pub fn new(_topo: &Topology) -> Minimal {
        Minimal
    }
}

impl Routing for Minimal {
    fn vcs(&self) -> usize {
        2
    }

    fn max_hops(&self) -> u32 {
        3
    }

    #[inline]
    fn route(&mut self, view: &RouterView, pkt: &mut Packet, rng: &mut Rng) -> Hop {
        let dst_group = view.topo.group_of(pkt.dst_router);
        if view.group == dst_group {
            in_destination_group(view, pkt, 1)
        } else {
            Hop { port: port_to_group(view, dst_group, rng), vc: 0 }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::testkit::{walk, Net};

    #[test]
    fn paths_are_minimal_with_the_reference_vcs() {
        let net = Net::new(4, 8, 4, 1);
        let mut alg = Minimal::new(&net.topo);
        for (src, dst) in net.sample_pairs(2000, 1) {
            let path = walk(&net, &mut alg, src, dst, 7);
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

    #[test]
    fn parallel_links_stay_minimal() {
        let net = Net::new(4, 8, 4, 4);
        let mut alg = Minimal::new(&net.topo);
        for (src, dst) in net.sample_pairs(2000, 2) {
            let path = walk(&net, &mut alg, src, dst, 3);
            assert!(path.len() <= 3);
            let globals = path.iter().filter(|h| net.topo.class_of_port(h.port) == crate::topology::LinkClass::Global);
            assert!(globals.count() <= 1);
        }
    }
}
