//! Synthetic traffic: every node generates packets of `network.packet_flits` flits to
//! destinations drawn from `traffic.pattern`, by a Bernoulli process on packet slots or a
//! periodic one, at `traffic.load`; `traffic.phases` change the load and/or the pattern at
//! given times; `traffic.source_queue_packets` bounds the source queues (generation pauses while
//! one is full, as SST's TrafficGen defers its rounds).
//!
//! Bernoulli packets sit on slot boundaries (one slot = a packet's serialisation on the host
//! link), so instead of one event per packet the generator keeps, per slot, the list of nodes
//! whose next packet falls in it ([`super::calendar`]) and visits one slot per event.
//! Lock-step nodes all generate at the same instants: one *round* event per instant generates
//! for every node of the partition in node order, as their per-node events (filed in that
//! order) would; a node whose round is deferred by a full source queue leaves the round and
//! goes on with events of its own until the next phase.
//!
//! As background traffic beside application jobs ([`super::background`]) it generates for a
//! set of nodes only (to destinations in the set), with wake-up kinds and a lane of its own,
//! and leaves the nodes' shared source-queue notifications to the workload around it.
//!
//! The generator keeps one [`Schedule`] per logical partition of the run (the nodes of a range
//! of groups, see `engine/partition.rs`): its own calendar, slot chain, phase and sampler, so
//! that a partition's packets do not depend on how far the others have run.

use std::ops::Range;

use rand::SeedableRng;

use super::background::NodeSet;
use super::calendar::SlotCalendar;
use super::Workload;
use crate::config::{Experiment, NicPolicy, Process};
use crate::engine::core::Core;
use crate::engine::event::Event;
use crate::engine::stream_seed;
use crate::error::Result;
use crate::fastdiv::FastDiv;
use crate::prefetch::prefetch;
use crate::routing::Rng;
use crate::topology::Topology;
use crate::traffic::{Injector, Pattern, PatternSampler, LOCKSTEP_START};
use crate::units::{transfer_ps, us_to_ps, Time};

/// Wake-up kinds of the generator.
const GEN: u8 = 0;
const SLOT: u8 = 1;
const PHASE: u8 = 2;
const ROUND: u8 = 3;

/// The node's workload words (`NodeState::work`) hold its generation schedule: for the
/// periodic process, the time of the first packet of the current schedule and the packets
/// generated since (the next time is computed from both, without drift; Bernoulli packets filed
/// from a slot do not count).
const FIRST: usize = 0;
const COUNT: usize = 1;

/// A traffic phase, parsed once.
struct Phase {
    start: Time,
    load: Option<f64>,
    pattern: Option<Pattern>,
}

pub struct Synthetic {
    topo: Topology,
    seed: u64,
    process: Process,
    allow_self: bool,
    nic_policy: NicPolicy,
    flits: u16,
    packet_bytes: u64,
    end: Time,
    source_limit: usize,
    /// The pattern and load before any phase.
    pattern: Pattern,
    load: f64,
    phases: Vec<Phase>,
    /// `traffic.process` is Bernoulli (packets on slot boundaries, filed in a calendar).
    bernoulli: bool,
    /// `traffic.process` is lock-step (packets in rounds, see the module's doc).
    lockstep: bool,
    slot: Time,
    /// The first Bernoulli slot starting at or after the end: packets of later slots are not
    /// filed.
    end_slot: u64,
    slot_div: Option<FastDiv>,
    /// The schedule of the partition running now (the only one without partitions).
    s: Schedule,
    /// The schedules of the other partitions, by partition.
    parked: Vec<Option<Schedule>>,
    active: usize,
    /// Background mode (see the module comment): added to the wake-up kinds, the event-queue
    /// lane of the slot chain, the tag of every packet.
    kind_base: u8,
    lane: usize,
    tag: u32,
    /// The nodes generating (and receiving) when not every node does.
    within: Option<Box<NodeSet>>,
    /// The source-queue notifications are shared with another workload: a node's deferred
    /// round is marked in `deferred`, and a notification its own packet triggers is left in
    /// `woken` for the owner to hand out.
    shared: bool,
    deferred: Vec<bool>,
    pub woken: Vec<u32>,
}

