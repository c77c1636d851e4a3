//! The MPI layer at run time: ranks stepping through their programs, the protocol's phases,
//! the NICs, and the per-job record (see the module comment of [`super`]).

use super::collective;
use super::metrics::{IterationRow, WorkloadReport};
use super::op::Op;
use super::rank::{Activity, Posted};
use super::{Mpi, Msg, Phase};
use crate::network::{Packet, Stamps};
use crate::units::{ps_to_us, Time};
use crate::workload::motifs::totals::wire_bytes;
use crate::workload::{Workload, WorkloadCtx};

/// Wake-up kinds.
/// A rank's `Compute` ended (`a`: global rank).
const RESUME: u8 = 0;
/// Message `a`'s current phase is ready at its sender's NIC.
const NIC_READY: u8 = 1;
/// Message `a`'s current phase is whole at its receiver's host.
const ARRIVED: u8 = 2;
/// A request of rank `a` completes (`b`: 1 if it is the rank's blocking request).
const COMPLETE: u8 = 3;

impl Workload for Mpi {
    fn start(&mut self, cx: &mut WorkloadCtx) {
        for g in 0..self.ranks.len() as u32 {
            let job = &self.jobs[self.ranks[g as usize].job as usize];
            let r = &mut self.ranks[g as usize];
            r.ops.push_back(Op::Compute { ps: job.wait2start });
            job.motif.prologue(r.rank, &mut self.scratch);
            r.ops.extend(self.scratch.drain(..));
            self.advance(cx, g);
        }
    }

    fn on_wake(&mut self, cx: &mut WorkloadCtx, kind: u8, a: u32, b: u32) {
        match kind {
            RESUME => {
                self.ranks[a as usize].activity = Activity::Running;
                self.advance(cx, a);
            }
            NIC_READY => self.nic_ready(cx, a),
            ARRIVED => self.arrived(cx, a),
            COMPLETE => self.complete(cx, a, b == 1),
            _ => unreachable!("unknown MPI wake-up {kind}"),
        }
    }

    fn on_source_space(&mut self, cx: &mut WorkloadCtx, node: u32) {
        self.pump(cx, node);
    }

    fn wants_deliveries(&self) -> bool {
        true
    }

    fn on_delivered(&mut self, cx: &mut WorkloadCtx, pkt: &Packet, stamps: &Stamps) {
        let m = pkt.tag;
        let now = cx.now();
        let job = self.ranks[self.msgs[m as usize].src as usize].job as usize;
        let bytes = pkt.flits as u64 * self.p.flit_bytes;
        self.stats[job].on_packet(now, now - stamps.inject_time, now - stamps.gen_time, bytes);
        let msg = &mut self.msgs[m as usize];
        msg.to_deliver -= 1;
        if msg.to_deliver == 0 {
            cx.wake_at(now + self.p.arrive, ARRIVED, m, 0);
        }
    }

    fn finished(&self) -> bool {
        self.to_end == 0
    }

    /// With `workload.end_with_jobs`, the other jobs' packets may be in flight at the end; the
    /// listed jobs' are not (every rank of a finished job has received all it waits for).
    fn ends_in_flight(&self) -> bool {
        self.ends_early
    }

    fn progress(&self) -> Vec<crate::engine::observe::JobProgress> {
        self.job_progress()
    }

    fn stalled(&self) -> Option<String> {
        if self.finished() {
            return None;
        }
        Some(self.stall_report())
    }

    fn node_jobs(&self) -> Option<(Vec<u16>, usize)> {
        let mut of = vec![u16::MAX; self.nic.len()];
        for r in &self.ranks {
            of[r.node as usize] = r.job as u16;
        }
        Some((of, self.jobs.len()))
    }

    fn report(&self, end: Time) -> Option<WorkloadReport> {
        let jobs =
            self.jobs.iter().enumerate().map(|(j, job)| self.stats[j].row(j as u32, &job.name, job.motif.name(), end));
        Some(WorkloadReport {
            jobs: jobs.collect(),
            iterations: self.rows.clone(),
            throughput_window_us: ps_to_us(self.window),
            throughput_bytes: self.stats.iter().map(|s| s.received.clone()).collect(),
        })
    }
}

