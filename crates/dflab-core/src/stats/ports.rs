//! Per output port statistics for workload runs (the SC'22 study's network-level metrics,
//! `../shared/reference/workloads.md` §3.4): the bytes each job sent through each router port
//! (SST's per-port, per-job `send_bit_count`) and the port's stall time, the time it held a
//! packet for its link while no VC's head had the downstream credits to go (SST's
//! `output_port_stalls`). Kept only when the workload asks (a job per node); the network's hot
//! path pays one predictable branch otherwise.

use serde::Serialize;

use crate::topology::Topology;
use crate::units::{ps_to_us, Time};

pub struct PortStats {
    jobs: usize,
    /// The job of each node's traffic (`u16::MAX`: none).
    node_job: Vec<u16>,
    /// `bytes[port * jobs + job]`, ports by the fabric's port index.
    bytes: Vec<u64>,
    stall: Vec<Time>,
    /// When the port's current stall began (`Time::MAX`: not stalled).
    since: Vec<Time>,
}

/// One router port's row.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PortRow {
    pub router: u32,
    pub port: u16,
    /// `host`, `local` or `global`.
    pub class: &'static str,
    pub group: u32,
    /// The router and group at the link's far end (for a host port: the node and this group).
    pub peer: u32,
    pub peer_group: u32,
    pub stall_us: f64,
    /// Bytes sent through the port, per job.
    pub bytes: Vec<u64>,
}

impl PortStats {
    pub fn new(ports: usize, node_job: Vec<u16>, jobs: usize) -> PortStats {
        PortStats { jobs, node_job, bytes: vec![0; ports * jobs], stall: vec![0; ports], since: vec![Time::MAX; ports] }
    }

    /// A packet of node `src`'s traffic, `bytes` long, leaves port `pi` now.
    #[inline]
    pub fn on_send(&mut self, pi: usize, src: u32, bytes: u64, now: Time) {
        let job = self.node_job[src as usize];
        if job != u16::MAX {
            self.bytes[pi * self.jobs + job as usize] += bytes;
        }
        let since = std::mem::replace(&mut self.since[pi], Time::MAX);
        if since != Time::MAX {
            self.stall[pi] += now - since;
        }
    }

    /// Port `pi` holds packets and none can go for want of credits (from now, if not already).
    #[inline]
    pub fn on_blocked(&mut self, pi: usize, now: Time) {
        if self.since[pi] == Time::MAX {
            self.since[pi] = now;
        }
    }

    /// The rows of every port, stalls still open counted up to `end`.
    pub fn rows(&self, topo: &Topology, end: Time) -> Vec<PortRow> {
        let radix = topo.radix;
        (0..self.stall.len())
            .map(|pi| {
                let (router, port) = ((pi / radix) as u32, (pi % radix) as u16);
                let open = match self.since[pi] {
                    Time::MAX => 0,
                    since => end.saturating_sub(since),
                };
                let group = topo.group_of(router);
                let (class, peer, peer_group) = if topo.is_host_port(port) {
                    ("host", router * topo.p as u32 + port as u32, group)
                } else {
                    match topo.peer(router, port) {
                        Some((peer, _)) if topo.group_of(peer) == group => ("local", peer, group),
                        Some((peer, _)) => ("global", peer, topo.group_of(peer)),
                        None => ("unused", router, group),
                    }
                };
                PortRow {
                    router,
                    port,
                    class,
                    group,
                    peer,
                    peer_group,
                    stall_us: ps_to_us(self.stall[pi] + open),
                    bytes: self.bytes[pi * self.jobs..(pi + 1) * self.jobs].to_vec(),
                }
            })
            .collect()
    }
}
