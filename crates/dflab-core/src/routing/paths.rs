//! Minimal-path building blocks shared by every routing: the next hop toward a group, toward a
//! router of the current group, and ejection. Follows SST's `choose_port_for_group`
//! (qadaptive-reference.md §1.1): the router's own global link to the group if it has one,
//! otherwise the local port to the router that has it. With several parallel links per group
//! pair the reference draws two slices and keeps the less occupied first hop; so does dflab.

use rand::Rng as _;

use super::{Hop, Rng, RouterView};
use crate::network::Packet;

/// First port of a minimal path from this router to group `target` (≠ own group).
#[inline]
pub fn port_to_group(view: &RouterView, target: u32, rng: &mut Rng) -> u16 {
    // One link per group pair (the canonical shape): one table lookup, small enough to inline.
    if let Some(port) = view.topo.single_link_first_port(view.router, target) {
        return port;
    }
    port_to_group_slow(view, target, rng)
}

/// [`port_to_group`] without the first-port table: several parallel links to the group, or a
/// network too large for the table.
#[inline(never)]
fn port_to_group_slow(view: &RouterView, target: u32, rng: &mut Rng) -> u16 {
    let gws = view.topo.gateways(view.group, target);
    if let [gw] = gws {
        return port_to_gateway(view, *gw);
    }
    port_to_one_of(view, gws, rng)
}

/// [`port_to_group`] with several parallel links to the group.
fn port_to_one_of(view: &RouterView, gws: &[(u16, u16)], rng: &mut Rng) -> u16 {
    let first_hop = |&gw: &(u16, u16)| port_to_gateway(view, gw);
    // Own links first: a minimal path never takes a local hop when a direct link exists.
    let mut best: Option<u16> = None;
    for gw in gws.iter().filter(|gw| gw.0 as u32 == view.index) {
        let port = first_hop(gw);
        if best.is_none_or(|b| view.port_occupancy(port) < view.port_occupancy(b)) {
            best = Some(port);
        }
    }
    if let Some(port) = best {
        return port;
    }
    let i = rng.gen_range(0..gws.len());
    let mut j = rng.gen_range(0..gws.len() - 1);
    if j >= i {
        j += 1;
    }
    let (pi, pj) = (first_hop(&gws[i]), first_hop(&gws[j]));
    if view.port_occupancy(pj) < view.port_occupancy(pi) {
        pj
    } else {
        pi
    }
}

/// First port toward the global link `(router index, global slot)` of this router's group:
/// the link itself if this router owns it, else the local hop to its owner.
#[inline]
pub fn port_to_gateway(view: &RouterView, (r, k): (u16, u16)) -> u16 {
    if r as u32 == view.index {
        view.topo.first_global_port() + k
    } else {
        view.topo.local_port(view.index, r as u32)
    }
}

/// Port toward router index `target` of the current group (must differ from this router).
#[inline]
pub fn port_to_router(view: &RouterView, target_index: u32) -> u16 {
    view.topo.local_port(view.index, target_index)
}

/// Port toward router `target` (a router id, not an index) of the current group, other than this
/// router: its index follows from the difference of the ids, without a division.
#[inline]
pub fn port_to_router_id(view: &RouterView, target: u32) -> u16 {
    debug_assert_eq!(view.topo.group_of(target), view.group);
    port_to_router(view, view.index.wrapping_add(target).wrapping_sub(view.router))
}

/// Inside the destination group: eject if this is the destination router, else the local hop.
#[inline]
pub fn in_destination_group(view: &RouterView, pkt: &Packet, vc: u8) -> Hop {
    if pkt.dst_router == view.router {
        Hop { port: view.topo.host_port_of_node(pkt.dst), vc: 0 }
    } else {
        Hop { port: port_to_router_id(view, pkt.dst_router), vc }
    }
}

/// A router drawn uniformly among those outside the source and destination groups, or None when
/// there are fewer than three groups. Same distribution as the reference's rejection loop
/// ("draw from all g·a routers until its group is neither", qadaptive-reference.md §2).
pub fn random_intermediate_router(view: &RouterView, src_group: u32, dst_group: u32, rng: &mut Rng) -> Option<u32> {
    let topo = view.topo;
    let excluded: u32 = if src_group == dst_group { 1 } else { 2 };
    if topo.g as u32 <= excluded {
        return None;
    }
    let a = topo.a as u32;
    let x = rng.gen_range(0..(topo.g as u32 - excluded) * a);
    // `x < g·a`: the topology's divisions by `a` (no hardware divide).
    let mut grp = topo.group_of(x);
    let (lo, hi) = (src_group.min(dst_group), src_group.max(dst_group));
    if grp >= lo {
        grp += 1;
    }
    if excluded == 2 && grp >= hi {
        grp += 1;
    }
    Some(grp * a + topo.index_in_group(x))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::harness::Net;
    use rand::SeedableRng;

    #[test]
    fn parallel_links_avoid_the_congested_gateway() {
        // dfly(4,8,4,9), 4 links per group pair: from router 1 of group 0 (no link to group 1),
        // two gateways are drawn and the less occupied first hop wins, so a congested gateway is
        // never chosen over an empty one.
        let mut net = Net::new(4, 8, 4, 4);
        let gws: Vec<(u16, u16)> = net.topo.gateways(0, 1).to_vec();
        assert_eq!(gws.len(), 4);
        let me = (0..8u32).find(|r| gws.iter().all(|g| g.0 as u32 != *r)).unwrap();
        let congested = net.topo.local_port(me, gws[0].0 as u32);
        for vc in 0..2 {
            net.set_used_credits(me, congested, vc, 15);
        }
        let mut seen = std::collections::HashSet::new();
        for seed in 0..200 {
            let mut rng = Rng::seed_from_u64(seed);
            let port = port_to_group(&net.view(me, 0), 1, &mut rng);
            assert_ne!(port, congested);
            seen.insert(port);
        }
        assert_eq!(seen.len(), 3, "the other gateways share the traffic");
    }

    #[test]
    fn intermediate_routers_avoid_source_and_destination_groups() {
        let net = Net::new(2, 4, 2, 1);
        let view = net.view(0, 0);
        let mut rng = Rng::seed_from_u64(1);
        let mut groups = std::collections::HashSet::new();
        for _ in 0..2000 {
            let r = random_intermediate_router(&view, 0, 5, &mut rng).unwrap();
            let g = net.topo.group_of(r);
            assert!(g != 0 && g != 5);
            groups.insert(g);
        }
        assert_eq!(groups.len(), net.topo.g - 2);
    }
}
