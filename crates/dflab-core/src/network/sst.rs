//! SST/Merlin's port timing (`network.timing = "sst"`): output ports and NICs driven by a
//! wake-up timer, a clocked crossbar with no transfer time. What SST does is read from its
//! code in `sst-port-timing.md` (docs/references.md): `hr_router` and `PortControl` of
//! sst-elements (the SPEAR-IIT Q-adaptive fork at b9c0ae29 and upstream have the same logic),
//! `LinkControl` for the NIC, sst-core's `CLOCKPRIORITY < EVENTPRIORITY` for the order.
//!
//! * **Output timer** (`PortControl::send`, `handle_input_*`, `handle_output`). A port is
//!   *waiting* when its timer is not running. A packet entering the output buffer of a
//!   waiting port, or a credit arriving at it, arms the timer one flit-time ahead; at the
//!   timer the port sends the round-robin choice among the VCs whose head has downstream
//!   credits and re-arms one packet-time ahead (the packet's flits), or becomes waiting if none
//!   can go. A sent packet is whole at the next router `output + link + input` later: SST
//!   charges a multi-flit packet one flit-time before its send, not its serialisation. Here
//!   `PortState::busy` is the time the timer fires (or fired last); a timer that fires with
//!   nothing queued has no event, so a port is waiting at `t` unless [`timer_runs_at`].
//! * **NIC** (`LinkControl::send`, `handle_output`): the same timer over the source queue and
//!   the router's input-buffer credits. `LinkControl::recv` returns the credit of a delivered
//!   packet at once over the 1 GHz time base (1 ns + host link + router input latency), which
//!   arms the router's ejection port like any credit.
//! * **Crossbar** (`hr_router::clock_handler`, `xbar_arb_lru`): a clock of one flit at crossbar
//!   bandwidth, ticks on the multiples of its period. A router's pass runs at the first tick
//!   strictly after a head arrives or its blocking clears; the ticks come before the other
//!   events of their time (`engine/clock.rs`: the calendar is the event queue's first lane), so
//!   an arrival exactly on a tick waits for the next one, as in SST. A granted packet is in its
//!   output buffer at the tick and holds its input and output crossbar ports for `flits` ticks.
//!   Arbitration is the engine's least-recently-granted pass ([`Simulation::on_arbitrate`]).
//!
//! Routing happens when a packet becomes the head of its input VC, in SST as here
//! (`PortControl::recv` routes the new head at once; an arrival at an empty VC is routed on
//! arrival).
//!
//! The one deviation, not an option (it decides nothing outside exact ties): SST orders
//! simultaneous events of equal priority by its queue's insertion order, the engine by its
//! canonical order (`engine/partition.rs`); a credit arriving exactly when a timer fires leaves
//! the timer as it is (SST may arm it again).

use crate::engine::core::Core;
use crate::engine::event::Event;
use crate::engine::sim::{ctx, Fallible, Simulation};
use crate::engine::timing::Timing;
use crate::error::Error;
use crate::network::arbiter::Grant;
use crate::network::fabric::{request_in_port, request_in_vc, request_port, request_vc};
use crate::network::router::pick_rr;
use crate::network::PacketId;
use crate::routing::{Hooks, Routing};
use crate::topology::NONE;
use crate::units::Time;

/// A packet enters the waiting ejection port (`class` 0) whose timer ran out at `busy`
/// (its last departure plus a packet-time), at `t`: the time its timer fires if the NIC's
/// credit for that last packet, which arrives `Timing::eject_arm_lazy` after the departure,
/// came while the port waited and less than a flit-time before `t` (as the `PortArm` event
/// of `on_port_timer` would have armed it; a credit at exactly `t` comes after the tick).
/// The port's only credits are these, and an earlier packet's credit arrives while the
/// timer of a later one runs, so no other credit can have armed it.
#[inline(always)]
fn ejection_armed(timing: &Timing, class: usize, busy: Time, t: Time) -> Option<Time> {
    let delay = timing.eject_arm_lazy.filter(|_| class == 0 && busy > 0)?;
    let credit = busy - timing.ser[0] + delay;
    let fires = credit + timing.flit_ser[0];
    (credit > busy && credit < t && t < fires).then_some(fires)
}

/// `LinkControl::recv` sends the credit of a received packet on its 1 GHz time base: one
/// cycle, 1 ns, before the link and router input latencies.
pub const NIC_CREDIT_DELAY: Time = 1000;

/// Whether a timer that fires (or fired) at `busy` still runs at `t`. At `t == busy` it fires
/// after whatever arrived at `t` (SST: the crossbar's and the traffic generator's clocks run
/// before the timer's event), except before its first arming (`busy == 0`).
#[inline(always)]
pub fn timer_runs_at(busy: Time, t: Time) -> bool {
    t < busy || (t == busy && busy > 0)
}

