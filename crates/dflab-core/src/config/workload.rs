//! The `[workload]` section: application jobs (MPI-like motifs) on disjoint node sets instead
//! of the synthetic traffic or with it beside them (`background`), their placement, and the MPI/NIC model's
//! protocol constants and delays (defaults: the SC'22 toolkit's SST Firefly/Hermes and NIC
//! parameters, `../shared/reference/qadaptive-reference.md` §4.1).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// How job ranks are mapped to nodes. Jobs take consecutive slices of one node order, in job
/// order (rank r of a job is the r-th node of its slice); the nodes after the last job stay
/// idle.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// Node ids in order (contiguous, the ICS'24 "continuous" placement).
    #[default]
    Linear,
    /// A random permutation of the nodes drawn from the experiment's seed (differs between
    /// seeds).
    Random,
    /// One fixed random permutation drawn from `placement_seed`, not the experiment's seed: the
    /// same mapping in every run, standalone or co-run (the SC'22 study's list).
    RandomList,
    /// The node ids listed in `placement_file` (whitespace-separated, each at most once).
    File,
}

/// Where the synthetic traffic of `[traffic]` runs beside the jobs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Background {
    /// No synthetic traffic: the jobs alone.
    #[default]
    None,
    /// On the nodes no job's rank occupies (those of `null` jobs included), to destinations
    /// among the same nodes.
    IdleNodes,
    /// On every node, to any node; a job's node shares its source queue with the background.
    AllNodes,
}

impl Background {
    pub fn is_none(&self) -> bool {
        *self == Background::None
    }
}

/// One application job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JobConfig {
    /// The motif the job runs: ur, lu, fft3d, halo3d, lqcd, stencil5d, cosmoflow, dl, lulesh,
    /// alltoall, allreduce, halo2d, pingpong, null (idle), table (a program given as rows).
    pub motif: String,
    /// Ranks (one per node).
    #[schemars(range(min = 1, max = 16_777_216))]
    pub ranks: u32,
    /// A label for the job's rows (default: the motif's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Computation before the first iteration, in us (Ember's `wait2start`).
    #[serde(default = "default_wait2start")]
    #[schemars(range(min = 0.0, max = 1.0e9))]
    pub wait2start_us: f64,
    /// The motif's own parameters (the Motifs section of docs/config-keys.md); defaults are
    /// the reference's.
    #[serde(default)]
    pub params: Map<String, Value>,
}

fn default_wait2start() -> f64 {
    350.0
}

