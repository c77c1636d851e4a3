//! The events of the model, typed, each naming its target (the router or node whose state it
//! changes). Sixteen bytes: with its time, a queue entry is 24.

use crate::network::PacketId;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Packet `pkt` arrives at input (`port`, `vc`) of `router`; `pi` is the port's index
    /// (`router · radix + port`), so that neither the prefetch nor the handler multiplies.
    Arrive { router: u32, port: u16, vc: u8, pkt: PacketId, pi: u32 },
    /// Output `port` (index `pi`) of `router` may send: its link freed, or credits returned to a
    /// port that waits for them.
    PortWake { router: u32, port: u16, pi: u32 },
    /// Packet `pkt` finished crossing the crossbar of `router` into output (`port`, `vc`).
    XbarDone { router: u32, port: u16, vc: u8, pkt: PacketId },
    /// SST timing: a credit reaches output `port` (index `pi`) of `router` and arms its timer if
    /// it waits (`network/sst.rs`).
    PortArm { router: u32, port: u16, pi: u32 },
    /// SST timing: a credit reaches the NIC of `node` and arms its timer if it waits.
    NicArm { node: u32 },
    /// SST timing: a crossbar tick; the passes filed for it run
    /// (`engine/clock.rs`).
    Clock,
    /// The crossbar arbiter of `router` runs again (a refused request's crossbar port frees).
    ArbWake { router: u32 },
    /// The NIC of `node` may send.
    NicWake { node: u32 },
    /// A routing control message (`slot` in the message slab) reaches `router` on `port`.
    Msg { router: u32, port: u16, slot: u32 },
    /// The routing timer of `router` fires.
    Timer { router: u32 },
    /// A wake-up the workload asked for, with its own kind and operands.
    Workload { kind: u8, a: u32, b: u32 },
    /// Packet `pkt` reaches its destination node now (only for workloads that want to hear of
    /// deliveries; the packet is released after the workload saw it).
    Delivered { pkt: PacketId },
}

// Arrivals are a third of all events: their entry must stay small.
const _: () = assert!(std::mem::size_of::<Event>() == 16);

impl Event {
    /// A placeholder for unused queue slots.
    pub const FILLER: Event = Event::Timer { router: 0 };
}
