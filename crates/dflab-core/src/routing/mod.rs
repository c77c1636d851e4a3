//! Routing algorithms: one type per algorithm behind the [`Routing`] trait, built from the
//! registry in [`Algorithm`]. A routing sees only what a router can see ([`RouterView`]: its
//! own output-queue occupancy and used credits) plus the packet header it may write.
//! Per-router state (tables, counters) lives inside the routing value, indexed by router.

pub mod minimal;
pub mod paths;
pub mod valiant;

use rand_xoshiro::Xoshiro256PlusPlus;

use crate::error::{Error, Result};
use crate::network::{CreditLedger, Packet};
use crate::topology::Topology;
use crate::units::Time;

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
    /// Flits in output buffers (including packets crossing the crossbar), per (router, port, VC).
    out_occ: &'a [u32],
    /// Free downstream credits (flits), per (router, port, VC), with returns still in flight.
    credits: &'a CreditLedger,
}

impl<'a> RouterView<'a> {
    /// `out_occ` and `credits` cover the whole network, indexed `(router*radix + port)*vcs + vc`.
    pub fn new(
        topo: &'a Topology,
        router: u32,
        in_port: u16,
        now: Time,
        vcs: usize,
        out_occ: &'a [u32],
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
            out_occ,
            credits,
        }
    }

    #[inline]
    fn at(&self, router: u32, port: u16, vc: usize) -> u32 {
        let i = (router as usize * self.topo.radix + port as usize) * self.vcs + vc;
        // Ejection ports keep full credits, so their used credits are 0.
        self.out_occ[i] + (self.credits.capacity() - self.credits.free_at(i, self.now))
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
}

/// Registry of the algorithms dflab implements, by their papers' names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    Min,
    ValG,
    ValN,
}

pub const ALGORITHM_NAMES: &[&str] = &["MIN", "VALg", "VALn"];

impl Algorithm {
    /// Case-insensitive, as users type them.
    pub fn parse(name: &str) -> Result<Algorithm> {
        match name.trim().to_ascii_lowercase().as_str() {
            "min" | "minimal" => Ok(Algorithm::Min),
            "valg" => Ok(Algorithm::ValG),
            "valn" | "val" | "valiant" => Ok(Algorithm::ValN),
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
        }
    }

    pub fn build(self, topo: &Topology) -> Box<dyn Routing> {
        match self {
            Algorithm::Min => Box::new(minimal::Minimal::new(topo)),
            Algorithm::ValG => Box::new(valiant::Valiant::to_group(topo)),
            Algorithm::ValN => Box::new(valiant::Valiant::to_router(topo)),
        }
    }
}

#[cfg(test)]
pub(crate) mod testkit;
