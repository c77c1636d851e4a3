//! Network state: packets and the per-router buffers, credits and ports the engine moves them
//! through.

pub mod credits;
pub mod packet;
pub mod queues;

pub use credits::{Admit, CreditLedger};
pub use packet::{Packet, PacketArena, PacketId, Stamps};
pub use queues::PacketQueues;
