//! The misrouting paths of the ACOR family (Benito et al., JPDC'19, §2.3 Table 1 and §3.1),
//! shared by VAL, PB, ACOR and PB-ACOR: where a Valiant packet leaves its source group, where
//! its Valiant phase ends, the path it then follows, and the VC of every hop on FOGSim's ladder.
//!
//! Misrouting policies (inter-group packets; Phase B, from where Phase A ends, is minimal):
//!
//! | policy | global link out of the source group | Phase A ends | longest path |
//! |---|---|---|---|
//! | `crg-gr` | a random global port of the source router S | entering that group | G-LGL |
//! | `crg-sw` | a random global port of S | at a random switch of that group | GL-LGL |
//! | `rrg-gr` | a random global link of any switch of S's group | entering that group | LG-LGL |
//! | `rrg-sw` | a random global link of any switch of S's group | at a random switch of that group | LGL-LGL |
//!
//! "Random global link of the group" is uniform over the group's `a·h` links: FOGSim takes a
//! local hop to a random neighbour with probability (a−1)/a and a random global port there,
//! which is the same distribution. Only connected ports are drawn (a network with fewer than
//! `a·h+1` groups leaves some unused). The intermediate group may be the destination group
//! (FOGSim's `SRCEXC`: only the source group is excluded); the packet then still visits the
//! intermediate switch of a `-sw` policy before its destination.
//!
//! Restricted Valiant (RVAL, §3.1): a packet whose destination is in its own group goes
//! through a switch drawn uniformly over **all** `a` switches of the group, the source and
//! destination switches included (FOGSim's draw; either degenerates to the minimal path and
//! the packet counts as minimal). Unrestricted, such a packet misroutes like any other.
//!
//! VCs: FOGSim's ladder ([`Ladder`]) `L G L L G L` (`l0 g0 l1 l2 g1 l3`), on which every path
//! above fits; MIN's `L G L` is its prefix.

use bytemuck::{Pod, Zeroable};
use rand::Rng as _;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::vc::Ladder;
use super::{Hop, Rng};
use crate::network::Packet;
use crate::stats::{ProbeKind, ProbeSpec};
use crate::topology::{FirstPort, LinkClass, Topology, NONE};
use crate::units::Time;

/// Where a packet chose its global link out of the source group and where Phase A ends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Policy {
    /// Current router, to group.
    CrgGr,
    /// Current router, to switch.
    CrgSw,
    /// Random router of the group, to group.
    RrgGr,
    /// Random router of the group, to switch (full Valiant).
    #[default]
    RrgSw,
}

impl Policy {
    pub const ALL: [Policy; 4] = [Policy::CrgGr, Policy::CrgSw, Policy::RrgGr, Policy::RrgSw];

    /// Phase A ends at a switch drawn in the intermediate group (not on entering it).
    pub fn to_switch(self) -> bool {
        matches!(self, Policy::CrgSw | Policy::RrgSw)
    }

    /// The global link out of the source group may belong to any of its switches.
    pub fn any_router(self) -> bool {
        matches!(self, Policy::RrgGr | Policy::RrgSw)
    }

    pub fn name(self) -> &'static str {
        ["crg-gr", "crg-sw", "rrg-gr", "rrg-sw"][self as usize]
    }
}

/// Where a packet is on its path ([`MisrouteHeader::phase`]).
pub const MINIMAL: u8 = 0;
/// In the source group, toward the global link `(via_index, via_port)`.
pub const TO_INTER_GROUP: u8 = 1;
/// Toward `inter_router` (in the intermediate group, or in its own group when restricted).
pub const TO_INTER_ROUTER: u8 = 2;
/// Phase B: minimal to the destination.
pub const TO_DESTINATION: u8 = 3;

