//! Invariant checks (with `run.check`) and the watchdog's deadlock report.
//!
//! Checked invariants, one function each:
//! * packets are conserved: generated = in source queues + in the network + delivered, and the
//!   packet arena holds exactly the live ones ([`Simulation::check_packets`]);
//! * each crossbar request names its head packet's output, one marked as facing a full output
//!   buffer (`FULL_SEEN`, which spares the arbiter the buffer check) faces one, and every
//!   non-empty input VC has its head's request waiting ([`Simulation::check_requests`]);
//! * no input or output buffer holds more than its capacity, and the occupancy counters match
//!   the queued packets ([`Simulation::check_buffers`]);
//! * credits are conserved on every link and VC: free credits + flits on the wire + flits in the
//!   downstream input buffer + credits on the way back = input buffer capacity
//!   ([`Simulation::check_credits`]).
//!
//! Hop bounds are asserted on every routing decision (`Simulation::check_hop`), checks or not.

use super::sim::Simulation;
use crate::error::{Error, Result};
use crate::network::fabric::{freed_bit, request_full_seen, request_in_port, request_in_vc, request_port, request_vc};
use crate::routing::Routing;
use crate::topology::{LinkClass, NONE};
use crate::units::{ps_to_us, Time};

impl<R: Routing> Simulation<R> {
    pub(super) fn check_invariants(&self) -> Result<()> {
        self.check_packets()?;
        for r in 0..self.core.topo.routers() {
            if self.core.t.booksim {
                self.check_iq(r)?;
            } else {
                self.check_requests(r)?;
            }
            self.check_buffers(r)?;
            self.check_credits(r)?;
        }
        self.check_nics()
    }

    fn fail(&self, m: String) -> Result<()> {
        Err(Error::Invariant(format!("{m} (t = {:.3} us)", ps_to_us(self.core.now))))
    }

    fn check_packets(&self) -> Result<()> {
        let a = &self.core.acct;
        if a.generated_total != a.in_source + a.in_network + a.delivered_total {
            return self.fail(format!(
                "packets not conserved: generated {} != source {} + network {} + delivered {}",
                a.generated_total, a.in_source, a.in_network, a.delivered_total
            ));
        }
        if self.core.pkts.live() as u64 != a.in_source + a.in_network + a.held {
            return self.fail(format!(
                "packet arena holds {} live packets, expected {}",
                self.core.pkts.live(),
                a.in_source + a.in_network + a.held
            ));
        }
        let nic = &self.core.nic;
        if let Some(n) = (0..nic.queue.len()).find(|&n| nic.queue[n].len() != nic.node[n].queued as usize) {
            return self.fail(format!(
                "source queue of node {n} holds {} packets, its count says {}",
                nic.queue[n].len(),
                nic.node[n].queued
            ));
        }
        let queued: u64 = nic.queue.iter().map(|q| q.len() as u64).sum();
        if queued != a.in_source {
            return self.fail(format!("source queues hold {queued} packets, counter says {}", a.in_source));
        }
        Ok(())
    }

