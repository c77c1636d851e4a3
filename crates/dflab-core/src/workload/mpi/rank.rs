//! One rank's state: its program counter (the ops of the current iteration), what it waits
//! for, and its receive matching (posted receives and unexpected messages, matched by source
//! and tag in arrival order).

use std::collections::VecDeque;

use super::op::Op;
use crate::units::Time;

/// What a rank is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activity {
    /// Ready to run its next op (transient inside [`super::Mpi::advance`]).
    Running,
    /// In a `Compute` op until a wake-up.
    Computing,
    /// In an MPI call's entry or return (`call_enter_ns`, `call_return_ns`) until a wake-up.
    InCall,
    /// In a blocking `Send` or `Recv` until its request completes.
    Blocked,
    /// In a `WaitAll` until its non-blocking requests complete.
    WaitingAll,
    /// Every iteration done.
    Done,
}

/// A receive posted and not yet matched.
#[derive(Debug, Clone, Copy)]
pub struct Posted {
    /// Global rank of the sender.
    pub from: u32,
    pub tag: u32,
    pub blocking: bool,
    /// When the receive is in place (later than its post while its buffer is pinned).
    pub ready: Time,
}

pub struct Rank {
    pub job: u32,
    /// Rank within the job.
    pub rank: u32,
    pub node: u32,
    pub ops: VecDeque<Op>,
    pub activity: Activity,
    /// The op being run, for a deadlock report.
    pub current: Option<Op>,
    /// Non-blocking requests posted and not completed (what a `WaitAll` waits for).
    pub pending: u32,
    /// Next iteration to load (`iterations` once the last one is loaded); `in_iteration`
    /// is false during the prologue.
    pub next_iteration: u32,
    pub in_iteration: bool,
    pub iter_start: Time,
    pub iter_compute: Time,
    /// Receives posted and not matched; messages arrived (eager data or rendezvous requests)
    /// not matched, by message id.
    pub posted: Vec<Posted>,
    pub unexpected: Vec<u32>,
    /// Collectives entered per communicator id: (id, count).
    pub coll_seq: Vec<(u16, u32)>,
    /// Payload posted in sends since the rank last waited (peak ingress).
    pub burst: u64,
    /// The op at the front of `ops` has paid its call entry.
    pub entered: bool,
    /// Ops of a collective's point-to-point program still in `ops` (they are not calls).
    pub coll_ops: u32,
    /// The blocking op the rank waits in ends an MPI call (its return follows).
    pub call_end: bool,
    /// When the rank's host has unpinned every receive buffer it has been given
    /// (`rendezvous_recv_unpin`: unpins follow one another).
    pub host_free: Time,
}

impl Rank {
    pub fn new(job: u32, rank: u32, node: u32) -> Rank {
        Rank {
            job,
            rank,
            node,
            ops: VecDeque::new(),
            activity: Activity::Running,
            current: None,
            pending: 0,
            next_iteration: 0,
            in_iteration: false,
            iter_start: 0,
            iter_compute: 0,
            posted: Vec::new(),
            unexpected: Vec::new(),
            coll_seq: Vec::new(),
            burst: 0,
            entered: false,
            coll_ops: 0,
            call_end: false,
            host_free: 0,
        }
    }

    /// The sequence number of the next collective on communicator `id` (and count it).
    pub fn next_collective(&mut self, id: u16) -> u32 {
        match self.coll_seq.iter_mut().find(|(c, _)| *c == id) {
            Some((_, n)) => {
                *n += 1;
                *n - 1
            }
            None => {
                self.coll_seq.push((id, 1));
                0
            }
        }
    }

    /// Remove and return the first posted receive matching (`from`, `tag`).
    pub fn take_posted(&mut self, from: u32, tag: u32) -> Option<Posted> {
        let i = self.posted.iter().position(|p| p.from == from && p.tag == tag)?;
        Some(self.posted.remove(i))
    }
}
