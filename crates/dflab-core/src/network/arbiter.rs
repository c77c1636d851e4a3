//! The crossbar: least-recently-granted arbitration over the router's (input port, VC) heads;
//! a winner needs its input and output crossbar ports free and room for the whole packet in
//! its output VC's buffer, holds both ports for the packet's transfer time, and its credits go
//! back upstream. `docs/dev/engine.md` explains the fast paths (silent grants, `FULL_SEEN`,
//! the idle-router path) and the invariants they keep.

use super::fabric::{freed_bit, FULL_SEEN, VC_BITS, VC_MASK};
use super::fabric::{request, request_full_seen, request_in_port, request_in_vc, request_port, request_vc, InPort};
use super::{Admit, PacketId};
use crate::engine::event::Event;
use crate::engine::sim::{ctx, Fallible, Simulation};
use crate::error::Error;
use crate::routing::{Hooks, Routing};
use crate::topology::NONE;
use crate::units::Time;

/// Outcome of one crossbar request.
pub(crate) enum Grant {
    /// Refused: a crossbar port is busy until the end of a transfer that schedules XbarDone
    /// (whose handler arbitrates); or, with a shared output queue, the output VC's credits
    /// fall short and none is on its way (the port is watched: a return wakes it, and its
    /// wake-up arbitrates).
    No,
    /// Refused: the output buffer has no room for the packet.
    Full,
    /// Refused: a crossbar port (input or output side) is busy until then from a silent grant,
    /// so the refused request needs an arbiter wake-up then. (Busy from a grant with XbarDone
    /// is `No`: that event runs the arbiter.)
    Busy(Time),
    /// Granted; the packet waits in the output buffer for XbarDone.
    Queued,
    /// Granted into the output buffer of a port whose link stays busy past the transfer: no
    /// XbarDone (see `grant`).
    QueuedSilent,
    /// Granted straight through an idle output port.
    Through,
}

impl Grant {
    /// None if granted; for a refusal, the time of the arbiter wake-up it needs, if any.
    #[inline(always)]
    pub(crate) fn refused(&self) -> Option<Option<Time>> {
        match self {
            Grant::Queued | Grant::QueuedSilent | Grant::Through => None,
            Grant::Busy(t) => Some(Some(*t)),
            Grant::No | Grant::Full => Some(None),
        }
    }
}