/// The generation schedule of the nodes of one partition.
struct Schedule {
    nodes: Range<u32>,
    sampler: PatternSampler,
    injector: Injector,
    calendar: SlotCalendar,
    /// The slot visited last and its start: slot indices near it are found with a multiply
    /// (`slot_div`, when the slot fits 32 bits) instead of a 64-bit division.
    cur_slot: u64,
    cur_slot_start: Time,
    slot_pending: bool,
    /// Generation wake-ups carry the epoch they were scheduled in; a phase change starts a new
    /// one.
    gen_epoch: u32,
    /// Lock-step: the nodes of `nodes` (by offset) that generate in the round, the first round
    /// of the epoch and the rounds since (the next one's time is computed from both, as a
    /// node's own schedule is).
    in_round: Vec<bool>,
    round_members: usize,
    round_first: Time,
    round_count: u64,
}

impl Synthetic {
    pub fn new(cfg: &Experiment, topo: &Topology) -> Result<Synthetic> {
        let t = &cfg.traffic;
        let n = &cfg.network;
        let pattern = t.pattern.parse("traffic.pattern", topo)?;
        let packet_bytes = n.flit_bytes as u64 * n.packet_flits as u64;
        let slot = transfer_ps(packet_bytes, n.host_bw_gbps);
        let end = us_to_ps(cfg.run.warmup_us) + us_to_ps(cfg.run.measure_us);
        let phases = t
            .phases
            .iter()
            .enumerate()
            .map(|(i, ph)| {
                let field = format!("traffic.phases[{i}].pattern");
                let pattern = ph.pattern.as_ref().map(|p| p.parse(&field, topo)).transpose()?;
                Ok(Phase { start: us_to_ps(ph.start_us), load: ph.load, pattern })
            })
            .collect::<Result<Vec<Phase>>>()?;
        // Only the compute groups' NICs generate (all endpoints, unless topology.compute_groups).
        let s = Schedule::new(
            0..topo.compute_endpoints() as u32,
            sampler_of(cfg.seed, topo, (t.allow_self, t.nic_policy), pattern.clone(), 0),
            Injector::new(t.process, t.load, slot),
            topo.nodes(),
        );
        Ok(Synthetic {
            topo: topo.clone(),
            seed: cfg.seed,
            process: t.process,
            allow_self: t.allow_self,
            nic_policy: t.nic_policy,
            flits: n.packet_flits as u16,
            packet_bytes,
            end,
            source_limit: t.source_queue_packets.map_or(usize::MAX, |l| l as usize),
            pattern,
            load: t.load,
            phases,
            bernoulli: t.process == Process::Bernoulli,
            lockstep: t.process == Process::Lockstep,
            slot,
            end_slot: end.div_ceil(slot),
            slot_div: u32::try_from(slot).ok().map(FastDiv::new),
            s,
            parked: vec![None],
            active: 0,
            kind_base: 0,
            lane: 0,
            tag: 0,
            within: None,
            shared: false,
            deferred: Vec::new(),
            woken: Vec::new(),
        })
    }

    /// The generator as background traffic (see the module comment): on `within`'s nodes (all
    /// when `None`), its wake-up kinds from `kind_base`, its slot chain on the workload's lane
    /// `lane`, its packets tagged `tag`. Before the run starts.
    pub fn as_background(mut self, within: Option<NodeSet>, kind_base: u8, lane: usize, tag: u32) -> Synthetic {
        self.within = within.map(Box::new);
        (self.kind_base, self.lane, self.tag, self.shared) = (kind_base, lane, tag, true);
        self.deferred = vec![false; self.topo.nodes()];
        self
    }

    /// Whether `node`'s round waits for room in its source queue; it no longer does.
    pub fn take_deferred(&mut self, node: u32) -> bool {
        std::mem::take(&mut self.deferred[node as usize])
    }

    /// The nodes of the running schedule that generate.
    fn generating(&self) -> Vec<u32> {
        match &self.within {
            Some(set) => set.nodes.clone(),
            None => self.s.nodes.clone().collect(),
        }
    }

    /// A schedule for `nodes` as at the start of the run.
    fn schedule(&self, nodes: Range<u32>) -> Schedule {
        let sampler = self.sampler(self.pattern.clone(), 0);
        Schedule::new(nodes, sampler, Injector::new(self.process, self.load, self.slot), self.topo.nodes())
    }

    /// The sampler of `pattern` drawn from pattern stream `id` (see [`sampler_of`]).
    fn sampler(&self, pattern: Pattern, id: u64) -> PatternSampler {
        sampler_of(self.seed, &self.topo, (self.allow_self, self.nic_policy), pattern, id)
    }

    /// One schedule per partition: partition `p` generates for nodes
    /// `node_bounds[p]..node_bounds[p + 1]`. Before the run starts.
    pub fn partition(&mut self, node_bounds: &[u32]) {
        let compute = self.topo.compute_endpoints() as u32;
        let parts: Vec<Schedule> =
            node_bounds.windows(2).map(|b| self.schedule(b[0].min(compute)..b[1].min(compute))).collect();
        let mut parts = parts.into_iter();
        self.s = parts.next().expect("at least one partition");
        self.parked = std::iter::once(None).chain(parts.map(Some)).collect();
        self.active = 0;
    }