    fn check_requests(&self, r: usize) -> Result<()> {
        let (f, t) = (&self.fab, &self.core.t);
        let (radix, vcs) = (f.radix, f.vcs);
        // Between events, each non-empty input VC has exactly its head's crossbar request
        // waiting (the idle-router path of `on_arrive` relies on it).
        let busy_inputs = (0..radix * vcs).filter(|&i| !f.inq.is_empty(r * radix * vcs + i)).count();
        if busy_inputs != f.waiting_of(r).len() {
            return self.fail(format!(
                "router {r} has {busy_inputs} non-empty input VCs but {} crossbar requests waiting",
                f.waiting_of(r).len()
            ));
        }
        for &e in f.waiting_of(r) {
            let (in_port, vc) = (request_in_port(e) as usize, request_in_vc(e));
            let Some(id) = f.inq.front((r * radix + in_port) * vcs + vc) else {
                return self.fail(format!("router {r} has a crossbar request from empty input {in_port} VC {vc}"));
            };
            let p = self.core.pkts.get(id);
            let (out_port, out_vc) = (request_port(e), request_vc(e));
            if (out_port, out_vc) != (p.out_port, p.out_vc) {
                return self.fail(format!(
                    "router {r}: the request of input {in_port} VC {vc} names output {out_port} VC {out_vc}, its \
                     head packet was routed to {} VC {}",
                    p.out_port, p.out_vc
                ));
            }
            let oi = (r * radix + out_port as usize) * vcs + out_vc as usize;
            // (SST timing: space freed since the router's last pass is seen at its next tick.)
            let held = self.out_flits_seen(oi / f.vcs, oi);
            if request_full_seen(e) && f.arb_freed[r] & freed_bit(out_port) == 0 && held + p.flits as u32 <= t.out_cap {
                return self.fail(format!(
                    "router {r}: the request of input {in_port} VC {vc} is marked as facing a full output buffer, \
                     but output {out_port} VC {out_vc} has room ({held}/{} flits)",
                    t.out_cap
                ));
            }
        }
        Ok(())
    }

    fn check_buffers(&self, r: usize) -> Result<()> {
        let (f, t) = (&self.fab, &self.core.t);
        let (radix, vcs) = (f.radix, f.vcs);
        for port in 0..radix {
            let pi = r * radix + port;
            for vc in 0..vcs {
                let qi = pi * vcs + vc;
                let in_cap = t.in_caps[f.ports[pi].class as usize % 3];
                if f.inq.flits(qi) > in_cap || f.credits.out_flits(qi) > t.out_cap {
                    return self.fail(format!(
                        "buffer over capacity at router {r} port {port} VC {vc}: input {}/{}, output {}/{}",
                        f.inq.flits(qi),
                        in_cap,
                        f.credits.out_flits(qi),
                        t.out_cap
                    ));
                }
                if t.shared_out && vc == 0 && f.credits.port_out_flits(qi, vcs) > t.out_cap {
                    return self.fail(format!(
                        "shared output queue over capacity at router {r} port {port}: {}/{} flits",
                        f.credits.port_out_flits(qi, vcs),
                        t.out_cap
                    ));
                }
                if f.credits.watched(qi) != f.credits.watched(pi * vcs) {
                    return self.fail(format!(
                        "credit watch flag of router {r} port {port} VC {vc} disagrees with VC 0 of the port (a port \
                         is blocked on credits as a whole)"
                    ));
                }
                // (BookSim timing: a port's output queue is its VC 0 queue, and its flits hold
                // downstream credits, not output-buffer space.)
                if !t.booksim && f.outq.flits(qi) > f.credits.out_flits(qi) {
                    return self.fail(format!(
                        "output buffer of router {r} port {port} VC {vc} holds {} flits but only {} are counted",
                        f.outq.flits(qi),
                        f.credits.out_flits(qi)
                    ));
                }
                let in_flits: u32 = f.inq.iter(qi).map(|id| self.core.pkts.get(id).flits as u32).sum();
                if in_flits != f.inq.flits(qi) {
                    return self.fail(format!(
                        "input occupancy counter {} != {in_flits} flits queued at router {r} port {port} VC {vc}",
                        f.inq.flits(qi)
                    ));
                }
            }
        }
        Ok(())
    }