/// The per-packet fields of a misrouted path (24 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct MisrouteHeader {
    /// When the source router last decided the path (its first routing or a re-route).
    pub last_attempt: Time,
    /// The switch where Phase A ends, or NONE (a `-gr` policy: on entering `inter_group`).
    pub inter_router: u32,
    /// The intermediate group, or NONE (minimal).
    pub inter_group: u32,
    /// The router index (in the source group) owning the global link out, and its port.
    pub via_index: u16,
    pub via_port: u16,
    pub phase: u8,
    /// Position on the VC ladder (slots behind the packet).
    pub pos: u8,
    /// The ACOR level (0-based) the path was drawn at (ACOR-Packet's own level).
    pub level: u8,
    /// Source decisions so far (1 + re-routes at the injection head), saturating.
    pub decisions: u8,
}

impl Default for MisrouteHeader {
    fn default() -> Self {
        MisrouteHeader {
            last_attempt: 0,
            inter_router: NONE,
            inter_group: NONE,
            via_index: 0,
            via_port: 0,
            phase: MINIMAL,
            pos: 0,
            level: 0,
            decisions: 0,
        }
    }
}

/// The packet's misrouting fields.
#[inline(always)]
pub fn hdr(pkt: &Packet) -> &MisrouteHeader {
    pkt.hdr()
}

/// A path the source router drew, before it is written into the packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Drawn {
    pub inter_router: u32,
    pub inter_group: u32,
    pub via_index: u16,
    pub via_port: u16,
    pub phase: u8,
}

impl Drawn {
    /// The minimal path.
    pub const MINIMAL: Drawn =
        Drawn { inter_router: NONE, inter_group: NONE, via_index: 0, via_port: 0, phase: MINIMAL };

    pub fn is_minimal(&self) -> bool {
        self.phase == MINIMAL
    }
}

/// The FOGSim ladder of every non-minimal routing of the family.
pub fn valiant_ladder() -> Ladder {
    Ladder::parse("L-G-L-L-G-L").expect("a valid ladder")
}

/// Draw the path of a packet from router `src` to router `dst` (`src != dst`) under `policy`,
/// restricted or not, as the source router does (and again at each re-route).
pub fn draw(topo: &Topology, src: u32, dst: u32, policy: Policy, restricted: bool, rng: &mut Rng) -> Drawn {
    let (sg, dg) = (topo.group_of(src), topo.group_of(dst));
    let a = topo.a as u32;
    if sg == dg && restricted {
        let ir = sg * a + rng.gen_range(0..a);
        if ir == src || ir == dst {
            return Drawn::MINIMAL;
        }
        return Drawn { inter_router: ir, inter_group: sg, via_index: 0, via_port: 0, phase: TO_INTER_ROUTER };
    }
    let Some((via, port)) = draw_global_link(topo, src, policy.any_router(), rng) else {
        return Drawn::MINIMAL;
    };
    let (entry, _) = topo.peer(via, port).expect("a drawn global port is connected");
    let inter_group = topo.group_of(entry);
    let inter_router = if policy.to_switch() { inter_group * a + rng.gen_range(0..a) } else { NONE };
    Drawn {
        inter_router,
        inter_group,
        via_index: topo.index_in_group(via) as u16,
        via_port: port,
        phase: TO_INTER_GROUP,
    }
}

/// A connected global link out of `src`'s group, as (owning router, port): one of `src`'s own
/// (CRG) or any of the group's (RRG), uniformly. None when there is none.
fn draw_global_link(topo: &Topology, src: u32, any_router: bool, rng: &mut Rng) -> Option<(u32, u16)> {
    let (a, h) = (topo.a as u32, topo.h as u32);
    let first = topo.first_global_port();
    let group_base = topo.group_of(src) * a;
    let links = if any_router { a * h } else { h };
    // Rejection over unconnected ports (none in a canonical network with a·h+1 groups).
    for _ in 0..64 {
        let x = rng.gen_range(0..links);
        let router = if any_router { group_base + x / h } else { src };
        let port = first + (x % h) as u16;
        if topo.global_port_group(router, port) != NONE {
            return Some((router, port));
        }
    }
    let routers = if any_router { group_base..group_base + a } else { src..src + 1 };
    let connected: Vec<(u32, u16)> = routers
        .flat_map(|r| (0..h as u16).map(move |k| (r, first + k)))
        .filter(|&(r, p)| topo.global_port_group(r, p) != NONE)
        .collect();
    (!connected.is_empty()).then(|| connected[rng.gen_range(0..connected.len())])
}

