//! The part of a simulation that does not depend on the routing: the clock and event queue, the
//! packet arena, the NICs, statistics and probes, and the run's accounting. Compiled once, not
//! once per routing; the workload ([`crate::workload`]) drives it through
//! [`crate::workload::WorkloadCtx`].

use super::event::Event;
use super::partition::{CreditReturn, Cross, Mailbox};
use super::queue::EventQueue;
use super::timing::{Lanes, Timing};
use crate::config::Experiment;
use crate::network::nic::Nics;
use crate::network::{Packet, PacketArena, PacketId, RoutingArea, Stamps};
use crate::stats::{Probes, Stats};
use crate::topology::Topology;
use crate::units::Time;

/// Packets per node the arena has room for from the start (it grows beyond as needed).
const PACKETS_RESERVED_PER_NODE: usize = 16;

/// Counts kept by the run itself (conservation, progress, speed).
#[derive(Debug, Default, Clone)]
pub struct Accounting {
    pub in_network: u64,
    pub in_source: u64,
    pub generated_total: u64,
    pub delivered_total: u64,
    /// The first barrier after the last window in which a packet moved or the network was
    /// empty (the watchdog's reference, kept at barriers: see `Simulation::watch`).
    pub last_progress: Time,
    /// `traversals + delivered_total` at that barrier.
    pub moves_then: u64,
    pub traversals: u64,
    pub events: u64,
    /// Packets delivered and held until the workload hears of them (`Event::Delivered`).
    pub held: u64,
    /// Packets in the network whose delivery falls at or after the end: nothing is left to do
    /// for them (not stuck, though still counted in `in_network`).
    pub past_end: u64,
    /// The watchdog found no packet in the network at its last barrier.
    pub empty_then: bool,
}

impl Accounting {
    /// Packets in the network that have something left to do.
    pub fn stuck_candidates(&self) -> u64 {
        self.in_network - self.past_end
    }
}

/// Bookkeeping of the invariant checks (`run.check`): flits on each link, by sending VC.
pub struct CheckState {
    pub on: bool,
    pub inflight_flits: Vec<u32>,
    pub nic_inflight_flits: Vec<u32>,
}

pub struct Core {
    pub cfg: Experiment,
    pub topo: Topology,
    pub t: Timing,
    pub q: EventQueue,
    pub lanes: Lanes,
    pub now: Time,
    pub pkts: PacketArena,
    pub nic: Nics,
    pub stats: Stats,
    pub probes: Probes,
    /// With `run.decision_probes`: the first of the two minimal-path probes.
    pub min_path_probe: Option<usize>,
    pub acct: Accounting,
    pub check: CheckState,
    /// The routing part of a new packet's header (the routing's default header).
    pub header: RoutingArea,
    /// With `trace`: the packets delivered so far and when.
    pub traced: Option<Vec<(Packet, Time)>>,
    /// Events over global links are put in canonical order at window barriers and their credits
    /// given back there (`partition.rs`); off only when nothing crosses between groups with any
    /// latency.
    pub cross: bool,
    /// The run is cut into logical partitions: events over global links go through the mailbox.
    pub mailed: bool,
    pub mail: Mailbox,
    /// The workload's fixed delays (its lanes, if it got them).
    pub workload_delays: Vec<Time>,
    /// Per port bytes by job and stall time, for a workload that places jobs.
    pub ports: Option<crate::stats::ports::PortStats>,
}

