//! Halo2D, a 5-point 2D stencil's halo exchange (after SST Ember's `Halo2D`), usable at any
//! rank count; not one of the SC'22 study's applications. The ranks form a `pex × pey` grid (x
//! fastest), by default the most square one ([`near_square`]). Every iteration: compute (if
//! any); then for x and y in turn: post receives from the − and + neighbours, blocking sends to
//! them, wait. Every message carries `bytes`. Tag 0.
//!
//! ⚠ Decisions: not periodic (like Halo3D); Ember's Halo2D posts x and y together and sizes
//! faces from a local grid — here one size for every face, the same structure as Halo3D.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::units::{Time, PS_PER_NS};
use crate::workload::mpi::op::Op;

use super::grid::{grid_2d, Grid};
use super::{duration_ps, Motif, MotifParams};

/// Parameters of `halo2d`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Halo2dParams {
    /// Iterations (one exchange along each axis each).
    pub iterations: u32,
    /// Payload of each face message, bytes.
    pub bytes: u64,
    /// Process grid extent along x (0 for both: the most square grid of the rank count).
    pub pex: u32,
    /// Process grid extent along y.
    pub pey: u32,
    /// Computation before each exchange, ns (0: none).
    pub compute_ns: f64,
}

impl Default for Halo2dParams {
    fn default() -> Self {
        Halo2dParams { iterations: 1, bytes: 8192, pex: 0, pey: 0, compute_ns: 0.0 }
    }
}

impl MotifParams for Halo2dParams {
    fn build(self, ranks: u32, field: &str) -> Result<Box<dyn Motif>> {
        let compute = duration_ps(self.compute_ns, PS_PER_NS, field, "compute_ns")?;
        let (x, y) = grid_2d(self.pex, self.pey, ranks, field)?;
        Ok(Box::new(Halo2d { grid: Grid::new(vec![x, y]), compute, p: self }))
    }
}

pub struct Halo2d {
    p: Halo2dParams,
    grid: Grid,
    compute: Time,
}

impl Motif for Halo2d {
    fn name(&self) -> &'static str {
        "halo2d"
    }

    fn iterations(&self) -> u32 {
        self.p.iterations
    }

    fn iteration(&self, rank: u32, _it: u32, out: &mut Vec<Op>) {
        if self.compute > 0 {
            out.push(Op::Compute { ps: self.compute });
        }
        let bytes = self.p.bytes;
        for dim in 0..2 {
            let peers: Vec<u32> = [-1, 1].iter().filter_map(|&s| self.grid.shift(rank, dim, s)).collect();
            out.extend(peers.iter().map(|&from| Op::Irecv { from, bytes, tag: 0 }));
            out.extend(peers.iter().map(|&to| Op::Send { to, bytes, tag: 0 }));
            if !peers.is_empty() {
                out.push(Op::WaitAll);
            }
        }
    }
}
