//! Experiment description (serde) and its validation. Every field has a default so that a
//! partial document is complete after deserialisation, and unknown keys are rejected. The
//! schema ([`schema::document`]) is generated from these types: their doc comments are the
//! keys' descriptions and their `#[schemars(...)]` attributes the keys' ranges, which the
//! engine checks from the schema ([`schema::check_ranges`]). Validation errors name the dotted
//! field and the allowed values.

mod booksim;
pub mod routing;
pub mod schema;
mod topology;
pub mod workload;

use std::sync::OnceLock;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::routing::canonical_algorithm;
use crate::traffic::PatternSpec;

pub use routing::{NoParams, RoutingConfig, RoutingParams};
pub use topology::{Arrangement, GlobalPortOrder, TopologyConfig};

/// One experiment: topology, network, routing, traffic, run window and seed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Experiment {
    /// A label for the experiment (result directory and plot titles); not part of the results.
    pub name: String,
    /// The seed of every random stream of the run.
    pub seed: u64,
    pub topology: TopologyConfig,
    pub network: NetworkConfig,
    pub routing: RoutingConfig,
    pub traffic: TrafficConfig,
    pub run: RunConfig,
    /// Application jobs instead of the synthetic traffic, or beside it (`workload.background`;
    /// docs/workloads.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workload: Option<workload::WorkloadConfig>,
}

impl Default for Experiment {
    fn default() -> Self {
        Experiment {
            name: String::new(),
            seed: 1,
            topology: TopologyConfig::default(),
            network: NetworkConfig::default(),
            routing: RoutingConfig::default(),
            traffic: TrafficConfig::default(),
            run: RunConfig::default(),
            workload: None,
        }
    }
}

/// Packets, links, crossbar and buffers (bytes, GB/s = 10^9 bytes/s, ns, flits).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct NetworkConfig {
    /// Bytes of a flit.
    #[schemars(range(min = 1))]
    pub flit_bytes: u32,
    /// Flits of a packet (the unit of switching: virtual cut-through).
    #[schemars(range(min = 1, max = 65535))]
    pub packet_flits: u32,
    /// Bandwidth of the links between nodes and routers.
    #[schemars(extend("exclusiveMinimum" = 0.0))]
    pub host_bw_gbps: f64,
    /// Bandwidth of the links inside a group.
    #[schemars(extend("exclusiveMinimum" = 0.0))]
    pub local_bw_gbps: f64,
    /// Bandwidth of the links between groups.
    #[schemars(extend("exclusiveMinimum" = 0.0))]
    pub global_bw_gbps: f64,
    /// Bandwidth of a crossbar port (speedup = crossbar / link bandwidth).
    #[schemars(extend("exclusiveMinimum" = 0.0))]
    pub xbar_bw_gbps: f64,
    /// Capacity of each input VC buffer (of every link class without its own size below).
    #[schemars(range(min = 1))]
    pub input_buffer_flits: u32,
    /// Capacity of each input VC buffer of a router's host ports (the injection side); unset:
    /// `input_buffer_flits`.
    #[schemars(range(min = 1))]
    pub host_buffer_flits: Option<u32>,
    /// Capacity of each input VC buffer fed by a local (intra-group) link; unset:
    /// `input_buffer_flits`.
    #[schemars(range(min = 1))]
    pub local_buffer_flits: Option<u32>,
    /// Capacity of each input VC buffer fed by a global link; unset: `input_buffer_flits`.
    #[schemars(range(min = 1))]
    pub global_buffer_flits: Option<u32>,
    /// Capacity of each output VC buffer (with `output_queue = "shared"`: of each output
    /// port's queue, all its VCs together).
    #[schemars(range(min = 1))]
    pub output_buffer_flits: u32,
    /// Latency of a node-router link.
    #[schemars(range(min = 0.0, max = 1.0e9))]
    pub host_latency_ns: f64,
    /// Latency of a link inside a group.
    #[schemars(range(min = 0.0, max = 1.0e9))]
    pub local_latency_ns: f64,
    /// Latency of a link between groups.
    #[schemars(range(min = 0.0, max = 1.0e9))]
    pub global_latency_ns: f64,
    /// Latency of a router's input stage.
    #[schemars(range(min = 0.0, max = 1.0e9))]
    pub input_latency_ns: f64,
    /// Latency of a router's output stage.
    #[schemars(range(min = 0.0, max = 1.0e9))]
    pub output_latency_ns: f64,
    /// How output ports, NICs and crossbars are timed (docs/model.md, "Port timing").
    pub timing: PortTiming,
    /// With `timing = "booksim"`: the order of BookSim's router stages in an internal step
    /// (docs/model.md, "BookSim timing").
    pub router_pipeline: RouterPipeline,
    /// With `timing = "booksim"`: BookSim's `credit_delay`, cycles between a credit's arrival
    /// and its use by the upstream router.
    #[schemars(range(max = 1000))]
    pub credit_delay_cycles: u32,
    /// With `timing = "link-busy"`: a packet is available downstream one flit-time after it
    /// starts on a link instead of a whole packet-time (virtual cut-through at flit level, as
    /// FOGSim's phits move; the link stays busy for the whole packet).
    pub cut_through: bool,
    /// With `timing = "link-busy"`: how an output port buffers the packets the crossbar hands
    /// it (docs/model.md, "Output queues").
    pub output_queue: OutputQueue,
    /// With `timing = "link-busy"`: the crossbar serves requests from router inputs (transit)
    /// before those from node inputs (injection), least-recently-granted within each (FOGSim's
    /// default `PrioLRS` arbiter).
    pub transit_priority: bool,
}

