//! Packets and their arena. A packet is the unit of switching (virtual cut-through); it holds
//! `flits` flits of buffer space wherever it sits. The header carries the per-packet routing
//! fields that routings need (intermediate group/router, phase, hop count, flags).

use crate::topology::NONE;
use crate::units::Time;

pub type PacketId = u32;

/// Exactly one 64-byte cache line, aligned, holding everything read or written at a hop
/// (profiling showed the former 72-byte packet straddling two lines on most hops). The time
/// stamps used only at delivery (generation and injection times) live beside it in the arena
/// ([`Stamps`]).
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
pub struct Packet {
    /// Arrival at the current router's input and at the previous router's input (for per-hop
    /// delays of learning routings).
    pub arrival: Time,
    pub prev_arrival: Time,
    /// A value the routing may attach when it routes the packet and read back in its feedback
    /// hook at the next router (Q-adaptive: the router's min-Q estimate).
    pub estimate: f64,
    pub dst: u32,
    pub dst_router: u32,
    /// Intermediate router (Valiant to a router) or NONE.
    pub inter_router: u32,
    /// Intermediate group or NONE.
    pub inter_group: u32,
    pub flits: u16,
    /// Output decided at the head of the current input VC.
    pub out_port: u16,
    pub out_vc: u8,
    /// Router-to-router hops taken so far.
    pub hops: u8,
    /// Of which over global links.
    pub global_hops: u8,
    /// Routing phase, meaning defined by the routing algorithm.
    pub phase: u8,
    /// The path is not minimal (set by the routing when it diverts).
    pub nonminimal: bool,
    pub src: u32,
}

/// Time stamps of a packet read only when it is delivered (statistics).
#[derive(Debug, Clone, Copy, Default)]
pub struct Stamps {
    pub gen_time: Time,
    /// When the packet left the source NIC (start of its network latency).
    pub inject_time: Time,
}

impl Packet {
    pub fn new(src: u32, dst: u32, dst_router: u32, flits: u16) -> Packet {
        Packet {
            src,
            dst,
            dst_router,
            inter_router: NONE,
            inter_group: NONE,
            flits,
            hops: 0,
            global_hops: 0,
            phase: 0,
            out_port: 0,
            out_vc: 0,
            nonminimal: false,
            arrival: 0,
            prev_arrival: 0,
            estimate: 0.0,
        }
    }
}

/// Slab of packets with a free list, so ids stay small and memory is reused.
const _: () = assert!(std::mem::size_of::<Packet>() == 64);

#[derive(Default)]
pub struct PacketArena {
    slots: Vec<Packet>,
    /// `stamps[id]`: the delivery-only time stamps of packet `id`.
    stamps: Vec<Stamps>,
    free: Vec<PacketId>,
    live: usize,
}

impl PacketArena {
    /// An arena with room for `n` packets before it reallocates (the address space only: pages
    /// are used as packets are).
    pub fn with_capacity(n: usize) -> PacketArena {
        PacketArena {
            slots: Vec::with_capacity(n),
            stamps: Vec::with_capacity(n),
            free: Vec::with_capacity(n),
            live: 0,
        }
    }

    /// Prefetch packet `id` (see [`crate::prefetch`]).
    #[inline]
    pub fn prefetch(&self, id: PacketId) {
        crate::prefetch::prefetch(&self.slots, id as usize);
    }

    /// Prefetch the delivery stamps of packet `id`.
    #[inline]
    pub fn prefetch_stamps(&self, id: PacketId) {
        crate::prefetch::prefetch(&self.stamps, id as usize);
    }

    /// Store a packet generated at `gen_time` and injected at `inject_time` (if known yet; see
    /// `set_injected`). Inlined: the common case reuses a freed id. The packet is stored in one
    /// place after its id is known, so that it can be built in its slot.
    #[inline]
    pub fn alloc(&mut self, p: Packet, gen_time: Time, inject_time: Time) -> PacketId {
        self.live += 1;
        let id = match self.free.pop() {
            Some(id) => id,
            None => self.grow(),
        };
        self.slots[id as usize] = p;
        self.stamps[id as usize] = Stamps { gen_time, inject_time };
        id
    }

    /// No freed id: a new one (while the number of live packets reaches a new high), its slot
    /// filled by the caller.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) -> PacketId {
        self.slots.push(Packet::new(0, 0, 0, 0));
        self.stamps.push(Stamps::default());
        (self.slots.len() - 1) as PacketId
    }

    #[inline]
    pub fn stamps(&self, id: PacketId) -> &Stamps {
        &self.stamps[id as usize]
    }

    #[inline]
    pub fn set_injected(&mut self, id: PacketId, t: Time) {
        self.stamps[id as usize].inject_time = t;
    }

    pub fn release(&mut self, id: PacketId) {
        self.live -= 1;
        self.free.push(id);
    }

    #[inline]
    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id as usize]
    }

    pub fn live(&self) -> usize {
        self.live
    }

    pub fn capacity_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<Packet>() + self.stamps.capacity() * std::mem::size_of::<Stamps>()
    }
}
