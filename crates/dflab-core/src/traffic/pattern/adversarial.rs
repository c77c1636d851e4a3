//! Adversarial patterns of the Dragonfly literature, defined on groups and routers.
//!
//! * **ADV+i** (`adv+<i>`, SST `Tornado`, ICS'24 "shift" for i = 1): every node of group G sends
//!   to a node drawn uniformly in group `(G + i) mod g`.
//! * **ADVc** (`advc`, adversarial-consecutive; Benito et al. JPDC'19 §5.2, Fig. 2): every node
//!   of group G sends to a node drawn uniformly in one of the `h` groups wired to a single router
//!   of G, so that router's global links are the bottleneck. The paper states it for FOGSim's
//!   palm-tree wiring, where those groups are the consecutive `G+1, …, G+h` behind router
//!   `a−1`. dflab keeps the defining property on every arrangement: the router is the one that
//!   owns G's (first) link to `G+1`, and the targets are the distinct groups its global ports
//!   reach (fewer than `h` when ports are unconnected or links parallel). On `palmtree` this is
//!   exactly the paper's `+1, …, +h`.
//! * **ADVl** (`advl`, adversarial-local, JPDC'19 §5.2): every node of router `r` sends to a
//!   node drawn uniformly on router `(r + 1) mod a` of its own group; only intra-group traffic.

use rand::Rng;

use crate::topology::{Topology, NONE};

/// ADV+i.
#[derive(Debug, Clone)]
pub struct Shift {
    shift: u32,
    group_nodes: u32,
    groups: u32,
}

impl Shift {
    pub fn new(topo: &Topology, shift: usize) -> Shift {
        Shift { shift: (shift % topo.g) as u32, group_nodes: (topo.a * topo.p) as u32, groups: topo.g as u32 }
    }

    #[inline]
    pub fn destination<R: Rng + ?Sized>(&self, src: u32, rng: &mut R) -> u32 {
        let dg = (src / self.group_nodes + self.shift) % self.groups;
        dg * self.group_nodes + rng.gen_range(0..self.group_nodes)
    }
}

/// ADVc: per source group, the groups wired to its bottleneck router.
#[derive(Debug, Clone)]
pub struct Consecutive {
    group_nodes: u32,
    /// `targets[offsets[G]..offsets[G + 1]]` are the destination groups of group G.
    offsets: Vec<u32>,
    targets: Vec<u32>,
}

/// Index in group `grp` of the router whose global links ADVc loads: the owner of the group's
/// first link to group `grp + 1`.
pub fn bottleneck_router(topo: &Topology, grp: u32) -> u32 {
    let next = (grp + 1) % topo.g as u32;
    topo.gateways(grp, next)[0].0 as u32
}

impl Consecutive {
    /// Needs at least two groups (checked by `Pattern::parse`).
    pub fn new(topo: &Topology) -> Consecutive {
        let mut offsets = vec![0];
        let mut targets = Vec::new();
        for grp in 0..topo.g as u32 {
            let router = grp * topo.a as u32 + bottleneck_router(topo, grp);
            let start = targets.len();
            for k in 0..topo.h as u16 {
                let d = topo.global_port_group(router, topo.first_global_port() + k);
                if d != NONE && !targets[start..].contains(&d) {
                    targets.push(d);
                }
            }
            offsets.push(targets.len() as u32);
        }
        Consecutive { group_nodes: (topo.a * topo.p) as u32, offsets, targets }
    }

    /// Destination groups of the nodes of group `grp`.
    pub fn targets(&self, grp: u32) -> &[u32] {
        &self.targets[self.offsets[grp as usize] as usize..self.offsets[grp as usize + 1] as usize]
    }

    #[inline]
    pub fn destination<R: Rng + ?Sized>(&self, src: u32, rng: &mut R) -> u32 {
        let groups = self.targets(src / self.group_nodes);
        let dg = groups[rng.gen_range(0..groups.len())];
        dg * self.group_nodes + rng.gen_range(0..self.group_nodes)
    }
}

/// ADVl.
#[derive(Debug, Clone)]
pub struct Local {
    p: u32,
    a: u32,
}

impl Local {
    /// Needs at least two routers per group (checked by `Pattern::parse`).
    pub fn new(topo: &Topology) -> Local {
        Local { p: topo.p as u32, a: topo.a as u32 }
    }

