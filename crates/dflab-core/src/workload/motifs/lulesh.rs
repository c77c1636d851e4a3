//! LULESH, the SC'22 study's hydrodynamics proxy: the toolkit's Ember `Lulesh` motif
//! (`emberlulesh.cc`, QR §4.3; paper §IV; Table I: 17,900.12 MB at 512 ranks, peaks 1.95 MB
//! for the 26-point exchange and 14.91 KB for the sweep).
//!
//! One iteration has four phases, with volumes scaled from application traces:
//! 1. a broadcast from rank 0 of `⌊msgscale · 51,984 / (216 · 8)⌋` doubles (30 = 240 B);
//! 2. a reduce to rank 0 of `⌊msgscale · 51,992 / (216 · 8)⌋` doubles (30 = 240 B);
//! 3. a 26-neighbour exchange on a `pex × pey × pez` grid (x fastest, not periodic; 8×8×8 at
//!    512): post receives from every existing neighbour (faces, edges, corners, in Ember's
//!    order), then non-blocking sends to them, then wait; `⌊msgscale · 290,279,024 / 3,880⌋`
//!    bytes each (74,814 B);
//! 4. a 2D wavefront sweep on a `pep × peq` grid (16×32 at 512) of `kba` steps: blocking
//!    receives from −x then −y, blocking sends to +x then +y, of
//!    `⌊msgscale · 299,785,872 / (402 · kba)⌋` bytes (7,457 B), tag 1000.
//!
//! Each phase is followed by `compute_ns` of computation when it is above 0 (the reference
//! has none).
//!
//! ⚠ Decisions:
//! * Ember records each phase as its own row of the iteration record; here an iteration is
//!   all four phases (12 iterations, as the reference's `iterations=12`);
//! * the grids default to the Halo3D factorisation of the rank count (8×8×8 at 512) and the
//!   most square 2D grid (16×32 at 512), the reference's values; Ember requires them given;
//! * the sweep runs one direction only, as Ember's LULESH motif does (no reverse sweep).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::units::{Time, PS_PER_NS};
use crate::workload::mpi::op::{Comm, Op};

use super::grid::{min_variance_3d, near_square, Grid};
use super::{duration_ps, param_error, Motif, MotifParams};

/// Parameters of `lulesh` (Ember `Lulesh`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LuleshParams {
    /// Iterations (broadcast, reduce, 26-neighbour exchange and sweep each).
    pub iterations: u32,
    /// 3D grid extent along x for the 26-neighbour exchange (0 for all three: Halo3D's
    /// minimum-variance factorisation of the rank count).
    pub pex: u32,
    /// 3D grid extent along y.
    pub pey: u32,
    /// 3D grid extent along z.
    pub pez: u32,
    /// 2D grid extent along x for the sweep (0 for both: the most square grid).
    pub pep: u32,
    /// 2D grid extent along y for the sweep.
    pub peq: u32,
    /// Sweep steps (z slices).
    pub kba: u32,
    /// Scale of every message volume.
    pub msgscale: f64,
    /// Computation after each phase, ns (0: none).
    pub compute_ns: f64,
}

impl Default for LuleshParams {
    fn default() -> Self {
        LuleshParams {
            iterations: 12,
            pex: 0,
            pey: 0,
            pez: 0,
            pep: 0,
            peq: 0,
            kba: 100,
            msgscale: 1.0,
            compute_ns: 0.0,
        }
    }
}

/// Ember's order of the 26 neighbours: faces, edges a–l, corners a–h.
const NEIGHBOURS: [[i64; 3]; 26] = [
    [-1, 0, 0],
    [1, 0, 0],
    [0, -1, 0],
    [0, 1, 0],
    [0, 0, -1],
    [0, 0, 1],
    [-1, -1, 0],
    [0, -1, -1],
    [1, -1, 0],
    [0, -1, 1],
    [-1, 0, 1],
    [1, 0, 1],
    [-1, 0, -1],
    [1, 0, -1],
    [-1, 1, 0],
    [0, 1, 1],
    [1, 1, 0],
    [0, 1, -1],
    [-1, -1, 1],
    [1, -1, 1],
    [-1, -1, -1],
    [1, -1, -1],
    [-1, 1, 1],
    [1, 1, 1],
    [-1, 1, -1],
    [1, 1, -1],
];

