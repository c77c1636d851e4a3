//! One simulation: its subsystems, the event loop, and the dispatch of each event to its
//! handler. The subsystems are the routing-independent [`Core`] (clock, queue, packets, NICs,
//! statistics), the routers ([`Fabric`], whose behaviour is in `network/router.rs` and
//! `network/arbiter.rs`), the routing's runtime ([`RoutingRt`]: the algorithm, its per-router
//! states and streams, messages and timers) and the workload ([`Traffic`]).
//!
//! `Simulation<R>` is compiled once per routing type, so every routing call is direct and a
//! hook the routing does not declare compiles to nothing.

use std::time::Instant;

use rand::SeedableRng;
use serde::Serialize;

use super::core::Core;
use super::event::Event;
use super::footprint::{self, Footprint};
use super::observe::Observer;
use super::partition::{Cross, Partitions};
use super::prefetch::{HopHint, PREFETCH_FAR};
use super::stream_seed;
use super::timing::Timing;
use crate::config::Experiment;
use crate::error::{Error, Result};
use crate::network::fabric::{class_index, Fabric};
use crate::network::{Packet, PacketId, RoutingArea};
use crate::routing::ctx::Signals;
use crate::routing::{Dest, Hooks, Outbox, Rng, Routing, NO_PORT};
use crate::stats::{Execution, ProbeKind, ProbeResults, ProbeSpec, Probes, Series, Summary};
use crate::topology::Topology;
use crate::units::{ns_to_ps, ps_to_us, us_to_ps, Time};
use crate::workload::{Synthetic, Traffic, Workload, WorkloadCtx};

/// The event handlers' result: the error boxed, so that `Ok` is a null pointer returned in a
/// register (an unboxed `Error` made every handler return through memory and its caller test
/// a niche value there, several instructions per event).
pub(crate) type Fallible<T = ()> = std::result::Result<T, Box<Error>>;

/// The [`crate::routing::Ctx`] of a routing hook at `router` (arrival or message port
/// `in_port`), built from disjoint borrows of the simulation's parts.
macro_rules! ctx {
    ($sim:ident, $router:expr, $in_port:expr) => {
        $crate::routing::Ctx {
            view: $crate::routing::RouterView::new(
                &$sim.core.topo,
                $router,
                $in_port,
                $sim.core.now,
                $sim.fab.vcs,
                &$sim.fab.credits,
            ),
            rng: &mut $sim.rt.rngs[$router as usize],
            state: &mut $sim.rt.states[$router as usize],
            out: &mut $sim.rt.out,
            signals: &mut $sim.rt.signals,
            probes: &mut $sim.core.probes,
            credits: &$sim.fab.credits,
        }
    };
}
pub(crate) use ctx;

#[derive(Debug, Clone, Serialize)]
pub struct SimResult {
    pub summary: Summary,
    /// Wall-clock time and engine work (not part of the results).
    pub execution: Execution,
    pub series: Series,
    pub hops_histogram: Vec<u64>,
    /// The counts of the probes the routing and the workload declared.
    pub probes: ProbeResults,
    /// Whether the run reached a steady state, and warnings (derived from the summary and the
    /// series).
    pub diagnostics: crate::stats::Diagnostics,
    pub config: Experiment,
    /// The workload's own results (per job, per rank and iteration), when it has any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workload: Option<crate::workload::mpi::metrics::WorkloadReport>,
    /// Per router port: bytes by job and stall time (workload runs; `stats::ports`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ports: Option<Vec<crate::stats::ports::PortRow>>,
    /// Background traffic beside the jobs (`workload.background`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub background: Option<crate::workload::background::BackgroundReport>,
}

/// The routing algorithm with what the engine keeps for it.
pub struct RoutingRt<R: Routing> {
    pub alg: R,
    /// Per router: the routing's state and random stream.
    pub states: Vec<R::RouterState>,
    pub rngs: Vec<Rng>,
    /// Messages on their way, by slab index (see [`Event::Msg`]).
    pub msgs: Vec<R::Msg>,
    pub free_msgs: Vec<u32>,
    /// What the hook that just ran asked for.
    pub out: Outbox<R::Msg>,
    pub signals: Signals,
    /// Per router, the time of its pending timer (`Time::MAX`: none).
    pub timers: Vec<Time>,
    /// Upper bound on router-to-router hops (asserted on every hop).
    pub max_hops: u32,
    /// VCs the routing declares; every VC it picks must be below (checked on every hop).
    pub alg_vcs: usize,
    /// The highest VC, `vcs - 1`: a routing's VC above it is folded onto it.
    pub top_vc: u8,
}

