//! Stencil5D, a 5D nearest-neighbour stencil: the SC'22 toolkit's Ember `StencilNd` motif
//! (`emberstencilNd.cc`, QR §4.3) with the paper's §IV parameters (Table I: 9,833.95 MB, peak
//! 5 × 2.8 MB). Any number of dimensions works when the grid is given.
//!
//! The ranks form the grid `grid` (first dimension fastest, not periodic): [2,2,3,4,11] at
//! 528 ranks, [3,3,3,3,3] at 243. One iteration: compute (if any); post receives from the +
//! neighbours (dimension order), blocking sends to the + neighbours; the same with the −
//! neighbours; wait for all receives. Every message carries `fields_per_cell · datatype_width`
//! bytes (350,000 × 8 = 2.8 MB). Tag 0.
//!
//! ⚠ Decisions:
//! * an empty `grid` (the default) derives a 5D grid from the rank count: the five extents with
//!   the least sum of squares, ascending ([`balanced`]), which gives the reference's two grids;
//! * the compute is emitted only when `compute_ns > 0` (the reference has none); Ember's
//!   `doreduce` (off in the reference) is not offered.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::units::{Time, PS_PER_NS};
use crate::workload::mpi::op::Op;

use super::grid::{balanced, Grid};
use super::{duration_ps, param_error, Motif, MotifParams};

/// Parameters of `stencil5d` (Ember `StencilNd`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Stencil5dParams {
    /// Iterations (one exchange with every neighbour each).
    pub iterations: u32,
    /// Process grid extents, first dimension fastest; their product must be the rank count
    /// (empty: the most balanced 5D grid, [2,2,3,4,11] at 528 ranks).
    pub grid: Vec<u32>,
    /// Fields per message.
    pub fields_per_cell: u64,
    /// Bytes per field.
    pub datatype_width: u64,
    /// Computation before each exchange, ns (0: none).
    pub compute_ns: f64,
}

impl Default for Stencil5dParams {
    fn default() -> Self {
        Stencil5dParams {
            iterations: 1,
            grid: Vec::new(),
            fields_per_cell: 350_000,
            datatype_width: 8,
            compute_ns: 0.0,
        }
    }
}

impl MotifParams for Stencil5dParams {
    fn build(self, ranks: u32, field: &str) -> Result<Box<dyn Motif>> {
        let compute = duration_ps(self.compute_ns, PS_PER_NS, field, "compute_ns")?;
        let dims = if self.grid.is_empty() { balanced(ranks, 5) } else { self.grid.clone() };
        let grid = Grid::new(dims);
        if grid.size() != ranks as u64 {
            return Err(param_error(
                field,
                "grid",
                format!(
                    "{:?} holds {} ranks, not the job's {ranks}; allowed: extents whose product is {ranks}, or []",
                    grid.dims,
                    grid.size()
                ),
            ));
        }
        Ok(Box::new(Stencil5d { bytes: self.fields_per_cell * self.datatype_width, grid, compute, p: self }))
    }
}

pub struct Stencil5d {
    p: Stencil5dParams,
    pub grid: Grid,
    bytes: u64,
    compute: Time,
}

impl Motif for Stencil5d {
    fn name(&self) -> &'static str {
        "stencil5d"
    }

    fn iterations(&self) -> u32 {
        self.p.iterations
    }

    fn iteration(&self, rank: u32, _it: u32, out: &mut Vec<Op>) {
        if self.compute > 0 {
            out.push(Op::Compute { ps: self.compute });
        }
        let bytes = self.bytes;
        let mut any = false;
        for step in [1, -1] {
            let peers: Vec<u32> = (0..self.grid.dims.len()).filter_map(|d| self.grid.shift(rank, d, step)).collect();
            out.extend(peers.iter().map(|&from| Op::Irecv { from, bytes, tag: 0 }));
            out.extend(peers.iter().map(|&to| Op::Send { to, bytes, tag: 0 }));
            any |= !peers.is_empty();
        }
        if any {
            out.push(Op::WaitAll);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_rank_talks_to_its_five_plus_neighbours_at_528() {
        let m = Stencil5dParams::default().build(528, "j").unwrap();
        let mut out = Vec::new();
        m.iteration(0, 0, &mut out);
        // Strides of [2,2,3,4,11]: 1, 2, 4, 12, 48.
        let sends: Vec<u32> =
            out.iter().filter_map(|o| if let Op::Send { to, .. } = o { Some(*to) } else { None }).collect();
        assert_eq!(sends, vec![1, 2, 4, 12, 48]);
        assert_eq!(out.len(), 11);
    }

    #[test]
    fn grid_must_hold_the_ranks() {
        assert!(Stencil5dParams::default().build(243, "j").is_ok());
        let p = Stencil5dParams { grid: vec![3, 3], ..Stencil5dParams::default() };
        let e = p.build(10, "workload.jobs[0]").err().unwrap();
        assert!(e.to_string().starts_with("workload.jobs[0].params.grid"), "{e}");
    }
}