impl Mpi {
    /// Run rank `g`'s ops until one makes it wait.
    fn advance(&mut self, cx: &mut WorkloadCtx, g: u32) {
        loop {
            let Some(op) = self.ranks[g as usize].ops.pop_front() else {
                if self.next_iteration(cx, g) {
                    continue;
                }
                return;
            };
            let now = cx.now();
            if let Op::Compute { ps } = op {
                if ps == 0 {
                    continue;
                }
                self.end_burst(g);
                let r = &mut self.ranks[g as usize];
                if r.in_iteration {
                    r.iter_compute += ps;
                }
                r.activity = Activity::Computing;
                r.current = Some(op);
                cx.wake_at(now + ps, RESUME, g, 0);
                return;
            }
            // An MPI call of the program pays its entry first; a collective's own ops do not.
            let r = &mut self.ranks[g as usize];
            let call = r.coll_ops == 0;
            if call && !r.entered && self.p.call_enter > 0 {
                r.entered = true;
                r.ops.push_front(op.clone());
                return self.in_call(cx, g, op, self.p.call_enter);
            }
            r.entered = false;
            if !call {
                r.coll_ops -= 1;
            }
            // Whether this op's completion ends the call (a collective's: its last op).
            let ends_call = if call { !op.is_collective() } else { r.coll_ops == 0 };
            if !self.run_op(cx, g, &op, ends_call) {
                return;
            }
            // A collective without point-to-point ops of its own ends at once.
            let ended = ends_call || (op.is_collective() && self.ranks[g as usize].coll_ops == 0);
            if ended && self.p.call_return > 0 {
                return self.in_call(cx, g, op, self.p.call_return);
            }
        }
    }

    /// Run MPI op `op` of rank `g`; false when the rank now waits in it (`ends_call`: its
    /// completion ends an MPI call).
    fn run_op(&mut self, cx: &mut WorkloadCtx, g: u32, op: &Op, ends_call: bool) -> bool {
        let (job, rank) = (self.ranks[g as usize].job as usize, self.ranks[g as usize].rank);
        let first = self.jobs[job].first;
        match *op {
            Op::Isend { to, bytes, tag } => {
                self.post_send(cx, g, first + to, bytes, tag, false);
                self.ranks[g as usize].pending += 1;
            }
            Op::Send { to, bytes, tag } => {
                self.post_send(cx, g, first + to, bytes, tag, true);
                self.block(g, op, Activity::Blocked, ends_call);
                return false;
            }
            Op::Irecv { from, bytes, tag } => {
                self.end_burst(g);
                self.ranks[g as usize].pending += 1;
                let pin = self.post_recv(cx, g, first + from, bytes, tag, false);
                if pin > 0 && self.p.recv_pin_blocks {
                    // The call returns once the buffer is pinned (then its return cost).
                    let ret = if ends_call { self.p.call_return } else { 0 };
                    self.in_call(cx, g, op.clone(), pin + ret);
                    return false;
                }
            }
            Op::Recv { from, bytes, tag } => {
                self.end_burst(g);
                self.post_recv(cx, g, first + from, bytes, tag, true);
                self.block(g, op, Activity::Blocked, ends_call);
                return false;
            }
            Op::WaitAll => {
                self.end_burst(g);
                if self.ranks[g as usize].pending > 0 {
                    self.block(g, op, Activity::WaitingAll, ends_call);
                    return false;
                }
            }
            Op::Compute { .. } => unreachable!("advance() runs computations"),
            ref coll => self.enter_collective(g, rank, coll),
        }
        true
    }

    /// Rank `g` spends `ps` in MPI call `op`'s entry or return.
    fn in_call(&mut self, cx: &mut WorkloadCtx, g: u32, op: Op, ps: Time) {
        let r = &mut self.ranks[g as usize];
        r.activity = Activity::InCall;
        r.current = Some(op);
        cx.wake_at(cx.now() + ps, RESUME, g, 0);
    }

    fn block(&mut self, g: u32, op: &Op, activity: Activity, ends_call: bool) {
        let r = &mut self.ranks[g as usize];
        r.activity = activity;
        r.current = Some(op.clone());
        r.call_end = ends_call;
    }

    /// Any op but a send ends the rank's run of sends (a burst; the largest is the job's peak
    /// ingress volume, counted as `motifs::totals` counts it).
    fn end_burst(&mut self, g: u32) {
        let r = &mut self.ranks[g as usize];
        let s = &mut self.stats[r.job as usize];
        s.peak_ingress = s.peak_ingress.max(r.burst);
        r.burst = 0;
    }

