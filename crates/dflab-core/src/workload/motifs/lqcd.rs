//! LQCD, the MILC-like 4D lattice stencil: SST Ember's `LQCD` motif (`emberlqcd.cc` in the
//! SC'22 toolkit, QR §4.3) with the paper's §IV parameters (Table I: 11,924.31 MB at 528
//! ranks, peak 4.60 MB).
//!
//! **Layout** (MILC's `setup_hyper_prime`, as the motif does it): start from the whole
//! `nx × ny × nz × nt` lattice on one rank; while fewer than `ranks` sub-lattices exist, take
//! the largest prime `p` (of 2 … 53) dividing the remaining factor of the rank count, and cut
//! by `p` the largest local extent divisible by `p` — preferring a dimension already cut, else
//! the first. 256 ranks → 4⁴ with 33⁴ sites each; 528 ranks → 11×3×4×4 with local extents
//! 12×44×33×33. A rank count with a prime factor above 53, or with factors the extents cannot
//! absorb, is an error. Ranks map to lattice coordinates x fastest; not periodic.
//!
//! **One iteration**, per parity (2): post receives from the +x, +y, +z, +t neighbours, then
//! blocking sends to them, of `48 · ⌊S/2⌋` bytes (an su3 vector of 48 B per site of half the
//! face, `S` = the product of the other three local extents); the same with `48 · S` bytes
//! (the "Naik" three-link term); then the same two rounds with the −t, −z, −y, −x neighbours;
//! then wait, compute, compute. After both parities: an allreduce of one double, compute,
//! another allreduce of one double. Every compute is `compute_ns` (1 ns in the reference).
//! At 256 ranks the messages are 862,464 and 1,724,976 B; at 528 the four +Naik sends total
//! 4,599,936 B, the paper's peak. Tag 0 for every message, as Ember.
//!
//! ⚠ Decisions:
//! * the public toolkit's code only lets rank 0 and its neighbours exchange (a debugging
//!   filter); here every rank exchanges with all its neighbours, which is what Table I's
//!   total counts (11,924 MB at 528 ranks) and what the paper describes;
//! * Ember waits for the + receives, computes, then waits for the − receives; with only a
//!   wait-all available, one `WaitAll` waits for both before the two computes;
//! * 528 ranks use the same prime-factor rule (it succeeds there, giving 11×3×4×4).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::units::{Time, PS_PER_NS};
use crate::workload::mpi::op::{Comm, Op};

use super::grid::Grid;
use super::{duration_ps, ranks_error, Motif, MotifParams};

/// Parameters of `lqcd` (Ember `LQCD`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LqcdParams {
    /// Iterations (two parities of gathers and two allreduces each).
    pub iterations: u32,
    /// Lattice extent along x.
    pub nx: u32,
    /// Lattice extent along y.
    pub ny: u32,
    /// Lattice extent along z.
    pub nz: u32,
    /// Lattice extent along t.
    pub nt: u32,
    /// Each computation, ns.
    pub compute_ns: f64,
}

impl Default for LqcdParams {
    fn default() -> Self {
        LqcdParams { iterations: 1, nx: 132, ny: 132, nz: 132, nt: 132, compute_ns: 1.0 }
    }
}

const PRIMES: [u32; 16] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53];

/// MILC's layout of `lattice` over `ranks` ranks: (ranks per dimension, local extents), or why
/// it cannot be laid out.
pub fn hyper_prime(lattice: [u32; 4], ranks: u32) -> std::result::Result<([u32; 4], [u32; 4]), String> {
    let mut local = lattice;
    let mut count = [1u32; 4];
    let mut done = 1u32;
    while done < ranks {
        let left = ranks / done;
        let Some(&p) = PRIMES.iter().rev().find(|&&p| left.is_multiple_of(p)) else {
            return Err(format!("{ranks} has a prime factor above 53"));
        };
        let Some(j) = local.iter().copied().filter(|&s| s.is_multiple_of(p)).max() else {
            return Err(format!("not enough factors of {p} in the lattice"));
        };
        let dir = (0..4).find(|&d| local[d] == j && count[d] > 1).or_else(|| (0..4).find(|&d| local[d] == j));
        let dir = dir.expect("j is some dimension's extent");
        done *= p;
        local[dir] /= p;
        count[dir] *= p;
    }
    Ok((count, local))
}