/// How an output port buffers the packets the crossbar hands it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum OutputQueue {
    /// A buffer of `output_buffer_flits` per output VC; the link serves the VCs round robin,
    /// each head when its downstream credits cover it.
    #[default]
    PerVc,
    /// FOGSim's `bufferedOutPort`: one queue of `output_buffer_flits` per port, shared by its
    /// VCs; the crossbar admits a packet only if the queue has room and the downstream credits
    /// of its VC, net of the flits the queue already holds for that VC, cover it.
    Shared,
}

/// How output ports, NICs and crossbars are timed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PortTiming {
    /// A link is busy for a packet's serialisation from the moment the packet starts on it, and
    /// every router charges a crossbar transfer (packet bytes / crossbar bandwidth).
    #[default]
    LinkBusy,
    /// SST/Merlin's: output ports and NICs are driven by a wake-up timer (armed one flit-time
    /// after a packet or a credit reaches an idle output, re-armed one packet-time after each
    /// send), the crossbar moves packets on a clock of one flit per tick with no transfer time.
    Sst,
    /// BookSim2's input-queued router (`iq`) in cycles of one flit-time: per-flit VC and switch
    /// allocation by separable input-first allocators at an internal speedup, credits taken at
    /// switch allocation, a FIFO output queue per port, BookSim's channel and credit delays
    /// (`network/booksim.rs`). Single-flit packets only.
    Booksim,
}

/// The stage order of BookSim's router in one internal step (`timing = "booksim"`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RouterPipeline {
    /// BookSim2 master: every stage evaluates on the state the step began with, then all
    /// update, so VC allocation, switch allocation and the crossbar take one internal step
    /// each (`IQRouter::_InternalStep`).
    #[default]
    Standard,
    /// The DGB fork's `SINGLE_CYCLE` build: each stage updates before the next evaluates, so a
    /// flit can be allocated a VC and the switch and reach its output queue in one step.
    SingleCycle,
}

impl Default for NetworkConfig {
    /// The HPDC'21 Q-adaptive setup (`qadaptive-1056` preset).
    fn default() -> Self {
        NetworkConfig {
            flit_bytes: 128,
            packet_flits: 1,
            host_bw_gbps: 4.0,
            local_bw_gbps: 4.0,
            global_bw_gbps: 4.0,
            xbar_bw_gbps: 40.0,
            input_buffer_flits: 20,
            host_buffer_flits: None,
            local_buffer_flits: None,
            global_buffer_flits: None,
            output_buffer_flits: 20,
            host_latency_ns: 10.0,
            local_latency_ns: 30.0,
            global_latency_ns: 300.0,
            input_latency_ns: 10.0,
            output_latency_ns: 10.0,
            timing: PortTiming::LinkBusy,
            router_pipeline: RouterPipeline::Standard,
            credit_delay_cycles: 2,
            cut_through: false,
            output_queue: OutputQueue::PerVc,
            transit_priority: false,
        }
    }
}

