//! A closed-loop workload written outside the crate against the `Workload` trait only: pairs of
//! nodes play ping-pong with messages of several packets and a compute delay before each reply.
//! Its timing is checked against what a ping-pong must take on an idle network, its
//! bookkeeping against the engine's counts, and its end against the run's.

mod common;

use std::sync::{Arc, Mutex};

use common::small;
use dflab_core::config::Arrangement;
use dflab_core::engine::Simulation;
use dflab_core::network::{Packet, Stamps};
use dflab_core::routing::minimal::Minimal;
use dflab_core::stats::{ProbeKind, ProbeSpec};
use dflab_core::topology::Topology;
use dflab_core::units::Time;
use dflab_core::workload::{Workload, WorkloadCtx};
use dflab_core::{Experiment, SimResult};

/// The wake-up after a compute delay: node `a` answers (or starts the next round with) `b`.
const COMPUTED: u8 = 0;

struct PingPong {
    /// (initiator, responder) pairs.
    pairs: Vec<(u32, u32)>,
    /// Packets per message and flits per packet.
    packets: u32,
    flits: u16,
    /// ps of computation before each send.
    compute: Time,
    rounds: u32,
    /// Per node: packets of the current message received, rounds completed (initiators), the
    /// time the current round started.
    received: Vec<u32>,
    done: Vec<u32>,
    round_start: Vec<Time>,
    finished_pairs: usize,
    /// Round-trip times (first send to last packet of the answer) shared with the test.
    rtts: Arc<Mutex<Vec<Time>>>,
}

impl PingPong {
    fn send_message(&self, cx: &mut WorkloadCtx, src: u32, dst: u32) {
        for i in 0..self.packets {
            cx.send(src, dst, self.flits, i);
        }
    }
}

impl Workload for PingPong {
    fn fixed_delays(&self) -> Vec<Time> {
        vec![self.compute]
    }

    fn start(&mut self, cx: &mut WorkloadCtx) {
        for &(a, b) in &self.pairs {
            self.round_start[a as usize] = cx.now();
            self.send_message(cx, a, b);
        }
    }

    fn on_wake(&mut self, cx: &mut WorkloadCtx, kind: u8, a: u32, b: u32) {
        assert_eq!(kind, COMPUTED);
        if self.is_initiator(a) {
            self.round_start[a as usize] = cx.now();
        }
        self.send_message(cx, a, b);
    }

    fn wants_deliveries(&self) -> bool {
        true
    }

    fn on_delivered(&mut self, cx: &mut WorkloadCtx, pkt: &Packet, _stamps: &Stamps) {
        let (me, peer) = (pkt.dst, pkt.src);
        self.received[me as usize] += 1;
        if self.received[me as usize] < self.packets {
            return;
        }
        self.received[me as usize] = 0;
        cx.count(0, 1);
        if !self.is_initiator(me) {
            // The responder computes, then answers.
            cx.wake_after(0, COMPUTED, me, peer);
            return;
        }
        self.rtts.lock().unwrap().push(cx.now() - self.round_start[me as usize]);
        self.done[me as usize] += 1;
        if self.done[me as usize] == self.rounds {
            self.finished_pairs += 1;
        } else {
            cx.wake_after(0, COMPUTED, me, peer);
        }
    }

    fn finished(&self) -> bool {
        self.finished_pairs == self.pairs.len()
    }

    fn probes(&self) -> Vec<ProbeSpec> {
        vec![ProbeSpec::new("messages", ProbeKind::Total, "complete messages received")]
    }
}

impl PingPong {
    fn is_initiator(&self, node: u32) -> bool {
        self.pairs.iter().any(|&(a, _)| a == node)
    }
}

