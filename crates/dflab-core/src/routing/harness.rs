//! A harness for routing algorithms, without the event engine: call a routing's hooks at any
//! router with a congestion state the caller sets ([`Net`]), and walk a packet through the
//! decisions of every router on its path ([`walk`]), checking on the way that
//! `route_without_view` answers exactly as `route` does. The routings' own tests use it, and so
//! can the tests of a new routing (`docs/dev/routing.md`).

use std::collections::HashMap;

use rand::{Rng as _, SeedableRng};

use super::ctx::Signals;
use super::{Ctx, Hop, Outbox, Rng, RouterView, Routing};
use crate::config::{Arrangement, TopologyConfig};
use crate::network::{CreditLedger, Packet, RoutingArea};
use crate::stats::Probes;
use crate::topology::Topology;
use crate::units::Time;

pub struct Net {
    pub topo: Topology,
    pub vcs: usize,
    pub in_cap: u32,
    /// Per (router, port, vc).
    pub credits: CreditLedger,
    /// The time every view reads (0 unless a test moves it).
    pub now: Time,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    pub router: u32,
    pub port: u16,
    pub vc: u8,
}

/// What a routing's context borrows besides the view and the router's state.
pub struct Scratch<M> {
    pub out: Outbox<M>,
    pub signals: Signals,
    pub probes: Probes,
}

impl<M> Scratch<M> {
    pub fn new(routers: usize) -> Scratch<M> {
        Scratch { out: Outbox::default(), signals: Signals::new(routers, 1_000_000), probes: Probes::none() }
    }
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
            ..TopologyConfig::default()
        })
        .unwrap();
        Net::of(topo)
    }

    /// An empty network on `topo`.
    pub fn of(topo: Topology) -> Net {
        Net::of_cap(topo, 20)
    }

    /// An empty network on `topo` with input buffers of `in_cap` flits per VC.
    pub fn of_cap(topo: Topology, in_cap: u32) -> Net {
        let vcs = 8;
        let n = topo.routers() * topo.radix * vcs;
        Net { topo, vcs, in_cap, credits: CreditLedger::new(n, in_cap), now: 0 }
    }

    /// Make `flits` of congestion visible on (router, port, vc) as used credits.
    pub fn set_used_credits(&mut self, router: u32, port: u16, vc: usize, flits: u32) {
        let i = (router as usize * self.topo.radix + port as usize) * self.vcs + vc;
        self.credits.set_free(i, self.in_cap - flits);
    }

    /// Make `flits` of the used credits of (router, port, vc) flits on the wire (left out of
    /// the net occupancy of [`crate::routing::Hooks::NET_OCCUPANCY`]).
    pub fn set_on_wire(&mut self, router: u32, port: u16, vc: usize, flits: u32) {
        let i = (router as usize * self.topo.radix + port as usize) * self.vcs + vc;
        self.credits.wire_in(i, u32::MAX);
        self.credits.wire_out(i, self.now, flits);
    }

    /// Keep every port's sends of the last `span` ps (the DGB code's in-flight window).
    pub fn keep_sent(&mut self, span: Time) {
        self.credits.keep_sent(self.vcs, None, |_| span);
    }

    /// Record `flits` of (router, port, vc) sent onto the link at `at` (they leave nothing
    /// in the occupancies: only [`Self::keep_sent`]'s window counts them).
    pub fn record_sent(&mut self, router: u32, port: u16, vc: usize, at: Time, flits: u32) {
        let i = (router as usize * self.topo.radix + port as usize) * self.vcs + vc;
        self.credits.wire_out(i, at, flits);
        self.credits.wire_in(i, flits);
    }

    pub fn view(&self, router: u32, in_port: u16) -> RouterView<'_> {
        RouterView::new(&self.topo, router, in_port, self.now, self.vcs, &self.credits)
    }

    /// A context at `router` (arrival on `in_port`) with the given state, stream and scratch.
    pub fn ctx<'a, R: Routing>(
        &'a self,
        router: u32,
        in_port: u16,
        state: &'a mut R::RouterState,
        rng: &'a mut Rng,
        scratch: &'a mut Scratch<R::Msg>,
    ) -> Ctx<'a, R> {
        Ctx {
            view: self.view(router, in_port),
            rng,
            state,
            out: &mut scratch.out,
            signals: &mut scratch.signals,
            probes: &mut scratch.probes,
            credits: &self.credits,
        }
    }

    /// `alg`'s route of `pkt` at `router` (arrived on `in_port`), with a fresh router state
    /// and the stream of `seed`.
    pub fn route_once<R: Routing>(&self, alg: &R, router: u32, in_port: u16, pkt: &mut Packet, seed: u64) -> Hop {
        let mut state = alg.router_state(&self.topo, router);
        let mut rng = Rng::seed_from_u64(seed);
        let mut scratch = Scratch::new(self.topo.routers());
        alg.route(&mut self.ctx(router, in_port, &mut state, &mut rng, &mut scratch), pkt)
    }

    pub fn sample_pairs(&self, n: usize, seed: u64) -> Vec<(u32, u32)> {
        let mut rng = Rng::seed_from_u64(seed);
        let nodes = self.topo.nodes() as u32;
        (0..n).map(|_| (rng.gen_range(0..nodes), rng.gen_range(0..nodes))).collect()
    }

    /// A new packet from `src` to `dst` with an all-zero routing header.
    pub fn packet(&self, src: u32, dst: u32) -> Packet {
        Packet::new(src, dst, self.topo.router_of_node(dst), 1, RoutingArea::default())
    }

    /// A new packet from `src` to `dst` with the default header of routing `R`.
    pub fn packet_for<R: Routing>(&self, src: u32, dst: u32) -> Packet {
        Packet::new(src, dst, self.topo.router_of_node(dst), 1, RoutingArea::of(R::Header::default()))
    }
}