/// How the adaptive routings draw their Valiant intermediate router.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Intermediate {
    /// Uniform over the routers outside the source and destination groups (the Q-adaptive
    /// reference code's rejection loop).
    #[default]
    Outside,
    /// Uniform over all routers; a draw in the source or destination group leaves the packet
    /// without a non-minimal candidate, so it goes minimally (BookSim `adaptive_intm = 1`).
    Any,
    /// As `any`, but when the intermediate group's router that the source group's link reaches
    /// is also the one linked to the destination group, that router: the path then crosses
    /// the intermediate group without a local hop (the DGB fork's `GetIntmNode`, second
    /// scheme; with parallel links, the first link of each pair).
    #[serde(rename = "any-shortcut")]
    AnyShortcut,
}

/// Routing of packets whose source and destination routers share a group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum IntraGroup {
    /// Always the direct local hop (every reference implementation of the Q-adaptive papers).
    #[default]
    Minimal,
    /// The algorithm's own rule between the direct hop and a detour through a random third
    /// router of the group (SST `adaptive-local`, FOGSim local misrouting).
    Adaptive,
}

/// Update rule of the learning routings (docs/qadaptive.md).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum QUpdate {
    /// `learning_rate` when the target is below Q, `learning_rate2` otherwise.
    #[default]
    Hysteretic,
    /// `learning_rate` for both (Boyan & Littman's Q-routing).
    Plain,
}

/// When a node generates its packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Process {
    Bernoulli,
    Periodic,
    // Every node at 1 ns + k·period, the period `slot/load` rounded to whole ns: SST/Merlin's
    // TrafficGen (the Q-adaptive fork's), whose nodes all send in the same instant. (A plain
    // comment: a doc comment on one variant makes the schema a oneOf.)
    Lockstep,
}

/// Synthetic traffic: where packets go (`pattern`), how many (`load`, a fraction of the host
/// link bandwidth per node) and when (`process`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TrafficConfig {
    /// Destination pattern: a short form (`ur`, `adv+1`, `router-mix:adv+1:25`, ...) or a table
    /// with `kind` and the family's parameters.
    pub pattern: PatternSpec,
    /// Offered load per node, a fraction of the host link bandwidth.
    #[schemars(extend("exclusiveMinimum" = 0.0), range(max = 1.0))]
    pub load: f64,
    /// `bernoulli`: a packet per slot with probability `load`; `periodic`: every slot/`load`
    /// from a random phase per node; `lockstep`: every node at 1 ns + k·round(slot/`load`, ns),
    /// as SST's TrafficGen does.
    pub process: Process,
    /// Patterns that could pick the source node may (SST's behaviour; default: they draw again).
    pub allow_self: bool,
    /// Transient experiments: from each phase's start on, its load and/or pattern replace the
    /// ones before (Q-adaptive §5.6 load steps, ICS'24 Fig. 17 pattern changes).
    pub phases: Vec<PhaseConfig>,
    /// Packets a node's source queue may hold; when it is full the node's generation pauses and
    /// resumes when a packet leaves (SST TrafficGen defers its rounds while the NIC is full).
    /// Left out: unbounded (open-loop sources; latency then includes any backlog).
    #[schemars(range(min = 1))]
    pub source_queue_packets: Option<u32>,
    /// Nodes with several NICs (`topology.nics_per_node`): every NIC generates at `load`
    /// toward the pattern's destination node, and this picks the NIC there.
    pub nic_policy: NicPolicy,
}

/// Which NIC of the destination node a synthetic packet goes to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum NicPolicy {
    /// A uniformly drawn NIC: one process per NIC sending to processes of the destination
    /// node at random.
    #[default]
    Random,
    /// The NIC of the sender's index (NIC i to NIC i), as ranks bound to NICs in the same
    /// order on every node talk to their counterparts.
    SameIndex,
}

/// From `start_us` on, this load and/or pattern replace the previous ones.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PhaseConfig {
    /// When the phase starts (µs from the start of the run).
    #[schemars(extend("exclusiveMinimum" = 0.0))]
    pub start_us: f64,
    /// The new offered load.
    #[serde(default)]
    #[schemars(extend("exclusiveMinimum" = 0.0), range(max = 1.0))]
    pub load: Option<f64>,
    /// The new pattern (either form).
    #[serde(default)]
    pub pattern: Option<PatternSpec>,
}

