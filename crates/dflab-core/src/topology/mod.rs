//! Dragonfly geometry `dfly(p, a, h, g)` with fully connected groups.
//!
//! Port numbering follows SST/Merlin (`../shared/reference/qadaptive-reference.md` §1.1):
//! ports `[0, p)` are hosts, `[p, p+a-1)` local (port `p + t` leads to router `t`, own index
//! skipped), `[p+a-1, p+a-1+h)` global. Node `n` sits on router `n / p`, host port `n % p`;
//! router `R` is router `R % a` of group `R / a`.
//!
//! Global wiring is computed by [`arrangement`] from the formulas of
//! `../shared/reference/baseline-algorithms.md` §7, generalised to `l` parallel links per
//! group pair the way SST's `global_link_map` does it (slot `r*h + k` holds a raw index whose
//! `mod (g-1)` is the relative group and whose quotient is the parallel-link "slice").
//! When `(g-1)*l < a*h` the last routers leave global ports unconnected, as SST does.

pub mod arrangement;

use crate::fastdiv::FastDiv;

use crate::config::{Arrangement, GlobalPortOrder, TopologyConfig};
use crate::error::{Error, Result};

pub const NONE: u32 = u32::MAX;

/// The first-port table holds at most this many (router, group) entries (32 MiB); larger
/// networks route through [`Topology::gateways`] only.
const FIRST_PORT_MAX_ENTRIES: usize = 1 << 24;
/// First-port table entry of a pair without exactly one link (parallel links).
const NO_FIRST_PORT: u16 = u16::MAX;
/// First-port table entry of a router's own group (the port follows from the router ids).
const OWN_GROUP: u16 = u16::MAX - 1;

/// A first-port table entry, see [`Topology::first_port_to_group`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FirstPort {
    /// The group is the router's own.
    OwnGroup,
    /// The first port of the minimal path over the one link to the group.
    Port(u16),
    /// Not in the table: the route needs the gateway lists.
    Unknown,
}

/// The class of a link, which fixes its latency and bandwidth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkClass {
    Host,
    Local,
    Global,
}

#[derive(Debug, Clone)]
pub struct Topology {
    pub p: usize,
    pub a: usize,
    pub h: usize,
    pub g: usize,
    pub l: usize,
    /// NICs per compute node (`topology.nics_per_node`): node `n`'s NICs are the endpoints
    /// `n·nics .. (n+1)·nics`.
    pub nics: usize,
    /// Groups holding compute nodes (`topology.compute_groups`), the first ones: the compute
    /// endpoints are `0..compute_endpoints()`.
    pub compute_groups: usize,
    pub arrangement: Arrangement,
    /// How the global slots map to router ports (kept for [`Topology::pattern_view`]).
    global_port_order: GlobalPortOrder,
    /// Ports per router: p + (a-1) + h.
    pub radix: usize,
    /// Per (router, global slot k): the router and port at the other end, or NONE.
    global_peer: Vec<(u32, u16)>,
    /// Per (router, global slot k): the group the link leads to, or NONE.
    global_group: Vec<u32>,
    /// Per (group G, group D): the (router index in G, global slot) of every link G→D, flat:
    /// the links of pair i are `gateway_links[gateway_start[i]..gateway_start[i + 1]]` (one
    /// lookup touches two small arrays instead of a separate allocation per pair).
    gateway_start: Vec<u32>,
    gateway_links: Vec<(u16, u16)>,
    /// Per (router, group): the first port of the minimal path to the group when the router's
    /// group has exactly one link to it, `OWN_GROUP` for the router's own group, else
    /// `NO_FIRST_PORT`. Spares the hot path the slice of `gateway_links` and the own-link test,
    /// and [`Topology::minimal_first_port`] the router's own group number. Empty beyond
    /// `FIRST_PORT_MAX_ENTRIES`.
    first_port: Vec<u16>,
    /// Divisions by `a` and `p` as multiplications (see `fastdiv`).
    div_a: FastDiv,
    div_p: FastDiv,
}