impl MotifParams for LqcdParams {
    fn build(self, ranks: u32, field: &str) -> Result<Box<dyn Motif>> {
        let compute = duration_ps(self.compute_ns, PS_PER_NS, field, "compute_ns")?;
        let lattice = [self.nx, self.ny, self.nz, self.nt];
        let (count, local) = hyper_prime(lattice, ranks).map_err(|why| {
            ranks_error(
                field,
                format!(
                    "cannot lay the {lattice:?} lattice over {ranks} ranks ({why}); allowed: rank counts whose prime \
                     factors (≤ 53, with multiplicity) the lattice extents hold, e.g. 256 or 528 for 132⁴"
                ),
            )
        })?;
        // S per dimension: the product of the other three local extents.
        let face: Vec<u64> = (0..4).map(|d| (0..4).filter(|&e| e != d).map(|e| local[e] as u64).product()).collect();
        Ok(Box::new(Lqcd { grid: Grid::new(count.to_vec()), face, compute, world: Comm::world(ranks), p: self }))
    }
}

pub struct Lqcd {
    p: LqcdParams,
    pub grid: Grid,
    face: Vec<u64>,
    compute: Time,
    world: Comm,
}

impl Lqcd {
    /// Receives from then blocking sends to `peers` ((dimension, rank) pairs), of
    /// `48 · sites(S)` bytes.
    fn gather(&self, peers: &[(usize, u32)], sites: impl Fn(u64) -> u64, out: &mut Vec<Op>) {
        for &(d, from) in peers {
            out.push(Op::Irecv { from, bytes: 48 * sites(self.face[d]), tag: 0 });
        }
        for &(d, to) in peers {
            out.push(Op::Send { to, bytes: 48 * sites(self.face[d]), tag: 0 });
        }
    }
}

impl Motif for Lqcd {
    fn name(&self) -> &'static str {
        "lqcd"
    }

    fn iterations(&self) -> u32 {
        self.p.iterations
    }

    fn iteration(&self, rank: u32, _it: u32, out: &mut Vec<Op>) {
        let up: Vec<(usize, u32)> = (0..4).filter_map(|d| Some((d, self.grid.shift(rank, d, 1)?))).collect();
        let down: Vec<(usize, u32)> = (0..4).rev().filter_map(|d| Some((d, self.grid.shift(rank, d, -1)?))).collect();
        let compute = Op::Compute { ps: self.compute };
        for _parity in 0..2 {
            for peers in [&up, &down] {
                self.gather(peers, |s| s / 2, out);
                self.gather(peers, |s| s, out);
            }
            if !up.is_empty() || !down.is_empty() {
                out.push(Op::WaitAll);
            }
            out.push(compute.clone());
            out.push(compute.clone());
        }
        out.push(Op::Allreduce { comm: self.world.clone(), bytes: 8 });
        out.push(compute);
        out.push(Op::Allreduce { comm: self.world.clone(), bytes: 8 });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_of_the_reference() {
        assert_eq!(hyper_prime([132; 4], 256), Ok(([4, 4, 4, 4], [33, 33, 33, 33])));
        assert_eq!(hyper_prime([132; 4], 528), Ok(([11, 3, 4, 4], [12, 44, 33, 33])));
        assert!(hyper_prime([132; 4], 139).is_err()); // 139 is prime and > 53
        assert!(hyper_prime([132; 4], 125).is_err()); // 132 has no factor 5
    }

    #[test]
    fn message_sizes_at_256() {
        let m = LqcdParams::default().build(256, "j").unwrap();
        let mut out = Vec::new();
        m.iteration(0, 0, &mut out);
        assert_eq!(out[0], Op::Irecv { from: 1, bytes: 862_464, tag: 0 });
        assert!(out.contains(&Op::Send { to: 64, bytes: 1_724_976, tag: 0 }));
    }

    #[test]
    fn impossible_rank_count_is_a_config_error() {
        let e = LqcdParams::default().build(139, "workload.jobs[3]").err().unwrap();
        assert!(e.to_string().starts_with("workload.jobs[3].ranks: "), "{e}");
        assert!(e.to_string().contains("allowed"), "{e}");
    }
}