impl Default for TrafficConfig {
    fn default() -> Self {
        TrafficConfig {
            pattern: PatternSpec::default(),
            load: 0.5,
            process: Process::Bernoulli,
            allow_self: false,
            phases: Vec::new(),
            source_queue_packets: None,
            nic_policy: NicPolicy::Random,
        }
    }
}

/// The run: a warm-up, then the measured window; per-window series; checks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    /// Simulated time before measuring (at most 10^9 us: the picosecond clock's range, with
    /// room for every sum the engine makes).
    #[schemars(range(min = 0.0, max = 1.0e9))]
    pub warmup_us: f64,
    /// Simulated time measured (at least 1 ps).
    #[schemars(range(max = 1.0e9), extend("exclusiveMinimum" = 0.0))]
    pub measure_us: f64,
    /// Width of a window of the per-window series.
    #[schemars(range(max = 1.0e9), extend("exclusiveMinimum" = 0.0))]
    pub window_us: f64,
    /// Check the model's invariants every simulated µs (slower; results are the same).
    pub check: bool,
    /// Latencies from stamps truncated to whole ns, as SST's LinkControl records them
    /// (`getCurrentSimTimeNano()` at the send and at the head's arrival), for comparisons with
    /// SST; the default keeps the picosecond stamps.
    pub whole_ns_latency: bool,
    /// Series probes of the source decisions (ICS'24 Fig. 17): `min_path_queue_sum` and
    /// `min_path_packets`, the total occupancy of the output ports along each new inter-group
    /// packet's minimal path when it reaches its source router (every VC; the mean is their
    /// ratio), and, from UGAL-L, UGAL-LE, DGB and EDGB, `min_estimate_sum` and
    /// `source_decisions`, the minimal candidate's estimate their rule compares.
    pub decision_probes: bool,
    /// Report a deadlock when no packet moves for this long (checked at the end of each
    /// window of the global-link latency, so a shorter value means one such window).
    #[schemars(range(max = 1.0e9), extend("exclusiveMinimum" = 0.0))]
    pub watchdog_us: f64,
    /// End the warm-up as soon as the network is steady (docs/config.md, "Judged while it runs"): at
    /// the first barrier after which the last `2 × steady_windows` windows show a windowed mean
    /// latency and an accepted load that move by at most `steady_tolerance` between their two
    /// halves, with the network accepting what is offered. `warmup_us` is then the longest
    /// warm-up, and the run ends `measure_us` after the measurement starts. Synthetic traffic
    /// only.
    pub steady_warmup: bool,
    /// Stop a run once it is certainly saturated: `2 × steady_windows` measured windows in
    /// which the network accepts less than 95 % of the offered load in each half and the
    /// backlog grows. The summary then says `stopped = "saturated"` and covers the measurement
    /// up to the stop. Synthetic traffic only.
    pub stop_when_saturated: bool,
    /// Windows (`window_us` each) in each half of the steady-state and saturation tests.
    #[schemars(range(min = 1, max = 100000))]
    pub steady_windows: u32,
    /// Largest relative change between the two halves that counts as steady.
    #[schemars(range(max = 1.0), extend("exclusiveMinimum" = 0.0))]
    pub steady_tolerance: f64,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            warmup_us: 20.0,
            measure_us: 50.0,
            window_us: 1.0,
            check: false,
            whole_ns_latency: false,
            decision_probes: false,
            watchdog_us: 50.0,
            steady_warmup: false,
            stop_when_saturated: false,
            steady_windows: 5,
            steady_tolerance: 0.05,
        }
    }
}

/// The longest serialisation of one packet at any bandwidth the engine accepts (1 s).
const MAX_TRANSFER_NS: f64 = 1.0e9;

/// The experiment's schema with every sub-schema inlined (built once).
fn experiment_schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(schema::inline_schema_for::<Experiment>)
}

