//! The feedback transport the learning routings rely on (qadaptive-reference.md §1.3), checked
//! with an instrumented routing: MIN paths, feedback on every router-to-router hop.
//! * hop_delay (arrival at the upstream input → arrival here) is at least the fixed per-hop time
//!   (crossbar transfer + serialisation + output + link + input latency) of the link it crossed;
//! * the feedback reaches the upstream router on the output port the packet left by, exactly the
//!   credit latency (output + link + input latency) after it was sent;
//! * the tag written in the header by `route` at this router is the one `on_depart` reads.

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytemuck::{Pod, Zeroable};
use common::hpdc;
use dflab_core::engine::Simulation;
use dflab_core::network::Packet;
use dflab_core::routing::minimal::Minimal;
use dflab_core::routing::{Ctx, Dest, Hooks, Hop, Routing, VcCounts};
use dflab_core::topology::{LinkClass, Topology};
use dflab_core::units::Time;

#[derive(Default)]
struct Log {
    /// Sequence number → (downstream router, its input port, send time, hop delay).
    sent: HashMap<u64, (u32, u16, Time, Time)>,
    next: u64,
    received: u64,
    errors: Vec<String>,
}

struct Probe {
    inner: Minimal,
    topo: Topology,
    log: Arc<Mutex<Log>>,
    /// ps: [local, global] fixed hop time and credit latency.
    min_hop: [Time; 2],
    credit: [Time; 2],
}

/// The probe's per-packet fields: as the learning routings keep them.
#[derive(Debug, Clone, Copy, Default, Pod, Zeroable)]
#[repr(C)]
struct ProbeHeader {
    prev_arrival: Time,
    /// The router that routed the packet last, + 0.5.
    tag: f64,
}

#[derive(Debug, Clone, Copy)]
struct ProbeMsg {
    seq: u64,
    hop_delay: Time,
}

fn class(t: &Topology, port: u16) -> usize {
    match t.class_of_port(port) {
        LinkClass::Local => 0,
        LinkClass::Global => 1,
        LinkClass::Host => panic!("host port"),
    }
}

impl Routing for Probe {
    type Header = ProbeHeader;
    type RouterState = ();
    type Msg = ProbeMsg;
    const HOOKS: Hooks = Hooks::ARRIVE.with(Hooks::DEPART).with(Hooks::MSG);

    fn vcs(&self) -> VcCounts {
        self.inner.vcs()
    }
    fn max_hops(&self) -> u32 {
        self.inner.max_hops()
    }
    fn router_state(&self, _topo: &Topology, _router: u32) {}

    fn route(&self, cx: &mut Ctx<'_, Self>, pkt: &mut Packet) -> Hop {
        // Tag the packet with this router so `on_depart` can check it reads back what was set.
        pkt.hdr_mut::<ProbeHeader>().tag = cx.view.router as f64 + 0.5;
        // MIN's hop, from the table (MIN reads no congestion on one link per group pair).
        Minimal::table_hop(cx.view.topo, cx.view.router, pkt).expect("one link per group pair")
    }

    fn on_arrive(&self, _cx: &mut Ctx<'_, Self>, pkt: &mut Packet) {
        pkt.hdr_mut::<ProbeHeader>().prev_arrival = pkt.arrival;
    }

    fn on_depart(&self, cx: &mut Ctx<'_, Self>, pkt: &Packet) {
        let h: &ProbeHeader = pkt.hdr();
        let view = &cx.view;
        let mut log = self.log.lock().unwrap();
        if h.tag != view.router as f64 + 0.5 {
            log.errors.push(format!("tag {} read at router {}", h.tag, view.router));
        }
        let hop_delay = pkt.arrival - h.prev_arrival;
        let need = self.min_hop[class(&self.topo, view.in_port)];
        if hop_delay < need {
            log.errors.push(format!("hop delay {hop_delay} ps < {need} ps at router {}", view.router));
        }
        let seq = log.next;
        log.next += 1;
        log.sent.insert(seq, (view.router, view.in_port, view.now, hop_delay));
        drop(log);
        cx.send(Dest::Upstream, ProbeMsg { seq, hop_delay });
    }

    fn on_msg(&self, cx: &mut Ctx<'_, Self>, port: u16, msg: ProbeMsg) {
        let (router, now) = (cx.view.router, cx.view.now);
        let mut log = self.log.lock().unwrap();
        log.received += 1;
        let Some((down, in_port, sent, hd)) = log.sent.remove(&msg.seq) else {
            log.errors.push("unknown feedback".into());
            return;
        };
        if self.topo.peer(router, port) != Some((down, in_port)) {
            log.errors.push(format!("feedback from {down}:{in_port} arrived at {router}:{port}"));
        }
        let lat = self.credit[class(&self.topo, port)];
        if now != sent + lat {
            log.errors.push(format!("feedback took {} ps, credit latency is {lat} ps", now - sent));
        }
        if msg.hop_delay != hd {
            log.errors.push("hop delay altered in transit".into());
        }
    }
}

#[test]
fn feedback_reaches_the_upstream_port_with_the_credit_latency() {
    for (pattern, load) in [("ur", 0.3), ("ur", 0.9), ("adv+1", 0.3)] {
        let e = hpdc("MIN", pattern, load, 2.0, 8.0); // the label; the probe routes
        let topo = Topology::new(&e.topology).unwrap();
        let n = &e.network;
        let ps = |ns: f64| (ns * 1000.0).round() as Time;
        let flit = n.flit_bytes as f64 * n.packet_flits as f64;
        let fixed = |lat: f64, bw: f64| {
            ps(flit / n.xbar_bw_gbps) + ps(flit / bw) + ps(n.output_latency_ns + lat + n.input_latency_ns)
        };
        let log = Arc::new(Mutex::new(Log::default()));
        let probe = Probe {
            inner: Minimal::new(&topo),
            topo: topo.clone(),
            log: log.clone(),
            min_hop: [fixed(n.local_latency_ns, n.local_bw_gbps), fixed(n.global_latency_ns, n.global_bw_gbps)],
            credit: [
                ps(n.output_latency_ns + n.local_latency_ns + n.input_latency_ns),
                ps(n.output_latency_ns + n.global_latency_ns + n.input_latency_ns),
            ],
        };
        let r = Simulation::new(&e, topo, probe).unwrap().run().unwrap();
        let log = log.lock().unwrap();
        assert!(
            log.errors.is_empty(),
            "{pattern} {load}: {} errors, first: {:?}",
            log.errors.len(),
            &log.errors[..log.errors.len().min(5)]
        );
        assert!(log.received > 10_000, "{pattern} {load}: only {} feedbacks", log.received);
        // Every router-to-router hop of a delivered packet produced one feedback (some are
        // still in flight at the end).
        assert!(log.sent.len() < 20_000, "{} feedbacks never arrived", log.sent.len());
        assert!(r.summary.packets_delivered > 0);
    }
}