impl Topology {
    pub fn new(cfg: &TopologyConfig) -> Result<Topology> {
        let (p, a, h) = (cfg.p, cfg.a, cfg.h);
        if p == 0 {
            return Err(Error::config("topology.p", "0 is out of range; allowed: an integer >= 1"));
        }
        if a == 0 {
            return Err(Error::config("topology.a", "0 is out of range; allowed: an integer >= 1"));
        }
        if cfg.links_per_pair == Some(0) {
            return Err(Error::config("topology.links_per_pair", "0 is out of range; allowed: an integer >= 1"));
        }
        if a > 4096 || h > 4096 || p > 4096 {
            return Err(Error::config("topology", "p, a and h must each be at most 4096"));
        }
        let (g, l) = match (cfg.g, cfg.links_per_pair) {
            (Some(g), Some(l)) => (g, l),
            // dfly(p, a, h, g) as the papers write it: as many parallel links as fit.
            (Some(g), None) => (g, if g > 1 { (a * h / (g - 1)).max(1) } else { 1 }),
            (None, l) => {
                let l = l.unwrap_or(1);
                if (a * h) % l != 0 {
                    return Err(Error::config(
                        "topology.links_per_pair",
                        format!("a*h = {} is not divisible by links_per_pair = {l}; set topology.g explicitly", a * h),
                    ));
                }
                (a * h / l + 1, l)
            }
        };
        if g == 0 {
            return Err(Error::config("topology.g", "0 is out of range; allowed: an integer >= 1"));
        }
        let max_g = a * h / l + 1;
        if g > max_g {
            return Err(Error::config(
                "topology.g",
                format!(
                    "{g} is too large for a={a}, h={h}, links_per_pair={l}: each group has a*h = {} global ports, \
                     so at most a*h/links_per_pair + 1 = {max_g} groups fit",
                    a * h
                ),
            ));
        }
        if g > 1 && h == 0 {
            return Err(Error::config("topology.h", "0 global ports per router cannot connect more than one group"));
        }
        let (nics, compute_groups) = Self::check_nodes(cfg, g)?;
        let nodes = g * a * p;
        if nodes > (1 << 30) {
            return Err(Error::config("topology", format!("{nodes} nodes is more than dflab supports (2^30)")));
        }
        let wiring = arrangement::wire(cfg.arrangement, cfg.global_port_order, a, h, g, l)?;
        let mut gateways = vec![Vec::new(); g * g];
        for grp in 0..g {
            for r in 0..a {
                for k in 0..h {
                    let d = wiring.group[(grp * a + r) * h + k];
                    if d != NONE {
                        gateways[grp * g + d as usize].push((r as u16, k as u16));
                    }
                }
            }
        }
        for grp in 0..g {
            for d in 0..g {
                if grp != d && gateways[grp * g + d].is_empty() {
                    return Err(Error::config(
                        "topology.arrangement",
                        format!("{:?} wiring leaves groups {grp} and {d} unconnected", cfg.arrangement),
                    ));
                }
            }
        }
        let mut gateway_start = Vec::with_capacity(g * g + 1);
        gateway_start.push(0u32);
        let mut gateway_links = Vec::new();
        for links in gateways {
            gateway_links.extend(links);
            gateway_start.push(gateway_links.len() as u32);
        }
        let mut topo = Topology {
            p,
            a,
            h,
            g,
            l,
            nics,
            compute_groups,
            arrangement: cfg.arrangement,
            global_port_order: cfg.global_port_order,
            radix: p + a - 1 + h,
            global_peer: wiring.peer,
            global_group: wiring.group,
            gateway_start,
            gateway_links,
            first_port: Vec::new(),
            div_a: FastDiv::new(a as u32),
            div_p: FastDiv::new(p as u32),
        };
        topo.first_port = topo.first_port_table();
        Ok(topo)
    }

