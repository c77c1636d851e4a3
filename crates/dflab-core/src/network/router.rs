//! A router hop: arrival in an input buffer, routing at the head of the input VC, the output
//! stage (round robin over the VCs whose head has downstream credits for the whole packet),
//! credit return, and delivery at the destination node. The crossbar is in `arbiter.rs`.

use super::fabric::{request, InPort};
use crate::engine::event::Event;
use crate::engine::prefetch::HopHint;
use crate::engine::sim::{ctx, Fallible, Simulation};
use crate::error::{Error, Result};
use crate::network::{CreditLedger, PacketArena, PacketId, PacketQueues};
use crate::routing::{Hooks, Hop, RouterView, Routing};
use crate::units::Time;

impl<R: Routing> Simulation<R> {
    /// Packet `id` arrives at input (`port`, `vc`) of `router`; `pi` is the port's index.
    /// `hint`: the packet's hop here, if the near prefetch stage found it (see `HopHint`).
    /// `always`: the event loop's hottest handler (a call cost it its registers).
    #[inline(always)]
    pub(crate) fn on_arrive(
        &mut self,
        router: u32,
        port: u16,
        vc: u8,
        id: PacketId,
        pi: usize,
        hint: HopHint,
    ) -> Fallible {
        debug_assert_eq!(pi, self.fab.pidx(router, port));
        let qi = pi * self.fab.vcs + vc as usize;
        let host = self.core.topo.is_host_port(port);
        // The input port's line, read once for this handler and the grant (routing reads no
        // port line).
        let inp = InPort::of(&self.fab.ports[pi]);
        if R::HOOKS.has(Hooks::ARRIVE) {
            self.rt.alg.on_arrive(&mut ctx!(self, router, port), self.core.pkts.get_mut(id));
            self.flush_outbox(router, port);
        }
        // One lookup of the packet for everything this hop reads and writes in it.
        let (flits, at_dst) = {
            let first_global = self.core.topo.first_global_port();
            let pkt = self.core.pkts.get_mut(id);
            pkt.arrival = self.core.now;
            if !host {
                pkt.hops += 1;
                pkt.global_hops += (port >= first_global) as u8;
            }
            (pkt.flits as u32, pkt.dst_router == router)
        };
        if at_dst {
            self.core.pkts.prefetch_stamps(id); // read when it is delivered
        }
        if self.core.check.on {
            if host {
                self.core.check.nic_inflight_flits[router as usize * self.core.topo.p + port as usize] -= flits;
            } else {
                let (ur, up) = inp.peer;
                let ui = self.fab.qidx(ur, up, vc as usize);
                self.core.check.inflight_flits[ui] -= flits;
            }
        }
        if host && self.core.min_path_probe.is_some() {
            self.probe_min_path(router, id);
        }
        if R::HOOKS.has(Hooks::NET_OCCUPANCY) && !host {
            let (ur, up) = inp.peer;
            let ui = self.fab.qidx(ur, up, vc as usize);
            self.fab.credits.wire_in(ui, flits);
        }
        if self.core.t.booksim {
            return self.arrive_booksim(router, port, vc, id, qi, hint);
        }
        if self.fab.wait_len[router as usize] == 0 && !self.core.t.sst {
            // Idle router (the common case below saturation). Every non-empty input VC has its
            // head's request in the list (checked with `run.check`), so with no request waiting
            // every input VC is empty: the packet is the only request and fits its buffer. It is
            // routed and offered the crossbar at once, without passing through the input queue
            // and the request list, and without reading the queue's state (an L2 miss on most
            // arrivals when the network's state outgrows the cache). Same decisions and timing
            // as the general path below (queue, request, arbitrate a list of one), fewer steps.
            debug_assert!(self.fab.inq.is_empty(qi));
            let hop = self.route(router, port, id, hint)?;
            let e = request(port, vc, hop);
            let refused = self.grant(router, e, pi, inp, id, false)?;
            if let Some(refused) = refused.refused() {
                self.fab.inq.push(qi, id, flits);
                let e = self.reroute(router, e, id)?.unwrap_or(e);
                self.fab.push_request(router, e);
                if let Some(t) = refused {
                    self.wake_arbiter(router, t);
                }
            }
            return Ok(());
        }
        let cap = self.core.t.in_caps[inp.class as usize % 3];
        if self.fab.inq.flits(qi) + flits > cap {
            return Err(Error::Invariant(format!(
                "input buffer overflow at router {router} port {port} VC {vc} ({} + {flits} > {cap} flits)",
                self.fab.inq.flits(qi),
            ))
            .into());
        }
        if !self.fab.inq.push(qi, id, flits) {
            return Err(Error::Invariant(format!("input queue of router {router} port {port} VC {vc} is full")).into());
        }
        if self.fab.inq.len(qi) == 1 {
            let hop = self.route(router, port, id, hint)?;
            self.fab.push_request(router, request(port, vc, hop));
            if self.core.t.sst {
                // The crossbar's next tick (network/sst.rs).
                let at = self.tick_after(self.core.now);
                self.wake_pass(router, at);
            } else {
                self.on_arbitrate(router, 0)?;
            }
        }
        Ok(())
    }

