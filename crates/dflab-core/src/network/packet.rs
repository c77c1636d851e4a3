//! Packets and their arena. A packet is the unit of switching (virtual cut-through); it holds
//! `flits` flits of buffer space wherever it sits. Its header has an engine part (where it goes,
//! where it is, how far it came) and a routing part that belongs to the routing algorithm
//! ([`Header`]: intermediate group and router, phase, learning estimates).

use crate::units::Time;

pub type PacketId = u32;

/// The per-packet fields of a routing algorithm, kept in the routing part of the packet's
/// header (at most [`ROUTING_BYTES`] bytes, alignment at most 8).
///
/// `Pod` (plain old data: any bit pattern is a value, no padding, no pointers) is what lets the
/// engine hold every routing's header in the same 64-byte packet without knowing its type; add
/// explicit padding fields to reach a size without implicit padding. A new packet's routing part
/// holds the type's `Default` value.
pub trait Header: bytemuck::Pod + Default + std::fmt::Debug + Send + Sync {}

impl<T: bytemuck::Pod + Default + std::fmt::Debug + Send + Sync> Header for T {}

/// Bytes of the routing part of a packet header.
pub const ROUTING_BYTES: usize = 32;

/// The routing part of a packet header: raw bytes the routing views as its [`Header`] type.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
#[repr(C, align(8))]
pub struct RoutingArea([u64; ROUTING_BYTES / 8]);

impl RoutingArea {
    /// The area holding `h` (the rest zero).
    pub fn of<H: Header>(h: H) -> RoutingArea {
        let mut area = RoutingArea::default();
        *area.get_mut::<H>() = h;
        area
    }

    #[inline(always)]
    pub fn get<H: Header>(&self) -> &H {
        const { assert!(std::mem::size_of::<H>() <= ROUTING_BYTES && std::mem::align_of::<H>() <= 8) };
        // SAFETY: the area is 8-aligned and at least as large as `H` (checked at compile time
        // above), and `H: Pod` is valid for any bit pattern.
        unsafe { &*(self.0.as_ptr() as *const H) }
    }

    #[inline(always)]
    pub fn get_mut<H: Header>(&mut self) -> &mut H {
        const { assert!(std::mem::size_of::<H>() <= ROUTING_BYTES && std::mem::align_of::<H>() <= 8) };
        // SAFETY: as in `get`; writing any `H` leaves valid bytes behind.
        unsafe { &mut *(self.0.as_mut_ptr() as *mut H) }
    }
}

impl std::fmt::Debug for RoutingArea {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:016x?}", self.0)
    }
}

/// Exactly one 64-byte cache line, aligned, holding everything read or written at a hop. The
/// time stamps used only at delivery (generation and injection times) live beside it in the
/// arena ([`Stamps`]).
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
pub struct Packet {
    /// Arrival at the current router's input.
    pub arrival: Time,
    pub dst: u32,
    pub dst_router: u32,
    pub src: u32,
    /// A value of the workload that sent the packet (message or rank bookkeeping), returned to
    /// it at delivery; 0 for synthetic traffic.
    pub tag: u32,
    pub flits: u16,
    /// Output decided at the head of the current input VC.
    pub out_port: u16,
    pub out_vc: u8,
    /// Router-to-router hops taken so far.
    pub hops: u8,
    /// Of which over global links.
    pub global_hops: u8,
    /// The path is not minimal (set by the routing when it diverts).
    pub nonminimal: bool,
    /// The routing algorithm's own fields ([`Packet::hdr`]).
    pub routing: RoutingArea,
}

impl Packet {
    /// The routing's per-packet fields.
    #[inline(always)]
    pub fn hdr<H: Header>(&self) -> &H {
        self.routing.get()
    }

    #[inline(always)]
    pub fn hdr_mut<H: Header>(&mut self) -> &mut H {
        self.routing.get_mut()
    }
}

/// Time stamps of a packet read only when it is delivered (statistics).
#[derive(Debug, Clone, Copy, Default)]
pub struct Stamps {
    pub gen_time: Time,
    /// When the packet left the source NIC (start of its network latency).
    pub inject_time: Time,
}

impl Packet {
    /// A new packet whose routing part is `routing` (the routing's default header).
    pub fn new(src: u32, dst: u32, dst_router: u32, flits: u16, routing: RoutingArea) -> Packet {
        Packet {
            src,
            dst,
            dst_router,
            tag: 0,
            flits,
            hops: 0,
            global_hops: 0,
            out_port: 0,
            out_vc: 0,
            nonminimal: false,
            arrival: 0,
            routing,
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
        self.slots.push(Packet::new(0, 0, 0, 0, RoutingArea::default()));
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
}