    fn check_credits(&self, r: usize) -> Result<()> {
        let (f, t) = (&self.fab, &self.core.t);
        let (radix, vcs) = (f.radix, f.vcs);
        for port in 0..radix {
            let pi = r * radix + port;
            let (pr, pp) = f.ports[pi].peer;
            if self.core.topo.is_host_port(port as u16) || pr == NONE {
                continue;
            }
            for vc in 0..vcs {
                let qi = pi * vcs + vc;
                let down = (pr as usize * radix + pp as usize) * vcs + vc;
                let (free, returning) = f.credits.parts(qi);
                let wire = self.core.check.inflight_flits[qi];
                let total = free + wire + f.inq.flits(down) + returning;
                let cap = f.credits.cap_of(qi);
                if total != cap || cap != t.in_caps[f.ports[pi].class as usize % 3] {
                    return self.fail(format!(
                        "credits not conserved on router {r} port {port} VC {vc}: free {free} + on wire {wire} + \
                         downstream {} + returning {returning} != {}",
                        f.inq.flits(down),
                        cap
                    ));
                }
            }
        }
        Ok(())
    }

    fn check_nics(&self) -> Result<()> {
        let (f, t) = (&self.fab, &self.core.t);
        let (p, nic_vcs) = (self.core.topo.p, self.core.nic.vcs);
        for n in 0..self.core.topo.nodes() {
            // Over the NIC's injection VCs (one, or all with BookSim timing).
            let down = ((n / p) * f.radix + n % p) * f.vcs;
            let mut total = self.core.check.nic_inflight_flits[n];
            for vc in 0..nic_vcs {
                let (free, returning) = self.core.nic.credits.parts(n * nic_vcs + vc);
                total += free + f.inq.flits(down + vc) + returning;
            }
            if total != nic_vcs as u32 * t.in_caps[0] {
                return self.fail(format!(
                    "credits not conserved on the injection link of node {n}: {total} != {}",
                    nic_vcs as u32 * t.in_caps[0]
                ));
            }
        }
        Ok(())
    }

    /// BookSim timing: every non-empty input VC waits for VC allocation or holds the output VC
    /// its head was routed to, every held output VC is held by such an input VC, empty input
    /// VCs are idle, and the per-router counters match.
    fn check_iq(&self, r: usize) -> Result<()> {
        use crate::network::iq::{ACTIVE, FREE, IDLE, VA};
        let f = &self.fab;
        let (radix, vcs) = (f.radix, f.vcs);
        let base = r * radix * vcs;
        let mut busy = 0;
        for i in 0..radix * vcs {
            let (qi, state) = (base + i, f.iq.state[base + i]);
            let Some(id) = f.inq.front(qi) else {
                if state != IDLE {
                    return self.fail(format!("router {r}: empty input VC {i} is in allocation state {state}"));
                }
                continue;
            };
            busy += 1;
            let p = self.core.pkts.get(id);
            let oq = base + p.out_port as usize * vcs + p.out_vc as usize;
            let (w, bit) = (r * f.iq.words + i / 64, 1u64 << (i % 64));
            let bits = ((f.iq.va_bits[w] & bit != 0) as u8, (f.iq.active_bits[w] & bit != 0) as u8);
            if base + f.iq.want[qi] as usize != oq || bits != ((state == VA) as u8, (state == ACTIVE) as u8) {
                return self.fail(format!(
                    "router {r}: input VC {i} (state {state}, bits {bits:?}) caches output VC {} for a head \
                     routed to port {} VC {}",
                    f.iq.want[qi], p.out_port, p.out_vc
                ));
            }
            let holds = f.iq.held[oq] == qi as u32;
            if !(state == VA && !holds || state == ACTIVE && holds) {
                return self.fail(format!(
                    "router {r}: input VC {i} (state {state}) and output {} VC {} (held by {}) disagree",
                    p.out_port, p.out_vc, f.iq.held[oq]
                ));
            }
        }
        for o in 0..radix * vcs {
            let h = f.iq.held[base + o];
            if h != FREE && f.iq.state.get(h as usize) != Some(&ACTIVE) {
                return self
                    .fail(format!("router {r}: output VC {o} is held by input VC queue {h}, which is not active"));
            }
        }
        let queued: u32 = (0..radix).map(|p| f.outq.len((r * radix + p) * vcs)).sum();
        if busy != f.iq.busy_vcs[r] || queued != f.iq.queued[r] {
            return self.fail(format!(
                "router {r}: {busy} busy input VCs and {queued} queued packets, counters say {} and {}",
                f.iq.busy_vcs[r], f.iq.queued[r]
            ));
        }
        Ok(())
    }

