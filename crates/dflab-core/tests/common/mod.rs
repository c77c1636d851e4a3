//! Shared helpers for the engine's integration tests.
#![allow(dead_code)]

use dflab_core::config::Arrangement;
use dflab_core::{Experiment, SimResult};

/// The HPDC'21 setup (`qadaptive-1056`) with the given routing, traffic and load, invariant
/// checks on, and short windows (the tests' "reduced size" is in time, not in nodes).
pub fn hpdc(routing: &str, pattern: &str, load: f64, warmup_us: f64, measure_us: f64) -> Experiment {
    let mut e = Experiment::default();
    e.routing.algorithm = routing.into();
    e.traffic.pattern = pattern.into();
    e.traffic.load = load;
    e.run.warmup_us = warmup_us;
    e.run.measure_us = measure_us;
    e.run.check = true;
    e
}

pub fn run(e: &Experiment) -> SimResult {
    e.validate().expect("valid experiment");
    dflab_core::simulate(e).unwrap_or_else(|err| panic!("simulation failed: {err}"))
}

/// A small `dfly(p, a, h)` with `l` links per group pair, invariant checks on, and the given
/// run windows (µs).
pub fn small(p: usize, a: usize, h: usize, l: usize, arr: Arrangement, warmup_us: f64, measure_us: f64) -> Experiment {
    let mut e = Experiment::default();
    e.topology.p = p;
    e.topology.a = a;
    e.topology.h = h;
    e.topology.links_per_pair = Some(l);
    e.topology.arrangement = arr;
    e.run.warmup_us = warmup_us;
    e.run.measure_us = measure_us;
    e.run.check = true;
    e
}
