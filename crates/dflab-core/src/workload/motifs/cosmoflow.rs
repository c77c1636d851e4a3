//! CosmoFlow, the deep-learning training proxy of the SC'22 study (§IV; QR §4.3; Table I:
//! 2,373.84 MB, peak 2 × 1.126 MB): SST Ember's `Allreduce` motif ([`super::allreduce`]) with
//! 140,750 doubles (1.126 MB) reduced per iteration, 2 iterations, each preceded by 5.16 ms of
//! computation (the real 28.15 MB / 129 ms step scaled by 1/25).
//!
//! ⚠ Decision: the size is given in doubles (`doubles`, 8 B each), as the study states it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::units::PS_PER_US;

use super::allreduce::Allreduce;
use super::{duration_ps, Motif, MotifParams};

/// Parameters of `cosmoflow` (Ember `Allreduce`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CosmoflowParams {
    /// Iterations (a computation then an allreduce each).
    pub iterations: u32,
    /// Doubles (8 B) reduced per iteration.
    pub doubles: u64,
    /// Computation before each allreduce, µs.
    pub compute_us: f64,
}

impl Default for CosmoflowParams {
    fn default() -> Self {
        CosmoflowParams { iterations: 2, doubles: 140_750, compute_us: 5_160.0 }
    }
}

impl MotifParams for CosmoflowParams {
    fn build(self, ranks: u32, field: &str) -> Result<Box<dyn Motif>> {
        let compute = duration_ps(self.compute_us, PS_PER_US, field, "compute_us")?;
        Ok(Box::new(Allreduce::new("cosmoflow", ranks, self.iterations, 8 * self.doubles, compute)))
    }
}