    /// Route the packet that just became the head of input (port, vc) and file its crossbar
    /// request.
    pub(crate) fn route_head(&mut self, router: u32, in_port: u16, vc: usize, id: PacketId) -> Fallible {
        let hop = self.route(router, in_port, id, HopHint::NONE)?;
        self.fab.push_request(router, request(in_port, vc as u8, hop));
        Ok(())
    }

    /// Ask the routing for the output of packet `id` at the head of input (port, vc), check the
    /// choice and record it in the packet. `hint`: the hop the near prefetch stage found for
    /// this packet at this router (a pure table hop), used instead of finding it again.
    #[inline(always)]
    pub(crate) fn route(&mut self, router: u32, in_port: u16, id: PacketId, hint: HopHint) -> Result<Hop> {
        // Most hops come from the first-port table: no view, no congestion read (MIN, and the
        // Valiant and UGAL families after their source router).
        let hinted = if R::PREDICTION_IS_ROUTE { hint.for_packet(id) } else { None };
        let table_hop = match hinted {
            Some(hop) => {
                debug_assert_eq!(
                    Some(hop),
                    self.rt.alg.route_without_view(
                        &self.core.topo,
                        router,
                        in_port,
                        &mut self.core.pkts.get(id).clone()
                    )
                );
                Some(hop)
            }
            None => self.rt.alg.route_without_view(&self.core.topo, router, in_port, self.core.pkts.get_mut(id)),
        };
        let Hop { port, vc: out_vc } = match table_hop {
            Some(hop) => hop,
            None => self.route_with_view(router, in_port, id),
        };
        self.check_hop(router, id, Hop { port, vc: out_vc })
    }

    /// Record hop `hop` chosen for packet `id` at `router` in the packet after checking it
    /// against the routing's declared bounds; returns the hop as recorded (a VC above a forced
    /// `routing.vcs` folded onto the top VC).
    #[inline(always)]
    pub(crate) fn check_hop(&mut self, router: u32, id: PacketId, hop: Hop) -> Result<Hop> {
        let Hop { port, vc: out_vc } = hop;
        let (p, radix, max_hops) = (self.core.topo.p, self.fab.radix, self.rt.max_hops);
        let pkt = self.core.pkts.get_mut(id);
        pkt.out_port = port;
        // A forced `routing.vcs` below the algorithm's need folds the upper VCs together.
        pkt.out_vc = out_vc.min(self.rt.top_vc);
        let recorded = Hop { port, vc: pkt.out_vc };
        // The hop bound: a VC the routing declares; ejection only at the destination node's port;
        // otherwise a router-to-router port, within the declared number of hops.
        let ok = (out_vc as usize) < self.rt.alg_vcs
            && if (port as usize) < p {
                router as usize * p + port as usize == pkt.dst as usize
            } else {
                (port as usize) < radix && (pkt.hops as u32) < max_hops
            };
        if !ok {
            return Err(self.bad_route(router, id, port, out_vc));
        }
        Ok(recorded)
    }

    /// The routing's choice for packet `id` through a full context (out of line, so that the
    /// table hops of [`Simulation::route`] save few registers).
    #[inline(never)]
    fn route_with_view(&mut self, router: u32, in_port: u16, id: PacketId) -> Hop {
        let hop = self.rt.alg.route(&mut ctx!(self, router, in_port), self.core.pkts.get_mut(id));
        self.flush_outbox(router, in_port);
        hop
    }

