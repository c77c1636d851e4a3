//! The operations a rank's program is made of: MPI-like point-to-point calls, collectives on a
//! communicator, computation, and waiting. A motif ([`crate::workload::motifs::Motif`]) emits
//! them one iteration at a time; the MPI layer ([`super`]) runs them, expanding each collective
//! into point-to-point messages as SST's Firefly does ([`super::collective`]).
//!
//! Ranks and peers are ranks *of the job* (0 .. ranks); the job's placement maps them to nodes.
//! Sizes are payload bytes; the protocol's own bytes (headers, rendezvous control messages) are
//! added by the MPI layer (`workload.mpi.header_bytes`).

use std::sync::Arc;

use crate::units::Time;

/// A communicator: the job ranks that take part in a collective, in communicator order (a
/// rank's index in `members` is its rank in the communicator). `id` tells the communicators of a
/// job apart (it keys the collectives' message tags); every member must use the same id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comm {
    pub id: u16,
    pub members: Arc<[u32]>,
}

impl Comm {
    /// The communicator of every rank of a job of `ranks` ranks (`MPI_COMM_WORLD`, id 0).
    pub fn world(ranks: u32) -> Comm {
        Comm { id: 0, members: (0..ranks).collect() }
    }

    /// A communicator of the given job ranks, in that order.
    pub fn of(id: u16, members: Vec<u32>) -> Comm {
        Comm { id, members: members.into() }
    }

    pub fn size(&self) -> u32 {
        self.members.len() as u32
    }

    /// The communicator rank of job rank `rank` (`None`: not a member).
    pub fn index_of(&self, rank: u32) -> Option<u32> {
        self.members.iter().position(|&m| m == rank).map(|i| i as u32)
    }
}

/// One operation of a rank's program.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// Compute for `ps` picoseconds (the rank sends and receives nothing meanwhile; messages
    /// still arrive and are matched by the NIC).
    Compute { ps: Time },
    /// Post a send of `bytes` to job rank `to` with `tag`; completes at a later `WaitAll`.
    Isend { to: u32, bytes: u64, tag: u32 },
    /// Post a receive from job rank `from` with `tag` (`bytes`: the expected size, for the
    /// record; the sender's size is what travels).
    Irecv { from: u32, bytes: u64, tag: u32 },
    /// Blocking send: `Isend` then wait for it alone.
    Send { to: u32, bytes: u64, tag: u32 },
    /// Blocking receive: `Irecv` then wait for it alone.
    Recv { from: u32, bytes: u64, tag: u32 },
    /// Wait until every request the rank posted and has not waited for completes.
    WaitAll,
    /// Sum `bytes` over `comm` and leave the result on every member (binary-tree reduce to
    /// member 0, then broadcast down the same tree).
    Allreduce { comm: Comm, bytes: u64 },
    /// Reduce `bytes` to member `root` of `comm` (binary tree).
    Reduce { comm: Comm, root: u32, bytes: u64 },
    /// Broadcast `bytes` from member `root` of `comm` (binary tree).
    Bcast { comm: Comm, root: u32, bytes: u64 },
    /// Synchronise the members of `comm` (a zero-byte reduce and broadcast on the tree).
    Barrier { comm: Comm },
    /// All-to-all with per-destination sizes: `send_bytes[i]` goes to member `i` of `comm`
    /// (shifted pairwise exchange: at step c = 1 .. size-1, receive from member index - c,
    /// send to member index + c, wait).
    Alltoallv { comm: Comm, send_bytes: Arc<[u64]> },
}

impl Op {
    /// Whether the op is a collective (expanded by [`super::collective::expand`]).
    pub fn is_collective(&self) -> bool {
        matches!(
            self,
            Op::Allreduce { .. } | Op::Reduce { .. } | Op::Bcast { .. } | Op::Barrier { .. } | Op::Alltoallv { .. }
        )
    }
}
