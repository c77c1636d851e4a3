//! Topology summary for `dflab info`.

use serde::Serialize;

use crate::config::Experiment;
use crate::error::Result;
use crate::routing::canonical_algorithm;
use crate::routing::registry::declared_bounds;
use crate::topology::Topology;

#[derive(Debug, Clone, Serialize)]
pub struct TopologyInfo {
    pub shape: String,
    pub groups: usize,
    pub routers: usize,
    /// Endpoints (NICs), every group's.
    pub nodes: usize,
    /// NICs per compute node and the groups holding compute nodes (the first ones).
    pub nics_per_node: usize,
    pub compute_groups: usize,
    /// The compute nodes (hosts) and their NICs, which traffic and jobs run on.
    pub compute_nodes: usize,
    pub compute_endpoints: usize,
    pub radix: usize,
    pub host_ports: usize,
    pub local_ports: usize,
    pub global_ports: usize,
    pub unused_global_ports: usize,
    pub local_links: usize,
    pub global_links: usize,
    pub links_per_pair: usize,
    /// A group's injection bandwidth (its nodes' host links), GB/s.
    pub group_injection_gbps: f64,
    /// A group's global bandwidth out (its connected global links), GB/s.
    pub group_global_gbps: f64,
    /// Global over injection bandwidth of a group (below 1: a tapered network).
    pub taper: f64,
    /// The offered load (fraction of the host link) at which uniform random traffic fills the
    /// global links under minimal routing: `(C − 1)·l·B_global / (a·p·B_host·f)` with `C` the
    /// compute groups and `f` the share of a group's traffic that leaves it, capped at 1.
    pub ur_min_global_bound: f64,
    /// Minimal paths between two groups (their global links) and paths with two global hops
    /// through one intermediate group (`(g − 2)·l²`): the path diversity adaptive routing has.
    pub minimal_paths_per_group_pair: usize,
    pub two_global_hop_paths_per_group_pair: usize,
    pub arrangement: String,
    pub global_port_order: String,
    pub diameter: u32,
    pub routing: String,
    pub vcs: usize,
    pub max_router_hops: u32,
}

pub fn topology_info(cfg: &Experiment) -> Result<TopologyInfo> {
    cfg.validate()?;
    let name = canonical_algorithm(&cfg.routing.algorithm)?;
    let t = Topology::new(&cfg.topology)?;
    let (vcs, max_router_hops) = declared_bounds(t.clone(), cfg)?;
    let (local_links, global_links) = t.link_counts();
    let n = &cfg.network;
    let group_injection_gbps = (t.a * t.p) as f64 * n.host_bw_gbps;
    let group_global_gbps = ((t.g - 1) * t.l) as f64 * n.global_bw_gbps;
    let taper = if t.g > 1 { group_global_gbps / group_injection_gbps } else { 0.0 };
    // Under uniform random traffic among the compute nodes a fraction (N − a·p)/(N − nics) of a
    // compute group's injection leaves it (N compute endpoints; a NIC skips its own node), over
    // the links to the other compute groups.
    let c = t.compute_groups;
    let (nodes, group_nodes) = (t.compute_endpoints() as f64, (t.a * t.p) as f64);
    let leaving = if c > 1 { (nodes - group_nodes) / (nodes - t.nics as f64) } else { 0.0 };
    let ur_gbps = ((c.max(1) - 1) * t.l) as f64 * n.global_bw_gbps;
    let ur_min_global_bound = if c > 1 { (ur_gbps / (group_injection_gbps * leaving)).min(1.0) } else { 1.0 };
    Ok(TopologyInfo {
        shape: format!("dfly({}, {}, {}, {})", t.p, t.a, t.h, t.g),
        groups: t.g,
        routers: t.routers(),
        nodes: t.nodes(),
        nics_per_node: t.nics,
        compute_groups: c,
        compute_nodes: t.compute_nodes(),
        compute_endpoints: t.compute_endpoints(),
        radix: t.radix,
        host_ports: t.p,
        local_ports: t.a - 1,
        global_ports: t.h,
        unused_global_ports: t.routers() * t.h - 2 * global_links,
        local_links,
        global_links,
        links_per_pair: t.l,
        group_injection_gbps,
        group_global_gbps,
        taper,
        ur_min_global_bound,
        minimal_paths_per_group_pair: if t.g > 1 { t.l } else { 0 },
        two_global_hop_paths_per_group_pair: t.g.saturating_sub(2) * t.l * t.l,
        arrangement: format!("{:?}", t.arrangement).to_lowercase(),
        global_port_order: serde_json::to_value(cfg.topology.global_port_order)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        diameter: t.diameter(),
        routing: name.to_string(),
        vcs: cfg.routing.vcs.unwrap_or(vcs),
        max_router_hops,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::GlobalPortOrder;

    #[test]
    fn taper_and_the_uniform_bound_follow_the_global_links() {
        // The balanced dfly(4,8,4,33): as much global as injection bandwidth per group, and
        // uniform traffic under MIN is not bound by the global links.
        let info = topology_info(&Experiment::default()).unwrap();
        assert_eq!((info.taper, info.ur_min_global_bound), (1.0, 1.0));
        assert_eq!((info.minimal_paths_per_group_pair, info.two_global_hop_paths_per_group_pair), (1, 31));
        // Frontier class: 512 endpoints and 73 × 4 global links per group at one bandwidth:
        // taper 292 / 512 = 1 / 1.75; uniform traffic sends (37,888 − 512) / 37,887 of it out.
        let mut e = Experiment::default();
        let t = &mut e.topology;
        (t.p, t.a, t.h, t.g, t.links_per_pair) = (16, 32, 17, Some(74), Some(4));
        t.global_port_order = GlobalPortOrder::RoundRobin;
        let info = topology_info(&e).unwrap();
        assert!((info.taper - 292.0 / 512.0).abs() < 1e-12);
        let leaving = (37_888.0 - 512.0) / 37_887.0;
        assert!((info.ur_min_global_bound - 292.0 / 512.0 / leaving).abs() < 1e-12);
        assert_eq!((info.minimal_paths_per_group_pair, info.two_global_hop_paths_per_group_pair), (4, 72 * 16));
        assert_eq!((info.unused_global_ports, info.global_port_order.as_str()), (74 * 252, "round-robin"));
    }

    #[test]
    fn non_compute_groups_and_nics_change_the_uniform_bound() {
        // Aurora class: 175 groups, 166 computing, 8 NICs per node. Uniform traffic among the
        // 84,992 compute NICs leaves a group over its 165 x 2 links to other compute groups.
        let mut e = Experiment::default();
        let t = &mut e.topology;
        (t.p, t.a, t.h, t.g, t.links_per_pair) = (16, 32, 17, Some(175), Some(2));
        (t.nics_per_node, t.compute_groups) = (8, Some(166));
        let info = topology_info(&e).unwrap();
        assert_eq!((info.nodes, info.compute_endpoints, info.compute_nodes), (89_600, 84_992, 10_624));
        assert!((info.taper - 348.0 / 512.0).abs() < 1e-12);
        let leaving = (84_992.0 - 512.0) / (84_992.0 - 8.0);
        assert!((info.ur_min_global_bound - 330.0 / 512.0 / leaving).abs() < 1e-12);
    }
}