pub struct Simulation<R: Routing> {
    pub(crate) core: Core,
    pub(crate) fab: Fabric,
    pub(crate) rt: RoutingRt<R>,
    pub(crate) traffic: Traffic,
    /// Index of the workload's first probe.
    probe_base: usize,
    /// Source queues that made room for a workload that asked (reported after its call).
    space: Vec<u32>,
    /// The run ended before its configured end (a finished workload): when.
    ended_at: Option<Time>,
    /// `run.steady_warmup` / `run.stop_when_saturated` (`engine/steady.rs`).
    pub(crate) steady: Option<super::steady::SteadyWatch>,
    /// Why the run stopped before its end.
    pub(crate) stopped: Option<&'static str>,
    /// The workload hears of deliveries (`Event::Delivered`): packets are held until then.
    hold_deliveries: bool,
    /// Windows, barriers and logical partitions (`partition.rs`).
    pub(crate) parts: Partitions,
    /// Who watches the run from outside (progress, interrupts).
    observer: Option<Observer>,
}

impl<R: Routing> Simulation<R> {
    /// `routing` on `topo` under the synthetic traffic of `cfg`.
    pub fn new(cfg: &Experiment, topo: Topology, routing: R) -> Result<Simulation<R>> {
        let traffic = Traffic::Synthetic(Box::new(Synthetic::new(cfg, &topo)?));
        Simulation::build(cfg, topo, routing, traffic)
    }

    /// `routing` on `topo` with `workload` instead of the synthetic traffic of `cfg`.
    pub fn with_workload(
        cfg: &Experiment,
        topo: Topology,
        routing: R,
        workload: Box<dyn Workload>,
    ) -> Result<Simulation<R>> {
        Simulation::build(cfg, topo, routing, Traffic::Custom(workload))
    }