fn ping_pong(
    e: &Experiment,
    pairs: Vec<(u32, u32)>,
    packets: u32,
    compute: Time,
    rounds: u32,
) -> (SimResult, Vec<Time>) {
    let topo = Topology::new(&e.topology).unwrap();
    let n = topo.nodes();
    let rtts = Arc::new(Mutex::new(Vec::new()));
    let w = PingPong {
        pairs,
        packets,
        flits: e.network.packet_flits as u16,
        compute,
        rounds,
        received: vec![0; n],
        done: vec![0; n],
        round_start: vec![0; n],
        finished_pairs: 0,
        rtts: rtts.clone(),
    };
    let routing = Minimal::new(&topo);
    let r =
        Simulation::with_workload(e, topo, routing, Box::new(w)).unwrap().run().unwrap_or_else(|err| panic!("{err}"));
    let rtts = rtts.lock().unwrap().clone();
    (r, rtts)
}

fn setup() -> Experiment {
    let mut e = small(2, 4, 2, 1, Arrangement::Absolute, 0.0, 200.0);
    e.routing.algorithm = "MIN".into();
    e
}

/// One pair on an idle network: every round trip is the same, and the run ends when the last
/// answer is in.
#[test]
fn one_pair_round_trips_take_two_messages_and_one_computation() {
    let e = setup();
    let compute: Time = 1_000_000; // 1 us
    let (packets, rounds) = (4, 10);
    let (r, rtts) = ping_pong(&e, vec![(0, 71)], packets, compute, rounds);
    assert_eq!(rtts.len(), rounds as usize);
    // A round (ping sent → answer in) is two messages and the responder's computation, the
    // same every round on an idle network.
    assert!(rtts.iter().all(|&t| t == rtts[0]), "{rtts:?}");
    // A message of 4 packets on an idle path: more than 4 serialisations at the node's link,
    // less than a microsecond.
    let message = (rtts[0] - compute) / 2;
    let n = &e.network;
    let serialise = (n.flit_bytes as f64 * n.packet_flits as f64 / n.local_bw_gbps * 1000.0) as Time;
    assert!(message > 4 * serialise && message < 1_000_000, "message {message} ps");
    // 2 messages per round, every packet delivered and counted, and the run stopped at the
    // last delivery, long before its 200 us.
    assert_eq!(r.probes.totals["messages"], 2 * rounds as u64);
    assert_eq!(r.summary.packets_delivered, 2 * (rounds * packets) as u64);
    assert_eq!(r.summary.packets_generated, r.summary.packets_delivered);
    assert_eq!(r.summary.packets_in_flight_end, 0);
    let total_ps = (r.summary.sim_time_us * 1e6).round() as Time;
    // The rounds, and the initiator's computation between two rounds.
    let expect: Time = rtts.iter().sum::<Time>() + (rounds as Time - 1) * compute;
    assert!(total_ps >= expect && total_ps < expect + 10_000, "run ended at {total_ps} ps, rounds took {expect}");
}

/// Many pairs at once contend (same-router peers share their links), so round trips spread and
/// grow, but the workload still completes, deterministically.
#[test]
fn many_pairs_finish_and_repeat_exactly() {
    let e = setup();
    let pairs: Vec<(u32, u32)> = (0..36).map(|k| (k, 71 - k)).collect();
    let (a, rtts_a) = ping_pong(&e, pairs.clone(), 8, 200_000, 5);
    let (b, rtts_b) = ping_pong(&e, pairs.clone(), 8, 200_000, 5);
    assert_eq!(rtts_a, rtts_b);
    assert_eq!(serde_json::to_string(&a.summary).unwrap(), serde_json::to_string(&b.summary).unwrap());
    assert_eq!(a.probes.totals["messages"], 2 * 36 * 5);
    assert_eq!(a.summary.packets_delivered, 2 * 36 * 5 * 8);
    let (_, alone) = ping_pong(&e, vec![pairs[0]], 8, 200_000, 5);
    let mean = |v: &[Time]| v.iter().sum::<Time>() as f64 / v.len() as f64;
    assert!(mean(&rtts_a) > mean(&alone), "contention costs time: {} vs {}", mean(&rtts_a), mean(&alone));
}
