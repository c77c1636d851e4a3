//! FFT3D, a pencil-decomposed 3D FFT: SST Ember's `FFT3D` motif (`emberfft3d.cc` in the SC'22
//! toolkit, QR §4.3) with the paper's §IV parameters (Table I: 15,781.09 MB, peak one message
//! of 51.68 KB).
//!
//! An `n³` complex grid on an `np_row × np_col` process array: rank `r` is in row
//! `r % np_row` and column `r / np_row`. Its *column communicator* holds the `np_row` ranks of
//! its column (`col·np_row + i`), its *row communicator* the `np_col` ranks of its row
//! (`row + i·np_row`). The grid is split as Ember does: the `n/2 + 1` half-spectrum planes
//! over the rows (`a[i]`), the `n` y-lines over the rows (`b[i]`) and over the columns
//! (`c[j]`), the `n` z-lines over the columns (`c[j]`), each split as evenly as possible with
//! the first parts one larger. Per peer, in doubles (2 per complex value):
//! * forward column transpose, to row `i`: `2·a[i]·b[row]·c[col]`;
//! * row transposes (both), to column `j`: `2·a[row]·c[j]·c[col]`;
//! * backward column transpose, to row `i`: `2·a[row]·b[i]·c[col]`.
//!
//! At 528 ranks (22 × 24) the largest block is 2·10·19·17 doubles = 51,680 B, the paper's peak.
//!
//! One iteration: compute, column alltoallv (forward), compute, row alltoallv, compute,
//! barrier; compute, row alltoallv, compute, column alltoallv (backward), compute ×2,
//! barrier. Each compute phase is `ns_per_element · n · ⌊n² / ranks⌋` ns (the last one twice
//! that), in Ember's integer arithmetic: 400 · 303 = 121,200 ns at 528 ranks.
//!
//! ⚠ Decisions:
//! * `np_row = 0` (the default) takes the largest divisor of the rank count not above its
//!   square root (22 at 528, 10 at 140, the reference's values); Ember requires it;
//! * every column communicator has id 1 and every row communicator id 2 (the world's
//!   barriers id 0): a rank is in exactly one of each, so (id, sequence number) names one
//!   collective for any pair of ranks, at any size (ids are 10 bits in the tags);
//! * compute times follow Ember's integer arithmetic (`n · ⌊n²/ranks⌋`: 121,200 ns at 528
//!   ranks, not 400³/528 = 121,212) and are truncated to whole ns; the last phase is twice
//!   the others, as in Ember;
//! * the cube's three extents are one parameter `n` (Ember asserts nx = ny = nz).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::units::{Time, PS_PER_NS};
use crate::workload::mpi::op::{Comm, Op};

use super::grid::near_square;
use super::{param_error, Motif, MotifParams};

/// Parameters of `fft3d` (Ember `FFT3D`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Fft3dParams {
    /// Iterations (a forward and a backward transform each).
    pub iterations: u32,
    /// Grid points along each of the three axes.
    pub n: u32,
    /// Rows of the process array; must divide the rank count (0: the largest divisor not above
    /// its square root).
    pub np_row: u32,
    /// Computation per grid point and phase, ns.
    pub ns_per_element: f64,
}

impl Default for Fft3dParams {
    fn default() -> Self {
        Fft3dParams { iterations: 8, n: 400, np_row: 0, ns_per_element: 1.0 }
    }
}

/// `total` split into `parts` nearly equal parts, the first `total % parts` one larger.
fn split(total: u32, parts: u32) -> Vec<u64> {
    (0..parts).map(|i| (total / parts + u32::from(i < total % parts)) as u64).collect()
}

impl MotifParams for Fft3dParams {
    fn build(self, ranks: u32, field: &str) -> Result<Box<dyn Motif>> {
        let np_row = if self.np_row == 0 { near_square(ranks).0 } else { self.np_row };
        if !ranks.is_multiple_of(np_row) {
            return Err(param_error(
                field,
                "np_row",
                format!("{np_row} does not divide {ranks} ranks; allowed: a divisor of the rank count, or 0"),
            ));
        }
        if self.n == 0 {
            return Err(param_error(field, "n", "allowed: 1 or more"));
        }
        if !self.ns_per_element.is_finite() || self.ns_per_element < 0.0 {
            return Err(param_error(field, "ns_per_element", "allowed: 0 or more"));
        }
        let np_col = ranks / np_row;
        let n = self.n as u64;
        // Ember: nsPerElement · x · ((y · z) / ranks), y·z/ranks in integers, then to whole ns.
        let phase_ns = (self.ns_per_element * (n * ((n * n) / ranks as u64)) as f64) as u64;
        let cols = (0..np_col).map(|c| Comm::of(1, (0..np_row).map(|i| c * np_row + i).collect())).collect();
        let rows = (0..np_row).map(|r| Comm::of(2, (0..np_col).map(|i| r + i * np_row).collect())).collect();
        Ok(Box::new(Fft3d {
            a: split(self.n / 2 + 1, np_row),
            b: split(self.n, np_row),
            c: split(self.n, np_col),
            np_row,
            phase: (phase_ns as f64 * PS_PER_NS) as Time,
            world: Comm::world(ranks),
            cols,
            rows,
            p: self,
        }))
    }
}

