//! Destination patterns: what `traffic.pattern` names, parsed once per experiment
//! ([`Pattern::parse`]) and drawn per packet ([`PatternSampler::destination`]). Names are
//! case-insensitive; parameters follow the name after `:`.
//!
//! * `ur` — uniform random over all other nodes. SST's `Uniform` does not exclude the source
//!   (qadaptive-reference.md §3.2); dflab excludes it by default and `traffic.allow_self = true`
//!   gives the SST behaviour (for every pattern that could pick the source).
//! * `adv+<i>`, `adv+h`, `advc`, `advl` — adversarial patterns ([`adversarial`]).
//! * `hot`, `hot:<traffic%>:<nodes%>` — hot region ([`hot_region`]).
//! * `perm` — a random node-level permutation drawn once from the experiment seed (ICS'24
//!   "random permutation": each node has one fixed destination), with no fixed points unless
//!   `allow_self` is set.
//! * `router-mix:<base>:<percent>`, `node-mix:<base>:<percent>` — ICS'24 mixes of `adv+<i>` or
//!   `perm` with uniform traffic ([`mix`]).
//! * `stencil`, `m2m` (optionally `:<X>x<Y>x<Z>`) — 3D stencil and many-to-many on a grid of the
//!   nodes ([`grid`]).
//! * `rn`, `rn-fixed` (optionally `:<min>:<max>`) — random neighbours ([`neighbors`]).
//!
//! Random choices made once (permutations, mix participants, fixed neighbour sets) come from
//! the experiment seed; per-packet draws from the source node's stream. Round-based patterns
//! keep each node's place in its round.

pub mod adversarial;
pub mod grid;
pub mod hot_region;
pub mod mix;
pub mod neighbors;

use rand::seq::SliceRandom;
use rand::Rng;

use crate::config::NicPolicy;
use crate::error::{Error, Result};
use crate::topology::Topology;

pub use grid::Grid;
pub use mix::{MixBase, MixLevel};

#[derive(Debug, Clone, PartialEq)]
pub enum Pattern {
    Uniform,
    /// ADV+i.
    Adversarial {
        shift: usize,
    },
    /// ADVc.
    AdversarialConsecutive,
    /// ADVl.
    AdversarialLocal,
    /// `traffic` of the packets go to the first `nodes` of the node ids (fractions).
    HotRegion {
        traffic: f64,
        nodes: f64,
    },
    Permutation,
    Mix {
        level: MixLevel,
        base: MixBase,
        percent: f64,
    },
    Stencil {
        grid: Grid,
    },
    ManyToMany {
        grid: Grid,
    },
    /// `fixed`: one set of targets per node for the whole run, instead of fresh draws per round.
    RandomNeighbors {
        min: u32,
        max: u32,
        fixed: bool,
    },
}

const ALLOWED: &str = "ur, adv+<i> (1 <= i < g), adv+h, advc, advl, hot[:<traffic%>:<nodes%>], perm, \
                       router-mix:<adv+i|perm>:<percent>, node-mix:<adv+i|perm>:<percent>, \
                       stencil[:<X>x<Y>x<Z>], m2m[:<X>x<Y>x<Z>], rn[:<min>:<max>], rn-fixed[:<min>:<max>]";

/// Largest round / neighbour-set size accepted by `rn` and `rn-fixed`.
const MAX_NEIGHBOURS: u32 = 1024;

impl Pattern {
    /// The pattern `text` on the network's compute nodes ([`Topology::pattern_view`]).
    pub fn parse(text: &str, topo: &Topology) -> Result<Pattern> {
        let view = topo.pattern_view()?;
        let pattern = Self::parse_on(text, &view)?;
        if pattern == Pattern::AdversarialConsecutive && topo.compute_groups < topo.g {
            return Err(Error::config(
                "traffic.pattern",
                format!("'{text}' follows the global wiring, which groups without compute nodes break; allowed: every other pattern"),
            ));
        }
        Ok(pattern)
    }

