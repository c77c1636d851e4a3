//! Collectives as point-to-point messages, the way SST Firefly's function state machines do
//! them (`firefly/funcSM/collectiveTree.cc`, `alltoallv.cc` in the SC'22 toolkit, see
//! `../shared/reference/workloads.md` §3.1):
//!
//! * reduce and broadcast walk a binary tree (degree 2) over the communicator, relabelled so
//!   that the root is vertex 0: vertex `v`'s children are `2v + 1` and `2v + 2`. A reduce posts
//!   a receive from each child, waits for them, then sends to its parent; a broadcast receives
//!   from its parent, then sends to each child and waits. Allreduce is a reduce to member 0
//!   followed by a broadcast from it; a barrier is an allreduce of no payload (its messages
//!   carry only the protocol header).
//! * alltoallv is the shifted pairwise exchange: at step `c = 1 .. n-1` member `i` posts a
//!   receive from `i - c`, sends to `i + c` and waits for both (mod `n`); its own block is a
//!   local copy.
//!
//! The reduction's arithmetic costs no time (Firefly charges none by default).
//!
//! Every message of a collective carries a tag from the collective tag space ([`coll_tag`]):
//! the communicator id, the collective's sequence number on it, and its phase, so that
//! collectives never match the program's own messages or each other.

use super::op::{Comm, Op};

/// The bit that marks collective tags; a program's own tags are below it.
pub const COLLECTIVE_TAG: u32 = 1 << 31;

/// The tag of phase `phase` (0 or 1) of the `seq`-th collective on communicator `comm_id`.
pub fn coll_tag(comm_id: u16, seq: u32, phase: u32) -> u32 {
    COLLECTIVE_TAG | ((comm_id as u32 & 0x3ff) << 20) | ((seq & 0x7ffff) << 1) | (phase & 1)
}

/// The point-to-point operations job rank `rank` runs for collective `op` (whose tag base is
/// `coll_tag(comm.id, seq, 0)`), appended to `out`. `rank` must be a member of the
/// communicator (checked by the caller).
pub fn expand(op: &Op, rank: u32, seq: u32, out: &mut Vec<Op>) {
    match op {
        Op::Allreduce { comm, bytes } => {
            reduce(comm, rank, 0, *bytes, coll_tag(comm.id, seq, 0), out);
            bcast(comm, rank, 0, *bytes, coll_tag(comm.id, seq, 1), out);
        }
        Op::Barrier { comm } => {
            reduce(comm, rank, 0, 0, coll_tag(comm.id, seq, 0), out);
            bcast(comm, rank, 0, 0, coll_tag(comm.id, seq, 1), out);
        }
        Op::Reduce { comm, root, bytes } => reduce(comm, rank, *root, *bytes, coll_tag(comm.id, seq, 0), out),
        Op::Bcast { comm, root, bytes } => bcast(comm, rank, *root, *bytes, coll_tag(comm.id, seq, 0), out),
        Op::Alltoallv { comm, send_bytes } => alltoallv(comm, rank, send_bytes, coll_tag(comm.id, seq, 0), out),
        _ => unreachable!("expand() takes collectives only"),
    }
}

/// The tree position of job rank `rank` in `comm` rooted at member `root`: (vertex, size).
fn vertex(comm: &Comm, rank: u32, root: u32) -> (u32, u32) {
    let n = comm.size();
    let i = comm.index_of(rank).expect("the caller checks membership");
    ((i + n - root) % n, n)
}

/// The job rank at tree vertex `v` (root `root`).
fn member(comm: &Comm, v: u32, root: u32) -> u32 {
    comm.members[((v + root) % comm.size()) as usize]
}

fn children(v: u32, n: u32) -> impl Iterator<Item = u32> {
    [2 * v + 1, 2 * v + 2].into_iter().filter(move |&c| c < n)
}

fn reduce(comm: &Comm, rank: u32, root: u32, bytes: u64, tag: u32, out: &mut Vec<Op>) {
    let (v, n) = vertex(comm, rank, root);
    let mut any = false;
    for c in children(v, n) {
        out.push(Op::Irecv { from: member(comm, c, root), bytes, tag });
        any = true;
    }
    if any {
        out.push(Op::WaitAll);
    }
    if v > 0 {
        out.push(Op::Send { to: member(comm, (v - 1) / 2, root), bytes, tag });
    }
}