    /// Put partition `to`'s schedule in place.
    pub fn switch_partition(&mut self, to: usize) {
        let incoming = self.parked[to].take().expect("a parked partition has its schedule");
        let outgoing = std::mem::replace(&mut self.s, incoming);
        self.parked[self.active] = Some(outgoing);
        self.active = to;
    }

    /// The generator's lane: one Bernoulli slot.
    pub fn fixed_delays(&self) -> Vec<Time> {
        vec![self.slot]
    }

    /// Start the schedule in place (each partition's, with its queue in place).
    pub fn start(&mut self, core: &mut Core) {
        if self.bernoulli {
            // The slot chain starts at slot 0 and visits every slot while nodes are filed.
            self.s.slot_pending = true;
            core.at(0, Event::Workload { kind: SLOT + self.kind_base, a: 0, b: 0 });
        }
        if self.lockstep {
            self.start_round(core, LOCKSTEP_START);
        } else {
            for node in self.generating() {
                let nd = &mut core.nic.node[node as usize];
                let t = self.s.injector.first(&mut nd.rng);
                nd.work[FIRST] = t;
                self.schedule_generation(core, node, t);
            }
        }
        for (i, ph) in self.phases.iter().enumerate() {
            if ph.start < self.end {
                core.at(ph.start, Event::Workload { kind: PHASE + self.kind_base, a: 0, b: i as u32 });
            }
        }
    }

    #[inline(always)]
    pub fn on_wake(&mut self, core: &mut Core, kind: u8, a: u32, b: u32) {
        match kind {
            GEN => {
                if b == self.s.gen_epoch {
                    self.on_generate(core, a);
                }
            }
            SLOT => self.on_slot(core),
            ROUND => {
                if b == self.s.gen_epoch {
                    self.on_round(core);
                }
            }
            _ => self.on_phase(core, b as usize),
        }
    }

    /// A packet left the full source queue of `node`: its deferred round happens now, and the
    /// schedule continues from here.
    #[cold]
    #[inline(never)]
    pub fn resume_round(&mut self, core: &mut Core, node: u32) {
        let nd = &mut core.nic.node[node as usize];
        nd.work = [core.now, 0];
        self.on_generate(core, node);
    }

    /// Lock-step: every node of the partition joins the round, whose first instant is `first`.
    fn start_round(&mut self, core: &mut Core, first: Time) {
        match &self.within {
            None => self.s.in_round.iter_mut().for_each(|x| *x = true),
            // Background on a node set (one partition: offsets are node ids).
            Some(set) => set.nodes.iter().for_each(|&n| self.s.in_round[n as usize] = true),
        }
        self.s.round_members = self.s.in_round.iter().filter(|&&x| x).count();
        (self.s.round_first, self.s.round_count) = (first, 0);
        if first < self.end {
            core.at(first, Event::Workload { kind: ROUND + self.kind_base, a: 0, b: self.s.gen_epoch });
        }
    }

    /// Lock-step: the round's instant. The next round is filed first, where the first node's
    /// own next packet was filed; then the nodes of the round generate in node order.
    #[inline(never)]
    fn on_round(&mut self, core: &mut Core) {
        self.s.round_count += 1;
        let next = self.s.injector.lockstep_time(self.s.round_first, self.s.round_count);
        if next < self.end && self.s.round_members > 0 {
            core.at(next, Event::Workload { kind: ROUND + self.kind_base, a: 0, b: self.s.gen_epoch });
        }
        let mut generated = 0;
        for node in self.s.nodes.clone() {
            let k = (node - self.s.nodes.start) as usize;
            if !self.s.in_round[k] {
                continue;
            }
            if self.generate(core, node, false, true) {
                generated += 1;
            } else {
                // Deferred: the node goes on with its own schedule when it resumes.
                self.s.in_round[k] = false;
                self.s.round_members -= 1;
            }
        }
        core.acct.generated_total += generated;
        core.stats.on_generate(core.now, generated, self.packet_bytes);
    }

    /// Generate a packet of `node` now (a generation wake-up or a resumed deferred round).
    fn on_generate(&mut self, core: &mut Core, node: u32) {
        // A resumed round on a slot boundary files its next packet from that slot, whether or
        // not the partition's slot chain visited it (it may have stopped).
        let from_slot = self.bernoulli && core.now.is_multiple_of(self.slot);
        if from_slot {
            (self.s.cur_slot, self.s.cur_slot_start) = (core.now / self.slot, core.now);
        }
        if self.generate(core, node, from_slot, false) {
            core.acct.generated_total += 1;
            core.stats.on_generate(core.now, 1, self.packet_bytes);
        }
    }