impl Experiment {
    /// Parse a JSON document; errors name the offending path (`network.flit_bytes`).
    pub fn from_json(text: &str) -> Result<Experiment> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| Error::config("config", format!("not valid JSON: {}", clean_serde_message(&e.to_string()))))?;
        // Ranges first, on the numbers as given: a value too large for its type is reported
        // with its allowed range rather than as a type error.
        schema::check_ranges(&value, experiment_schema(), "")?;
        let exp: Experiment = serde_path_to_error::deserialize(value).map_err(|e| {
            let path = e.path().to_string();
            let field = if path == "." { "config".to_string() } else { path };
            Error::config(field, clean_serde_message(&e.inner().to_string()))
        })?;
        exp.validate()?;
        Ok(exp)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("config serialises")
    }

    /// Range and consistency checks beyond what the types enforce.
    pub fn validate(&self) -> Result<()> {
        let value = serde_json::to_value(self).expect("config serialises");
        schema::check_ranges(&value, experiment_schema(), "")?;
        let topo = crate::topology::Topology::new(&self.topology)?;
        let n = &self.network;
        let [host, local, global] = n.input_buffers();
        for (field, cap) in [
            ("network.input_buffer_flits", n.input_buffer_flits),
            ("network.host_buffer_flits", host),
            ("network.local_buffer_flits", local),
            ("network.global_buffer_flits", global),
            ("network.output_buffer_flits", n.output_buffer_flits),
        ] {
            if cap < n.packet_flits {
                return Err(Error::config(
                    field,
                    format!("{cap} is smaller than one packet; allowed: >= packet_flits ({})", n.packet_flits),
                ));
            }
        }
        self.check_times()?;
        n.check_booksim()?;
        canonical_algorithm(&self.routing.algorithm)?;
        crate::routing::registry::check_params(self)?;
        self.traffic.pattern.parse("traffic.pattern", &topo)?;
        if topo.compute_nodes() < 2 && !self.traffic.allow_self {
            // Every pattern sends to other nodes (newcomer #27: a 1-node network sent to itself).
            return Err(Error::config(
                "traffic.pattern",
                "every pattern sends to other nodes, and this network has 1 node; allowed: at least 2 nodes, \
                 or traffic.allow_self = true",
            ));
        }
        self.validate_phases(&topo)?;
        if let Some(w) = &self.workload {
            w.check(topo.compute_endpoints())?;
            w.check_background(topo.compute_endpoints(), self.traffic.allow_self)?;
        }
        let r = &self.run;
        if self.workload.is_some() && (r.steady_warmup || r.stop_when_saturated) {
            let field = if r.steady_warmup { "run.steady_warmup" } else { "run.stop_when_saturated" };
            return Err(Error::config(field, "applies to synthetic traffic only; allowed with [workload]: false"));
        }
        if !(1..=100_000).contains(&r.steady_windows) {
            return Err(Error::config("run.steady_windows", "must be between 1 and 100000"));
        }
        if !(r.steady_tolerance > 0.0 && r.steady_tolerance <= 1.0) {
            return Err(Error::config("run.steady_tolerance", "must be in (0, 1]"));
        }
        if (r.warmup_us + r.measure_us) / r.window_us > 1.0e6 {
            return Err(Error::config("run.window_us", "gives more than 10^6 windows; use a wider window"));
        }
        Ok(())
    }

    /// The effective experiment: the canonical algorithm name with only its own parameters
    /// (defaults filled in), patterns in their canonical form, the derived `g` and
    /// `links_per_pair` explicit. Equal simulations have equal canonical forms: the result
    /// store keys on it.
    pub fn canonical(&self) -> Result<Experiment> {
        self.validate()?;
        let topo = crate::topology::Topology::new(&self.topology)?;
        let mut c = self.clone();
        c.topology.g = Some(topo.g);
        c.topology.links_per_pair = Some(topo.l);
        // Every group computing, written out, is the default.
        if c.topology.compute_groups == Some(topo.g) {
            c.topology.compute_groups = None;
        }
        c.routing.algorithm = canonical_algorithm(&self.routing.algorithm)?.to_string();
        c.routing.params = crate::routing::registry::effective_params(self)?;
        if let Some(w) = &mut c.workload {
            for (i, job) in w.jobs.iter_mut().enumerate() {
                job.params =
                    crate::workload::motifs::canonical_params(&job.motif, &job.params, &format!("workload.jobs[{i}]"))?;
            }
            // The staged packets act only on the control stream.
            if !w.mpi.nic_control_stream {
                w.mpi.nic_staged_packets = crate::config::workload::MpiConfig::default().nic_staged_packets;
            }
        }
        // A class's buffer written out as the common size is the common size.
        let n = &mut c.network;
        for class in [&mut n.host_buffer_flits, &mut n.local_buffer_flits, &mut n.global_buffer_flits] {
            if *class == Some(n.input_buffer_flits) {
                *class = None;
            }
        }
        c.traffic.pattern = PatternSpec::Short(self.traffic.pattern.parse("traffic.pattern", &topo)?.canonical());
        for (i, ph) in c.traffic.phases.iter_mut().enumerate() {
            if let Some(p) = &ph.pattern {
                let field = format!("traffic.phases[{i}].pattern");
                ph.pattern = Some(PatternSpec::Short(p.parse(&field, &topo)?.canonical()));
            }
        }
        Ok(c)
    }

    /// Times the schema's bounds do not cover: a packet's serialisation at each bandwidth
    /// (bytes over GB/s, at most 1 s: the engine adds such times to the picosecond clock; on a
    /// link at least 1 ps) and
    /// a measurement that rounds to no picosecond at all.
    fn check_times(&self) -> Result<()> {
        let n = &self.network;
        let bytes = n.flit_bytes as f64 * n.packet_flits as f64;
        // (field, bandwidth, a link: at least 1 ps per packet, since the injection slot is one
        // packet time on the host link and a zero slot would offer unbounded traffic).
        for (field, bw, link) in [
            ("network.host_bw_gbps", n.host_bw_gbps, true),
            ("network.local_bw_gbps", n.local_bw_gbps, true),
            ("network.global_bw_gbps", n.global_bw_gbps, true),
            ("network.xbar_bw_gbps", n.xbar_bw_gbps, false),
        ] {
            let ns = bytes / bw;
            if link && crate::units::ns_to_ps(ns) == 0 {
                return Err(Error::config(
                    field,
                    format!(
                        "{bw} is out of range: a packet of {bytes} bytes would take less than 1 ps; allowed: <= {:e}",
                        bytes * 1000.0 / 0.5
                    ),
                ));
            }
            if ns.is_nan() || ns > MAX_TRANSFER_NS {
                return Err(Error::config(
                    field,
                    format!(
                        "{bw} is out of range: a packet of {bytes} bytes would take {ns:e} ns; allowed: \
                         >= {:e} (a packet in at most 1 s)",
                        bytes / MAX_TRANSFER_NS
                    ),
                ));
            }
        }
        if n.timing == PortTiming::Sst {
            // SST timing: a flit on each link is a timer's delay, a flit at crossbar bandwidth
            // the clock's period; neither may round to nothing.
            let flit = n.flit_bytes as f64;
            for (field, bw) in [
                ("network.host_bw_gbps", n.host_bw_gbps),
                ("network.local_bw_gbps", n.local_bw_gbps),
                ("network.global_bw_gbps", n.global_bw_gbps),
                ("network.xbar_bw_gbps", n.xbar_bw_gbps),
            ] {
                if crate::units::transfer_ps(n.flit_bytes as u64, bw) == 0 {
                    return Err(Error::config(
                        field,
                        format!(
                            "{bw} is out of range with timing = \"sst\": a flit of {flit} bytes would take less \
                             than 1 ps (a timer's delay, the crossbar clock's period); allowed: <= {:e}",
                            flit * 1000.0 / 0.5
                        ),
                    ));
                }
            }
        }
        if crate::units::us_to_ps(self.run.measure_us) == 0 {
            return Err(Error::config(
                "run.measure_us",
                format!("{} rounds to 0 ps; allowed: at least 0.000001 (1 ps)", self.run.measure_us),
            ));
        }
        Ok(())
    }

    fn validate_phases(&self, topo: &crate::topology::Topology) -> Result<()> {
        let end = self.run.warmup_us + self.run.measure_us;
        let mut prev = f64::NEG_INFINITY;
        for (i, ph) in self.traffic.phases.iter().enumerate() {
            let field = |k: &str| format!("traffic.phases[{i}].{k}");
            if ph.start_us >= end {
                return Err(Error::config(
                    field("start_us"),
                    format!("{} is out of range; allowed: < warmup_us + measure_us = {end}", ph.start_us),
                ));
            }
            if ph.start_us <= prev {
                return Err(Error::config(field("start_us"), "phases must start in increasing order"));
            }
            prev = ph.start_us;
            if let Some(p) = &ph.pattern {
                p.parse(&field("pattern"), topo)?;
            }
            if ph.load.is_none() && ph.pattern.is_none() {
                return Err(Error::config(format!("traffic.phases[{i}]"), "a phase must set load, pattern or both"));
            }
        }
        Ok(())
    }
}

