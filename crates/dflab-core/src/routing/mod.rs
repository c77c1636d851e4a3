//! Routing algorithms: one type per algorithm behind the [`Routing`] trait, registered once in
//! [`registry`]. A routing sees what a router can see (its own output-queue occupancy and used
//! credits, through [`RouterView`]) plus the packet header it may write; everything else it
//! learns through latency-bearing messages, timers and delayed signals ([`Ctx`]), unless it
//! declares itself an oracle ([`Hooks::ORACLE`]).
//!
//! The engine is compiled once per routing type (`Simulation<R>`), so the route call is a
//! direct, inlinable call, and a hook the routing does not declare in [`Routing::HOOKS`] is
//! compiled out. How to add an algorithm: `docs/dev/routing.md`.

pub mod acor;
pub mod acor_level;
pub mod adaptive;
pub mod contention;
pub mod ctx;
pub mod dgb;
pub mod dgb_piggyback;
pub mod dgb_table;
pub mod edgb;
pub mod harness;
pub mod imb;
pub mod minimal;
pub mod misroute;
pub mod par;
pub mod paths;
pub mod pb;
pub mod pb_acor;
pub mod q_adaptive;
pub mod q_routing;
pub mod q_table;
pub mod registry;
pub mod ugal;
pub mod ugal_global;
pub mod ugal_global_path;
pub mod ugal_l;
pub mod ugal_le;
pub mod val;
pub mod valiant;
pub mod vc;

use rand_xoshiro::Xoshiro256PlusPlus;

use crate::error::Result;
use crate::network::{Header, Packet};
use crate::topology::Topology;

pub use ctx::{Ctx, Dest, OracleView, Outbox, RouterView, NO_PORT};
pub use registry::{canonical_algorithm, ALGORITHM_NAMES};
pub use vc::VcCounts;

pub type Rng = Xoshiro256PlusPlus;

/// The next hop: an output port of the current router and the VC on the next link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hop {
    pub port: u16,
    pub vc: u8,
}

/// The hooks a routing asks the engine to call besides [`Routing::route`] (a set of flags; the
/// engine tests them at compile time, so an undeclared hook costs nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hooks(u8);

impl Hooks {
    pub const NONE: Hooks = Hooks(0);
    /// [`Routing::on_arrive`]: a packet reaches an input buffer of the router.
    pub const ARRIVE: Hooks = Hooks(1);
    /// [`Routing::on_depart`]: a packet that came from another router leaves this router's
    /// input buffer (its crossbar grant).
    pub const DEPART: Hooks = Hooks(2);
    /// [`Routing::on_deliver`]: a packet leaves its destination router for its node.
    pub const DELIVER: Hooks = Hooks(4);
    /// [`Routing::reroute_at_injection`]: asked again for the head packet of an injection
    /// (host-port) input VC whenever its crossbar request is refused.
    pub const REROUTE: Hooks = Hooks(8);
    /// [`Routing::on_timer`]: the router's timer (set with [`Ctx::wake_at`]) fires.
    pub const TIMER: Hooks = Hooks(16);
    /// [`Routing::on_msg`]: a control message sent with [`Ctx::send`] arrives.
    pub const MSG: Hooks = Hooks(32);
    /// The routing reads other routers' state instantly ([`Ctx::oracle`]) or sends messages
    /// faster than any link: an idealised reference, sequential only.
    pub const ORACLE: Hooks = Hooks(64);
    /// The engine counts, per output VC, the flits on the wire, for
    /// [`RouterView::port_net_occupancy`] (two counter updates per hop).
    pub const NET_OCCUPANCY: Hooks = Hooks(128);

    pub const fn with(self, other: Hooks) -> Hooks {
        Hooks(self.0 | other.0)
    }

    pub const fn has(self, other: Hooks) -> bool {
        self.0 & other.0 == other.0
    }
}

/// A control message type for routings that send none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoMsg {}

/// What [`registry`] hands an algorithm's constructor: the topology and the experiment.
pub struct BuildCtx<'a> {
    pub topo: &'a Topology,
    pub exp: &'a crate::config::Experiment,
}

