//! The routers' state: every port's line, the input and output VC buffers, the credits, and the
//! crossbar arbiters' request lists and LRU stamps. The router's behaviour (arrival, routing,
//! arbitration, output) is in `router.rs` and `arbiter.rs`; `docs/dev/engine.md` states the
//! invariants its fast paths rely on.

use super::{CreditLedger, PacketQueues};
use crate::routing::Hop;
use crate::topology::{LinkClass, Topology, NONE};
use crate::units::Time;

/// Waiting entries pack (input port, VC) as `in_port << VC_BITS | vc` (no division to unpack)
/// in their low 32 bits, the routed output above it (see [`request`]).
pub const VC_BITS: u32 = 8;
pub const VC_MASK: u32 = (1 << VC_BITS) - 1;
/// Set on a waiting entry whose last grant attempt found its output VC's buffer full, while no
/// output buffer of the router has freed space since (see `on_arbitrate`).
pub const FULL_SEEN: u64 = 1 << 63;

/// A waiting crossbar request: input (`in_port`, `vc`) in the low 32 bits (the order key's tie
/// break), its head packet's output port and VC (`Hop`) in bits 32–47 and 48–55, so that a
/// grant attempt need not read the packet.
#[inline(always)]
pub fn request(in_port: u16, vc: u8, hop: Hop) -> u64 {
    (hop.vc as u64) << 48 | (hop.port as u64) << 32 | ((in_port as u64) << VC_BITS | vc as u64)
}

/// The output port of waiting request `e` (see [`request`]).
#[inline(always)]
pub fn request_port(e: u64) -> u16 {
    (e >> 32) as u16
}

/// The output VC of waiting request `e` (see [`request`]).
#[inline(always)]
pub fn request_vc(e: u64) -> u8 {
    (e >> 48) as u8
}

/// The input port of waiting request `e`.
#[inline(always)]
pub fn request_in_port(e: u64) -> u16 {
    (e as u32 >> VC_BITS) as u16
}

/// The input VC of waiting request `e`.
#[inline(always)]
pub fn request_in_vc(e: u64) -> usize {
    (e as u32 & VC_MASK) as usize
}

/// The bit of output `port` in a router's mask of outputs whose buffer space freed (the
/// `freed` of [`crate::engine::sim::Simulation::on_arbitrate`]): one bit per port, ports from 63
/// on sharing the last (a pass then retries all of their requests, which is only slower).
#[inline(always)]
pub fn freed_bit(port: u16) -> u64 {
    1 << port.min(63)
}

/// Whether waiting request `e` carries the `FULL_SEEN` mark.
#[inline(always)]
pub fn request_full_seen(e: u64) -> bool {
    e & FULL_SEEN != 0
}

/// State of one router port (both directions of its link and both crossbar sides), aligned so
/// that each port occupies exactly one cache line.
#[derive(Debug, Clone, Copy, Default)]
#[repr(align(64))]
pub struct PortState {
    /// The output link is busy sending until then.
    pub busy: Time,
    /// The crossbar's input and output sides of this port are busy until then.
    pub xin_busy: Time,
    pub xout_busy: Time,
    /// Router and port at the far end of the link (NONE for host ports).
    pub peer: (u32, u16),
    /// Index of the first VC queue of the peer port (`(router·radix + port)·vcs`): where the
    /// credits of a packet leaving this input go, without recomputing it per hop.
    pub peer_queues: u32,
    /// Index of the peer port (`router·radix + port`), carried by the arrivals sent to it.
    pub peer_port: u32,
    /// Packets waiting in this port's output buffers (all VCs).
    pub queued: u32,
    /// Output round-robin pointer.
    pub rr: u8,
    /// Link class index (0 host, 1 local, 2 global; see [`class_index`]), kept here because
    /// every handler that reads the class also reads this line.
    pub class: u8,
    /// The crossbar's input (output) side of this port is busy from a grant that schedules no
    /// XbarDone (straight through to the link, or silently queued): nothing will signal that
    /// it frees, so a request it refuses must schedule its own arbiter wake-up.
    pub xin_silent: bool,
    pub xout_silent: bool,
    /// A PortWake event is pending, at `wake_at`.
    pub wake: bool,
    pub wake_at: Time,
    // "The port waits for credits and no return is on its way, so the next return must wake it"
    // is the `watched` flag of each of the port's VCs in the credit ledger: a returning credit
    // sees it beside the credits it records, without touching this line.
}

// A port is one line (more fields would make it two).
const _: () = assert!(std::mem::size_of::<PortState>() == 64);

/// What a crossbar grant reads from its input port's line, copied by the caller (an arrival
/// reads the line anyway).
#[derive(Clone, Copy)]
pub struct InPort {
    pub xin_busy: Time,
    pub xin_silent: bool,
    pub class: u8,
    pub peer: (u32, u16),
    pub peer_queues: u32,
}

impl InPort {
    #[inline(always)]
    pub fn of(p: &PortState) -> InPort {
        InPort {
            xin_busy: p.xin_busy,
            xin_silent: p.xin_silent,
            class: p.class,
            peer: p.peer,
            peer_queues: p.peer_queues,
        }
    }
}

