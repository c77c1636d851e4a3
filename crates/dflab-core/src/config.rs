//! Experiment description (serde) and its validation. The schema is documented in
//! `docs/config.md`; every field has a default so that a partial document is complete after
//! deserialisation, and unknown keys are rejected. Validation errors name the dotted field and
//! the allowed values.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::routing::canonical_algorithm;
use crate::traffic::Pattern;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Experiment {
    pub name: String,
    pub seed: u64,
    pub topology: TopologyConfig,
    pub network: NetworkConfig,
    pub routing: RoutingConfig,
    pub traffic: TrafficConfig,
    pub run: RunConfig,
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
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arrangement {
    Absolute,
    Relative,
    Palmtree,
    Circulant,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TopologyConfig {
    pub p: usize,
    pub a: usize,
    pub h: usize,
    /// Number of groups; `None` means the canonical `a*h/links_per_pair + 1`.
    pub g: Option<usize>,
    /// Parallel global links between each pair of groups (`l`). `None` derives it from `g` as
    /// the papers' `dfly(p, a, h, g)` notation does: the most links that fit,
    /// `⌊a·h / (g − 1)⌋` (so `dfly(4,8,4,9)` has 4), and 1 when `g` is not given either.
    /// Give it explicitly for a sparser network (SST's default is 1 whatever `g`).
    pub links_per_pair: Option<usize>,
    pub arrangement: Arrangement,
}

impl Default for TopologyConfig {
    fn default() -> Self {
        TopologyConfig { p: 4, a: 8, h: 4, g: None, links_per_pair: None, arrangement: Arrangement::Absolute }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NetworkConfig {
    pub flit_bytes: u32,
    pub packet_flits: u32,
    pub host_bw_gbps: f64,
    pub local_bw_gbps: f64,
    pub global_bw_gbps: f64,
    pub xbar_bw_gbps: f64,
    pub input_buffer_flits: u32,
    pub output_buffer_flits: u32,
    pub host_latency_ns: f64,
    pub local_latency_ns: f64,
    pub global_latency_ns: f64,
    pub input_latency_ns: f64,
    pub output_latency_ns: f64,
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
            output_buffer_flits: 20,
            host_latency_ns: 10.0,
            local_latency_ns: 30.0,
            global_latency_ns: 300.0,
            input_latency_ns: 10.0,
            output_latency_ns: 10.0,
        }
    }
}

/// How the adaptive routings draw their Valiant intermediate router.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Intermediate {
    /// Uniform over the routers outside the source and destination groups (the Q-adaptive
    /// reference code's rejection loop).
    Outside,
    /// Uniform over all routers; a draw in the source or destination group leaves the packet
    /// without a non-minimal candidate, so it goes minimally (BookSim `adaptive_intm = 1`).
    Any,
}

/// Routing of packets whose source and destination routers share a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IntraGroup {
    /// Always the direct local hop (every reference implementation of the Q-adaptive papers).
    Minimal,
    /// The algorithm's own rule between the direct hop and a detour through a random third
    /// router of the group (SST `adaptive-local`, FOGSim local misrouting).
    Adaptive,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RoutingConfig {
    pub algorithm: String,
    /// Force the number of VCs (the algorithm's VC index is clamped to `vcs - 1`).
    pub vcs: Option<usize>,
    /// UGALg, UGALn, PAR: non-minimal iff `q_min > floor(adaptive_threshold · q_nm)`.
    pub adaptive_threshold: f64,
    /// UGAL-L: the bias `b` (flits) of `q_m·H_m <= q_nm·H_nm + b`; positive favours minimal.
    pub bias: f64,
    /// UGAL-L: minimal paths compared per decision (distinct gateways, so it matters only with
    /// `links_per_pair > 1`).
    pub min_candidates: usize,
    /// UGAL-L: non-minimal paths (intermediate routers) compared per decision.
    pub nonmin_candidates: usize,
    /// UGALg, UGALn, UGAL-L, PAR: how the intermediate router is drawn.
    pub intermediate: Intermediate,
    /// UGALg, UGALn, UGAL-L, UGAL-G, PAR: routing of intra-group packets.
    pub intra_group: IntraGroup,
    /// Q-adaptive, Q-routing: α, the rate for targets below the current Q (good news).
    pub learning_rate: f64,
    /// Q-adaptive, Q-routing: β, the rate for targets at or above the current Q (bad news).
    pub learning_rate2: f64,
    /// Q-adaptive, Q-routing: ε-greedy exploration probability.
    pub epsilon: f64,
    /// Q-adaptive: relative threshold at the source router (2550-node paper value: 0.05).
    pub q_thld1: f64,
    /// Q-adaptive: relative threshold at the first intermediate-group router (2550: 0.4).
    pub q_thld2: f64,
    /// Q-routing: router hops decided by the Q-table before minimal routing (VCs = max_q + 3).
    pub max_q: usize,
    /// Q-adaptive, Q-routing: hysteretic (α/β) or plain (α only) update.
    pub q_update: QUpdate,
    /// Q-adaptive, Q-routing: truncate Q to whole ns after each update (reference int64).
    pub q_truncate: bool,
}

/// Update rule of the learning routings (docs/qadaptive.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QUpdate {
    /// `learning_rate` when the target is below Q, `learning_rate2` otherwise.
    Hysteretic,
    /// `learning_rate` for both (Boyan & Littman's Q-routing).
    Plain,
}