    /// [`Pattern::parse`] on a topology whose endpoints are the compute nodes.
    fn parse_on(text: &str, topo: &Topology) -> Result<Pattern> {
        let s = text.trim().to_ascii_lowercase();
        let bad = |why: &str| Error::config("traffic.pattern", format!("'{text}' {why}; allowed: {ALLOWED}"));
        let unknown = || bad("is not allowed");
        let mut parts = s.split(':');
        let name = parts.next().unwrap_or_default();
        let args: Vec<&str> = parts.collect();
        let no_args = |p: Pattern| if args.is_empty() { Ok(p) } else { Err(bad("takes no parameters")) };
        let pattern = match name {
            "ur" | "uniform" => no_args(Pattern::Uniform)?,
            "perm" | "permutation" => no_args(Pattern::Permutation)?,
            "advc" => no_args(Pattern::AdversarialConsecutive)?,
            "advl" => no_args(Pattern::AdversarialLocal)?,
            "hot" => {
                let (traffic, nodes) = match args[..] {
                    [] => (25.0, 12.5),
                    [t, n] => (percent(t).ok_or_else(unknown)?, percent(n).ok_or_else(unknown)?),
                    _ => return Err(unknown()),
                };
                Pattern::HotRegion { traffic: traffic / 100.0, nodes: nodes / 100.0 }
            }
            "router-mix" | "node-mix" => {
                let [base, pct] = args[..] else { return Err(unknown()) };
                let base = match Pattern::parse_on(base, topo)? {
                    Pattern::Adversarial { shift } => MixBase::Shift { shift },
                    Pattern::Permutation => MixBase::Permutation,
                    _ => return Err(bad("mixes only adv+<i>, adv+h or perm with uniform traffic")),
                };
                let level = if name == "router-mix" { MixLevel::Router } else { MixLevel::Node };
                Pattern::Mix { level, base, percent: percent(pct).ok_or_else(unknown)? }
            }
            "stencil" | "m2m" | "many-to-many" => {
                let grid = match args[..] {
                    [] => Grid::of_topology(topo),
                    [dims] => Grid { dims: parse_dims(dims).ok_or_else(unknown)? },
                    _ => return Err(unknown()),
                };
                if name == "stencil" {
                    Pattern::Stencil { grid }
                } else {
                    Pattern::ManyToMany { grid }
                }
            }
            "rn" | "random-neighbors" | "rn-fixed" | "random-neighbors-fixed" => {
                let (min, max) = match args[..] {
                    [] => (6, 20),
                    [lo, hi] => (lo.parse().map_err(|_| unknown())?, hi.parse().map_err(|_| unknown())?),
                    _ => return Err(unknown()),
                };
                Pattern::RandomNeighbors { min, max, fixed: name.ends_with("fixed") }
            }
            _ => {
                let rest = name.strip_prefix("adv+").ok_or_else(unknown)?;
                let shift = if rest == "h" { topo.h } else { rest.parse::<usize>().map_err(|_| unknown())? };
                no_args(Pattern::Adversarial { shift })?
            }
        };
        pattern.check(text, topo)?;
        Ok(pattern)
    }

