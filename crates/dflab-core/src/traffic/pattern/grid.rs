//! Application-like patterns on a 3D grid of the nodes, as SST/Merlin's `trafficgen` (the
//! generator of the Q-adaptive paper; qadaptive-reference.md §3.2, HPDC'21 §6).
//!
//! Node `n` sits at `(x, y, z)` with x fastest: `x = n mod X`, `y = (n / X) mod Y`,
//! `z = n / (X·Y)`. The default grid is `p × a × g` (4×8×33 for 1056 nodes, 5×10×51 for 2550,
//! as the reference configs), so x is the host port, y the router in its group and z the group.
//! `stencil:<X>x<Y>x<Z>` / `m2m:<X>x<Y>x<Z>` give another grid with `X·Y·Z` = the node count.
//!
//! * **3D stencil** (`stencil`, SST `Stencil_3D`): periodic in every dimension; each node sends
//!   in rounds, one packet to each of its 6 neighbours in the order −x, +x, −y, +y, −z, +z.
//!   Every dimension must be at least 2 (a dimension of 1 makes a node its own neighbour).
//! * **Many-to-many** (`m2m`, SST `FFT3D_all2all`): the nodes sharing `(x, y)` form a
//!   communicator along z; each node sends in rounds, one packet to every other member in
//!   increasing z. With the default grid this is an all-to-all between groups.

use crate::topology::Topology;

/// A 3D arrangement of the node ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grid {
    pub dims: [u32; 3],
}

impl Grid {
    /// `p × a × g`.
    pub fn of_topology(topo: &Topology) -> Grid {
        Grid { dims: [topo.p as u32, topo.a as u32, topo.g as u32] }
    }

    #[inline]
    pub fn coords(&self, n: u32) -> [u32; 3] {
        let [x, y, _] = self.dims;
        [n % x, (n / x) % y, n / (x * y)]
    }

    #[inline]
    pub fn id(&self, [cx, cy, cz]: [u32; 3]) -> u32 {
        let [x, y, _] = self.dims;
        cx + x * (cy + y * cz)
    }

    /// The 6 periodic neighbours in the reference order −x, +x, −y, +y, −z, +z.
    pub fn neighbours(&self, n: u32) -> [u32; 6] {
        let c = self.coords(n);
        let mut out = [0; 6];
        for d in 0..3 {
            let size = self.dims[d];
            for (j, step) in [size - 1, 1].into_iter().enumerate() {
                let mut nc = c;
                nc[d] = (c[d] + step) % size;
                out[2 * d + j] = self.id(nc);
            }
        }
        out
    }
}

/// 3D stencil, with each node's position in its round.
#[derive(Debug, Clone)]
pub struct Stencil {
    grid: Grid,
    next: Vec<u8>,
}

impl Stencil {
    pub fn new(grid: Grid) -> Stencil {
        let nodes = grid.dims.iter().product::<u32>() as usize;
        Stencil { grid, next: vec![0; nodes] }
    }

    #[inline]
    pub fn destination(&mut self, src: u32) -> u32 {
        let i = &mut self.next[src as usize];
        let d = self.grid.neighbours(src)[*i as usize];
        *i = (*i + 1) % 6;
        d
    }
}

/// Many-to-many along z, with each node's position in its round.
#[derive(Debug, Clone)]
pub struct ManyToMany {
    grid: Grid,
    next: Vec<u32>,
}

impl ManyToMany {
    pub fn new(grid: Grid) -> ManyToMany {
        let nodes = grid.dims.iter().product::<u32>() as usize;
        ManyToMany { grid, next: vec![0; nodes] }
    }

    #[inline]
    pub fn destination(&mut self, src: u32) -> u32 {
        let [x, y, z] = self.grid.coords(src);
        let i = &mut self.next[src as usize];
        let dz = if *i >= z { *i + 1 } else { *i };
        *i = (*i + 1) % (self.grid.dims[2] - 1);
        self.grid.id([x, y, dz])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn stencil_rounds_visit_exactly_the_six_periodic_neighbours() {
        let grid = Grid { dims: [4, 8, 33] };
        let mut s = Stencil::new(grid);
        for src in [0u32, 3, 4, 31, 32, 500, 1055] {
            let [x, y, z] = grid.coords(src);
            let want: Vec<u32> = vec![
                grid.id([(x + 3) % 4, y, z]),
                grid.id([(x + 1) % 4, y, z]),
                grid.id([x, (y + 7) % 8, z]),
                grid.id([x, (y + 1) % 8, z]),
                grid.id([x, y, (z + 32) % 33]),
                grid.id([x, y, (z + 1) % 33]),
            ];
            for _round in 0..3 {
                let got: Vec<u32> = (0..6).map(|_| s.destination(src)).collect();
                assert_eq!(got, want, "node {src}");
            }
            // Each neighbour differs from the node in exactly one coordinate, by ±1 mod size.
            for d in want {
                let (a, b) = (grid.coords(src), grid.coords(d));
                let diff: Vec<usize> = (0..3).filter(|&k| a[k] != b[k]).collect();
                assert_eq!(diff.len(), 1);
                let k = diff[0];
                let size = grid.dims[k];
                assert!((a[k] + 1) % size == b[k] || (b[k] + 1) % size == a[k]);
            }
        }
        // Node 0 of the default 1056 grid: x wraps to 3, y to router 7, z to group 32.
        assert_eq!(grid.neighbours(0), [3, 1, 28, 4, 32 * 32, 32]);
    }

    #[test]
    fn stencil_with_a_dimension_of_two_sends_twice_to_the_same_neighbour() {
        let grid = Grid { dims: [2, 3, 4] };
        let n = grid.neighbours(0);
        assert_eq!(n[0], n[1]);
        assert!(n.iter().all(|&d| d != 0));
    }

    #[test]
    fn many_to_many_covers_the_z_line_once_per_round() {
        let grid = Grid { dims: [4, 8, 33] };
        let mut m = ManyToMany::new(grid);
        for src in [0u32, 37, 517, 1055] {
            let [x, y, z] = grid.coords(src);
            let line: BTreeSet<u32> = (0..33).filter(|&k| k != z).map(|k| grid.id([x, y, k])).collect();
            for _round in 0..2 {
                let got: Vec<u32> = (0..32).map(|_| m.destination(src)).collect();
                // In increasing z, as the reference generator.
                assert!(got.windows(2).all(|w| w[0] < w[1]));
                assert_eq!(got.iter().copied().collect::<BTreeSet<_>>(), line, "node {src}");
            }
        }
    }

    #[test]
    fn default_grid_puts_a_group_on_each_z_plane() {
        let t = crate::topology::Topology::new(&crate::config::TopologyConfig::default()).unwrap();
        let grid = Grid::of_topology(&t);
        assert_eq!(grid.dims, [4, 8, 33]);
        for n in 0..t.nodes() as u32 {
            let [x, y, z] = grid.coords(n);
            let r = t.router_of_node(n);
            assert_eq!((x, y, z), (t.host_port_of_node(n) as u32, t.index_in_group(r), t.group_of(r)));
            assert_eq!(grid.id([x, y, z]), n);
        }
    }
}