/// The MPI and NIC model: protocol sizes, the fixed delays of a message's path and the host's
/// costs per message and per call (defaults: the SC'22 toolkit's Firefly/Hermes; a host cost
/// set to 0, or `rendezvous_ack = false`, leaves it out).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct MpiConfig {
    /// Messages of at most this payload go eagerly (data with the match header); larger ones by
    /// rendezvous (request to send, clear to send, then the data). Hermes `shortMsgLength`.
    #[schemars(range(max = 1.0e12))]
    pub eager_limit_bytes: u64,
    /// The match header an eager message carries and the size of each rendezvous control
    /// message (fitted to the SC'22 Table I totals: about 40 B per eager and 80 B per rendezvous
    /// message beyond the payload).
    #[schemars(range(min = 1, max = 65536))]
    pub header_bytes: u64,
    /// Host time to start a send (Hermes tx setup), ns.
    #[schemars(range(min = 0.0, max = 1.0e6))]
    pub tx_setup_ns: f64,
    /// Host time to post a receive (Hermes rx setup), ns.
    #[schemars(range(min = 0.0, max = 1.0e6))]
    pub rx_setup_ns: f64,
    /// NIC time from a send's start to its first packet (NIC txDelay), ns.
    #[schemars(range(min = 0.0, max = 1.0e6))]
    pub nic_tx_ns: f64,
    /// NIC time to match an arrived message (NIC rxMatchDelay), ns.
    #[schemars(range(min = 0.0, max = 1.0e6))]
    pub nic_rx_match_ns: f64,
    /// NIC-to-host delivery of an arrived message (nic2host), ns.
    #[schemars(range(min = 0.0, max = 1.0e6))]
    pub nic2host_ns: f64,
    /// Host time to match a message with a receive (Hermes matchDelay), ns.
    #[schemars(range(min = 0.0, max = 1.0e6))]
    pub match_ns: f64,
    /// Packets a NIC keeps in its source queue at once; the rest of its messages wait in the
    /// NIC and are packetised as the queue drains (messages leave in the order they were
    /// started). The source queue is SST's link control output buffer, from whose `send` SST
    /// counts a packet's latency: 30 packets of 512 B in the SC'22 platform (`output_buf_size`
    /// 15,360 B; SST counts it in flits, so short packets fit more).
    #[schemars(range(min = 1, max = 1024))]
    pub nic_window_packets: u32,
    /// A rendezvous clear to send (Firefly's get request) leaves on the NIC's second send
    /// stream, Firefly's control machine: it waits for at most `nic_staged_packets` packets of
    /// the messages already in the NIC, not for the rest of them (the default). False: it
    /// queues behind every message its NIC started before it, as the others do.
    pub nic_control_stream: bool,
    /// With `nic_control_stream`: the data packets a NIC has staged ahead of a new control
    /// message, which go first; it then waits behind the source queue's packets too (Firefly:
    /// its send machine's `maxSendMachineQsize` of 100 in the SC'22 platform, ahead of the
    /// link control's output buffer, `nic_window_packets`).
    #[schemars(range(max = 1_000_000))]
    pub nic_staged_packets: u32,
    /// Host time to copy an eager send's payload before the NIC sees it, ps per byte (the
    /// SC'22 toolkit's Firefly: 344, `txMemcpyMod`; 0 leaves it out).
    #[schemars(range(min = 0.0, max = 1.0e6))]
    pub eager_copy_ps_per_byte: f64,
    /// Host time to pin a rendezvous send's buffer before its request to send, ns (the
    /// toolkit: 300), plus `rendezvous_pin_ns_per_page` per 4 KiB page (the toolkit: 10).
    #[schemars(range(min = 0.0, max = 1.0e6))]
    pub rendezvous_pin_ns: f64,
    #[schemars(range(min = 0.0, max = 1.0e6))]
    pub rendezvous_pin_ns_per_page: f64,
    /// A receive of more than `eager_limit_bytes` (its posted size) is posted only after its
    /// buffer is pinned, at the send side's cost (`rendezvous_pin_ns` +
    /// `rendezvous_pin_ns_per_page` per page), as Firefly does; the program goes on at once
    /// (the default). False: receives are posted at once.
    pub rendezvous_recv_pin: bool,
    /// With `rendezvous_recv_pin`: an `irecv` above the eager limit returns to the program
    /// only once its buffer is pinned, as Firefly's does (`processRecv_0`; the default).
    /// False: it returns at once.
    pub rendezvous_recv_pin_blocks: bool,
    /// A rendezvous receive's buffer is unpinned, at the cost of its pinning, before the call
    /// that waits for it returns, as Firefly's wait does (`processWaitCtx`; a rank's unpins
    /// follow one another; the default). False: receives are not unpinned.
    pub rendezvous_recv_unpin: bool,
    /// A rendezvous send completes when the receiver's acknowledgement (a `header_bytes`
    /// message sent when the data is in) arrives, as Firefly's does; false: when its last
    /// data packet is in the source queue.
    pub rendezvous_ack: bool,
    /// Host time of every MPI call of a program before it takes effect, ns (Firefly's
    /// `functionSM` enter latency: 30). A collective is one call; its own messages pay none.
    #[schemars(range(min = 0.0, max = 1.0e6))]
    pub call_enter_ns: f64,
    /// Host time from an MPI call's completion to the program's next operation, ns (Firefly's
    /// `functionSM` return latency: 30).
    #[schemars(range(min = 0.0, max = 1.0e6))]
    pub call_return_ns: f64,
}

impl Default for MpiConfig {
    fn default() -> Self {
        MpiConfig {
            eager_limit_bytes: 12_000,
            header_bytes: 40,
            tx_setup_ns: 13.0,
            rx_setup_ns: 10.0,
            nic_tx_ns: 5.0,
            nic_rx_match_ns: 10.0,
            nic2host_ns: 5.0,
            match_ns: 15.0,
            nic_window_packets: 30,
            nic_control_stream: true,
            nic_staged_packets: 100,
            eager_copy_ps_per_byte: 344.0,
            rendezvous_pin_ns: 300.0,
            rendezvous_pin_ns_per_page: 10.0,
            rendezvous_recv_pin: true,
            rendezvous_recv_pin_blocks: true,
            rendezvous_recv_unpin: true,
            rendezvous_ack: true,
            call_enter_ns: 30.0,
            call_return_ns: 30.0,
        }
    }
}

/// The most per rank and iteration rows a run keeps (each about 100 B in the results): UR's
/// 7,200 iterations on 528 ranks make 3.8 million.
pub const MAX_ITERATION_ROWS: u64 = 1_000_000;

