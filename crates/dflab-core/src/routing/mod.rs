//! Routing algorithms: one type per algorithm behind the [`Routing`] trait, built from the
//! registry in [`Algorithm`]. A routing sees only what a router can see ([`RouterView`]: its
//! own output-queue occupancy and used credits) plus the packet header it may write.
//! Per-router state (tables, counters) lives inside the routing value, indexed by router.

pub mod adaptive;
pub mod dispatch;
pub mod feedback;
pub mod minimal;
pub mod par;
pub mod paths;
pub mod q_adaptive;
pub mod q_routing;
pub mod q_table;
pub mod ugal;
pub mod ugal_global;
pub mod ugal_l;
pub mod valiant;

use rand_xoshiro::Xoshiro256PlusPlus;

use crate::config::RoutingConfig;
use crate::error::{Error, Result};
use crate::network::{CreditLedger, Packet};
use crate::topology::Topology;
use crate::units::Time;

pub use dispatch::AnyRouting;
pub use feedback::Feedback;

pub type Rng = Xoshiro256PlusPlus;

/// The next hop: an output port of the current router and the VC on the next link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hop {
    pub port: u16,
    pub vc: u8,
}

/// What a router knows when it routes the packet at the head of one of its input VCs.
/// The congestion state is reached only through the methods, so the engine may change its
/// memory layout freely.
pub struct RouterView<'a> {
    pub topo: &'a Topology,
    pub router: u32,
    pub group: u32,
    /// Index of the router inside its group.
    pub index: u32,
    pub in_port: u16,
    pub now: Time,
    pub vcs: usize,
    /// Flits in output buffers (including packets crossing the crossbar) and free downstream
    /// credits (with returns still in flight), per (router, port, VC).
    credits: &'a CreditLedger,
}

impl<'a> RouterView<'a> {
    /// `credits` covers the whole network, indexed `(router*radix + port)*vcs + vc`.
    pub fn new(
        topo: &'a Topology,
        router: u32,
        in_port: u16,
        now: Time,
        vcs: usize,
        credits: &'a CreditLedger,
    ) -> RouterView<'a> {
        RouterView {
            topo,
            router,
            group: topo.group_of(router),
            index: topo.index_in_group(router),
            in_port,
            now,
            vcs,
            credits,
        }
    }

    #[inline]
    fn at(&self, router: u32, port: u16, vc: usize) -> u32 {
        let i = (router as usize * self.topo.radix + port as usize) * self.vcs + vc;
        self.credits.occupancy(i, self.now)
    }

    /// Congestion signal of one output VC of this router: output-buffer flits plus used credits
    /// (qadaptive-reference.md §2, `adp_select_port`).
    #[inline]
    pub fn occupancy(&self, port: u16, vc: usize) -> u32 {
        self.at(self.router, port, vc)
    }

    /// The same summed over every VC of the port.
    #[inline]
    pub fn port_occupancy(&self, port: u16) -> u32 {
        (0..self.vcs).map(|vc| self.occupancy(port, vc)).sum()
    }

    /// The same summed over the given VCs of the port.
    #[inline]
    pub fn port_occupancy_vcs(&self, port: u16, vcs: &[usize]) -> u32 {
        vcs.iter().map(|&vc| self.occupancy(port, vc)).sum()
    }

    /// **Oracle only.** The congestion signal of a port of *another* router, read instantly.
    /// No real router can do this; only algorithms named as oracles (UGAL-G) may call it.
    #[inline]
    pub fn remote_occupancy(&self, router: u32, port: u16, vc: usize) -> u32 {
        self.at(router, port, vc)
    }

    #[inline]
    pub fn is_source_router(&self) -> bool {
        self.topo.is_host_port(self.in_port)
    }
}

pub trait Routing: Send {
    /// Number of VCs the algorithm needs for deadlock freedom.
    fn vcs(&self) -> usize;
    /// Upper bound on router-to-router hops; the engine asserts it on every hop.
    fn max_hops(&self) -> u32;
    /// Choose the output port and VC for `pkt` at the head of an input VC of `view.router`.
    fn route(&mut self, view: &RouterView, pkt: &mut Packet, rng: &mut Rng) -> Hop;

