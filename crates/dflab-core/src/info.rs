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
    pub nodes: usize,
    pub radix: usize,
    pub host_ports: usize,
    pub local_ports: usize,
    pub global_ports: usize,
    pub unused_global_ports: usize,
    pub local_links: usize,
    pub global_links: usize,
    pub links_per_pair: usize,
    pub arrangement: String,
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
    Ok(TopologyInfo {
        shape: format!("dfly({}, {}, {}, {})", t.p, t.a, t.h, t.g),
        groups: t.g,
        routers: t.routers(),
        nodes: t.nodes(),
        radix: t.radix,
        host_ports: t.p,
        local_ports: t.a - 1,
        global_ports: t.h,
        unused_global_ports: t.routers() * t.h - 2 * global_links,
        local_links,
        global_links,
        links_per_pair: t.l,
        arrangement: format!("{:?}", t.arrangement).to_lowercase(),
        diameter: t.diameter(),
        routing: name.to_string(),
        vcs: cfg.routing.vcs.unwrap_or(vcs),
        max_router_hops,
    })
}