impl<R: Routing> Simulation<R> {
    /// Crossbar allocation: least-recently-granted (input port, VC) first; each winner takes its
    /// input and output crossbar ports for the packet's transfer time. Never inlined: a copy
    /// in the event loop (where XbarDone calls it) costs the loop registers.
    ///
    /// `freed`: the outputs whose buffer space freed just before this pass (a [`freed_bit`]
    /// mask: the port of `try_send`, or under SST timing every port that sent since the last
    /// tick). Only for those outputs can a pass find room in a buffer that an earlier attempt
    /// found full: buffer space frees nowhere else, and where it frees from full, a pass with
    /// its bit runs at once (at the next tick under SST timing). A request marked `FULL_SEEN`
    /// for any other output is therefore taken as still full without reading its queue, packet
    /// and credit state; its crossbar ports are still checked first, as the full attempt would,
    /// so that a busy port gives the same wake-up. Under saturation most attempts meet a full
    /// buffer, and most passes follow a send at one port of the router, so this is most of the
    /// arbiter's work.
    #[inline(never)]
    pub(crate) fn on_arbitrate(&mut self, router: u32, freed: u64) -> Fallible {
        let r = router as usize;
        let base = r * self.fab.wait_cap;
        // The earliest time a refused request's busy crossbar port frees.
        let mut busy_until = Time::MAX;
        // Whether a silent grant leaves a request that needs the next pass.
        let granted_silent = match self.fab.wait_len[r] {
            0 => return Ok(()),
            1 => {
                // The common case at low and moderate load: one request, no ordering needed.
                let e = self.fab.waiting[base];
                self.fab.wait_len[r] = 0;
                match self.try_grant(router, e, freed)? {
                    refused @ (Grant::No | Grant::Full | Grant::Busy(_)) => {
                        // Nothing else can have been requested: a refused grant routes nothing.
                        self.fab.waiting[base] = self.refused_entry(router, e, &refused, freed)?;
                        self.fab.wait_len[r] = 1;
                        if let Grant::Busy(t) = refused {
                            busy_until = t;
                        }
                        false
                    }
                    Grant::Queued => false,
                    // (A head routed by the grant is the only entry now.)
                    Grant::QueuedSilent | Grant::Through => self.fab.wait_len[r] > 0,
                }
            }
            n => {
                let n = n as usize;
                let (vcs, qbase) = (self.fab.vcs, r * self.fab.radix * self.fab.vcs);
                let sorted = self.fab.wait_sorted[r] as usize;
                order_requests(
                    &mut self.fab.waiting[base..base + n],
                    &self.fab.lru[qbase..],
                    vcs,
                    sorted,
                    self.core.t.injection_below,
                );
                let mut silent = false;
                // Refused entries are kept in place as the pass goes (a write at `kept <= k`
                // never overtakes the reads); new heads routed during the pass are appended
                // after the first n entries and moved down behind them at the end.
                let mut kept = 0;
                for k in 0..n {
                    let e = self.fab.waiting[base + k];
                    match self.try_grant(router, e, freed)? {
                        Grant::Queued => {}
                        Grant::QueuedSilent | Grant::Through => silent = true,
                        refused => {
                            if let Grant::Busy(t) = refused {
                                busy_until = busy_until.min(t);
                            }
                            self.fab.waiting[base + kept] = self.refused_entry(router, e, &refused, freed)?;
                            kept += 1;
                        }
                    }
                }
                let routed = self.fab.wait_len[r] as usize > n;
                // (A loop, not `copy_within`: this is zero or one entry in most passes.)
                for j in n..self.fab.wait_len[r] as usize {
                    self.fab.waiting[base + kept] = self.fab.waiting[base + j];
                    kept += 1;
                }
                self.fab.wait_len[r] = kept as u32;
                // The kept list is in order: the refused entries kept theirs, and the heads
                // appended during the pass follow them in the order of the grants that routed
                // them, whose LRU stamps are newer than any older entry's (with the transit
                // priority not so: `order_requests` sorts its lists whole).
                self.fab.wait_sorted[r] = kept as u32;
                // (Re-routed heads are offered again at the next pass too.)
                silent && (routed || kept > 0 && (R::HOOKS.has(Hooks::REROUTE) || !self.core.t.sst))
            }
        };
        // Silent grants schedule no XbarDone, so wake the arbiter when their crossbar ports
        // free if a head routed during the pass waits for its input port; and a request
        // refused because a crossbar port is busy must be offered again when that port frees,
        // which no other event may signal. Under SST timing the other refused requests need no
        // wake-up (a full buffer's port files a pass when it sends); link-busy timing wakes for
        // any request left, whose pass's place among simultaneous events decides ties.
        if granted_silent {
            // (SST timing: the next tick.)
            let next = self.core.now + if self.core.t.sst { self.core.t.tick } else { self.core.t.xfer };
            busy_until = busy_until.min(next);
        }
        if busy_until != Time::MAX {
            self.wake_arbiter(router, busy_until);
        }
        Ok(())
    }