/// Application jobs (see the module comment). The run ends when every job has finished and the
/// network is empty, or at `run.warmup_us + run.measure_us`, whichever comes first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct WorkloadConfig {
    /// The jobs, placed in this order.
    pub jobs: Vec<JobConfig>,
    pub placement: Placement,
    /// The seed of the `random-list` permutation.
    pub placement_seed: u64,
    /// The node list of the `file` placement (a path, relative to the working directory).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement_file: Option<String>,
    /// Width of the per-job throughput windows, us (the paper's 1 us).
    #[schemars(range(max = 1.0e6), extend("exclusiveMinimum" = 0.0))]
    pub throughput_window_us: f64,
    /// Keep one row per rank and iteration in the results (a job of many short iterations,
    /// like UR's 7,200, makes millions).
    pub record_iterations: bool,
    /// The jobs whose end ends the run (indices into `jobs`): once these have finished, the run
    /// stops whatever the others are doing (their rows say `finished = false`, their times run
    /// to the end). A target measured beside a background needs no more: everything its rows
    /// report happened before it finished. Empty (the default): every job.
    pub end_with_jobs: Vec<u32>,
    /// Synthetic traffic beside the jobs (`[traffic]`: pattern, load, process, phases): none,
    /// on the idle nodes, or on all nodes. It does not keep the run going: the run still ends
    /// when every job has finished.
    /// `none` is left out of the serialised form (and so of the result store's key).
    #[serde(skip_serializing_if = "Background::is_none")]
    #[schemars(extend("default" = "none"))]
    pub background: Background,
    pub mpi: MpiConfig,
}

impl Default for WorkloadConfig {
    fn default() -> Self {
        WorkloadConfig {
            jobs: Vec::new(),
            placement: Placement::Linear,
            placement_seed: 0,
            placement_file: None,
            throughput_window_us: 1.0,
            record_iterations: true,
            end_with_jobs: Vec::new(),
            background: Background::None,
            mpi: MpiConfig::default(),
        }
    }
}

impl WorkloadConfig {
    /// Checks that involve the network (the motifs check their own parameters when built);
    /// `nodes` counts the compute NICs (endpoints), each of which takes one rank.
    pub fn check(&self, nodes: usize) -> Result<()> {
        if self.jobs.is_empty() {
            return Err(Error::config("workload.jobs", "is empty; allowed: at least one job"));
        }
        let ranks: u64 = self.jobs.iter().map(|j| j.ranks as u64).sum();
        if ranks > nodes as u64 {
            return Err(Error::config(
                "workload.jobs",
                format!(
                    "the jobs have {ranks} ranks in all and the network {nodes} compute NICs (a rank per NIC); \
                     allowed: at most {nodes}"
                ),
            ));
        }
        let mut rows = 0u64;
        for (i, job) in self.jobs.iter().enumerate() {
            // Built once here so that a motif's own errors (its parameters, its rank count)
            // come when the experiment is read, not when it runs.
            let m = crate::workload::motifs::build(&job.motif, job.ranks, &job.params, &format!("workload.jobs[{i}]"))?;
            rows += job.ranks as u64 * m.iterations() as u64;
        }
        if self.record_iterations && rows > MAX_ITERATION_ROWS {
            return Err(Error::config(
                "workload.record_iterations",
                format!(
                    "the jobs run {rows} rank-iterations, one result row each (about {} MB); allowed: at most \
                     {MAX_ITERATION_ROWS}, or record_iterations = false (the per-job rows stay)",
                    rows * 100 / 1_000_000
                ),
            ));
        }
        for (i, &j) in self.end_with_jobs.iter().enumerate() {
            if j as usize >= self.jobs.len() || self.end_with_jobs[..i].contains(&j) {
                return Err(Error::config(
                    "workload.end_with_jobs",
                    format!(
                        "{j} is {}; allowed: distinct job indices from 0 to {}",
                        if j as usize >= self.jobs.len() { "not a job" } else { "listed twice" },
                        self.jobs.len() - 1
                    ),
                ));
            }
        }
        if self.placement == Placement::File && self.placement_file.is_none() {
            return Err(Error::config(
                "workload.placement_file",
                "is missing; placement = \"file\" needs a file of node ids",
            ));
        }
        Ok(())
    }

    /// The nodes no job's rank occupies (`null` jobs' ranks count as idle).
    pub fn idle_nodes(&self, nodes: usize) -> u64 {
        let busy: u64 = self.jobs.iter().filter(|j| j.motif != "null").map(|j| j.ranks as u64).sum();
        (nodes as u64).saturating_sub(busy)
    }

    /// Background traffic on idle nodes needs enough of them to send to each other.
    pub fn check_background(&self, nodes: usize, allow_self: bool) -> Result<()> {
        let idle = self.idle_nodes(nodes);
        let least = if allow_self { 1 } else { 2 };
        if self.background == Background::IdleNodes && idle < least {
            return Err(Error::config(
                "workload.background",
                format!(
                    "\"idle-nodes\", and the jobs leave {idle} of the network's {nodes} nodes idle; allowed: \
                     \"idle-nodes\" with at least {least} idle nodes, \"all-nodes\" or \"none\""
                ),
            ));
        }
        Ok(())
    }
}