/// Router hops of path `d` from `src` to `dst` (exact on one link per group pair; with
/// parallel links each minimal segment counts its best gateway).
pub fn path_hops(topo: &Topology, src: u32, dst: u32, d: &Drawn) -> u32 {
    match d.phase {
        MINIMAL => topo.min_hops(src, dst),
        TO_INTER_ROUTER => 1 + (d.inter_router != dst) as u32,
        _ => {
            let via = topo.group_of(src) * topo.a as u32 + d.via_index as u32;
            let (entry, _) = topo.peer(via, d.via_port).expect("a drawn global port is connected");
            let phase_a = (via != src) as u32 + 1;
            if d.inter_router == NONE {
                phase_a + topo.min_hops(entry, dst)
            } else {
                phase_a + (entry != d.inter_router) as u32 + topo.min_hops(d.inter_router, dst)
            }
        }
    }
}

/// Write path `d` into `pkt`: a decision at the source router at `now`, before the packet's
/// first hop (so its ladder position starts again at 0).
pub fn commit(pkt: &mut Packet, d: &Drawn, level: u8, now: Time) {
    // A hard check (one compare per decision): recomputation never happens in transit.
    assert_eq!(pkt.hops, 0, "a path drawn after the packet left its source router");
    let h: &mut MisrouteHeader = pkt.hdr_mut();
    h.last_attempt = now;
    h.pos = 0;
    h.inter_router = d.inter_router;
    h.inter_group = d.inter_group;
    h.via_index = d.via_index;
    h.via_port = d.via_port;
    h.phase = d.phase;
    h.level = level;
    h.decisions = h.decisions.saturating_add(1);
    pkt.nonminimal = !d.is_minimal();
}

/// Write the source decision between the minimal path and the non-minimal `candidate`: the
/// candidate's fields are kept in the header either way, so that a later attempt can take the
/// decision again with the same candidate ([`candidate`]).
pub fn commit_choice(pkt: &mut Packet, candidate: &Drawn, misroute: bool, level: u8, now: Time) {
    commit(pkt, candidate, level, now);
    if !misroute {
        pkt.hdr_mut::<MisrouteHeader>().phase = MINIMAL;
        pkt.nonminimal = false;
    }
}

/// The non-minimal candidate written by [`commit_choice`] (or [`commit`]) at the source router
/// `src`, taken or not: a restricted intra-group path starts toward its intermediate router, any
/// other toward its intermediate group.
pub fn candidate(topo: &Topology, src: u32, pkt: &Packet) -> Drawn {
    let h = hdr(pkt);
    let phase = if h.inter_group == NONE {
        MINIMAL
    } else if h.inter_group == topo.group_of(src) {
        TO_INTER_ROUTER
    } else {
        TO_INTER_GROUP
    };
    Drawn {
        inter_router: h.inter_router,
        inter_group: h.inter_group,
        via_index: h.via_index,
        via_port: h.via_port,
        phase,
    }
}