pub struct Fft3d {
    p: Fft3dParams,
    np_row: u32,
    /// Half-spectrum planes per row, y-lines per row, y- (and z-) lines per column.
    a: Vec<u64>,
    b: Vec<u64>,
    c: Vec<u64>,
    phase: Time,
    world: Comm,
    cols: Vec<Comm>,
    rows: Vec<Comm>,
}

impl Fft3d {
    /// The per-peer byte counts of `rank`'s three transposes: (column forward, row, column
    /// backward).
    pub fn blocks(&self, rank: u32) -> (Vec<u64>, Vec<u64>, Vec<u64>) {
        let (row, col) = ((rank % self.np_row) as usize, (rank / self.np_row) as usize);
        let (a, b, c) = (&self.a, &self.b, &self.c);
        let col_f = (0..a.len()).map(|i| 16 * a[i] * b[row] * c[col]).collect();
        let row_t = (0..c.len()).map(|j| 16 * a[row] * c[j] * c[col]).collect();
        let col_b = (0..b.len()).map(|i| 16 * a[row] * b[i] * c[col]).collect();
        (col_f, row_t, col_b)
    }
}

impl Motif for Fft3d {
    fn name(&self) -> &'static str {
        "fft3d"
    }

    fn iterations(&self) -> u32 {
        self.p.iterations
    }

    fn iteration(&self, rank: u32, _it: u32, out: &mut Vec<Op>) {
        let (col_f, row_t, col_b) = self.blocks(rank);
        let (col_f, row_t, col_b) = (col_f.into(), row_t.into(), col_b.into());
        let col = self.cols[(rank / self.np_row) as usize].clone();
        let row = self.rows[(rank % self.np_row) as usize].clone();
        let phase = Op::Compute { ps: self.phase };
        out.push(phase.clone());
        out.push(Op::Alltoallv { comm: col.clone(), send_bytes: col_f });
        out.push(phase.clone());
        out.push(Op::Alltoallv { comm: row.clone(), send_bytes: std::sync::Arc::clone(&row_t) });
        out.push(phase.clone());
        out.push(Op::Barrier { comm: self.world.clone() });
        out.push(phase.clone());
        out.push(Op::Alltoallv { comm: row, send_bytes: row_t });
        out.push(phase);
        out.push(Op::Alltoallv { comm: col, send_bytes: col_b });
        out.push(Op::Compute { ps: 2 * self.phase });
        out.push(Op::Barrier { comm: self.world.clone() });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_as_ember() {
        assert_eq!(split(201, 22)[..4], [10, 10, 10, 9]);
        assert_eq!(split(400, 24)[15..17], [17, 16]);
    }

    #[test]
    fn ops_of_one_iteration_at_528() {
        let m = Fft3dParams::default().build(528, "j").unwrap();
        let mut out = Vec::new();
        m.iteration(0, 0, &mut out);
        assert_eq!(out.len(), 12);
        assert_eq!(out[0], Op::Compute { ps: 121_200_000 });
        assert_eq!(out[10], Op::Compute { ps: 242_400_000 });
        match &out[1] {
            Op::Alltoallv { comm, send_bytes } => {
                assert_eq!(comm.size(), 22);
                assert_eq!(comm.members[1], 1);
                assert_eq!(send_bytes.iter().max(), Some(&51_680));
            }
            o => panic!("{o:?}"),
        }
        match &out[3] {
            Op::Alltoallv { comm, .. } => assert_eq!((comm.size(), comm.members[1]), (24, 22)),
            o => panic!("{o:?}"),
        }
    }

    #[test]
    fn np_row_must_divide_ranks() {
        let p = Fft3dParams { np_row: 5, ..Fft3dParams::default() };
        let e = p.build(528, "workload.jobs[0]").err().unwrap();
        assert!(e.to_string().starts_with("workload.jobs[0].params.np_row"), "{e}");
    }
}