    /// Replace collective `op` by its point-to-point program at the front of the rank's ops.
    fn enter_collective(&mut self, g: u32, rank: u32, op: &Op) {
        let comm = match op {
            Op::Allreduce { comm, .. }
            | Op::Reduce { comm, .. }
            | Op::Bcast { comm, .. }
            | Op::Barrier { comm }
            | Op::Alltoallv { comm, .. } => comm,
            _ => unreachable!("point-to-point ops are run by advance()"),
        };
        if comm.index_of(rank).is_none() {
            // A motif bug: a rank outside the communicator skips the collective.
            debug_assert!(false, "rank {rank} is not in communicator {}", comm.id);
            return;
        }
        let seq = self.ranks[g as usize].next_collective(comm.id);
        collective::expand(op, rank, seq, &mut self.scratch);
        let r = &mut self.ranks[g as usize];
        r.coll_ops = self.scratch.len() as u32;
        for o in self.scratch.drain(..).rev() {
            r.ops.push_front(o);
        }
    }

    /// The rank's ops ran out: close its iteration and load the next one. Returns false when
    /// the rank has finished.
    fn next_iteration(&mut self, cx: &mut WorkloadCtx, g: u32) -> bool {
        let now = cx.now();
        let r = &mut self.ranks[g as usize];
        let job = r.job as usize;
        if r.in_iteration {
            let comm = now - r.iter_start - r.iter_compute;
            self.stats[job].comm[r.rank as usize] += comm;
            if self.record_iterations {
                self.rows.push(IterationRow {
                    job: job as u32,
                    rank: r.rank,
                    iteration: r.next_iteration - 1,
                    start_us: ps_to_us(r.iter_start),
                    stop_us: ps_to_us(now),
                    comm_us: ps_to_us(comm),
                });
            }
        }
        let j = &self.jobs[job];
        if r.next_iteration < j.iterations {
            j.motif.iteration(r.rank, r.next_iteration, &mut self.scratch);
            r.ops.extend(self.scratch.drain(..));
            (r.in_iteration, r.iter_start, r.iter_compute) = (true, now, 0);
            r.next_iteration += 1;
            return true;
        }
        r.activity = Activity::Done;
        r.current = None;
        r.in_iteration = false;
        let s = &mut self.stats[job];
        s.peak_ingress = s.peak_ingress.max(r.burst);
        s.ranks_done += 1;
        if s.ranks_done as usize == s.comm.len() {
            s.done_at = Some(now);
            self.to_end -= self.ends_run[job] as usize;
        }
        false
    }

    // ---- The protocol ----------------------------------------------------------------------

    fn new_msg(&mut self, msg: Msg) -> u32 {
        match self.free_msgs.pop() {
            Some(i) => {
                self.msgs[i as usize] = msg;
                i
            }
            None => {
                self.msgs.push(msg);
                self.msgs.len() as u32 - 1
            }
        }
    }

    /// Rank `g` starts a send of `bytes` to global rank `dst`.
    fn post_send(&mut self, cx: &mut WorkloadCtx, g: u32, dst: u32, bytes: u64, tag: u32, blocking: bool) {
        let p = &self.p;
        let eager = bytes <= p.eager_limit;
        let mut wire = wire_bytes(bytes, p.header, p.eager_limit);
        if !eager && p.ack {
            wire += p.header;
        }
        let s = &mut self.stats[self.ranks[g as usize].job as usize];
        (s.messages, s.payload_bytes, s.wire_bytes) = (s.messages + 1, s.payload_bytes + bytes, s.wire_bytes + wire);
        self.ranks[g as usize].burst += bytes;
        let phase = if eager { Phase::Eager } else { Phase::Rts };
        let m = self.new_msg(Msg {
            src: g,
            dst,
            tag,
            payload: bytes,
            phase,
            wire_left: 0,
            to_deliver: 0,
            send_blocking: blocking,
            recv_blocking: false,
        });
        // The host's own costs before the NIC sees the message: the eager copy, or pinning.
        let host = if eager { (bytes as f64 * self.p.copy_per_byte).round() as Time } else { self.pin_time(bytes) };
        cx.wake_at(cx.now() + host + self.p.tx + self.p.nic_tx, NIC_READY, m, 0);
    }

    /// Host time to pin a rendezvous buffer of `bytes`.
    fn pin_time(&self, bytes: u64) -> Time {
        self.p.pin + bytes.div_ceil(4096) * self.p.pin_per_page
    }

