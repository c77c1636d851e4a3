//! BookSim2's input-queued router and NIC (`network.timing = "booksim"`), read from BookSim2's
//! code (booksim/booksim2 at 28f43299: `routers/router.cpp`, `routers/iq_router.cpp`,
//! `channel.hpp`, `trafficmanager.cpp`, `networks/dragonfly.cpp`; the DGB fork's
//! `SINGLE_CYCLE` build of `iq_router.cpp` for `router_pipeline = "single-cycle"`):
//!
//! * **Cycles.** Time counts in cycles of one flit on a link (every link has the same
//!   bandwidth). Each router has a pass on the tick of every cycle in which it holds packets
//!   (`engine/clock.rs`), running the cycle's internal steps (`floor((k + 1) · s) −
//!   floor(k · s)` for speedup `s` = crossbar / link bandwidth: `Router::Evaluate`) and then
//!   sending one flit from each non-empty output queue (`WriteOutputs`).
//! * **Channels.** A flit sent in cycle `t` on a channel of latency `L` is read by the next
//!   router in cycle `t + L + 1` (the channel's own `ReadInputs` takes a cycle): its arrival
//!   lands half a cycle before that pass. A credit is read likewise and used `credit_delay`
//!   cycles later (`_proc_credits`).
//! * **An internal step** (`_InternalStep`, [`super::iq`]): the flits switched in the previous
//!   step reach their output queue (the crossbar, `st_final_delay = 1`); VC allocation; switch
//!   allocation, which needs a downstream credit and takes it, frees the input buffer slot
//!   (its credit goes upstream) and releases the output VC (single-flit packets are head and
//!   tail). With the standard pipeline every stage evaluates on the state the step began
//!   with, so a packet read in cycle `t` is allocated a VC in its first step, the switch in
//!   the second and sent in cycle `t + 1`: a hop costs `L + 2` cycles at zero load. The
//!   single-cycle pipeline updates each stage before the next evaluates (VC, switch and
//!   crossbar in one step; `L + 1` per hop).
//! * **Output queues** are one FIFO per port (`_output_buffer`), holding at most
//!   `output_buffer_flits` (BookSim's `output_buffer_size`; its default, unbounded, is any size
//!   of at least `vcs × input_buffer_flits`, since every flit in it holds a downstream credit;
//!   an ejection port's queue is bounded by it too). The congestion signal routings read
//!   (`RouterView::occupancy`) is BookSim's `GetUsedCredit`: the credits taken, so the queue,
//!   the channel, the downstream buffer and the credits on their way back.
//! * **NIC.** In each cycle a node may inject its oldest packet on an injection VC drawn at
//!   random (`dragonflynew`'s injection `RandomInt(num_vcs − 1)`), if the router's buffer of
//!   that VC has a credit; else it draws again the next cycle. The NIC reads its credits and
//!   its ejected packets at the tick itself (`L + 1` cycles after the router's send).
//!
//! Deviations, each within what a cycle-level comparison can see (docs/model.md):
//! * Routing happens when a packet is read into the input buffer; BookSim routes it with
//!   lookahead at the upstream router's switch allocation (or at injection), one channel
//!   earlier, on the state it reads then.
//! * Simultaneous events follow the engine's canonical order, not BookSim's module order;
//!   a router sends at most one credit per cycle per input in BookSim (the second credit of a
//!   speedup-2 cycle waits a cycle), here every credit leaves in its own cycle.
//! * The injection VC is drawn from the node's random stream, not from BookSim's global one.
//!
//! The VC of each hop, the ejection included, is the routing's: output VCs are allocated per
//! packet, so how many VCs a routing uses at a port (at the ejection port too) changes its
//! throughput here, not with the other timings. BookSim's own `min` is `MIN` with
//! `vc_layout = "booksim"`.

use rand::Rng as _;

use super::iq::{allocate_switch, allocate_vcs, set_bits, SwitchAsk, ACTIVE, FREE, IDLE, VA};
use super::PacketId;
use crate::engine::core::Core;
use crate::engine::event::Event;
use crate::engine::prefetch::HopHint;
use crate::engine::sim::{ctx, Fallible, Simulation};
use crate::error::Error;
use crate::routing::{Hooks, Routing};
use crate::topology::NONE;

