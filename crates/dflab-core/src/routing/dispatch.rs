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
    use crate::routing::Algorithm;

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