    /// The waiting entry `e` after a pass refused it with `refused`: marked `FULL_SEEN` if its
    /// buffer was found full. Otherwise, under SST timing, unmarked (a full buffer answers
    /// before the crossbar ports there, so any other refusal saw room); under link-busy timing a
    /// pass that could not see (a busy crossbar port answered first) keeps the mark, unless its
    /// output's buffer space has freed (`freed`), which makes it unknown. A head of an injection input whose routing re-routes
    /// refused packets ([`Hooks::REROUTE`]) may get a new output first (and no mark: that
    /// output was not tried), unless its input port is still busy (then it waits for the
    /// port's wake-up).
    #[inline(always)]
    fn refused_entry(&mut self, router: u32, e: u64, refused: &Grant, freed: u64) -> Fallible<u64> {
        // Not while the input's crossbar port still moves the previous packet: the head is not
        // blocked by its output then (in a flit-level switch its turn has not come yet).
        if R::HOOKS.has(Hooks::REROUTE)
            && self.fab.ports[self.fab.pidx(router, request_in_port(e))].xin_busy <= self.core.now
        {
            let qi = self.fab.qidx(router, request_in_port(e), request_in_vc(e));
            let id = self.fab.inq.front(qi).expect("waiting entry has a head packet");
            if let Some(new) = self.reroute(router, e, id)? {
                return Ok(new);
            }
        }
        Ok(match refused {
            Grant::Full => e | FULL_SEEN,
            // (SST: a full buffer answers first, so any other refusal saw room.)
            _ if self.core.t.sst || freed & freed_bit(request_port(e)) != 0 => e & !FULL_SEEN,
            _ => e,
        })
    }

    /// For head packet `id` of request `e`, refused by the crossbar at an injection input of a
    /// routing that re-routes there ([`Hooks::REROUTE`]): the request for the hop the routing
    /// now chooses, if it chooses another. Never in transit: only host-port inputs ask.
    #[inline(always)]
    pub(crate) fn reroute(&mut self, router: u32, e: u64, id: PacketId) -> Fallible<Option<u64>> {
        if !R::HOOKS.has(Hooks::REROUTE) {
            return Ok(None);
        }
        let (in_port, vc) = (request_in_port(e), request_in_vc(e));
        if !self.core.topo.is_host_port(in_port) {
            return Ok(None);
        }
        let hop = crate::routing::Hop { port: request_port(e), vc: request_vc(e) };
        let new = self.rt.alg.reroute_at_injection(&mut ctx!(self, router, in_port), self.core.pkts.get_mut(id), hop);
        self.flush_outbox(router, in_port);
        if let Some(period) = self.rt.alg.reroute_interval() {
            // Offered again after `period` even if nothing else runs the arbiter by then.
            self.wake_arbiter(router, self.core.now + period);
        }
        match new {
            Some(new) if new != hop => Ok(Some(request(in_port, vc as u8, self.check_hop(router, id, new)?))),
            _ => Ok(None),
        }
    }

    /// A request refused because a crossbar port is busy until `until`: it needs a wake-up then
    /// only if the grant holding the port schedules no XbarDone (whose handler arbitrates).
    #[inline]
    fn busy(&self, until: Time, silent: bool) -> Grant {
        if silent {
            Grant::Busy(until)
        } else {
            Grant::No
        }
    }

    /// Make sure the arbiter of `router` runs at `t` or earlier (if earlier and the request is
    /// still refused, that pass asks again). At most one wake-up per router is tracked; a
    /// superseded later one still runs and finds nothing new, which is harmless.
    pub(crate) fn wake_arbiter(&mut self, router: u32, t: Time) {
        if self.core.t.sst {
            return self.wake_pass(router, t);
        }
        let r = router as usize;
        if self.fab.arb_wake_at[r] <= t {
            return;
        }
        self.fab.arb_wake_at[r] = t;
        let ev = Event::ArbWake { router };
        if t == self.core.now + self.core.t.xfer {
            self.core.q.push(self.core.lanes.xbar, ev);
        } else {
            self.core.q.at(t, ev);
        }
    }

    /// Grant the request of waiting entry `e` (see [`request`]) if its crossbar ports are
    /// free and its output VC has room; route the next head of that input VC if there is one.
    /// A request marked `FULL_SEEN` is taken as still full unless the pass follows freed buffer
    /// space at its output (`freed`, see [`Simulation::on_arbitrate`]).
    #[inline(always)]
    fn try_grant(&mut self, router: u32, e: u64, freed: u64) -> Fallible<Grant> {
        let ip = self.fab.pidx(router, request_in_port(e));
        if request_full_seen(e) && freed & freed_bit(request_port(e)) == 0 {
            return self.still_full(router, e, ip);
        }
        let qi = ip * self.fab.vcs + request_in_vc(e);
        let id = self.fab.inq.front(qi).expect("waiting entry has a head packet");
        if self.core.t.sst {
            return self.grant_sst(router, e, ip, id);
        }
        let inp = InPort::of(&self.fab.ports[ip]);
        self.grant(router, e, ip, inp, id, true)
    }

