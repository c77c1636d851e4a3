//! Simulation state and event handlers. See the module comment of `engine` for the model.

use std::collections::VecDeque;
use std::time::Instant;

use rand::SeedableRng;
use serde::Serialize;

use super::calendar::SlotCalendar;
use super::queue::{Event, EventQueue, MAX_TIME};
use crate::config::{Experiment, Process};
use crate::error::{Error, Result};
use crate::fastdiv::FastDiv;
use crate::network::{Admit, CreditLedger, Packet, PacketArena, PacketId, PacketQueues};
use crate::prefetch::prefetch;
use crate::routing::minimal::Minimal;
use crate::routing::{Algorithm, AnyRouting, Feedback, Hop, Rng, RouterView, Routing};
use crate::stats::{Series, Stats, Summary};
use crate::topology::{LinkClass, Topology, NONE};
use crate::traffic::{Injector, Pattern, PatternSampler};
use crate::units::{ns_to_ps, ps_to_us, transfer_ps, us_to_ps, Time};

// Event kinds.
const GEN: u8 = 0;
const NIC_WAKE: u8 = 1;
const ARRIVE: u8 = 3;
const XBAR_DONE: u8 = 5;
const PORT_WAKE: u8 = 6;
const ARB_WAKE: u8 = 9;
/// Waiting entries pack (input port, VC) as `in_port << VC_BITS | vc` (no division to unpack)
/// in their low 32 bits, the routed output above it (see [`request`]).
pub(super) const VC_BITS: u32 = 8;
pub(super) const VC_MASK: u32 = (1 << VC_BITS) - 1;
/// Set on a waiting entry whose last grant attempt found its output VC's buffer full, while no
/// output buffer of the router has freed space since (see `on_arbitrate`).
const FULL_SEEN: u64 = 1 << 63;

/// A waiting crossbar request: input (`in_port`, `vc`) in the low 32 bits (the order key's tie
/// break, as before the output was added), its head packet's output port and VC (`Hop`) in
/// bits 32–47 and 48–55, so that a grant attempt need not read the packet.
#[inline(always)]
fn request(in_port: u16, vc: u8, hop: Hop) -> u64 {
    (hop.vc as u64) << 48 | (hop.port as u64) << 32 | ((in_port as u64) << VC_BITS | vc as u64)
}

/// The output port of waiting request `e` (see [`request`]).
#[inline(always)]
pub(super) fn request_port(e: u64) -> u16 {
    (e >> 32) as u16
}

/// The output VC of waiting request `e` (see [`request`]).
#[inline(always)]
pub(super) fn request_vc(e: u64) -> u8 {
    (e >> 48) as u8
}

/// Whether waiting request `e` carries the `FULL_SEEN` mark.
#[inline(always)]
pub(super) fn request_full_seen(e: u64) -> bool {
    e & FULL_SEEN != 0
}

/// Visit one Bernoulli packet slot of the generation calendar.
const SLOT: u8 = 10;
/// Hop-by-hop feedback of a learning routing reaches the upstream router.
const FEEDBACK: u8 = 11;
/// A traffic phase starts (`b` = phase index).
const PHASE: u8 = 12;

/// How many events beyond the next one the first prefetch stage runs (see
/// `Simulation::prefetch_far`). Two, timed on the profile-guided build that `dflab bench` runs
/// (`dflab-py`'s `run` example): MIN UR 0.5 1.5 % faster than three (20 alternating rounds),
/// one no better than three, five 1.7 % slower.
const PREFETCH_FAR: u32 = 2;
/// Packets per node the arena has room for from the start (it grows beyond as needed).
const PACKETS_RESERVED_PER_NODE: usize = 16;

/// The event handlers' result: the error boxed, so that `Ok` is a null pointer returned in a
/// register (an unboxed `Error` made every handler return through memory and its caller test
/// a niche value there, several instructions per event).
type Fallible<T = ()> = std::result::Result<T, Box<Error>>;

