//! Invariant checks (with `run.check`) and the watchdog's deadlock report.
//!
//! Checked invariants:
//! * packets are conserved: generated = in source queues + in the network + delivered, and the
//!   packet arena holds exactly the live ones;
//! * credits are conserved on every link and VC: free credits + flits on the wire + flits in the
//!   downstream input buffer + credits on the way back = input buffer capacity;
//! * no input or output buffer holds more than its capacity;
//! * each crossbar request names its head packet's output, and one marked as facing a full
//!   output buffer (`FULL_SEEN`, which spares the arbiter the buffer check) faces one.
//!
//! Hop bounds are asserted on every routing decision (in `sim.rs`), checks or not.

use super::sim::Simulation;
use super::sim::{request_full_seen, request_port, request_vc, VC_BITS, VC_MASK};
use crate::error::{Error, Result};
use crate::topology::{LinkClass, NONE};
use crate::units::ps_to_us;

impl Simulation {
    pub(super) fn check_invariants(&self) -> Result<()> {
        let fail = |m: String| Err(Error::Invariant(format!("{m} (t = {:.3} us)", ps_to_us(self.now))));
        if self.generated_total != self.in_source + self.in_network + self.delivered_total {
            return fail(format!(
                "packets not conserved: generated {} != source {} + network {} + delivered {}",
                self.generated_total, self.in_source, self.in_network, self.delivered_total
            ));
        }
        if self.pkts.live() as u64 != self.in_source + self.in_network {
            return fail(format!(
                "packet arena holds {} live packets, expected {}",
                self.pkts.live(),
                self.in_source + self.in_network
            ));
        }
        if let Some(n) = (0..self.nic_queue.len()).find(|&n| self.nic_queue[n].len() != self.queued_at(n)) {
            return fail(format!(
                "source queue of node {n} holds {} packets, its count says {}",
                self.nic_queue[n].len(),
                self.queued_at(n)
            ));
        }
        let queued: u64 = self.nic_queue.iter().map(|q| q.len() as u64).sum();
        if queued != self.in_source {
            return fail(format!("source queues hold {queued} packets, counter says {}", self.in_source));
        }
        let radix = self.radix();
        let vcs = self.vcs;
        for r in 0..self.topo.routers() {
            // Between events, each non-empty input VC has exactly its head's crossbar request
            // waiting (the idle-router path of `on_arrive` relies on it).
            let busy_inputs = (0..radix * vcs).filter(|&i| !self.inq.is_empty(r * radix * vcs + i)).count();
            if busy_inputs != self.waiting_of(r).len() {
                return fail(format!(
                    "router {r} has {busy_inputs} non-empty input VCs but {} crossbar requests waiting",
                    self.waiting_of(r).len()
                ));
            }
            // Each request names its head packet's output, and one marked as having found its
            // output buffer full finds it full still (the arbiter skips its buffer check).
            for &e in self.waiting_of(r) {
                let (in_port, vc) = ((e as u32 >> VC_BITS) as usize, (e as u32 & VC_MASK) as usize);
                let Some(id) = self.inq.front((r * radix + in_port) * vcs + vc) else {
                    return fail(format!("router {r} has a crossbar request from empty input {in_port} VC {vc}"));
                };
                let p = self.pkts.get(id);
                let (out_port, out_vc) = (request_port(e), request_vc(e));
                if (out_port, out_vc) != (p.out_port, p.out_vc) {
                    return fail(format!(
                        "router {r}: the request of input {in_port} VC {vc} names output {out_port} VC {out_vc}, \
                         its head packet was routed to {} VC {}",
                        p.out_port, p.out_vc
                    ));
                }
                let oi = (r * radix + out_port as usize) * vcs + out_vc as usize;
                if request_full_seen(e) && self.credits.out_flits(oi) + p.flits as u32 <= self.out_cap {
                    return fail(format!(
                        "router {r}: the request of input {in_port} VC {vc} is marked as facing a full output \
                         buffer, but output {out_port} VC {out_vc} has room ({}/{} flits)",
                        self.credits.out_flits(oi),
                        self.out_cap
                    ));
                }
            }
            for port in 0..radix {
                let pi = r * radix + port;
                for vc in 0..vcs {
                    let qi = pi * vcs + vc;
                    if self.inq.flits(qi) > self.in_cap || self.credits.out_flits(qi) > self.out_cap {
                        return fail(format!(
                            "buffer over capacity at router {r} port {port} VC {vc}: input {}/{}, output {}/{}",
                            self.inq.flits(qi),
                            self.in_cap,
                            self.credits.out_flits(qi),
                            self.out_cap
                        ));
                    }
                    if self.credits.watched(qi) != self.credits.watched(pi * vcs) {
                        return fail(format!(
                            "credit watch flag of router {r} port {port} VC {vc} disagrees with VC 0 of the port \
                             (a port is blocked on credits as a whole)"
                        ));
                    }
                    if self.outq.flits(qi) > self.credits.out_flits(qi) {
                        return fail(format!(
                            "output buffer of router {r} port {port} VC {vc} holds {} flits but only {} are counted",
                            self.outq.flits(qi),
                            self.credits.out_flits(qi)
                        ));
                    }
                    let in_flits: u32 = self.inq.iter(qi).map(|id| self.pkts.get(id).flits as u32).sum();
                    if in_flits != self.inq.flits(qi) {
                        return fail(format!(
                            "input occupancy counter {} != {} flits queued at router {r} port {port} VC {vc}",
                            self.inq.flits(qi),
                            in_flits
                        ));
                    }
                    let (pr, pp) = self.ports[pi].peer;
                    if self.topo.is_host_port(port as u16) || pr == NONE {
                        continue;
                    }
                    let down = (pr as usize * radix + pp as usize) * vcs + vc;
                    let (free, returning) = self.credits.parts(qi);
                    let total = free + self.inflight_flits[qi] + self.inq.flits(down) + returning;
                    if total != self.in_cap {
                        return fail(format!(
                            "credits not conserved on router {r} port {port} VC {vc}: free {free} + on wire {} + \
                             downstream {} + returning {returning} != {}",
                            self.inflight_flits[qi],
                            self.inq.flits(down),
                            self.in_cap
                        ));
                    }
                }
            }
        }
        for n in 0..self.topo.nodes() {
            let r = n / self.topo.p;
            let port = n % self.topo.p;
            let down = (r * radix + port) * vcs;
            let (free, returning) = self.nic_credits.parts(n);
            let total = free + self.nic_inflight_flits[n] + self.inq.flits(down) + returning;
            if total != self.in_cap {
                return fail(format!(
                    "credits not conserved on the injection link of node {n}: {total} != {}",
                    self.in_cap
                ));
            }
        }
        Ok(())
    }

