//! Synthetic traffic beside application jobs (`workload.background`): the generator of
//! `[traffic]` (pattern, load, process, phases) runs on the idle nodes (those no job's rank
//! occupies, `null` jobs' included; destinations among them too) or on every node (any
//! destination; a job's node shares its source queue and NIC with the background).
//!
//! [`WithBackground`] wraps the jobs' workload and the generator into one [`Workload`]: the
//! jobs keep their wake-up kinds and lanes, the generator's come after them; background packets
//! carry [`BACKGROUND_TAG`] and never reach the jobs. The run ends when every job has finished
//! and the jobs' own packets are delivered, whatever background traffic is still in the
//! network (or at the stop time). Background packets get their own statistics
//! ([`BackgroundReport`]).
//!
//! ⚠ Per-port bytes by job count packets by their source node: with `all-nodes`, the
//! background packets a job's nodes send count for that job.

use rand::SeedableRng;
use serde::Serialize;

use super::mpi::metrics::{LatencyRecorder, PacketLatency};
use super::mpi::placement;
use super::{Synthetic, Workload, WorkloadCtx};
use crate::config::workload::Background;
use crate::config::Experiment;
use crate::engine::observe::JobProgress;
use crate::error::Result;
use crate::network::{Packet, Stamps};
use crate::routing::Rng;
use crate::stats::ProbeSpec;
use crate::topology::Topology;
use crate::traffic::pattern::{random_permutation, uniform_below};
use crate::traffic::PatternSampler;
use crate::units::{ps_to_ns, Time};

/// The tag of background packets (the jobs' tags are message indices, far below).
pub const BACKGROUND_TAG: u32 = u32::MAX;
/// The generator's wake-up kinds start here (the jobs' are below).
const KIND_BASE: u8 = 0x40;
/// Draws of a non-uniform pattern before a destination outside the set is moved into it.
const REDRAWS: u32 = 8;

/// The nodes background traffic runs on, when not all of them.
pub struct NodeSet {
    /// In increasing order.
    pub nodes: Vec<u32>,
    /// Per node: its index in `nodes`, or `u32::MAX` outside the set.
    index: Vec<u32>,
    /// Per node: the first member at or after it (cyclically).
    next: Vec<u32>,
    /// A random permutation of the members (by index), for `perm`.
    perm: Vec<u32>,
    allow_self: bool,
}

impl NodeSet {
    /// `nodes` (increasing, at least one; two without `allow_self`) of a network of `all`;
    /// the permutation for `perm` is drawn from `rng`.
    pub fn new(nodes: Vec<u32>, all: usize, allow_self: bool, rng: &mut Rng) -> NodeSet {
        let mut index = vec![u32::MAX; all];
        for (i, &n) in nodes.iter().enumerate() {
            index[n as usize] = i as u32;
        }
        let mut next = vec![0; all];
        let mut after = nodes[0];
        for n in (0..all).rev() {
            if index[n] != u32::MAX {
                after = n as u32;
            }
            next[n] = after;
        }
        let perm = random_permutation(nodes.len() as u32, allow_self, rng);
        NodeSet { nodes, index, next, perm, allow_self }
    }

    /// A destination for a packet of `src` (a member): uniform traffic draws uniformly among
    /// the members, a permutation is one of the members; any other pattern draws up to
    /// [`REDRAWS`] times for a member (not `src` unless allowed), then takes the first member
    /// after its last draw.
    #[inline]
    pub fn destination<R: rand::Rng>(&self, sampler: &mut PatternSampler, src: u32, rng: &mut R) -> u32 {
        let i = self.index[src as usize];
        if sampler.is_uniform() {
            let m = self.nodes.len() as u32;
            return self.nodes[uniform_below(m, i, self.allow_self, rng) as usize];
        }
        if sampler.is_permutation() {
            return self.nodes[self.perm[i as usize] as usize];
        }
        let mut d = src;
        for _ in 0..REDRAWS {
            d = sampler.destination(src, rng);
            if self.index[d as usize] != u32::MAX && (self.allow_self || d != src) {
                return d;
            }
        }
        let d = self.next[d as usize];
        if d == src && !self.allow_self {
            return self.next[(src as usize + 1) % self.next.len()];
        }
        d
    }
}

