//! What a routing hook sees and can do: the router's congestion view ([`RouterView`]), its
//! random stream and state, latency-bearing sends ([`Ctx::send`]), a timer ([`Ctx::wake_at`]),
//! delayed-visibility published signals ([`Ctx::publish`], [`Ctx::signal`]), named probes
//! ([`Ctx::count`]) and, for oracles only, other routers' queues ([`Ctx::oracle`]).

use super::{Hooks, Rng, Routing};
use crate::network::CreditLedger;
use crate::stats::Probes;
use crate::topology::Topology;
use crate::units::Time;

/// The port of a message sent to a router directly rather than over one of its links.
pub const NO_PORT: u16 = u16::MAX;

/// What a router knows when it routes the packet at the head of one of its input VCs. The
/// congestion state is reached only through the methods, so the engine may change its memory
/// layout freely.
pub struct RouterView<'a> {
    pub topo: &'a Topology,
    pub router: u32,
    pub group: u32,
    /// Index of the router inside its group.
    pub index: u32,
    pub in_port: u16,
    pub now: Time,
    pub vcs: usize,
    /// Flits in output buffers (including packets crossing the crossbar) and free downstream
    /// credits (with returns still in flight), per (router, port, VC).
    credits: &'a CreditLedger,
}

impl<'a> RouterView<'a> {
    /// `credits` covers the whole network, indexed `(router*radix + port)*vcs + vc`.
    pub fn new(
        topo: &'a Topology,
        router: u32,
        in_port: u16,
        now: Time,
        vcs: usize,
        credits: &'a CreditLedger,
    ) -> RouterView<'a> {
        RouterView {
            topo,
            router,
            group: topo.group_of(router),
            index: topo.index_in_group(router),
            in_port,
            now,
            vcs,
            credits,
        }
    }

    #[inline]
    fn at(&self, router: u32, port: u16, vc: usize) -> u32 {
        let i = (router as usize * self.topo.radix + port as usize) * self.vcs + vc;
        self.credits.occupancy(i, self.now)
    }

    /// Congestion signal of one output VC of this router: output-buffer flits plus used credits
    /// (the Q-adaptive reference code's `adp_select_port`).
    #[inline]
    pub fn occupancy(&self, port: u16, vc: usize) -> u32 {
        self.at(self.router, port, vc)
    }

    /// The same summed over every VC of the port.
    #[inline]
    pub fn port_occupancy(&self, port: u16) -> u32 {
        let base = (self.router as usize * self.topo.radix + port as usize) * self.vcs;
        self.credits.port_occupancy(base, self.vcs, self.now)
    }

    /// Net occupancy of a port over every VC: the occupancy without the flits on the wire and
    /// the credits on their way back (needs [`Hooks::NET_OCCUPANCY`], else the wire counts 0).
    #[inline]
    pub fn port_net_occupancy(&self, port: u16) -> u32 {
        let base = (self.router as usize * self.topo.radix + port as usize) * self.vcs;
        (0..self.vcs).map(|vc| self.credits.net_occupancy(base + vc)).sum()
    }

    /// The DGB code's estimate of [`Self::port_net_occupancy`]: the occupancy less the flits
    /// the port sent within twice its link's latency (`network/sent_window.rs`; needs
    /// [`Hooks::NET_OCCUPANCY`], else nothing is subtracted).
    #[inline]
    pub fn port_window_occupancy(&self, port: u16) -> u32 {
        let base = (self.router as usize * self.topo.radix + port as usize) * self.vcs;
        self.credits.window_occupancy(base, self.vcs, self.now)
    }

    /// Whether the packet being routed entered the network at this router.
    #[inline]
    pub fn is_source_router(&self) -> bool {
        self.topo.is_host_port(self.in_port)
    }
}

/// **Oracle only** ([`Hooks::ORACLE`]): the congestion of any router's ports, read instantly.
/// No real router can do this; only algorithms declared as oracles (UGAL-G) get one.
pub struct OracleView<'a> {
    topo: &'a Topology,
    now: Time,
    vcs: usize,
    credits: &'a CreditLedger,
}

impl OracleView<'_> {
    /// The congestion signal of output (`port`, `vc`) of `router`.
    #[inline]
    pub fn occupancy(&self, router: u32, port: u16, vc: usize) -> u32 {
        let i = (router as usize * self.topo.radix + port as usize) * self.vcs + vc;
        self.credits.occupancy(i, self.now)
    }

    /// The same summed over every VC of the port.
    #[inline]
    pub fn port_occupancy(&self, router: u32, port: u16) -> u32 {
        let base = (router as usize * self.topo.radix + port as usize) * self.vcs;
        self.credits.port_occupancy(base, self.vcs, self.now)
    }

    /// [`RouterView::port_net_occupancy`] of any router's port.
    #[inline]
    pub fn port_net_occupancy(&self, router: u32, port: u16) -> u32 {
        let base = (router as usize * self.topo.radix + port as usize) * self.vcs;
        (0..self.vcs).map(|vc| self.credits.net_occupancy(base + vc)).sum()
    }

    /// [`RouterView::port_window_occupancy`] of any router's port.
    #[inline]
    pub fn port_window_occupancy(&self, router: u32, port: u16) -> u32 {
        let base = (router as usize * self.topo.radix + port as usize) * self.vcs;
        self.credits.window_occupancy(base, self.vcs, self.now)
    }
}

/// Where a control message goes. Every message takes the latency of the path it travels
/// (output, link and input latency of each link, as credits do) and uses no bandwidth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dest {
    /// Back over the input link of the current hook to the router it came from, arriving on
    /// that router's output port.
    Upstream,
    /// Over output `port` of this router to its neighbour, arriving on the neighbour's input.
    Port(u16),
    /// To every other router of this router's group over their local links.
    Group,
    /// To `router` directly after `delay` ps, arriving on [`NO_PORT`] (a message to another
    /// group faster than its global links makes the routing an oracle).
    Router { router: u32, delay: Time },
}

