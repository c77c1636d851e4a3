//! Halo3D, a 7-point 3D stencil's halo exchange: SST Ember's `Halo3D` motif (`emberhalo3d.cc`
//! in the SC'22 toolkit, QR §4.3) with the paper's §IV parameters (Table I: 47,769.10 MB,
//! peak 2 × 576 KB). Usable at any rank count.
//!
//! The ranks form a `pex × pey × pez` grid (x fastest, not periodic), by default Ember's
//! minimum-variance factorisation of the rank count ([`min_variance_3d`]: 11×8×6 at 528). One
//! iteration: compute (if any); then for x, y and z in turn: post receives from the − and +
//! neighbours, blocking sends to the − then the + neighbour, wait for the receives; then an
//! allreduce of one double if `reduce`. A face carries `fields_per_cell · datatype_width` bytes
//! times the local face area (`ny·nz` for x, `nx·nz` for y, `nx·ny` for z): 576,000 B in the
//! reference (`nx = ny = nz = 1`, 72,000 fields of 8 B). Tag 0.
//!
//! ⚠ Decisions:
//! * the default grid replicates Ember's rule including its integer truncation, which is not
//!   always the truly most cubic grid (16 ranks → 4×4×1, not 4×2×2); give `pex, pey, pez` to
//!   choose another;
//! * Ember waits on each receive in turn; here one `WaitAll` waits for them (the sends are
//!   blocking, so it waits for the same requests);
//! * the compute is emitted only when `compute_ns > 0` (the reference has none);
//! * Ember's `copytime` (0 in the reference) is not offered.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::units::{Time, PS_PER_NS};
use crate::workload::mpi::op::{Comm, Op};

use super::grid::{min_variance_3d, Grid};
use super::{duration_ps, param_error, Motif, MotifParams};

/// Parameters of `halo3d` (Ember `Halo3D`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Halo3dParams {
    /// Iterations (one exchange along each axis each).
    pub iterations: u32,
    /// Local cells along x.
    pub nx: u32,
    /// Local cells along y.
    pub ny: u32,
    /// Local cells along z.
    pub nz: u32,
    /// Fields per cell.
    pub fields_per_cell: u32,
    /// Bytes per field.
    pub datatype_width: u32,
    /// Process grid extent along x (0 for all three: Ember's minimum-variance factorisation).
    pub pex: u32,
    /// Process grid extent along y.
    pub pey: u32,
    /// Process grid extent along z.
    pub pez: u32,
    /// Computation before each exchange, ns (0: none).
    pub compute_ns: f64,
    /// End each iteration with an allreduce of one double.
    pub reduce: bool,
}

impl Default for Halo3dParams {
    fn default() -> Self {
        Halo3dParams {
            iterations: 30,
            nx: 1,
            ny: 1,
            nz: 1,
            fields_per_cell: 72_000,
            datatype_width: 8,
            pex: 0,
            pey: 0,
            pez: 0,
            compute_ns: 0.0,
            reduce: false,
        }
    }
}

impl MotifParams for Halo3dParams {
    fn build(self, ranks: u32, field: &str) -> Result<Box<dyn Motif>> {
        let compute = duration_ps(self.compute_ns, PS_PER_NS, field, "compute_ns")?;
        let dims = match [self.pex, self.pey, self.pez] {
            [0, 0, 0] => min_variance_3d(ranks),
            d if d.iter().map(|&x| x as u64).product::<u64>() == ranks as u64 => d,
            d => {
                return Err(param_error(
                    field,
                    "pex",
                    format!("pex × pey × pez = {d:?} is not the job's {ranks} ranks; allowed: a factorisation of {ranks}, or all 0"),
                ))
            }
        };
        let cell = self.fields_per_cell as u64 * self.datatype_width as u64;
        let (nx, ny, nz) = (self.nx as u64, self.ny as u64, self.nz as u64);
        Ok(Box::new(Halo3d {
            grid: Grid::new(dims.to_vec()),
            face: [cell * ny * nz, cell * nx * nz, cell * nx * ny],
            compute,
            world: Comm::world(ranks),
            p: self,
        }))
    }
}

pub struct Halo3d {
    p: Halo3dParams,
    pub grid: Grid,
    /// Bytes of an x, y and z face.
    face: [u64; 3],
    compute: Time,
    world: Comm,
}

impl Motif for Halo3d {
    fn name(&self) -> &'static str {
        "halo3d"
    }

    fn iterations(&self) -> u32 {
        self.p.iterations
    }

    fn iteration(&self, rank: u32, _it: u32, out: &mut Vec<Op>) {
        if self.compute > 0 {
            out.push(Op::Compute { ps: self.compute });
        }
        for (dim, &bytes) in self.face.iter().enumerate() {
            let peers: Vec<u32> = [-1, 1].iter().filter_map(|&s| self.grid.shift(rank, dim, s)).collect();
            for &from in &peers {
                out.push(Op::Irecv { from, bytes, tag: 0 });
            }
            for &to in &peers {
                out.push(Op::Send { to, bytes, tag: 0 });
            }
            if !peers.is_empty() {
                out.push(Op::WaitAll);
            }
        }
        if self.p.reduce {
            out.push(Op::Allreduce { comm: self.world.clone(), bytes: 8 });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decomposition_11_8_6_at_528() {
        let m = Halo3dParams::default().build(528, "j").unwrap();
        let mut out = Vec::new();
        // Rank 11 is (0, 1, 0): x neighbour +1 only, y neighbours 0 and 22, z neighbour 99.
        m.iteration(11, 0, &mut out);
        let sends: Vec<u32> = out
            .iter()
            .filter_map(|o| match o {
                Op::Send { to, bytes: 576_000, .. } => Some(*to),
                _ => None,
            })
            .collect();
        assert_eq!(sends, vec![12, 0, 22, 99]);
    }

    #[test]
    fn explicit_grid_must_fit() {
        let p = Halo3dParams { pex: 2, pey: 2, pez: 2, ..Halo3dParams::default() };
        assert!(p.clone().build(8, "j").is_ok());
        let e = p.build(9, "workload.jobs[2]").err().unwrap();
        assert!(e.to_string().contains("workload.jobs[2].params.pex"), "{e}");
    }
}
