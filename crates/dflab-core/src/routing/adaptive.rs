//! What the UGAL family (UGALg, UGALn, UGAL-L, UGAL-G, PAR) shares: the draw of the Valiant
//! intermediate, the reference code's comparison of a minimal and a non-minimal candidate
//! (`adp_select_port`, qadaptive-reference.md §2) and the optional adaptive routing of packets
//! that stay inside their group.

use rand::Rng as _;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::paths::{in_destination_group, port_to_router, port_to_router_id, random_intermediate_router};
use super::valiant::hdr_mut;
use super::{Hop, Rng, RouterView};
use crate::config::{Intermediate, IntraGroup, RoutingParams};
use crate::network::Packet;

/// The parameters of UGALg, UGALn and PAR (the Q-adaptive reference code's defaults).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct AdaptiveParams {
    /// Non-minimal iff `q_min > floor(adaptive_threshold · q_nm)` (UGALg, UGALn, PAR).
    #[schemars(range(min = 0.0))]
    pub adaptive_threshold: f64,
    /// How the Valiant intermediate router is drawn: outside the source and destination groups
    /// (the reference), or any router, minimal when it falls in either (BookSim).
    pub intermediate: Intermediate,
    /// Intra-group packets: always the direct hop (every reference), or the algorithm's rule
    /// against a detour through a third router of the group.
    pub intra_group: IntraGroup,
}

impl Default for AdaptiveParams {
    fn default() -> AdaptiveParams {
        AdaptiveParams {
            adaptive_threshold: 2.0,
            intermediate: Intermediate::Outside,
            intra_group: IntraGroup::Minimal,
        }
    }
}

impl RoutingParams for AdaptiveParams {}

/// The Valiant intermediate router of a packet from `src_group` to `dst_group`, or None when it
/// has no non-minimal candidate and must go minimally.
pub fn draw_intermediate(
    view: &RouterView,
    rule: Intermediate,
    src_group: u32,
    dst_group: u32,
    rng: &mut Rng,
) -> Option<u32> {
    match rule {
        Intermediate::Outside => random_intermediate_router(view, src_group, dst_group, rng),
        Intermediate::Any => {
            let r = rng.gen_range(0..view.topo.routers() as u32);
            let grp = view.topo.group_of(r);
            (grp != src_group && grp != dst_group).then_some(r)
        }
        Intermediate::AnyShortcut => {
            let r = draw_intermediate(view, Intermediate::Any, src_group, dst_group, rng)?;
            let topo = view.topo;
            let grp = topo.group_of(r);
            let (si, k) = topo.gateways(src_group, grp)[0];
            let entry = topo.peer(src_group * topo.a as u32 + si as u32, topo.first_global_port() + k).map(|(e, _)| e);
            let exit = grp * topo.a as u32 + topo.gateways(grp, dst_group)[0].0 as u32;
            Some(if entry == Some(exit) { exit } else { r })
        }
    }
}

/// Congestion of the two candidates as `adp_select_port` measures it: output-buffer flits plus
/// used credits over every VC of each port; but when both candidates leave by the same port,
/// only the VC each path would take (`vc_min`, `vc_nonmin`), since whole-port sums would be
/// identical and the comparison meaningless.
pub fn candidate_occupancy(view: &RouterView, min_port: u16, nm_port: u16, vc_min: u8, vc_nonmin: u8) -> (u32, u32) {
    if min_port == nm_port {
        (view.occupancy(min_port, vc_min as usize), view.occupancy(nm_port, vc_nonmin as usize))
    } else {
        (view.port_occupancy(min_port), view.port_occupancy(nm_port))
    }
}

/// The reference rule: non-minimal iff `q_min > floor(T · q_nm)` (`(int)(q_nm * T)` in the
/// code; the truncation matters at small occupancies and fractional thresholds).
#[inline]
pub fn prefers_nonminimal(q_min: u32, q_nm: u32, threshold: f64) -> bool {
    q_min as f64 > (threshold * q_nm as f64).floor()
}

/// The reference decision between a minimal and a non-minimal first port.
pub fn reference_decision(
    view: &RouterView,
    min_port: u16,
    nm_port: u16,
    vc_min: u8,
    vc_nonmin: u8,
    threshold: f64,
) -> bool {
    let (q_min, q_nm) = candidate_occupancy(view, min_port, nm_port, vc_min, vc_nonmin);
    prefers_nonminimal(q_min, q_nm, threshold)
}

