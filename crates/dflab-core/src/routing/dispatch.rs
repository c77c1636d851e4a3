//! Static dispatch over the built-in routings.
//!
//! The engine asks for a route on every hop. Through `Box<dyn Routing>` that is a virtual call,
//! and the `RouterView` it takes by reference must be written to the stack first; callgrind
//! put the two at about 40 instructions per hop, a third of MIN's routing cost. `AnyRouting`
//! holds the built-in algorithms by value, so the call is a `match` whose arms the compiler
//! may inline (and then keep the view in registers, dropping the fields an algorithm does not
//! read). Routings built elsewhere (tests inject instrumented ones) go in `Custom`.

use super::{
    minimal::Minimal, par::Par, q_adaptive::QAdaptive, q_routing::QRouting, ugal::Ugal, ugal_global::UgalGlobal,
    ugal_l::UgalL, valiant::Valiant, Feedback, Hop, Rng, RouterView, Routing,
};
use crate::network::Packet;
use crate::topology::Topology;
use crate::units::Time;

///
/// `repr(u8)` gives the enum an explicit tag byte: the dispatch `match` reads it directly
/// instead of decoding a niche in one variant's fields (three instructions fewer per route).
#[repr(u8)]
pub enum AnyRouting {
    Minimal(Minimal),
    Valiant(Valiant),
    Ugal(Ugal),
    UgalL(UgalL),
    UgalGlobal(UgalGlobal),
    Par(Par),
    QAdaptive(QAdaptive),
    QRouting(QRouting),
    /// Any other implementation of [`Routing`].
    Custom(Box<dyn Routing>),
}

/// `each!(self, r => expr)`: evaluate `expr` with `r` bound to the algorithm inside.
macro_rules! each {
    ($value:expr, $r:ident => $e:expr) => {
        match $value {
            AnyRouting::Minimal($r) => $e,
            AnyRouting::Valiant($r) => $e,
            AnyRouting::Ugal($r) => $e,
            AnyRouting::UgalL($r) => $e,
            AnyRouting::UgalGlobal($r) => $e,
            AnyRouting::Par($r) => $e,
            AnyRouting::QAdaptive($r) => $e,
            AnyRouting::QRouting($r) => $e,
            AnyRouting::Custom($r) => $e,
        }
    };
}

impl Routing for AnyRouting {
    fn vcs(&self) -> usize {
        each!(self, r => r.vcs())
    }

    fn max_hops(&self) -> u32 {
        each!(self, r => r.max_hops())
    }

    #[inline]
    fn route(&mut self, view: &RouterView, pkt: &mut Packet, rng: &mut Rng) -> Hop {
        each!(self, r => r.route(view, pkt, rng))
    }

    #[inline(always)]
    fn route_without_view(&self, topo: &Topology, router: u32, in_port: u16, pkt: &mut Packet) -> Option<Hop> {
        each!(self, r => r.route_without_view(topo, router, in_port, pkt))
    }

    fn wants_feedback(&self) -> bool {
        each!(self, r => r.wants_feedback())
    }

    #[inline]
    fn feedback(&mut self, view: &RouterView, pkt: &Packet) -> Option<Feedback> {
        each!(self, r => r.feedback(view, pkt))
    }

    #[inline]
    fn on_feedback(&mut self, router: u32, port: u16, fb: &Feedback, now: Time) {
        each!(self, r => r.on_feedback(router, port, fb, now))
    }
}

macro_rules! from_algorithm {
    ($($variant:ident),*) => {
        $(impl From<$variant> for AnyRouting {
            fn from(r: $variant) -> AnyRouting {
                AnyRouting::$variant(r)
            }
        })*
    };
}

from_algorithm!(Minimal, Valiant, Ugal, UgalL, UgalGlobal, Par, QAdaptive, QRouting);

impl From<Box<dyn Routing>> for AnyRouting {
    fn from(r: Box<dyn Routing>) -> AnyRouting {
        AnyRouting::Custom(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::testkit::{walk, Net};
    use crate::routing::{Algorithm, Rng};

    /// On one link per group pair, the routings that read no congestion after their source router
    /// answer every later hop without a view, except PAR's second decision (`walk` checks each
    /// answer against `route`).
    #[test]
    fn later_hops_need_no_view() {
        use rand::SeedableRng;
        let net = Net::new(4, 8, 4, 1);
        let topo = &net.topo;
        for name in ["MIN", "VALn", "VALg", "UGALg", "UGALn", "UGAL-L", "UGAL-G", "PAR"] {
            let mut alg = Algorithm::parse(name).unwrap().build(topo);
            let mut rng = Rng::seed_from_u64(3);
            let mut answered = 0;
            for (src, dst) in net.sample_pairs(300, 4) {
                let mut pkt = net.packet(src, dst);
                let (mut router, mut in_port) = (topo.router_of_node(src), topo.host_port_of_node(src));
                loop {
                    let at_source = topo.is_host_port(in_port) && pkt.hops == 0;
                    // PAR's unsure phase outside the destination group: the second decision.
                    let second =
                        name == "PAR" && pkt.phase == 3 && topo.group_of(router) != topo.group_of(pkt.dst_router);
                    let quick = alg.route_without_view(topo, router, in_port, &mut pkt.clone());
                    assert_eq!(quick.is_some(), name == "MIN" || !(at_source || second), "{name} at router {router}");
                    answered += quick.is_some() as u32;
                    let hop = alg.route(&net.view(router, in_port), &mut pkt, &mut rng);
                    if topo.is_host_port(hop.port) {
                        break;
                    }
                    (router, in_port) = topo.peer(router, hop.port).unwrap();
                    pkt.hops += 1;
                }
            }
            assert!(answered >= 300, "{name}: {answered}");
        }
    }

    /// The enum routes exactly like the algorithm inside, boxed or not.
    #[test]
    fn dispatch_is_transparent() {
        let net = Net::new(2, 4, 2, 1);
        for name in ["MIN", "VALn", "UGALg", "PAR", "Q-adaptive"] {
            let alg = Algorithm::parse(name).unwrap();
            let mut direct = alg.build(&net.topo);
            let mut boxed = AnyRouting::Custom(Box::new(alg.build(&net.topo)));
            for (src, dst) in net.sample_pairs(200, 3) {
                assert_eq!(walk(&net, &mut direct, src, dst, 11), walk(&net, &mut boxed, src, dst, 11), "{name}");
            }
        }
    }
}