fn bcast(comm: &Comm, rank: u32, root: u32, bytes: u64, tag: u32, out: &mut Vec<Op>) {
    let (v, n) = vertex(comm, rank, root);
    if v > 0 {
        out.push(Op::Recv { from: member(comm, (v - 1) / 2, root), bytes, tag });
    }
    let mut any = false;
    for c in children(v, n) {
        out.push(Op::Isend { to: member(comm, c, root), bytes, tag });
        any = true;
    }
    if any {
        out.push(Op::WaitAll);
    }
}

fn alltoallv(comm: &Comm, rank: u32, send_bytes: &[u64], tag: u32, out: &mut Vec<Op>) {
    let n = comm.size();
    let i = comm.index_of(rank).expect("the caller checks membership");
    for c in 1..n {
        let from = (i + n - c) % n;
        let to = (i + c) % n;
        // The size expected from `from` is what this rank sends it (an alltoall's sizes are
        // symmetric; the sender's size is what travels).
        let expected = send_bytes[from as usize];
        out.push(Op::Irecv { from: comm.members[from as usize], bytes: expected, tag });
        out.push(Op::Isend { to: comm.members[to as usize], bytes: send_bytes[to as usize], tag });
        out.push(Op::WaitAll);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every send of a collective has exactly one matching receive on its destination, with
    /// the same tag, over the whole communicator.
    fn sends_match_receives(op: &Op, comm: &Comm) {
        let mut sends = Vec::new();
        let mut recvs = Vec::new();
        for &r in comm.members.iter() {
            let mut out = Vec::new();
            expand(op, r, 7, &mut out);
            for o in out {
                match o {
                    Op::Isend { to, tag, .. } | Op::Send { to, tag, .. } => sends.push((r, to, tag)),
                    Op::Irecv { from, tag, .. } | Op::Recv { from, tag, .. } => recvs.push((from, r, tag)),
                    _ => {}
                }
            }
        }
        sends.sort();
        recvs.sort();
        assert_eq!(sends, recvs, "{op:?}");
    }

    #[test]
    fn tree_collectives_pair_every_message() {
        for n in [1, 2, 3, 7, 10, 33] {
            let comm = Comm::of(3, (0..n).map(|i| i * 2 + 1).collect());
            for op in [
                Op::Allreduce { comm: comm.clone(), bytes: 8 },
                Op::Barrier { comm: comm.clone() },
                Op::Reduce { comm: comm.clone(), root: n / 2, bytes: 8 },
                Op::Bcast { comm: comm.clone(), root: n - 1, bytes: 8 },
                Op::Alltoallv { comm: comm.clone(), send_bytes: (0..n as u64).collect() },
            ] {
                sends_match_receives(&op, &comm);
            }
        }
    }

    #[test]
    fn allreduce_sends_two_messages_per_edge() {
        // A tree of n vertices has n - 1 edges, each crossed once up and once down.
        let comm = Comm::world(10);
        let sends: usize = (0..10)
            .map(|r| {
                let mut out = Vec::new();
                expand(&Op::Allreduce { comm: comm.clone(), bytes: 8 }, r, 0, &mut out);
                out.iter().filter(|o| matches!(o, Op::Send { .. } | Op::Isend { .. })).count()
            })
            .sum();
        assert_eq!(sends, 18);
    }

    #[test]
    fn alltoallv_step_c_pairs_i_with_i_plus_c() {
        let comm = Comm::world(5);
        let mut out = Vec::new();
        expand(&Op::Alltoallv { comm, send_bytes: vec![10, 11, 12, 13, 14].into() }, 1, 0, &mut out);
        let sends: Vec<(u32, u64)> = out
            .iter()
            .filter_map(|o| match o {
                Op::Isend { to, bytes, .. } => Some((*to, *bytes)),
                _ => None,
            })
            .collect();
        assert_eq!(sends, vec![(2, 12), (3, 13), (4, 14), (0, 10)]);
    }

    #[test]
    fn tags_are_disjoint_from_program_tags_and_between_phases() {
        assert!(coll_tag(0, 0, 0) >= COLLECTIVE_TAG);
        assert_ne!(coll_tag(1, 5, 0), coll_tag(1, 5, 1));
        assert_ne!(coll_tag(1, 5, 0), coll_tag(2, 5, 0));
        assert_ne!(coll_tag(1, 5, 0), coll_tag(1, 6, 0));
    }
}
