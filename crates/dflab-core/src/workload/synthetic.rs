//! Synthetic traffic: every node generates packets of `network.packet_flits` flits to
//! destinations drawn from `traffic.pattern`, by a Bernoulli process on packet slots or a
//! periodic one, at `traffic.load`; `traffic.phases` change the load and/or the pattern at
//! given times; `traffic.source_queue_packets` bounds the source queues (generation pauses while
//! one is full, as SST's TrafficGen defers its rounds).
//!
//! Bernoulli packets sit on slot boundaries (one slot = a packet's serialisation on the host
//! link), so instead of one event per packet the generator keeps, per slot, the list of nodes
//! whose next packet falls in it ([`super::calendar`]) and visits one slot per event.

use rand::SeedableRng;

use super::calendar::SlotCalendar;
use super::Workload;
use crate::config::{Experiment, Process};
use crate::engine::core::Core;
use crate::engine::event::Event;
use crate::engine::stream_seed;
use crate::error::Result;
use crate::fastdiv::FastDiv;
use crate::prefetch::prefetch;
use crate::routing::Rng;
use crate::topology::Topology;
use crate::traffic::{Injector, Pattern, PatternSampler};
use crate::units::{transfer_ps, us_to_ps, Time};

/// Wake-up kinds of the generator.
const GEN: u8 = 0;
const SLOT: u8 = 1;
const PHASE: u8 = 2;

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
    flits: u16,
    packet_bytes: u64,
    end: Time,
    source_limit: usize,
    sampler: PatternSampler,
    injector: Injector,
    phases: Vec<Phase>,
    /// `traffic.process` is Bernoulli (packets on slot boundaries, filed in `calendar`).
    bernoulli: bool,
    calendar: SlotCalendar,
    slot: Time,
    /// The first Bernoulli slot starting at or after the end: packets of later slots are not
    /// filed.
    end_slot: u64,
    /// The slot visited last and its start: slot indices near it are found with a multiply
    /// (`slot_div`, when the slot fits 32 bits) instead of a 64-bit division.
    cur_slot: u64,
    cur_slot_start: Time,
    slot_div: Option<FastDiv>,
    slot_pending: bool,
    /// Generation wake-ups carry the epoch they were scheduled in; a phase change starts a new
    /// one.
    gen_epoch: u32,
}

impl Synthetic {
    pub fn new(cfg: &Experiment, topo: &Topology) -> Result<Synthetic> {
        let t = &cfg.traffic;
        let n = &cfg.network;
        let pattern = t.pattern.parse("traffic.pattern", topo)?;
        let mut pattern_rng = Rng::seed_from_u64(stream_seed(cfg.seed, 3, 0));
        let sampler = PatternSampler::new(pattern, topo, t.allow_self, &mut pattern_rng);
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
        Ok(Synthetic {
            topo: topo.clone(),
            seed: cfg.seed,
            process: t.process,
            allow_self: t.allow_self,
            flits: n.packet_flits as u16,
            packet_bytes,
            end,
            source_limit: t.source_queue_packets.map_or(usize::MAX, |l| l as usize),
            sampler,
            injector: Injector::new(t.process, t.load, slot),
            phases,
            bernoulli: t.process == Process::Bernoulli,
            calendar: SlotCalendar::new(topo.nodes()),
            slot,
            end_slot: end.div_ceil(slot),
            cur_slot: 0,
            cur_slot_start: Time::MAX,
            slot_div: u32::try_from(slot).ok().map(FastDiv::new),
            slot_pending: false,
            gen_epoch: 0,
        })
    }

    /// The generator's lane: one Bernoulli slot.
    pub fn fixed_delays(&self) -> Vec<Time> {
        vec![self.slot]
    }

    pub fn start(&mut self, core: &mut Core) {
        if self.bernoulli {
            // The slot chain starts at slot 0 and visits every slot while nodes are filed.
            self.slot_pending = true;
            core.at(0, Event::Workload { kind: SLOT, a: 0, b: 0 });
        }
        for node in 0..self.topo.nodes() {
            let nd = &mut core.nic.node[node];
            let t = self.injector.first(&mut nd.rng);
            nd.work[FIRST] = t;
            self.schedule_generation(core, node as u32, t);
        }
        for (i, ph) in self.phases.iter().enumerate() {
            if ph.start < self.end {
                core.at(ph.start, Event::Workload { kind: PHASE, a: 0, b: i as u32 });
            }
        }
    }

