//! Mixed traffic of Chaulagain & Yuan (ICS'24 §5.1.3): a share of the network follows an
//! adversarial pattern, the rest sends uniformly at random.
//!
//! * `router-mix:<base>:<percent>` — `round(percent/100 · routers)` routers drawn at random
//!   (once, from the experiment seed); all nodes attached to them take part in `<base>`.
//! * `node-mix:<base>:<percent>` — `round(percent/100 · nodes)` nodes drawn at random take part.
//!
//! `<base>` is `adv+<i>` / `adv+h` (ICS'24 "shift" is `adv+1`: a participant sends to a node
//! drawn uniformly in group `G + i`) or `perm` (the participants form a random permutation
//! among themselves, a bijection of the participating nodes without fixed points unless
//! `traffic.allow_self`). Every other node sends uniformly at random (self excluded unless
//! `traffic.allow_self`). The participating share is exact, not sampled per packet.

use rand::seq::index::sample;
use rand::Rng;

use super::adversarial::Shift;
use super::{random_permutation, uniform_below};
use crate::topology::{Topology, NONE};

/// Which units are drawn to take part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MixLevel {
    Router,
    Node,
}

/// What the participants do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MixBase {
    Shift { shift: usize },
    Permutation,
}

/// Number of routers or nodes taking part.
pub fn participating_units(topo: &Topology, level: MixLevel, percent: f64) -> usize {
    let units = match level {
        MixLevel::Router => topo.routers(),
        MixLevel::Node => topo.nodes(),
    };
    (percent / 100.0 * units as f64).round() as usize
}

#[derive(Debug, Clone)]
pub struct Mix {
    nodes: u32,
    allow_self: bool,
    /// Per node: NONE for a uniform node; for a participant, its permutation image (`perm`
    /// base) or any other value (`shift` base).
    role: Vec<u32>,
    shift: Option<Shift>,
}

impl Mix {
    /// `percent` must give at least one unit (two nodes for `perm`); `Pattern::parse` checks it.
    pub fn new<R: Rng + ?Sized>(
        topo: &Topology,
        level: MixLevel,
        base: MixBase,
        percent: f64,
        allow_self: bool,
        rng: &mut R,
    ) -> Mix {
        let nodes = topo.nodes() as u32;
        let p = topo.p as u32;
        let mut participants: Vec<u32> = match level {
            MixLevel::Router => {
                let chosen = sample(rng, topo.routers(), participating_units(topo, level, percent));
                chosen.into_iter().flat_map(|r| (r as u32 * p)..(r as u32 + 1) * p).collect()
            }
            MixLevel::Node => sample(rng, topo.nodes(), participating_units(topo, level, percent))
                .into_iter()
                .map(|n| n as u32)
                .collect(),
        };
        participants.sort_unstable();
        let mut role = vec![NONE; nodes as usize];
        let shift = match base {
            MixBase::Shift { shift } => {
                for &n in &participants {
                    role[n as usize] = n;
                }
                Some(Shift::new(topo, shift))
            }
            MixBase::Permutation => {
                let perm = random_permutation(participants.len() as u32, allow_self, rng);
                for (i, &n) in participants.iter().enumerate() {
                    role[n as usize] = participants[perm[i] as usize];
                }
                None
            }
        };
        Mix { nodes, allow_self, role, shift }
    }

    pub fn is_participant(&self, node: u32) -> bool {
        self.role[node as usize] != NONE
    }

    #[inline]
    pub fn destination<R: Rng + ?Sized>(&self, src: u32, rng: &mut R) -> u32 {
        let role = self.role[src as usize];
        if role == NONE {
            return uniform_below(self.nodes, src, self.allow_self, rng);
        }
        match &self.shift {
            Some(shift) => shift.destination(src, rng),
            None => role,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Arrangement, TopologyConfig};
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// dfly(4,8,4,33), the ICS'24 1056-node system.
    fn topo() -> Topology {
        Topology::new(&TopologyConfig {
            p: 4,
            a: 8,
            h: 4,
            g: None,
            links_per_pair: Some(1),
            arrangement: Arrangement::Absolute,
            ..TopologyConfig::default()
        })
        .unwrap()
    }

    #[test]
    fn router_mix_selects_whole_routers_in_the_requested_share() {
        let t = topo();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        for percent in [25.0, 50.0, 75.0] {
            let mix = Mix::new(&t, MixLevel::Router, MixBase::Shift { shift: 1 }, percent, false, &mut rng);
            let routers: Vec<u32> = (0..264).filter(|&r| mix.is_participant(r * 4)).collect();
            assert_eq!(routers.len(), (percent / 100.0 * 264.0_f64).round() as usize);
            for r in 0..264u32 {
                let members = (r * 4..r * 4 + 4).filter(|&n| mix.is_participant(n)).count();
                assert!(members == 0 || members == 4, "router {r} split");
            }
        }
    }

    #[test]
    fn shift_mix_sends_the_requested_share_to_the_next_group() {
        // 50 % of the nodes shift to G+1; the uniform half lands in G+1 with probability
        // 32/1055. Expected share of packets into G+1: 0.5 + 0.5·32/1055 ≈ 0.5152. With 10^5
        // packets (sources cycling over all nodes) the sd is 0.0016; tolerance 5 sd.
        let t = topo();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
        let mix = Mix::new(&t, MixLevel::Node, MixBase::Shift { shift: 1 }, 50.0, false, &mut rng);
        assert_eq!((0..1056).filter(|&n| mix.is_participant(n)).count(), 528);
        let n = 100_000;
        let mut next_group = 0;
        for i in 0..n {
            let src = (i % 1056) as u32;
            let d = mix.destination(src, &mut rng);
            if mix.is_participant(src) {
                assert_eq!(d / 32, (src / 32 + 1) % 33);
            }
            next_group += (d / 32 == (src / 32 + 1) % 33) as u32;
        }
        let p = 0.5 + 0.5 * 32.0 / 1055.0;
        let sd = (p * (1.0 - p) / n as f64).sqrt();
        let got = next_group as f64 / n as f64;
        assert!((got - p).abs() < 5.0 * sd, "{got} vs {p}");
    }

    #[test]
    fn permutation_mix_is_a_bijection_of_the_participants() {
        let t = topo();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        for (level, percent) in [(MixLevel::Node, 25.0), (MixLevel::Node, 75.0), (MixLevel::Router, 50.0)] {
            let mix = Mix::new(&t, level, MixBase::Permutation, percent, false, &mut rng);
            let members: Vec<u32> = (0..1056).filter(|&n| mix.is_participant(n)).collect();
            let want = match level {
                MixLevel::Node => (percent / 100.0 * 1056.0_f64).round() as usize,
                MixLevel::Router => 4 * (percent / 100.0 * 264.0_f64).round() as usize,
            };
            assert_eq!(members.len(), want);
            let mut images: Vec<u32> = members.iter().map(|&n| mix.destination(n, &mut rng)).collect();
            assert!(members.iter().zip(&images).all(|(s, d)| s != d), "no fixed points");
            // Deterministic per node.
            assert!(members.iter().zip(&images).all(|(&s, &d)| mix.destination(s, &mut rng) == d));
            images.sort_unstable();
            assert_eq!(images, members, "participants map onto participants, one to one");
        }
    }
}
