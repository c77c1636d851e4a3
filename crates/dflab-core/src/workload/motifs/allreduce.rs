//! Allreduce: SST Ember's `Allreduce` motif (`emberallreduce.cc` in the SC'22 toolkit, QR §4.3):
//! every iteration, compute (if any), then an allreduce over all ranks (Firefly's binary tree,
//! [`crate::workload::mpi::collective`]). The SC'22 study's CosmoFlow ([`super::cosmoflow`]) and
//! DL ([`super::dl`]) are this motif with their own defaults; `allreduce` itself is the generic
//! form, sized in bytes.
//!
//! ⚠ Decisions: Ember's `dobarrier` (off in the reference) is not offered; the compute is
//! emitted only when it is longer than 0.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::units::{Time, PS_PER_US};
use crate::workload::mpi::op::{Comm, Op};

use super::{duration_ps, Motif, MotifParams};

/// Parameters of `allreduce` (Ember `Allreduce`, sized in bytes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct AllreduceParams {
    /// Iterations (one allreduce each).
    pub iterations: u32,
    /// Payload reduced, bytes.
    pub bytes: u64,
    /// Computation before each allreduce, µs (0: none).
    pub compute_us: f64,
}

impl Default for AllreduceParams {
    fn default() -> Self {
        AllreduceParams { iterations: 1, bytes: 8, compute_us: 0.0 }
    }
}

impl MotifParams for AllreduceParams {
    fn build(self, ranks: u32, field: &str) -> Result<Box<dyn Motif>> {
        let compute = duration_ps(self.compute_us, PS_PER_US, field, "compute_us")?;
        Ok(Box::new(Allreduce::new("allreduce", ranks, self.iterations, self.bytes, compute)))
    }
}

/// An allreduce of `bytes` every iteration, after `compute` ps of computation.
pub struct Allreduce {
    name: &'static str,
    iterations: u32,
    bytes: u64,
    compute: Time,
    world: Comm,
}

impl Allreduce {
    pub fn new(name: &'static str, ranks: u32, iterations: u32, bytes: u64, compute: Time) -> Allreduce {
        Allreduce { name, iterations, bytes, compute, world: Comm::world(ranks) }
    }
}

impl Motif for Allreduce {
    fn name(&self) -> &'static str {
        self.name
    }

    fn iterations(&self) -> u32 {
        self.iterations
    }

    fn iteration(&self, _rank: u32, _it: u32, out: &mut Vec<Op>) {
        if self.compute > 0 {
            out.push(Op::Compute { ps: self.compute });
        }
        out.push(Op::Allreduce { comm: self.world.clone(), bytes: self.bytes });
    }
}