    /// The refusal of request `e`, whose output buffer is still full (see `FULL_SEEN`), without
    /// reading the input queue, the packet or the credit state: under saturation most attempts
    /// end here. SST timing: `Full`, as its grant answers first (see [`Simulation::full`]).
    /// Link-busy timing: the same crossbar checks as [`Simulation::grant`], in the same order,
    /// before the full buffer, so that a busy port asks for the same wake-up.
    #[inline(always)]
    fn still_full(&self, router: u32, e: u64, ip: usize) -> Fallible<Grant> {
        debug_assert!({
            let (op, out_vc) = (self.fab.pidx(router, request_port(e)), request_vc(e) as usize);
            let qi = ip * self.fab.vcs + request_in_vc(e);
            let flits = self.fab.inq.front(qi).map_or(0, |id| self.core.pkts.get(id).flits as u32);
            self.out_flits_seen(op, op * self.fab.vcs + out_vc) + flits > self.core.t.out_cap
        });
        if self.core.t.sst {
            return Ok(Grant::Full);
        }
        let now = self.core.now;
        let inp = &self.fab.ports[ip];
        if inp.xin_busy > now {
            return Ok(self.busy(inp.xin_busy, inp.xin_silent));
        }
        let out = &self.fab.ports[self.fab.pidx(router, request_port(e))];
        if out.xout_busy > now {
            return Ok(if out.xout_silent { Grant::Busy(out.xout_busy) } else { Grant::No });
        }
        Ok(Grant::Full)
    }

    /// Whether output VC `oi` has no room for `flits` more flits in its buffer. The SST grant
    /// asks this first, before its crossbar ports: a full buffer stays full until its port
    /// sends, and that send files a pass with the port's `freed` bit at the next tick, so a
    /// refusal for a busy crossbar port would only ask for a wake-up that finds the buffer
    /// still full. Answered first, `Full` marks the request, which later passes skip without
    /// reading anything until its output frees; the grants are the same. (The link-busy grant
    /// keeps the crossbar ports first: there a wake-up's pass is an event of its own, whose
    /// place among simultaneous events decides ties, so its wake-ups stay as they were.)
    #[inline(always)]
    pub(crate) fn full(&self, oi: usize, flits: u32) -> bool {
        debug_assert!(!self.core.t.shared_out, "a shared output queue is link-busy timing's");
        self.fab.credits.out_flits(oi) + flits > self.core.t.out_cap
    }

    /// A shared output queue's request for output VC `oi` (port index `op`), refused for the
    /// VC's credits: offered again when the next return arrives, or, with none on its way, at
    /// the wake-up of the port, which is watched so that a return wakes it (see the `PortWake`
    /// handler).
    #[cold]
    #[inline(never)]
    fn refused_for_credits(&mut self, op: usize, oi: usize) -> Grant {
        if let Some(t) = self.fab.credits.next_return(oi) {
            return Grant::Busy(t);
        }
        let vcs = self.fab.vcs;
        for v in 0..vcs {
            self.fab.credits.set_watched(op * vcs + v, true);
        }
        Grant::No
    }

    /// The flits that count against output VC `oi`'s buffer (of port index `op`): the VC's own,
    /// or with a shared output queue the port's (for the checks).
    pub(crate) fn out_flits_seen(&self, op: usize, oi: usize) -> u32 {
        if self.core.t.shared_out {
            self.fab.credits.port_out_flits(op * self.fab.vcs, self.fab.vcs)
        } else {
            self.fab.credits.out_flits(oi)
        }
    }