impl<R: Routing> Simulation<R> {
    /// The first crossbar tick strictly after `t`.
    #[inline(always)]
    pub(crate) fn tick_after(&self, t: Time) -> Time {
        let tick = self.core.t.tick;
        (t / tick + 1) * tick
    }

    /// Make sure the crossbar of `router` has a pass at tick `at` or earlier (`engine/clock.rs`).
    pub(crate) fn wake_pass(&mut self, router: u32, at: Time) {
        debug_assert!(at.is_multiple_of(self.core.t.tick), "crossbar passes run on ticks");
        let r = router as usize;
        if self.fab.arb_wake_at[r] <= at {
            return;
        }
        self.fab.arb_wake_at[r] = self.core.q.file_pass(at, router);
    }

    /// The crossbar's tick (`Event::Clock`): the passes filed for it, in filing order, each as
    /// an `ArbWake` would run it.
    pub(crate) fn on_clock(&mut self) -> Fallible {
        let list = self.core.q.take_passes();
        let mut done = Ok(());
        for &router in &list {
            done = if self.core.t.booksim { self.booksim_pass(router) } else { self.on_arb_wake(router) };
            if done.is_err() {
                break;
            }
        }
        self.core.q.give_back_passes(list);
        done
    }

    /// The crossbar pass of [`Simulation::on_arbitrate`] grants request `e` of head packet `id`
    /// at input port index `ip`: at the tick (now), into its output buffer, holding its
    /// crossbar ports for `flits` ticks. `Busy` for a crossbar port still held, `Full` for a
    /// full output buffer. Every grant is silent (no transfer, so no XbarDone).
    pub(crate) fn grant_sst(&mut self, router: u32, e: u64, ip: usize, id: PacketId) -> Fallible<Grant> {
        let tk = self.core.now;
        let (in_port, vc) = (request_in_port(e), request_in_vc(e));
        let (out_port, out_vc) = (request_port(e), request_vc(e) as usize);
        let flits = self.core.flits_of(id);
        let op = self.fab.pidx(router, out_port);
        let oi = op * self.fab.vcs + out_vc;
        if self.full(oi, flits) {
            return Ok(Grant::Full); // first, see `Simulation::full`
        }
        let inp = self.fab.ports[ip];
        if inp.xin_busy > tk {
            return Ok(Grant::Busy(inp.xin_busy));
        }
        let out = &mut self.fab.ports[op];
        let class = out.class as usize & 3;
        if class != 0 && out.peer.0 == NONE {
            return Err(Error::Invariant(format!("router {router} routed onto unconnected port {out_port}")).into());
        }
        if out.xout_busy > tk {
            return Ok(Grant::Busy(out.xout_busy));
        }
        let cap = self.core.t.out_cap;
        if let crate::network::Admit::Full = self.fab.credits.admit(oi, tk, flits, cap, false, class == 0) {
            return Ok(Grant::Full);
        }
        let qi = ip * self.fab.vcs + vc;
        self.fab.inq.pop(qi, flits);
        if self.fab.lru_clock == u32::MAX {
            self.fab.lru_clock = crate::network::arbiter::renumber_stamps(&mut self.fab.lru);
        }
        self.fab.lru_clock += 1;
        self.fab.lru[qi] = self.fab.lru_clock;
        self.core.acct.traversals += 1;
        let held = tk + flits as Time * self.core.t.tick;
        out.xout_busy = held;
        out.xout_silent = true;
        out.queued += 1;
        self.fab.outq.push(oi, id, flits);
        // `PortControl::send`: a waiting port arms its timer one flit-time ahead; a running
        // timer sends it when it fires.
        if !out.wake {
            out.wake = true;
            if timer_runs_at(out.busy, tk) {
                out.wake_at = out.busy;
                self.core.q.at(out.busy, Event::PortWake { router, port: out_port, pi: op as u32 });
            } else if let Some(at) = ejection_armed(&self.core.t, class, out.busy, tk) {
                // The NIC's credit for the port's last packet armed it (see `ejection_armed`).
                out.busy = at;
                out.wake_at = at;
                self.core.q.at(at, Event::PortWake { router, port: out_port, pi: op as u32 });
            } else {
                out.busy = tk + self.core.t.flit_ser[class];
                out.wake_at = out.busy;
                let ev = Event::PortWake { router, port: out_port, pi: op as u32 };
                self.core.q.push(self.core.lanes.arm[class], ev);
            }
        }
        let inp_line = &mut self.fab.ports[ip];
        inp_line.xin_busy = held;
        inp_line.xin_silent = true;
        if R::HOOKS.has(Hooks::DEPART) && !self.core.topo.is_host_port(in_port) {
            self.rt.alg.on_depart(&mut ctx!(self, router, in_port), self.core.pkts.get(id));
            self.flush_outbox(router, in_port);
        }
        self.return_credit_sst(router, in_port, vc, flits, inp.class as usize & 3, inp.peer, inp.peer_queues);
        if let Some(next) = self.fab.inq.front(qi) {
            self.route_head(router, in_port, vc, next)?;
        }
        Ok(Grant::QueuedSilent)
    }