/// A routing with a state per router, a stream and the hooks' scratch: call its hooks one at a
/// time as the engine would.
pub struct Harness<R: Routing> {
    pub net: Net,
    pub alg: R,
    pub states: Vec<R::RouterState>,
    pub rng: Rng,
    scratch: Scratch<R::Msg>,
}

impl<R: Routing> Harness<R> {
    /// `alg` on `net`, every router in its initial state, the stream of `seed`.
    pub fn new(net: Net, alg: R, seed: u64) -> Harness<R> {
        let states = (0..net.topo.routers() as u32).map(|r| alg.router_state(&net.topo, r)).collect();
        let scratch = Scratch::new(net.topo.routers());
        Harness { net, alg, states, rng: Rng::seed_from_u64(seed), scratch }
    }

    /// A packet from `src` to `dst` with the routing's default header.
    pub fn packet(&self, src: u32, dst: u32) -> Packet {
        self.net.packet_for::<R>(src, dst)
    }

    /// `route` of `pkt` at `router`, arrived on `in_port`.
    pub fn route(&mut self, router: u32, in_port: u16, pkt: &mut Packet) -> Hop {
        let cx =
            &mut self.net.ctx(router, in_port, &mut self.states[router as usize], &mut self.rng, &mut self.scratch);
        self.alg.route(cx, pkt)
    }

    /// `on_arrive` of `pkt` at `router` on `in_port`.
    pub fn arrive(&mut self, router: u32, in_port: u16, pkt: &mut Packet) {
        let cx =
            &mut self.net.ctx(router, in_port, &mut self.states[router as usize], &mut self.rng, &mut self.scratch);
        self.alg.on_arrive(cx, pkt);
    }

    /// `on_depart` of `pkt` from `router`'s input `in_port`; returns the messages it sent.
    pub fn depart(&mut self, router: u32, in_port: u16, pkt: &Packet) -> Vec<(super::Dest, R::Msg)> {
        let cx =
            &mut self.net.ctx(router, in_port, &mut self.states[router as usize], &mut self.rng, &mut self.scratch);
        self.alg.on_depart(cx, pkt);
        std::mem::take(&mut self.scratch.out.sends)
    }