    /// The grant of [`Simulation::try_grant`] for head packet `id` at input port index `ip`
    /// (whose line reads `inp`); `queued` says whether it sits in the input queue (the
    /// idle-router path offers it before queueing it).
    ///
    /// Each port line and the output VC's credit state are looked up once or twice per grant
    /// (reads first, writes at the end), not at every use.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn grant(
        &mut self,
        router: u32,
        e: u64,
        ip: usize,
        inp: InPort,
        id: PacketId,
        queued: bool,
    ) -> Fallible<Grant> {
        let now = self.core.now;
        let (in_port, vc) = (request_in_port(e), request_in_vc(e));
        debug_assert_eq!(ip, self.fab.pidx(router, in_port));
        // The output the packet was routed to, carried by the request.
        let (out_port, out_vc) = (request_port(e), request_vc(e) as usize);
        debug_assert_eq!((out_port, out_vc), (self.core.pkts.get(id).out_port, self.core.pkts.get(id).out_vc as usize));
        let flits = self.core.flits_of(id);
        let op = self.fab.pidx(router, out_port);
        let oi = op * self.fab.vcs + out_vc;
        if inp.xin_busy > now {
            return Ok(self.busy(inp.xin_busy, inp.xin_silent));
        }
        // What the credit return needs from the input port's line (fixed fields).
        let (in_class, in_peer, in_peer_queues) = (inp.class as usize & 3, inp.peer, inp.peer_queues);
        let qi = ip * self.fab.vcs + vc;
        // One mutable borrow of the output port's line for the whole grant: what happens
        // between its reads and its writes touches other fields of `self` only.
        let out = &mut self.fab.ports[op];
        let class = out.class as usize & 3;
        let host = class == 0;
        if !host && out.peer.0 == NONE {
            // Checked here rather than when routing: this line is read here anyway.
            return Err(Error::Invariant(format!("router {router} routed onto unconnected port {out_port}")).into());
        }
        if out.xout_busy > now {
            return Ok(if out.xout_silent { Grant::Busy(out.xout_busy) } else { Grant::No });
        }
        let (out_queued, out_busy, out_wake, out_wake_at) = (out.queued, out.busy, out.wake, out.wake_at);
        let done = now + self.core.t.xfer;
        // Fast path if nothing is queued at the output, it is free when the transfer ends and
        // (unless it ejects) its VC has the credits: the packet starts on the link right then.
        // Same timing as queueing it and sending at XbarDone, one event fewer; the congestion
        // signal counts it as used credits instead of output-buffer flits, so their sum is
        // unchanged. Otherwise it is queued, reserving its output-buffer space. A full buffer
        // refuses it (space freeing in the output buffer triggers arbitration, see `try_send`).
        let idle = out_queued == 0 && out_busy <= done;
        let admit = if self.core.t.shared_out {
            let (vcs, cap) = (self.fab.vcs, self.core.t.out_cap);
            self.fab.credits.admit_shared(op * vcs, vcs, oi, now, flits, cap, idle, host)
        } else {
            self.fab.credits.admit(oi, now, flits, self.core.t.out_cap, idle, host)
        };
        let through = match admit {
            Admit::Full => return Ok(Grant::Full),
            Admit::Through => true,
            Admit::Queue => false,
            Admit::Credits => return Ok(self.refused_for_credits(op, oi)),
        };
        if queued {
            self.fab.inq.pop(qi, flits);
        }
        if self.fab.lru_clock == u32::MAX {
            self.fab.lru_clock = renumber_stamps(&mut self.fab.lru);
        }
        self.fab.lru_clock += 1;
        self.fab.lru[qi] = self.fab.lru_clock;
        self.core.acct.traversals += 1;
        let grant = if through {
            if let Some(ports) = &mut self.core.ports {
                let src = self.core.pkts.get(id).src;
                ports.on_send(op, src, flits as u64 * self.core.t.flit_bytes, done);
            }
            let ser = self.core.t.ser_of(class, flits);
            out.busy = done + ser;
            out.xout_busy = done;
            out.xout_silent = true;
            let ((pr, pp), c) = (out.peer, out.peer_port);
            if host {
                self.deliver(id, done + ser + self.core.t.eject_lat);
            } else {
                if self.core.check.on {
                    self.core.check.inflight_flits[oi] += flits;
                }
                if R::HOOKS.has(Hooks::NET_OCCUPANCY) {
                    self.fab.credits.wire_out(oi, done, flits);
                }
                let ev = Event::Arrive { router: pr, port: pp, vc: out_vc as u8, pkt: id, pi: c };
                let lane = self.core.lanes.arrive_through[class];
                let delay = self.core.t.xfer + self.core.t.link[class];
                self.core.send_over_link(class, lane, delay, ev, pr);
            }
            Grant::Through
        } else if out_busy >= done && (!out_wake || out_wake_at <= out_busy) {
            // The link stays busy until after the transfer ends, and the port's next wake-up
            // (pending, or scheduled here) comes no later than that: output arbitration cannot
            // look at this buffer before the packet is through the crossbar, so it joins the
            // buffer now and no XbarDone is needed. Same decisions as the XbarDone path, one
            // event fewer; crossbar ports held by it are silent like the fast path's.
            out.queued += 1;
            out.xout_busy = done;
            out.xout_silent = true;
            if !out_wake {
                // As `schedule_port_wake`.
                out.wake = true;
                out.wake_at = out_busy;
                self.core.q.at(out_busy, Event::PortWake { router, port: out_port, pi: op as u32 });
            }
            self.fab.outq.push(oi, id, flits);
            Grant::QueuedSilent
        } else {
            out.xout_busy = done;
            out.xout_silent = false;
            let ev = Event::XbarDone { router, port: out_port, vc: out_vc as u8, pkt: id };
            self.core.q.push(self.core.lanes.xbar, ev);
            Grant::Queued
        };
        // The crossbar ports are held until the transfer ends (the input side is set after
        // the branches above, which do not read it).
        let inp_line = &mut self.fab.ports[ip];
        inp_line.xin_busy = done;
        inp_line.xin_silent = !matches!(grant, Grant::Queued);
        if R::HOOKS.has(Hooks::DEPART) && !self.core.topo.is_host_port(in_port) {
            self.rt.alg.on_depart(&mut ctx!(self, router, in_port), self.core.pkts.get(id));
            self.flush_outbox(router, in_port);
        }
        self.return_credit(router, in_port, vc, flits, in_class, in_peer, in_peer_queues);
        if queued {
            if let Some(next) = self.fab.inq.front(qi) {
                self.route_head(router, in_port, vc, next)?;
            }
        }
        Ok(grant)
    }
}