    /// The packet granted at this tick left input (`in_port`, `vc`): its credits reach the
    /// upstream ledger one credit latency later, and arm the upstream port's timer then (an
    /// event per return: whether the port waits then is not known now).
    #[allow(clippy::too_many_arguments)]
    fn return_credit_sst(
        &mut self,
        router: u32,
        in_port: u16,
        vc: usize,
        flits: u32,
        class: usize,
        peer: (u32, u16),
        peer_queues: u32,
    ) {
        let (now, lat) = (self.core.now, self.core.t.credit_lat[class]);
        let at = now + lat;
        if class == 0 {
            let node = router as usize * self.core.topo.p + in_port as usize;
            self.core.nic.credits.give_back(node, now, at, flits);
            self.core.q.push(self.core.lanes.nic_credit, Event::NicArm { node: node as u32 });
            return;
        }
        let (ur, up) = peer;
        let uq = peer_queues as usize + vc;
        if class == 2 && self.core.cross {
            if R::HOOKS.has(Hooks::NET_OCCUPANCY) {
                self.fab.credits.mailed(uq, flits);
            }
            self.core.send_credits(at, uq, ur, up, flits);
        } else {
            self.fab.credits.give_back(uq, now, at, flits);
        }
        let upi = self.fab.pidx(ur, up) as u32;
        let lane = self.core.lanes.credit[class];
        self.core.send_over_link(class, lane, lat, Event::PortArm { router: ur, port: up, pi: upi }, ur);
    }

    /// The timer of output `port` (index `pi`) fires (`PortWake`): send the round-robin choice
    /// among the VCs whose head has downstream credits and re-arm one packet-time ahead, or
    /// wait for a packet or a credit.
    pub(crate) fn on_port_timer(&mut self, router: u32, port: u16, pi: usize) -> Fallible {
        let now = self.core.now;
        let vcs = self.fab.vcs;
        let st = &mut self.fab.ports[pi];
        st.wake = false;
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
            return Ok(()); // waiting: the next credit arms the timer
        };
        let qi = qb + vc;
        let largest = self.core.t.packet_flits as u32;
        let was_full = self.fab.credits.leave_out(qi, flits, largest, self.core.t.out_cap, !host);
        st.queued -= 1;
        st.rr = if vc + 1 == vcs { 0 } else { vc as u8 + 1 };
        let period = match uniform {
            Some(_) => self.core.t.ser[class],
            None => flits as Time * self.core.t.flit_ser[class],
        };
        st.busy = now + period;
        let ((pr, pp), c) = (st.peer, st.peer_port);
        if st.queued > 0 {
            st.wake = true;
            st.wake_at = st.busy;
            let ev = Event::PortWake { router, port, pi: pi as u32 };
            match uniform {
                Some(_) => self.core.q.push(self.core.lanes.port_wake[class], ev),
                None => self.core.q.at(now + period, ev),
            }
        }
        self.onto_link(class, qi, vc, id, flits, (pr, pp), c, self.core.t.eject_lat);
        if host && self.core.t.eject_arm_lazy.is_none() {
            // The NIC's credit for it arms this port when it is back (an event: see
            // `ejection_armed` for when it is worked out without one).
            self.core.q.push(self.core.lanes.eject_arm, Event::PortArm { router, port, pi: pi as u32 });
        }
        if was_full && self.fab.wait_len[router as usize] > 0 {
            // Output-buffer space freed: the crossbar sees it at its next tick.
            self.fab.arb_freed[router as usize] |= crate::network::fabric::freed_bit(port);
            let at = self.tick_after(now);
            self.wake_pass(router, at);
        }
        Ok(())
    }

    /// A credit reaches output `port` (index `pi`): a waiting port arms its timer one flit-time
    /// ahead (`PortControl::handle_input_*`, credit branch), even with nothing to send.
    pub(crate) fn on_port_arm(&mut self, router: u32, port: u16, pi: usize) {
        let now = self.core.now;
        let st = &mut self.fab.ports[pi];
        if st.wake || timer_runs_at(st.busy, now) {
            return;
        }
        let class = st.class as usize & 3;
        st.busy = now + self.core.t.flit_ser[class];
        if st.queued > 0 {
            st.wake = true;
            st.wake_at = st.busy;
            self.core.q.push(self.core.lanes.arm[class], Event::PortWake { router, port, pi: pi as u32 });
        }
    }
}