    #[inline]
    pub fn destination<R: Rng + ?Sized>(&self, src: u32, rng: &mut R) -> u32 {
        let router = src / self.p;
        let next = router - router % self.a + (router % self.a + 1) % self.a;
        next * self.p + rng.gen_range(0..self.p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Arrangement, TopologyConfig};
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;
    use std::collections::BTreeSet;

    fn topo(p: usize, a: usize, h: usize, l: usize, arrangement: Arrangement) -> Topology {
        Topology::new(&TopologyConfig {
            p,
            a,
            h,
            g: None,
            links_per_pair: Some(l),
            arrangement,
            ..TopologyConfig::default()
        })
        .unwrap()
    }

    /// Groups reached by the global ports of router `index` of group `grp`.
    fn wired_groups(t: &Topology, grp: u32, index: u32) -> BTreeSet<u32> {
        let router = grp * t.a as u32 + index;
        (0..t.h as u16).map(|k| t.global_port_group(router, t.first_global_port() + k)).filter(|&d| d != NONE).collect()
    }

    #[test]
    fn advc_targets_only_the_groups_wired_to_one_source_router() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        for arr in [Arrangement::Absolute, Arrangement::Relative, Arrangement::Palmtree, Arrangement::Circulant] {
            let t = topo(2, 4, 2, 1, arr);
            let advc = Consecutive::new(&t);
            let gn = (t.a * t.p) as u32;
            for grp in 0..t.g as u32 {
                let r = bottleneck_router(&t, grp);
                let wired = wired_groups(&t, grp, r);
                assert_eq!(wired.len(), t.h, "{arr:?} group {grp}");
                assert!(wired.contains(&((grp + 1) % t.g as u32)));
                let mut seen = BTreeSet::new();
                for i in 0..400 {
                    let src = grp * gn + i % gn;
                    let d = advc.destination(src, &mut rng);
                    seen.insert(d / gn);
                }
                assert_eq!(seen, wired, "{arr:?} group {grp}");
            }
        }
    }

    #[test]
    fn advc_on_palmtree_is_the_papers_consecutive_groups_behind_the_last_router() {
        // dfly(4,8,4,33) palm-tree: JPDC'19 Fig. 2, groups G+1..G+h all on router a-1.
        let t = topo(4, 8, 4, 1, Arrangement::Palmtree);
        let advc = Consecutive::new(&t);
        for grp in 0..t.g as u32 {
            assert_eq!(bottleneck_router(&t, grp), 7);
            let want: BTreeSet<u32> = (1..=4).map(|i| (grp + i) % 33).collect();
            assert_eq!(advc.targets(grp).iter().copied().collect::<BTreeSet<_>>(), want);
        }
    }

    #[test]
    fn advc_with_parallel_links_lists_each_group_once() {
        // dfly(2,4,4,5) with 4 links per pair: each router's 4 ports reach distinct or repeated
        // groups; the target list has no duplicates and only wired groups.
        let t = topo(2, 4, 4, 4, Arrangement::Absolute);
        let advc = Consecutive::new(&t);
        for grp in 0..t.g as u32 {
            let targets = advc.targets(grp);
            let set: BTreeSet<u32> = targets.iter().copied().collect();
            assert_eq!(set.len(), targets.len());
            assert_eq!(set, wired_groups(&t, grp, bottleneck_router(&t, grp)));
        }
    }

    #[test]
    fn advl_stays_in_the_group_on_the_next_router() {
        let t = topo(3, 5, 2, 1, Arrangement::Absolute);
        let advl = Local::new(&t);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
        for src in 0..t.nodes() as u32 {
            let mut hosts = BTreeSet::new();
            for _ in 0..60 {
                let d = advl.destination(src, &mut rng);
                let (rs, rd) = (t.router_of_node(src), t.router_of_node(d));
                assert_eq!(t.group_of(rs), t.group_of(rd));
                assert_eq!(t.index_in_group(rd), (t.index_in_group(rs) + 1) % 5);
                hosts.insert(d % 3);
            }
            assert_eq!(hosts.len(), 3, "every node of the next router is a target");
        }
    }

    #[test]
    fn shift_wraps_around() {
        let t = topo(2, 4, 2, 1, Arrangement::Absolute);
        let s = Shift::new(&t, 10); // g = 9: same as adv+1
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        assert_eq!(s.destination(8 * 8 + 3, &mut rng) / 8, 0);
    }
}