impl<R: Routing> Simulation<R> {
    /// Packet `id` (input queue `qi` of port index `pi`) is read into input (`port`, `vc`) of
    /// `router`: it is routed now, waits for VC allocation if it is the head, and the router
    /// has a pass at the next tick.
    pub(crate) fn arrive_booksim(
        &mut self,
        router: u32,
        port: u16,
        vc: u8,
        id: PacketId,
        qi: usize,
        hint: HopHint,
    ) -> Fallible {
        let cap = self.core.t.in_caps[self.fab.ports[qi / self.fab.vcs].class as usize % 3];
        if self.fab.inq.flits(qi) + 1 > cap || !self.fab.inq.push(qi, id, 1) {
            return Err(Error::Invariant(format!(
                "input buffer overflow at router {router} port {port} VC {vc} ({} flits)",
                self.fab.inq.flits(qi)
            ))
            .into());
        }
        let hop = self.route(router, port, id, hint)?;
        if self.fab.inq.len(qi) == 1 {
            let (r, i) = (router as usize, qi - router as usize * self.fab.radix * self.fab.vcs);
            self.fab.iq.want[qi] = (hop.port as usize * self.fab.vcs + hop.vc as usize) as u16;
            self.fab.iq.set_state(r, i, qi, VA);
            self.fab.iq.busy_vcs[r] += 1;
        }
        let at = self.tick_after(self.core.now);
        self.wake_pass(router, at);
        Ok(())
    }

    /// The pass of `router` at this cycle's tick: its internal steps, then one flit from each
    /// non-empty output queue onto its channel.
    pub(crate) fn booksim_pass(&mut self, router: u32) -> Fallible {
        let r = router as usize;
        if self.fab.arb_wake_at[r] == self.core.now {
            self.fab.arb_wake_at[r] = crate::units::Time::MAX;
        }
        let steps = self.core.t.booksim_steps(self.core.now / self.core.t.tick);
        for _ in 0..steps {
            self.booksim_step(router)?;
        }
        self.booksim_send(router);
        if self.fab.iq.active(r) {
            let next = self.core.now + self.core.t.tick;
            self.wake_pass(router, next);
        }
        Ok(())
    }

    /// One internal step of `router` (see the module's doc for the stage order).
    fn booksim_step(&mut self, router: u32) -> Fallible {
        let single = self.core.t.single_cycle;
        if !single {
            self.booksim_switch(router);
        }
        self.booksim_vc_allocation(router);
        if single {
            self.booksim_hold(router);
        }
        self.booksim_switch_allocation(router)?;
        if single {
            self.booksim_switch(router);
        } else {
            self.booksim_hold(router);
        }
        Ok(())
    }

    /// The crossbar: what the last switch allocation granted joins its output queue.
    fn booksim_switch(&mut self, router: u32) {
        let r = router as usize;
        if self.fab.iq.xbar[r].is_empty() {
            return;
        }
        let mut through = std::mem::take(&mut self.fab.iq.xbar[r]);
        for &(port, id) in &through {
            let q = self.fab.qidx(router, port, 0);
            let pushed = self.fab.outq.push(q, id, 1);
            debug_assert!(pushed, "output queue space was checked at switch allocation");
        }
        self.fab.iq.queued[r] += through.len() as u32;
        through.clear();
        self.fab.iq.xbar[r] = through;
    }

    /// VC allocation on the state the step began with; its winners, as (output VC, input VC)
    /// local to the router, are left in `iq.vc_won`.
    fn booksim_vc_allocation(&mut self, router: u32) {
        let (r, n) = (router as usize, self.fab.radix * self.fab.vcs);
        let base = r * n;
        let iq = &mut self.fab.iq;
        iq.vc_won.clear();
        let mut asks = std::mem::take(&mut iq.vc_asks);
        asks.clear();
        for i in set_bits(&iq.va_bits, r, iq.words) {
            let o = iq.want[base + i] as usize;
            if iq.held[base + o] == FREE {
                asks.push((o as u32, i as u32));
            }
        }
        if !asks.is_empty() {
            let ptr = &iq.va_ptr[base..base + n];
            allocate_vcs(&asks, n, |o| ptr[o as usize], &mut iq.vc_won);
            for &(o, i) in &iq.vc_won {
                iq.va_ptr[base + o as usize] = ((i as usize + 1) % n) as u32;
            }
        }
        iq.vc_asks = asks;
    }

    /// VC allocation's winners (`iq.vc_won`) take their output VC.
    fn booksim_hold(&mut self, router: u32) {
        let r = router as usize;
        let base = r * self.fab.radix * self.fab.vcs;
        let iq = &mut self.fab.iq;
        for k in 0..iq.vc_won.len() {
            let (o, i) = iq.vc_won[k];
            iq.held[base + o as usize] = (base + i as usize) as u32;
            iq.set_state(r, i as usize, base + i as usize, ACTIVE);
        }
    }

