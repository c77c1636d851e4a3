//! Random neighbours (HPDC'21 §6: "each node uniformly spreads communications with 6–20
//! randomly selected targets", modelling NAMD-like load balancing).
//!
//! * `rn` / `rn:<min>:<max>` — the reference generator (SST `RandomNeighbors`, range_min 6,
//!   range_max 21): each round a node draws `K` uniform in `[min, max]` (default `[6, 20]`), then
//!   sends one packet to each of `K` destinations drawn uniformly over all nodes, with
//!   replacement (self excluded unless `traffic.allow_self`; SST includes it). Because the
//!   destinations are independent, the stream of destinations is distributed exactly as `ur`;
//!   the rounds only group them.
//! * `rn-fixed` / `rn-fixed:<min>:<max>` — the paper's wording read literally: each node draws
//!   once (from the experiment seed) `K` uniform in `[min, max]` distinct targets, then spreads
//!   its packets uniformly over them. Unlike `rn`, this concentrates traffic on a sparse random
//!   graph of flows.

use rand::seq::index::sample;
use rand::Rng;

use super::uniform_below;

/// `rn`: per node, the packets left in its current round.
#[derive(Debug, Clone)]
pub struct RandomNeighbors {
    nodes: u32,
    min: u32,
    max: u32,
    allow_self: bool,
    left: Vec<u32>,
}

impl RandomNeighbors {
    pub fn new(nodes: u32, min: u32, max: u32, allow_self: bool) -> RandomNeighbors {
        RandomNeighbors { nodes, min, max, allow_self, left: vec![0; nodes as usize] }
    }

    /// Packets left in `node`'s current round (0 before its first packet).
    pub fn left_in_round(&self, node: u32) -> u32 {
        self.left[node as usize]
    }

    #[inline]
    pub fn destination<R: Rng + ?Sized>(&mut self, src: u32, rng: &mut R) -> u32 {
        let left = &mut self.left[src as usize];
        if *left == 0 {
            *left = rng.gen_range(self.min..=self.max);
        }
        *left -= 1;
        uniform_below(self.nodes, src, self.allow_self, rng)
    }
}

/// `rn-fixed`: per node, a fixed set of targets.
#[derive(Debug, Clone)]
pub struct FixedNeighbors {
    /// Targets of node n: `targets[offsets[n]..offsets[n + 1]]`.
    offsets: Vec<u32>,
    targets: Vec<u32>,
}

impl FixedNeighbors {
    /// Needs `max < nodes` (or `<= nodes` with `allow_self`); `Pattern::parse` checks it.
    pub fn new<R: Rng + ?Sized>(nodes: u32, min: u32, max: u32, allow_self: bool, rng: &mut R) -> FixedNeighbors {
        let mut offsets = Vec::with_capacity(nodes as usize + 1);
        let mut targets = Vec::new();
        offsets.push(0);
        let others = if allow_self { nodes } else { nodes - 1 };
        for src in 0..nodes {
            let k = rng.gen_range(min..=max);
            for t in sample(rng, others as usize, k as usize).into_iter() {
                let t = t as u32;
                targets.push(if !allow_self && t >= src { t + 1 } else { t });
            }
            offsets.push(targets.len() as u32);
        }
        FixedNeighbors { offsets, targets }
    }

    pub fn targets(&self, node: u32) -> &[u32] {
        &self.targets[self.offsets[node as usize] as usize..self.offsets[node as usize + 1] as usize]
    }

    #[inline]
    pub fn destination<R: Rng + ?Sized>(&self, src: u32, rng: &mut R) -> u32 {
        let t = self.targets(src);
        t[rng.gen_range(0..t.len())]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;
    use std::collections::BTreeSet;

    #[test]
    fn rounds_hold_between_6_and_20_packets() {
        let mut rn = RandomNeighbors::new(1056, 6, 20, false);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let mut sizes = BTreeSet::new();
        for src in [0u32, 9, 1055] {
            for _ in 0..200 {
                // The first packet of a round fixes its size.
                let d = rn.destination(src, &mut rng);
                assert_ne!(d, src);
                let k = rn.left_in_round(src) + 1;
                assert!((6..=20).contains(&k), "{k}");
                sizes.insert(k);
                for _ in 1..k {
                    assert_ne!(rn.destination(src, &mut rng), src);
                }
                assert_eq!(rn.left_in_round(src), 0);
            }
        }
        assert_eq!(sizes.len(), 15, "every round size in [6, 20] occurs");
    }

    #[test]
    fn fixed_neighbours_are_distinct_and_used_uniformly() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
        let fixed = FixedNeighbors::new(1056, 6, 20, false, &mut rng);
        for src in 0..1056u32 {
            let t = fixed.targets(src);
            assert!((6..=20).contains(&t.len()));
            assert_eq!(t.iter().copied().collect::<BTreeSet<_>>().len(), t.len());
            assert!(t.iter().all(|&d| d != src && d < 1056));
        }
        let t: Vec<u32> = fixed.targets(77).to_vec();
        let mut counts = vec![0u32; t.len()];
        let n = 30_000;
        for _ in 0..n {
            let d = fixed.destination(77, &mut rng);
            counts[t.iter().position(|&x| x == d).expect("a target of node 77")] += 1;
        }
        let e = n as f64 / t.len() as f64;
        assert!(counts.iter().all(|&c| (c as f64 - e).abs() < 5.0 * e.sqrt()), "{counts:?}");
    }
}
