//! The discrete-event engine: a packet-granular virtual cut-through model of SST/Merlin's
//! `hr_router` (qadaptive-reference.md §3.1, design.md §2).
//!
//! Per router hop a packet goes through:
//! 1. **arrival** in the input buffer of (port, VC); when it reaches the head, it is routed once;
//! 2. **crossbar**: LRU arbitration over (input port, VC) heads; a winner needs its input and
//!    output crossbar ports free and room for the whole packet in the output buffer of its VC.
//!    It then holds both crossbar ports for `flits × xbar time`, and its credits go back
//!    upstream (packet left the input buffer);
//! 3. **output**: round robin over the VCs whose head packet has downstream credits for all its
//!    flits; the port is busy for the serialisation time;
//! 4. **link**: the packet is available downstream `serialisation + output latency + link
//!    latency + input latency` after it starts (its tail has arrived: packet-granular VCT).
//!    Credits travel `output + link + input` latency and use no bandwidth.
//!
//! Zero-load latency is therefore, for a path of router hops with link classes c_i,
//! `[n·s_host + L_host + in] + Σ_i [n·x + n·s_ci + out + L_ci + in] + [n·x + n·s_host + out + L_host]`
//! (n flits, s = per-flit serialisation, x = per-flit crossbar time). Tested in `tests/`.
//!
//! Deviations from SST, all at most a fraction of a cycle per hop: SST clocks the crossbar at
//! `xbar_bw / flit` and wakes an idle output one flit-time after a packet reaches it; dflab
//! arbitrates at the event time and charges the full serialisation of the packet on the link
//! (identical for the single-flit packets of the HPDC setup).

pub mod clock;
pub mod core;
pub mod event;
pub mod footprint;
pub mod observe;
pub mod partition;
pub mod prefetch;
pub mod queue;
pub mod sim;
mod steady;
pub mod timing;

mod check;
mod wheel;

pub use event::Event;
pub use queue::EventQueue;
pub use sim::{SimResult, Simulation};

use crate::config::Experiment;
use crate::error::Result;
use crate::routing::registry::Visit;
use crate::routing::Routing;
use crate::topology::Topology;

/// Independent RNG streams: the same experiment seed gives every router and node its own stream,
/// so results do not depend on how events interleave. Kinds: 1 routers, 2 nodes, 3 patterns.
pub(crate) fn stream_seed(seed: u64, kind: u64, id: u64) -> u64 {
    let mut z = seed ^ kind.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ id.wrapping_mul(0xD1B5_4A32_D192_ED03);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Run one experiment: its routing, built from the registry, on its topology under its
/// synthetic traffic.
pub fn simulate(cfg: &Experiment) -> Result<SimResult> {
    simulate_partitioned(cfg, 1)
}

/// [`simulate`] in `partitions` logical partitions (see [`partition`]): the same results for
/// every count, or an error naming why the experiment must run in one.
pub fn simulate_partitioned(cfg: &Experiment, partitions: usize) -> Result<SimResult> {
    simulate_observed(cfg, partitions, None)
}

/// [`simulate_partitioned`] with an observer of its progress that may stop it
/// ([`observe::Observer`]).
pub fn simulate_observed(
    cfg: &Experiment,
    partitions: usize,
    observer: Option<observe::Observer>,
) -> Result<SimResult> {
    cfg.validate()?;
    let topo = Topology::new(&cfg.topology)?;
    crate::routing::with_algorithm(&cfg.routing.algorithm, topo, cfg, Run { cfg, partitions, observer })
}

/// Send one packet per `(src, dst)` pair at time 0 through the otherwise empty network of `cfg`
/// (its routing, no generated traffic) and return them as delivered, with their delivery
/// times, in delivery order (see [`Simulation::trace`]).
pub fn trace(cfg: &Experiment, pairs: &[(u32, u32)]) -> Result<Vec<(crate::network::Packet, crate::units::Time)>> {
    cfg.validate()?;
    let topo = Topology::new(&cfg.topology)?;
    crate::routing::with_algorithm(&cfg.routing.algorithm, topo, cfg, Trace { cfg, pairs })
}

struct Trace<'a> {
    cfg: &'a Experiment,
    pairs: &'a [(u32, u32)],
}

impl Visit for Trace<'_> {
    type Output = Vec<(crate::network::Packet, crate::units::Time)>;

    fn visit<R: Routing>(self, routing: R, topo: Topology) -> Result<Self::Output> {
        Simulation::new(self.cfg, topo, routing)?.trace(self.pairs)
    }
}

/// The registry's visitor that runs the experiment with the routing it was given.
struct Run<'a> {
    cfg: &'a Experiment,
    partitions: usize,
    observer: Option<observe::Observer>,
}

impl Visit for Run<'_> {
    type Output = SimResult;

    fn visit<R: Routing>(self, routing: R, topo: Topology) -> Result<SimResult> {
        let sim = match &self.cfg.workload {
            Some(w) => {
                let mpi: Box<dyn crate::workload::Workload> =
                    Box::new(crate::workload::mpi::Mpi::new(self.cfg, &topo)?);
                let workload = match w.background {
                    crate::config::workload::Background::None => mpi,
                    _ => Box::new(crate::workload::background::WithBackground::new(self.cfg, &topo, mpi)?),
                };
                Simulation::with_workload(self.cfg, topo, routing, workload)?
            }
            None => Simulation::new(self.cfg, topo, routing)?,
        };
        sim.partitioned(self.partitions)?.observed(self.observer).run()
    }
}