    /// Rank `g` posts a receive of `bytes` from global rank `from`: at once, or once its buffer
    /// is pinned (`rendezvous_recv_pin`, receives above the eager limit). Returns the pinning
    /// time (0 without).
    fn post_recv(&mut self, cx: &mut WorkloadCtx, g: u32, from: u32, bytes: u64, tag: u32, blocking: bool) -> Time {
        let pinned = self.p.recv_pin && bytes > self.p.eager_limit;
        let pin = if pinned { self.pin_time(bytes) } else { 0 };
        let ready = cx.now() + pin;
        let r = &mut self.ranks[g as usize];
        let found = r.unexpected.iter().position(|&m| {
            let msg = &self.msgs[m as usize];
            msg.src == from && msg.tag == tag
        });
        let Some(i) = found else {
            r.posted.push(Posted { from, tag, blocking, ready });
            return pin;
        };
        let m = r.unexpected.remove(i);
        let at = ready + self.p.rx_setup + self.p.match_;
        if self.msgs[m as usize].phase == Phase::Eager {
            self.free_msgs.push(m);
            cx.wake_at(at, COMPLETE, g, blocking as u32);
        } else {
            self.msgs[m as usize].recv_blocking = blocking;
            self.clear_to_send(cx, m, at);
        }
        pin
    }

    /// The receiver of rendezvous `m` answers at `at` (plus its send setup).
    fn clear_to_send(&mut self, cx: &mut WorkloadCtx, m: u32, at: Time) {
        self.msgs[m as usize].phase = Phase::Cts;
        cx.wake_at(at + self.p.tx + self.p.nic_tx, NIC_READY, m, 0);
    }

    /// The (global) ranks that send and receive the current phase of `m`.
    fn ends(&self, m: u32) -> (u32, u32) {
        let msg = &self.msgs[m as usize];
        match msg.phase {
            Phase::Cts | Phase::Ack => (msg.dst, msg.src),
            _ => (msg.src, msg.dst),
        }
    }

    fn nic_ready(&mut self, cx: &mut WorkloadCtx, m: u32) {
        let (from, to) = self.ends(m);
        let msg = &self.msgs[m as usize];
        if msg.src == msg.dst {
            // A local copy: no network.
            return self.local_copy(cx, m);
        }
        let wire = match msg.phase {
            Phase::Eager => msg.payload + self.p.header,
            Phase::Rts | Phase::Cts | Phase::Ack => self.p.header,
            Phase::Data => msg.payload,
        };
        let packets = wire.div_ceil(self.p.packet_bytes).max(1) as u32;
        let msg = &mut self.msgs[m as usize];
        (msg.wire_left, msg.to_deliver) = (wire.max(1), packets);
        let node = self.ranks[from as usize].node;
        let q = node as usize;
        debug_assert_ne!(node, self.ranks[to as usize].node);
        if self.p.control_stream && self.msgs[m as usize].phase == Phase::Cts {
            // Behind the packets the data stream has staged, ahead of the rest.
            let after = self.sent[q] + self.unsent[q].min(self.p.staged);
            self.ctl[q].push_back((m, after));
        } else {
            self.nic[q].push_back(m);
            self.unsent[q] += packets as u64;
        }
        self.pump(cx, node);
    }

    fn local_copy(&mut self, cx: &mut WorkloadCtx, m: u32) {
        let msg = &mut self.msgs[m as usize];
        msg.phase = Phase::Eager;
        let (src, blocking) = (msg.src, msg.send_blocking);
        cx.wake_at(cx.now() + self.p.arrive, ARRIVED, m, 0);
        self.complete(cx, src, blocking);
    }

    /// Node `node`'s NIC fills its source queue from its messages: the control stream's head
    /// once the packets staged ahead of it are sent, else the data stream's.
    fn pump(&mut self, cx: &mut WorkloadCtx, node: u32) {
        let q = node as usize;
        while cx.queued(node) < self.p.window {
            if let Some(&(m, after)) = self.ctl[q].front() {
                if self.sent[q] >= after || self.nic[q].is_empty() {
                    if self.emit(cx, node, m) {
                        self.ctl[q].pop_front();
                    }
                    continue;
                }
            }
            let Some(&m) = self.nic[q].front() else { return };
            (self.sent[q], self.unsent[q]) = (self.sent[q] + 1, self.unsent[q] - 1);
            if self.emit(cx, node, m) {
                self.nic[q].pop_front();
                let msg = &self.msgs[m as usize];
                if msg.phase == Phase::Eager || (msg.phase == Phase::Data && !self.p.ack) {
                    let (src, blocking) = (msg.src, msg.send_blocking);
                    self.complete(cx, src, blocking);
                }
            }
        }
        if !self.nic[q].is_empty() || !self.ctl[q].is_empty() {
            cx.notify_when_space(node);
        }
    }

