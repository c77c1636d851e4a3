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

pub use config::Experiment;
pub use engine::{simulate, SimResult};
pub use error::{Error, Result};
