//! Hop-by-hop feedback for learning routings (Q-routing, Q-adaptive).
//!
//! Transport as in the Q-adaptive reference code (qadaptive-reference.md §1.3): when a packet
//! that came from another router leaves this router's input buffer (crossbar grant), the routing
//! may produce a [`Feedback`]; the engine sends it back over the same link to the upstream router
//! as a control message that takes the credit latency (output + link + input latency) and uses
//! no bandwidth, and hands it to the routing there with the output port it arrived on.

use crate::units::Time;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Feedback {
    /// Destination node of the packet the feedback is about.
    pub dst: u32,
    /// Source node of that packet.
    pub src: u32,
    /// Per-hop delay: from the packet's arrival at the upstream router's input to its arrival at
    /// this router's input (the reference's `queueing_time`), in picoseconds.
    pub hop_delay: Time,
    /// This router's estimate of the remaining time (routing-defined units, ns for Q-adaptive).
    pub estimate: f64,
}
