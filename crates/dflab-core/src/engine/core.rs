//! The part of a simulation that does not depend on the routing: the clock and event queue, the
//! packet arena, the NICs, statistics and probes, and the run's accounting. Compiled once, not
//! once per routing; the workload ([`crate::workload`]) drives it through
//! [`crate::workload::WorkloadCtx`].

use super::event::Event;
use super::queue::EventQueue;
use super::timing::{Lanes, Timing};
use crate::config::Experiment;
use crate::network::nic::Nics;
use crate::network::{Packet, PacketArena, PacketId, RoutingArea};
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
    /// The last time a packet moved (the watchdog's reference).
    pub last_progress: Time,
    pub traversals: u64,
    pub events: u64,
    /// Packets delivered and held until the workload hears of them (`Event::Delivered`).
    pub held: u64,
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
    pub acct: Accounting,
    pub check: CheckState,
    /// The routing part of a new packet's header (the routing's default header).
    pub header: RoutingArea,
    /// With `trace`: the packets delivered so far and when.
    pub traced: Option<Vec<(Packet, Time)>>,
}

impl Core {
    /// `queues`: VC queues of the routers (for the check bookkeeping); `workload_delays`: the
    /// workload's fixed delays (its lanes).
    pub fn new(
        cfg: &Experiment,
        topo: Topology,
        t: Timing,
        queues: usize,
        header: RoutingArea,
        probes: Probes,
        workload_delays: &[Time],
    ) -> Core {
        let mut q = EventQueue::new();
        let lanes = Lanes::register(&mut q, &t, workload_delays);
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
            nic: Nics::new(nodes, t.in_cap, cfg.seed),
            stats,
            probes,
            acct: Accounting::default(),
            check: CheckState {
                on: check,
                inflight_flits: if check { vec![0; queues] } else { Vec::new() },
                nic_inflight_flits: if check { vec![0; nodes] } else { Vec::new() },
            },
            header,
            traced: None,
            t,
            topo,
        }
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
        self.acct.last_progress = self.now;
        if at >= self.t.end {
            return false; // still in flight when the run stops
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
        self.stats.on_deliver(at, hops, minimal, *self.pkts.stamps(id), bytes);
        self.acct.in_network -= 1;
        self.acct.delivered_total += 1;
        true
    }

    /// Schedule `ev` on lane `lane` (its fixed delay after now).
    #[inline(always)]
    pub fn push(&mut self, lane: usize, ev: Event) {
        self.q.push(lane, ev);
    }

    /// Schedule `ev` at `at` (not before now).
    #[inline(always)]
    pub fn at(&mut self, at: Time, ev: Event) {
        self.q.at(at, ev);
    }
}