/// What background traffic did (`SimResult::background`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BackgroundReport {
    /// `idle-nodes` or `all-nodes`, and the nodes generating.
    pub placement: &'static str,
    pub nodes: u32,
    /// `traffic.pattern` (canonical) and `traffic.load`.
    pub pattern: String,
    pub load: f64,
    pub packets_generated: u64,
    pub packets_delivered: u64,
    /// Generated and delivered bytes over the run (`sim_time_us`), as a fraction of the
    /// background nodes' host-link bandwidth.
    pub offered_load: f64,
    pub accepted_load: f64,
    /// Packet latency from injection to delivery (as the jobs' rows).
    #[serde(flatten)]
    pub latency: PacketLatency,
    /// From generation to delivery (with the source queue), mean, ns.
    pub packet_latency_mean_ns: f64,
}

/// The jobs with background traffic beside them (see the module comment).
pub struct WithBackground {
    jobs: Box<dyn Workload>,
    bg: Box<Synthetic>,
    placement: Background,
    /// The generating nodes when not all, for the per-port job map.
    idle: Option<Vec<u32>>,
    nodes: u32,
    pattern: String,
    load: f64,
    packet_bytes: u64,
    host_bw_gbps: f64,
    /// Packets the jobs put into the network and got back; background packets generated and
    /// delivered.
    fg_sent: u64,
    fg_delivered: u64,
    bg_generated: u64,
    bg_delivered: u64,
    latency: LatencyRecorder,
    packet_latency_sum: u128,
}

impl WithBackground {
    /// `jobs` (the workload of `cfg.workload`) with the background traffic of `cfg`.
    pub fn new(cfg: &Experiment, topo: &Topology, jobs: Box<dyn Workload>) -> Result<WithBackground> {
        let w = cfg.workload.as_ref().expect("a workload run");
        // Endpoints: with one NIC per node and every group computing, the nodes.
        w.check_background(topo.compute_endpoints(), cfg.traffic.allow_self)?;
        let all = topo.compute_endpoints();
        let idle = match w.background {
            Background::IdleNodes => {
                let mut busy = vec![false; all];
                let placed = placement::place(w, topo, cfg.seed)?;
                for (job, nodes) in w.jobs.iter().zip(&placed) {
                    if job.motif != "null" {
                        nodes.iter().for_each(|&n| busy[n as usize] = true);
                    }
                }
                Some((0..all as u32).filter(|&n| !busy[n as usize]).collect::<Vec<u32>>())
            }
            _ => None,
        };
        // The set's permutation comes from a stream of its own (kinds 0-3 are the engine's, 16
        // the placement's).
        let mut rng = Rng::seed_from_u64(crate::engine::stream_seed(cfg.seed, 17, 0));
        let within = idle.clone().map(|nodes| NodeSet::new(nodes, all, cfg.traffic.allow_self, &mut rng));
        let lane = jobs.fixed_delays().len();
        let bg = Synthetic::new(cfg, topo)?.as_background(within, KIND_BASE, lane, BACKGROUND_TAG);
        let n = &cfg.network;
        Ok(WithBackground {
            jobs,
            bg: Box::new(bg),
            placement: w.background,
            nodes: idle.as_ref().map_or(all, |v| v.len()) as u32,
            idle,
            pattern: cfg.traffic.pattern.parse("traffic.pattern", topo)?.canonical(),
            load: cfg.traffic.load,
            packet_bytes: n.flit_bytes as u64 * n.packet_flits as u64,
            host_bw_gbps: n.host_bw_gbps,
            fg_sent: 0,
            fg_delivered: 0,
            bg_generated: 0,
            bg_delivered: 0,
            latency: LatencyRecorder::default(),
            packet_latency_sum: 0,
        })
    }