/// Replace the LRU stamps by their ranks among the distinct stamps (the same order, the same
/// ties) and return the highest rank: what the clock continues from when it reaches `u32::MAX`
/// (once per 4 G grants). Stamps are 32 bits so that the array of one per input VC
/// takes half the cache.
#[cold]
#[inline(never)]
pub(crate) fn renumber_stamps(lru: &mut [u32]) -> u32 {
    let mut distinct = lru.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    for s in lru.iter_mut() {
        *s = distinct.partition_point(|&d| d < *s) as u32;
    }
    distinct.len().saturating_sub(1) as u32
}

/// Order the requests `list` (at least 2) of one router least recently granted first (by
/// LRU stamp in `lru`, the router's stamps per input VC, then entry: the key is unique to an
/// entry, so the order is that of any sort). Under congestion lists are long and mostly in
/// order already: a pass leaves its list in order (see `on_arbitrate`) and a key changes only
/// when its input VC is granted, which removes the entry. Only the requests filed since the
/// last pass (from `sorted` on, the router's `wait_sorted`) are inserted. The one-request pass
/// never updates `wait_sorted`: it runs only on a list that a longer pass left at most 1 long,
/// and 1 entry is always in order. Out of line: inlined, it took registers from the grants of
/// `on_arbitrate`.
///
/// `injection_below` (the timing's): with the transit priority, entries whose low 32 bits are
/// below it (node inputs) come after all the others, least recently granted first among each.
#[inline(never)]
pub(crate) fn order_requests(list: &mut [u64], lru: &[u32], vcs: usize, sorted: usize, injection_below: u32) {
    if injection_below == 0 {
        insert_in_order::<false>(list, lru, vcs, sorted, 0);
    } else {
        // A pass's new transit heads may belong before the injection requests it refused, so
        // the list is in order only up to its first entry (insertion over a list mostly in
        // order is still linear).
        insert_in_order::<true>(list, lru, vcs, 1, injection_below);
    }
}

