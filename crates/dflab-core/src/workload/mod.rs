//! Traffic as a component: what injects packets into the NICs. The synthetic generator
//! ([`synthetic`]: destination patterns, Bernoulli or periodic injection, phases) is one
//! implementation of [`Workload`]; closed-loop programs (a ping-pong, MPI-like motifs) are
//! others. A workload talks to the network only through its [`WorkloadCtx`]: it sends packets,
//! asks to be woken at a time (or after one of its fixed delays), and hears of deliveries and
//! of room in a full source queue.

pub mod background;
pub mod calendar;
pub mod motifs;
pub mod mpi;
pub mod synthetic;

use rand::SeedableRng;

use crate::engine::core::Core;
use crate::engine::event::Event;
use crate::engine::observe::JobProgress;
use crate::engine::stream_seed;
use crate::network::{Packet, Stamps};
use crate::routing::Rng;
use crate::stats::ProbeSpec;
use crate::topology::Topology;
use crate::units::Time;

pub use synthetic::Synthetic;

/// A source of traffic (see the module comment). Every method runs at the simulated time
/// [`WorkloadCtx::now`].
pub trait Workload: Send {
    /// Delays (ps) the workload schedules many wake-ups with ([`WorkloadCtx::wake_after`]):
    /// each gets a FIFO lane of the event queue, cheaper than arbitrary times.
    fn fixed_delays(&self) -> Vec<Time> {
        Vec::new()
    }

    /// The run starts (time 0): schedule the first sends or wake-ups.
    fn start(&mut self, cx: &mut WorkloadCtx);

    /// A wake-up asked for with [`WorkloadCtx::wake_at`] or [`WorkloadCtx::wake_after`].
    fn on_wake(&mut self, cx: &mut WorkloadCtx, kind: u8, a: u32, b: u32);

    /// A packet left the source queue of `node`, after the workload asked to hear of it
    /// ([`WorkloadCtx::notify_when_space`]).
    fn on_source_space(&mut self, _cx: &mut WorkloadCtx, _node: u32) {}

    /// Whether [`Workload::on_delivered`] is wanted (it costs an event per packet).
    fn wants_deliveries(&self) -> bool {
        false
    }

    /// Whether every packet it sends has `network.packet_flits` flits (the engine then reads
    /// no packet for its size, and the BookSim timing, which needs single-flit packets,
    /// accepts it). The default: packets of several sizes.
    fn uniform_packets(&self) -> bool {
        false
    }

    /// `pkt` (sent by this workload) reached its destination node now; `stamps` says when it
    /// was generated and injected.
    fn on_delivered(&mut self, _cx: &mut WorkloadCtx, _pkt: &Packet, _stamps: &Stamps) {}

    /// Whether the workload has finished: the run then ends as soon as the network is empty,
    /// before `run.warmup_us + run.measure_us` if need be.
    fn finished(&self) -> bool {
        false
    }

    /// Whether a finished workload ends the run at once, packets still in the network (those
    /// of background traffic) or not; the default waits for the network to empty.
    fn ends_in_flight(&self) -> bool {
        false
    }

    /// Nothing is left to happen and the workload has not finished: why (a deadlock in its
    /// programs), or `None` if that is a normal end.
    fn stalled(&self) -> Option<String> {
        None
    }

    /// The job of each node's traffic (`u16::MAX`: none) and the number of jobs, for the
    /// per-port statistics ([`crate::stats::ports`]); `None`: not kept.
    fn node_jobs(&self) -> Option<(Vec<u16>, usize)> {
        None
    }

    /// The workload's own results at the end of the run (at `end`).
    fn report(&self, _end: Time) -> Option<mpi::metrics::WorkloadReport> {
        None
    }

    /// How far each job is, for a progress display (called about every 0.2 s of wall time, so
    /// it may look at every rank).
    fn progress(&self) -> Vec<JobProgress> {
        Vec::new()
    }

    /// What background traffic beside the jobs did ([`background`]), at the end `end`.
    fn background(&self, _end: Time) -> Option<background::BackgroundReport> {
        None
    }

    /// The probes the workload writes with [`WorkloadCtx::count`].
    fn probes(&self) -> Vec<ProbeSpec> {
        Vec::new()
    }
}

/// What a workload sees of the simulation.
pub struct WorkloadCtx<'a> {
    pub(crate) core: &'a mut Core,
    /// Index of the workload's first probe among the run's probes.
    pub(crate) probe_base: usize,
    /// Nodes whose source queue made room for a workload that asked (reported after the call).
    pub(crate) space: &'a mut Vec<u32>,
}

