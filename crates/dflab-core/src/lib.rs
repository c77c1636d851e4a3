//! dflab-core: the engine of dflab, a Dragonfly interconnect simulator and routing laboratory.
//!
//! Layers (design.md §1): [`topology`] (geometry, wiring) → [`network`] (packets, buffers) →
//! [`routing`] (one algorithm per file behind a trait) → [`traffic`] (patterns, injection) →
//! [`engine`] (event loop, router model, checks) → [`stats`]. [`config`] is the experiment
//! description; [`info`] summarises a topology for users; [`hostclock`] measures the core
//! clock for the benchmark.

pub mod config;
pub mod engine;
pub mod error;
pub(crate) mod fastdiv;
pub mod hostclock;
pub mod info;
pub mod network;
pub(crate) mod prefetch;
pub mod routing;
pub mod stats;
pub mod topology;
pub mod traffic;
pub mod units;
pub mod workload;

/// Version of the model's semantics: bumped whenever a change of the engine can change the
/// results of an existing experiment (never for a refactoring or a speed-up, which the identity
/// fingerprints of `tests/identity` prove result-neutral). Recorded with every result; result
/// stores refuse to mix points of different versions.
///
/// 2: simultaneous events in the canonical order of `engine/partition.rs` (events over global
/// links delivered at window barriers), a resumed Bernoulli round on a slot boundary files its
/// next packet from that slot.
/// 3: DGB's and EDGB's net occupancies leave out a global link's credits while they travel
/// to the window's barrier; DGB samples the packets that go minimal undecided and explores
/// a global minimal first port against a local buffer, as the fork does.
/// 4: DGB and EDGB as the fork: minimal packets share the Valiant packets' VC in the source
/// group, the estimates leave out the flits sent within twice the link's latency, and a
/// shared first port gives the other class a residual from the second router.
pub const ENGINE_SEMANTICS: u32 = 4;

pub use config::Experiment;
pub use engine::{simulate, simulate_observed, simulate_partitioned, SimResult};
pub use error::{Error, Result};
