//! A test-only check that a motif's programs run to completion under the strictest MPI
//! semantics, without a network: every send (blocking or not) completes only once the
//! destination has posted the matching receive (as if every message were rendezvous), and
//! sends meet receives in posting order per (source, destination, tag), as MPI's
//! non-overtaking rule says. If the programs finish under these rules they finish under any
//! eager limit too (eager only lets sends complete earlier; it does not change which receive
//! a message meets). Pairing (every send has a receive) is necessary; this checks that the
//! order of blocking calls cannot stall (e.g. two ranks both blocked sending to each other).

use std::collections::{HashMap, VecDeque};

use crate::workload::mpi::op::Op;

use super::totals::for_each_op;
use super::Motif;

/// What a rank is blocked on.
#[derive(Clone, Copy, PartialEq)]
enum Wait {
    Nothing,
    Request(usize),
    All,
}

struct Rank {
    ops: Vec<Op>,
    pc: usize,
    /// Requests posted and not complete.
    open: u32,
    wait: Wait,
}

/// Unmatched sends and receives of one (source, destination, tag), oldest first.
#[derive(Default)]
struct Queues {
    sends: VecDeque<usize>,
    recvs: VecDeque<usize>,
}

struct Machine {
    ranks: Vec<Rank>,
    /// Per request: its rank and whether it is complete.
    reqs: Vec<(u32, bool)>,
    queues: HashMap<(u32, u32, u32), Queues>,
}

impl Machine {
    /// Post a request of `rank` on `key`; it completes with the oldest unmatched opposite one.
    fn post(&mut self, rank: u32, key: (u32, u32, u32), send: bool) -> usize {
        let id = self.reqs.len();
        self.reqs.push((rank, false));
        self.ranks[rank as usize].open += 1;
        let q = self.queues.entry(key).or_default();
        let (mine, theirs) = if send { (&mut q.sends, &mut q.recvs) } else { (&mut q.recvs, &mut q.sends) };
        match theirs.pop_front() {
            Some(other) => {
                for r in [id, other] {
                    self.reqs[r].1 = true;
                    let owner = self.reqs[r].0 as usize;
                    self.ranks[owner].open -= 1;
                }
            }
            None => mine.push_back(id),
        }
        id
    }

    fn blocked(&self, r: usize) -> bool {
        match self.ranks[r].wait {
            Wait::Nothing => false,
            Wait::Request(id) => !self.reqs[id].1,
            Wait::All => self.ranks[r].open > 0,
        }
    }

    /// Run rank `r` until it blocks or ends; whether it moved.
    fn advance(&mut self, r: usize) -> bool {
        let mut moved = false;
        loop {
            if self.blocked(r) {
                return moved;
            }
            self.ranks[r].wait = Wait::Nothing;
            let Some(op) = self.ranks[r].ops.get(self.ranks[r].pc).cloned() else { return moved };
            self.ranks[r].pc += 1;
            moved = true;
            let me = r as u32;
            self.ranks[r].wait = match op {
                Op::Isend { to, tag, .. } => {
                    self.post(me, (me, to, tag), true);
                    Wait::Nothing
                }
                Op::Irecv { from, tag, .. } => {
                    self.post(me, (from, me, tag), false);
                    Wait::Nothing
                }
                Op::Send { to, tag, .. } => Wait::Request(self.post(me, (me, to, tag), true)),
                Op::Recv { from, tag, .. } => Wait::Request(self.post(me, (from, me, tag), false)),
                Op::WaitAll => Wait::All,
                _ => Wait::Nothing,
            };
        }
    }
}

/// Run `m` on `ranks` ranks to the end; `Err` names the ranks that are stuck, and where.
pub fn run_to_completion(m: &dyn Motif, ranks: u32) -> Result<(), String> {
    let mut programs: Vec<Vec<Op>> = vec![Vec::new(); ranks as usize];
    for_each_op(m, ranks, |r, op| programs[r as usize].push(op.clone()));
    let ranks: Vec<Rank> = programs.into_iter().map(|ops| Rank { ops, pc: 0, open: 0, wait: Wait::Nothing }).collect();
    let mut mc = Machine { ranks, reqs: Vec::new(), queues: HashMap::new() };
    while (0..mc.ranks.len()).fold(false, |moved, r| mc.advance(r) | moved) {}
    let stuck: Vec<String> = (0..mc.ranks.len())
        .filter(|&r| mc.blocked(r) || mc.ranks[r].pc < mc.ranks[r].ops.len())
        .take(4)
        .map(|r| format!("rank {r} at op {} ({:?})", mc.ranks[r].pc, mc.ranks[r].ops.get(mc.ranks[r].pc.max(1) - 1)))
        .collect();
    if stuck.is_empty() {
        Ok(())
    } else {
        Err(stuck.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct HeadOn;

    impl Motif for HeadOn {
        fn name(&self) -> &'static str {
            "head-on"
        }
        fn iterations(&self) -> u32 {
            1
        }
        fn iteration(&self, rank: u32, _it: u32, out: &mut Vec<Op>) {
            // Both ranks send first, blocking: paired, yet stuck under rendezvous.
            out.push(Op::Send { to: 1 - rank, bytes: 1, tag: 0 });
            out.push(Op::Recv { from: 1 - rank, bytes: 1, tag: 0 });
        }
    }

    #[test]
    fn finds_a_head_on_deadlock() {
        assert!(run_to_completion(&HeadOn, 2).is_err());
    }
}