impl WorkloadCtx<'_> {
    pub fn now(&self) -> Time {
        self.core.now
    }

    pub fn topo(&self) -> &Topology {
        &self.core.topo
    }

    /// The end of the run (`run.warmup_us + run.measure_us`).
    pub fn end(&self) -> Time {
        self.core.t.end
    }

    /// A random stream of the workload's own, from the experiment seed and `(kind, id)` (kinds
    /// 0 to 3 are the engine's).
    pub fn stream(&self, kind: u64, id: u64) -> Rng {
        Rng::seed_from_u64(stream_seed(self.core.cfg.seed, kind, id))
    }

    /// Node `src` sends a packet of `flits` flits (at most `network.packet_flits`, the largest
    /// packet the network's buffers are sized and woken for) to node `dst` now; `tag` comes
    /// back with it in [`Workload::on_delivered`]. It counts as generated (offered load).
    pub fn send(&mut self, src: u32, dst: u32, flits: u16, tag: u32) {
        assert!(flits >= 1 && flits <= self.core.t.packet_flits, "a packet has 1 to network.packet_flits flits");
        let mut pkt = self.core.packet(src, dst, flits);
        pkt.tag = tag;
        let bytes = flits as u64 * self.core.cfg.network.flit_bytes as u64;
        self.core.acct.generated_total += 1;
        self.core.stats.on_generate(self.core.now, 1, bytes);
        if self.core.nic_submit(src, pkt) {
            self.space.push(src);
        }
    }

    /// Packets waiting in the source queue of `node`.
    pub fn queued(&self, node: u32) -> u32 {
        self.core.nic.node[node as usize].queued
    }

    /// Report the next packet that leaves the source queue of `node`
    /// ([`Workload::on_source_space`]).
    pub fn notify_when_space(&mut self, node: u32) {
        self.core.nic.node[node as usize].notify = true;
    }

    /// [`Workload::on_wake`] with `kind`, `a`, `b` at `at` (not before now).
    pub fn wake_at(&mut self, at: Time, kind: u8, a: u32, b: u32) {
        debug_assert!(at >= self.core.now);
        self.core.at(at, Event::Workload { kind, a, b });
    }

    /// [`Workload::on_wake`] after the `i`-th of the workload's [`Workload::fixed_delays`].
    pub fn wake_after(&mut self, i: usize, kind: u8, a: u32, b: u32) {
        self.core.wake_workload_after(i, delay_of(self.core, i), Event::Workload { kind, a, b });
    }

    /// Add `n` to the workload's probe `probe` (its index in [`Workload::probes`]).
    pub fn count(&mut self, probe: usize, n: u64) {
        self.core.probes.add(self.probe_base + probe, 0, self.core.now, n);
    }
}

/// The `i`-th fixed delay of the workload (for the timer wheel when it has no lane).
fn delay_of(core: &Core, i: usize) -> Time {
    core.workload_delays[i]
}

/// The run's workload: the synthetic generator, dispatched statically (its generation is on the
/// hot path), or any other [`Workload`].
pub enum Traffic {
    Synthetic(Box<Synthetic>),
    Custom(Box<dyn Workload>),
}

impl Traffic {
    pub fn fixed_delays(&self) -> Vec<Time> {
        match self {
            Traffic::Synthetic(s) => s.fixed_delays(),
            Traffic::Custom(w) => w.fixed_delays(),
        }
    }

    pub fn probes(&self) -> Vec<ProbeSpec> {
        match self {
            Traffic::Synthetic(_) => Vec::new(),
            Traffic::Custom(w) => w.probes(),
        }
    }

    pub fn wants_deliveries(&self) -> bool {
        matches!(self, Traffic::Custom(w) if w.wants_deliveries())
    }

    /// Whether every packet has `network.packet_flits` flits (see [`Workload::uniform_packets`]).
    pub fn uniform_packets(&self) -> bool {
        match self {
            Traffic::Synthetic(_) => true,
            Traffic::Custom(w) => w.uniform_packets(),
        }
    }

    pub fn finished(&self) -> bool {
        matches!(self, Traffic::Custom(w) if w.finished())
    }

    /// See [`Workload::ends_in_flight`].
    pub fn ends_in_flight(&self) -> bool {
        matches!(self, Traffic::Custom(w) if w.ends_in_flight())
    }

    /// See [`Workload::progress`].
    pub fn progress(&self) -> Vec<JobProgress> {
        match self {
            Traffic::Custom(w) => w.progress(),
            Traffic::Synthetic(_) => Vec::new(),
        }
    }

    /// See [`Workload::background`].
    pub fn background(&self, end: Time) -> Option<background::BackgroundReport> {
        match self {
            Traffic::Custom(w) => w.background(end),
            Traffic::Synthetic(_) => None,
        }
    }

    /// See [`Workload::stalled`].
    pub fn stalled(&self) -> Option<String> {
        match self {
            Traffic::Custom(w) => w.stalled(),
            Traffic::Synthetic(_) => None,
        }
    }

    /// See [`Workload::node_jobs`].
    pub fn node_jobs(&self) -> Option<(Vec<u16>, usize)> {
        match self {
            Traffic::Custom(w) => w.node_jobs(),
            Traffic::Synthetic(_) => None,
        }
    }

    /// See [`Workload::report`].
    pub fn report(&self, end: Time) -> Option<mpi::metrics::WorkloadReport> {
        match self {
            Traffic::Custom(w) => w.report(end),
            Traffic::Synthetic(_) => None,
        }
    }

    /// Whether the workload can run in logical partitions (each node's traffic depends only on
    /// its own partition): the synthetic generator can; other workloads run one partition.
    pub fn partitionable(&self) -> bool {
        matches!(self, Traffic::Synthetic(_))
    }

    /// One schedule per partition (`node_bounds`: the first node of each and one past the
    /// last); only for a [`Traffic::partitionable`] workload.
    pub fn partition(&mut self, node_bounds: &[u32]) {
        if let Traffic::Synthetic(s) = self {
            s.partition(node_bounds);
        }
    }

    /// Put partition `to`'s schedule in place.
    pub fn switch_partition(&mut self, to: usize) {
        if let Traffic::Synthetic(s) = self {
            s.switch_partition(to);
        }
    }
}
