//! Shared helpers for the engine's integration tests.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use dflab_core::config::Arrangement;
use dflab_core::engine::Simulation;
use dflab_core::network::{Packet, Stamps};
use dflab_core::routing::minimal::Minimal;
use dflab_core::topology::Topology;
use dflab_core::units::Time;
use dflab_core::workload::{Workload, WorkloadCtx};
use dflab_core::{Experiment, SimResult};

/// The HPDC'21 setup (`qadaptive-1056`) with the given routing, traffic and load, invariant
/// checks on, and short windows (the tests' "reduced size" is in time, not in nodes).
pub fn hpdc(routing: &str, pattern: &str, load: f64, warmup_us: f64, measure_us: f64) -> Experiment {
    let mut e = Experiment::default();
    e.routing.algorithm = routing.into();
    e.traffic.pattern = pattern.into();
    e.traffic.load = load;
    e.run.warmup_us = warmup_us;
    e.run.measure_us = measure_us;
    e.run.check = true;
    e
}

pub fn run(e: &Experiment) -> SimResult {
    e.validate().expect("valid experiment");
    dflab_core::simulate(e).unwrap_or_else(|err| panic!("simulation failed: {err}"))
}

/// A small `dfly(p, a, h)` with `l` links per group pair, invariant checks on, and the given
/// run windows (µs).
pub fn small(p: usize, a: usize, h: usize, l: usize, arr: Arrangement, warmup_us: f64, measure_us: f64) -> Experiment {
    let mut e = Experiment::default();
    e.topology.p = p;
    e.topology.a = a;
    e.topology.h = h;
    e.topology.links_per_pair = Some(l);
    e.topology.arrangement = arr;
    e.run.warmup_us = warmup_us;
    e.run.measure_us = measure_us;
    e.run.check = true;
    e
}

/// Sends `(time, src, dst)` packets of `flits` flits and records each delivery as (index of
/// the send, delivery time).
struct Timed {
    sends: Vec<(Time, u32, u32)>,
    flits: u16,
    got: Arc<Mutex<Vec<(u32, Time)>>>,
    left: usize,
}

impl Workload for Timed {
    fn start(&mut self, cx: &mut WorkloadCtx) {
        for (i, &(t, _, _)) in self.sends.iter().enumerate() {
            cx.wake_at(t, 0, i as u32, 0);
        }
    }

    fn on_wake(&mut self, cx: &mut WorkloadCtx, _kind: u8, i: u32, _b: u32) {
        let (_, src, dst) = self.sends[i as usize];
        cx.send(src, dst, self.flits, i);
    }

    fn wants_deliveries(&self) -> bool {
        true
    }

    fn uniform_packets(&self) -> bool {
        true // every send has `network.packet_flits` flits
    }

    fn on_delivered(&mut self, cx: &mut WorkloadCtx, pkt: &Packet, _stamps: &Stamps) {
        self.got.lock().unwrap().push((pkt.tag, cx.now()));
        self.left -= 1;
    }

    fn finished(&self) -> bool {
        self.left == 0
    }
}

/// Run the timed sends under MIN on `e`; the latency of each send, in the order given.
pub fn timed(e: &Experiment, sends: &[(Time, u32, u32)]) -> Vec<Time> {
    let mut e = e.clone();
    e.run.warmup_us = 0.0;
    e.run.measure_us = 100.0;
    let topo = Topology::new(&e.topology).unwrap();
    let got = Arc::new(Mutex::new(Vec::new()));
    let flits = e.network.packet_flits as u16;
    let w = Timed { sends: sends.to_vec(), flits, got: got.clone(), left: sends.len() };
    let routing = Minimal::new(&topo);
    Simulation::with_workload(&e, topo, routing, Box::new(w)).unwrap().run().unwrap();
    let got = got.lock().unwrap().clone();
    assert_eq!(got.len(), sends.len());
    (0..sends.len()).map(|i| got.iter().find(|x| x.0 == i as u32).expect("delivered").1 - sends[i].0).collect()
}

/// BookSim2's `dragonflynew` with k = 2 (dfly(2, 4, 2, 9), 72 nodes) under the BookSim timing,
/// as `validation/booksim/dfly_72.cfg` configures it: 1 cycle = 1 ns = one 64 B flit; channels
/// 1 / 10 / 100 cycles; 256-flit VC buffers; speedup 2; an output queue that never fills.
pub fn booksim72(routing: &str, pattern: &str, load: f64, warmup_us: f64, measure_us: f64) -> Experiment {
    let mut e = small(2, 4, 2, 1, Arrangement::Absolute, warmup_us, measure_us);
    let n = &mut e.network;
    n.timing = dflab_core::config::PortTiming::Booksim;
    (n.flit_bytes, n.packet_flits) = (64, 1);
    (n.host_bw_gbps, n.local_bw_gbps, n.global_bw_gbps, n.xbar_bw_gbps) = (64.0, 64.0, 64.0, 128.0);
    (n.input_buffer_flits, n.output_buffer_flits) = (256, 1024);
    (n.host_latency_ns, n.local_latency_ns, n.global_latency_ns) = (1.0, 10.0, 100.0);
    (n.input_latency_ns, n.output_latency_ns) = (0.0, 0.0);
    e.routing.algorithm = routing.to_string();
    e.traffic.pattern = dflab_core::traffic::PatternSpec::Short(pattern.to_string());
    e.traffic.load = load;
    e.traffic.allow_self = true;
    e
}

/// The `ugal-le-288` network (ICS'24, dfly(4,8,4,9), 4 links per pair, BookSim timing) with
/// `routing` and its `extra` parameters (a JSON fragment starting with a comma, or empty).
pub fn ics24_288(routing: &str, extra: &str, pattern: &str, load: f64, warmup_us: f64, measure_us: f64) -> Experiment {
    Experiment::from_json(&format!(
        r#"{{"topology":{{"p":4,"a":8,"h":4,"links_per_pair":4,"arrangement":"absolute"}},
        "network":{{"timing":"booksim","flit_bytes":64,"packet_flits":1,"host_bw_gbps":64,"local_bw_gbps":64,
        "global_bw_gbps":64,"xbar_bw_gbps":160,"input_buffer_flits":256,"output_buffer_flits":1280,
        "host_latency_ns":1,"local_latency_ns":10,"global_latency_ns":15,"input_latency_ns":0,"output_latency_ns":0}},
        "routing":{{"algorithm":"{routing}"{extra}}},"traffic":{{"pattern":"{pattern}","load":{load}}},
        "run":{{"warmup_us":{warmup_us},"measure_us":{measure_us}}}}}"#
    ))
    .unwrap()
}

/// A result's bytes apart from its execution: summary, series and hops histogram.
pub fn result_bytes(r: &SimResult) -> String {
    format!(
        "{}|{}|{:?}",
        serde_json::to_string(&r.summary).unwrap(),
        serde_json::to_string(&r.series).unwrap(),
        r.hops_histogram
    )
}