/// [`order_requests`]' insertion, with the transit priority's key or without it.
#[inline(always)]
fn insert_in_order<const PRIORITY: bool>(list: &mut [u64], lru: &[u32], vcs: usize, sorted: usize, below: u32) {
    let n = list.len();
    // The key of the input VC alone (the low 32 bits): the output and the mark do not order.
    let key = |e: u64| {
        let e = e as u32;
        (PRIORITY && e < below, lru[(e >> VC_BITS) as usize * vcs + (e & VC_MASK) as usize], e)
    };
    for i in sorted.clamp(1, n)..n {
        let x = list[i];
        let kx = key(x);
        let mut j = i;
        while j > 0 && kx < key(list[j - 1]) {
            list[j] = list[j - 1];
            j -= 1;
        }
        list[j] = x;
    }
    debug_assert!(list.windows(2).all(|w| key(w[0]) < key(w[1]) || w[0] as u32 == w[1] as u32));
}

#[cfg(test)]
mod tests {
    use super::super::fabric::{FULL_SEEN, VC_BITS};
    use super::{order_requests, renumber_stamps};
    use proptest::prelude::*;

    proptest! {
        /// Renumbering keeps the stamps' order and ties, and returns the highest new stamp.
        #[test]
        fn renumbered_stamps_keep_their_order(stamps in proptest::collection::vec(any::<u32>(), 1..60)) {
            let mut renumbered = stamps.clone();
            let top = renumber_stamps(&mut renumbered);
            prop_assert_eq!(Some(&top), renumbered.iter().max());
            for i in 0..stamps.len() {
                for j in 0..stamps.len() {
                    prop_assert_eq!(stamps[i].cmp(&stamps[j]), renumbered[i].cmp(&renumbered[j]));
                }
            }
        }

        /// With its first `sorted` entries in arbitration order (as a pass leaves them),
        /// `order_requests` puts the list in the order a full sort by (LRU stamp, entry) gives;
        /// with the transit priority (node inputs: ports below `hosts`), by (node input, LRU
        /// stamp, entry), so that every transit request precedes every injection request.
        #[test]
        fn order_requests_equals_the_full_sort(
            stamps in proptest::collection::vec(0u32..50, 16),
            picks in proptest::collection::btree_set(0u32..16, 2..16),
            cut in 0usize..16,
            hosts in 0u32..4,
        ) {
            let vcs = 2;
            // Outputs and marks in the high bits, which must not change the order.
            let entry = |i: u32| {
                let output = (i as u64 * 0x9E37 % 31) << 32;
                let mark = if (i as u64).is_multiple_of(3) { FULL_SEEN } else { 0 };
                output | mark | ((i / vcs as u32) << VC_BITS | (i % vcs as u32)) as u64
            };
            let key = |e: u64| {
                let e = e as u32;
                ((e >> VC_BITS) < hosts, stamps[(e >> VC_BITS) as usize * vcs + (e & 0xff) as usize], e)
            };
            let mut list: Vec<u64> = picks.iter().map(|&i| entry(i)).collect();
            let sorted = cut.min(list.len());
            list[..sorted].sort_unstable_by_key(|&e| key(e));
            let mut expected = list.clone();
            expected.sort_unstable_by_key(|&e| key(e));
            order_requests(&mut list, &stamps, vcs, sorted, hosts << VC_BITS);
            prop_assert_eq!(&list, &expected);
            let first_injection = list.iter().position(|&e| (e as u32 >> VC_BITS) < hosts).unwrap_or(list.len());
            prop_assert!(list[first_injection..].iter().all(|&e| (e as u32 >> VC_BITS) < hosts));
        }
    }
}
