//! Test helpers: walk a packet through the routing decisions of each router on its path, with a
//! network state the test controls (empty by default), without the event engine.

use rand::{Rng as _, SeedableRng};

use super::{Hop, Rng, RouterView, Routing};
use crate::config::{Arrangement, TopologyConfig};
use crate::network::{CreditLedger, Packet};
use crate::topology::Topology;

pub struct Net {
    pub topo: Topology,
    pub vcs: usize,
    pub in_cap: u32,
    /// Per (router, port, vc).
    pub credits: CreditLedger,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    pub router: u32,
    pub port: u16,
    pub vc: u8,
}

impl Net {
    pub fn new(p: usize, a: usize, h: usize, l: usize) -> Net {
        let topo = Topology::new(&TopologyConfig {
            p,
            a,
            h,
            g: None,
            links_per_pair: Some(l),
            arrangement: Arrangement::Absolute,
        })
        .unwrap();
        let vcs = 8;
        let n = topo.routers() * topo.radix * vcs;
        Net { topo, vcs, in_cap: 20, credits: CreditLedger::new(n, 20) }
    }

    /// Make `flits` of congestion visible on (router, port, vc) as used credits.
    pub fn set_used_credits(&mut self, router: u32, port: u16, vc: usize, flits: u32) {
        let i = (router as usize * self.topo.radix + port as usize) * self.vcs + vc;
        self.credits.set_free(i, self.in_cap - flits);
    }

    pub fn view(&self, router: u32, in_port: u16) -> RouterView<'_> {
        RouterView::new(&self.topo, router, in_port, 0, self.vcs, &self.credits)
    }

    pub fn sample_pairs(&self, n: usize, seed: u64) -> Vec<(u32, u32)> {
        let mut rng = Rng::seed_from_u64(seed);
        let nodes = self.topo.nodes() as u32;
        (0..n).map(|_| (rng.gen_range(0..nodes), rng.gen_range(0..nodes))).collect()
    }

    pub fn packet(&self, src: u32, dst: u32) -> Packet {
        Packet::new(src, dst, self.topo.router_of_node(dst), 1)
    }
}

/// Router-to-router steps of the packet's path (ejection not included).
pub fn walk(net: &Net, alg: &mut dyn Routing, src: u32, dst: u32, seed: u64) -> Vec<Step> {
    walk_pkt(net, alg, src, dst, seed).0
}

pub fn walk_pkt(net: &Net, alg: &mut dyn Routing, src: u32, dst: u32, seed: u64) -> (Vec<Step>, Packet) {
    let mut rng = Rng::seed_from_u64(seed);
    let mut pkt = net.packet(src, dst);
    let mut router = net.topo.router_of_node(src);
    let mut in_port = net.topo.host_port_of_node(src);
    let mut path = Vec::new();
    loop {
        // The engine asks for a hop without a view first: the answer must be `route`'s, with the
        // same writes to the packet, and no answer must leave the packet alone.
        let before = format!("{pkt:?}");
        let mut shortcut = pkt;
        let quick = alg.route_without_view(&net.topo, router, in_port, &mut shortcut);
        let Hop { port, vc } = alg.route(&net.view(router, in_port), &mut pkt, &mut rng);
        match quick {
            Some(hop) => {
                assert_eq!(hop, Hop { port, vc }, "at router {router}: {before}");
                assert_eq!(format!("{shortcut:?}"), format!("{pkt:?}"), "at router {router}");
            }
            None => assert_eq!(format!("{shortcut:?}"), before, "at router {router}"),
        }
        if net.topo.is_host_port(port) {
            assert_eq!(router, pkt.dst_router);
            assert_eq!(port, net.topo.host_port_of_node(dst));
            return (path, pkt);
        }
        path.push(Step { router, port, vc });
        assert!(path.len() <= alg.max_hops() as usize, "hop bound exceeded: {path:?}");
        let (peer, pport) = net.topo.peer(router, port).expect("routed onto an unconnected port");
        pkt.hops += 1;
        router = peer;
        in_port = pport;
    }
}