pub fn class_index(c: LinkClass) -> usize {
    match c {
        LinkClass::Host => 0,
        LinkClass::Local => 1,
        LinkClass::Global => 2,
    }
}

/// The state of every router of the network.
pub struct Fabric {
    pub radix: usize,
    /// VCs per port (the largest count of any link class).
    pub vcs: usize,
    /// Indexed by router · radix + port: everything about one port in one line.
    pub ports: Vec<PortState>,
    /// VC buffers, indexed by (router · radix + port) · vcs + vc.
    pub inq: PacketQueues,
    pub outq: PacketQueues,
    /// Free downstream credits of every output VC (returns recorded with their arrival time),
    /// and its output buffer's occupancy.
    pub credits: CreditLedger,
    /// LRU stamp of every input VC (its last grant) and the clock that stamps grants. Only the
    /// order of one router's stamps matters, so one clock serves every router (a per-router
    /// clock gives the same order: it cost three bounds-checked loads per grant).
    pub lru: Vec<u32>,
    pub lru_clock: u32,
    /// Crossbar requests waiting at each router: `wait_cap` entries per router (see
    /// [`request`]), in request order (a flat pool: no allocation per router).
    pub waiting: Vec<u64>,
    pub wait_len: Vec<u32>,
    /// Per router, a length (at most `wait_len`) of the list's prefix known to be in
    /// arbitration order: see `order_requests`.
    pub wait_sorted: Vec<u32>,
    pub wait_cap: usize,
    /// Time of the arbiter wake-up pending at each router (`Time::MAX`: none).
    pub arb_wake_at: Vec<Time>,
    /// SST timing: the outputs of each router whose buffer space freed since its last crossbar
    /// pass ([`freed_bit`] mask; the `freed` of the next pass, see `on_arbitrate`).
    pub arb_freed: Vec<u64>,
    /// BookSim timing: the input-queued routers' allocator state (empty otherwise).
    pub iq: super::iq::Iq,
}

impl Fabric {
    /// The routers of `topo` with `vcs` VCs per port, input VC buffers of `in_caps` flits per
    /// link class (host, local, global) and output VC buffers of `out_cap`.
    pub fn new(topo: &Topology, vcs: usize, in_caps: [u32; 3], out_cap: u32) -> Fabric {
        let in_cap = in_caps.into_iter().max().unwrap_or(0);
        let radix = topo.radix;
        let routers = topo.routers();
        let queues = routers * radix * vcs;
        let ports = (0..routers * radix)
            .map(|i| {
                let (r, port) = ((i / radix) as u32, (i % radix) as u16);
                let peer = if port as usize >= topo.p { topo.peer(r, port).unwrap_or((NONE, 0)) } else { (NONE, 0) };
                let class = class_index(topo.class_of_port(port)) as u8;
                let peer_port = if peer.0 == NONE { 0 } else { (peer.0 as usize * radix + peer.1 as usize) as u32 };
                let peer_queues = peer_port * vcs as u32;
                PortState { peer, class, peer_queues, peer_port, ..PortState::default() }
            })
            .collect();
        Fabric {
            radix,
            vcs,
            ports,
            inq: PacketQueues::new(queues, in_cap),
            outq: PacketQueues::new(queues, out_cap),
            // Ejection ports have no downstream buffer: their credits stay full and are unused.
            // An output VC's credits are its link's downstream input buffer, of the link's class.
            credits: CreditLedger::with_classes(queues, in_caps, |q| {
                class_index(topo.class_of_port(((q / vcs) % radix) as u16)) as u8
            }),
            lru: vec![0; queues],
            lru_clock: 0,
            // One request per input VC, but during an arbitration pass a granted entry keeps its
            // slot until the pass ends while the next head of its VC is appended: twice that.
            waiting: vec![0; routers * 2 * radix * vcs],
            wait_len: vec![0; routers],
            wait_sorted: vec![0; routers],
            wait_cap: 2 * radix * vcs,
            arb_wake_at: vec![Time::MAX; routers],
            arb_freed: vec![0; routers],
            iq: super::iq::Iq::default(),
        }
    }

    #[inline(always)]
    pub fn qidx(&self, router: u32, port: u16, vc: usize) -> usize {
        (router as usize * self.radix + port as usize) * self.vcs + vc
    }

    #[inline(always)]
    pub fn pidx(&self, router: u32, port: u16) -> usize {
        router as usize * self.radix + port as usize
    }

    /// The waiting requests of `router`.
    pub fn waiting_of(&self, router: usize) -> &[u64] {
        let base = router * self.wait_cap;
        &self.waiting[base..base + self.wait_len[router] as usize]
    }

    /// File crossbar request `e` (see [`request`]) at the back of the router's list.
    #[inline]
    pub fn push_request(&mut self, router: u32, e: u64) {
        let r = router as usize;
        let len = self.wait_len[r] as usize;
        assert!(len < self.wait_cap, "at most two entries per input VC during a pass");
        self.waiting[r * self.wait_cap + len] = e;
        self.wait_len[r] += 1;
    }
}
