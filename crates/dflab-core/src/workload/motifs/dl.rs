//! DL, the SC'22 study's background deep-learning job (§IV, "allreduce"; QR §4.3; Table I:
//! 9,714.44 MB, peak 2 × 1.152 MB): SST Ember's `Allreduce` motif ([`super::allreduce`]) with
//! 144,000 doubles (1.152 MB) reduced per iteration, 8 iterations, no computation — about 4.7
//! times CosmoFlow's communication rate.
//!
//! ⚠ Decision: the size is given in doubles (`doubles`, 8 B each), as the study states it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::units::PS_PER_US;

use super::allreduce::Allreduce;
use super::{duration_ps, Motif, MotifParams};

/// Parameters of `dl` (Ember `Allreduce`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DlParams {
    /// Iterations (one allreduce each).
    pub iterations: u32,
    /// Doubles (8 B) reduced per iteration.
    pub doubles: u64,
    /// Computation before each allreduce, µs (0: none).
    pub compute_us: f64,
}

impl Default for DlParams {
    fn default() -> Self {
        DlParams { iterations: 8, doubles: 144_000, compute_us: 0.0 }
    }
}

impl MotifParams for DlParams {
    fn build(self, ranks: u32, field: &str) -> Result<Box<dyn Motif>> {
        let compute = duration_ps(self.compute_us, PS_PER_US, field, "compute_us")?;
        Ok(Box::new(Allreduce::new("dl", ranks, self.iterations, 8 * self.doubles, compute)))
    }
}