    fn describe_port(&self, router: u32, port: u16) -> String {
        match self.topo.class_of_port(port) {
            LinkClass::Host => format!("port {port} (host, node {})", router as usize * self.topo.p + port as usize),
            class => {
                let (pr, pp) = self.ports[router as usize * self.radix() + port as usize].peer;
                let kind = if class == LinkClass::Local { "local" } else { "global" };
                format!("port {port} ({kind}, to router {pr} port {pp} in group {})", self.topo.group_of(pr))
            }
        }
    }

    /// Where the network is stuck: the first router (lowest id) with a blocked head packet, its
    /// input port and VC, and the output it waits for.
    pub(super) fn deadlock_report(&self) -> String {
        let radix = self.radix();
        let vcs = self.vcs;
        let stuck_routers = (0..self.topo.routers()).filter(|&r| !self.waiting_of(r).is_empty()).count();
        let mut msg = format!(
            "no packet moved for {:.1} us (t = {:.3} us) with {} packets in the network; {} routers hold blocked packets \
             (routing {} with {} VCs)",
            self.cfg.run.watchdog_us,
            ps_to_us(self.now),
            self.in_network,
            stuck_routers,
            self.cfg.routing.algorithm,
            vcs
        );
        for r in 0..self.topo.routers() {
            if let Some(e) = self.waiting_of(r).iter().map(|&e| e as u32).min() {
                let (in_port, vc) = ((e >> VC_BITS) as u16, (e & VC_MASK) as usize);
                let qi = (r * radix + in_port as usize) * vcs + vc;
                let id = self.inq.front(qi).expect("waiting head");
                let p = self.pkts.get(id);
                let oi = (r * radix + p.out_port as usize) * vcs + p.out_vc as usize;
                msg.push_str(&format!(
                    "; first stuck: router {r} (group {}, router {} of its group), input {} VC {vc} holds {} packets; \
                     its head (node {} -> node {}, {} hops so far) waits for output {} VC {}: output buffer {}/{} flits, \
                     downstream credits {}/{} flits",
                    self.topo.group_of(r as u32),
                    self.topo.index_in_group(r as u32),
                    self.describe_port(r as u32, in_port),
                    self.inq.len(qi),
                    p.src,
                    p.dst,
                    p.hops,
                    self.describe_port(r as u32, p.out_port),
                    p.out_vc,
                    self.credits.out_flits(oi),
                    self.out_cap,
                    self.credits.free_at(oi, self.now),
                    self.in_cap
                ));
                break;
            }
        }
        msg
    }
}
