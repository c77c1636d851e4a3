//! EDGB — DGB enhanced with UGAL-LE's contention term (Chaulagain & Yuan, ICS'24 §5.1.2): at
//! the source router, when it has no global link of its own to the destination group,
//! minimal iff `H_min·q_min + q_min·max(C − 1, 0) ≤ ⌊H_nm·(q_nm + b)⌋⁺`, where `C` is the
//! contention factor of the destination group from the router's own sliding-window counters
//! (`contention.rs`, §4.2 Eq. 1) and everything else is DGB's (`dgb.rs`). No public EDGB code
//! exists; the paper's choices and ours (recorded in `docs/ugal-le.md`):
//!
//! * `η = 0.001` by default (§5.1.2: the contention term acts as a negative bias, which the
//!   smaller rate keeps stable);
//! * the term is inside DGB's own form, on the `q_min` the decision compares (after DGB's
//!   local-port scaling), not added to Algorithm 2's `+ b` form;
//! * DGB's latency samples do not include the term (the paper changes only the decision);
//! * the counters are UGAL-LE's (`window_ns = 500`, `active_threshold = 5`, the BookSim runs').
//!
//! With every `C ≤ 1` (uniform traffic) EDGB makes exactly DGB's decisions: the term is zero
//! and the counters draw no random numbers.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::dgb::{window_ps, Contention, Dgb, DgbParams, Inflight, MinimalVc};
use super::dgb_piggyback::Feedback;
use super::ugal_l::MinGateways;
use crate::config::{Experiment, Intermediate, IntraGroup, RoutingParams};
use crate::error::Result;
use crate::topology::Topology;

/// The parameters of EDGB: DGB's (with ICS'24's `η`) and the contention counters'.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct EdgbParams {
    /// Learning rate `η` of the bias step (ICS'24: 0.001).
    #[schemars(range(min = 0.0, max = 1000.0))]
    pub eta: f64,
    /// As DGB.
    #[schemars(range(min = 0.0, max = 1.0e9))]
    pub epoch_cycles: f64,
    /// As DGB.
    #[schemars(range(min = 0.0, max = 1000.0))]
    pub explore_rate: f64,
    /// As DGB.
    #[schemars(range(min = 0.0, max = 1000.0))]
    pub local_q_scale: Option<f64>,
    /// As DGB.
    pub chan_local_cycles: Option<f64>,
    pub chan_global_cycles: Option<f64>,
    /// As DGB.
    pub intermediate: Intermediate,
    /// As DGB.
    pub intra_group: IntraGroup,
    /// As DGB.
    pub min_gateways: MinGateways,
    /// As DGB.
    pub remove_inflight: bool,
    /// As DGB.
    pub inflight: Inflight,
    /// As DGB.
    pub feedback: Feedback,
    /// As DGB.
    pub piggyback_global_queues: bool,
    /// As DGB.
    pub sample_forced: bool,
    /// As DGB.
    pub explore_global_port: bool,
    /// As DGB.
    pub same_port_residual: bool,
    /// As DGB.
    pub minimal_vc: MinimalVc,
    /// The contention counters' sliding window (as UGAL-LE).
    #[schemars(extend("exclusiveMinimum" = 0.0), range(max = 1.0e9))]
    pub window_ns: f64,
    /// A router's flow to a group is active with more packets than this in the window.
    pub active_threshold: u32,
}

impl Default for EdgbParams {
    fn default() -> EdgbParams {
        let d = DgbParams::default();
        EdgbParams {
            eta: 0.001,
            epoch_cycles: d.epoch_cycles,
            explore_rate: d.explore_rate,
            local_q_scale: d.local_q_scale,
            chan_local_cycles: d.chan_local_cycles,
            chan_global_cycles: d.chan_global_cycles,
            intermediate: d.intermediate,
            intra_group: d.intra_group,
            min_gateways: d.min_gateways,
            remove_inflight: d.remove_inflight,
            inflight: d.inflight,
            feedback: d.feedback,
            piggyback_global_queues: d.piggyback_global_queues,
            sample_forced: d.sample_forced,
            explore_global_port: d.explore_global_port,
            same_port_residual: d.same_port_residual,
            minimal_vc: d.minimal_vc,
            window_ns: 500.0,
            active_threshold: 5,
        }
    }
}

impl RoutingParams for EdgbParams {}

impl EdgbParams {
    /// DGB's parameters of this EDGB.
    pub fn dgb(&self) -> DgbParams {
        DgbParams {
            eta: self.eta,
            epoch_cycles: self.epoch_cycles,
            explore_rate: self.explore_rate,
            local_q_scale: self.local_q_scale,
            chan_local_cycles: self.chan_local_cycles,
            chan_global_cycles: self.chan_global_cycles,
            intermediate: self.intermediate,
            intra_group: self.intra_group,
            min_gateways: self.min_gateways,
            remove_inflight: self.remove_inflight,
            inflight: self.inflight,
            feedback: self.feedback,
            piggyback_global_queues: self.piggyback_global_queues,
            sample_forced: self.sample_forced,
            explore_global_port: self.explore_global_port,
            same_port_residual: self.same_port_residual,
            minimal_vc: self.minimal_vc,
        }
    }
}

/// EDGB.
pub type Edgb = Dgb<true>;

/// EDGB's constructor for the registry.
pub fn edgb(topo: &Topology, exp: &Experiment, p: EdgbParams) -> Result<Edgb> {
    let contention = Contention { window: window_ps(p.window_ns), threshold: p.active_threshold };
    Dgb::build(topo, exp, p.dgb(), Some(contention))
}