    /// The error for a route that [`Simulation::route`] refused (kept out of the hot path: the
    /// message formatting made every call save more registers).
    #[cold]
    #[inline(never)]
    fn bad_route(&self, router: u32, id: PacketId, port: u16, out_vc: u8) -> Error {
        let pkt = self.core.pkts.get(id);
        let (radix, alg_vcs) = (self.fab.radix, self.rt.alg_vcs);
        Error::Invariant(if out_vc as usize >= alg_vcs {
            format!(
                "{} chose VC {out_vc} at router {router} but declares {alg_vcs} VCs",
                self.core.cfg.routing.algorithm
            )
        } else if port as usize >= radix {
            format!("router {router} routed to port {port} of radix {radix}")
        } else if self.core.topo.is_host_port(port) {
            format!("packet for node {} ejected at router {router} port {port}", pkt.dst)
        } else {
            format!(
                "hop bound: packet {}->{} would take hop {} (> {}) at router {router}",
                pkt.src,
                pkt.dst,
                pkt.hops + 1,
                self.rt.max_hops
            )
        })
    }

    /// Wake output `port` at `at` (none may be pending). Arbitrary delay: the timer wheel.
    fn schedule_port_wake(&mut self, router: u32, port: u16, at: Time) {
        let pi = self.fab.pidx(router, port);
        self.fab.ports[pi].wake = true;
        self.fab.ports[pi].wake_at = at;
        self.core.q.at(at, Event::PortWake { router, port, pi: pi as u32 });
    }

    pub(crate) fn on_xbar_done(&mut self, router: u32, port: u16, vc: u8, id: PacketId) -> Fallible {
        let qi = self.fab.qidx(router, port, vc as usize);
        let flits = self.core.flits_of(id);
        let pushed = self.fab.outq.push(qi, id, flits);
        debug_assert!(pushed, "output space was reserved at grant");
        let pi = self.fab.pidx(router, port);
        self.fab.ports[pi].queued += 1;
        if self.fab.wait_len[router as usize] > 0 {
            self.on_arbitrate(router, 0)?;
        }
        self.try_send(router, port, pi, false)
    }

    /// Output arbitration: round robin over VCs whose head packet fits the downstream credits.
    /// `pi` is the port's index; `woken`: called for this port's PortWake, whose pending flag it
    /// clears.
    ///
    /// The port's line is borrowed once for the whole call, beside the queues and credits
    /// (disjoint fields), and the port's VC queues are scanned as one slice.
    pub(crate) fn try_send(&mut self, router: u32, port: u16, pi: usize, woken: bool) -> Fallible {
        debug_assert_eq!(pi, self.fab.pidx(router, port));
        let now = self.core.now;
        let vcs = self.fab.vcs;
        let st = &mut self.fab.ports[pi];
        if woken {
            st.wake = false;
        }
        if st.busy > now {
            if !st.wake && st.queued > 0 {
                let at = st.busy;
                st.wake = true;
                st.wake_at = at;
                self.core.q.at(at, Event::PortWake { router, port, pi: pi as u32 });
            }
            return Ok(());
        }
        if st.queued == 0 {
            return Ok(());
        }
        let class = st.class as usize & 3;
        let host = class == 0;
        let qb = pi * vcs;
        let (uniform, rr) = (self.core.t.uniform_flits, st.rr as usize);
        let chosen =
            pick_rr(&mut self.fab.outq, &mut self.fab.credits, &self.core.pkts, uniform, qb, vcs, rr, host, now);
        let Some((vc, id, flits)) = chosen else {
            if let Some(ports) = &mut self.core.ports {
                ports.on_blocked(pi, now);
            }
            self.send_blocked(router, port);
            return Ok(());
        };
        let qi = qb + vc;
        // Only a buffer that had no room for another packet can have blocked a crossbar request.
        let largest = self.core.t.packet_flits as u32;
        let was_full = if self.core.t.shared_out {
            leave_shared(&mut self.fab.credits, qb, vcs, qi, flits, largest, self.core.t.out_cap, !host)
        } else {
            self.fab.credits.leave_out(qi, flits, largest, self.core.t.out_cap, !host)
        };
        let ser = self.core.t.ser_of(class, flits);
        st.queued -= 1;
        st.rr = if vc + 1 == vcs { 0 } else { vc as u8 + 1 };
        st.busy = now + ser;
        let ((pr, pp), c) = (st.peer, st.peer_port);
        // At most one pending wake per port: a send triggered by a credit or the crossbar while
        // a wake is pending must not add a second one (they would multiply under saturation).
        let wake = st.queued > 0 && !st.wake;
        if wake {
            st.wake = true;
            st.wake_at = now + ser;
        }
        self.onto_link(class, qi, vc, id, flits, (pr, pp), c, ser + self.core.t.eject_lat);
        if wake {
            let ev = Event::PortWake { router, port, pi: pi as u32 };
            match uniform {
                // One packet-time later: the fixed-delay lane.
                Some(_) => self.core.q.push(self.core.lanes.port_wake[class], ev),
                None => self.core.q.at(now + ser, ev),
            }
        }
        if was_full && self.fab.wait_len[router as usize] > 0 {
            // Output buffer space was freed at this port.
            self.on_arbitrate(router, super::fabric::freed_bit(port))?;
        }
        Ok(())
    }