/// Independent RNG streams: the same experiment seed gives every router and node its own stream,
/// so results do not depend on how events interleave.
pub(crate) fn stream_seed(seed: u64, kind: u64, id: u64) -> u64 {
    let mut z = seed ^ kind.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ id.wrapping_mul(0xD1B5_4A32_D192_ED03);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[derive(Debug, Clone, Serialize)]
pub struct SimResult {
    pub summary: Summary,
    pub series: Series,
    pub hops_histogram: Vec<u64>,
    pub config: Experiment,
}

/// Run one experiment.
pub fn simulate(cfg: &Experiment) -> Result<SimResult> {
    Simulation::new(cfg)?.run()
}

pub struct Simulation {
    pub(super) cfg: Experiment,
    pub(super) topo: Topology,
    routing: AnyRouting,
    pub(super) vcs: usize,
    pub(super) max_hops: u32,
    /// VCs the routing declares; every VC it picks must be below (checked on every hop).
    alg_vcs: usize,
    /// The highest VC, `vcs - 1`: a routing's VC above it is folded onto it.
    top_vc: u8,
    wants_feedback: bool,
    /// Feedback messages on their way upstream, by slab index (event `b`).
    feedbacks: Vec<Feedback>,
    free_feedbacks: Vec<u32>,
    radix: usize,
    // Timing (ps).
    packet_flits: u16,
    /// Bytes of a packet (`flit_bytes · packet_flits`).
    packet_bytes: u64,
    /// Serialisation time of one packet per link class (every packet has `packet_flits` flits).
    /// (Four entries, so that an index masked with 3 needs no bounds check; the last is unused.)
    ser: [Time; 4],
    /// Crossbar transfer time of one packet (every packet has `packet_flits` flits).
    xfer: Time,
    pub(super) in_cap: u32,
    pub(super) out_cap: u32,
    end: Time,
    /// The first Bernoulli slot starting at or after `end` (`⌈end / slot⌉`): packets of later
    /// slots are not filed.
    end_slot: u64,
    /// Output stage + host link: from the start of an ejection to delivery (plus serialisation).
    eject_lat: Time,
    /// Credit latency per link class (a fourth entry, unused, as in `ser`).
    credit_lat: [Time; 4],
    watchdog: Time,
    // Engine state.
    q: EventQueue,
    ch: Channels,
    pub(super) now: Time,
    pub(super) pkts: PacketArena,
    /// Indexed by (router * radix + port) * vcs + vc.
    pub(super) inq: PacketQueues,
    pub(super) outq: PacketQueues,
    /// Free downstream credits of every output VC (returns recorded with their arrival time).
    pub(super) credits: CreditLedger,
    /// Indexed by router * radix + port.
    /// Everything about one port in one place (one cache line): a hop touches it together.
    pub(super) ports: Vec<PortState>,
    lru: Vec<u32>,
    lru_clock: u32,
    /// Crossbar requests waiting at each router: `wait_cap` entries per router (see
    /// [`request`]), in request order (a flat pool: no allocation per router).
    waiting: Vec<u64>,
    wait_len: Vec<u32>,
    /// Per router, a length (at most `wait_len`) of the list's prefix known to be in
    /// arbitration order: see `order_requests`.
    wait_sorted: Vec<u32>,
    wait_cap: usize,
    /// Time of the arbiter wake-up pending at each router (`Time::MAX`: none).
    arb_wake_at: Vec<Time>,
    router_rng: Vec<Rng>,
    // NICs.
    pub(super) nic_queue: Vec<VecDeque<PacketId>>,
    pub(super) nic_credits: CreditLedger,
    /// NIC and generation state of every node, one cache line each.
    nodes: Vec<NodeState>,
    source_limit: usize,
    /// `traffic.process` is Bernoulli (packets on slot boundaries, filed in `calendar`).
    bernoulli: bool,
    sampler: PatternSampler,
    /// Bernoulli generation: nodes by the slot of their next packet.
    calendar: SlotCalendar,
    slot: Time,
    /// The slot visited last and its start: slot indices near it are found with a multiply
    /// (`slot_div`, when the slot fits 32 bits) instead of a 64-bit division.
    cur_slot: u64,
    cur_slot_start: Time,
    slot_div: Option<FastDiv>,
    slot_pending: bool,
    /// Generation events carry the epoch they were scheduled in; a phase change starts a new one.
    gen_epoch: u32,
    injector: Injector,
    // Accounting.
    stats: Stats,
    pub(super) in_network: u64,
    pub(super) in_source: u64,
    pub(super) generated_total: u64,
    pub(super) delivered_total: u64,
    last_progress: Time,
    traversals: u64,
    events: u64,
    /// With `trace_one`: the packet delivered and when.
    traced: Option<(Packet, Time)>,
    tracing: bool,
    // Invariant bookkeeping (only maintained with `run.check`).
    pub(super) check: bool,
    pub(super) inflight_flits: Vec<u32>,
    pub(super) nic_inflight_flits: Vec<u32>,
}

/// The hop the near prefetch stage ([`Simulation::prefetch_near`]) found for the event after
/// the current one: MIN's table hop of packet `id` arriving at a router, packed as
/// `id << 32 | port << 8 | vc` (one register through the event loop). The loop hands it to the
/// handler of the event popped next, which uses it if it routes that packet: if that event is
/// not the arrival the hint was found for (a handler can schedule an earlier one in between),
/// the packet is still on its link and no route of this event is for it. MIN's hop is a
/// function of the router and the packet's destination alone, so using it is exactly routing
/// again (debug builds check that it is).
#[derive(Clone, Copy, PartialEq, Eq)]
struct HopHint(u64);

impl HopHint {
    /// No hint (no packet has id `u32::MAX`: the arena would need 256 GB for it).
    const NONE: HopHint = HopHint(u64::MAX);

    #[inline(always)]
    fn new(id: PacketId, hop: Hop) -> HopHint {
        HopHint((id as u64) << 32 | (hop.port as u64) << 8 | hop.vc as u64)
    }

    /// The hop, if this hint is for packet `id`.
    #[inline(always)]
    fn for_packet(self, id: PacketId) -> Option<Hop> {
        ((self.0 >> 32) as u32 == id).then_some(Hop { port: (self.0 >> 8) as u16, vc: self.0 as u8 })
    }
}

/// State of one router port (both directions of its link and both crossbar sides), aligned so
/// that each port occupies exactly one cache line (40 bytes would straddle two on most ports).
#[derive(Debug, Clone, Copy, Default)]
#[repr(align(64))]
pub(super) struct PortState {
    /// The output link is busy sending until then.
    busy: Time,
    /// The crossbar's input and output sides of this port are busy until then.
    xin_busy: Time,
    xout_busy: Time,
    /// Router and port at the far end of the link (NONE for host ports).
    pub(super) peer: (u32, u16),
    /// Index of the first VC queue of the peer port (`(router·radix + port)·vcs`): where the
    /// credits of a packet leaving this input go, without recomputing it per hop.
    peer_queues: u32,
    /// Index of the peer port (`router·radix + port`), carried by the arrivals sent to it.
    peer_port: u32,
    /// Packets waiting in this port's output buffers (all VCs).
    queued: u32,
    /// Output round-robin pointer.
    rr: u8,
    /// Link class index (0 host, 1 local, 2 global; see `class_index`), kept here because every
    /// handler that reads the class also reads this line.
    class: u8,
    /// The crossbar's input (output) side of this port is busy from a grant that schedules no
    /// XBAR_DONE (straight through to the link, or silently queued): nothing will signal that it
    /// frees, so a request it refuses must schedule its own arbiter wake-up.
    xin_silent: bool,
    xout_silent: bool,
    /// A PORT_WAKE event is pending, at `wake_at`.
    wake: bool,
    wake_at: Time,
    // "The port waits for credits and no return is on its way, so the next return must wake it"
    // is the `watched` flag of each of the port's VCs in the credit ledger: a returning credit
    // sees it beside the credits it records, without touching this line.
}

/// What a crossbar grant reads from its input port's line, copied by the caller (an arrival
/// reads the line anyway).
#[derive(Clone, Copy)]
struct InPort {
    xin_busy: Time,
    xin_silent: bool,
    class: u8,
    peer: (u32, u16),
    peer_queues: u32,
}

impl InPort {
    #[inline(always)]
    fn of(p: &PortState) -> InPort {
        InPort {
            xin_busy: p.xin_busy,
            xin_silent: p.xin_silent,
            class: p.class,
            peer: p.peer,
            peer_queues: p.peer_queues,
        }
    }
}

/// The NIC and the generation schedule of one node: what generating and injecting a packet
/// touch, in one cache line (they were eight arrays, eight lines and eight bounds checks).
#[derive(Debug, Clone)]
#[repr(align(64))]
struct NodeState {
    rng: Rng,
    /// The NIC's link is busy sending until then.
    busy: Time,
    /// Periodic process: time of the first packet of the current schedule and packets
    /// generated since (the next time is computed from both, without drift; Bernoulli packets
    /// filed from a slot do not count).
    first: Time,
    count: u64,
    /// A NIC_WAKE event is pending.
    wake: bool,
    /// The NIC waits for credits and no return is on its way: the next return must wake it.
    blocked: bool,
    /// Generation paused because the source queue was full (`traffic.source_queue_packets`).
    deferred: bool,
    /// Packets in the source queue (`nic_queue[node].len()`), here so that generating a packet
    /// at an idle NIC reads no other line.
    queued: u32,
}

// A port is one line (more fields would make it two).
const _: () = assert!(std::mem::size_of::<PortState>() == 64);

// One line: the xoshiro state (32 bytes), three times, the flags and the queue length.
const _: () = assert!(std::mem::size_of::<NodeState>() == 64);

impl NodeState {
    fn new(rng: Rng) -> NodeState {
        NodeState { rng, busy: 0, first: 0, count: 0, wake: false, blocked: false, deferred: false, queued: 0 }
    }
}

/// Outcome of one crossbar request.
enum Grant {
    /// Refused: a crossbar port is busy until the end of a transfer that schedules XBAR_DONE
    /// (whose handler arbitrates).
    No,
    /// Refused: the output buffer has no room for the packet.
    Full,
    /// Refused: a crossbar port (input or output side) is busy until then from a silent grant,
    /// so the refused request needs an arbiter wake-up then. (Busy from a grant with XBAR_DONE
    /// is `No`: that event runs the arbiter.)
    Busy(Time),
    /// Granted; the packet waits in the output buffer for XBAR_DONE.
    Queued,
    /// Granted into the output buffer of a port whose link stays busy past the transfer: no
    /// XBAR_DONE (see `grant`).
    QueuedSilent,
    /// Granted straight through an idle output port.
    Through,
}

/// Event-queue channels for the fixed delays of the model (all packets have `packet_flits`
/// flits, so every delay below is a constant of the experiment).
struct Channels {
    xbar: usize,
    nic_credit: usize,
    nic_arrive: usize,
    nic_wake: usize,
    slot: usize,
    /// Credit latency per link class, as wake-ups of a sender blocked on credits. (Per class
    /// arrays have a fourth, unused entry: an index masked with 3 needs no bounds check.)
    credit: [usize; 4],
    arrive: [usize; 4],
    port_wake: [usize; 4],
    /// Crossbar transfer plus link: the fast path straight through an idle output port.
    arrive_through: [usize; 4],
}

fn class_index(c: LinkClass) -> usize {
    match c {
        LinkClass::Host => 0,
        LinkClass::Local => 1,
        LinkClass::Global => 2,
    }
}

impl Simulation {
    pub fn new(cfg: &Experiment) -> Result<Simulation> {
        cfg.validate()?;
        let topo = Topology::new(&cfg.topology)?;
        let routing = Algorithm::parse(&cfg.routing.algorithm)?.build_for(&topo, cfg);
        Simulation::build(cfg, topo, routing)
    }

    /// Build with a routing object supplied by the caller (tests inject instrumented routings;
    /// `cfg.routing.algorithm` is then only a label).
    pub fn with_routing(cfg: &Experiment, topo: Topology, routing: Box<dyn Routing>) -> Result<Simulation> {
        Simulation::build(cfg, topo, AnyRouting::Custom(routing))
    }

    fn build(cfg: &Experiment, topo: Topology, routing: AnyRouting) -> Result<Simulation> {
        cfg.validate()?;
        let vcs = cfg.routing.vcs.unwrap_or_else(|| routing.vcs());
        let max_hops = routing.max_hops();
        let alg_vcs = routing.vcs();
        let wants_feedback = routing.wants_feedback();
        let n = &cfg.network;
        let radix = topo.radix;
        let routers = topo.routers();
        let nodes = topo.nodes();
        let queues = routers * radix * vcs;
        let ports = routers * radix;
        let in_cap = n.input_buffer_flits;
        let out_cap = n.output_buffer_flits;
        let flit_bytes = n.flit_bytes as u64;
        let seed = cfg.seed;

        let mut peer = vec![(NONE, 0u16); ports];
        for r in 0..routers as u32 {
            for port in topo.p..radix {
                if let Some(pp) = topo.peer(r, port as u16) {
                    peer[r as usize * radix + port] = pp;
                }
            }
        }
        // Ejection ports have no downstream buffer: their credits stay full and are never used.
        let credits = CreditLedger::new(queues, in_cap);

        let pattern = Pattern::parse(&cfg.traffic.pattern, &topo)?;
        let mut pattern_rng = Rng::seed_from_u64(stream_seed(seed, 3, 0));
        let sampler = PatternSampler::new(pattern, &topo, cfg.traffic.allow_self, &mut pattern_rng);
        let packet_bytes = flit_bytes * n.packet_flits as u64;
        let slot = transfer_ps(packet_bytes, n.host_bw_gbps);
        let injector = Injector::new(cfg.traffic.process, cfg.traffic.load, slot);
        let warm = us_to_ps(cfg.run.warmup_us);
        let end = warm + us_to_ps(cfg.run.measure_us);
        if end > MAX_TIME {
            return Err(Error::config(
                "run",
                format!(
                    "warmup_us + measure_us is {:.0} us; allowed: at most {:.0} us",
                    ps_to_us(end),
                    ps_to_us(MAX_TIME)
                ),
            ));
        }
        let stats = Stats::new(warm, end, us_to_ps(cfg.run.window_us).max(1));
        let check = cfg.run.check;
        let ser_flit = [
            transfer_ps(flit_bytes, n.host_bw_gbps),
            transfer_ps(flit_bytes, n.local_bw_gbps),
            transfer_ps(flit_bytes, n.global_bw_gbps),
        ];
        let xbar_flit = transfer_ps(flit_bytes, n.xbar_bw_gbps);
        let link_lat = [ns_to_ps(n.host_latency_ns), ns_to_ps(n.local_latency_ns), ns_to_ps(n.global_latency_ns)];
        let (in_lat, out_lat) = (ns_to_ps(n.input_latency_ns), ns_to_ps(n.output_latency_ns));
        let f = n.packet_flits as Time;
        let mut q = EventQueue::new();
        let xfer = f * xbar_flit;
        let ser = |c: usize| f * ser_flit[c];
        let link = |c: usize| ser(c) + out_lat + link_lat[c] + in_lat;
        let ch = Channels {
            xbar: q.channel(xfer),
            nic_credit: q.channel(link_lat[0] + in_lat),
            nic_arrive: q.channel(ser(0) + link_lat[0] + in_lat),
            nic_wake: q.channel(ser(0)),
            slot: q.channel(slot),
            credit: [0, q.channel(out_lat + link_lat[1] + in_lat), q.channel(out_lat + link_lat[2] + in_lat), 0],
            arrive: [0, q.channel(link(1)), q.channel(link(2)), 0],
            port_wake: [q.channel(ser(0)), q.channel(ser(1)), q.channel(ser(2)), 0],
            arrive_through: [0, q.channel(xfer + link(1)), q.channel(xfer + link(2)), 0],
        };

        Ok(Simulation {
            cfg: cfg.clone(),
            routing,
            vcs,
            max_hops,
            alg_vcs,
            top_vc: (vcs - 1) as u8,
            wants_feedback,
            feedbacks: Vec::new(),
            free_feedbacks: Vec::new(),
            radix,
            packet_bytes,
            packet_flits: n.packet_flits as u16,
            ser: [ser(0), ser(1), ser(2), 0],
            xfer,
            in_cap,
            out_cap,
            end,
            end_slot: end.div_ceil(slot),
            eject_lat: out_lat + link_lat[0],
            credit_lat: [link_lat[0] + in_lat, out_lat + link_lat[1] + in_lat, out_lat + link_lat[2] + in_lat, 0],
            watchdog: us_to_ps(cfg.run.watchdog_us),
            q,
            ch,
            ports: peer
                .iter()
                .enumerate()
                .map(|(i, &peer)| {
                    let class = class_index(topo.class_of_port((i % radix) as u16)) as u8;
                    let peer_port = if peer.0 == NONE { 0 } else { (peer.0 as usize * radix + peer.1 as usize) as u32 };
                    let peer_queues = peer_port * vcs as u32;
                    PortState { peer, class, peer_queues, peer_port, ..PortState::default() }
                })
                .collect(),
            now: 0,
            // Growing the arena one doubling at a time copied every packet (1.5 instructions per
            // traversal under UR 0.5, whose peak is about 10 packets per node).
            pkts: PacketArena::with_capacity(nodes * PACKETS_RESERVED_PER_NODE),
            inq: PacketQueues::new(queues, in_cap),
            outq: PacketQueues::new(queues, out_cap),
            credits,
            lru: vec![0; queues],
            lru_clock: 0,
            // One request per input VC, but during an arbitration pass a granted entry keeps its
            // slot until the pass ends while the next head of its VC is appended: twice that.
            waiting: vec![0; routers * 2 * radix * vcs],
            wait_len: vec![0; routers],
            wait_sorted: vec![0; routers],
            wait_cap: 2 * radix * vcs,
            arb_wake_at: vec![Time::MAX; routers],
            router_rng: (0..routers).map(|r| Rng::seed_from_u64(stream_seed(seed, 1, r as u64))).collect(),
            nic_queue: vec![VecDeque::new(); nodes],
            nic_credits: CreditLedger::new(nodes, in_cap),
            nodes: (0..nodes).map(|i| NodeState::new(Rng::seed_from_u64(stream_seed(seed, 2, i as u64)))).collect(),
            source_limit: cfg.traffic.source_queue_packets.map_or(usize::MAX, |l| l as usize),
            bernoulli: cfg.traffic.process == Process::Bernoulli,
            sampler,
            calendar: SlotCalendar::new(nodes),
            slot,
            cur_slot: 0,
            cur_slot_start: Time::MAX,
            slot_div: u32::try_from(slot).ok().map(FastDiv::new),
            slot_pending: false,
            gen_epoch: 0,
            injector,
            stats,
            in_network: 0,
            in_source: 0,
            generated_total: 0,
            delivered_total: 0,
            last_progress: 0,
            traversals: 0,
            events: 0,
            traced: None,
            tracing: false,
            check,
            inflight_flits: if check { vec![0; queues] } else { Vec::new() },
            nic_inflight_flits: if check { vec![0; nodes] } else { Vec::new() },
            topo,
        })
    }

    /// Send one packet from `src` to `dst` through an otherwise empty network (no traffic is
    /// generated) and return it as delivered, with its delivery time. Used to check zero-load
    /// latency against the analytic sum of the path's fixed latencies.
    pub fn trace_one(self, src: u32, dst: u32) -> Result<(Packet, Time)> {
        Ok(self.trace(&[(src, dst)])?.remove(0))
    }

    /// Generate one packet per `(src, dst)` pair at time 0 (in this order; pairs with the same
    /// source queue at its NIC) into an otherwise empty network, run until every one is
    /// delivered and return them as delivered, with their delivery times, in delivery order.
    /// Used to check contention timing against hand-computed schedules.
    pub fn trace(mut self, pairs: &[(u32, u32)]) -> Result<Vec<(Packet, Time)>> {
        let nodes = self.topo.nodes() as u32;
        for &(src, dst) in pairs {
            if src >= nodes || dst >= nodes {
                return Err(Error::config("trace", format!("nodes are numbered 0 to {}", nodes - 1)));
            }
            let pkt = Packet::new(src, dst, self.topo.router_of_node(dst), self.packet_flits);
            let id = self.pkts.alloc(pkt, 0, 0);
            self.nic_queue[src as usize].push_back(id);
            self.nodes[src as usize].queued += 1;
            self.in_source += 1;
            self.generated_total += 1;
        }
        self.tracing = true;
        self.end = Time::MAX;
        self.end_slot = u64::MAX;
        for &(src, _) in pairs {
            self.nic_try_send(src);
        }
        let mut done = Vec::with_capacity(pairs.len());
        while let Some((t, ev)) = self.q.pop() {
            self.now = t;
            self.dispatch(ev).map_err(|e| *e)?;
            if let Some(d) = self.traced.take() {
                done.push(d);
                if done.len() == pairs.len() {
                    return Ok(done);
                }
            }
        }
        Err(Error::Deadlock(self.deadlock_report()))
    }

    pub fn run(mut self) -> Result<SimResult> {
        let started = Instant::now();
        if self.cfg.traffic.process == Process::Bernoulli {
            // The slot chain starts at slot 0 and visits every slot while nodes are filed.
            self.slot_pending = true;
            self.q.at(0, Event { kind: SLOT, vc: 0, port: 0, a: 0, b: 0, c: 0 });
        }
        for node in 0..self.topo.nodes() {
            let t = self.injector.first(&mut self.nodes[node].rng);
            self.nodes[node].first = t;
            self.schedule_generation(node as u32, t);
        }
        for (i, ph) in self.cfg.traffic.phases.iter().enumerate() {
            let t = us_to_ps(ph.start_us);
            if t < self.end {
                self.q.at(t, Event { kind: PHASE, vc: 0, port: 0, a: 0, b: i as u32, c: 0 });
            }
        }
        let check_every = us_to_ps(1.0);
        let mut next_check = if self.check { check_every } else { Time::MAX };
        let mut ran_out = true;
        // The watchdog condition (packets in flight and no progress for `watchdog`) cannot hold
        // before `watch_at`: progress only moves forward, so the last check's bound stays valid.
        let mut watch_at: Time = 0;
        // The earlier of `watch_at` and `next_check`: one comparison per event for both.
        let mut due: Time = 0;
        let end = self.end;
        // The hop the near stage found for the arrival it was given, with that arrival's packet
        // (see `HopHint`).
        let mut pending = HopHint::NONE;
        while let Some((t, ev, next)) = self.q.pop_peek() {
            if t >= end {
                ran_out = false;
                break;
            }
            self.now = t;
            self.events += 1;
            let hint = pending;
            pending = match next {
                Some(next) => self.prefetch_near(&next),
                None => HopHint::NONE,
            };
            if let Some(far) = self.q.peek_far(PREFETCH_FAR) {
                self.prefetch_far(far);
            }
            self.dispatch_with(ev, hint).map_err(|e| *e)?;
            if t >= due {
                if t >= watch_at {
                    if self.in_network > 0 && t - self.last_progress > self.watchdog {
                        return Err(Error::Deadlock(self.deadlock_report()));
                    }
                    watch_at = self.last_progress.saturating_add(self.watchdog).saturating_add(1);
                }
                if t >= next_check {
                    self.check_invariants()?;
                    next_check = t + check_every;
                }
                due = watch_at.min(next_check);
            }
        }
        if ran_out && self.in_network > 0 {
            return Err(Error::Deadlock(self.deadlock_report()));
        }
        self.now = self.end;
        if self.check {
            self.check_invariants()?;
        }
        let wall = started.elapsed().as_secs_f64();
        Ok(self.finish(wall))
    }

    fn finish(self, wall: f64) -> SimResult {
        let nodes = self.topo.nodes();
        let bw = self.cfg.network.host_bw_gbps;
        let mut summary = self.stats.summary(nodes, bw);
        summary.packets_in_flight_end = self.in_network;
        summary.source_queue_end = self.in_source;
        summary.sim_time_us = ps_to_us(self.end);
        summary.wall_s = wall;
        summary.events = self.events;
        summary.router_traversals = self.traversals;
        summary.ns_per_router_traversal = if self.traversals > 0 { wall * 1e9 / self.traversals as f64 } else { 0.0 };
        summary.sim_us_per_wall_s = if wall > 0.0 { ps_to_us(self.end) / wall } else { 0.0 };
        SimResult {
            series: self.stats.series(nodes, bw),
            hops_histogram: self.stats.hops_histogram(),
            summary,
            config: self.cfg,
        }
    }

    #[inline(never)]
    fn dispatch(&mut self, ev: Event) -> Fallible {
        self.dispatch_with(ev, HopHint::NONE)
    }

    /// Handle `ev`; `hint`: the hop the near prefetch stage found for it (an arrival under a
    /// table routing), which its routing would find again. `always`: with two callers (the
    /// event loop and `dispatch`) plain `inline` left it a call with a large frame per event.
    #[inline(always)]
    fn dispatch_with(&mut self, ev: Event, hint: HopHint) -> Fallible {
        match ev.kind {
            GEN => {
                if ev.b == self.gen_epoch {
                    self.on_generate(ev.a);
                }
            }
            PHASE => return self.on_phase(ev.b as usize),
            SLOT => self.on_slot(),
            FEEDBACK => {
                let fb = self.feedbacks[ev.b as usize];
                self.free_feedbacks.push(ev.b);
                self.routing.on_feedback(ev.a, ev.port, &fb, self.now);
            }
            NIC_WAKE => {
                self.nodes[ev.a as usize].wake = false;
                self.nic_try_send(ev.a);
            }
            ARRIVE => return self.on_arrive(ev.a, ev.port, ev.vc, ev.b, ev.c as usize, hint),
            XBAR_DONE => return self.on_xbar_done(ev.a, ev.port, ev.vc, ev.b),
            PORT_WAKE => return self.try_send(ev.a, ev.port, ev.c as usize, true),
            ARB_WAKE => {
                if self.arb_wake_at[ev.a as usize] == self.now {
                    self.arb_wake_at[ev.a as usize] = Time::MAX;
                }
                if self.wait_len[ev.a as usize] > 0 {
                    return self.on_arbitrate(ev.a, false);
                }
            }
            _ => unreachable!("unknown event kind"),
        }
        Ok(())
    }

    /// Software pipeline over the event stream, in two stages. While this event is handled,
    /// bring into the cache what the handlers of later ones will read:
    /// * [`Self::prefetch_far`], `PREFETCH_FAR + 1` events ahead: the lines located from the
    ///   event alone (the packet, the port's line);
    /// * [`Self::prefetch_near`], one event ahead, reads those (in the cache by then) to locate
    ///   the lines they point to: the upstream VC's credit state (where the packet's credits
    ///   return; its index is in the input port's line) and, for a table routing, the output
    ///   port's line and its VC's credit and queue state.
    ///
    /// A miss on one of these costs a few hundred cycles when the network's state outgrows the
    /// cache, and an arrival's handler needs them one after the other: prefetching only the
    /// first ones, one event ahead, left the first read of the arriving packet and of the
    /// output port's line the two hottest instructions of a CPU-clock profile (MIN UR 0.5,
    /// `qadaptive-1056`). The far stage looks into the FIFO the next event comes from
    /// ([`EventQueue::peek_far`]): events come in runs from one FIFO. A third stage (the
    /// upstream credit state and the first-port entry fetched in between, so that the near
    /// stage could fetch the credit ring's slots) measured no better. A prefetch is only a
    /// hint: results do not depend on it.
    #[inline]
    fn prefetch_far(&self, ev: &Event) {
        match ev.kind {
            ARRIVE => {
                self.pkts.prefetch(ev.b);
                prefetch(&self.ports, ev.c as usize);
                if self.topo.is_host_port(ev.port) {
                    let node = ev.a as usize * self.topo.p + ev.port as usize;
                    self.nic_credits.prefetch(node);
                    prefetch(&self.nodes, node);
                }
            }
            PORT_WAKE => {
                let pi = ev.c as usize;
                prefetch(&self.ports, pi);
                self.outq.prefetch(pi * self.vcs);
                self.credits.prefetch(pi * self.vcs);
            }
            _ => {}
        }
    }

    /// The second stage of the pipeline (see [`Self::prefetch_far`]), for the next event. Under
    /// MIN it finds an arrival's hop to prefetch the output side, and returns it, so that the
    /// arrival's handler does not find it a second time.
    #[inline]
    fn prefetch_near(&self, ev: &Event) -> HopHint {
        if ev.kind == PORT_WAKE {
            // Most port wake-ups come from the timer wheel (the first of a busy period), which
            // the far stage does not see: their port's line, VC queue states and credits.
            let pi = ev.c as usize;
            prefetch(&self.ports, pi);
            self.outq.prefetch(pi * self.vcs);
            self.credits.prefetch(pi * self.vcs);
            return HopHint::NONE;
        }
        if ev.kind != ARRIVE {
            return HopHint::NONE;
        }
        let pi = ev.c as usize;
        let Some(inp) = self.ports.get(pi) else { return HopHint::NONE };
        if !self.topo.is_host_port(ev.port) {
            self.credits.prefetch(inp.peer_queues as usize + ev.vc as usize);
        }
        if let AnyRouting::Minimal(_) = self.routing {
            let pkt = self.pkts.get(ev.b);
            if let Some(hop) = Minimal::table_hop(&self.topo, ev.a, pkt) {
                let op = pi - ev.port as usize + hop.port as usize;
                let oi = op * self.vcs + hop.vc as usize;
                prefetch(&self.ports, op);
                self.credits.prefetch(oi);
                self.outq.prefetch(oi);
                return HopHint::new(ev.b, hop);
            }
        }
        HopHint::NONE
    }

    #[inline]
    fn qidx(&self, router: u32, port: u16, vc: usize) -> usize {
        (router as usize * self.radix + port as usize) * self.vcs + vc
    }

    #[inline]
    fn pidx(&self, router: u32, port: u16) -> usize {
        router as usize * self.radix + port as usize
    }

    // ---- NIC -------------------------------------------------------------------------------

    /// Generate a packet of `node` now (a GEN event or a resumed deferred round).
    fn on_generate(&mut self, node: u32) {
        let from_slot = self.bernoulli && self.now == self.cur_slot_start;
        if self.generate(node, from_slot) {
            self.generated_total += 1;
            self.stats.on_generate(self.now, 1, self.packet_bytes);
        }
    }

    /// Generate a packet of `node` now, file its next one and send it if the NIC is free;
    /// returns whether it was generated (not deferred by a full source queue). The caller
    /// counts it (`generated_total`, statistics): a slot counts all its packets at once.
    /// `from_slot`: now is the start of the Bernoulli slot visited last (always so in
    /// `on_slot`).
    #[inline(always)]
    fn generate(&mut self, node: u32, from_slot: bool) -> bool {
        let n = node as usize;
        let now = self.now;
        let flits = self.packet_flits as u32;
        // The node's state, borrowed once (the fields used below are disjoint from it).
        let nd = &mut self.nodes[n];
        let queued = nd.queued as usize;
        if queued >= self.source_limit {
            // The round waits until a packet leaves the source queue (see nic_try_send).
            nd.deferred = true;
            return false;
        }
        let dst = self.sampler.destination(node, &mut nd.rng);
        // The next packet: in the common case, from the slot calendar, its slot index is this
        // slot's plus the drawn gap (what `schedule_generation` finds by division).
        let next = if from_slot {
            self.cur_slot + self.injector.slots_to_next(&mut nd.rng)
        } else {
            // Only the periodic process reads the count (a slot does not keep it up to date).
            nd.count += 1;
            self.injector.next(now, nd.first, nd.count, &mut nd.rng)
        };
        // An idle NIC with credits sends the packet at once, without queueing it (what
        // `nic_try_send` does with a queue of one, see `send_from_nic`); it is injected as it
        // is generated.
        let send = queued == 0 && nd.busy <= now && self.nic_credits.covers(n, now, flits);
        let mut resume = false;
        if send {
            resume = std::mem::take(&mut nd.deferred);
            nd.busy = now + self.ser[0];
        }
        let pkt = Packet::new(node, dst, self.topo.router_of_node(dst), self.packet_flits);
        let id = self.pkts.alloc(pkt, now, if send { now } else { 0 });
        // Filing the next packet changes neither the source queue nor the NIC.
        if from_slot {
            if next < self.end_slot {
                self.file_slot(node, next, self.cur_slot);
            }
        } else {
            self.schedule_generation(node, next);
        }
        if send {
            self.nic_departs(node, id);
            if resume {
                self.resume_round(node);
            }
        } else {
            self.in_source += 1;
            self.nodes[n].queued += 1;
            self.nic_queue[n].push_back(id);
            self.nic_try_send(node);
        }
        true
    }

    /// File the node's next packet: Bernoulli packets sit on slot boundaries and go to the slot
    /// calendar; periodic ones to the event heap.
    fn schedule_generation(&mut self, node: u32, at: Time) {
        if at >= self.end {
            return;
        }
        if self.bernoulli {
            // On a slot boundary, except after a deferred round resumed mid-slot: round up.
            let slot = self.slot_of(at + self.slot - 1);
            let current = self.slot_of(self.now);
            self.file_slot(node, slot, current);
        } else {
            self.q.at(at, Event { kind: GEN, vc: 0, port: 0, a: node, b: self.gen_epoch, c: 0 });
        }
    }

    /// File a Bernoulli node's next packet in slot `slot` (seen from slot `current`, the one
    /// containing now).
    #[inline]
    fn file_slot(&mut self, node: u32, slot: u64, current: u64) {
        self.calendar.insert(slot, current, node);
        if !self.slot_pending {
            self.restart_slots(current);
        }
    }

    /// The slot chain stopped (every node was deferred or done): restart it at the boundary
    /// after slot `current`; nothing can be filed for the current slot (next >= now + slot).
    #[cold]
    #[inline(never)]
    fn restart_slots(&mut self, current: u64) {
        self.slot_pending = true;
        self.q.at((current + 1) * self.slot, Event { kind: SLOT, vc: 0, port: 0, a: 0, b: 0, c: 0 });
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
    fn on_slot(&mut self) {
        let slot = self.slot_of(self.now);
        (self.cur_slot, self.cur_slot_start) = (slot, slot * self.slot);
        let (mut node, count) = self.calendar.take(slot);
        // The node after this one and the one after that: links are read before the node
        // that holds them is filed again by its generation.
        let mut next = if count > 1 { self.calendar.next(node) } else { node };
        let mut generated = 0;
        let from_slot = self.now == self.cur_slot_start;
        for k in 0..count {
            // The nodes of a slot are scattered: fetch the state of the one after next while
            // this one generates (see `prefetch_for`).
            let after = if k + 2 < count { self.calendar.next(next) } else { next };
            if k + 2 < count {
                let ahead = after as usize;
                prefetch(&self.nodes, ahead);
                self.nic_credits.prefetch(ahead);
            }
            generated += self.generate(node, from_slot) as u64;
            (node, next) = (next, after);
        }
        // All at the same time, so in the same window: one record for the slot.
        self.generated_total += generated;
        self.stats.on_generate(self.now, generated, self.packet_bytes);
        self.slot_pending = !self.calendar.is_empty();
        if self.slot_pending {
            self.q.push(self.ch.slot, Event { kind: SLOT, vc: 0, port: 0, a: 0, b: 0, c: 0 });
        }
    }

    /// A traffic phase starts: swap in its load and/or pattern and restart every node's
    /// generation schedule from now (exact for Bernoulli, which is memoryless; periodic nodes
    /// draw a new phase).
    fn on_phase(&mut self, i: usize) -> Fallible {
        let ph = self.cfg.traffic.phases[i].clone();
        if let Some(load) = ph.load {
            self.injector = Injector::new(self.cfg.traffic.process, load, self.slot);
        }
        if let Some(p) = &ph.pattern {
            let pattern = Pattern::parse(p, &self.topo)?;
            let mut rng = Rng::seed_from_u64(stream_seed(self.cfg.seed, 3, i as u64 + 1));
            self.sampler = PatternSampler::new(pattern, &self.topo, self.cfg.traffic.allow_self, &mut rng);
        }
        self.gen_epoch += 1;
        self.calendar.clear();
        self.nodes.iter_mut().for_each(|nd| nd.deferred = false);
        // The next slot boundary strictly after now: this slot's bucket may already be visited.
        let base = match self.cfg.traffic.process {
            Process::Bernoulli => (self.now / self.slot + 1) * self.slot,
            Process::Periodic => self.now,
        };
        for node in 0..self.topo.nodes() {
            let t = base + self.injector.first(&mut self.nodes[node].rng);
            self.nodes[node].first = t;
            self.nodes[node].count = 0;
            self.schedule_generation(node as u32, t);
        }
        Ok(())
    }

    fn nic_try_send(&mut self, node: u32) {
        let n = node as usize;
        let now = self.now;
        if self.nodes[n].busy > now {
            if !self.nodes[n].wake && !self.nic_queue[n].is_empty() {
                self.nodes[n].wake = true;
                // Arbitrary delay: goes to the heap, not to a per-delay FIFO.
                self.q.at(self.nodes[n].busy, Event { kind: NIC_WAKE, vc: 0, port: 0, a: node, b: 0, c: 0 });
            }
            return;
        }
        let Some(&id) = self.nic_queue[n].front() else {
            return;
        };
        // Every packet has `packet_flits` flits: no need to load the packet.
        let flits = self.packet_flits as u32;
        if !self.nic_credits.covers(n, now, flits) {
            match self.nic_credits.next_return(n) {
                Some(t) if !self.nodes[n].wake => {
                    self.nodes[n].wake = true;
                    self.q.at(t, Event { kind: NIC_WAKE, vc: 0, port: 0, a: node, b: 0, c: 0 });
                }
                Some(_) => {}
                None => self.nodes[n].blocked = true,
            }
            return;
        }
        let queue = &mut self.nic_queue[n];
        queue.pop_front();
        let more = !queue.is_empty();
        self.nodes[n].queued -= 1;
        self.inject(node, id, more);
    }

    /// The NIC of `node`, idle with credits for it, starts sending packet `id` (taken from its
    /// source queue, which holds more packets if `more`) to its router.
    fn inject(&mut self, node: u32, id: PacketId, more: bool) {
        self.in_source -= 1;
        self.pkts.set_injected(id, self.now);
        self.send_from_nic(node, id, more);
    }

    /// What `inject` does once the packet has left the source queue and carries its injection
    /// time.
    #[inline(always)]
    fn send_from_nic(&mut self, node: u32, id: PacketId, more: bool) {
        let nd = &mut self.nodes[node as usize];
        let resume = std::mem::take(&mut nd.deferred);
        nd.busy = self.now + self.ser[0];
        // The queue's next packet waits for the link: wake the NIC when it is free.
        let wake = more && !nd.wake;
        nd.wake |= wake;
        self.nic_departs(node, id);
        if wake {
            self.q.push(self.ch.nic_wake, Event { kind: NIC_WAKE, vc: 0, port: 0, a: node, b: 0, c: 0 });
        }
        if resume {
            self.resume_round(node);
        }
    }

    /// Packet `id` leaves the NIC of `node` for its router (the NIC's own state is updated by
    /// the caller).
    #[inline(always)]
    fn nic_departs(&mut self, node: u32, id: PacketId) {
        let n = node as usize;
        let now = self.now;
        let flits = self.packet_flits as u32;
        self.nic_credits.take(n, flits);
        if self.in_network == 0 {
            self.last_progress = now;
        }
        self.in_network += 1;
        if self.check {
            self.nic_inflight_flits[n] += flits;
        }
        let router = self.topo.router_of_node(node);
        let port = self.topo.host_port_of_node(node);
        let c = self.pidx(router, port) as u32;
        self.q.push(self.ch.nic_arrive, Event { kind: ARRIVE, vc: 0, port, a: router, b: id, c });
    }

    /// A packet left the full source queue of `node`: its deferred round happens now, and the
    /// schedule continues from here.
    #[cold]
    #[inline(never)]
    fn resume_round(&mut self, node: u32) {
        let nd = &mut self.nodes[node as usize];
        nd.first = self.now;
        nd.count = 0;
        self.on_generate(node);
    }

    // ---- Router ----------------------------------------------------------------------------

    /// Packet `id` arrives at input (`port`, `vc`) of `router`; `pi` is the port's index.
    /// `hint`: the packet's hop here, if the near prefetch stage found it (see `HopHint`).
    fn on_arrive(&mut self, router: u32, port: u16, vc: u8, id: PacketId, pi: usize, hint: HopHint) -> Fallible {
        debug_assert_eq!(pi, self.pidx(router, port));
        let qi = pi * self.vcs + vc as usize;
        let host = self.topo.is_host_port(port);
        // The input port's line, read once for this handler and the grant (routing reads no
        // port line).
        let inp = InPort::of(&self.ports[pi]);
        // One lookup of the packet for everything this hop reads and writes in it.
        let (flits, at_dst) = {
            let pkt = self.pkts.get_mut(id);
            pkt.prev_arrival = pkt.arrival;
            pkt.arrival = self.now;
            if !host {
                pkt.hops += 1;
                pkt.global_hops += (port >= self.topo.first_global_port()) as u8;
            }
            (pkt.flits as u32, pkt.dst_router == router)
        };
        if at_dst {
            self.pkts.prefetch_stamps(id); // read when it is delivered
        }
        if self.check {
            if host {
                self.nic_inflight_flits[router as usize * self.topo.p + port as usize] -= flits;
            } else {
                let (ur, up) = inp.peer;
                let ui = self.qidx(ur, up, vc as usize);
                self.inflight_flits[ui] -= flits;
            }
        }
        if self.wait_len[router as usize] == 0 {
            // Idle router (the common case below saturation). Every non-empty input VC has its
            // head's request in the list (checked with `run.check`), so with no request waiting
            // every input VC is empty: the packet is the only request and fits its buffer. It is
            // routed and offered the crossbar at once, without passing through the input queue
            // and the request list, and without reading the queue's state (an L2 miss on most
            // arrivals when the network's state outgrows the cache). Same decisions and timing
            // as the general path below (queue, request, arbitrate a list of one), fewer steps.
            debug_assert!(self.inq.is_empty(qi));
            let hop = self.route(router, port, id, hint)?;
            let e = request(port, vc, hop);
            match self.grant(router, e, pi, inp, id, false)? {
                Grant::Queued | Grant::QueuedSilent | Grant::Through => {}
                refused => {
                    self.inq.push(qi, id, flits);
                    self.push_request(router, e);
                    if let Grant::Busy(t) = refused {
                        self.wake_arbiter(router, t);
                    }
                }
            }
            return Ok(());
        }
        if self.inq.flits(qi) + flits > self.in_cap {
            return Err(Error::Invariant(format!(
                "input buffer overflow at router {router} port {port} VC {vc} ({} + {flits} > {} flits)",
                self.inq.flits(qi),
                self.in_cap
            ))
            .into());
        }
        if !self.inq.push(qi, id, flits) {
            return Err(Error::Invariant(format!("input queue of router {router} port {port} VC {vc} is full")).into());
        }
        if self.inq.len(qi) == 1 {
            let hop = self.route(router, port, id, hint)?;
            self.push_request(router, request(port, vc, hop));
            self.request_arb(router)?;
        }
        Ok(())
    }

    /// Route the packet that just became the head of input (port, vc) and file its crossbar
    /// request.
    fn route_head(&mut self, router: u32, in_port: u16, vc: usize, id: PacketId) -> Fallible {
        let hop = self.route(router, in_port, id, HopHint::NONE)?;
        self.push_request(router, request(in_port, vc as u8, hop));
        Ok(())
    }

    /// Ask the routing for the output of packet `id` at the head of input (port, vc), check the
    /// choice and record it in the packet. `hint`: the hop the near prefetch stage found for
    /// this packet at this router (MIN's table hop), used instead of finding it again.
    #[inline(always)]
    fn route(&mut self, router: u32, in_port: u16, id: PacketId, hint: HopHint) -> Result<Hop> {
        // Most hops come from the first-port table: no view, no congestion read (MIN, and the
        // Valiant and UGAL families after their source router). MIN is tested first: behind the
        // dispatch over every routing, its hop cost 3 more instructions per traversal.
        let table_hop = match &self.routing {
            AnyRouting::Minimal(min) => match hint.for_packet(id) {
                Some(hop) => {
                    debug_assert_eq!(Some(hop), Minimal::table_hop(&self.topo, router, self.pkts.get(id)));
                    Some(hop)
                }
                None => min.route_without_view(&self.topo, router, in_port, self.pkts.get_mut(id)),
            },
            other => other.route_without_view(&self.topo, router, in_port, self.pkts.get_mut(id)),
        };
        let Hop { port, vc: out_vc } = match table_hop {
            Some(hop) => hop,
            None => self.route_with_view(router, in_port, id),
        };
        let pkt = self.pkts.get_mut(id);
        pkt.out_port = port;
        // A forced `routing.vcs` below the algorithm's need folds the upper VCs together.
        pkt.out_vc = out_vc.min(self.top_vc);
        let hop = Hop { port, vc: pkt.out_vc };
        // The hop bound: a VC the routing declares; ejection only at the destination node's port;
        // otherwise a router-to-router port, within the declared number of hops.
        let ok = (out_vc as usize) < self.alg_vcs
            && if self.topo.is_host_port(port) {
                router as usize * self.topo.p + port as usize == pkt.dst as usize
            } else {
                (port as usize) < self.radix && (pkt.hops as u32) < self.max_hops
            };
        if !ok {
            return Err(self.bad_route(router, id, port, out_vc));
        }
        Ok(hop)
    }

    /// The routing's choice for packet `id` through a [`RouterView`] of the router (out of line,
    /// so that the table hops of [`Simulation::route`] save few registers).
    #[inline(never)]
    fn route_with_view(&mut self, router: u32, in_port: u16, id: PacketId) -> Hop {
        let view = RouterView::new(&self.topo, router, in_port, self.now, self.vcs, &self.credits);
        self.routing.route(&view, self.pkts.get_mut(id), &mut self.router_rng[router as usize])
    }

    /// The error for a route that [`Simulation::route`] refused (kept out of the hot path: the
    /// message formatting made every call save more registers).
    #[cold]
    #[inline(never)]
    fn bad_route(&self, router: u32, id: PacketId, port: u16, out_vc: u8) -> Error {
        let pkt = self.pkts.get(id);
        Error::Invariant(if out_vc as usize >= self.alg_vcs {
            format!(
                "{} chose VC {out_vc} at router {router} but declares {} VCs",
                self.cfg.routing.algorithm, self.alg_vcs
            )
        } else if port as usize >= self.radix {
            format!("router {router} routed to port {port} of radix {}", self.radix)
        } else if self.topo.is_host_port(port) {
            format!("packet for node {} ejected at router {router} port {port}", pkt.dst)
        } else {
            format!(
                "hop bound: packet {}->{} would take hop {} (> {}) at router {router}",
                pkt.src,
                pkt.dst,
                pkt.hops + 1,
                self.max_hops
            )
        })
    }

    /// File crossbar request `e` (see [`request`]) at the back of the router's list.
    #[inline]
    fn push_request(&mut self, router: u32, e: u64) {
        let r = router as usize;
        let len = self.wait_len[r] as usize;
        assert!(len < self.wait_cap, "at most two entries per input VC during a pass");
        self.waiting[r * self.wait_cap + len] = e;
        self.wait_len[r] += 1;
    }

    /// Run the crossbar arbiter now. Requests are arbitrated when they arise (a head packet is
    /// routed, a crossbar port or output-buffer space frees); requests made at the very same
    /// picosecond are therefore served in event order, and LRU decides among everything that is
    /// waiting at that moment.
    #[inline]
    fn request_arb(&mut self, router: u32) -> Fallible {
        self.on_arbitrate(router, false)
    }

    /// Crossbar allocation: least-recently-granted (input port, VC) first; each winner takes its
    /// input and output crossbar ports for the packet's transfer time. Never inlined: a copy
    /// in the event loop (where XBAR_DONE calls it) costs the loop registers.
    ///
    /// `freed`: the pass follows output-buffer space freeing (`try_send`). Only such a pass can
    /// find room in a buffer that an earlier attempt found full: buffer space frees nowhere
    /// else, and where it frees from full, this pass runs at once. Other passes therefore take
    /// a request marked `FULL_SEEN` as still full without reading its queue, packet and credit
    /// state; they still check its crossbar ports first, as the full attempt would, so that a
    /// busy port gives the same wake-up. Under saturation most attempts meet a full buffer (PAR
    /// at load 0.9: 44 M of 55 M), so this is most of the arbiter's work.
    #[inline(never)]
    fn on_arbitrate(&mut self, router: u32, freed: bool) -> Fallible {
        let r = router as usize;
        let base = r * self.wait_cap;
        // The earliest time a refused request's busy crossbar port frees.
        let mut busy_until = Time::MAX;
        let granted_silent = match self.wait_len[r] {
            0 => return Ok(()),
            1 => {
                // The common case at low and moderate load: one request, no ordering needed.
                let e = self.waiting[base];
                self.wait_len[r] = 0;
                match self.try_grant(router, e, freed)? {
                    refused @ (Grant::No | Grant::Full | Grant::Busy(_)) => {
                        // Nothing else can have been requested: a refused grant routes nothing.
                        self.waiting[base] = Self::mark_full(e, &refused, freed);
                        self.wait_len[r] = 1;
                        if let Grant::Busy(t) = refused {
                            busy_until = t;
                        }
                        false
                    }
                    Grant::Queued => false,
                    Grant::QueuedSilent | Grant::Through => true,
                }
            }
            n => {
                let n = n as usize;
                let (vcs, qbase) = (self.vcs, r * self.radix * self.vcs);
                let sorted = self.wait_sorted[r] as usize;
                order_requests(&mut self.waiting[base..base + n], &self.lru[qbase..], vcs, sorted);
                let mut silent = false;
                // Refused entries are kept in place as the pass goes (a write at `kept <= k`
                // never overtakes the reads); new heads routed during the pass are appended
                // after the first n entries and moved down behind them at the end.
                let mut kept = 0;
                for k in 0..n {
                    let e = self.waiting[base + k];
                    match self.try_grant(router, e, freed)? {
                        Grant::Queued => {}
                        Grant::QueuedSilent | Grant::Through => silent = true,
                        refused => {
                            if let Grant::Busy(t) = refused {
                                busy_until = busy_until.min(t);
                            }
                            self.waiting[base + kept] = Self::mark_full(e, &refused, freed);
                            kept += 1;
                        }
                    }
                }
                // (A loop, not `copy_within`: this is zero or one entry in most passes.)
                for j in n..self.wait_len[r] as usize {
                    self.waiting[base + kept] = self.waiting[base + j];
                    kept += 1;
                }
                self.wait_len[r] = kept as u32;
                // The kept list is in order: the refused entries kept theirs, and the heads
                // appended during the pass follow them in the order of the grants that routed
                // them, whose LRU stamps are newer than any older entry's.
                self.wait_sorted[r] = kept as u32;
                silent
            }
        };
        // Silent grants schedule no XBAR_DONE, so wake the arbiter when their crossbar ports
        // free if anything is still waiting (heads routed during the pass wait for their input
        // port); and a request refused because a crossbar port is busy must be offered again
        // when that port frees, which no other event may signal.
        if granted_silent && self.wait_len[r] > 0 {
            busy_until = busy_until.min(self.now + self.xfer);
        }
        if busy_until != Time::MAX {
            self.wake_arbiter(router, busy_until);
        }
        Ok(())
    }

    /// The waiting entry `e` after a pass refused it with `refused`: marked `FULL_SEEN` if its
    /// buffer was found full; a pass that could not see (a busy crossbar port answered first)
    /// keeps the mark, unless buffer space has freed (`freed`), which makes it unknown.
    #[inline(always)]
    fn mark_full(e: u64, refused: &Grant, freed: bool) -> u64 {
        match refused {
            Grant::Full => e | FULL_SEEN,
            _ if freed => e & !FULL_SEEN,
            _ => e,
        }
    }

    /// A request refused because a crossbar port is busy until `until`: it needs a wake-up then
    /// only if the grant holding the port schedules no XBAR_DONE (whose handler arbitrates).
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
    fn wake_arbiter(&mut self, router: u32, t: Time) {
        let r = router as usize;
        if self.arb_wake_at[r] <= t {
            return;
        }
        self.arb_wake_at[r] = t;
        let ev = Event { kind: ARB_WAKE, vc: 0, port: 0, a: router, b: 0, c: 0 };
        if t == self.now + self.xfer {
            self.q.push(self.ch.xbar, ev);
        } else {
            self.q.at(t, ev);
        }
    }

    /// Grant the request of waiting entry `e` (see [`request`]) if its crossbar ports are
    /// free and its output VC has room; route the next head of that input VC if there is one.
    /// A request marked `FULL_SEEN` is taken as still full unless the pass follows freed buffer
    /// space (`freed`, see [`Simulation::on_arbitrate`]).
    #[inline(always)]
    fn try_grant(&mut self, router: u32, e: u64, freed: bool) -> Fallible<Grant> {
        let ip = self.pidx(router, (e as u32 >> VC_BITS) as u16);
        if request_full_seen(e) && !freed {
            return self.still_full(router, e, ip);
        }
        let inp = InPort::of(&self.ports[ip]);
        let qi = ip * self.vcs + (e as u32 & VC_MASK) as usize;
        let id = self.inq.front(qi).expect("waiting entry has a head packet");
        self.grant(router, e, ip, inp, id, true)
    }

    /// The refusal [`Simulation::grant`] gives request `e`, whose output buffer is still full
    /// (see `FULL_SEEN`): the same crossbar checks, in the same order, before the full buffer.
    ///
    /// Only the input port's crossbar fields are read (not the whole [`InPort`], whose other
    /// fields the grant needs): under saturation most attempts end here.
    #[inline(always)]
    fn still_full(&self, router: u32, e: u64, ip: usize) -> Fallible<Grant> {
        let now = self.now;
        let inp = &self.ports[ip];
        if inp.xin_busy > now {
            return Ok(self.busy(inp.xin_busy, inp.xin_silent));
        }
        let out = &self.ports[self.pidx(router, request_port(e))];
        if out.xout_busy > now {
            return Ok(if out.xout_silent { Grant::Busy(out.xout_busy) } else { Grant::No });
        }
        debug_assert!({
            let (op, out_vc) = (self.pidx(router, request_port(e)), request_vc(e) as usize);
            self.credits.out_flits(op * self.vcs + out_vc) + self.packet_flits as u32 > self.out_cap
        });
        Ok(Grant::Full)
    }

    /// The grant of [`Simulation::try_grant`] for head packet `id` at input port index `ip`
    /// (whose line reads `inp`); `queued` says whether it
    /// sits in the input queue (the idle-router path offers it before queueing it).
    ///
    /// Each port line and the output VC's credit state are looked up once or twice per grant
    /// (reads first, writes at the end), not at every use: every lookup costs a multiply and a
    /// bounds check.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn grant(&mut self, router: u32, e: u64, ip: usize, inp: InPort, id: PacketId, queued: bool) -> Fallible<Grant> {
        let now = self.now;
        let (in_port, vc) = ((e as u32 >> VC_BITS) as u16, (e as u32 & VC_MASK) as usize);
        debug_assert_eq!(ip, self.pidx(router, in_port));
        if inp.xin_busy > now {
            return Ok(self.busy(inp.xin_busy, inp.xin_silent));
        }
        // What the credit return needs from the input port's line (fixed fields).
        let (in_class, in_peer, in_peer_queues) = (inp.class as usize & 3, inp.peer, inp.peer_queues);
        let qi = ip * self.vcs + vc;
        // The output the packet was routed to, carried by the request.
        let (out_port, out_vc) = (request_port(e), request_vc(e) as usize);
        debug_assert_eq!((out_port, out_vc), (self.pkts.get(id).out_port, self.pkts.get(id).out_vc as usize));
        let flits = self.packet_flits as u32;
        let op = self.pidx(router, out_port);
        let oi = op * self.vcs + out_vc;
        // One mutable borrow of the output port's line for the whole grant: what happens
        // between its reads and its writes touches other fields of `self` only.
        let out = &mut self.ports[op];
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
        let done = now + self.xfer;
        // Fast path if nothing is queued at the output, it is free when the transfer ends and
        // (unless it ejects) its VC has the credits: the packet starts on the link right then.
        // Same timing as queueing it and sending at XBAR_DONE, one event fewer; the congestion
        // signal counts it as used credits instead of output-buffer flits, so their sum is
        // unchanged. Otherwise it is queued, reserving its output-buffer space. A full buffer
        // refuses it (space freeing in the output buffer triggers arbitration, see `try_send`).
        let idle = out_queued == 0 && out_busy <= done;
        let through = match self.credits.admit(oi, now, flits, self.out_cap, idle, host) {
            Admit::Full => return Ok(Grant::Full),
            Admit::Through => true,
            Admit::Queue => false,
        };
        if queued {
            self.inq.pop(qi, flits);
        }
        if self.lru_clock == u32::MAX {
            self.lru_clock = renumber_stamps(&mut self.lru);
        }
        self.lru_clock += 1;
        self.lru[qi] = self.lru_clock;
        self.traversals += 1;
        self.last_progress = now;
        let grant = if through {
            let ser = self.ser[class];
            out.busy = done + ser;
            out.xout_busy = done;
            out.xout_silent = true;
            let ((pr, pp), c) = (out.peer, out.peer_port);
            if host {
                self.deliver(id, done + ser + self.eject_lat);
            } else {
                if self.check {
                    self.inflight_flits[oi] += flits;
                }
                let ev = Event { kind: ARRIVE, vc: out_vc as u8, port: pp, a: pr, b: id, c };
                self.q.push(self.ch.arrive_through[class], ev);
            }
            Grant::Through
        } else if out_busy >= done && (!out_wake || out_wake_at <= out_busy) {
            // The link stays busy until after the transfer ends, and the port's next wake-up
            // (pending, or scheduled here) comes no later than that: output arbitration cannot
            // look at this buffer before the packet is through the crossbar, so it joins the
            // buffer now and no XBAR_DONE is needed. Same decisions as the XBAR_DONE path, one
            // event fewer; crossbar ports held by it are silent like the fast path's.
            out.queued += 1;
            out.xout_busy = done;
            out.xout_silent = true;
            if !out_wake {
                // As `schedule_port_wake`.
                out.wake = true;
                out.wake_at = out_busy;
                let ev = Event { kind: PORT_WAKE, vc: 0, port: out_port, a: router, b: 0, c: op as u32 };
                self.q.at(out_busy, ev);
            }
            self.outq.push(oi, id, flits);
            Grant::QueuedSilent
        } else {
            out.xout_busy = done;
            out.xout_silent = false;
            self.q.push(
                self.ch.xbar,
                Event { kind: XBAR_DONE, vc: out_vc as u8, port: out_port, a: router, b: id, c: 0 },
            );
            Grant::Queued
        };
        // The crossbar ports are held until the transfer ends (the input side is set after
        // the branches above, which do not read it).
        let inp = &mut self.ports[ip];
        inp.xin_busy = done;
        inp.xin_silent = !matches!(grant, Grant::Queued);
        if self.wants_feedback && !self.topo.is_host_port(in_port) {
            self.send_feedback(router, in_port, id, in_peer, in_class);
        }
        self.return_credit(router, in_port, vc, flits, in_class, in_peer, in_peer_queues);
        if queued {
            if let Some(next) = self.inq.front(qi) {
                self.route_head(router, in_port, vc, next)?;
            }
        }
        Ok(grant)
    }

    /// Ask the routing for feedback on the packet leaving input `in_port` and send it upstream
    /// with the credit latency. `peer` and `class` are those of the input port's line, which
    /// the grant has read already.
    fn send_feedback(&mut self, router: u32, in_port: u16, id: PacketId, peer: (u32, u16), class: usize) {
        let view = RouterView::new(&self.topo, router, in_port, self.now, self.vcs, &self.credits);
        let Some(fb) = self.routing.feedback(&view, self.pkts.get(id)) else { return };
        let slot = match self.free_feedbacks.pop() {
            Some(i) => {
                self.feedbacks[i as usize] = fb;
                i
            }
            None => {
                self.feedbacks.push(fb);
                (self.feedbacks.len() - 1) as u32
            }
        };
        let (ur, up) = peer;
        self.q.push(self.ch.credit[class], Event { kind: FEEDBACK, vc: 0, port: up, a: ur, b: slot, c: 0 });
    }

    /// The packet left input (port, vc): its credits travel back upstream. They are recorded
    /// with their arrival time; only a sender blocked on credits gets a wake-up event.
    /// `class`, `peer` and `peer_queues` are those of the input port's line.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn return_credit(
        &mut self,
        router: u32,
        in_port: u16,
        vc: usize,
        flits: u32,
        class: usize,
        peer: (u32, u16),
        peer_queues: u32,
    ) {
        if class == 0 {
            let node = router as usize * self.topo.p + in_port as usize;
            self.nic_credits.give_back(node, self.now, self.now + self.credit_lat[0], flits);
            let nd = &mut self.nodes[node];
            if nd.blocked && !nd.wake {
                nd.blocked = false;
                nd.wake = true;
                self.q.push(self.ch.nic_credit, Event { kind: NIC_WAKE, vc: 0, port: 0, a: node as u32, b: 0, c: 0 });
            }
        } else {
            let (ur, up) = peer;
            let uq = peer_queues as usize + vc;
            let at = self.now + self.credit_lat[class];
            if self.credits.give_back(uq, self.now, at, flits) {
                // The upstream port waits for credits: wake it when this return arrives.
                let upi = self.pidx(ur, up);
                let st = &mut self.ports[upi];
                if !st.wake {
                    st.wake = true;
                    st.wake_at = at;
                    for v in 0..self.vcs {
                        self.credits.set_watched(upi * self.vcs + v, false);
                    }
                    let ev = Event { kind: PORT_WAKE, vc: 0, port: up, a: ur, b: 0, c: upi as u32 };
                    self.q.push(self.ch.credit[class], ev);
                }
            }
        }
    }

    /// Wake output `port` at `at` (none may be pending). Arbitrary delay: the timer wheel.
    fn schedule_port_wake(&mut self, router: u32, port: u16, at: Time) {
        let pi = self.pidx(router, port);
        self.ports[pi].wake = true;
        self.ports[pi].wake_at = at;
        self.q.at(at, Event { kind: PORT_WAKE, vc: 0, port, a: router, b: 0, c: pi as u32 });
    }

    fn on_xbar_done(&mut self, router: u32, port: u16, vc: u8, id: PacketId) -> Fallible {
        let qi = self.qidx(router, port, vc as usize);
        let flits = self.packet_flits as u32;
        let pushed = self.outq.push(qi, id, flits);
        debug_assert!(pushed, "output space was reserved at grant");
        let pi = self.pidx(router, port);
        self.ports[pi].queued += 1;
        if self.wait_len[router as usize] > 0 {
            self.request_arb(router)?;
        }
        self.try_send(router, port, pi, false)
    }

    /// Output arbitration: round robin over VCs whose head packet fits the downstream credits.
    /// `pi` is the port's index; `woken`: called for this port's PORT_WAKE, whose pending flag
    /// it clears.
    ///
    /// The port's line is borrowed once for the whole call, beside the queues and credits
    /// (disjoint fields), and the port's VC queues are scanned as one slice: indexing anew at
    /// every use re-checked the bounds each time.
    fn try_send(&mut self, router: u32, port: u16, pi: usize, woken: bool) -> Fallible {
        debug_assert_eq!(pi, self.pidx(router, port));
        let now = self.now;
        let vcs = self.vcs;
        let st = &mut self.ports[pi];
        if woken {
            st.wake = false;
        }
        if st.busy > now {
            if !st.wake && st.queued > 0 {
                let at = st.busy;
                st.wake = true;
                st.wake_at = at;
                self.q.at(at, Event { kind: PORT_WAKE, vc: 0, port, a: router, b: 0, c: pi as u32 });
            }
            return Ok(());
        }
        if st.queued == 0 {
            return Ok(());
        }
        let class = st.class as usize & 3;
        let host = class == 0;
        let qb = pi * vcs;
        // Every packet has `packet_flits` flits: the heads need not be loaded to check credits.
        let flits = self.packet_flits as u32;
        let credits = &mut self.credits;
        let chosen = self.outq.pop_rr(qb, vcs, st.rr as usize, flits, |q| host || credits.covers(q, now, flits));
        let Some((vc, id)) = chosen else {
            self.send_blocked(router, port);
            return Ok(());
        };
        let qi = qb + vc;
        // Only a buffer that had no room for another packet can have blocked a crossbar request.
        let was_full = self.credits.leave_out(qi, flits, self.out_cap, !host);
        let ser = self.ser[class];
        st.queued -= 1;
        st.rr = if vc + 1 == vcs { 0 } else { vc as u8 + 1 };
        st.busy = now + ser;
        let ((pr, pp), c) = (st.peer, st.peer_port);
        // At most one pending wake per port: a send triggered by a credit or the crossbar while
        // a wake is pending must not add a second one (they would multiply under saturation).
        let wake = st.queued > 0 && !st.wake;
        if wake {
            st.wake = true;
            st.wake_at = now + ser;
        }
        if host {
            self.deliver(id, now + ser + self.eject_lat);
        } else {
            if self.check {
                self.inflight_flits[qi] += flits;
            }
            self.q.push(self.ch.arrive[class], Event { kind: ARRIVE, vc: vc as u8, port: pp, a: pr, b: id, c });
        }
        if wake {
            let ev = Event { kind: PORT_WAKE, vc: 0, port, a: router, b: 0, c: pi as u32 };
            self.q.push(self.ch.port_wake[class], ev);
        }
        if was_full && self.wait_len[router as usize] > 0 {
            self.on_arbitrate(router, true)?; // output buffer space was freed
        }
        Ok(())
    }

    /// Every head packet of output `port` waits for credits: wake the port at the earliest
    /// return on its way, or mark it so that the next return wakes it.
    #[inline(never)]
    fn send_blocked(&mut self, router: u32, port: u16) {
        let pi = self.pidx(router, port);
        let vcs = self.vcs;
        let next = (0..vcs)
            .filter(|&v| !self.outq.is_empty(pi * vcs + v))
            .filter_map(|v| self.credits.next_return(pi * vcs + v))
            .min();
        match next {
            Some(t) if !self.ports[pi].wake => self.schedule_port_wake(router, port, t),
            Some(_) => {}
            None => {
                for v in 0..vcs {
                    self.credits.set_watched(pi * vcs + v, true);
                }
            }
        }
    }

    /// The packet started on its ejection link and reaches its node at `at`: record it now
    /// (no event needed), unless that is past the end of the run.
    fn deliver(&mut self, id: PacketId, at: Time) {
        self.last_progress = self.now;
        if at >= self.end {
            return; // still in flight when the run stops
        }
        // Every packet has `packet_flits` flits (`packet_bytes`).
        let p = self.pkts.get(id);
        let (hops, minimal) = (p.hops, !p.nonminimal);
        if self.tracing {
            self.traced = Some((*p, at));
        }
        self.stats.on_deliver(at, hops, minimal, *self.pkts.stamps(id), self.packet_bytes);
        self.in_network -= 1;
        self.delivered_total += 1;
        self.pkts.release(id);
    }

    // ---- Accessors for checks and tests -----------------------------------------------------

    pub(super) fn waiting_of(&self, router: usize) -> &[u64] {
        let base = router * self.wait_cap;
        &self.waiting[base..base + self.wait_len[router] as usize]
    }

    pub(super) fn queued_at(&self, node: usize) -> usize {
        self.nodes[node].queued as usize
    }

    pub(super) fn radix(&self) -> usize {
        self.radix
    }
}