    /// `on_deliver` of `pkt` at its destination router; returns the messages it sent.
    pub fn deliver(&mut self, pkt: &Packet) -> Vec<(super::Dest, R::Msg)> {
        let (router, port) = (pkt.dst_router, self.net.topo.host_port_of_node(pkt.dst));
        let cx = &mut self.net.ctx(router, port, &mut self.states[router as usize], &mut self.rng, &mut self.scratch);
        self.alg.on_deliver(cx, pkt);
        std::mem::take(&mut self.scratch.out.sends)
    }

    /// `on_msg` of `msg` arriving at `router` on `port`; returns the messages it sent.
    pub fn message(&mut self, router: u32, port: u16, msg: R::Msg) -> Vec<(super::Dest, R::Msg)> {
        let cx = &mut self.net.ctx(router, port, &mut self.states[router as usize], &mut self.rng, &mut self.scratch);
        self.alg.on_msg(cx, port, msg);
        std::mem::take(&mut self.scratch.out.sends)
    }

    /// Route `pkt` hop by hop from its source router to its destination router as the engine
    /// would (`route`, then `on_arrive` at the next router; hops counted), without ejecting it.
    pub fn walk(&mut self, pkt: &mut Packet) {
        let topo = self.net.topo.clone();
        let (mut router, mut in_port) = (topo.router_of_node(pkt.src), topo.host_port_of_node(pkt.src));
        loop {
            let hop = self.route(router, in_port, pkt);
            if topo.is_host_port(hop.port) {
                return;
            }
            let (peer, pport) = topo.peer(router, hop.port).expect("a router-to-router hop");
            pkt.hops += 1;
            pkt.global_hops += (pport >= topo.first_global_port()) as u8;
            (router, in_port) = (peer, pport);
            self.arrive(router, in_port, pkt);
        }
    }

    /// The messages the hooks called since the last call that returned them have sent.
    pub fn sent(&mut self) -> Vec<(super::Dest, R::Msg)> {
        std::mem::take(&mut self.scratch.out.sends)
    }

    pub fn state(&self, router: u32) -> &R::RouterState {
        &self.states[router as usize]
    }

    pub fn state_mut(&mut self, router: u32) -> &mut R::RouterState {
        &mut self.states[router as usize]
    }

    /// Draw from the stream of `seed` from now on.
    pub fn reseed(&mut self, seed: u64) {
        self.rng = Rng::seed_from_u64(seed);
    }
}

/// Router-to-router steps of the packet's path (ejection not included).
pub fn walk<R: Routing>(net: &Net, alg: &R, src: u32, dst: u32, seed: u64) -> Vec<Step> {
    walk_pkt(net, alg, src, dst, seed).0
}

pub fn walk_pkt<R: Routing>(net: &Net, alg: &R, src: u32, dst: u32, seed: u64) -> (Vec<Step>, Packet) {
    let mut rng = Rng::seed_from_u64(seed);
    let mut pkt = net.packet_for::<R>(src, dst);
    let mut router = net.topo.router_of_node(src);
    let mut in_port = net.topo.host_port_of_node(src);
    let mut path = Vec::new();
    let mut states: HashMap<u32, R::RouterState> = HashMap::new();
    let mut scratch = Scratch::new(net.topo.routers());
    loop {
        // The engine asks for a hop without a view first: the answer must be `route`'s, with the
        // same writes to the packet, and no answer must leave the packet alone.
        let before = format!("{pkt:?}");
        let mut shortcut = pkt;
        let quick = alg.route_without_view(&net.topo, router, in_port, &mut shortcut);
        let state = states.entry(router).or_insert_with(|| alg.router_state(&net.topo, router));
        let Hop { port, vc } = alg.route(&mut net.ctx(router, in_port, state, &mut rng, &mut scratch), &mut pkt);
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
        pkt.global_hops += (pport >= net.topo.first_global_port()) as u8; // as the engine's arrival
        router = peer;
        in_port = pport;
    }
}