    fn build(cfg: &Experiment, topo: Topology, routing: R, traffic: Traffic) -> Result<Simulation<R>> {
        cfg.validate()?;
        let declared = routing.vcs();
        let vcs = cfg.routing.vcs.unwrap_or_else(|| declared.max());
        let mut t = Timing::derive(cfg)?;
        if !traffic.uniform_packets() {
            t.uniform_flits = None;
            // Packets of several sizes: the ejection port's last packet-time is not known.
            t.eject_arm_lazy = None;
        }
        let routers = topo.routers();
        let what = format!("dfly({}, {}, {}, {}) with {vcs} VCs", topo.p, topo.a, topo.h, topo.g);
        Footprint::of(&topo, vcs, t.in_cap).check(footprint::limit()?, &what)?;
        if t.booksim && t.uniform_flits != Some(1) {
            return Err(Error::config(
                "network.timing",
                "\"booksim\" needs single-flit packets, and this workload sends packets of several sizes; allowed: \
                 \"link-busy\", \"sst\"",
            ));
        }
        let mut fab = Fabric::new(&topo, vcs, t.in_caps, t.out_cap);
        if R::HOOKS.has(Hooks::NET_OCCUPANCY) {
            // The DGB code's in-flight window: twice the link's latency (`network/sent_window.rs`).
            let n = &cfg.network;
            let span = [0, 2 * ns_to_ps(n.local_latency_ns), 2 * ns_to_ps(n.global_latency_ns), 0];
            let port = |p: usize| (p % topo.radix) as u16;
            // BookSim timing: one flit per cycle and port at a tick; an input's flits (and so
            // its credits) leave at most once per internal step.
            let (num, den) = t.speedup;
            let cycles = t.booksim.then_some(crate::network::sent_window::Cycles {
                cycle: t.tick,
                return_delay: t.credit_lat[1].max(t.credit_lat[2]),
                returns_per_cycle: num.div_ceil(den),
            });
            fab.credits.keep_sent(vcs, cycles, |p| span[class_index(topo.class_of_port(port(p)))]);
        }
        if t.booksim {
            fab.iq = crate::network::iq::Iq::new(routers, topo.radix, vcs);
        }
        let mut specs = routing.probes();
        let min_path_probe = cfg.run.decision_probes.then(|| {
            specs.push(ProbeSpec::new(
                "min_path_queue_sum",
                ProbeKind::Series,
                "flits on the minimal paths of new packets",
            ));
            specs.push(ProbeSpec::new("min_path_packets", ProbeKind::Series, "new inter-group packets"));
            specs.len() - 2
        });
        let probe_base = specs.len();
        specs.extend(traffic.probes());
        let probes = Probes::new(specs, routers, t.warm, t.end, us_to_ps(cfg.run.window_us).max(1));
        let horizon = t.credit_lat.iter().copied().max().unwrap_or(0);
        let rt = RoutingRt {
            states: (0..routers).map(|r| routing.router_state(&topo, r as u32)).collect(),
            rngs: (0..routers).map(|r| Rng::seed_from_u64(stream_seed(cfg.seed, 1, r as u64))).collect(),
            msgs: Vec::new(),
            free_msgs: Vec::new(),
            out: Outbox::default(),
            signals: Signals::new(routers, horizon),
            timers: vec![Time::MAX; routers],
            max_hops: routing.max_hops(),
            alg_vcs: declared.max(),
            top_vc: (vcs - 1) as u8,
            alg: routing,
        };
        let queues = routers * topo.radix * vcs;
        let header = RoutingArea::of(R::Header::default());
        // The lookahead: nothing crosses a global link faster than its credits (a packet also
        // takes its serialisation; with BookSim timing its credits take the credit delay
        // more). Without it (one group, or no latency) nothing is mailed.
        let lookahead = t.credit_lat[2].min(t.link[2]);
        let cross = topo.g > 1 && lookahead > 0;
        let window = if cross { lookahead } else { us_to_ps(1.0) };
        let parts = Partitions::new(1, topo.g, topo.a, window, peer_groups(&topo, &fab));
        let in_cap = t.in_caps[0];
        let steady = super::steady::SteadyWatch::of(cfg, t.warm, us_to_ps(cfg.run.window_us).max(1));
        let mut core = Core::new(cfg, topo, t, queues, header, probes, &traffic.fixed_delays(), cross);
        if let Some((node_job, jobs)) = traffic.node_jobs() {
            let ports = core.topo.routers() * core.topo.radix;
            core.ports = Some(crate::stats::ports::PortStats::new(ports, node_job, jobs));
        }
        if core.t.booksim {
            core.nic.per_vc(vcs, in_cap);
        }
        core.min_path_probe = min_path_probe;
        let hold_deliveries = traffic.wants_deliveries();
        let space = Vec::new();
        Ok(Simulation {
            core,
            fab,
            rt,
            traffic,
            probe_base,
            space,
            ended_at: None,
            steady,
            stopped: None,
            hold_deliveries,
            parts,
            observer: None,
        })
    }

    /// Report progress to `observer` while running; it may stop the run
    /// ([`crate::Error::Interrupted`]).
    pub fn observed(mut self, observer: Option<Observer>) -> Simulation<R> {
        self.observer = observer;
        self
    }

    /// Run in `count` logical partitions of whole groups (see `partition.rs`): the results are
    /// the same for every count. Needs more than one group, a global latency, a routing that is
    /// not an oracle and the synthetic workload (or `count` 1).
    pub fn partitioned(mut self, count: usize) -> Result<Simulation<R>> {
        let topo = &self.core.topo;
        let field = "partitions";
        if count == 0 || count > topo.g {
            return Err(Error::config(field, format!("{count}; allowed: 1 to {} (the groups)", topo.g)));
        }
        if count > 1 {
            let refuse = if !self.core.cross {
                Some("nothing crosses between groups with a latency (one group, or zero latencies)")
            } else if R::HOOKS.has(Hooks::ORACLE) {
                Some("the routing reads other routers' state at once (an oracle)")
            } else if !self.traffic.partitionable() {
                Some("the workload shares state between nodes")
            } else {
                None
            };
            if let Some(why) = refuse {
                return Err(Error::config(field, format!("{count}; allowed: 1 ({why})")));
            }
        }
        let peer_group = std::mem::take(&mut self.parts.peer_group);
        self.parts = Partitions::new(count, topo.g, topo.a, self.parts.window, peer_group);
        self.core.mailed = count > 1;
        let node_bounds: Vec<u32> = self.parts.router_bounds.iter().map(|&r| r * topo.p as u32).collect();
        for p in 1..count {
            self.parts.parked[p] = Some(self.core.queue_like(&self.core.workload_delays.clone()));
        }
        self.traffic.partition(&node_bounds);
        Ok(self)
    }

