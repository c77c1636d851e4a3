//! What a motif sends, counted without a network: every rank's prologue and iterations are
//! walked, collectives expanded into point-to-point messages exactly as the MPI layer does
//! ([`collective::expand`]), and each message charged with the protocol's bytes
//! ([`wire_bytes`]). This is the check of the generator against the paper's Table I
//! (`workloads.md` §3.4, §3.6) before any routing is compared.
//!
//! **Protocol bytes** (the MPI layer uses [`wire_bytes`] too). A message of at most
//! `eager_limit` payload bytes (12,000 B in the reference) is eager: it travels with one header
//! (`header_bytes`, 40 B). A larger one is rendezvous: a request-to-send and a clear-to-send
//! control message of one header each, then the payload (whose own header is counted in
//! neither: ⚠ decision, it is what makes Table I's residuals come out at ≈ 40 B per eager and
//! ≈ 80 B per rendezvous message, §3.1).
//!
//! **Peak ingress volume** (§3.4: "the largest amount a single process injects back to back in
//! one communication step"). ⚠ Decision: a step is a maximal run of consecutive send
//! operations (`Isend` or blocking `Send`) of one rank, after collective expansion; any other
//! operation — a posted or blocking receive, a wait, a computation — ends it. The peak is the
//! largest payload sum of a step over all ranks. Blocking sends do not end a step because the
//! paper counts LU's two blocking sends and Halo3D's two as one step each; a posted receive
//! does, because Stencil5D posts its − receives between its + and − sends and the paper counts
//! 5 messages, not 10. With this rule the paper's examples come out: UR 1 × 3,072 B, LU
//! 2 × 15 KB, FFT3D one 51.68 KB block, Halo3D 2 × 576 KB, Stencil5D 5 × 2.8 MB, LQCD 4.60 MB
//! (the four "Naik" sends), an allreduce 2 messages (the broadcast to two children), LULESH
//! 26 × 74,814 B.
//!
//! **Collective sequence numbers**: per rank and communicator id, the number of collectives
//! the rank entered on that id before this one (what the MPI layer keys the tags with).

use std::collections::HashMap;

use crate::workload::mpi::collective;
use crate::workload::mpi::op::{Comm, Op};

use super::Motif;

/// What a motif sends over all its ranks (see the module comment).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// Point-to-point messages (sends), collectives' included; control messages not counted.
    pub messages: u64,
    /// Sum of the messages' payloads.
    pub payload_bytes: u64,
    /// Bytes on the wire: payloads plus protocol headers and rendezvous control messages.
    pub wire_bytes: u64,
    /// The largest payload one rank posts in one communication step.
    pub peak_ingress_bytes: u64,
    /// Operations the ranks run after collective expansion (sends, receives, waits, computes).
    pub ops: u64,
}

/// Wire bytes of one message of `payload` bytes: eager (`payload <= eager_limit`) adds one
/// header, rendezvous adds an RTS and a CTS of one header each.
pub fn wire_bytes(payload: u64, header_bytes: u64, eager_limit: u64) -> u64 {
    if payload <= eager_limit {
        payload + header_bytes
    } else {
        payload + 2 * header_bytes
    }
}

/// The communicator of a collective op.
fn comm_of(op: &Op) -> Option<&Comm> {
    match op {
        Op::Allreduce { comm, .. }
        | Op::Reduce { comm, .. }
        | Op::Bcast { comm, .. }
        | Op::Barrier { comm }
        | Op::Alltoallv { comm, .. } => Some(comm),
        _ => None,
    }
}

