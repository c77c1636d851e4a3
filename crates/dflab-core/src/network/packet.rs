//! Packets and their arena. A packet is the unit of switching (virtual cut-through); it holds
//! `flits` flits of buffer space wherever it sits. The header carries the per-packet routing
//! fields that routings need (intermediate group/router, phase, hop count, flags).

use crate::topology::NONE;
use crate::units::Time;

pub type PacketId = u32;

/// Laid out by hand (`repr(C)`) so that the fields read and written at every hop share the
/// first cache line; the fields used only at generation and delivery (statistics) follow. The
/// 64-byte alignment keeps every packet on its own lines (profiling showed the 72-byte default
/// layout straddling two lines on most hops).
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
    /// Generated inside the measurement window.
    pub measured: bool,
    // ---- second cache line: generation and delivery only ----
    pub src: u32,
    pub gen_time: Time,
    /// When the packet left the source NIC (start of its network latency).
    pub inject_time: Time,
}

impl Packet {
    pub fn new(src: u32, dst: u32, dst_router: u32, flits: u16, gen_time: Time) -> Packet {
        Packet {
            src,
            dst,
            dst_router,
            gen_time,
            inject_time: 0,
            inter_router: NONE,
            inter_group: NONE,
            flits,
            hops: 0,
            global_hops: 0,
            phase: 0,
            out_port: 0,
            out_vc: 0,
            nonminimal: false,
            measured: false,
            arrival: 0,
            prev_arrival: 0,
            estimate: 0.0,
        }
    }
}

/// Slab of packets with a free list, so ids stay small and memory is reused.
const _: () = assert!(std::mem::size_of::<Packet>() == 128);

#[derive(Default)]
pub struct PacketArena {
    slots: Vec<Packet>,
    free: Vec<PacketId>,
    live: usize,
}

impl PacketArena {
    pub fn alloc(&mut self, p: Packet) -> PacketId {
        self.live += 1;
        if let Some(id) = self.free.pop() {
            self.slots[id as usize] = p;
            id
        } else {
            self.slots.push(p);
            (self.slots.len() - 1) as PacketId
        }
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
        self.slots.capacity() * std::mem::size_of::<Packet>()
    }
}
