//! Destination patterns.
//!
//! * `ur` — uniform random over all other nodes. SST's `Uniform` does not exclude the source
//!   (qadaptive-reference.md §3.2); dflab excludes it by default and `traffic.allow_self = true`
//!   gives the SST behaviour.
//! * `adv+i` — ADV+i / SST `Tornado`: destination group `(G + i) mod g`, node uniform inside it.
//!   `adv+h` uses `i = h`.
//! * `perm` — a random node-level permutation drawn once from the experiment seed, with no
//!   fixed points unless `allow_self` is set.

use rand::seq::SliceRandom;
use rand::Rng;

use crate::error::{Error, Result};
use crate::topology::Topology;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    Uniform,
    Adversarial { shift: usize },
    Permutation,
}

const ALLOWED: &str = "ur, adv+<i> (1 <= i < g), adv+h, perm";

impl Pattern {
    pub fn parse(text: &str, topo: &Topology) -> Result<Pattern> {
        let s = text.trim().to_ascii_lowercase();
        let bad = || Error::config("traffic.pattern", format!("'{text}' is not allowed; allowed: {ALLOWED}"));
        match s.as_str() {
            "ur" | "uniform" => Ok(Pattern::Uniform),
            "perm" | "permutation" => Ok(Pattern::Permutation),
            _ => {
                let rest = s.strip_prefix("adv+").ok_or_else(bad)?;
                let shift = if rest == "h" { topo.h } else { rest.parse::<usize>().map_err(|_| bad())? };
                if shift % topo.g == 0 {
                    return Err(Error::config(
                        "traffic.pattern",
                        format!("'{text}' sends every group to itself (g = {}); allowed: {ALLOWED}", topo.g),
                    ));
                }
                Ok(Pattern::Adversarial { shift })
            }
        }
    }
}

/// Draws destinations for one pattern. Stateless per call except for the permutation table.
pub struct PatternSampler {
    pattern: Pattern,
    nodes: u32,
    group_nodes: u32,
    groups: u32,
    allow_self: bool,
    perm: Vec<u32>,
}

impl PatternSampler {
    pub fn new<R: Rng>(pattern: Pattern, topo: &Topology, allow_self: bool, rng: &mut R) -> PatternSampler {
        let nodes = topo.nodes() as u32;
        let perm =
            if pattern == Pattern::Permutation { random_permutation(nodes, allow_self, rng) } else { Vec::new() };
        PatternSampler {
            pattern,
            nodes,
            group_nodes: (topo.a * topo.p) as u32,
            groups: topo.g as u32,
            allow_self,
            perm,
        }
    }

    #[inline]
    pub fn destination<R: Rng>(&self, src: u32, rng: &mut R) -> u32 {
        match self.pattern {
            Pattern::Uniform => {
                if self.allow_self || self.nodes == 1 {
                    rng.gen_range(0..self.nodes)
                } else {
                    let d = rng.gen_range(0..self.nodes - 1);
                    if d >= src {
                        d + 1
                    } else {
                        d
                    }
                }
            }
            Pattern::Adversarial { shift } => {
                let grp = src / self.group_nodes;
                let dg = (grp + shift as u32) % self.groups;
                dg * self.group_nodes + rng.gen_range(0..self.group_nodes)
            }
            Pattern::Permutation => self.perm[src as usize],
        }
    }
}

/// A uniformly shuffled permutation; fixed points are then removed by swapping with the next
/// position, which keeps it a bijection (`perm[i+1] != i` because `perm[i] == i`).
pub fn random_permutation<R: Rng>(n: u32, allow_self: bool, rng: &mut R) -> Vec<u32> {
    let mut perm: Vec<u32> = (0..n).collect();
    perm.shuffle(rng);
    if !allow_self && n > 1 {
        for i in 0..n as usize {
            if perm[i] == i as u32 {
                let j = (i + 1) % n as usize;
                perm.swap(i, j);
            }
        }
    }
    perm
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Arrangement, TopologyConfig};
    use proptest::prelude::*;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn topo() -> Topology {
        Topology::new(&TopologyConfig {
            p: 2,
            a: 4,
            h: 2,
            g: None,
            links_per_pair: 1,
            arrangement: Arrangement::Absolute,
        })
        .unwrap()
    }

    #[test]
    fn parse_names_are_case_insensitive() {
        let t = topo();
        assert_eq!(Pattern::parse("UR", &t).unwrap(), Pattern::Uniform);
        assert_eq!(Pattern::parse("ADV+1", &t).unwrap(), Pattern::Adversarial { shift: 1 });
        assert_eq!(Pattern::parse("adv+h", &t).unwrap(), Pattern::Adversarial { shift: 2 });
        assert!(Pattern::parse("adv+9", &t).is_err()); // g = 9
        assert!(Pattern::parse("tornado", &t).unwrap_err().to_string().contains("allowed"));
    }

    #[test]
    fn uniform_never_picks_self_and_covers_everything() {
        let t = topo();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let s = PatternSampler::new(Pattern::Uniform, &t, false, &mut rng);
        let mut seen = vec![0u32; t.nodes()];
        for _ in 0..20_000 {
            let d = s.destination(5, &mut rng);
            assert_ne!(d, 5);
            seen[d as usize] += 1;
        }
        let expected = 20_000.0 / (t.nodes() - 1) as f64;
        for (i, &c) in seen.iter().enumerate() {
            if i != 5 {
                // 4.5 sigma band of a binomial with mean ~282: a fair sampler fails this ~never.
                assert!((c as f64 - expected).abs() < 4.5 * expected.sqrt(), "node {i}: {c}");
            }
        }
    }

    #[test]
    fn adversarial_shift_targets_the_shifted_group() {
        let t = topo();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(4);
        for shift in 1..t.g {
            let s = PatternSampler::new(Pattern::Adversarial { shift }, &t, false, &mut rng);
            for src in 0..t.nodes() as u32 {
                let d = s.destination(src, &mut rng);
                let sg = src / 8;
                assert_eq!(d / 8, (sg + shift as u32) % t.g as u32);
            }
        }
    }

    proptest! {
        #[test]
        fn permutations_are_derangements(n in 2u32..500, seed in any::<u64>()) {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
            let p = random_permutation(n, false, &mut rng);
            let mut seen = vec![false; n as usize];
            for (i, &d) in p.iter().enumerate() {
                prop_assert_ne!(d as usize, i);
                prop_assert!(!seen[d as usize]);
                seen[d as usize] = true;
            }
        }
    }
}