/// One routing algorithm. Its value holds the parameters and read-only data; the per-router
/// state lives in the engine ([`Routing::RouterState`], one per router) and every hook gets the
/// router's state, random stream and congestion view through its [`Ctx`].
pub trait Routing: Sized + Send + Sync + 'static {
    /// The per-packet fields the algorithm keeps in the header (at most 32 bytes).
    type Header: Header;
    /// The per-router state (tables, counters, levels), one per router, stored by the engine.
    type RouterState: Send;
    /// The payload of the control messages the routing sends ([`NoMsg`] if none).
    type Msg: Copy + Send + std::fmt::Debug;
    /// The hooks the engine calls besides [`Routing::route`].
    const HOOKS: Hooks = Hooks::NONE;
    /// Whether [`Routing::predict_hop`] is exactly the hop `route` chooses (MIN): the engine
    /// then uses the hop it predicted one event ahead instead of routing again.
    const PREDICTION_IS_ROUTE: bool = false;

    /// VCs per link class the algorithm needs for deadlock freedom.
    fn vcs(&self) -> VcCounts;
    /// Upper bound on router-to-router hops; the engine asserts it on every hop.
    fn max_hops(&self) -> u32;
    /// The state of `router` at the start of a run.
    fn router_state(&self, topo: &Topology, router: u32) -> Self::RouterState;

    /// The probes the routing writes with [`Ctx::count`] (their index in this list is the
    /// probe's number), reported with the results.
    fn probes(&self) -> Vec<crate::stats::ProbeSpec> {
        Vec::new()
    }

    /// Choose the output port and VC for `pkt` at the head of an input VC of `cx.view.router`.
    fn route(&self, cx: &mut Ctx<'_, Self>, pkt: &mut Packet) -> Hop;

    /// The hop [`Routing::route`] would choose for `pkt` at `router` (arrived on `in_port`) when
    /// the algorithm can tell it from the packet and the topology's first-port table alone: no
    /// congestion read, no random draw, no state. The engine asks this first on every hop and
    /// builds a [`Ctx`] only on None, so an answer must equal `route`'s, with the same writes
    /// to `pkt`, and None must leave `pkt` unchanged (the harness's `walk` checks both).
    #[inline(always)]
    fn route_without_view(&self, _topo: &Topology, _router: u32, _in_port: u16, _pkt: &mut Packet) -> Option<Hop> {
        None
    }

    /// The hop of `pkt` at `router`, from the packet and the topology's first-port table alone,
    /// without writing anything, when the algorithm can tell it that way; asked one event
    /// ahead of the packet's arrival, to prefetch the output port's state (a hint: None costs
    /// only the prefetch).
    #[inline(always)]
    fn predict_hop(&self, _topo: &Topology, _router: u32, _pkt: &Packet) -> Option<Hop> {
        None
    }

    /// `pkt` reached an input buffer of `cx.view.router` on `cx.view.in_port` (before the engine
    /// records the arrival: `pkt.arrival` is still the previous router's).
    fn on_arrive(&self, _cx: &mut Ctx<'_, Self>, _pkt: &mut Packet) {}

    /// `pkt`, which arrived from another router on `cx.view.in_port`, leaves this router's input
    /// buffer now (its crossbar grant).
    fn on_depart(&self, _cx: &mut Ctx<'_, Self>, _pkt: &Packet) {}

    /// `pkt` leaves its destination router for its node: the hook runs as the packet starts on
    /// the ejection link (the context is the destination router's, at that time), one ejection
    /// (serialisation and link latency) before the statistics count it delivered.
    fn on_deliver(&self, _cx: &mut Ctx<'_, Self>, _pkt: &Packet) {}

    /// The head packet of injection input (`cx.view.in_port`, VC) was refused by the crossbar
    /// (its output buffer is full or a crossbar port is busy) while routed to `hop`: a new hop,
    /// or None to keep waiting for `hop`. Called at every refused attempt, never in transit.
    fn reroute_at_injection(&self, _cx: &mut Ctx<'_, Self>, _pkt: &mut Packet, _hop: Hop) -> Option<Hop> {
        None
    }

    /// How often the engine offers a refused injection head of a re-routing algorithm
    /// ([`Hooks::REROUTE`]) to the crossbar again, asking [`Routing::reroute_at_injection`]
    /// each time: Some(period) re-offers it every period while it is refused (FOGSim's
    /// allocator, which retries every cycle); None only when a pass runs for another reason
    /// (a freed buffer or port, an arrival).
    fn reroute_interval(&self) -> Option<crate::units::Time> {
        None
    }

    /// The router's timer ([`Ctx::wake_at`]) fired.
    fn on_timer(&self, _cx: &mut Ctx<'_, Self>) {}

    /// A control message arrived at `cx.view.router` on `port` ([`NO_PORT`] for a message sent
    /// to the router directly).
    fn on_msg(&self, _cx: &mut Ctx<'_, Self>, _port: u16, _msg: Self::Msg) {}
}

/// Build the algorithm `name` (any registered spelling) for `topo` as `exp` configures it, and
/// hand it with the topology to `visit`, which is generic over the routing type.
pub fn with_algorithm<V: registry::Visit>(
    name: &str,
    topo: Topology,
    exp: &crate::config::Experiment,
    visit: V,
) -> Result<V::Output> {
    registry::dispatch(name, topo, exp, visit)
}