impl Default for RoutingConfig {
    fn default() -> Self {
        RoutingConfig {
            algorithm: "MIN".into(),
            vcs: None,
            adaptive_threshold: 2.0,
            bias: 0.0,
            min_candidates: 1,
            nonmin_candidates: 1,
            intermediate: Intermediate::Outside,
            intra_group: IntraGroup::Minimal,
            learning_rate: 0.2,
            learning_rate2: 0.04,
            epsilon: 0.001,
            q_thld1: 0.2,
            q_thld2: 0.35,
            max_q: 2,
            q_update: QUpdate::Hysteretic,
            q_truncate: true,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Process {
    Bernoulli,
    Periodic,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrafficConfig {
    pub pattern: String,
    pub load: f64,
    pub process: Process,
    pub allow_self: bool,
    /// Transient experiments: from each phase's start on, its load and/or pattern replace the
    /// ones before (Q-adaptive §5.6 load steps, ICS'24 Fig. 17 pattern changes).
    pub phases: Vec<PhaseConfig>,
    /// Packets a node's source queue may hold; when it is full the node's generation pauses and
    /// resumes when a packet leaves (SST TrafficGen defers its rounds while the NIC is full).
    /// `None`: unbounded (open-loop sources; latency then includes any backlog).
    pub source_queue_packets: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhaseConfig {
    pub start_us: f64,
    #[serde(default)]
    pub load: Option<f64>,
    #[serde(default)]
    pub pattern: Option<String>,
}

impl Default for TrafficConfig {
    fn default() -> Self {
        TrafficConfig {
            pattern: "ur".into(),
            load: 0.5,
            process: Process::Bernoulli,
            allow_self: false,
            phases: Vec::new(),
            source_queue_packets: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    pub warmup_us: f64,
    pub measure_us: f64,
    pub window_us: f64,
    pub check: bool,
    pub watchdog_us: f64,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig { warmup_us: 20.0, measure_us: 50.0, window_us: 1.0, check: false, watchdog_us: 50.0 }
    }
}

impl RoutingConfig {
    /// Ranges of the adaptive routings' knobs (the algorithm name is checked by the registry).
    fn validate_knobs(&self) -> Result<()> {
        non_negative_float("routing.adaptive_threshold", self.adaptive_threshold)?;
        if !self.bias.is_finite() {
            return Err(Error::config(
                "routing.bias",
                format!("{} is out of range; allowed: a finite number of flits", self.bias),
            ));
        }
        for (field, v) in
            [("routing.min_candidates", self.min_candidates), ("routing.nonmin_candidates", self.nonmin_candidates)]
        {
            if !(1..=64).contains(&v) {
                return Err(Error::config(field, format!("{v} is out of range; allowed: 1 to 64")));
            }
        }
        Ok(())
    }
}

impl RoutingConfig {
    /// Ranges of the learning routings' knobs (Q-adaptive, Q-routing).
    fn validate_q_knobs(&self) -> Result<()> {
        for (field, v) in
            [("routing.learning_rate", self.learning_rate), ("routing.learning_rate2", self.learning_rate2)]
        {
            if !(v.is_finite() && v > 0.0 && v <= 1.0) {
                return Err(Error::config(field, format!("{v} is out of range; allowed: 0 < rate <= 1")));
            }
        }
        if !(self.epsilon.is_finite() && (0.0..=1.0).contains(&self.epsilon)) {
            return Err(Error::config("routing.epsilon", format!("{} is out of range; allowed: 0 to 1", self.epsilon)));
        }
        for (field, v) in [("routing.q_thld1", self.q_thld1), ("routing.q_thld2", self.q_thld2)] {
            if !v.is_finite() {
                return Err(Error::config(field, format!("{v} is out of range; allowed: a finite number")));
            }
        }
        if self.max_q > 32 {
            return Err(Error::config("routing.max_q", format!("{} is out of range; allowed: 0 to 32", self.max_q)));
        }
        Ok(())
    }
}

impl Experiment {
    /// Parse a JSON document; errors name the offending path (`network.flit_bytes`).
    pub fn from_json(text: &str) -> Result<Experiment> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let exp: Experiment = serde_path_to_error::deserialize(de).map_err(|e| {
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
        let topo = crate::topology::Topology::new(&self.topology)?;
        let n = &self.network;
        positive_int("network.flit_bytes", n.flit_bytes as f64)?;
        positive_int("network.packet_flits", n.packet_flits as f64)?;
        for (f, v) in [
            ("network.host_bw_gbps", n.host_bw_gbps),
            ("network.local_bw_gbps", n.local_bw_gbps),
            ("network.global_bw_gbps", n.global_bw_gbps),
            ("network.xbar_bw_gbps", n.xbar_bw_gbps),
        ] {
            positive_float(f, v)?;
        }
        for (f, v) in [
            ("network.host_latency_ns", n.host_latency_ns),
            ("network.local_latency_ns", n.local_latency_ns),
            ("network.global_latency_ns", n.global_latency_ns),
            ("network.input_latency_ns", n.input_latency_ns),
            ("network.output_latency_ns", n.output_latency_ns),
        ] {
            non_negative_float(f, v)?;
        }
        if n.input_buffer_flits < n.packet_flits {
            return Err(Error::config(
                "network.input_buffer_flits",
                format!("{} is smaller than one packet (packet_flits = {})", n.input_buffer_flits, n.packet_flits),
            ));
        }
        if n.output_buffer_flits < n.packet_flits {
            return Err(Error::config(
                "network.output_buffer_flits",
                format!("{} is smaller than one packet (packet_flits = {})", n.output_buffer_flits, n.packet_flits),
            ));
        }
        canonical_algorithm(&self.routing.algorithm)?;
        if let Some(v) = self.routing.vcs {
            if v == 0 || v > 64 {
                return Err(Error::config("routing.vcs", format!("{v} is out of range; allowed: 1 to 64")));
            }
        }
        self.routing.validate_knobs()?;
        self.routing.validate_q_knobs()?;
        Pattern::parse(&self.traffic.pattern, &topo)?;
        let t = &self.traffic;
        if !(t.load > 0.0 && t.load <= 1.0) {
            return Err(Error::config("traffic.load", format!("{} is out of range; allowed: 0 < load <= 1", t.load)));
        }
        self.validate_phases(&topo)?;
        if t.source_queue_packets == Some(0) {
            return Err(Error::config("traffic.source_queue_packets", "0 is out of range; allowed: an integer >= 1"));
        }
        let r = &self.run;
        non_negative_float("run.warmup_us", r.warmup_us)?;
        positive_float("run.measure_us", r.measure_us)?;
        positive_float("run.window_us", r.window_us)?;
        positive_float("run.watchdog_us", r.watchdog_us)?;
        if (r.warmup_us + r.measure_us) / r.window_us > 1.0e6 {
            return Err(Error::config("run.window_us", "gives more than 10^6 windows; use a wider window"));
        }
        Ok(())
    }
}

impl Experiment {
    fn validate_phases(&self, topo: &crate::topology::Topology) -> Result<()> {
        let end = self.run.warmup_us + self.run.measure_us;
        let mut prev = f64::NEG_INFINITY;
        for (i, ph) in self.traffic.phases.iter().enumerate() {
            let field = |k: &str| format!("traffic.phases[{i}].{k}");
            if !(ph.start_us.is_finite() && ph.start_us > 0.0 && ph.start_us < end) {
                return Err(Error::config(
                    field("start_us"),
                    format!("{} is out of range; allowed: 0 < start_us < warmup_us + measure_us = {end}", ph.start_us),
                ));
            }
            if ph.start_us <= prev {
                return Err(Error::config(field("start_us"), "phases must start in increasing order"));
            }
            prev = ph.start_us;
            if let Some(l) = ph.load {
                if !(l > 0.0 && l <= 1.0) {
                    return Err(Error::config(field("load"), format!("{l} is out of range; allowed: 0 < load <= 1")));
                }
            }
            if let Some(p) = &ph.pattern {
                Pattern::parse(p, topo).map_err(|e| match e {
                    Error::Config { message, .. } => Error::config(field("pattern"), message),
                    other => other,
                })?;
            }
            if ph.load.is_none() && ph.pattern.is_none() {
                return Err(Error::config(format!("traffic.phases[{i}]"), "a phase must set load, pattern or both"));
            }
        }
        Ok(())
    }
}

fn positive_int(field: &str, v: f64) -> Result<()> {
    if v < 1.0 {
        return Err(Error::config(field, format!("{v} is out of range; allowed: an integer >= 1")));
    }
    Ok(())
}

fn positive_float(field: &str, v: f64) -> Result<()> {
    if !(v.is_finite() && v > 0.0) {
        return Err(Error::config(field, format!("{v} is out of range; allowed: a number > 0")));
    }
    Ok(())
}

fn non_negative_float(field: &str, v: f64) -> Result<()> {
    if !(v.is_finite() && v >= 0.0) {
        return Err(Error::config(field, format!("{v} is out of range; allowed: a number >= 0")));
    }
    Ok(())
}

/// serde says "unknown field `x`, expected one of `a`, `b` at line 1 column 7"; keep the useful
/// part and drop the JSON position, which means nothing to a TOML user.
fn clean_serde_message(msg: &str) -> String {
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
    fn adaptive_routing_knobs_default_to_the_reference_and_are_range_checked() {
        let e = Experiment::from_json(r#"{"routing": {"algorithm": "ugal-l"}}"#).unwrap();
        let r = &e.routing;
        assert_eq!((r.adaptive_threshold, r.bias, r.min_candidates, r.nonmin_candidates), (2.0, 0.0, 1, 1));
        assert_eq!((r.intermediate, r.intra_group), (Intermediate::Outside, IntraGroup::Minimal));
        let e = Experiment::from_json(
            r#"{"routing": {"algorithm": "PAR", "adaptive_threshold": 1.5, "intermediate": "any",
                "intra_group": "adaptive", "bias": -3, "nonmin_candidates": 4}}"#,
        )
        .unwrap();
        assert_eq!(e.routing.intermediate, Intermediate::Any);
        assert_eq!(e.routing.intra_group, IntraGroup::Adaptive);
        for (doc, field, allowed) in [
            (r#"{"routing": {"adaptive_threshold": -1}}"#, "routing.adaptive_threshold", ">= 0"),
            (r#"{"routing": {"min_candidates": 0}}"#, "routing.min_candidates", "1 to 64"),
            (r#"{"routing": {"nonmin_candidates": 65}}"#, "routing.nonmin_candidates", "1 to 64"),
            (r#"{"routing": {"intermediate": "group"}}"#, "routing.intermediate", "outside"),
            (r#"{"routing": {"intra_group": "valiant"}}"#, "routing.intra_group", "adaptive"),
        ] {
            let err = Experiment::from_json(doc).unwrap_err().to_string();
            assert!(err.starts_with(field) && err.contains(allowed), "{doc}: {err}");
        }
    }
}