    /// Run `f` on the jobs, counting the packets they send.
    fn jobs_do(&mut self, cx: &mut WorkloadCtx, f: impl FnOnce(&mut dyn Workload, &mut WorkloadCtx)) {
        let before = cx.core.acct.generated_total;
        f(self.jobs.as_mut(), cx);
        self.fg_sent += cx.core.acct.generated_total - before;
    }

    /// Run `f` on the generator, counting its packets; the source-queue notifications its
    /// packets triggered go to the run's list (they come back through `on_source_space`).
    fn bg_do(&mut self, cx: &mut WorkloadCtx, f: impl FnOnce(&mut Synthetic, &mut crate::engine::core::Core)) {
        let before = cx.core.acct.generated_total;
        f(&mut self.bg, cx.core);
        self.bg_generated += cx.core.acct.generated_total - before;
        cx.space.append(&mut self.bg.woken);
    }
}

impl Workload for WithBackground {
    fn fixed_delays(&self) -> Vec<Time> {
        let mut delays = self.jobs.fixed_delays();
        delays.extend(self.bg.fixed_delays());
        delays
    }

    fn start(&mut self, cx: &mut WorkloadCtx) {
        self.jobs_do(cx, |w, cx| w.start(cx));
        self.bg_do(cx, |s, core| s.start(core));
    }

    fn on_wake(&mut self, cx: &mut WorkloadCtx, kind: u8, a: u32, b: u32) {
        if kind >= KIND_BASE {
            self.bg_do(cx, |s, core| s.on_wake(core, kind - KIND_BASE, a, b));
        } else {
            self.jobs_do(cx, |w, cx| w.on_wake(cx, kind, a, b));
        }
    }

    /// The notification is shared: the jobs' NIC sends what its window allows (nothing if it
    /// has nothing), and a deferred background round resumes.
    fn on_source_space(&mut self, cx: &mut WorkloadCtx, node: u32) {
        self.jobs_do(cx, |w, cx| w.on_source_space(cx, node));
        if self.bg.take_deferred(node) {
            self.bg_do(cx, |s, core| s.resume_round(core, node));
        }
    }

    fn wants_deliveries(&self) -> bool {
        true
    }

    fn uniform_packets(&self) -> bool {
        self.jobs.uniform_packets()
    }

    fn on_delivered(&mut self, cx: &mut WorkloadCtx, pkt: &Packet, stamps: &Stamps) {
        if pkt.tag != BACKGROUND_TAG {
            self.fg_delivered += 1;
            return self.jobs_do(cx, |w, cx| w.on_delivered(cx, pkt, stamps));
        }
        let now = cx.now();
        let latency = now - stamps.inject_time;
        self.bg_delivered += 1;
        self.latency.record(latency);
        self.packet_latency_sum += (now - stamps.gen_time) as u128;
    }

    fn finished(&self) -> bool {
        // Jobs that end the run early leave the others' packets in flight (`ends_in_flight`).
        self.jobs.finished() && (self.jobs.ends_in_flight() || self.fg_delivered == self.fg_sent)
    }

    fn ends_in_flight(&self) -> bool {
        true
    }

    fn stalled(&self) -> Option<String> {
        self.jobs.stalled()
    }

    fn node_jobs(&self) -> Option<(Vec<u16>, usize)> {
        let (mut of, jobs) = self.jobs.node_jobs()?;
        // A `null` job's nodes send background traffic only.
        for &n in self.idle.iter().flatten() {
            of[n as usize] = u16::MAX;
        }
        Some((of, jobs))
    }

    fn report(&self, end: Time) -> Option<super::mpi::metrics::WorkloadReport> {
        self.jobs.report(end)
    }

    fn probes(&self) -> Vec<ProbeSpec> {
        self.jobs.probes()
    }

