//! A software pipeline over the event stream, in two stages. While an event is handled, bring
//! into the cache what the handlers of later ones will read:
//! * the far stage, [`PREFETCH_FAR`] + 1 events ahead: the lines located from the event alone
//!   (the packet, the port's line);
//! * the near stage, one event ahead, reads those (in the cache by then) to locate the lines
//!   they point to: the upstream VC's credit state (where the packet's credits return; its index
//!   is in the input port's line) and, for a routing that predicts hops from the table
//!   ([`Routing::predict_hop`]), the output port's line and its VC's credit and queue state.
//!
//! A miss on one of these costs a few hundred cycles when the network's state outgrows the
//! cache, and an arrival's handler needs them one after the other. The far stage looks into the
//! lane the next event comes from ([`super::queue::EventQueue::peek_far`]): events come in
//! runs from one lane. A prefetch is only a hint: results do not depend on it.

use super::event::Event;
use super::sim::Simulation;
use crate::network::PacketId;
use crate::prefetch::prefetch;
use crate::routing::{Hop, Routing};

/// How many events beyond the next one the far stage runs (two measured best on the
/// profile-guided build: one no better than three, five slower).
pub const PREFETCH_FAR: u32 = 2;

/// The hop the near stage found for the event after the current one: a table routing's hop of
/// packet `id` arriving at a router, packed as `id << 32 | port << 8 | vc` (one register
/// through the event loop). The loop hands it to the handler of the event popped next, which
/// uses it if it routes that packet: if that event is not the arrival the hint was found for (a
/// handler can schedule an earlier one in between), the packet is still on its link and no
/// route of this event is for it. Used only when the prediction is the routing's route
/// ([`Routing::PREDICTION_IS_ROUTE`]; debug builds check that it is).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct HopHint(u64);

impl HopHint {
    /// No hint (no packet has id `u32::MAX`: the arena would need 256 GB for it).
    pub const NONE: HopHint = HopHint(u64::MAX);

    #[inline(always)]
    pub fn new(id: PacketId, hop: Hop) -> HopHint {
        HopHint((id as u64) << 32 | (hop.port as u64) << 8 | hop.vc as u64)
    }

    /// The hop, if this hint is for packet `id`.
    #[inline(always)]
    pub fn for_packet(self, id: PacketId) -> Option<Hop> {
        ((self.0 >> 32) as u32 == id).then_some(Hop { port: (self.0 >> 8) as u16, vc: self.0 as u8 })
    }
}

impl<R: Routing> Simulation<R> {
    /// The far stage (see the module comment).
    #[inline(always)]
    pub(crate) fn prefetch_far(&self, ev: &Event) {
        match *ev {
            Event::Arrive { router, port, pkt, pi, .. } => {
                self.core.pkts.prefetch(pkt);
                prefetch(&self.fab.ports, pi as usize);
                if self.core.topo.is_host_port(port) {
                    let node = router as usize * self.core.topo.p + port as usize;
                    self.core.nic.credits.prefetch(node);
                    prefetch(&self.core.nic.node, node);
                }
            }
            Event::PortWake { pi, .. } => self.prefetch_port(pi as usize),
            _ => {}
        }
    }

    /// The near stage for the next event (see the module comment); returns the hop it
    /// predicted for an arrival.
    #[inline(always)]
    pub(crate) fn prefetch_near(&self, ev: &Event) -> HopHint {
        match *ev {
            Event::PortWake { pi, .. } => {
                // Most port wake-ups come from the timer wheel (the first of a busy period),
                // which the far stage does not see: their port's line, VC queue states and
                // credits.
                self.prefetch_port(pi as usize);
                HopHint::NONE
            }
            Event::Arrive { router, port, vc, pkt, pi } => {
                let pi = pi as usize;
                let Some(inp) = self.fab.ports.get(pi) else { return HopHint::NONE };
                if !self.core.topo.is_host_port(port) {
                    self.fab.credits.prefetch(inp.peer_queues as usize + vc as usize);
                }
                let Some(hop) = self.rt.alg.predict_hop(&self.core.topo, router, self.core.pkts.get(pkt)) else {
                    return HopHint::NONE;
                };
                let op = pi - port as usize + hop.port as usize;
                let oi = op * self.fab.vcs + hop.vc as usize;
                prefetch(&self.fab.ports, op);
                self.fab.credits.prefetch(oi);
                self.fab.outq.prefetch(oi);
                if R::PREDICTION_IS_ROUTE {
                    HopHint::new(pkt, hop)
                } else {
                    HopHint::NONE
                }
            }
            _ => HopHint::NONE,
        }
    }

    /// A port's line, VC queue states and credit states.
    #[inline(always)]
    fn prefetch_port(&self, pi: usize) {
        prefetch(&self.fab.ports, pi);
        self.fab.outq.prefetch(pi * self.fab.vcs);
        self.fab.credits.prefetch(pi * self.fab.vcs);
    }
}

#[cfg(test)]
mod tests {
    use super::HopHint;
    use crate::routing::Hop;

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
}