    /// `topology.nics_per_node` divides `p`; `topology.compute_groups` is in `1..=g`.
    fn check_nodes(cfg: &TopologyConfig, g: usize) -> Result<(usize, usize)> {
        let nics = cfg.nics_per_node;
        if nics == 0 || !cfg.p.is_multiple_of(nics) {
            return Err(Error::config(
                "topology.nics_per_node",
                format!(
                    "{nics} does not divide p = {}; allowed: a divisor of p (a node's NICs sit on one router)",
                    cfg.p
                ),
            ));
        }
        let compute = cfg.compute_groups.unwrap_or(g);
        if compute == 0 || compute > g {
            return Err(Error::config(
                "topology.compute_groups",
                format!("{compute} is out of range; allowed: 1 to g = {g}"),
            ));
        }
        Ok((nics, compute))
    }

    /// The network as traffic patterns see it: one endpoint per compute node (`p / nics` per
    /// router) and the compute groups only. The same topology when every group computes and
    /// nodes have one NIC; otherwise a topology of `compute_groups` groups, whose global wiring
    /// is not this one's (patterns that read the wiring refuse such networks).
    pub fn pattern_view(&self) -> Result<std::borrow::Cow<'_, Topology>> {
        if self.nics == 1 && self.compute_groups == self.g {
            return Ok(std::borrow::Cow::Borrowed(self));
        }
        let view = Topology::new(&TopologyConfig {
            p: self.p / self.nics,
            a: self.a,
            h: self.h,
            g: Some(self.compute_groups),
            links_per_pair: Some(self.l),
            arrangement: self.arrangement,
            global_port_order: self.global_port_order,
            nics_per_node: 1,
            compute_groups: None,
        })
        .map_err(|e| Error::config("topology.compute_groups", format!("its traffic view cannot be built: {e}")))?;
        Ok(std::borrow::Cow::Owned(view))
    }

    /// Whether every endpoint is its own compute node (one NIC, every group computes).
    pub fn all_endpoints_compute(&self) -> bool {
        self.nics == 1 && self.compute_groups == self.g
    }

    /// Compute nodes (hosts), each with `nics` endpoints.
    pub fn compute_nodes(&self) -> usize {
        self.compute_groups * self.a * self.p / self.nics
    }

    /// Endpoints of the compute groups: `0..compute_endpoints()`.
    pub fn compute_endpoints(&self) -> usize {
        self.compute_groups * self.a * self.p
    }

    /// See `first_port`.
    fn first_port_table(&self) -> Vec<u16> {
        let (a, g) = (self.a, self.g);
        if a * g * g > FIRST_PORT_MAX_ENTRIES {
            return Vec::new();
        }
        let mut table = vec![NO_FIRST_PORT; a * g * g];
        for grp in 0..g as u32 {
            for to in 0..g as u32 {
                if to == grp {
                    for index in 0..a {
                        table[(grp as usize * a + index) * g + to as usize] = OWN_GROUP;
                    }
                } else if let [(r, k)] = *self.gateways(grp, to) {
                    for index in 0..a as u32 {
                        let port = if r as u32 == index {
                            self.first_global_port() + k
                        } else {
                            self.local_port(index, r as u32)
                        };
                        table[(grp as usize * a + index as usize) * g + to as usize] = port;
                    }
                }
            }
        }
        table
    }

    pub fn routers(&self) -> usize {
        self.g * self.a
    }

    pub fn nodes(&self) -> usize {
        self.g * self.a * self.p
    }

    #[inline]
    pub fn group_of(&self, router: u32) -> u32 {
        self.div_a.div(router)
    }

    #[inline]
    pub fn index_in_group(&self, router: u32) -> u32 {
        self.div_a.rem(router)
    }

    #[inline]
    pub fn router_of_node(&self, node: u32) -> u32 {
        self.div_p.div(node)
    }

    #[inline]
    pub fn host_port_of_node(&self, node: u32) -> u16 {
        self.div_p.rem(node) as u16
    }

    #[inline]
    pub fn first_local_port(&self) -> u16 {
        self.p as u16
    }

    #[inline]
    pub fn first_global_port(&self) -> u16 {
        (self.p + self.a - 1) as u16
    }

    #[inline]
    pub fn class_of_port(&self, port: u16) -> LinkClass {
        if (port as usize) < self.p {
            LinkClass::Host
        } else if (port as usize) < self.p + self.a - 1 {
            LinkClass::Local
        } else {
            LinkClass::Global
        }
    }

    #[inline]
    pub fn is_host_port(&self, port: u16) -> bool {
        (port as usize) < self.p
    }

    /// Local port of router index `r` leading to router index `t` of the same group.
    #[inline]
    pub fn local_port(&self, r: u32, t: u32) -> u16 {
        debug_assert_ne!(r, t);
        let j = if t < r { t } else { t - 1 };
        self.p as u16 + j as u16
    }

    /// Router index (in the group) at the far end of local port `port` of router index `r`.
    #[inline]
    pub fn local_peer_index(&self, r: u32, port: u16) -> u32 {
        let j = (port - self.p as u16) as u32;
        if j < r {
            j
        } else {
            j + 1
        }
    }

    /// Group reached by global port `port` of `router`, or NONE if unconnected.
    #[inline]
    pub fn global_port_group(&self, router: u32, port: u16) -> u32 {
        let k = (port - self.first_global_port()) as usize;
        self.global_group[router as usize * self.h + k]
    }

    /// The router and port at the other end of a router-to-router port, or None (unconnected).
    pub fn peer(&self, router: u32, port: u16) -> Option<(u32, u16)> {
        match self.class_of_port(port) {
            LinkClass::Host => None,
            LinkClass::Local => {
                let grp = self.group_of(router);
                let r = self.index_in_group(router);
                let t = self.local_peer_index(r, port);
                Some((grp * self.a as u32 + t, self.local_port(t, r)))
            }
            LinkClass::Global => {
                let k = (port - self.first_global_port()) as usize;
                let (pr, pp) = self.global_peer[router as usize * self.h + k];
                if pr == NONE {
                    None
                } else {
                    Some((pr, self.first_global_port() + pp))
                }
            }
        }
    }

    /// Every global link from group `from` to group `to`, as (router index in `from`, port).
    #[inline]
    pub fn gateways(&self, from: u32, to: u32) -> &[(u16, u16)] {
        let i = from as usize * self.g + to as usize;
        &self.gateway_links[self.gateway_start[i] as usize..self.gateway_start[i + 1] as usize]
    }

    /// The first port of the minimal path from `router` to group `to` when `router`'s group has
    /// exactly one link to `to` (its own global port, or the local port to the router that has
    /// it); None for the own group, parallel links, or a network too large for the table.
    #[inline]
    pub fn single_link_first_port(&self, router: u32, to: u32) -> Option<u16> {
        match self.first_port.get(router as usize * self.g + to as usize) {
            Some(&port) if port < OWN_GROUP => Some(port),
            _ => None,
        }
    }

    /// What the first-port table says about the minimal path from `router` to group `to`: its
    /// own group, the first port of the one link, or nothing (parallel links, a network too
    /// large for the table). `to` is a group or [`NONE`] (then nothing).
    #[inline(always)]
    pub fn first_port_to_group(&self, router: u32, to: u32) -> FirstPort {
        match self.first_port.get(router as usize * self.g + to as usize) {
            Some(&OWN_GROUP) => FirstPort::OwnGroup,
            Some(&port) if port != NO_FIRST_PORT => FirstPort::Port(port),
            _ => FirstPort::Unknown,
        }
    }

    /// Local port of `router` toward router `to` of its own group `grp` (≠ `router`):
    /// [`Topology::local_port`] of the two indices, written without `router`'s index (port
    /// `p + t` of router index r leads to index t when t < r, to t + 1 otherwise).
    #[inline(always)]
    pub fn local_port_to(&self, router: u32, to: u32, grp: u32) -> u16 {
        debug_assert!(to != router && self.group_of(to) == grp && self.group_of(router) == grp);
        let t = to - grp * self.a as u32;
        self.p as u16 + t as u16 - (to > router) as u16
    }

    /// The first port of a minimal path from `router` to router `to` (≠ `router`), and whether
    /// `to` is in `router`'s group; None when the groups are joined by parallel links or the
    /// network is too large for the first-port table. One division (`to`'s group) and one table
    /// lookup: the table marks the router's own group, so `router`'s group is not computed.
    #[inline(always)]
    pub fn minimal_first_port(&self, router: u32, to: u32) -> Option<(u16, bool)> {
        debug_assert_ne!(router, to);
        let grp = self.group_of(to);
        match self.first_port_to_group(router, grp) {
            FirstPort::OwnGroup => Some((self.local_port_to(router, to, grp), true)),
            FirstPort::Port(port) => Some((port, false)),
            FirstPort::Unknown => None,
        }
    }

    /// Number of router-to-router hops of a minimal path between two routers.
    pub fn min_hops(&self, from: u32, to: u32) -> u32 {
        let (gf, gt) = (self.group_of(from), self.group_of(to));
        if from == to {
            return 0;
        }
        if gf == gt {
            return 1;
        }
        let (rf, rt) = (self.index_in_group(from), self.index_in_group(to));
        self.gateways(gf, gt)
            .iter()
            .map(|&(r, k)| {
                let (peer, _) = self.peer(gf * self.a as u32 + r as u32, self.first_global_port() + k).unwrap();
                (r as u32 != rf) as u32 + 1 + (self.index_in_group(peer) != rt) as u32
            })
            .min()
            .unwrap()
    }

    /// Count of bidirectional local and global links.
    pub fn link_counts(&self) -> (usize, usize) {
        let local = self.g * self.a * (self.a - 1) / 2;
        let global = self.global_group.iter().filter(|&&d| d != NONE).count() / 2;
        (local, global)
    }

    /// Diameter in router-to-router hops, by breadth-first search from every router.
    pub fn diameter(&self) -> u32 {
        // With more than one group, every group pair linked and more routers than any router
        // can reach in two hops, the diameter is 3 (local, global, local reaches everything):
        // no search needed (newcomer #12: the all-pairs search took minutes on dfly(16,32,16,513)).
        if self.g > 1 && self.routers() as u64 > self.reach_in_two_hops() && self.all_group_pairs_linked() {
            return 3;
        }
        self.diameter_by_search()
    }

    /// An upper bound on the routers within two hops of one: itself, its group, its global
    /// peers, and one local or global hop beyond each of those.
    fn reach_in_two_hops(&self) -> u64 {
        let (a, h) = (self.a as u64, self.h as u64);
        a + h + 2 * (a - 1) * h + h * h
    }

    fn all_group_pairs_linked(&self) -> bool {
        let g = self.g as u32;
        (0..g).all(|x| (0..g).all(|y| x == y || !self.gateways(x, y).is_empty()))
    }

    /// The diameter by a breadth-first search from every router.
    fn diameter_by_search(&self) -> u32 {
        let n = self.routers();
        let mut best = 0;
        let mut dist = vec![u32::MAX; n];
        let mut queue = Vec::with_capacity(n);
        for s in 0..n {
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            dist[s] = 0;
            queue.clear();
            queue.push(s as u32);
            let mut head = 0;
            while head < queue.len() {
                let u = queue[head];
                head += 1;
                for port in self.p..self.radix {
                    if let Some((v, _)) = self.peer(u, port as u16) {
                        if dist[v as usize] == u32::MAX {
                            dist[v as usize] = dist[u as usize] + 1;
                            queue.push(v);
                        }
                    }
                }
            }
            best = best.max(*dist.iter().max().unwrap());
        }
        best
    }
}

#[cfg(test)]
mod tests;