    /// Switch allocation of `router` and the grants' effects: each winner leaves its input
    /// buffer (its credit goes upstream), takes its downstream credit, releases its output VC
    /// and crosses the crossbar.
    fn booksim_switch_allocation(&mut self, router: u32) -> Fallible {
        let (r, radix, vcs) = (router as usize, self.fab.radix, self.fab.vcs);
        let (pbase, now, out_cap) = (r * radix, self.core.now, self.core.t.out_cap);
        let base = pbase * vcs;
        let mut asks = std::mem::take(&mut self.fab.iq.sw_asks);
        asks.clear();
        for i in set_bits(&self.fab.iq.active_bits, r, self.fab.iq.words) {
            let o = self.fab.iq.want[base + i] as usize;
            let (out_port, op) = (o / vcs, pbase + o / vcs);
            let out = &self.fab.ports[op];
            if out.class & 3 != 0 {
                if out.peer.0 == NONE {
                    return Err(
                        Error::Invariant(format!("router {router} routed onto unconnected port {out_port}")).into()
                    );
                }
                if !self.fab.credits.covers(base + o, now, 1) {
                    continue;
                }
            }
            if self.fab.outq.len(op * vcs) >= out_cap {
                continue;
            }
            asks.push(SwitchAsk { input: (i / vcs) as u16, output: out_port as u16, vc: (i % vcs) as u8 });
        }
        if asks.is_empty() {
            self.fab.iq.sw_asks = asks;
            return Ok(());
        }
        let iq = &mut self.fab.iq;
        let ports = pbase..pbase + radix;
        let mut won = std::mem::take(&mut iq.sw_won);
        allocate_switch(
            &mut asks,
            radix,
            vcs,
            &mut iq.sw_in_ptr[ports.clone()],
            &mut iq.sw_out_ptr[ports.clone()],
            &mut iq.sw_vc_ptr[ports],
            &mut won,
        );
        iq.sw_asks = asks;
        let mut done = Ok(());
        for &a in &won {
            done = self.booksim_grant(router, a);
            if done.is_err() {
                break;
            }
        }
        self.fab.iq.sw_won = won;
        done
    }

    /// The switch grant `a` of `router`.
    fn booksim_grant(&mut self, router: u32, a: SwitchAsk) -> Fallible {
        let vcs = self.fab.vcs;
        let r = router as usize;
        let (pi, op) = (self.fab.pidx(router, a.input), self.fab.pidx(router, a.output));
        let qi = pi * vcs + a.vc as usize;
        let id = self.fab.inq.pop(qi, 1).expect("a granted input VC has a head");
        let base = r * self.fab.radix * vcs;
        let oq = base + self.fab.iq.want[qi] as usize;
        debug_assert_eq!(oq, op * vcs + self.core.pkts.get(id).out_vc as usize);
        self.fab.iq.held[oq] = FREE;
        if self.fab.ports[op].class & 3 != 0 {
            self.fab.credits.take(oq, 1);
            if self.core.check.on {
                // Counted from here as on its way: the credit is taken.
                self.core.check.inflight_flits[oq] += 1;
            }
        }
        self.fab.iq.xbar[r].push((a.output, id));
        self.core.acct.traversals += 1;
        match self.fab.inq.front(qi) {
            None => {
                self.fab.iq.set_state(r, qi - base, qi, IDLE);
                self.fab.iq.busy_vcs[r] -= 1;
            }
            Some(next) => {
                let p = self.core.pkts.get(next);
                self.fab.iq.want[qi] = (p.out_port as usize * vcs + p.out_vc as usize) as u16;
                self.fab.iq.set_state(r, qi - base, qi, VA);
            }
        }
        if R::HOOKS.has(Hooks::DEPART) && !self.core.topo.is_host_port(a.input) {
            self.rt.alg.on_depart(&mut ctx!(self, router, a.input), self.core.pkts.get(id));
            self.flush_outbox(router, a.input);
        }
        let inp = &self.fab.ports[pi];
        let (class, peer, peer_queues) = (inp.class as usize & 3, inp.peer, inp.peer_queues);
        if class == 0 {
            let node = r * self.core.topo.p + a.input as usize;
            self.core.nic_credit_return_vc(node, a.vc as usize);
        } else {
            self.return_credit(router, a.input, a.vc as usize, 1, class, peer, peer_queues);
        }
        Ok(())
    }