    /// The hop [`Routing::route`] would choose for `pkt` at `router` (arrived on `in_port`) when
    /// the algorithm can tell it from the packet and the topology's first-port table alone: no
    /// congestion read, no random draw. The engine asks this first on every hop and builds a
    /// [`RouterView`] only on None, so an answer must equal `route`'s, with the same writes to
    /// `pkt`, and None must leave `pkt` unchanged. The default always answers None.
    #[inline]
    fn route_without_view(&self, _topo: &Topology, _router: u32, _in_port: u16, _pkt: &mut Packet) -> Option<Hop> {
        None
    }

    /// Learning routings return true to receive the feedback hooks below (the engine skips
    /// them otherwise, so they cost nothing to the others).
    fn wants_feedback(&self) -> bool {
        false
    }

    /// `pkt`, which arrived from another router, leaves `view.router`'s input buffer now. The
    /// returned feedback travels back to the upstream router (see [`feedback`]).
    fn feedback(&mut self, _view: &RouterView, _pkt: &Packet) -> Option<Feedback> {
        None
    }

    /// Feedback sent by the downstream router arrives at `router` on its output `port`.
    fn on_feedback(&mut self, _router: u32, _port: u16, _fb: &Feedback, _now: Time) {}
}

/// Registry of the algorithms dflab implements, by their papers' names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    Min,
    ValG,
    ValN,
    /// UGALg: UGAL with Valiant to a group (reference `ugal-g` / `ugal-3vc`).
    UgalGroup,
    /// UGALn: UGAL with Valiant to a router (reference `ugal-n` / `ugal-4vc`).
    UgalNode,
    /// UGAL-L: hop-weighted UGAL with local information (ICS'24 Algorithm 1).
    UgalLocal,
    /// UGAL-G: UGAL with global information, an oracle.
    UgalGlobal,
    /// PAR: progressive adaptive routing.
    Par,
    /// Q-adaptive (HPDC'21): two-level Q-tables, decisions at the source and the first
    /// intermediate-group router.
    QAdaptive,
    /// Q-routing (Boyan & Littman) with the `max_q` hop limit.
    QRouting,
}

pub const ALGORITHM_NAMES: &[&str] =
    &["MIN", "VALg", "VALn", "UGALg", "UGALn", "UGAL-L", "UGAL-G", "PAR", "Q-adaptive", "Q-routing"];