impl Core {
    /// `queues`: VC queues of the routers (for the check bookkeeping); `workload_delays`: the
    /// workload's fixed delays (its lanes); `cross`: global-link events go through the mailbox.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        cfg: &Experiment,
        topo: Topology,
        t: Timing,
        queues: usize,
        header: RoutingArea,
        probes: Probes,
        workload_delays: &[Time],
        cross: bool,
    ) -> Core {
        let mut q = EventQueue::new();
        let lanes = Lanes::register(&mut q, &t, workload_delays, cross);
        let nodes = topo.nodes();
        let check = cfg.run.check;
        let stats = Stats::new(t.warm, t.end, crate::units::us_to_ps(cfg.run.window_us).max(1));
        Core {
            cfg: cfg.clone(),
            q,
            lanes,
            now: 0,
            // Growing the arena one doubling at a time would copy every packet.
            pkts: PacketArena::with_capacity(nodes * PACKETS_RESERVED_PER_NODE),
            nic: Nics::new(nodes, t.in_caps[0], cfg.seed),
            stats,
            probes,
            min_path_probe: None,
            acct: Accounting::default(),
            check: CheckState {
                on: check,
                inflight_flits: if check { vec![0; queues] } else { Vec::new() },
                nic_inflight_flits: if check { vec![0; nodes] } else { Vec::new() },
            },
            header,
            traced: None,
            cross,
            mailed: false,
            mail: Mailbox::default(),
            workload_delays: workload_delays.to_vec(),
            ports: None,
            t,
            topo,
        }
    }

    /// An empty event queue with the same lanes as the core's (a partition's).
    pub fn queue_like(&self, workload_delays: &[Time]) -> EventQueue {
        let mut q = EventQueue::new();
        Lanes::register(&mut q, &self.t, workload_delays, self.cross);
        q
    }

    /// `ev` for `router` on lane `lane` (its delay after now) over a link of `class`: through
    /// the mailbox if it crosses between groups in a partitioned run.
    #[inline(always)]
    pub fn send_over_link(&mut self, class: usize, lane: usize, delay: Time, ev: Event, router: u32) {
        if class == 2 && self.mailed {
            let time = self.now + delay;
            self.mail.events.push(Cross { time, router, lane: Some(lane), ev, from: u32::MAX });
        } else {
            self.q.push(lane, ev);
        }
    }

    /// Credits on their way back over a global link (see `CreditReturn`).
    #[inline(always)]
    pub fn send_credits(&mut self, at: Time, queue: usize, router: u32, port: u16, flits: u32) {
        self.mail.credits.push(CreditReturn { at, queue: queue as u32, router, port, flits });
    }

    /// A new packet from `src` to `dst` of `flits` flits, with the routing's default header.
    #[inline]
    pub fn packet(&self, src: u32, dst: u32, flits: u16) -> Packet {
        Packet::new(src, dst, self.topo.router_of_node(dst), flits, self.header)
    }

    /// The flits of packet `id`: read from the packet only when the run's packets have several
    /// sizes (see `Timing::uniform_flits`).
    #[inline(always)]
    pub fn flits_of(&self, id: PacketId) -> u32 {
        match self.t.uniform_flits {
            Some(f) => f as u32,
            None => self.pkts.get(id).flits as u32,
        }
    }

    /// Record the delivery of packet `id` at `at` (it started on its ejection link now), unless
    /// that is past the end of the run; returns whether it was recorded (and released).
    #[inline(always)]
    pub fn record_delivery(&mut self, id: PacketId, at: Time) -> bool {
        if at >= self.t.end {
            // Still in flight when the run stops, with nothing left to do for it.
            self.acct.past_end += 1;
            return false;
        }
        let p = self.pkts.get(id);
        let (hops, minimal) = (p.hops, !p.nonminimal);
        if let Some(traced) = &mut self.traced {
            traced.push((*p, at));
        }
        let bytes = match self.t.uniform_flits {
            Some(_) => self.t.packet_bytes,
            None => p.flits as u64 * self.t.flit_bytes,
        };
        let stamps = *self.pkts.stamps(id);
        if self.t.whole_ns {
            // SST's stamps: whole ns at the send and at the arrival (the window follows them).
            let ns = |t: Time| t / 1000 * 1000;
            let whole = Stamps { gen_time: ns(stamps.gen_time), inject_time: ns(stamps.inject_time) };
            self.stats.on_deliver(ns(at), hops, minimal, whole, bytes);
        } else {
            self.stats.on_deliver(at, hops, minimal, stamps, bytes);
        }
        self.acct.in_network -= 1;
        self.acct.delivered_total += 1;
        true
    }

    /// Schedule `ev` on lane `lane` (its fixed delay after now).
    #[inline(always)]
    pub fn push(&mut self, lane: usize, ev: Event) {
        self.q.push(lane, ev);
    }

    /// Schedule the workload's `ev` after its `i`-th fixed delay `delay`: on its lane, or on the
    /// timer wheel if the lanes were all taken.
    #[inline(always)]
    pub fn wake_workload_after(&mut self, i: usize, delay: Time, ev: Event) {
        match self.lanes.workload[i] {
            Some(lane) => self.q.push(lane, ev),
            None => self.q.at(self.now + delay, ev),
        }
    }

    /// Schedule `ev` at `at` (not before now).
    #[inline(always)]
    pub fn at(&mut self, at: Time, ev: Event) {
        self.q.at(at, ev);
    }
}