    /// `WriteOutputs`: each non-empty output queue of `router` sends its oldest flit.
    fn booksim_send(&mut self, router: u32) {
        let r = router as usize;
        if self.fab.iq.queued[r] == 0 {
            return;
        }
        let (radix, vcs) = (self.fab.radix, self.fab.vcs);
        for port in 0..radix {
            let pi = r * radix + port;
            let Some(id) = self.fab.outq.pop(pi * vcs, 1) else {
                continue;
            };
            self.fab.iq.queued[r] -= 1;
            let st = &self.fab.ports[pi];
            let (class, peer, peer_port) = (st.class as usize & 3, st.peer, st.peer_port);
            if class == 0 {
                self.deliver(id, self.core.now + self.core.t.eject_lat);
                continue;
            }
            let vc = self.core.pkts.get(id).out_vc;
            if R::HOOKS.has(Hooks::NET_OCCUPANCY) {
                self.fab.credits.wire_out(pi * vcs + vc as usize, self.core.now, 1);
            }
            let ev = Event::Arrive { router: peer.0, port: peer.1, vc, pkt: id, pi: peer_port };
            let (lane, delay) = (self.core.lanes.arrive[class], self.core.t.link[class]);
            self.core.send_over_link(class, lane, delay, ev, peer.0);
        }
    }
}

impl Core {
    /// A new packet `pkt` of node `src` joins its source queue now; the NIC tries to send.
    /// Returns what [`Core::nic_submit`] returns.
    pub fn nic_submit_booksim(&mut self, src: u32, pkt: crate::network::Packet) -> bool {
        let n = src as usize;
        let id = self.pkts.alloc(pkt, self.now, 0);
        self.acct.in_source += 1;
        self.nic.node[n].queued += 1;
        self.nic.queue[n].push_back(id);
        self.nic_try_send_booksim(src)
    }

    /// The NIC of `node` at a cycle's tick sends its oldest packet on a random injection VC
    /// that has a credit, at most one packet per cycle; otherwise it tries again at the next
    /// tick. Returns whether the workload asked to hear of room in this source queue and a
    /// packet just left it.
    pub fn nic_try_send_booksim(&mut self, node: u32) -> bool {
        let (n, now, cycle) = (node as usize, self.now, self.t.tick);
        let Some(&id) = self.nic.queue[n].front() else {
            return false;
        };
        let st = &mut self.nic.node[n];
        let at = st.busy.max(now.next_multiple_of(cycle));
        if at > now {
            if !st.wake {
                st.wake = true;
                self.q.at(at, Event::NicWake { node });
            }
            return false;
        }
        let vcs = self.nic.vcs;
        let vc = st.rng.gen_range(0..vcs);
        if !self.nic.credits.covers(n * vcs + vc, now, 1) {
            if !st.wake {
                st.wake = true;
                self.q.push(self.lanes.nic_wake, Event::NicWake { node });
            }
            return false;
        }
        let queue = &mut self.nic.queue[n];
        queue.pop_front();
        let more = !queue.is_empty();
        self.acct.in_source -= 1;
        self.pkts.set_injected(id, now);
        let st = &mut self.nic.node[n];
        st.queued -= 1;
        st.busy = now + cycle;
        let resume = std::mem::take(&mut st.notify);
        if more && !st.wake {
            st.wake = true;
            self.q.push(self.lanes.nic_wake, Event::NicWake { node });
        }
        self.nic.credits.take(n * vcs + vc, 1);
        self.acct.in_network += 1;
        if self.check.on {
            self.check.nic_inflight_flits[n] += 1;
        }
        let router = self.topo.router_of_node(node);
        let port = self.topo.host_port_of_node(node);
        let pi = router * self.topo.radix as u32 + port as u32;
        self.q.push(self.lanes.nic_arrive, Event::Arrive { router, port, vc: vc as u8, pkt: id, pi });
        resume
    }

    /// The credit of injection VC `vc` of `node` starts back now; the NIC reads it at the
    /// tick `credit_lat[0]` later (it tries every cycle while it has packets, so nothing
    /// needs waking).
    pub fn nic_credit_return_vc(&mut self, node: usize, vc: usize) {
        let at = self.now + self.t.credit_lat[0];
        let q = node * self.nic.vcs + vc;
        self.nic.credits.give_back(q, self.now, at, 1);
    }
}
