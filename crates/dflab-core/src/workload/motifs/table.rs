//! A program given as a table of operations (`motif = "table"`): how a user writes a workload
//! without Rust. Each row is one op of one rank in one iteration, in program order:
//!
//! ```toml
//! params.ops = [
//!   { rank = 0, op = "send", peer = 1, bytes = 4096 },
//!   { rank = 1, op = "recv", peer = 0 },
//!   { rank = 0, iteration = 1, op = "compute", ns = 500 },
//!   { rank = 0, iteration = 1, op = "allreduce", bytes = 8 },
//! ]
//! ```
//!
//! Ops: `compute` (`ns`), `isend`/`send` (`peer`, `bytes`, `tag`), `irecv`/`recv` (`peer`,
//! `tag`), `waitall`, and the collectives on all the job's ranks `allreduce` (`bytes`),
//! `reduce`/`bcast` (`peer` = root, `bytes`), `barrier`, `alltoall` (`bytes` to each rank).
//! The Python API builds such tables from a function that yields each rank's operations
//! (`dflab.workload.program`).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Motif, MotifParams};
use crate::error::{Error, Result};
use crate::units::ns_to_ps;
use crate::workload::mpi::collective::COLLECTIVE_TAG;
use crate::workload::mpi::op::{Comm, Op};

/// One row of the table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpRow {
    /// The rank that runs the op.
    pub rank: u32,
    /// The iteration it belongs to (each iteration is a row of the per-iteration record).
    #[serde(default)]
    pub iteration: u32,
    /// compute, isend, send, irecv, recv, waitall, allreduce, reduce, bcast, barrier, alltoall.
    pub op: String,
    /// The other rank (sends and receives), or the root (reduce, bcast).
    #[serde(default)]
    pub peer: u32,
    /// Payload bytes (sends, collectives; to each rank for alltoall).
    #[serde(default)]
    pub bytes: u64,
    /// The message tag (below 2^31; the rest is the collectives').
    #[serde(default)]
    pub tag: u32,
    /// Compute time, ns.
    #[serde(default)]
    pub ns: f64,
}

/// The parameters of the table motif.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TableParams {
    /// The program: one row per op, in program order per rank and iteration.
    pub ops: Vec<OpRow>,
}

pub struct Table {
    /// `ops[rank][iteration]`.
    ops: Vec<Vec<Vec<Op>>>,
    iterations: u32,
}

impl Table {
    pub fn new(ranks: u32, p: &TableParams, field: &str) -> Result<Table> {
        let world = Comm::world(ranks);
        let iterations = p.ops.iter().map(|r| r.iteration + 1).max().unwrap_or(0);
        let mut ops = vec![vec![Vec::new(); iterations as usize]; ranks as usize];
        for (i, row) in p.ops.iter().enumerate() {
            let at = format!("{field}.params.ops[{i}]");
            if row.rank >= ranks {
                return Err(Error::config(
                    format!("{at}.rank"),
                    format!("{} is not a rank; allowed: 0..{ranks}", row.rank),
                ));
            }
            let op = op_of(row, &world, ranks, &at)?;
            ops[row.rank as usize][row.iteration as usize].push(op);
        }
        Ok(Table { ops, iterations })
    }
}

fn op_of(row: &OpRow, world: &Comm, ranks: u32, at: &str) -> Result<Op> {
    let (peer, bytes, tag) = (row.peer, row.bytes, row.tag);
    let needs_peer = matches!(row.op.as_str(), "isend" | "send" | "irecv" | "recv" | "reduce" | "bcast");
    if needs_peer && peer >= ranks {
        return Err(Error::config(format!("{at}.peer"), format!("{peer} is not a rank; allowed: 0..{ranks}")));
    }
    if tag >= COLLECTIVE_TAG {
        return Err(Error::config(format!("{at}.tag"), format!("{tag} is reserved; allowed: 0..{COLLECTIVE_TAG}")));
    }
    let comm = world.clone();
    Ok(match row.op.as_str() {
        "compute" if row.ns >= 0.0 && row.ns.is_finite() => Op::Compute { ps: ns_to_ps(row.ns) },
        "compute" => return Err(Error::config(format!("{at}.ns"), "allowed: a finite time >= 0")),
        "isend" => Op::Isend { to: peer, bytes, tag },
        "send" => Op::Send { to: peer, bytes, tag },
        "irecv" => Op::Irecv { from: peer, bytes, tag },
        "recv" => Op::Recv { from: peer, bytes, tag },
        "waitall" => Op::WaitAll,
        "allreduce" => Op::Allreduce { comm, bytes },
        "reduce" => Op::Reduce { comm, root: peer, bytes },
        "bcast" => Op::Bcast { comm, root: peer, bytes },
        "barrier" => Op::Barrier { comm },
        "alltoall" => Op::Alltoallv { comm, send_bytes: Arc::from(vec![bytes; ranks as usize]) },
        other => {
            return Err(Error::config(
                format!("{at}.op"),
                format!(
                    "unknown op '{other}'; allowed: compute, isend, send, irecv, recv, waitall, allreduce, reduce, \
                     bcast, barrier, alltoall"
                ),
            ))
        }
    })
}

impl Motif for Table {
    fn name(&self) -> &'static str {
        "table"
    }

    fn iterations(&self) -> u32 {
        self.iterations
    }

    fn iteration(&self, rank: u32, it: u32, out: &mut Vec<Op>) {
        out.extend(self.ops[rank as usize][it as usize].iter().cloned());
    }
}

impl MotifParams for TableParams {
    fn build(self, ranks: u32, field: &str) -> Result<Box<dyn Motif>> {
        Ok(Box::new(Table::new(ranks, &self, field)?))
    }
}