/// Replace the LRU stamps by their ranks among the distinct stamps (the same order, the same
/// ties) and return the highest rank: what the clock continues from when it reaches `u32::MAX`
/// (once per 4 G grants). Stamps are 32 bits so that the array of one per input VC takes half
/// the cache.
#[cold]
#[inline(never)]
fn renumber_stamps(lru: &mut [u32]) -> u32 {
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
/// entry, so the order is that of any sort). Under congestion lists are long (~20 entries on
/// PAR at load 0.9) and mostly in order already: a pass leaves its list in order (see
/// `on_arbitrate`) and a key changes only when its input VC is granted, which removes the
/// entry. Only the requests filed since the last pass (from `sorted` on, the router's
/// `wait_sorted`) are inserted; sorting the whole list recomputed two keys per comparison.
/// The one-request pass never updates `wait_sorted`: it runs only on a list that a longer pass
/// left at most 1 long, and 1 entry is always in order. Out of line: inlined, it took
/// registers from the grants of `on_arbitrate`.
#[inline(never)]
fn order_requests(list: &mut [u64], lru: &[u32], vcs: usize, sorted: usize) {
    let n = list.len();
    // The key of the input VC alone (the low 32 bits): the output and the mark do not order.
    let key = |e: u64| {
        let e = e as u32;
        (lru[(e >> VC_BITS) as usize * vcs + (e & VC_MASK) as usize], e)
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
    use super::{order_requests, renumber_stamps, HopHint, Simulation, VC_BITS};
    use crate::config::Experiment;
    use crate::routing::Hop;
    use proptest::prelude::*;

    /// A run whose LRU clock reaches `u32::MAX` (and renumbers the stamps) ends exactly as one
    /// whose clock did not: the same arbitration order, so the same summary.
    #[test]
    fn lru_clock_wrap_changes_nothing() {
        let doc = r#"{"routing": {"algorithm": "PAR"}, "traffic": {"load": 0.9},
            "topology": {"p": 2, "a": 4, "h": 2, "g": 9}, "run": {"warmup_us": 1.0, "measure_us": 2.0}}"#;
        let cfg = Experiment::from_json(doc).unwrap();
        let summary = |start: u32| {
            let mut sim = Simulation::new(&cfg).unwrap();
            sim.lru_clock = start;
            let mut s = sim.run().unwrap().summary;
            (s.wall_s, s.ns_per_router_traversal, s.sim_us_per_wall_s) = (0.0, 0.0, 0.0);
            assert!(s.router_traversals > 10_000, "the clock wraps within the run");
            serde_json::to_string(&s).unwrap()
        };
        assert_eq!(summary(u32::MAX - 5_000), summary(0));
    }

    /// A hint gives its hop back for its own packet only, and no hint for any packet.
    #[test]
    fn hop_hint_is_for_its_packet_only() {
        for (id, port, vc) in [(0, 0, 0), (7, 15, 1), (u32::MAX - 1, u16::MAX, u8::MAX)] {
            let hop = Hop { port, vc };
            let hint = HopHint::new(id, hop);
            assert_eq!(hint.for_packet(id), Some(hop));
            assert_eq!(hint.for_packet(id ^ 1), None);
            assert_eq!(HopHint::NONE.for_packet(id), None);
        }
    }

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
        /// `order_requests` puts the list in the order a full sort by (LRU stamp, entry) gives.
        #[test]
        fn order_requests_equals_the_full_sort(
            stamps in proptest::collection::vec(0u32..50, 16),
            picks in proptest::collection::btree_set(0u32..16, 2..16),
            cut in 0usize..16,
        ) {
            let vcs = 2;
            // Outputs and marks in the high bits, which must not change the order.
            let entry = |i: u32| {
                let output = (i as u64 * 0x9E37 % 31) << 32;
                let mark = if (i as u64).is_multiple_of(3) { super::FULL_SEEN } else { 0 };
                output | mark | ((i / vcs as u32) << VC_BITS | (i % vcs as u32)) as u64
            };
            let key = |e: u64| {
                let e = e as u32;
                (stamps[(e >> VC_BITS) as usize * vcs + (e & 0xff) as usize], e)
            };
            let mut list: Vec<u64> = picks.iter().map(|&i| entry(i)).collect();
            let sorted = cut.min(list.len());
            list[..sorted].sort_unstable_by_key(|&e| key(e));
            let mut expected = list.clone();
            expected.sort_unstable_by_key(|&e| key(e));
            order_requests(&mut list, &stamps, vcs, sorted);
            prop_assert_eq!(list, expected);
        }
    }
}
