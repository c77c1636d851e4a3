//! The motif library: application communication patterns as programs of [`Op`]s, one
//! iteration at a time, after SST Ember's motifs (the SC'22 interference study's set and a few
//! generic ones). Each motif is one file; its parameters are a typed struct whose defaults are
//! the reference run's (`../shared/reference/workloads.md` §3.2, QR §4.3), given in the job's
//! `params` table.

pub mod grid;
pub mod totals;

use crate::workload::mpi::op::Op;

/// The 350 µs every Ember motif of the reference computes before its first iteration
/// (`wait2start`): the default of `workload.jobs[].wait2start_us`.
pub const WAIT2START_US: f64 = 350.0;

/// An application's communication pattern (see the module comment).
pub trait Motif: Send + Sync {
    /// The motif's name as written in `workload.jobs[].motif`.
    fn name(&self) -> &'static str;

    /// Iterations each rank runs (each one is a row of the per-iteration record).
    fn iterations(&self) -> u32;

    /// Rank `rank`'s operations before its first iteration (not part of any iteration's record),
    /// appended to `out`, after the job's `wait2start_us` compute (which the MPI layer adds):
    /// none by default.
    fn prologue(&self, _rank: u32, _out: &mut Vec<Op>) {}

    /// Rank `rank`'s operations in iteration `it` (0-based), appended to `out`.
    fn iteration(&self, rank: u32, it: u32, out: &mut Vec<Op>);
}