    /// Generate a packet of `node` now, file its next one and hand the packet to the NIC;
    /// returns whether it was generated (not deferred by a full source queue). The caller
    /// counts it (a slot counts all its packets at once). `from_slot`: now is the start of the
    /// Bernoulli slot visited last (always so in `on_slot`); `in_round`: the lock-step round
    /// files the node's next packet.
    #[inline(always)]
    fn generate(&mut self, core: &mut Core, node: u32, from_slot: bool, in_round: bool) -> bool {
        let now = core.now;
        // The node's line, borrowed once (the fields used below are disjoint from it).
        let nd = &mut core.nic.node[node as usize];
        if nd.queued as usize >= self.source_limit {
            // The round waits until a packet leaves the source queue (`on_source_space`).
            nd.notify = true;
            if self.shared {
                self.deferred[node as usize] = true;
            }
            return false;
        }
        let dst = match &self.within {
            None => self.s.sampler.destination(node, &mut nd.rng),
            Some(set) => set.destination(&mut self.s.sampler, node, &mut nd.rng),
        };
        // Filing the next packet changes neither the source queue nor the NIC. In the common
        // case, from the slot calendar, its slot index is this slot's plus the drawn gap (what
        // `schedule_generation` finds by division).
        if from_slot {
            let next = self.s.cur_slot + self.s.injector.slots_to_next(&mut nd.rng);
            if next < self.end_slot {
                self.file_slot(core, node, next, self.s.cur_slot);
            }
        } else if !in_round {
            // Only the periodic process reads the count (a slot does not keep it up to date).
            nd.work[COUNT] += 1;
            let next = self.s.injector.next(now, nd.work[FIRST], nd.work[COUNT], &mut nd.rng);
            self.schedule_generation(core, node, next);
        }
        let mut pkt = core.packet(node, dst, self.flits);
        pkt.tag = self.tag;
        if core.nic_submit(node, pkt) {
            if self.shared {
                self.woken.push(node);
            } else {
                self.resume_round(core, node);
            }
        }
        true
    }

    /// File the node's next packet: Bernoulli packets sit on slot boundaries and go to the slot
    /// calendar; periodic ones to the event queue.
    fn schedule_generation(&mut self, core: &mut Core, node: u32, at: Time) {
        if at >= self.end {
            return;
        }
        if self.bernoulli {
            // On a slot boundary, except after a deferred round resumed mid-slot: round up.
            let slot = self.slot_of(at + self.slot - 1);
            let current = self.slot_of(core.now);
            self.file_slot(core, node, slot, current);
        } else {
            core.at(at, Event::Workload { kind: GEN + self.kind_base, a: node, b: self.s.gen_epoch });
        }
    }

    /// File a Bernoulli node's next packet in slot `slot` (seen from slot `current`, the one
    /// containing now).
    #[inline]
    fn file_slot(&mut self, core: &mut Core, node: u32, slot: u64, current: u64) {
        self.s.calendar.insert(slot, current, node);
        if !self.s.slot_pending {
            self.restart_slots(core, current);
        }
    }

    /// The slot chain stopped (every node was deferred or done): restart it at the boundary
    /// after slot `current`; nothing can be filed for the current slot (next >= now + slot).
    #[cold]
    #[inline(never)]
    fn restart_slots(&mut self, core: &mut Core, current: u64) {
        self.s.slot_pending = true;
        core.at((current + 1) * self.slot, Event::Workload { kind: SLOT + self.kind_base, a: 0, b: 0 });
    }

    /// Index of the slot containing `t` (`⌊t / slot⌋`).
    #[inline]
    fn slot_of(&self, t: Time) -> u64 {
        if let (Some(d), Some(off)) = (self.slot_div, t.checked_sub(self.s.cur_slot_start)) {
            if let Ok(off) = u32::try_from(off) {
                return self.s.cur_slot + d.div(off) as u64;
            }
        }
        t / self.slot
    }