    /// Send one packet from `src` to `dst` through an otherwise empty network (no traffic is
    /// generated) and return it as delivered, with its delivery time. Used to check zero-load
    /// latency against the analytic sum of the path's fixed latencies.
    pub fn trace_one(self, src: u32, dst: u32) -> Result<(Packet, Time)> {
        Ok(self.trace(&[(src, dst)])?.remove(0))
    }

    /// Generate one packet per `(src, dst)` pair at time 0 (in this order; pairs with the same
    /// source queue at its NIC) into an otherwise empty network, run until every one is
    /// delivered and return them as delivered, with their delivery times, in delivery order.
    /// Used to check contention timing against hand-computed schedules.
    pub fn trace(mut self, pairs: &[(u32, u32)]) -> Result<Vec<(Packet, Time)>> {
        let nodes = self.core.topo.nodes() as u32;
        for &(src, dst) in pairs {
            if src >= nodes || dst >= nodes {
                return Err(Error::config("trace", format!("nodes are numbered 0 to {}", nodes - 1)));
            }
            let pkt = self.core.packet(src, dst, self.core.t.packet_flits);
            let id = self.core.pkts.alloc(pkt, 0, 0);
            self.core.nic.queue[src as usize].push_back(id);
            self.core.nic.node[src as usize].queued += 1;
            self.core.acct.in_source += 1;
            self.core.acct.generated_total += 1;
        }
        self.core.traced = Some(Vec::new());
        self.core.t.end = Time::MAX;
        for &(src, _) in pairs {
            if self.core.t.sst {
                // `LinkControl::send` arms a waiting NIC's timer.
                self.core.nic_arm_for_packet(src);
            } else {
                self.core.nic_try_send(src);
            }
        }
        // Until nothing is left to do (every packet delivered, or a deadlock reported).
        self.event_loop::<false>()?;
        let traced = self.core.traced.take().unwrap_or_default();
        if traced.len() < pairs.len() {
            return Err(Error::Deadlock(self.deadlock_report(None)));
        }
        Ok(traced)
    }

    pub fn run(mut self) -> Result<SimResult> {
        let started = Instant::now();
        for p in 0..self.parts.count() {
            self.switch_to(p);
            self.start_traffic();
        }
        // Only a workload that can finish ends a run early: the loop checks for it only then.
        let ended = if matches!(self.traffic, Traffic::Custom(_)) {
            self.event_loop::<true>()
        } else {
            self.event_loop::<false>()
        };
        ended?;
        self.core.now = self.ended_at.unwrap_or(self.core.t.end);
        if self.core.check.on {
            self.check_invariants()?;
        }
        let wall = started.elapsed().as_secs_f64();
        Ok(self.finish(wall))
    }

    /// Run windows until the end of the run (or, with `CAN_FINISH`, until a finished workload
    /// ends it, or until nothing is left to do): each window partition by partition, then its
    /// barrier (`partition.rs`), where the watchdog and the invariant checks look at the whole
    /// network.
    fn event_loop<const CAN_FINISH: bool>(&mut self) -> Result<()> {
        let check_every = us_to_ps(1.0);
        let mut next_check = if self.core.check.on { check_every } else { Time::MAX };
        let (watchdog, window) = (self.core.t.watchdog, self.parts.window);
        let count = self.parts.count();
        // The window of the next event (empty windows are skipped): the same for every
        // partition count, since every partition's next event is looked at.
        while let Some(next) = self.next_event_time() {
            // (The end moves when `run.steady_warmup` or `run.stop_when_saturated` decide.)
            let end = self.core.t.end;
            if next >= end {
                return Ok(());
            }
            let barrier = (next / window + 1).saturating_mul(window).min(end);
            for p in 0..count {
                self.switch_to(p);
                self.run_window::<CAN_FINISH>(barrier)?;
                if CAN_FINISH && self.ended_at.is_some() {
                    // What crossed partitions in this window (credits of global links) lands
                    // in its ledgers, so that the end state is whole.
                    self.barrier(barrier);
                    return Ok(());
                }
            }
            self.barrier(barrier);
            self.watch(barrier, watchdog)?;
            self.watch_steady(barrier);
            if let Some(o) = &mut self.observer {
                let traffic = &self.traffic;
                o.tick(barrier, end, self.core.acct.events, || traffic.progress())?;
            }
            if barrier >= next_check {
                self.check_invariants()?;
                next_check = barrier + check_every;
            }
        }
        // Nothing left to do before the end: packets still in the network are stuck.
        if self.core.acct.stuck_candidates() > 0 {
            return Err(Error::Deadlock(self.deadlock_report(None)));
        }
        // Or a workload's programs wait for each other.
        if let Some(why) = self.traffic.stalled() {
            return Err(Error::Deadlock(why));
        }
        Ok(())
    }

