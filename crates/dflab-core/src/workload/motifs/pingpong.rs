//! Ping-pong between pairs of ranks (Ember's `PingPong`, generalised to every pair): ranks
//! `2k` and `2k + 1` form a pair; every iteration the even rank sends `bytes` and waits for
//! the reply, the odd rank receives and sends it back (blocking calls). A generic motif for
//! latency and bandwidth checks, not one of the SC'22 study's applications.
//!
//! ⚠ Decisions: with an odd rank count the last rank is idle; one rank is an error (no pair).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::workload::mpi::op::Op;

use super::{ranks_error, Motif, MotifParams};

/// Parameters of `pingpong`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PingpongParams {
    /// Iterations (one round trip each).
    pub iterations: u32,
    /// Payload of each message, bytes.
    pub bytes: u64,
}

impl Default for PingpongParams {
    fn default() -> Self {
        PingpongParams { iterations: 1, bytes: 8 }
    }
}

impl MotifParams for PingpongParams {
    fn build(self, ranks: u32, field: &str) -> Result<Box<dyn Motif>> {
        if ranks < 2 {
            return Err(ranks_error(field, format!("{ranks} rank cannot form a pair; allowed: 2 or more")));
        }
        Ok(Box::new(Pingpong { ranks, p: self }))
    }
}

pub struct Pingpong {
    ranks: u32,
    p: PingpongParams,
}

impl Motif for Pingpong {
    fn name(&self) -> &'static str {
        "pingpong"
    }

    fn iterations(&self) -> u32 {
        self.p.iterations
    }

    fn iteration(&self, rank: u32, _it: u32, out: &mut Vec<Op>) {
        let bytes = self.p.bytes;
        if rank % 2 == 1 {
            out.push(Op::Recv { from: rank - 1, bytes, tag: 0 });
            out.push(Op::Send { to: rank - 1, bytes, tag: 0 });
        } else if rank + 1 < self.ranks {
            out.push(Op::Send { to: rank + 1, bytes, tag: 0 });
            out.push(Op::Recv { from: rank + 1, bytes, tag: 0 });
        }
    }
}
