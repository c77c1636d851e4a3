//! Where job ranks run: one node order (by `workload.placement`), sliced in job order.

use rand::seq::SliceRandom;
use rand::SeedableRng;

use crate::config::workload::{Placement, WorkloadConfig};
use crate::error::{Error, Result};
use crate::routing::Rng;
use crate::topology::Topology;

/// The endpoint (NIC) of each rank of each job: `nodes[job][rank]`. `seed` is the
/// experiment's seed (used by `random` only). The policies order the compute nodes; a node
/// with several NICs (`topology.nics_per_node`) takes that many consecutive ranks, one per
/// NIC in NIC order (Cray MPICH's block NIC policy with one rank per NIC).
pub fn place(w: &WorkloadConfig, topo: &Topology, seed: u64) -> Result<Vec<Vec<u32>>> {
    let nics = topo.nics as u32;
    let nodes = node_order(w, topo.compute_nodes() as u32, seed)?;
    let order: Vec<u32> = nodes.iter().flat_map(|&n| (0..nics).map(move |k| n * nics + k)).collect();
    let mut at = 0usize;
    let mut out = Vec::with_capacity(w.jobs.len());
    for job in &w.jobs {
        let n = job.ranks as usize;
        if at + n > order.len() {
            return Err(Error::config(
                "workload.placement_file",
                format!(
                    "lists {} nodes ({} NICs) and the jobs need {} ranks, one per NIC; allowed: at least as \
                     many NICs as ranks",
                    nodes.len(),
                    order.len(),
                    at + n
                ),
            ));
        }
        out.push(order[at..at + n].to_vec());
        at += n;
    }
    Ok(out)
}

fn node_order(w: &WorkloadConfig, nodes: u32, seed: u64) -> Result<Vec<u32>> {
    let mut order: Vec<u32> = (0..nodes).collect();
    match w.placement {
        Placement::Linear => {}
        // The stream kinds 0-3 are the engine's; placement draws from its own.
        Placement::Random => order.shuffle(&mut Rng::seed_from_u64(crate::engine::stream_seed(seed, 16, 0))),
        Placement::RandomList => {
            order.shuffle(&mut Rng::seed_from_u64(crate::engine::stream_seed(w.placement_seed, 17, 0)))
        }
        Placement::File => {
            let path = w.placement_file.as_deref().unwrap_or_default();
            order = read_node_file(path, nodes)?;
        }
    }
    Ok(order)
}

/// Node ids from a whitespace-separated text file (`#` starts a comment), each below `nodes`
/// and listed once.
pub fn read_node_file(path: &str, nodes: u32) -> Result<Vec<u32>> {
    let field = "workload.placement_file";
    let text = std::fs::read_to_string(path).map_err(|e| Error::config(field, format!("cannot read '{path}': {e}")))?;
    parse_node_list(&text, nodes).map_err(|m| Error::config(field, format!("'{path}': {m}")))
}

fn parse_node_list(text: &str, nodes: u32) -> std::result::Result<Vec<u32>, String> {
    let mut seen = vec![false; nodes as usize];
    let mut out = Vec::new();
    for word in text.lines().flat_map(|l| l.split('#').next().unwrap_or("").split_whitespace()) {
        let id: u32 = word.parse().map_err(|_| format!("'{word}' is not a node id; allowed: integers 0..{nodes}"))?;
        if id >= nodes {
            return Err(format!("node {id} does not exist; allowed: 0..{nodes}"));
        }
        if std::mem::replace(&mut seen[id as usize], true) {
            return Err(format!("node {id} is listed twice"));
        }
        out.push(id);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::workload::JobConfig;

    fn jobs(sizes: &[u32], placement: Placement) -> WorkloadConfig {
        let jobs = sizes
            .iter()
            .map(|&r| JobConfig {
                motif: "null".into(),
                ranks: r,
                name: None,
                wait2start_us: 0.0,
                params: Default::default(),
            })
            .collect();
        WorkloadConfig { jobs, placement, ..Default::default() }
    }

    /// One router of `nodes` single-NIC nodes.
    fn net(nodes: usize) -> Topology {
        net_nics(nodes, 1)
    }

    fn net_nics(endpoints: usize, nics: usize) -> Topology {
        let cfg = crate::config::TopologyConfig { p: endpoints, a: 1, h: 0, nics_per_node: nics, ..Default::default() };
        Topology::new(&cfg).unwrap()
    }

    #[test]
    fn a_node_with_several_nics_takes_consecutive_ranks_one_per_nic() {
        let t = net_nics(16, 4); // 4 nodes of 4 NICs
        let linear = place(&jobs(&[6, 2], Placement::Linear), &t, 1).unwrap();
        assert_eq!(linear, vec![vec![0, 1, 2, 3, 4, 5], vec![6, 7]]);
        for seed in 0..20 {
            let p = place(&jobs(&[8, 8], Placement::Random), &t, seed).unwrap();
            for job in &p {
                // Each job holds two whole nodes, their NICs in order.
                for node in job.chunks(4) {
                    assert_eq!(node[0] % 4, 0, "{p:?}");
                    assert!(node.windows(2).all(|w| w[1] == w[0] + 1), "{p:?}");
                }
            }
        }
        let err = place(&jobs(&[17], Placement::Linear), &t, 1).unwrap_err().to_string();
        assert!(err.contains("4 nodes (16 NICs)"), "{err}");
    }

    #[test]
    fn linear_slices_consecutive_nodes() {
        let p = place(&jobs(&[3, 2], Placement::Linear), &net(8), 1).unwrap();
        assert_eq!(p, vec![vec![0, 1, 2], vec![3, 4]]);
    }

    #[test]
    fn random_list_ignores_the_run_seed_and_random_does_not() {
        let w = jobs(&[5, 5], Placement::RandomList);
        assert_eq!(place(&w, &net(16), 1).unwrap(), place(&w, &net(16), 2).unwrap());
        let r = jobs(&[5, 5], Placement::Random);
        assert_ne!(place(&r, &net(16), 1).unwrap(), place(&r, &net(16), 2).unwrap());
        assert_eq!(place(&r, &net(16), 1).unwrap(), place(&r, &net(16), 1).unwrap());
        // Disjoint node sets, each node once.
        let mut all: Vec<u32> = place(&r, &net(16), 3).unwrap().concat();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), 10);
    }

    #[test]
    fn a_job_keeps_its_nodes_when_a_later_job_is_added() {
        // The SC'22 study's target keeps its mapping standalone and co-run.
        let alone = place(&jobs(&[6], Placement::RandomList), &net(16), 1).unwrap();
        let corun = place(&jobs(&[6, 10], Placement::RandomList), &net(16), 1).unwrap();
        assert_eq!(alone[0], corun[0]);
    }

    #[test]
    fn node_lists_are_checked() {
        assert_eq!(parse_node_list("3 1 # c\n2", 4).unwrap(), vec![3, 1, 2]);
        assert!(parse_node_list("1 1", 4).unwrap_err().contains("twice"));
        assert!(parse_node_list("9", 4).unwrap_err().contains("does not exist"));
        assert!(parse_node_list("x", 4).unwrap_err().contains("not a node id"));
    }
}