/// serde says "unknown field `x`, expected one of `a`, `b` at line 1 column 7"; keep the useful
/// part and drop the JSON position, which means nothing to a TOML user.
pub(crate) fn clean_serde_message(msg: &str) -> String {
    match msg.find(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_document_gives_the_hpdc_defaults() {
        let e = Experiment::from_json("{}").unwrap();
        assert_eq!(e.topology.p, 4);
        assert_eq!(e.network.input_buffer_flits, 20);
        assert_eq!(e.routing.algorithm, "MIN");
    }

    #[test]
    fn unknown_key_names_the_path_and_allowed_keys() {
        let err = Experiment::from_json(r#"{"network": {"flitbytes": 3}}"#).unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("network.flitbytes"), "{msg}");
        assert!(msg.contains("flit_bytes"), "{msg}");
    }

    #[test]
    fn wrong_type_names_the_field() {
        let err = Experiment::from_json(r#"{"traffic": {"load": "high"}}"#).unwrap_err();
        assert!(err.to_string().starts_with("traffic.load"), "{err}");
    }

    #[test]
    fn out_of_range_values_are_rejected() {
        for (doc, field) in [
            (r#"{"traffic": {"load": 1.5}}"#, "traffic.load"),
            (r#"{"traffic": {"load": 0}}"#, "traffic.load"),
            (r#"{"network": {"packet_flits": 0}}"#, "network.packet_flits"),
            (r#"{"network": {"packet_flits": 4, "input_buffer_flits": 3}}"#, "network.input_buffer_flits"),
            (r#"{"routing": {"algorithm": "FOO"}}"#, "routing.algorithm"),
            (r#"{"traffic": {"pattern": "adv+33"}}"#, "traffic.pattern"),
            (r#"{"topology": {"g": 40}}"#, "topology.g"),
            (r#"{"run": {"measure_us": -1}}"#, "run.measure_us"),
        ] {
            let err = Experiment::from_json(doc).unwrap_err();
            assert!(err.to_string().starts_with(field), "{doc}: {err}");
        }
    }

    #[test]
    fn routing_parameters_are_the_algorithms_own_and_range_checked() {
        let e = Experiment::from_json(r#"{"routing": {"algorithm": "ugal-l"}}"#).unwrap();
        let c = e.canonical().unwrap();
        assert_eq!(c.routing.algorithm, "UGAL-L");
        let p = &c.routing.params;
        assert_eq!(
            (p["bias"].as_f64(), p["min_candidates"].as_u64(), p["nonmin_candidates"].as_u64()),
            (Some(0.0), Some(1), Some(1))
        );
        assert_eq!((p["intermediate"].as_str(), p["intra_group"].as_str()), (Some("outside"), Some("minimal")));
        assert!(!p.contains_key("adaptive_threshold"), "UGAL-L has no threshold: {p:?}");
        let e = Experiment::from_json(
            r#"{"routing": {"algorithm": "PAR", "adaptive_threshold": 1.5, "intermediate": "any",
                "intra_group": "adaptive", "bias": -3, "nonmin_candidates": 4}}"#,
        )
        .unwrap();
        let p = e.canonical().unwrap().routing.params;
        assert_eq!((p["intermediate"].as_str(), p["intra_group"].as_str()), (Some("any"), Some("adaptive")));
        assert!(!p.contains_key("bias"), "UGAL-L's bias does not apply to PAR: {p:?}");
        for (doc, field, allowed) in [
            (r#"{"routing": {"algorithm": "UGALn", "adaptive_threshold": -1}}"#, "routing.adaptive_threshold", ">= 0"),
            (r#"{"routing": {"algorithm": "UGAL-L", "min_candidates": 0}}"#, "routing.min_candidates", "1 to 64"),
            (r#"{"routing": {"nonmin_candidates": 65}}"#, "routing.nonmin_candidates", "1 to 64"),
            (r#"{"routing": {"algorithm": "PAR", "intermediate": "group"}}"#, "routing.intermediate", "outside"),
            // A parameter of another algorithm is ignored, but its value must still be valid.
            (r#"{"routing": {"intra_group": "valiant"}}"#, "routing.intra_group", "adaptive"),
            (
                r#"{"routing": {"algorithm": "MIN", "q_thld9": 1}}"#,
                "routing.q_thld9",
                "allowed: algorithm, vcs, vc_layout",
            ),
        ] {
            let err = Experiment::from_json(doc).unwrap_err().to_string();
            assert!(err.starts_with(field) && err.contains(allowed), "{doc}: {err}");
        }
    }

    /// MIN with a Q-learning knob is the same simulation as MIN: the same canonical form.
    #[test]
    fn a_knob_of_another_algorithm_leaves_the_canonical_form_unchanged() {
        let plain = Experiment::from_json(r#"{"routing": {"algorithm": "MIN"}}"#).unwrap().canonical().unwrap();
        let knob = Experiment::from_json(r#"{"routing": {"algorithm": "min", "q_thld1": 0.3, "bias": 5}}"#)
            .unwrap()
            .canonical()
            .unwrap();
        assert_eq!(plain.to_json(), knob.to_json());
    }

    /// Too large for its type: the range is named, not the type (newcomer trial #26).
    #[test]
    fn integers_beyond_their_type_give_the_allowed_range() {
        for (doc, want) in [
            (
                r#"{"network": {"flit_bytes": 9999999999999}}"#,
                "network.flit_bytes: 9999999999999 is out of range; allowed: 1 to 4294967295",
            ),
            (
                r#"{"traffic": {"source_queue_packets": 4294967296}}"#,
                "traffic.source_queue_packets: 4294967296 is out of range; allowed: 1 to 4294967295",
            ),
        ] {
            assert_eq!(Experiment::from_json(doc).unwrap_err().to_string(), want);
        }
    }

    /// Newcomer #14 and #11: times beyond the picosecond clock, bandwidths that make a packet
    /// take longer than a second, and a measurement that rounds to 0 ps are refused with their
    /// field (they used to saturate, wrap and give silently wrong results).
    #[test]
    fn sst_timing_refuses_a_flit_time_that_rounds_to_nothing() {
        let mut c = Experiment::default();
        c.network.timing = PortTiming::Sst;
        c.network.flit_bytes = 1;
        c.network.xbar_bw_gbps = 1e9;
        let msg = c.validate().unwrap_err().to_string();
        assert!(msg.starts_with("network.xbar_bw_gbps: 1000000000 is out of range with timing = \"sst\""), "{msg}");
        // The link-busy timing has no crossbar clock: the same network is valid there.
        c.network.timing = PortTiming::LinkBusy;
        c.validate().unwrap();
    }

    #[test]
    fn times_beyond_the_clock_are_refused_with_their_field() {
        for (doc, field) in [
            (r#"{"network": {"global_latency_ns": 1e30}}"#, "network.global_latency_ns"),
            (r#"{"run": {"warmup_us": 1e15, "window_us": 1e15}}"#, "run.warmup_us"),
            (r#"{"run": {"warmup_us": 1e13, "measure_us": 1e13}}"#, "run.measure_us"),
            (r#"{"run": {"measure_us": 1e-9}}"#, "run.measure_us"),
            (r#"{"run": {"watchdog_us": 1e300}}"#, "run.watchdog_us"),
            (r#"{"network": {"global_bw_gbps": 1e-300}}"#, "network.global_bw_gbps"),
            (r#"{"network": {"host_bw_gbps": 1e308}}"#, "network.host_bw_gbps"),
            (r#"{"network": {"flit_bytes": 4000000000, "packet_flits": 2}}"#, "network.host_bw_gbps"),
        ] {
            let err = Experiment::from_json(doc).and_then(|e| e.validate()).unwrap_err().to_string();
            assert!(err.starts_with(&format!("{field}: ")), "{doc}: {err}");
        }
        // The largest accepted values still run the arithmetic without overflow.
        let e = Experiment::from_json(r#"{"run": {"warmup_us": 1e9, "measure_us": 1e9, "window_us": 1e9}}"#).unwrap();
        e.validate().unwrap();
    }

    /// Newcomer #27: a 1-node network has no other node to send to.
    #[test]
    fn one_node_needs_allow_self() {
        let doc = |allow: bool| {
            format!(r#"{{"topology": {{"p": 1, "a": 1, "h": 0, "g": 1}}, "traffic": {{"allow_self": {allow}}}}}"#)
        };
        let err = Experiment::from_json(&doc(false)).and_then(|e| e.validate()).unwrap_err().to_string();
        assert!(err.starts_with("traffic.pattern: every pattern sends to other nodes"), "{err}");
        Experiment::from_json(&doc(true)).unwrap().validate().unwrap();
    }
}