impl Core {
    /// A new packet `pkt` of node `src` enters its NIC's source queue now (`LinkControl::send`):
    /// a waiting NIC arms its timer one flit-time ahead. The packet leaves at the timer.
    pub fn nic_submit_sst(&mut self, src: u32, pkt: crate::network::Packet) {
        let n = src as usize;
        let id = self.pkts.alloc(pkt, self.now, 0);
        self.acct.in_source += 1;
        self.nic.node[n].queued += 1;
        self.nic.queue[n].push_back(id);
        self.nic_arm_for_packet(src);
    }

    /// A packet entered the source queue of `node` now: make sure a timer will send it.
    pub(crate) fn nic_arm_for_packet(&mut self, node: u32) {
        let (now, n) = (self.now, node as usize);
        let st = &mut self.nic.node[n];
        if st.wake {
            return;
        }
        st.wake = true;
        if timer_runs_at(st.busy, now) {
            let at = st.busy;
            self.q.at(at, Event::NicWake { node });
        } else {
            st.busy = now + self.t.flit_ser[0];
            self.q.push(self.lanes.arm[0], Event::NicWake { node });
        }
    }

    /// The NIC timer of `node` fires (`LinkControl::handle_output`): send the head of the
    /// source queue if the router's input buffer has credits for it and re-arm one
    /// packet-time ahead, or wait. Returns whether the workload asked to hear of room in this
    /// source queue and a packet just left it.
    pub fn nic_timer_sst(&mut self, node: u32) -> bool {
        let (now, n) = (self.now, node as usize);
        let Some(&id) = self.nic.queue[n].front() else {
            return false;
        };
        let flits = self.flits_of(id);
        if !self.nic.credits.covers(n, now, flits) {
            return false; // waiting: the next credit arms the timer
        }
        let queue = &mut self.nic.queue[n];
        queue.pop_front();
        let more = !queue.is_empty();
        self.acct.in_source -= 1;
        self.pkts.set_injected(id, now);
        let period = match self.t.uniform_flits {
            Some(_) => self.t.ser[0],
            None => flits as Time * self.t.flit_ser[0],
        };
        let st = &mut self.nic.node[n];
        st.queued -= 1;
        st.busy = now + period;
        let resume = std::mem::take(&mut st.notify);
        if more {
            st.wake = true;
            match self.t.uniform_flits {
                Some(_) => self.q.push(self.lanes.nic_wake, Event::NicWake { node }),
                None => self.q.at(now + period, Event::NicWake { node }),
            }
        }
        self.nic_departs(node, id);
        resume
    }

    /// A credit reaches the NIC of `node`: a waiting NIC arms its timer one flit-time ahead.
    pub fn on_nic_arm(&mut self, node: u32) {
        let (now, n) = (self.now, node as usize);
        let st = &mut self.nic.node[n];
        if st.wake || timer_runs_at(st.busy, now) {
            return;
        }
        st.busy = now + self.t.flit_ser[0];
        if st.queued > 0 {
            st.wake = true;
            self.q.push(self.lanes.arm[0], Event::NicWake { node });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ejection_armed;
    use crate::config::{Experiment, PortTiming};
    use crate::engine::timing::Timing;

    #[test]
    fn the_nics_credit_arms_a_waiting_ejection_port_only_within_a_flit_time_before_an_entry() {
        // HPDC setup: a packet-time of 32 ns; the credit is back 20 + 1 + 20 = 41 ns after a
        // departure. Last departure at 100 ns: the timer ran out at 132, the credit at 141 arms
        // the port until 173.
        let mut e = Experiment::default();
        e.network.timing = PortTiming::Sst;
        let t = Timing::derive(&e).unwrap();
        assert_eq!(t.eject_arm_lazy, Some(41_000));
        let busy = 132_000;
        assert_eq!(ejection_armed(&t, 0, busy, 150_000), Some(173_000));
        assert_eq!(ejection_armed(&t, 0, busy, 172_999), Some(173_000));
        // At the credit's own time the tick comes first; a flit-time later the timer is out.
        assert_eq!(ejection_armed(&t, 0, busy, 141_000), None);
        assert_eq!(ejection_armed(&t, 0, busy, 173_000), None);
        // Not an ejection port, or never sent: nothing.
        assert_eq!(ejection_armed(&t, 1, busy, 150_000), None);
        assert_eq!(ejection_armed(&t, 0, 0, 150_000), None);
        // A credit slower than two packet-times could meet an earlier packet's: events then.
        e.network.host_latency_ns = 40.0;
        assert_eq!(Timing::derive(&e).unwrap().eject_arm_lazy, None);
    }
}
