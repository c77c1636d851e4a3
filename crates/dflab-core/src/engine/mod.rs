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

mod calendar;
mod check;
mod queue;
mod sim;
mod wheel;

pub use queue::{Event, EventQueue};
pub use sim::{simulate, SimResult, Simulation};