    /// Packet `id` of `flits` flits leaves output VC queue `qi` (VC `vc`) for its link now, whose
    /// far end is `peer` (port index `peer_port`): on a host link (`class` 0) it reaches its node
    /// `eject` later, otherwise it arrives at the next router one hop later.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn onto_link(
        &mut self,
        class: usize,
        qi: usize,
        vc: usize,
        id: PacketId,
        flits: u32,
        peer: (u32, u16),
        peer_port: u32,
        eject: Time,
    ) {
        if let Some(ports) = &mut self.core.ports {
            let src = self.core.pkts.get(id).src;
            ports.on_send(qi / self.fab.vcs, src, flits as u64 * self.core.t.flit_bytes, self.core.now);
        }
        if class == 0 {
            self.deliver(id, self.core.now + eject);
            return;
        }
        if self.core.check.on {
            self.core.check.inflight_flits[qi] += flits;
        }
        let ev = Event::Arrive { router: peer.0, port: peer.1, vc: vc as u8, pkt: id, pi: peer_port };
        let (lane, delay) = (self.core.lanes.arrive[class], self.core.t.link[class]);
        self.core.send_over_link(class, lane, delay, ev, peer.0);
    }

    /// Every head packet of output `port` waits for credits: wake the port at the earliest
    /// return on its way, or mark it so that the next return wakes it.
    #[inline(never)]
    fn send_blocked(&mut self, router: u32, port: u16) {
        let pi = self.fab.pidx(router, port);
        let vcs = self.fab.vcs;
        let next = (0..vcs)
            .filter(|&v| !self.fab.outq.is_empty(pi * vcs + v))
            .filter_map(|v| self.fab.credits.next_return(pi * vcs + v))
            .min();
        match next {
            Some(t) if !self.fab.ports[pi].wake => self.schedule_port_wake(router, port, t),
            Some(_) => {}
            None => {
                for v in 0..vcs {
                    self.fab.credits.set_watched(pi * vcs + v, true);
                }
            }
        }
    }

    /// `run.decision_probes`: the total occupancy (output buffer and used credits, every VC) of
    /// the output ports along the minimal path of packet `id`, new at its source `router` (with
    /// parallel links between groups, the path by the first gateway).
    #[inline(never)]
    fn probe_min_path(&mut self, router: u32, id: PacketId) {
        let (topo, vcs, now) = (&self.core.topo, self.fab.vcs, self.core.now);
        let dst = self.core.pkts.get(id).dst_router;
        if topo.group_of(dst) == topo.group_of(router) {
            return;
        }
        let (mut r, mut total) = (router, 0u64);
        while r != dst {
            let port = match topo.minimal_first_port(r, dst) {
                Some((port, _)) => port,
                None => {
                    // Parallel links: the first gateway's.
                    let grp = topo.group_of(r);
                    let (gi, k) = topo.gateways(grp, topo.group_of(dst))[0];
                    let gw = grp * topo.a as u32 + gi as u32;
                    if gw == r {
                        topo.first_global_port() + k
                    } else {
                        topo.local_port_to(r, gw, grp)
                    }
                }
            };
            let q = (r as usize * topo.radix + port as usize) * vcs;
            total += (0..vcs).map(|vc| self.fab.credits.occupancy(q + vc, now) as u64).sum::<u64>();
            let Some((next, _)) = topo.peer(r, port) else { return };
            r = next;
        }
        let p = self.core.min_path_probe.expect("called with the probe on");
        self.core.probes.add(p, router, now, total);
        self.core.probes.add(p + 1, router, now, 1);
    }

    /// The packet left input (port, vc): its credits travel back upstream. They are recorded
    /// with their arrival time; only a sender blocked on credits gets a wake-up event.
    /// `class`, `peer` and `peer_queues` are those of the input port's line.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn return_credit(
        &mut self,
        router: u32,
        in_port: u16,
        vc: usize,
        flits: u32,
        class: usize,
        peer: (u32, u16),
        peer_queues: u32,
    ) {
        if class == 0 {
            let node = router as usize * self.core.topo.p + in_port as usize;
            self.core.nic_credit_return(node, flits);
        } else {
            let (ur, up) = peer;
            let uq = peer_queues as usize + vc;
            let now = self.core.now;
            let at = now + self.core.t.credit_lat[class];
            if class == 2 && self.core.cross {
                // Over a global link: delivered to the upstream ledger at the window's barrier
                // (before `at`, which is at least a window away).
                if R::HOOKS.has(Hooks::NET_OCCUPANCY) {
                    self.fab.credits.mailed(uq, flits);
                }
                self.core.send_credits(at, uq, ur, up, flits);
                return;
            }
            if self.fab.credits.give_back(uq, now, at, flits) {
                // The upstream port waits for credits: wake it when this return arrives.
                let upi = self.fab.pidx(ur, up);
                let vcs = self.fab.vcs;
                let st = &mut self.fab.ports[upi];
                if !st.wake {
                    st.wake = true;
                    st.wake_at = at;
                    for v in 0..vcs {
                        self.fab.credits.set_watched(upi * vcs + v, false);
                    }
                    let ev = Event::PortWake { router: ur, port: up, pi: upi as u32 };
                    self.core.q.push(self.core.lanes.credit[class], ev);
                }
            }
        }
    }

    /// The packet started on its ejection link and reaches its node at `at`: record it now
    /// (no event needed), unless that is past the end of the run.
    pub(crate) fn deliver(&mut self, id: PacketId, at: Time) {
        if R::HOOKS.has(Hooks::DELIVER) {
            let (router, port) = {
                let p = self.core.pkts.get(id);
                (p.dst_router, p.out_port)
            };
            self.rt.alg.on_deliver(&mut ctx!(self, router, port), self.core.pkts.get(id));
            self.flush_outbox(router, port);
        }
        if self.core.record_delivery(id, at) {
            self.delivered(id, at);
        }
    }

    /// A view of `router`'s congestion as its routing sees it (for tools and tests).
    pub fn router_view(&self, router: u32, in_port: u16) -> RouterView<'_> {
        RouterView::new(&self.core.topo, router, in_port, self.core.now, self.fab.vcs, &self.fab.credits)
    }
}