impl MotifParams for LuleshParams {
    fn build(self, ranks: u32, field: &str) -> Result<Box<dyn Motif>> {
        let compute = duration_ps(self.compute_ns, PS_PER_NS, field, "compute_ns")?;
        let cube = match [self.pex, self.pey, self.pez] {
            [0, 0, 0] => min_variance_3d(ranks).to_vec(),
            d if d.iter().map(|&x| x as u64).product::<u64>() == ranks as u64 => d.to_vec(),
            d => return Err(param_error(field, "pex", format!("pex × pey × pez = {d:?} is not the job's {ranks} ranks; allowed: a factorisation of {ranks}, or all 0"))),
        };
        let plane = match (self.pep, self.peq) {
            (0, 0) => near_square(ranks),
            (p, q) if p as u64 * q as u64 == ranks as u64 => (p, q),
            (p, q) => return Err(param_error(field, "pep", format!("pep × peq = {p} × {q} is not the job's {ranks} ranks; allowed: a factorisation of {ranks}, or both 0"))),
        };
        if self.kba == 0 {
            return Err(param_error(field, "kba", "allowed: 1 or more"));
        }
        if !self.msgscale.is_finite() || self.msgscale < 0.0 {
            return Err(param_error(field, "msgscale", "allowed: 0 or more"));
        }
        let s = self.msgscale;
        // Ember stores each volume in an unsigned 32-bit integer: truncation.
        let volumes = Volumes {
            bcast: 8 * (s * 51_984.0 / (216.0 * 8.0)) as u32 as u64,
            reduce: 8 * (s * 51_992.0 / (216.0 * 8.0)) as u32 as u64,
            nn26: (s * 290_279_024.0 / 3_880.0) as u32 as u64,
            sweep: (s * 299_785_872.0 / (402.0 * self.kba as f64)) as u32 as u64,
        };
        Ok(Box::new(Lulesh {
            cube: Grid::new(cube),
            plane: Grid::new(vec![plane.0, plane.1]),
            volumes,
            compute,
            world: Comm::world(ranks),
            p: self,
        }))
    }
}

/// Payload bytes of each phase's messages.
#[derive(Debug, Clone, Copy)]
struct Volumes {
    bcast: u64,
    reduce: u64,
    nn26: u64,
    sweep: u64,
}

pub struct Lulesh {
    p: LuleshParams,
    cube: Grid,
    plane: Grid,
    volumes: Volumes,
    compute: Time,
    world: Comm,
}

impl Lulesh {
    fn after_phase(&self, out: &mut Vec<Op>) {
        if self.compute > 0 {
            out.push(Op::Compute { ps: self.compute });
        }
    }

    fn exchange26(&self, rank: u32, out: &mut Vec<Op>) {
        let bytes = self.volumes.nn26;
        let peers: Vec<u32> = NEIGHBOURS.iter().filter_map(|d| self.cube.offset(rank, d)).collect();
        out.extend(peers.iter().map(|&from| Op::Irecv { from, bytes, tag: 0 }));
        out.extend(peers.iter().map(|&to| Op::Isend { to, bytes, tag: 0 }));
        if !peers.is_empty() {
            out.push(Op::WaitAll);
        }
    }

    fn sweep(&self, rank: u32, out: &mut Vec<Op>) {
        let (bytes, tag) = (self.volumes.sweep, 1000);
        let down = [self.plane.shift(rank, 0, -1), self.plane.shift(rank, 1, -1)];
        let up = [self.plane.shift(rank, 0, 1), self.plane.shift(rank, 1, 1)];
        for _ in 0..self.p.kba {
            out.extend(down.iter().flatten().map(|&from| Op::Recv { from, bytes, tag }));
            out.extend(up.iter().flatten().map(|&to| Op::Send { to, bytes, tag }));
        }
    }
}

impl Motif for Lulesh {
    fn name(&self) -> &'static str {
        "lulesh"
    }

    fn iterations(&self) -> u32 {
        self.p.iterations
    }

    fn iteration(&self, rank: u32, _it: u32, out: &mut Vec<Op>) {
        out.push(Op::Bcast { comm: self.world.clone(), root: 0, bytes: self.volumes.bcast });
        self.after_phase(out);
        out.push(Op::Reduce { comm: self.world.clone(), root: 0, bytes: self.volumes.reduce });
        self.after_phase(out);
        self.exchange26(rank, out);
        self.after_phase(out);
        self.sweep(rank, out);
        self.after_phase(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn volumes_and_grids_at_512() {
        let m = LuleshParams::default().build(512, "j").unwrap();
        let mut out = Vec::new();
        // Rank 73 = (1, 1, 1) of 8×8×8: all 26 neighbours exist.
        m.iteration(73, 0, &mut out);
        assert_eq!(out[0], Op::Bcast { comm: Comm::world(512), root: 0, bytes: 240 });
        let isends = out.iter().filter(|o| matches!(o, Op::Isend { bytes: 74_814, .. })).count();
        assert_eq!(isends, 26);
        // Rank 73 is (9, 4) on 16×32: receives from 72 and 57, sends to 74 and 89.
        assert!(out.contains(&Op::Recv { from: 57, bytes: 7_457, tag: 1000 }));
        assert!(out.contains(&Op::Send { to: 89, bytes: 7_457, tag: 1000 }));
    }
}