    /// Generate the packets of the Bernoulli slot starting now, then visit the next slot. Not
    /// inlined into the event loop: it holds the generation path of every node of the slot.
    #[inline(never)]
    fn on_slot(&mut self, core: &mut Core) {
        let slot = self.slot_of(core.now);
        (self.s.cur_slot, self.s.cur_slot_start) = (slot, slot * self.slot);
        let (mut node, count) = self.s.calendar.take(slot);
        // The node after this one and the one after that: links are read before the node
        // that holds them is filed again by its generation.
        let mut next = if count > 1 { self.s.calendar.next(node) } else { node };
        let mut generated = 0;
        let from_slot = core.now == self.s.cur_slot_start;
        for k in 0..count {
            // The nodes of a slot are scattered: fetch the state of the one after next while
            // this one generates.
            let after = if k + 2 < count { self.s.calendar.next(next) } else { next };
            if k + 2 < count {
                let ahead = after as usize;
                prefetch(&core.nic.node, ahead);
                core.nic.credits.prefetch(ahead);
            }
            generated += self.generate(core, node, from_slot, false) as u64;
            (node, next) = (next, after);
        }
        // All at the same time, so in the same window: one record for the slot.
        core.acct.generated_total += generated;
        core.stats.on_generate(core.now, generated, self.packet_bytes);
        self.s.slot_pending = !self.s.calendar.is_empty();
        if self.s.slot_pending {
            let ev = Event::Workload { kind: SLOT + self.kind_base, a: 0, b: 0 };
            core.wake_workload_after(self.lane, self.slot, ev);
        }
    }

    /// A traffic phase starts: swap in its load and/or pattern and restart the generation
    /// schedule of every node of the partition from now (exact for Bernoulli, which is
    /// memoryless; periodic nodes draw a new phase).
    fn on_phase(&mut self, core: &mut Core, i: usize) {
        let ph = &self.phases[i];
        if let Some(load) = ph.load {
            self.s.injector = Injector::new(self.process, load, self.slot);
        }
        if let Some(pattern) = ph.pattern.clone() {
            self.s.sampler = self.sampler(pattern, i as u64 + 1);
        }
        self.s.gen_epoch += 1;
        self.s.calendar.clear();
        if self.shared {
            // The notifications are shared: only forget which rounds were deferred.
            self.deferred.iter_mut().for_each(|d| *d = false);
        } else {
            let nodes = self.s.nodes.start as usize..self.s.nodes.end as usize;
            core.nic.node[nodes].iter_mut().for_each(|s| s.notify = false);
        }
        if self.lockstep {
            return self.start_round(core, core.now + LOCKSTEP_START);
        }
        // The next slot boundary strictly after now: this slot's bucket may already be visited.
        let base = match self.process {
            Process::Bernoulli => (core.now / self.slot + 1) * self.slot,
            Process::Periodic | Process::Lockstep => core.now,
        };
        for node in self.generating() {
            let nd = &mut core.nic.node[node as usize];
            let t = base + self.s.injector.first(&mut nd.rng);
            nd.work = [t, 0];
            self.schedule_generation(core, node, t);
        }
    }
}

impl Schedule {
    /// The schedule of `nodes` (of `all` nodes) before the run starts.
    fn new(nodes: Range<u32>, sampler: PatternSampler, injector: Injector, all: usize) -> Schedule {
        Schedule {
            nodes: nodes.clone(),
            sampler,
            injector,
            calendar: SlotCalendar::new(all),
            cur_slot: 0,
            cur_slot_start: Time::MAX,
            slot_pending: false,
            gen_epoch: 0,
            in_round: vec![false; nodes.len()],
            round_members: 0,
            round_first: 0,
            round_count: 0,
        }
    }
}

/// The sampler of `pattern`, with its one-time draws from the experiment's pattern stream `id`
/// (0 before any phase, `i + 1` for phase `i`): every partition draws the same tables.
/// `(allow_self, nic_policy)` are `[traffic]`'s.
fn sampler_of(seed: u64, topo: &Topology, to: (bool, NicPolicy), pattern: Pattern, id: u64) -> PatternSampler {
    let mut rng = Rng::seed_from_u64(stream_seed(seed, 3, id));
    PatternSampler::new(pattern, topo, to.0, &mut rng).with_nic_policy(to.1)
}

/// The generator as a [`Workload`] (the engine calls the methods above directly, so that
/// generation stays inlined; this impl is what other code sees).
impl Workload for Synthetic {
    fn fixed_delays(&self) -> Vec<Time> {
        Synthetic::fixed_delays(self)
    }

    fn start(&mut self, cx: &mut super::WorkloadCtx) {
        Synthetic::start(self, cx.core);
    }

    fn on_wake(&mut self, cx: &mut super::WorkloadCtx, kind: u8, a: u32, b: u32) {
        Synthetic::on_wake(self, cx.core, kind, a, b);
    }

    fn on_source_space(&mut self, cx: &mut super::WorkloadCtx, node: u32) {
        self.resume_round(cx.core, node);
    }
}