/// `CreditLedger::leave_out` for a shared output queue (the port's VC queues `qb..qb + vcs`):
/// whether the port's queue, which is what a request can have found full, was full for a
/// packet of `largest` flits. Out of line: per-VC buffers are the hot path.
#[cold]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn leave_shared(
    credits: &mut CreditLedger,
    qb: usize,
    vcs: usize,
    qi: usize,
    flits: u32,
    largest: u32,
    out_cap: u32,
    take: bool,
) -> bool {
    let before = credits.port_out_flits(qb, vcs);
    credits.leave_out(qi, flits, 0, u32::MAX, take);
    before + largest > out_cap
}

/// Output arbitration's choice at `now`: round robin from VC `rr` over the VC queues `qb..qb +
/// vcs` of one port, the first head that fits the downstream credits (an ejection port
/// (`host`) needs none); popped, as (VC, packet, flits). With packets of one size
/// (`uniform`), the heads need not be loaded to check credits.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn pick_rr(
    outq: &mut PacketQueues,
    credits: &mut CreditLedger,
    pkts: &PacketArena,
    uniform: Option<u16>,
    qb: usize,
    vcs: usize,
    rr: usize,
    host: bool,
    now: Time,
) -> Option<(usize, PacketId, u32)> {
    match uniform {
        Some(f) => {
            let f = f as u32;
            outq.pop_rr(qb, vcs, rr, f, |q| host || credits.covers(q, now, f)).map(|(v, id)| (v, id, f))
        }
        None => outq.pop_rr_sized(qb, vcs, rr, |q, head| {
            let f = pkts.get(head).flits as u32;
            (host || credits.covers(q, now, f)).then_some(f)
        }),
    }
}