    /// The parameters fit the topology.
    fn check(&self, text: &str, topo: &Topology) -> Result<()> {
        let fail = |why: String| Err(Error::config("traffic.pattern", format!("'{text}' {why}; allowed: {ALLOWED}")));
        let nodes = topo.nodes() as u64;
        match *self {
            Pattern::Adversarial { shift } | Pattern::Mix { base: MixBase::Shift { shift }, .. }
                if shift == 0 || shift >= topo.g =>
            {
                if topo.g < 2 {
                    fail("needs at least 2 groups".into())
                } else {
                    fail(format!("shifts by {shift} groups; adv+<i> needs 1 <= i <= g - 1 = {}", topo.g - 1))
                }
            }
            Pattern::AdversarialConsecutive if topo.g < 2 => fail("needs at least 2 groups".into()),
            Pattern::AdversarialLocal if topo.a < 2 => fail("needs at least 2 routers per group".into()),
            Pattern::HotRegion { traffic, nodes } if traffic <= 0.0 || nodes <= 0.0 => {
                fail("needs percentages in (0, 100]".into())
            }
            Pattern::Mix { level, base, percent } => {
                let units = mix::participating_units(topo, level, percent);
                let members = if level == MixLevel::Router { units * topo.p } else { units };
                let least = if base == MixBase::Permutation { 2 } else { 1 };
                if percent <= 0.0 || members < least {
                    fail(format!("gives {members} participating nodes (at least {least} needed)"))
                } else {
                    Ok(())
                }
            }
            Pattern::Stencil { grid } | Pattern::ManyToMany { grid } => {
                let [x, y, z] = grid.dims;
                let kind = if matches!(self, Pattern::Stencil { .. }) { "stencil" } else { "m2m" };
                if x as u64 * y as u64 * z as u64 != nodes {
                    fail(format!("uses a {x}x{y}x{z} grid for {nodes} nodes (X*Y*Z must equal the node count)"))
                } else if kind == "stencil" && grid.dims.iter().any(|&d| d < 2) {
                    fail(format!(
                        "uses a {x}x{y}x{z} grid; every stencil dimension must be >= 2 (give {kind}:<X>x<Y>x<Z>)"
                    ))
                } else if z < 2 {
                    fail(format!("uses a {x}x{y}x{z} grid; many-to-many needs Z >= 2"))
                } else {
                    Ok(())
                }
            }
            Pattern::RandomNeighbors { min, max, fixed } => {
                if min < 1 || min > max || max > MAX_NEIGHBOURS {
                    fail(format!("needs 1 <= min <= max <= {MAX_NEIGHBOURS}"))
                } else if fixed && max as u64 >= nodes {
                    fail(format!("asks for up to {max} distinct targets among {} other nodes", nodes - 1))
                } else {
                    Ok(())
                }
            }
            _ => Ok(()),
        }
    }
}

/// A percentage in (0, 100].
fn percent(s: &str) -> Option<f64> {
    let v: f64 = s.trim_end_matches('%').parse().ok()?;
    (v > 0.0 && v <= 100.0).then_some(v)
}

/// `<X>x<Y>x<Z>`, each at least 1.
fn parse_dims(s: &str) -> Option<[u32; 3]> {
    let v: Vec<u32> = s.split('x').map(|d| d.parse().ok().filter(|&d| d >= 1)).collect::<Option<_>>()?;
    v.try_into().ok()
}

/// Uniform over the node ids `0..n`, excluding `src` unless `allow_self` (or nothing else is
/// left).
#[inline]
pub fn uniform_below<R: Rng + ?Sized>(n: u32, src: u32, allow_self: bool, rng: &mut R) -> u32 {
    if allow_self || src >= n || n == 1 {
        rng.gen_range(0..n)
    } else {
        let d = rng.gen_range(0..n - 1);
        // Skip the source without a branch: `d >= src` is a coin flip that a branch
        // mispredicts half the time (about one in eight generated packets' cost).
        d + (d >= src) as u32
    }
}

/// The per-pattern state of a sampler.
enum Kind {
    Uniform,
    Shift(adversarial::Shift),
    Consecutive(adversarial::Consecutive),
    Local(adversarial::Local),
    Hot(hot_region::HotRegion),
    Table(Vec<u32>),
    Mix(mix::Mix),
    Stencil(grid::Stencil),
    ManyToMany(grid::ManyToMany),
    Neighbors(neighbors::RandomNeighbors),
    FixedNeighbors(neighbors::FixedNeighbors),
}