    /// The watchdog, at the barrier at `at`: a deadlock when packets are in the network and
    /// none moved (crossed a router or was delivered) for more than `watchdog`. Kept at barriers
    /// rather than per event: nothing on the hot path, the same for every partition count, and
    /// late by at most a window.
    fn watch(&mut self, at: Time, watchdog: Time) -> Result<()> {
        let acct = &mut self.core.acct;
        let moves = acct.traversals + acct.delivered_total;
        // A network empty at the last barrier had nothing to move: its packets entered since
        // (a closed workload's network stays empty while its ranks compute, and barriers are
        // skipped over empty windows).
        let empty_now = acct.stuck_candidates() == 0;
        let empty_then = std::mem::replace(&mut acct.empty_then, empty_now);
        if moves != acct.moves_then || acct.stuck_candidates() == 0 || empty_then {
            (acct.last_progress, acct.moves_then) = (at, moves);
        } else if at - acct.last_progress > watchdog {
            let since = acct.last_progress;
            self.core.now = at;
            return Err(Error::Deadlock(self.deadlock_report(Some(since))));
        }
        Ok(())
    }

    /// The time of the earliest pending event of any partition (the mailbox is empty between
    /// windows).
    fn next_event_time(&self) -> Option<Time> {
        let parked = self.parts.parked.iter().flatten().filter_map(|q| q.next_time());
        self.core.q.next_time().into_iter().chain(parked).min()
    }

    /// Handle the active partition's events before `stop`.
    #[inline(always)]
    fn run_window<const CAN_FINISH: bool>(&mut self, stop: Time) -> Result<()> {
        // The hop the near stage found for the arrival it was given, with that arrival's packet.
        let mut pending = HopHint::NONE;
        while self.core.q.next_time().is_some_and(|t| t < stop) {
            let Some((t, ev, next)) = self.core.q.pop_peek() else { break };
            self.core.now = t;
            self.core.acct.events += 1;
            let hint = pending;
            pending = match next {
                Some(next) => self.prefetch_near(&next),
                None => HopHint::NONE,
            };
            if let Some(far) = self.core.q.peek_far(PREFETCH_FAR) {
                self.prefetch_far(far);
            }
            self.dispatch_with(ev, hint).map_err(|e| *e)?;
            if CAN_FINISH && self.ended_at.is_some() {
                break;
            }
        }
        Ok(())
    }

