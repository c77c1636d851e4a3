//! Network state: packets and the per-router buffers, credits and ports the engine moves them
//! through.

pub mod packet;
pub mod ring;

pub use packet::{Packet, PacketArena, PacketId};
pub use ring::RingPool;