    fn describe_port(&self, router: u32, port: u16) -> String {
        let topo = &self.core.topo;
        match topo.class_of_port(port) {
            LinkClass::Host => format!("port {port} (host, node {})", router as usize * topo.p + port as usize),
            class => {
                let (pr, pp) = self.fab.ports[self.fab.pidx(router, port)].peer;
                let kind = if class == LinkClass::Local { "local" } else { "global" };
                format!("port {port} ({kind}, to router {pr} port {pp} in group {})", topo.group_of(pr))
            }
        }
    }

    /// Where the network is stuck: the first router (lowest id) with a blocked head packet, its
    /// input port and VC, and the output it waits for. `since`: the last progress (the
    /// watchdog fired); None: nothing was left to happen (no pending event).
    pub(super) fn deadlock_report(&self, since: Option<Time>) -> String {
        let (f, t, topo) = (&self.fab, &self.core.t, &self.core.topo);
        // The blocked input VCs of router r: its waiting requests, or with BookSim timing its
        // non-empty input VCs.
        let first_blocked = |r: usize| -> Option<(u16, usize)> {
            if t.booksim {
                let base = r * f.radix * f.vcs;
                (0..f.radix * f.vcs).find(|&i| !f.inq.is_empty(base + i)).map(|i| ((i / f.vcs) as u16, i % f.vcs))
            } else {
                let e = f.waiting_of(r).iter().min_by_key(|&&e| e as u32)?;
                Some((request_in_port(*e), request_in_vc(*e)))
            }
        };
        let stuck_routers = (0..topo.routers()).filter(|&r| first_blocked(r).is_some()).count();
        let what = match since {
            Some(since) => format!(
                "no packet moved from t = {:.3} us to t = {:.3} us (run.watchdog_us = {})",
                ps_to_us(since),
                ps_to_us(self.core.now),
                self.core.cfg.run.watchdog_us
            ),
            None => format!("nothing is left to happen at t = {:.3} us", ps_to_us(self.core.now)),
        };
        let mut msg = format!(
            "{what} with {} packets in the network; {} routers hold blocked packets (routing {} with {} VCs)",
            self.core.acct.stuck_candidates(),
            stuck_routers,
            self.core.cfg.routing.algorithm,
            f.vcs
        );
        if let Some((r, (in_port, vc))) = (0..topo.routers()).find_map(|r| first_blocked(r).map(|b| (r, b))) {
            let qi = f.qidx(r as u32, in_port, vc);
            let id = f.inq.front(qi).expect("blocked head");
            let p = self.core.pkts.get(id);
            let oi = f.qidx(r as u32, p.out_port, p.out_vc as usize);
            let output = if t.booksim {
                let op = f.qidx(r as u32, p.out_port, 0);
                format!("output queue {} flits", f.outq.flits(op))
            } else {
                format!("output buffer {}/{} flits", f.credits.out_flits(oi), t.out_cap)
            };
            msg.push_str(&format!(
                "; first stuck: router {r} (group {}, router {} of its group), input {} VC {vc} holds {} packets; \
                 its head (node {} -> node {}, {} hops so far) waits for output {} VC {}: {output}, \
                 downstream credits {}/{} flits",
                topo.group_of(r as u32),
                topo.index_in_group(r as u32),
                self.describe_port(r as u32, in_port),
                f.inq.len(qi),
                p.src,
                p.dst,
                p.hops,
                self.describe_port(r as u32, p.out_port),
                p.out_vc,
                f.credits.free_at(oi, self.core.now),
                f.credits.cap_of(oi)
            ));
        }
        msg
    }
}