    fn finish(self, wall: f64) -> SimResult {
        let c = self.core;
        // Loads are per compute endpoint: groups without compute nodes neither send nor receive.
        let nodes = c.topo.compute_endpoints();
        let bw = c.cfg.network.host_bw_gbps;
        let end = self.ended_at.unwrap_or(c.t.end);
        let mut summary = c.stats.summary(nodes, bw);
        summary.packets_in_flight_end = c.acct.in_network;
        summary.source_queue_end = c.acct.in_source;
        summary.sim_time_us = ps_to_us(end);
        summary.router_traversals = c.acct.traversals;
        if c.cfg.run.steady_warmup {
            summary.measure_start_us = Some(ps_to_us(c.stats.measure_start()));
        }
        summary.stopped = self.stopped.map(str::to_string);
        let traversals = c.acct.traversals;
        let execution = Execution {
            wall_s: wall,
            events: c.acct.events,
            ns_per_router_traversal: if traversals > 0 { wall * 1e9 / traversals as f64 } else { 0.0 },
            sim_us_per_wall_s: if wall > 0.0 { ps_to_us(end) / wall } else { 0.0 },
            partitions: self.parts.count(),
        };
        let series = c.stats.series(nodes, bw);
        let diagnostics = crate::stats::diagnose(&summary, &series, nodes);
        let workload = self.traffic.report(end);
        let background = self.traffic.background(end);
        let ports = c.ports.as_ref().map(|p| p.rows(&c.topo, end));
        SimResult {
            workload,
            background,
            ports,
            series,
            hops_histogram: c.stats.hops_histogram(),
            probes: c.probes.results(),
            summary,
            diagnostics,
            execution,
            config: c.cfg,
        }
    }

    /// Handle `ev`; `hint`: the hop the near prefetch stage found for it (an arrival under a
    /// table routing), which its routing would find again. `always`: plain `inline` once left
    /// it a call with a large frame per event.
    #[inline(always)]
    fn dispatch_with(&mut self, ev: Event, hint: HopHint) -> Fallible {
        match ev {
            Event::Workload { kind, a, b } => self.on_workload_wake(kind, a, b),
            Event::Msg { router, port, slot } => self.on_msg(router, port, slot),
            Event::NicWake { node } => {
                self.core.nic.node[node as usize].wake = false;
                if self.core.nic_try_send(node) {
                    self.source_space(node);
                }
            }
            Event::Arrive { router, port, vc, pkt, pi } => {
                return self.on_arrive(router, port, vc, pkt, pi as usize, hint)
            }
            Event::XbarDone { router, port, vc, pkt } => return self.on_xbar_done(router, port, vc, pkt),
            Event::PortWake { router, port, pi } => {
                if self.core.t.sst {
                    return self.on_port_timer(router, port, pi as usize);
                }
                if self.core.t.shared_out {
                    return self.on_shared_port_wake(router, port, pi as usize);
                }
                return self.try_send(router, port, pi as usize, true);
            }
            Event::ArbWake { router } => return self.on_arb_wake(router),
            Event::Clock => return self.on_clock(),
            Event::PortArm { router, port, pi } => self.on_port_arm(router, port, pi as usize),
            Event::NicArm { node } => self.core.on_nic_arm(node),
            Event::Timer { router } => self.on_timer(router),
            Event::Delivered { pkt } => self.on_delivered(pkt),
        }
        Ok(())
    }

    /// A `PortWake` with a shared output queue: the port sends, and the requests refused for
    /// credits, which wait for this wake-up (a return woke the watched port), are offered again
    /// as if space had freed.
    #[cold]
    #[inline(never)]
    fn on_shared_port_wake(&mut self, router: u32, port: u16, pi: usize) -> Fallible {
        self.try_send(router, port, pi, true)?;
        if self.fab.wait_len[router as usize] > 0 {
            return self.on_arbitrate(router, crate::network::fabric::freed_bit(port));
        }
        Ok(())
    }

    /// The crossbar pass of `router` that an `ArbWake` (or the SST clock) asked for.
    #[inline(always)]
    pub(crate) fn on_arb_wake(&mut self, router: u32) -> Fallible {
        let r = router as usize;
        if self.fab.arb_wake_at[r] == self.core.now {
            self.fab.arb_wake_at[r] = Time::MAX;
        }
        // Link-busy timing runs a pass at once where space frees (`try_send`).
        let freed = if self.core.t.sst { std::mem::take(&mut self.fab.arb_freed[r]) } else { 0 };
        if self.fab.wait_len[r] > 0 {
            return self.on_arbitrate(router, freed);
        }
        Ok(())
    }

    // ---- Workload ----------------------------------------------------------------------------

    fn start_traffic(&mut self) {
        match &mut self.traffic {
            Traffic::Synthetic(s) => s.start(&mut self.core),
            Traffic::Custom(w) => {
                let mut cx = WorkloadCtx { core: &mut self.core, probe_base: self.probe_base, space: &mut self.space };
                w.start(&mut cx);
                self.report_space();
            }
        }
    }

