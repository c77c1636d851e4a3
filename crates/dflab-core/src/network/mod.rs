//! Network state: packets and the per-router buffers, credits and ports the engine moves them
//! through.

pub mod arbiter;
pub mod booksim;
pub mod credits;
pub mod fabric;
pub mod iq;
pub mod nic;
pub mod packet;
pub mod queues;
pub mod router;
pub mod sent_window;
pub mod sst;

pub use credits::{Admit, CreditLedger};
pub use packet::{Header, Packet, PacketArena, PacketId, RoutingArea, Stamps, ROUTING_BYTES};
pub use queues::PacketQueues;