    fn progress(&self) -> Vec<JobProgress> {
        self.jobs.progress()
    }

    fn background(&self, end: Time) -> Option<BackgroundReport> {
        // Bytes per ns are GB/s: the fraction of `nodes` host links over `end`.
        let capacity = self.nodes as f64 * self.host_bw_gbps * ps_to_ns(end);
        let share = |packets: u64| {
            if capacity > 0.0 {
                (packets * self.packet_bytes) as f64 / capacity
            } else {
                0.0
            }
        };
        let packets = self.latency.packets();
        let packet_latency_mean_ns =
            if packets > 0 { ps_to_ns((self.packet_latency_sum / packets as u128) as Time) } else { 0.0 };
        Some(BackgroundReport {
            placement: if self.placement == Background::IdleNodes { "idle-nodes" } else { "all-nodes" },
            nodes: self.nodes,
            pattern: self.pattern.clone(),
            load: self.load,
            packets_generated: self.bg_generated,
            packets_delivered: self.bg_delivered,
            offered_load: share(self.bg_generated),
            accepted_load: share(self.bg_delivered),
            latency: self.latency.report(),
            packet_latency_mean_ns,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Uniform traffic in a set draws every other member about equally and nothing outside.
    #[test]
    fn uniform_destinations_stay_in_the_set_and_cover_it() {
        let cfg = Experiment::default();
        let topo = Topology::new(&cfg.topology).unwrap();
        let mut rng = Rng::seed_from_u64(1);
        let set = NodeSet::new(vec![3, 10, 11, 40], topo.nodes(), false, &mut rng);
        let pattern = cfg.traffic.pattern.parse("traffic.pattern", &topo).unwrap();
        let mut sampler = PatternSampler::new(pattern, &topo, false, &mut rng);
        let mut seen = [0u32; 4];
        for _ in 0..3000 {
            let d = set.destination(&mut sampler, 10, &mut rng);
            let i = set.nodes.iter().position(|&n| n == d).expect("a member");
            seen[i] += 1;
        }
        assert_eq!(seen[1], 0, "never the source");
        assert!(seen.iter().enumerate().all(|(i, &c)| i == 1 || (900..1100).contains(&c)), "{seen:?}");
    }

    /// A pattern that never hits the set lands on the next member after its draw, not the source.
    #[test]
    fn other_patterns_fall_back_to_the_next_member() {
        let cfg = Experiment::default();
        let topo = Topology::new(&cfg.topology).unwrap();
        let mut rng = Rng::seed_from_u64(1);
        let set = NodeSet::new(vec![0, 1], topo.nodes(), false, &mut rng);
        let pattern = crate::traffic::PatternSpec::from("adv+1").parse("traffic.pattern", &topo).unwrap();
        let mut sampler = PatternSampler::new(pattern, &topo, false, &mut rng);
        for src in [0, 1] {
            let d = set.destination(&mut sampler, src, &mut rng);
            assert_eq!(d, 1 - src);
        }
    }

    /// `perm` in a set is a permutation of the set, without fixed points.
    #[test]
    fn a_permutation_permutes_the_set() {
        let cfg = Experiment::default();
        let topo = Topology::new(&cfg.topology).unwrap();
        let mut rng = Rng::seed_from_u64(1);
        let members: Vec<u32> = (0..topo.nodes() as u32).filter(|n| n % 3 == 1).collect();
        let set = NodeSet::new(members.clone(), topo.nodes(), false, &mut rng);
        let pattern = crate::traffic::PatternSpec::from("perm").parse("traffic.pattern", &topo).unwrap();
        let mut sampler = PatternSampler::new(pattern, &topo, false, &mut rng);
        let mut got: Vec<u32> = members.iter().map(|&s| set.destination(&mut sampler, s, &mut rng)).collect();
        assert!(members.iter().zip(&got).all(|(s, d)| s != d));
        got.sort_unstable();
        assert_eq!(got, members);
    }
}