    #[inline(always)]
    fn on_workload_wake(&mut self, kind: u8, a: u32, b: u32) {
        match &mut self.traffic {
            Traffic::Synthetic(s) => s.on_wake(&mut self.core, kind, a, b),
            Traffic::Custom(w) => {
                let mut cx = WorkloadCtx { core: &mut self.core, probe_base: self.probe_base, space: &mut self.space };
                w.on_wake(&mut cx, kind, a, b);
                self.report_space();
            }
        }
    }

    /// A packet left the source queue of `node` while the workload waited for room there.
    fn source_space(&mut self, node: u32) {
        match &mut self.traffic {
            Traffic::Synthetic(s) => s.resume_round(&mut self.core, node),
            Traffic::Custom(_) => {
                self.space.push(node);
                self.report_space();
            }
        }
    }

    /// Tell a custom workload of the source queues that made room during its last call (which
    /// may make more).
    fn report_space(&mut self) {
        while let Some(node) = self.space.pop() {
            let Traffic::Custom(w) = &mut self.traffic else { return };
            let mut cx = WorkloadCtx { core: &mut self.core, probe_base: self.probe_base, space: &mut self.space };
            w.on_source_space(&mut cx, node);
        }
        self.check_finished();
    }

    /// Packet `id`, whose delivery at `at` is recorded, leaves the simulation: at once, or at
    /// `at` through the workload if it wants to hear of deliveries.
    #[inline(always)]
    pub(crate) fn delivered(&mut self, id: PacketId, at: Time) {
        if self.hold_deliveries {
            self.core.acct.held += 1;
            self.core.q.at(at, Event::Delivered { pkt: id });
        } else {
            self.core.pkts.release(id);
        }
    }

    fn on_delivered(&mut self, id: PacketId) {
        if let Traffic::Custom(w) = &mut self.traffic {
            let (pkt, stamps) = (*self.core.pkts.get(id), *self.core.pkts.stamps(id));
            let mut cx = WorkloadCtx { core: &mut self.core, probe_base: self.probe_base, space: &mut self.space };
            w.on_delivered(&mut cx, &pkt, &stamps);
        }
        self.core.acct.held -= 1;
        self.core.pkts.release(id);
        self.report_space();
    }

    /// A finished workload with nothing left in the network (or only background traffic, see
    /// [`Workload::ends_in_flight`]) ends the run now.
    fn check_finished(&mut self) {
        let acct = &self.core.acct;
        let empty = acct.in_network == 0 && acct.in_source == 0;
        if self.traffic.finished() && (empty || self.traffic.ends_in_flight()) && self.ended_at.is_none() {
            self.ended_at = Some(self.core.now);
        }
    }

    // ---- Routing hooks -----------------------------------------------------------------------

    /// Carry out what the hook that just ran at `router` (for arrival or message port
    /// `in_port`) asked for: its timer and its messages.
    #[inline(always)]
    pub(crate) fn flush_outbox(&mut self, router: u32, in_port: u16) {
        if !(R::HOOKS.has(Hooks::MSG) || R::HOOKS.has(Hooks::TIMER)) || self.rt.out.is_empty() {
            return;
        }
        if let Some(at) = self.rt.out.timer.take() {
            let r = router as usize;
            if at < self.rt.timers[r] {
                self.rt.timers[r] = at;
                self.core.q.at(at, Event::Timer { router });
            }
        }
        let mut sends = std::mem::take(&mut self.rt.out.sends);
        for (dest, msg) in sends.drain(..) {
            self.send_msg(router, in_port, dest, msg);
        }
        self.rt.out.sends = sends;
    }