/// The next hop of a packet whose path is written, at `router`; `to_group` gives the first
/// port of a minimal path toward another group (None: it needs the router's view, for
/// parallel links). None leaves `pkt` unchanged.
#[inline(always)]
pub fn next_hop(
    topo: &Topology,
    ladder: &Ladder,
    router: u32,
    pkt: &mut Packet,
    mut to_group: impl FnMut(u32) -> Option<u16>,
) -> Option<Hop> {
    let mut h = *hdr(pkt);
    let group = topo.group_of(router);
    if h.phase == TO_INTER_GROUP && group == h.inter_group {
        h.phase = if h.inter_router == NONE { TO_DESTINATION } else { TO_INTER_ROUTER };
    }
    if h.phase == TO_INTER_ROUTER && router == h.inter_router {
        h.phase = TO_DESTINATION;
    }
    if pkt.dst_router == router && (h.phase == MINIMAL || h.phase == TO_DESTINATION) {
        // (The phase is already TO_DESTINATION in the header, or the packet leaves now.)
        pkt.hdr_mut::<MisrouteHeader>().phase = h.phase;
        return Some(Hop { port: topo.host_port_of_node(pkt.dst), vc: 0 });
    }
    let port = match h.phase {
        TO_INTER_GROUP => {
            let via = group * topo.a as u32 + h.via_index as u32;
            if via == router {
                h.via_port
            } else {
                topo.local_port_to(router, via, group)
            }
        }
        TO_INTER_ROUTER => topo.local_port_to(router, h.inter_router, group),
        _ => {
            let dst_group = topo.group_of(pkt.dst_router);
            if dst_group == group {
                topo.local_port_to(router, pkt.dst_router, group)
            } else {
                to_group(dst_group)?
            }
        }
    };
    let class = topo.class_of_port(port);
    let (vc, pos) = ladder.next(h.pos, class).unwrap_or_else(|| panic!("path longer than the VC ladder: {h:?}"));
    h.pos = pos;
    *pkt.hdr_mut::<MisrouteHeader>() = h;
    Some(Hop { port, vc })
}

/// `to_group` for [`next_hop`] from the first-port table alone.
#[inline(always)]
pub fn table_to_group(topo: &Topology, router: u32) -> impl FnMut(u32) -> Option<u16> + '_ {
    move |g| match topo.first_port_to_group(router, g) {
        FirstPort::Port(port) => Some(port),
        _ => None,
    }
}

/// Whether a refused attempt of the head `pkt` at `now` is a new one. FOGSim's allocator tries
/// each head once per cycle (`period`); dflab's arbiter may run several passes in one cycle (an
/// arrival, a freed port), which count once: within a cycle of its last decision the head keeps
/// its path and is not counted.
#[inline]
pub fn new_attempt(pkt: &mut Packet, now: Time, period: Time) -> bool {
    let h: &mut MisrouteHeader = pkt.hdr_mut();
    if now < h.last_attempt + period {
        return false;
    }
    h.last_attempt = now;
    true
}

/// The probes every routing of the family declares first, in this order.
pub const PROBE_REROUTES: usize = 0;
pub const PROBE_ACCEPTED_BY_SOURCE: usize = 1;
/// How many: a routing's own probes start here.
pub const COMMON_PROBES: usize = 2;

/// [`PROBE_REROUTES`] and [`PROBE_ACCEPTED_BY_SOURCE`].
pub fn common_probes() -> Vec<ProbeSpec> {
    vec![
        ProbeSpec::new(
            "reroutes",
            ProbeKind::PerRouter,
            "refused attempts of a packet at the head of an injection buffer (each asks the routing again)",
        ),
        ProbeSpec::new(
            "accepted_flits_by_source_router",
            ProbeKind::PerRouter,
            "flits delivered, by the router where they entered the network (per-switch accepted load)",
        ),
    ]
}

/// The delivery count of [`PROBE_ACCEPTED_BY_SOURCE`] (from the routing's `on_deliver`).
#[inline]
pub fn count_delivery<R: super::Routing>(cx: &mut super::Ctx<'_, R>, pkt: &Packet) {
    let src = cx.view.topo.router_of_node(pkt.src);
    cx.count_for(PROBE_ACCEPTED_BY_SOURCE, src, pkt.flits as u64);
}

/// The VC the first hop over `port` of a new packet takes on `ladder`.
#[inline]
pub fn first_vc(topo: &Topology, ladder: &Ladder, port: u16) -> u8 {
    match topo.class_of_port(port) {
        LinkClass::Host => 0,
        class => ladder.next(0, class).map_or(0, |(vc, _)| vc),
    }
}

#[cfg(test)]
mod tests;
