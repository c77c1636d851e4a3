//! LU, the NAS LU wavefront sweep: SST Ember's `NASLU` motif (`embernaslu.cc` in the SC'22
//! toolkit, QR §4.3) with the paper's §IV parameters (Table I: 13,713.22 MB, peak 30.0 KB).
//!
//! The ranks form a `pex × pey` grid (rank `r` at `x = r % pex`, `y = r / pex`, not periodic).
//! One iteration is a forward sweep then a reverse sweep of `nz / nzblock` steps each. A
//! forward step: blocking receive from −x, then from −y (where they exist), compute, blocking
//! send to +x, then to +y; the reverse sweep mirrors it (receive from +x, +y; send to −x, −y).
//! Messages carry `nx · nzblock` bytes along x and `ny · nzblock` along y (15,000 B); the
//! forward sweep uses tag 1000 and the reverse tag 3000, as Ember does.
//!
//! ⚠ Decisions:
//! * `pex = pey = 0` (the default) derives the grid from the rank count: the most square
//!   `pex × pey` with `pex ≤ pey` (22×24 at 528, 10×14 at 140, the reference's shapes); Ember
//!   requires both to be given;
//! * `nz` must be a multiple of `nzblock` (Ember asserts it).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::units::{Time, PS_PER_NS};
use crate::workload::mpi::op::Op;

use super::grid::grid_2d;
use super::{duration_ps, param_error, Motif, MotifParams};

/// Parameters of `lu` (Ember `NASLU`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LuParams {
    /// Iterations (a forward and a reverse sweep each).
    pub iterations: u32,
    /// Problem size along x (the x messages carry `nx · nzblock` bytes).
    pub nx: u32,
    /// Problem size along y (the y messages carry `ny · nzblock` bytes).
    pub ny: u32,
    /// Problem size along z: a sweep has `nz / nzblock` steps.
    pub nz: u32,
    /// z planes per step; must divide `nz`.
    pub nzblock: u32,
    /// Computation per step, ns.
    pub compute_ns: f64,
    /// Process grid extent along x (0: derived, with `pey`, from the rank count).
    pub pex: u32,
    /// Process grid extent along y (0: derived).
    pub pey: u32,
}

impl Default for LuParams {
    fn default() -> Self {
        LuParams { iterations: 3, nx: 1500, ny: 1500, nz: 1500, nzblock: 10, compute_ns: 1.0, pex: 0, pey: 0 }
    }
}

impl MotifParams for LuParams {
    fn build(self, ranks: u32, field: &str) -> Result<Box<dyn Motif>> {
        let compute = duration_ps(self.compute_ns, PS_PER_NS, field, "compute_ns")?;
        if self.nzblock == 0 || !self.nz.is_multiple_of(self.nzblock) {
            return Err(param_error(field, "nzblock", format!("{} must divide nz = {}", self.nzblock, self.nz)));
        }
        let (pex, pey) = grid_2d(self.pex, self.pey, ranks, field)?;
        Ok(Box::new(Lu { p: self, pex, pey, compute }))
    }
}

pub struct Lu {
    p: LuParams,
    pub pex: u32,
    pub pey: u32,
    compute: Time,
}

impl Lu {
    /// The four neighbours of `rank`: (−x, +x, −y, +y).
    fn neighbours(&self, rank: u32) -> [Option<u32>; 4] {
        let (x, y) = (rank % self.pex, rank / self.pex);
        [
            (x > 0).then(|| rank - 1),
            (x + 1 < self.pex).then(|| rank + 1),
            (y > 0).then(|| rank - self.pex),
            (y + 1 < self.pey).then(|| rank + self.pex),
        ]
    }

    /// One sweep: receive from `from` (x then y), compute, send to `to` (x then y).
    fn sweep(&self, from: [Option<u32>; 2], to: [Option<u32>; 2], tag: u32, out: &mut Vec<Op>) {
        let size = [self.p.nx as u64 * self.p.nzblock as u64, self.p.ny as u64 * self.p.nzblock as u64];
        for _ in 0..self.p.nz / self.p.nzblock {
            for (peer, bytes) in from.iter().zip(size) {
                if let Some(from) = *peer {
                    out.push(Op::Recv { from, bytes, tag });
                }
            }
            out.push(Op::Compute { ps: self.compute });
            for (peer, bytes) in to.iter().zip(size) {
                if let Some(to) = *peer {
                    out.push(Op::Send { to, bytes, tag });
                }
            }
        }
    }
}

impl Motif for Lu {
    fn name(&self) -> &'static str {
        "lu"
    }

    fn iterations(&self) -> u32 {
        self.p.iterations
    }

    fn iteration(&self, rank: u32, _it: u32, out: &mut Vec<Op>) {
        let [xd, xu, yd, yu] = self.neighbours(rank);
        self.sweep([xd, yd], [xu, yu], 1000, out);
        self.sweep([xu, yu], [xd, yd], 3000, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first forward step of `rank`.
    fn first_step(ranks: u32, rank: u32) -> Vec<Op> {
        let m = LuParams::default().build(ranks, "j").unwrap();
        let mut out = Vec::new();
        m.iteration(rank, 0, &mut out);
        out.into_iter().take(4).collect()
    }

    #[test]
    fn grid_is_22_by_24_at_528_and_10_by_14_at_140() {
        // Rank 21 ends the first row of 22: it receives from −x only and sends to +y only.
        let s = first_step(528, 21);
        assert_eq!(s[0], Op::Recv { from: 20, bytes: 15_000, tag: 1000 });
        assert_eq!(s[2], Op::Send { to: 43, bytes: 15_000, tag: 1000 });
        // Rank 139 is the last of a 10×14 grid: it sends nothing forward.
        let s = first_step(140, 139);
        assert_eq!(
            &s[..3],
            &[
                Op::Recv { from: 138, bytes: 15_000, tag: 1000 },
                Op::Recv { from: 129, bytes: 15_000, tag: 1000 },
                Op::Compute { ps: 1000 },
            ]
        );
        assert!(matches!(s[3], Op::Recv { .. }));
        let p = LuParams { pex: 5, pey: 5, ..LuParams::default() };
        assert!(p.build(24, "workload.jobs[0]").is_err());
    }

    #[test]
    fn corner_rank_only_sends_forward() {
        let m = LuParams { nz: 20, ..LuParams::default() }.build(6, "j").unwrap();
        let mut out = Vec::new();
        m.iteration(0, 0, &mut out);
        // 2 forward steps of (compute, send +x, send +y), 2 reverse of (recv, recv, compute).
        let sends = out.iter().filter(|o| matches!(o, Op::Send { .. })).count();
        let recvs = out.iter().filter(|o| matches!(o, Op::Recv { .. })).count();
        assert_eq!((sends, recvs), (4, 4));
        assert_eq!(out[1], Op::Send { to: 1, bytes: 15_000, tag: 1000 });
    }
}
