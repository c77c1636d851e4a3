//! Null: a job whose ranks do nothing (Ember's `Null` motif): the SC'22 study's idle slices
//! (the 16 nodes next to the 512-rank LULESH). No iterations, no operations.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::workload::mpi::op::Op;

use super::{Motif, MotifParams};

/// Parameters of `null`: none.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct NullParams {}

impl MotifParams for NullParams {
    fn build(self, _ranks: u32, _field: &str) -> Result<Box<dyn Motif>> {
        Ok(Box::new(Null))
    }
}

pub struct Null;

impl Motif for Null {
    fn name(&self) -> &'static str {
        "null"
    }

    fn iterations(&self) -> u32 {
        0
    }

    fn iteration(&self, _rank: u32, _it: u32, _out: &mut Vec<Op>) {}
}