impl Algorithm {
    /// Case-insensitive, as users type them. Beware: the Q-adaptive reference code calls UGALg
    /// `ugal-g`; here `UGAL-G` (any case) is the global-information oracle, and the reference's
    /// UGALg is `UGALg` or its other reference name `ugal-3vc`.
    pub fn parse(name: &str) -> Result<Algorithm> {
        match name.trim().to_ascii_lowercase().as_str() {
            "min" | "minimal" => Ok(Algorithm::Min),
            "valg" => Ok(Algorithm::ValG),
            "valn" | "val" | "valiant" => Ok(Algorithm::ValN),
            "ugalg" | "ugal-3vc" => Ok(Algorithm::UgalGroup),
            "ugaln" | "ugal-n" | "ugal-4vc" => Ok(Algorithm::UgalNode),
            "ugal-l" => Ok(Algorithm::UgalLocal),
            "ugal-g" => Ok(Algorithm::UgalGlobal),
            "par" => Ok(Algorithm::Par),
            "q-adaptive" | "qadaptive" => Ok(Algorithm::QAdaptive),
            "q-routing" | "qrouting" => Ok(Algorithm::QRouting),
            _ => Err(Error::config(
                "routing.algorithm",
                format!("'{name}' is not allowed; allowed: {}", ALGORITHM_NAMES.join(", ")),
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Min => "MIN",
            Algorithm::ValG => "VALg",
            Algorithm::ValN => "VALn",
            Algorithm::UgalGroup => "UGALg",
            Algorithm::UgalNode => "UGALn",
            Algorithm::UgalLocal => "UGAL-L",
            Algorithm::UgalGlobal => "UGAL-G",
            Algorithm::Par => "PAR",
            Algorithm::QAdaptive => "Q-adaptive",
            Algorithm::QRouting => "Q-routing",
        }
    }

    /// The algorithm with default knobs (`RoutingConfig::default()`).
    pub fn build(self, topo: &Topology) -> AnyRouting {
        self.build_with(topo, &RoutingConfig::default())
    }

    /// The algorithm as the experiment configures it: routing knobs, and for the learning
    /// routings the network's link latencies (initial Q values). What the engine calls.
    pub fn build_for(self, topo: &Topology, exp: &crate::config::Experiment) -> AnyRouting {
        match self {
            Algorithm::QAdaptive | Algorithm::QRouting => self.build_learning(topo, &exp.routing, &exp.network),
            _ => self.build_with(topo, &exp.routing),
        }
    }

    fn build_learning(self, topo: &Topology, cfg: &RoutingConfig, net: &crate::config::NetworkConfig) -> AnyRouting {
        let params = q_table::QParams::from_config(cfg, net);
        if self == Algorithm::QAdaptive {
            q_adaptive::QAdaptive::new(topo, params).into()
        } else {
            q_routing::QRouting::new(topo, params).into()
        }
    }

    /// The algorithm with the knobs of `cfg` (`cfg.algorithm` is ignored: `self` is the
    /// algorithm). `cfg` must have passed `Experiment::validate`.
    pub fn build_with(self, topo: &Topology, cfg: &RoutingConfig) -> AnyRouting {
        let params = adaptive::Params::from_config(cfg);
        match self {
            Algorithm::Min => minimal::Minimal::new(topo).into(),
            Algorithm::ValG => valiant::Valiant::to_group(topo).into(),
            Algorithm::ValN => valiant::Valiant::to_router(topo).into(),
            Algorithm::UgalGroup => ugal::Ugal::to_group(params).into(),
            Algorithm::UgalNode => ugal::Ugal::to_router(params).into(),
            Algorithm::UgalLocal => ugal_l::UgalL::new(cfg).into(),
            Algorithm::UgalGlobal => ugal_global::UgalGlobal::new(topo, cfg).into(),
            Algorithm::Par => par::Par::new(params).into(),
            // Initial Q values come from the link latencies; `build_for` passes the experiment's
            // network, this path the default (HPDC'21) network.
            Algorithm::QAdaptive | Algorithm::QRouting => {
                self.build_learning(topo, cfg, &crate::config::NetworkConfig::default())
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod testkit;

#[cfg(test)]
mod registry_tests {
    use super::*;

    #[test]
    fn every_registered_name_parses_back_case_insensitively() {
        for &name in ALGORITHM_NAMES {
            assert_eq!(Algorithm::parse(name).unwrap().name(), name);
            assert_eq!(Algorithm::parse(&name.to_uppercase()).unwrap().name(), name);
            assert_eq!(Algorithm::parse(&format!(" {} ", name.to_lowercase())).unwrap().name(), name);
        }
    }

    #[test]
    fn reference_aliases_and_the_ugal_g_pitfall() {
        // [D]'s names for UGALg/UGALn; [M]'s `ugal-n`. `ugal-g` is the oracle here, not [M]'s UGALg.
        assert_eq!(Algorithm::parse("ugal-3vc").unwrap(), Algorithm::UgalGroup);
        assert_eq!(Algorithm::parse("ugal-4vc").unwrap(), Algorithm::UgalNode);
        assert_eq!(Algorithm::parse("ugal-n").unwrap(), Algorithm::UgalNode);
        assert_eq!(Algorithm::parse("UGAL-G").unwrap(), Algorithm::UgalGlobal);
        assert_eq!(Algorithm::parse("UGALg").unwrap(), Algorithm::UgalGroup);
        let err = Algorithm::parse("ugal").unwrap_err().to_string();
        assert!(err.starts_with("routing.algorithm") && err.contains("UGAL-L"), "{err}");
    }
}