    #[inline(always)]
    pub fn on_wake(&mut self, core: &mut Core, kind: u8, a: u32, b: u32) {
        match kind {
            GEN => {
                if b == self.gen_epoch {
                    self.on_generate(core, a);
                }
            }
            SLOT => self.on_slot(core),
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

    /// Generate a packet of `node` now (a generation wake-up or a resumed deferred round).
    fn on_generate(&mut self, core: &mut Core, node: u32) {
        let from_slot = self.bernoulli && core.now == self.cur_slot_start;
        if self.generate(core, node, from_slot) {
            core.acct.generated_total += 1;
            core.stats.on_generate(core.now, 1, self.packet_bytes);
        }
    }

    /// Generate a packet of `node` now, file its next one and hand the packet to the NIC;
    /// returns whether it was generated (not deferred by a full source queue). The caller
    /// counts it (a slot counts all its packets at once). `from_slot`: now is the start of the
    /// Bernoulli slot visited last (always so in `on_slot`).
    #[inline(always)]
    fn generate(&mut self, core: &mut Core, node: u32, from_slot: bool) -> bool {
        let now = core.now;
        // The node's line, borrowed once (the fields used below are disjoint from it).
        let nd = &mut core.nic.node[node as usize];
        if nd.queued as usize >= self.source_limit {
            // The round waits until a packet leaves the source queue (`on_source_space`).
            nd.notify = true;
            return false;
        }
        let dst = self.sampler.destination(node, &mut nd.rng);
        // The next packet: in the common case, from the slot calendar, its slot index is this
        // slot's plus the drawn gap (what `schedule_generation` finds by division).
        let next = if from_slot {
            self.cur_slot + self.injector.slots_to_next(&mut nd.rng)
        } else {
            // Only the periodic process reads the count (a slot does not keep it up to date).
            nd.work[COUNT] += 1;
            self.injector.next(now, nd.work[FIRST], nd.work[COUNT], &mut nd.rng)
        };
        // Filing the next packet changes neither the source queue nor the NIC.
        if from_slot {
            if next < self.end_slot {
                self.file_slot(core, node, next, self.cur_slot);
            }
        } else {
            self.schedule_generation(core, node, next);
        }
        let pkt = core.packet(node, dst, self.flits);
        if core.nic_submit(node, pkt) {
            self.resume_round(core, node);
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
            core.at(at, Event::Workload { kind: GEN, a: node, b: self.gen_epoch });
        }
    }

    /// File a Bernoulli node's next packet in slot `slot` (seen from slot `current`, the one
    /// containing now).
    #[inline]
    fn file_slot(&mut self, core: &mut Core, node: u32, slot: u64, current: u64) {
        self.calendar.insert(slot, current, node);
        if !self.slot_pending {
            self.restart_slots(core, current);
        }
    }

    /// The slot chain stopped (every node was deferred or done): restart it at the boundary
    /// after slot `current`; nothing can be filed for the current slot (next >= now + slot).
    #[cold]
    #[inline(never)]
    fn restart_slots(&mut self, core: &mut Core, current: u64) {
        self.slot_pending = true;
        core.at((current + 1) * self.slot, Event::Workload { kind: SLOT, a: 0, b: 0 });
    }

    /// Index of the slot containing `t` (`⌊t / slot⌋`).
    #[inline]
    fn slot_of(&self, t: Time) -> u64 {
        if let (Some(d), Some(off)) = (self.slot_div, t.checked_sub(self.cur_slot_start)) {
            if let Ok(off) = u32::try_from(off) {
                return self.cur_slot + d.div(off) as u64;
            }
        }
        t / self.slot
    }

    /// Generate the packets of the Bernoulli slot starting now, then visit the next slot. Not
    /// inlined into the event loop: it holds the generation path of every node of the slot.
    #[inline(never)]
    fn on_slot(&mut self, core: &mut Core) {
        let slot = self.slot_of(core.now);
        (self.cur_slot, self.cur_slot_start) = (slot, slot * self.slot);
        let (mut node, count) = self.calendar.take(slot);
        // The node after this one and the one after that: links are read before the node
        // that holds them is filed again by its generation.
        let mut next = if count > 1 { self.calendar.next(node) } else { node };
        let mut generated = 0;
        let from_slot = core.now == self.cur_slot_start;
        for k in 0..count {
            // The nodes of a slot are scattered: fetch the state of the one after next while
            // this one generates.
            let after = if k + 2 < count { self.calendar.next(next) } else { next };
            if k + 2 < count {
                let ahead = after as usize;
                prefetch(&core.nic.node, ahead);
                core.nic.credits.prefetch(ahead);
            }
            generated += self.generate(core, node, from_slot) as u64;
            (node, next) = (next, after);
        }
        // All at the same time, so in the same window: one record for the slot.
        core.acct.generated_total += generated;
        core.stats.on_generate(core.now, generated, self.packet_bytes);
        self.slot_pending = !self.calendar.is_empty();
        if self.slot_pending {
            core.push(core.lanes.workload[0], Event::Workload { kind: SLOT, a: 0, b: 0 });
        }
    }

    /// A traffic phase starts: swap in its load and/or pattern and restart every node's
    /// generation schedule from now (exact for Bernoulli, which is memoryless; periodic nodes
    /// draw a new phase).
    fn on_phase(&mut self, core: &mut Core, i: usize) {
        let ph = &self.phases[i];
        if let Some(load) = ph.load {
            self.injector = Injector::new(self.process, load, self.slot);
        }
        if let Some(pattern) = ph.pattern.clone() {
            let mut rng = Rng::seed_from_u64(stream_seed(self.seed, 3, i as u64 + 1));
            self.sampler = PatternSampler::new(pattern, &self.topo, self.allow_self, &mut rng);
        }
        self.gen_epoch += 1;
        self.calendar.clear();
        core.nic.node.iter_mut().for_each(|s| s.notify = false);
        // The next slot boundary strictly after now: this slot's bucket may already be visited.
        let base = match self.process {
            Process::Bernoulli => (core.now / self.slot + 1) * self.slot,
            Process::Periodic => core.now,
        };
        for node in 0..self.topo.nodes() {
            let nd = &mut core.nic.node[node];
            let t = base + self.injector.first(&mut nd.rng);
            nd.work = [t, 0];
            self.schedule_generation(core, node as u32, t);
        }
    }
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