    /// The next packet of the current phase of `m` enters `node`'s source queue; whether it
    /// was the last one.
    fn emit(&mut self, cx: &mut WorkloadCtx, node: u32, m: u32) -> bool {
        let (_, to) = self.ends(m);
        let dst_node = self.ranks[to as usize].node;
        let msg = &mut self.msgs[m as usize];
        let bytes = msg.wire_left.min(self.p.packet_bytes);
        msg.wire_left -= bytes;
        let flits = bytes.div_ceil(self.p.flit_bytes).max(1) as u16;
        cx.send(node, dst_node, flits, m);
        msg.wire_left == 0
    }

    /// The current phase of `m` is whole at its receiver's host.
    fn arrived(&mut self, cx: &mut WorkloadCtx, m: u32) {
        let now = cx.now();
        let msg = &self.msgs[m as usize];
        let (src, dst, tag) = (msg.src, msg.dst, msg.tag);
        match msg.phase {
            Phase::Eager | Phase::Rts => {
                let Some(p) = self.ranks[dst as usize].take_posted(src, tag) else {
                    self.ranks[dst as usize].unexpected.push(m);
                    return;
                };
                // A receive still pinning its buffer matches once it is in place.
                let at = now.max(p.ready) + self.p.match_;
                if self.msgs[m as usize].phase == Phase::Eager {
                    self.free_msgs.push(m);
                    cx.wake_at(at, COMPLETE, dst, p.blocking as u32);
                } else {
                    self.msgs[m as usize].recv_blocking = p.blocking;
                    self.clear_to_send(cx, m, at);
                }
            }
            Phase::Cts => {
                // The sender's NIC answers the clear to send with the data.
                self.msgs[m as usize].phase = Phase::Data;
                cx.wake_at(now + self.p.nic_tx, NIC_READY, m, 0);
            }
            Phase::Data => {
                let (blocking, payload) = (msg.recv_blocking, msg.payload);
                if self.p.ack {
                    // The receiver acknowledges; the sender completes when that arrives.
                    self.msgs[m as usize].phase = Phase::Ack;
                    cx.wake_at(now + self.p.tx + self.p.nic_tx, NIC_READY, m, 0);
                } else {
                    self.free_msgs.push(m);
                }
                if self.p.recv_unpin {
                    // Unpinned before the wait returns, after the rank's earlier unpins.
                    let unpin = self.pin_time(payload);
                    let r = &mut self.ranks[dst as usize];
                    r.host_free = r.host_free.max(now) + unpin;
                    cx.wake_at(r.host_free, COMPLETE, dst, blocking as u32);
                } else {
                    self.complete(cx, dst, blocking);
                }
            }
            Phase::Ack => {
                let blocking = msg.send_blocking;
                self.free_msgs.push(m);
                self.complete(cx, src, blocking);
            }
        }
    }

    /// A request of rank `g` completed.
    fn complete(&mut self, cx: &mut WorkloadCtx, g: u32, blocking: bool) {
        let r = &mut self.ranks[g as usize];
        if blocking {
            debug_assert_eq!(r.activity, Activity::Blocked);
        } else {
            r.pending -= 1;
            if r.pending > 0 || r.activity != Activity::WaitingAll {
                return;
            }
        }
        // The rank's wait is over: the call's return, if it ends one, then its next op.
        if std::mem::take(&mut r.call_end) && self.p.call_return > 0 {
            let op = r.current.take().expect("a waiting rank has its op");
            return self.in_call(cx, g, op, self.p.call_return);
        }
        r.activity = Activity::Running;
        r.current = None;
        self.advance(cx, g);
    }

    /// Why the unfinished ranks wait, for the deadlock report (the first few).
    fn stall_report(&self) -> String {
        let waiting: Vec<_> = self.ranks.iter().filter(|r| r.activity != Activity::Done).collect();
        let mut out = format!("the workload cannot go on: {} ranks wait for messages that never come", waiting.len());
        for r in waiting.iter().take(5) {
            let job = &self.jobs[r.job as usize];
            let first = job.first;
            let posted: Vec<String> =
                r.posted.iter().map(|p| format!("from rank {} tag {}", p.from - first, p.tag)).collect();
            out += &format!(
                "\n  job {} ({}) rank {} on node {}, iteration {}: in {:?}, {} requests open; receives posted: [{}]",
                r.job,
                job.name,
                r.rank,
                r.node,
                r.next_iteration.saturating_sub(1),
                r.current.as_ref().map(|o| format!("{o:?}")).unwrap_or_else(|| "nothing".into()),
                r.pending,
                posted.join(", ")
            );
        }
        out
    }
}