/// A packet that stays in its group, at its source router: the direct local hop (on
/// `vc_destination`, the algorithm's destination-group VC), or with `intra_group = adaptive`
/// possibly a detour through a random third router of the group (on `vc_nonmin`, the
/// algorithm's first non-minimal VC; the second hop is then a destination-group hop).
/// `nonminimal(min_port, nm_port)` is the algorithm's own decision rule.
pub fn route_intra_group(
    view: &RouterView,
    pkt: &mut Packet,
    mode: IntraGroup,
    vc_nonmin: u8,
    vc_destination: u8,
    rng: &mut Rng,
    nonminimal: impl FnOnce(u16, u16) -> bool,
) -> Hop {
    if let Some(mid) = local_intermediate(view, pkt, mode, rng) {
        let min_port = port_to_router_id(view, pkt.dst_router);
        let nm_port = port_to_router(view, mid);
        if nonminimal(min_port, nm_port) {
            let h = hdr_mut(pkt);
            h.inter_router = view.group * view.topo.a as u32 + mid;
            h.inter_group = view.group;
            pkt.nonminimal = true;
            return Hop { port: nm_port, vc: vc_nonmin };
        }
    }
    in_destination_group(view, pkt, vc_destination)
}

/// Index (in the group) of a router drawn uniformly among those that are neither this one nor
/// the destination's, when the intra-group detour is enabled and possible.
pub fn local_intermediate(view: &RouterView, pkt: &Packet, mode: IntraGroup, rng: &mut Rng) -> Option<u32> {
    let a = view.topo.a as u32;
    if mode == IntraGroup::Minimal || pkt.dst_router == view.router || a < 3 {
        return None;
    }
    let dst = view.topo.index_in_group(pkt.dst_router);
    let (lo, hi) = (view.index.min(dst), view.index.max(dst));
    let mut mid = rng.gen_range(0..a - 2);
    if mid >= lo {
        mid += 1;
    }
    if mid >= hi {
        mid += 1;
    }
    Some(mid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::harness::Net;
    use rand::SeedableRng;

    #[test]
    fn threshold_rule_truncates_like_the_reference() {
        // T = 2: q_nm = 3 gives floor(6) = 6, so 6 stays minimal and 7 diverts.
        assert!(!prefers_nonminimal(6, 3, 2.0));
        assert!(prefers_nonminimal(7, 3, 2.0));
        // T = 1.5, q_nm = 3: (int)4.5 = 4, so q_min = 5 diverts although 5 < 4.5 + 1.
        assert!(prefers_nonminimal(5, 3, 1.5));
        assert!(!prefers_nonminimal(4, 3, 1.5));
        // An empty network stays minimal.
        assert!(!prefers_nonminimal(0, 0, 2.0));
    }

    #[test]
    fn any_rule_gives_no_candidate_in_the_end_groups() {
        let net = Net::new(2, 4, 2, 1);
        let view = net.view(0, 0);
        let mut rng = Rng::seed_from_u64(5);
        let (mut none, n) = (0, 9000);
        for _ in 0..n {
            match draw_intermediate(&view, Intermediate::Any, 0, 3, &mut rng) {
                Some(r) => assert!(![0, 3].contains(&net.topo.group_of(r))),
                None => none += 1,
            }
        }
        // 2 of the 9 groups are excluded: expect 2/9 of 9000 = 2000, sd ≈ 39.
        assert!((none as f64 - 2000.0).abs() < 5.0 * 39.5, "{none}");
    }

    #[test]
    fn local_intermediate_is_a_third_router() {
        let net = Net::new(2, 4, 2, 1);
        let mut rng = Rng::seed_from_u64(6);
        let view = net.view(1, 0);
        let pkt = net.packet(2, 6); // router 1 -> router 3 of group 0
        let mut seen = std::collections::HashSet::new();
        for _ in 0..200 {
            let m = local_intermediate(&view, &pkt, IntraGroup::Adaptive, &mut rng).unwrap();
            assert!(m != 1 && m != 3);
            seen.insert(m);
        }
        assert_eq!(seen.len(), 2);
        assert!(local_intermediate(&view, &pkt, IntraGroup::Minimal, &mut rng).is_none());
    }
}