/// What the hooks of one call asked the engine to do once they return (kept by the engine and
/// reused, so that sending allocates nothing after warm-up).
pub struct Outbox<M> {
    pub(crate) sends: Vec<(Dest, M)>,
    /// The earliest timer asked for in the call.
    pub(crate) timer: Option<Time>,
}

impl<M> Default for Outbox<M> {
    fn default() -> Self {
        Outbox { sends: Vec::new(), timer: None }
    }
}

impl<M> Outbox<M> {
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.sends.is_empty() && self.timer.is_none()
    }
}

/// Delayed-visibility signals: each router publishes a 64-bit value (flags, counters) whose
/// changes other routers see only after a delay (Piggyback's saturation flags, visible to the
/// group after the local link latency). Stored as the history of changes within the longest
/// delay any reader uses (like the credit ledger's returns): no event per change or per cycle.
pub struct Signals {
    /// Per router, the changes as (time, value), oldest first; the value before the first is 0.
    hist: Vec<std::collections::VecDeque<(Time, u64)>>,
    /// Longest delay a reader may ask for: older history is dropped.
    horizon: Time,
}

impl Signals {
    pub fn new(routers: usize, horizon: Time) -> Signals {
        Signals { hist: vec![Default::default(); routers], horizon }
    }

    /// `router` publishes `value` at `now`.
    pub fn publish(&mut self, router: u32, now: Time, value: u64) {
        let h = &mut self.hist[router as usize];
        match h.back_mut() {
            Some(last) if last.1 == value => return,
            Some(last) if last.0 == now => last.1 = value,
            _ => h.push_back((now, value)),
        }
        // Drop changes superseded before anything a reader can still ask for.
        let keep_from = now.saturating_sub(self.horizon);
        while h.len() > 1 && h[1].0 <= keep_from {
            h.pop_front();
        }
    }

    /// The value `router` had published by `at` (0 before its first publication).
    pub fn value_at(&self, router: u32, at: Time) -> u64 {
        let h = &self.hist[router as usize];
        h.iter().rev().find(|&&(t, _)| t <= at).map_or(0, |&(_, v)| v)
    }

    pub fn horizon(&self) -> Time {
        self.horizon
    }
}

/// The context of one routing hook at one router.
pub struct Ctx<'a, R: Routing> {
    pub view: RouterView<'a>,
    /// The router's own random stream (seeded from the experiment seed and the router id).
    pub rng: &'a mut Rng,
    /// The router's state.
    pub state: &'a mut R::RouterState,
    pub(crate) out: &'a mut Outbox<R::Msg>,
    pub(crate) signals: &'a mut Signals,
    pub(crate) probes: &'a mut Probes,
    pub(crate) credits: &'a CreditLedger,
}

impl<'a, R: Routing> Ctx<'a, R> {
    /// Send `msg` to `dest` (needs [`Hooks::MSG`]); it arrives through [`Routing::on_msg`].
    #[inline]
    pub fn send(&mut self, dest: Dest, msg: R::Msg) {
        const { assert!(R::HOOKS.has(Hooks::MSG), "a routing that sends messages declares Hooks::MSG") };
        self.out.sends.push((dest, msg));
    }

    /// Run [`Routing::on_timer`] at this router at `at` (needs [`Hooks::TIMER`]). A router has
    /// one timer: asking for an earlier time moves it, a later one is ignored while it is set.
    #[inline]
    pub fn wake_at(&mut self, at: Time) {
        const { assert!(R::HOOKS.has(Hooks::TIMER), "a routing that sets timers declares Hooks::TIMER") };
        debug_assert!(at >= self.view.now, "a timer in the past");
        self.out.timer = Some(self.out.timer.map_or(at, |t| t.min(at)));
    }

    /// Publish this router's signal value (see [`Signals`]).
    #[inline]
    pub fn publish(&mut self, value: u64) {
        self.signals.publish(self.view.router, self.view.now, value);
    }

    /// The signal value `router` had published `delay` ps ago (at most the signals' horizon,
    /// the longest link credit latency).
    #[inline]
    pub fn signal(&self, router: u32, delay: Time) -> u64 {
        debug_assert!(delay <= self.signals.horizon(), "signal delay beyond the horizon");
        self.signals.value_at(router, self.view.now.saturating_sub(delay))
    }

    /// Add `n` to probe `probe` (an index into [`crate::stats::ProbeSpec`]s the routing
    /// declared) for this router.
    #[inline]
    pub fn count(&mut self, probe: usize, n: u64) {
        self.probes.add(probe, self.view.router, self.view.now, n);
    }

    /// Add `n` to probe `probe` for another router than this one (a count about the packet's
    /// source, made where the packet is).
    #[inline]
    pub fn count_for(&mut self, probe: usize, router: u32, n: u64) {
        self.probes.add(probe, router, self.view.now, n);
    }

    /// Record this router's new `value` in trace probe `probe` (a [`crate::stats::ProbeKind::Trace`]).
    #[inline]
    pub fn record(&mut self, probe: usize, value: u64) {
        self.probes.record(probe, self.view.router, self.view.now, value);
    }

    /// Other routers' queues, read instantly (needs [`Hooks::ORACLE`]).
    #[inline]
    pub fn oracle(&self) -> OracleView<'a> {
        const { assert!(R::HOOKS.has(Hooks::ORACLE), "only a routing declared Hooks::ORACLE reads remote queues") };
        OracleView { topo: self.view.topo, now: self.view.now, vcs: self.view.vcs, credits: self.credits }
    }
}
