//! All-to-all: every iteration, each rank sends `bytes` to every other rank with Firefly's
//! shifted pairwise exchange (an `Alltoallv` over all ranks with equal blocks:
//! [`crate::workload::mpi::collective`]), after an optional computation. A generic motif (Ember's
//! `Alltoall`), not one of the SC'22 study's applications.
//!
//! ⚠ Decision: sized per peer in bytes; the rank's own block (a local copy) sends nothing.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::units::{Time, PS_PER_US};
use crate::workload::mpi::op::{Comm, Op};

use super::{duration_ps, Motif, MotifParams};

/// Parameters of `alltoall` (pairwise exchange).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct AlltoallParams {
    /// Iterations (one all-to-all each).
    pub iterations: u32,
    /// Payload each rank sends to each other rank, bytes.
    pub bytes: u64,
    /// Computation before each all-to-all, µs (0: none).
    pub compute_us: f64,
}

impl Default for AlltoallParams {
    fn default() -> Self {
        AlltoallParams { iterations: 1, bytes: 1024, compute_us: 0.0 }
    }
}

impl MotifParams for AlltoallParams {
    fn build(self, ranks: u32, field: &str) -> Result<Box<dyn Motif>> {
        let compute = duration_ps(self.compute_us, PS_PER_US, field, "compute_us")?;
        let send = Op::Alltoallv { comm: Comm::world(ranks), send_bytes: vec![self.bytes; ranks as usize].into() };
        Ok(Box::new(Alltoall { iterations: self.iterations, compute, send }))
    }
}

pub struct Alltoall {
    iterations: u32,
    compute: Time,
    /// The collective every rank enters (the same for all).
    send: Op,
}

impl Motif for Alltoall {
    fn name(&self) -> &'static str {
        "alltoall"
    }

    fn iterations(&self) -> u32 {
        self.iterations
    }

    fn iteration(&self, _rank: u32, _it: u32, out: &mut Vec<Op>) {
        if self.compute > 0 {
            out.push(Op::Compute { ps: self.compute });
        }
        out.push(self.send.clone());
    }
}