/// Draws destinations for one pattern. Holds the tables drawn once and each node's place in
/// its round, hence `destination(&mut self, …)`.
pub struct PatternSampler {
    kind: Kind,
    /// Compute nodes (the pattern's endpoints).
    nodes: u32,
    allow_self: bool,
    /// Uniform traffic without the source, the common case, drawn without the dispatch.
    others: Option<UniformOthers>,
    /// NICs per node: above 1, the pattern runs on nodes and [`PatternSampler::destination`]
    /// maps NICs to nodes and back.
    nics: u32,
    nic_policy: NicPolicy,
}

/// `uniform_below(nodes, src, false, rng)` for `src < nodes` and `nodes > 1`, with rand's
/// constants for `gen_range(0..nodes - 1)` computed once: the same draws from the same stream.
#[derive(Debug, Clone, Copy)]
struct UniformOthers {
    nodes: u32,
    /// `nodes − 1`, the size of the range drawn.
    range: u32,
    /// rand 0.8's rejection bound for that range (`UniformInt::sample_single_inclusive` for
    /// `u32`: `(range << range.leading_zeros()) − 1`).
    zone: u32,
}

impl UniformOthers {
    fn new(nodes: u32) -> UniformOthers {
        let range = nodes - 1;
        UniformOthers { nodes, range, zone: (range << range.leading_zeros()).wrapping_sub(1) }
    }

    /// rand's loop: a widening multiply of `next_u32` by the range, rejecting a low half above
    /// the zone; then the source is skipped.
    #[inline(always)]
    fn draw<R: Rng>(&self, src: u32, rng: &mut R) -> u32 {
        let d = loop {
            let m = rng.next_u32() as u64 * self.range as u64;
            if m as u32 <= self.zone {
                break (m >> 32) as u32;
            }
        };
        // Skip the source without a branch: `d >= src` is a coin flip that a branch
        // mispredicts half the time (about one in eight generated packets' cost).
        d + (d >= src) as u32
    }
}

impl PatternSampler {
    /// `pattern` comes from [`Pattern::parse`] on the same topology; `rng` is the experiment's
    /// pattern stream, used for the draws made once.
    /// It draws destination NICs at random (see [`PatternSampler::with_nic_policy`]).
    pub fn new<R: Rng>(pattern: Pattern, topo: &Topology, allow_self: bool, rng: &mut R) -> PatternSampler {
        let nics = topo.nics as u32;
        let view = topo.pattern_view().expect("Pattern::parse built the view");
        let topo = view.as_ref();
        let nodes = topo.nodes() as u32;
        let kind = match pattern {
            Pattern::Uniform => Kind::Uniform,
            Pattern::Adversarial { shift } => Kind::Shift(adversarial::Shift::new(topo, shift)),
            Pattern::AdversarialConsecutive => Kind::Consecutive(adversarial::Consecutive::new(topo)),
            Pattern::AdversarialLocal => Kind::Local(adversarial::Local::new(topo)),
            Pattern::HotRegion { traffic, nodes: share } => {
                Kind::Hot(hot_region::HotRegion::new(nodes, traffic, share, allow_self))
            }
            Pattern::Permutation => Kind::Table(random_permutation(nodes, allow_self, rng)),
            Pattern::Mix { level, base, percent } => {
                Kind::Mix(mix::Mix::new(topo, level, base, percent, allow_self, rng))
            }
            Pattern::Stencil { grid } => Kind::Stencil(grid::Stencil::new(grid)),
            Pattern::ManyToMany { grid } => Kind::ManyToMany(grid::ManyToMany::new(grid)),
            Pattern::RandomNeighbors { min, max, fixed: false } => {
                Kind::Neighbors(neighbors::RandomNeighbors::new(nodes, min, max, allow_self))
            }
            Pattern::RandomNeighbors { min, max, fixed: true } => {
                Kind::FixedNeighbors(neighbors::FixedNeighbors::new(nodes, min, max, allow_self, rng))
            }
        };
        let others = (matches!(kind, Kind::Uniform) && !allow_self && nodes > 1).then(|| UniformOthers::new(nodes));
        PatternSampler { kind, nodes, allow_self, others, nics, nic_policy: NicPolicy::Random }
    }

