//! Experiment description (serde) and its validation. The schema is documented in
//! `docs/config.md`; every field has a default so that a partial document is complete after
//! deserialisation, and unknown keys are rejected. Validation errors name the dotted field and
//! the allowed values.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::routing::Algorithm;
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
    pub links_per_pair: usize,
    pub arrangement: Arrangement,
}

impl Default for TopologyConfig {
    fn default() -> Self {
        TopologyConfig {
            p: 4,
            a: 8,
            h: 4,
            g: None,
            links_per_pair: 1,
            arrangement: Arrangement::Absolute,
        }
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RoutingConfig {
    pub algorithm: String,
    /// Force the number of VCs (the algorithm's VC index is clamped to `vcs - 1`).
    pub vcs: Option<usize>,
}

impl Default for RoutingConfig {
    fn default() -> Self {
        RoutingConfig {
            algorithm: "MIN".into(),
            vcs: None,
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
}

impl Default for TrafficConfig {
    fn default() -> Self {
        TrafficConfig {
            pattern: "ur".into(),
            load: 0.5,
            process: Process::Bernoulli,
            allow_self: false,
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
        RunConfig {
            warmup_us: 20.0,
            measure_us: 50.0,
            window_us: 1.0,
            check: false,
            watchdog_us: 50.0,
        }
    }
}

impl Experiment {
    /// Parse a JSON document; errors name the offending path (`network.flit_bytes`).
    pub fn from_json(text: &str) -> Result<Experiment> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let exp: Experiment = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let field = if path == "." {
                "config".to_string()
            } else {
                path
            };
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
                format!(
                    "{} is smaller than one packet (packet_flits = {})",
                    n.input_buffer_flits, n.packet_flits
                ),
            ));
        }
        if n.output_buffer_flits < n.packet_flits {
            return Err(Error::config(
                "network.output_buffer_flits",
                format!(
                    "{} is smaller than one packet (packet_flits = {})",
                    n.output_buffer_flits, n.packet_flits
                ),
            ));
        }
        Algorithm::parse(&self.routing.algorithm)?;
        if let Some(v) = self.routing.vcs {
            if v == 0 || v > 64 {
                return Err(Error::config(
                    "routing.vcs",
                    format!("{v} is out of range; allowed: 1 to 64"),
                ));
            }
        }
        Pattern::parse(&self.traffic.pattern, &topo)?;
        let t = &self.traffic;
        if !(t.load > 0.0 && t.load <= 1.0) {
            return Err(Error::config(
                "traffic.load",
                format!("{} is out of range; allowed: 0 < load <= 1", t.load),
            ));
        }
        let r = &self.run;
        non_negative_float("run.warmup_us", r.warmup_us)?;
        positive_float("run.measure_us", r.measure_us)?;
        positive_float("run.window_us", r.window_us)?;
        positive_float("run.watchdog_us", r.watchdog_us)?;
        if (r.warmup_us + r.measure_us) / r.window_us > 1.0e6 {
            return Err(Error::config(
                "run.window_us",
                "gives more than 10^6 windows; use a wider window",
            ));
        }
        Ok(())
    }
}

fn positive_int(field: &str, v: f64) -> Result<()> {
    if v < 1.0 {
        return Err(Error::config(
            field,
            format!("{v} is out of range; allowed: an integer >= 1"),
        ));
    }
    Ok(())
}

fn positive_float(field: &str, v: f64) -> Result<()> {
    if !(v.is_finite() && v > 0.0) {
        return Err(Error::config(
            field,
            format!("{v} is out of range; allowed: a number > 0"),
        ));
    }
    Ok(())
}

fn non_negative_float(field: &str, v: f64) -> Result<()> {
    if !(v.is_finite() && v >= 0.0) {
        return Err(Error::config(
            field,
            format!("{v} is out of range; allowed: a number >= 0"),
        ));
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
            (
                r#"{"network": {"packet_flits": 0}}"#,
                "network.packet_flits",
            ),
            (
                r#"{"network": {"packet_flits": 4, "input_buffer_flits": 3}}"#,
                "network.input_buffer_flits",
            ),
            (r#"{"routing": {"algorithm": "FOO"}}"#, "routing.algorithm"),
            (r#"{"traffic": {"pattern": "adv+33"}}"#, "traffic.pattern"),
            (r#"{"topology": {"g": 40}}"#, "topology.g"),
            (r#"{"run": {"measure_us": -1}}"#, "run.measure_us"),
        ] {
            let err = Experiment::from_json(doc).unwrap_err();
            assert!(err.to_string().starts_with(field), "{doc}: {err}");
        }
    }
}