/// Calls `f(rank, op)` for every point-to-point, compute and wait operation of every rank, in
/// each rank's program order, collectives expanded. The walk is iteration-major (every rank's
/// prologue, then every rank's iteration 0, ...) so that motifs that cache per-iteration state
/// (UR's permutation) compute it once; each rank's own order is what matters and is kept.
pub fn for_each_op(m: &dyn Motif, ranks: u32, mut f: impl FnMut(u32, &Op)) {
    let mut seqs: Vec<HashMap<u16, u32>> = vec![HashMap::new(); ranks as usize];
    let mut buf = Vec::new();
    let mut expanded = Vec::new();
    let mut emit = |rank: u32, buf: &mut Vec<Op>| {
        for op in buf.drain(..) {
            match comm_of(&op) {
                Some(comm) => {
                    let seq = seqs[rank as usize].entry(comm.id).or_insert(0);
                    expanded.clear();
                    collective::expand(&op, rank, *seq, &mut expanded);
                    *seq += 1;
                    for o in &expanded {
                        f(rank, o);
                    }
                }
                None => f(rank, &op),
            }
        }
    };
    for rank in 0..ranks {
        m.prologue(rank, &mut buf);
        emit(rank, &mut buf);
    }
    for it in 0..m.iterations() {
        for rank in 0..ranks {
            m.iteration(rank, it, &mut buf);
            emit(rank, &mut buf);
        }
    }
}

/// The totals of motif `m` run by `ranks` ranks (see the module comment).
pub fn totals(m: &dyn Motif, ranks: u32, header_bytes: u64, eager_limit: u64) -> Totals {
    let mut t = Totals::default();
    // The payload of each rank's current run of sends.
    let mut run = vec![0u64; ranks as usize];
    for_each_op(m, ranks, |rank, op| {
        t.ops += 1;
        let r = &mut run[rank as usize];
        match op {
            Op::Isend { bytes, .. } | Op::Send { bytes, .. } => {
                t.messages += 1;
                t.payload_bytes += bytes;
                t.wire_bytes += wire_bytes(*bytes, header_bytes, eager_limit);
                *r += bytes;
                t.peak_ingress_bytes = t.peak_ingress_bytes.max(*r);
            }
            _ => *r = 0,
        }
    });
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eager_and_rendezvous_bytes() {
        assert_eq!(wire_bytes(0, 40, 12_000), 40);
        assert_eq!(wire_bytes(12_000, 40, 12_000), 12_040);
        assert_eq!(wire_bytes(12_001, 40, 12_000), 12_081);
    }

    /// A two-rank program: rank 0 sends 2 then 3 bytes back to back, waits, sends 5; rank 1
    /// receives them.
    struct Toy;

    impl Motif for Toy {
        fn name(&self) -> &'static str {
            "toy"
        }
        fn iterations(&self) -> u32 {
            1
        }
        fn iteration(&self, rank: u32, _it: u32, out: &mut Vec<Op>) {
            if rank == 0 {
                out.push(Op::Isend { to: 1, bytes: 2, tag: 0 });
                out.push(Op::Send { to: 1, bytes: 3, tag: 0 });
                out.push(Op::WaitAll);
                out.push(Op::Isend { to: 1, bytes: 5, tag: 0 });
                out.push(Op::WaitAll);
            } else {
                for b in [2, 3, 5] {
                    out.push(Op::Recv { from: 0, bytes: b, tag: 0 });
                }
            }
            out.push(Op::Barrier { comm: Comm::world(2) });
        }
    }

    #[test]
    fn counts_messages_bytes_steps_and_collectives() {
        let t = totals(&Toy, 2, 40, 4);
        // 3 program messages + a barrier on two ranks (one message up, one down).
        assert_eq!(t.messages, 5);
        assert_eq!(t.payload_bytes, 10);
        assert_eq!(t.wire_bytes, (2 + 40) + (3 + 40) + (5 + 80) + 2 * 40);
        assert_eq!(t.peak_ingress_bytes, 5);
        // Rank 0: 5 + a barrier as the tree root (irecv, wait, isend, wait); rank 1: 3 + send, recv.
        assert_eq!(t.ops, (5 + 4) + (3 + 2));
    }
}