    /// Which NIC of the destination node receives (matters with several NICs per node).
    pub fn with_nic_policy(mut self, policy: NicPolicy) -> PatternSampler {
        self.nic_policy = policy;
        self
    }

    /// Whether the pattern is uniform random (`ur`).
    pub fn is_uniform(&self) -> bool {
        matches!(self.kind, Kind::Uniform)
    }

    /// Whether the pattern is a random node permutation (`perm`).
    pub fn is_permutation(&self) -> bool {
        matches!(self.kind, Kind::Table(_))
    }

    /// The destination endpoint of a packet from endpoint `src` (a compute endpoint).
    #[inline(always)]
    pub fn destination<R: Rng>(&mut self, src: u32, rng: &mut R) -> u32 {
        if self.nics != 1 {
            return self.destination_nic(src, rng);
        }
        self.destination_node(src, rng)
    }

    /// Several NICs per node: the pattern maps the source's node to a destination node, and
    /// the policy picks the NIC there.
    #[inline(never)]
    fn destination_nic<R: Rng>(&mut self, src: u32, rng: &mut R) -> u32 {
        let node = self.destination_node(src / self.nics, rng);
        let nic = match self.nic_policy {
            NicPolicy::Random => rng.gen_range(0..self.nics),
            NicPolicy::SameIndex => src % self.nics,
        };
        node * self.nics + nic
    }

    #[inline(always)]
    fn destination_node<R: Rng>(&mut self, src: u32, rng: &mut R) -> u32 {
        match self.others {
            Some(u) if src < u.nodes => u.draw(src, rng),
            _ => self.destination_any(src, rng),
        }
    }

    /// Every pattern (out of line: the uniform case is drawn above).
    #[inline(never)]
    fn destination_any<R: Rng>(&mut self, src: u32, rng: &mut R) -> u32 {
        match &mut self.kind {
            Kind::Uniform => uniform_below(self.nodes, src, self.allow_self, rng),
            Kind::Shift(s) => s.destination(src, rng),
            Kind::Consecutive(c) => c.destination(src, rng),
            Kind::Local(l) => l.destination(src, rng),
            Kind::Hot(h) => h.destination(src, rng),
            Kind::Table(t) => t[src as usize],
            Kind::Mix(m) => m.destination(src, rng),
            Kind::Stencil(s) => s.destination(src),
            Kind::ManyToMany(m) => m.destination(src),
            Kind::Neighbors(n) => n.destination(src, rng),
            Kind::FixedNeighbors(f) => f.destination(src, rng),
        }
    }
}