    /// Send `msg` from `router` to `dest` (see [`Dest`]); `in_port` is the port of the hook.
    #[inline(always)]
    fn send_msg(&mut self, router: u32, in_port: u16, dest: Dest, msg: R::Msg) {
        match dest {
            Dest::Upstream => self.send_over(router, in_port, msg),
            Dest::Port(port) => self.send_over(router, port, msg),
            Dest::Group => {
                let topo = &self.core.topo;
                let index = topo.index_in_group(router);
                let ports: Vec<u16> =
                    (0..topo.a as u32).filter(|&t| t != index).map(|t| topo.local_port(index, t)).collect();
                for port in ports {
                    self.send_over(router, port, msg);
                }
            }
            Dest::Router { router: to, delay } => {
                let slot = self.store_msg(msg);
                let (time, ev) = (self.core.now + delay, Event::Msg { router: to, port: NO_PORT, slot });
                let topo = &self.core.topo;
                if self.core.cross && !R::HOOKS.has(Hooks::ORACLE) && topo.group_of(to) != topo.group_of(router) {
                    // Between groups a message is at least a window late (the contract of
                    // `partition.rs`); only an oracle sends faster, and runs one partition.
                    assert!(delay >= self.parts.window, "a message between groups must take at least the lookahead");
                    self.core.mail.timed.push(Cross { time, router: to, lane: None, ev, from: router });
                } else {
                    self.core.q.at(time, ev);
                }
            }
        }
    }

    /// `msg` over the link of `port` of `router`, to the router at its other end, with the
    /// link's credit latency.
    #[inline(always)]
    fn send_over(&mut self, router: u32, port: u16, msg: R::Msg) {
        let line = &self.fab.ports[self.fab.pidx(router, port)];
        let ((to, to_port), class) = (line.peer, line.class as usize & 3);
        debug_assert!(class != 0, "messages travel between routers only");
        let slot = self.store_msg(msg);
        let ev = Event::Msg { router: to, port: to_port, slot };
        let (lane, delay) = (self.core.lanes.credit[class], self.core.t.credit_lat[class]);
        self.core.send_over_link(class, lane, delay, ev, to);
    }

    #[inline(always)]
    fn store_msg(&mut self, msg: R::Msg) -> u32 {
        match self.rt.free_msgs.pop() {
            Some(i) => {
                self.rt.msgs[i as usize] = msg;
                i
            }
            None => {
                self.rt.msgs.push(msg);
                (self.rt.msgs.len() - 1) as u32
            }
        }
    }

    #[inline(always)]
    fn on_msg(&mut self, router: u32, port: u16, slot: u32) {
        let msg = self.rt.msgs[slot as usize];
        self.rt.free_msgs.push(slot);
        self.rt.alg.on_msg(&mut ctx!(self, router, port), port, msg);
        self.flush_outbox(router, port);
    }

    fn on_timer(&mut self, router: u32) {
        let r = router as usize;
        if self.rt.timers[r] != self.core.now {
            return; // moved earlier, and served then
        }
        self.rt.timers[r] = Time::MAX;
        self.rt.alg.on_timer(&mut ctx!(self, router, NO_PORT));
        self.flush_outbox(router, NO_PORT);
    }

    // ---- Accessors for checks and tests -------------------------------------------------------

    /// The state of `router` as its routing keeps it.
    pub fn router_state(&self, router: u32) -> &R::RouterState {
        &self.rt.states[router as usize]
    }
}

/// By port index: the group of the router at the other end of each port (0 for host ports).
fn peer_groups(topo: &Topology, fab: &Fabric) -> Vec<u32> {
    fab.ports.iter().map(|port| if port.class == 0 { 0 } else { topo.group_of(port.peer.0) }).collect()
}

#[cfg(test)]
mod tests {
    use super::Simulation;
    use crate::config::Experiment;
    use crate::routing::par::Par;
    use crate::topology::Topology;

    /// A run whose routers' LRU clocks reach `u32::MAX` (and renumber their stamps) ends exactly
    /// as one whose clocks did not: the same arbitration order, so the same summary.
    #[test]
    fn lru_clock_wrap_changes_nothing() {
        let doc = r#"{"routing": {"algorithm": "PAR"}, "traffic": {"load": 0.9},
            "topology": {"p": 2, "a": 4, "h": 2, "g": 9}, "run": {"warmup_us": 1.0, "measure_us": 2.0}}"#;
        let cfg = Experiment::from_json(doc).unwrap();
        let summary = |start: u32| {
            let topo = Topology::new(&cfg.topology).unwrap();
            let mut sim = Simulation::new(&cfg, topo, Par::new(Default::default())).unwrap();
            sim.fab.lru_clock = start;
            let s = sim.run().unwrap().summary;
            assert!(s.router_traversals > 10_000, "the clock wraps within the run");
            serde_json::to_string(&s).unwrap()
        };
        assert_eq!(summary(u32::MAX - 5_000), summary(0));
    }
}
