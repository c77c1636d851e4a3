//! The `[topology]` section: the Dragonfly's shape and how its global ports are wired.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How each group's global ports are wired to the other groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Arrangement {
    Absolute,
    Relative,
    Palmtree,
    Circulant,
}

/// Which router port holds slot `i` of a group's global wiring (the arrangements number a
/// group's global ports `0..a·h`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum GlobalPortOrder {
    /// Router `i / h`, port `i mod h`: a router's ports fill before the next router's (SST's
    /// `global_link_map`, BookSim). A tapered group (`(g − 1)·l < a·h`) leaves its last routers
    /// without global links.
    #[default]
    ByRouter,
    /// Router `i mod a`, port `i / a`: consecutive slots on consecutive routers, so a tapered
    /// group's global links spread evenly over its routers (at most one apart), as real
    /// machines are cabled. Not with `circulant`.
    RoundRobin,
}

/// dfly(p, a, h, g): `p` nodes per router, `a` routers per group, `h` global ports per router,
/// `g` groups, `links_per_pair` parallel global links between each pair of groups.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TopologyConfig {
    /// Nodes per router.
    #[schemars(range(min = 1, max = 4096))]
    pub p: usize,
    /// Routers per group.
    #[schemars(range(min = 1, max = 4096))]
    pub a: usize,
    /// Global ports per router.
    #[schemars(range(max = 4096))]
    pub h: usize,
    /// Number of groups; left out, the canonical `a*h/links_per_pair + 1`.
    #[schemars(range(min = 1))]
    pub g: Option<usize>,
    /// Parallel global links between each pair of groups (`l`). `None` derives it from `g` as
    /// the papers' `dfly(p, a, h, g)` notation does: the most links that fit,
    /// `⌊a·h / (g − 1)⌋` (so `dfly(4,8,4,9)` has 4), and 1 when `g` is not given either.
    /// Give it explicitly for a sparser network (SST's default is 1 whatever `g`).
    #[schemars(range(min = 1))]
    pub links_per_pair: Option<usize>,
    /// Wiring of the global ports.
    pub arrangement: Arrangement,
    /// Which router port holds each slot of the arrangement (matters for tapered networks).
    pub global_port_order: GlobalPortOrder,
    /// NICs per compute node: a node's NICs are consecutive host ports of one router
    /// (Slingshot machines attach every NIC of a node to the same switch), so `p` must be a
    /// multiple. Traffic patterns and job placement work on nodes; each NIC injects at the
    /// offered load (see `traffic.nic_policy`), a job's ranks fill a node's NICs in order.
    #[schemars(range(min = 1, max = 4096))]
    pub nics_per_node: usize,
    /// Groups that hold compute nodes, the first ones (`0..compute_groups`); the others
    /// (storage, service) are wired and carry transit traffic but neither send nor receive.
    /// Left out, every group.
    #[schemars(range(min = 1))]
    pub compute_groups: Option<usize>,
}

impl Default for TopologyConfig {
    fn default() -> Self {
        TopologyConfig {
            p: 4,
            a: 8,
            h: 4,
            g: None,
            links_per_pair: None,
            arrangement: Arrangement::Absolute,
            global_port_order: GlobalPortOrder::ByRouter,
            nics_per_node: 1,
            compute_groups: None,
        }
    }
}