/// A uniformly shuffled permutation; fixed points are then removed by swapping with the next
/// position, which keeps it a bijection (`perm[i+1] != i` because `perm[i] == i`).
pub fn random_permutation<R: Rng + ?Sized>(n: u32, allow_self: bool, rng: &mut R) -> Vec<u32> {
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
            links_per_pair: Some(1),
            arrangement: Arrangement::Absolute,
            ..TopologyConfig::default()
        })
        .unwrap()
    }

    /// The precomputed uniform draw takes exactly `uniform_below`'s values from the stream.
    #[test]
    fn uniform_others_draws_as_uniform_below() {
        for n in [2, 3, 7, 1056, 1057, 4096, 65_537, 1 << 31, u32::MAX] {
            let u = UniformOthers::new(n);
            let mut a = Xoshiro256PlusPlus::seed_from_u64(n as u64);
            let mut b = a.clone();
            for i in 0..20_000u32 {
                let src = i.wrapping_mul(2_654_435_761) % n;
                assert_eq!(u.draw(src, &mut a), uniform_below(n, src, false, &mut b), "n {n}");
            }
        }
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
        let mut s = PatternSampler::new(Pattern::Uniform, &t, false, &mut rng);
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
            let mut s = PatternSampler::new(Pattern::Adversarial { shift }, &t, false, &mut rng);
            for src in 0..t.nodes() as u32 {
                let d = s.destination(src, &mut rng);
                let sg = src / 8;
                assert_eq!(d / 8, (sg + shift as u32) % t.g as u32);
            }
        }
    }

    #[test]
    fn every_pattern_name_parses_with_its_parameters() {
        let t = topo(); // dfly(2,4,2,9): 72 nodes, 36 routers
        let ok = |s: &str| Pattern::parse(s, &t).unwrap_or_else(|e| panic!("{s}: {e}"));
        assert_eq!(ok("ADVc"), Pattern::AdversarialConsecutive);
        assert_eq!(ok(" advl "), Pattern::AdversarialLocal);
        assert_eq!(ok("hot"), Pattern::HotRegion { traffic: 0.25, nodes: 0.125 });
        assert_eq!(ok("hot:50:10%"), Pattern::HotRegion { traffic: 0.5, nodes: 0.1 });
        assert_eq!(
            ok("Router-Mix:ADV+1:25"),
            Pattern::Mix { level: MixLevel::Router, base: MixBase::Shift { shift: 1 }, percent: 25.0 }
        );
        assert_eq!(
            ok("node-mix:perm:50"),
            Pattern::Mix { level: MixLevel::Node, base: MixBase::Permutation, percent: 50.0 }
        );
        assert_eq!(
            ok("node-mix:adv+h:75"),
            Pattern::Mix { level: MixLevel::Node, base: MixBase::Shift { shift: 2 }, percent: 75.0 }
        );
        assert_eq!(ok("stencil"), Pattern::Stencil { grid: Grid { dims: [2, 4, 9] } });
        assert_eq!(ok("stencil:6x3x4"), Pattern::Stencil { grid: Grid { dims: [6, 3, 4] } });
        assert_eq!(ok("m2m"), Pattern::ManyToMany { grid: Grid { dims: [2, 4, 9] } });
        assert_eq!(ok("many-to-many:1x1x72"), Pattern::ManyToMany { grid: Grid { dims: [1, 1, 72] } });
        assert_eq!(ok("rn"), Pattern::RandomNeighbors { min: 6, max: 20, fixed: false });
        assert_eq!(ok("random-neighbors:2:3"), Pattern::RandomNeighbors { min: 2, max: 3, fixed: false });
        assert_eq!(ok("rn-fixed"), Pattern::RandomNeighbors { min: 6, max: 20, fixed: true });
    }

    #[test]
    fn bad_parameters_name_the_field_and_the_allowed_forms() {
        let t = topo();
        for s in [
            "hot:0:10",
            "hot:30",
            "hot:30:101",
            "router-mix:ur:50",
            "router-mix:adv+1",
            "node-mix:adv+9:50",
            "node-mix:perm:1",    // 0.72 nodes rounds to 1: a permutation needs 2
            "router-mix:adv+1:1", // 0.36 routers rounds to 0
            "stencil:4x4x4",      // 64 != 72 nodes
            "stencil:1x8x9",
            "m2m:72x1x1",
            "rn:0:5",
            "rn:7:6",
            "rn:6:2000",
            "rn-fixed:6:72",
            "advc:2",
            "adv+1:3",
            "perm:2",
        ] {
            let err = Pattern::parse(s, &t).expect_err(s).to_string();
            assert!(err.starts_with("traffic.pattern: "), "{s}: {err}");
            assert!(err.contains("allowed"), "{s}: {err}");
        }
        let one_router_groups =
            Topology::new(&TopologyConfig { a: 1, h: 2, p: 2, ..TopologyConfig::default() }).unwrap();
        assert!(Pattern::parse("advl", &one_router_groups).is_err());
    }

    #[test]
    fn every_pattern_samples_valid_destinations_through_the_sampler() {
        let t = topo();
        for name in [
            "ur",
            "adv+3",
            "advc",
            "advl",
            "hot",
            "perm",
            "router-mix:adv+1:50",
            "node-mix:perm:50",
            "stencil",
            "m2m",
            "rn",
            "rn-fixed",
        ] {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
            let mut s = PatternSampler::new(Pattern::parse(name, &t).unwrap(), &t, false, &mut rng);
            for i in 0..5000u32 {
                let src = i % 72;
                let d = s.destination(src, &mut rng);
                assert!(d < 72 && d != src, "{name}: {src} -> {d}");
            }
        }
    }

    /// dfly(4,4,2,9) with 2 NICs per node and 5 compute groups: 80 compute endpoints (40
    /// nodes) of 144.
    fn machine() -> Topology {
        let cfg =
            TopologyConfig { p: 4, a: 4, h: 2, nics_per_node: 2, compute_groups: Some(5), ..TopologyConfig::default() };
        Topology::new(&cfg).unwrap()
    }

    #[test]
    fn patterns_run_on_compute_nodes_and_spread_over_their_nics() {
        let t = machine();
        assert_eq!((t.nodes(), t.compute_endpoints(), t.compute_nodes()), (144, 80, 40));
        for name in ["ur", "adv+1", "advl", "perm", "hot", "stencil", "node-mix:adv+2:50", "rn"] {
            for policy in [NicPolicy::Random, NicPolicy::SameIndex] {
                let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
                let pattern = Pattern::parse(name, &t).unwrap();
                let mut s = PatternSampler::new(pattern, &t, false, &mut rng).with_nic_policy(policy);
                let mut nic_seen = [false; 2];
                for i in 0..4000u32 {
                    let src = i % 80;
                    let d = s.destination(src, &mut rng);
                    assert!(d < 80, "{name}: {src} -> {d} is not a compute endpoint");
                    assert_ne!(d / 2, src / 2, "{name}: {src} -> {d} stays on its node");
                    if policy == NicPolicy::SameIndex {
                        assert_eq!(d % 2, src % 2, "{name}");
                    }
                    nic_seen[(d % 2) as usize] = true;
                }
                assert!(nic_seen[0] && nic_seen[1], "{name}");
            }
        }
        // ADV+1 shifts over the compute groups: group 4's nodes send to group 0.
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(6);
        let mut s = PatternSampler::new(Pattern::parse("adv+1", &t).unwrap(), &t, false, &mut rng);
        for src in 0..80u32 {
            let d = s.destination(src, &mut rng);
            assert_eq!(d / 16, (src / 16 + 1) % 5, "{src} -> {d}");
        }
        // A random draw of the NIC: both NICs of the destination about equally often.
        let mut s = PatternSampler::new(Pattern::Uniform, &t, false, &mut rng);
        let odd = (0..10_000).filter(|_| s.destination(3, &mut rng) % 2 == 1).count();
        assert!((4_700..5_300).contains(&odd), "{odd}");
    }

    #[test]
    fn pattern_parameters_are_checked_against_the_compute_nodes() {
        let t = machine();
        assert!(Pattern::parse("adv+4", &t).is_ok());
        let err = Pattern::parse("adv+5", &t).unwrap_err().to_string();
        assert!(err.contains("g - 1 = 4"), "{err}");
        assert_eq!(Pattern::parse("stencil", &t).unwrap(), Pattern::Stencil { grid: Grid { dims: [2, 4, 5] } });
        let err = Pattern::parse("advc", &t).unwrap_err().to_string();
        assert!(err.starts_with("traffic.pattern") && err.contains("allowed"), "{err}");
        // With every group computing, ADVc follows the wiring as before.
        let nics = TopologyConfig { p: 4, a: 4, h: 2, nics_per_node: 2, ..TopologyConfig::default() };
        assert!(Pattern::parse("advc", &Topology::new(&nics).unwrap()).is_ok());
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
