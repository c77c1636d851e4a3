//! Process grids: the factorisations the motifs derive from a rank count, and the
//! rank ↔ coordinate map they all share (first dimension fastest, as Ember's linear rank map
//! and the StencilNd/LQCD `lex_coords` do).

/// A process grid of `dims.len()` dimensions; rank `r` has coordinates `c` with
/// `r = c[0] + dims[0] * (c[1] + dims[1] * (c[2] + ...))`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grid {
    pub dims: Vec<u32>,
}

impl Grid {
    pub fn new(dims: Vec<u32>) -> Grid {
        Grid { dims }
    }

    /// The number of ranks the grid holds.
    pub fn size(&self) -> u64 {
        self.dims.iter().map(|&d| d as u64).product()
    }

    /// The coordinates of `rank`.
    pub fn coords(&self, rank: u32) -> Vec<u32> {
        let mut r = rank;
        self.dims
            .iter()
            .map(|&d| {
                let c = r % d;
                r /= d;
                c
            })
            .collect()
    }

    /// The rank `delta[i]` steps from `rank` along each dimension `i` (missing deltas are 0);
    /// `None` off the edge (the grids are not periodic).
    pub fn offset(&self, rank: u32, delta: &[i64]) -> Option<u32> {
        let c = self.coords(rank);
        let mut r: u64 = 0;
        for i in (0..self.dims.len()).rev() {
            let x = c[i] as i64 + delta.get(i).copied().unwrap_or(0);
            if x < 0 || x >= self.dims[i] as i64 {
                return None;
            }
            r = r * self.dims[i] as u64 + x as u64;
        }
        Some(r as u32)
    }

    /// The neighbour `step` (±1) along dimension `dim`, if any.
    pub fn shift(&self, rank: u32, dim: usize, step: i64) -> Option<u32> {
        let mut delta = vec![0; self.dims.len()];
        delta[dim] = step;
        self.offset(rank, &delta)
    }
}

/// The divisors of `n`, ascending.
pub fn divisors(n: u32) -> Vec<u32> {
    let mut small = Vec::new();
    let mut large = Vec::new();
    let mut d = 1u32;
    while (d as u64) * (d as u64) <= n as u64 {
        if n.is_multiple_of(d) {
            small.push(d);
            if d != n / d {
                large.push(n / d);
            }
        }
        d += 1;
    }
    small.extend(large.into_iter().rev());
    small
}

/// The most square 2D grid of `n` ranks, `(a, n / a)` with `a` the largest divisor of `n` not
/// above √n: 22×24 at 528, 10×14 at 140, 16×32 at 512 (the reference's LU and FFT3D shapes).
pub fn near_square(n: u32) -> (u32, u32) {
    let a = divisors(n).into_iter().rev().find(|&d| (d as u64) * (d as u64) <= n as u64).unwrap_or(1);
    (a, n / a)
}

/// Ember Halo3D's automatic 3D decomposition: among the triples `i·j·k = n`, visited with `i`
/// then `j` ascending, the last one whose variance is not above the best so far, where mean
/// and variance are computed in truncating integer arithmetic exactly as the motif does
/// (`(i+j+k)/3`, `(i²+j²+k²)/3 − mean²`), starting from `(n, 1, 1)`. 528 → 11×8×6.
pub fn min_variance_3d(n: u32) -> [u32; 3] {
    let score = |t: [u64; 3]| {
        let mean = (t[0] + t[1] + t[2]) / 3;
        (t[0] * t[0] + t[1] * t[1] + t[2] * t[2]) / 3 - mean * mean
    };
    let mut best = [n as u64, 1, 1];
    let mut best_var = score(best);
    for i in divisors(n) {
        for j in divisors(n / i) {
            let t = [i as u64, j as u64, (n / i / j) as u64];
            let v = score(t);
            if v <= best_var {
                best = t;
                best_var = v;
            }
        }
    }
    [best[0] as u32, best[1] as u32, best[2] as u32]
}

/// The `d`-dimensional grid of `n` ranks with the least sum of squared extents (the most
/// balanced one), ascending; ties go to the lexicographically first. 528 → [2,2,3,4,11] and
/// 243 → [3,3,3,3,3] for `d` = 5, the reference's Stencil5D grids. (Least *variance* would tie
/// [2,2,3,4,11] with [1,3,4,4,11] at 528; the sum of squares prefers the grid that cuts more.)
pub fn balanced(n: u32, d: usize) -> Vec<u32> {
    fn search(n: u32, d: usize, min: u32, cur: &mut Vec<u32>, best: &mut Option<(u64, Vec<u32>)>) {
        if d == 1 {
            if n >= min {
                cur.push(n);
                let q: u64 = cur.iter().map(|&x| (x as u64) * (x as u64)).sum();
                if best.as_ref().is_none_or(|(bq, _)| q < *bq) {
                    *best = Some((q, cur.clone()));
                }
                cur.pop();
            }
            return;
        }
        for f in divisors(n).into_iter().filter(|&f| f >= min) {
            if (f as u64).pow(d as u32) > n as u64 {
                break;
            }
            cur.push(f);
            search(n / f, d - 1, f, cur, best);
            cur.pop();
        }
    }
    let mut best = None;
    search(n, d.max(1), 1, &mut Vec::new(), &mut best);
    best.map(|(_, v)| v).unwrap_or_else(|| vec![n])
}

/// A 2D process grid of `ranks` ranks: the given `pex × pey`, or with both 0 the most square
/// one; a product other than `ranks` is an error on `<field>.params.pex`.
pub fn grid_2d(pex: u32, pey: u32, ranks: u32, field: &str) -> crate::error::Result<(u32, u32)> {
    match (pex, pey) {
        (0, 0) => Ok(near_square(ranks)),
        (x, y) if x as u64 * y as u64 == ranks as u64 => Ok((x, y)),
        (x, y) => Err(super::param_error(
            field,
            "pex",
            format!(
                "pex × pey = {x} × {y} is not the job's {ranks} ranks; allowed: a factorisation of {ranks}, or both 0"
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_shapes() {
        assert_eq!(near_square(528), (22, 24));
        assert_eq!(near_square(140), (10, 14));
        assert_eq!(near_square(512), (16, 32));
        assert_eq!(near_square(13), (1, 13));
        assert_eq!(min_variance_3d(528), [11, 8, 6]);
        assert_eq!(min_variance_3d(512), [8, 8, 8]);
        assert_eq!(balanced(528, 5), vec![2, 2, 3, 4, 11]);
        assert_eq!(balanced(243, 5), vec![3, 3, 3, 3, 3]);
        assert_eq!(balanced(7, 3), vec![1, 1, 7]);
    }

    #[test]
    fn coordinates_first_dimension_fastest() {
        let g = Grid::new(vec![2, 3, 4]);
        assert_eq!(g.coords(0), vec![0, 0, 0]);
        assert_eq!(g.coords(1), vec![1, 0, 0]);
        assert_eq!(g.coords(2), vec![0, 1, 0]);
        assert_eq!(g.coords(23), vec![1, 2, 3]);
        assert_eq!(g.shift(0, 0, 1), Some(1));
        assert_eq!(g.shift(0, 2, 1), Some(6));
        assert_eq!(g.shift(0, 1, -1), None);
        assert_eq!(g.offset(23, &[-1, -1, -1]), Some(14));
    }
}
