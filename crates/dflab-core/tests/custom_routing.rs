//! Routings written outside the crate, against the public API only (`docs/dev/routing.md`): the
//! engine runs them with no edit of its own, and every hook does what its contract says.
//! * `TableMin` is MIN's rule rebuilt from the public path helpers: it gives the built-in MIN's
//!   results byte for byte (the fast paths MIN declares change nothing but speed);
//! * `Beacon` exercises the router timer, group messages, delayed-visibility signals, probes and
//!   the delivery hook, each checked against its definition;
//! * `Detour` re-routes the head of an injection queue to a Valiant path when the crossbar
//!   refuses it, and so carries more adversarial traffic than MIN can.

mod common;

use std::sync::{Arc, Mutex};

use bytemuck::{Pod, Zeroable};
use common::small;
use dflab_core::config::Arrangement;
use dflab_core::engine::Simulation;
use dflab_core::network::Packet;
use dflab_core::routing::paths::{in_destination_group, port_to_group, random_intermediate_router};
use dflab_core::routing::{Ctx, Dest, Hooks, Hop, Routing, VcCounts, NO_PORT};
use dflab_core::stats::{ProbeKind, ProbeSpec};
use dflab_core::topology::{LinkClass, Topology};
use dflab_core::units::Time;
use dflab_core::{Experiment, SimResult};

/// MIN's hop from the congestion view: the local hop or ejection in the destination group (VC 1),
/// else the first port toward the destination group (VC 0).
fn min_hop<R: Routing>(cx: &mut Ctx<'_, R>, pkt: &Packet) -> Hop {
    let dst_group = cx.view.topo.group_of(pkt.dst_router);
    if cx.view.group == dst_group {
        in_destination_group(&cx.view, pkt, 1)
    } else {
        Hop { port: port_to_group(&cx.view, dst_group, cx.rng), vc: 0 }
    }
}

fn run<R: Routing>(e: &Experiment, routing: R) -> SimResult {
    let topo = Topology::new(&e.topology).unwrap();
    Simulation::new(e, topo, routing).unwrap().run().unwrap_or_else(|err| panic!("{err}"))
}

// ---------------------------------------------------------------------------------------------
// TableMin: the smallest routing there is.

struct TableMin;

impl Routing for TableMin {
    type Header = ();
    type RouterState = ();
    type Msg = dflab_core::routing::NoMsg;

    fn vcs(&self) -> VcCounts {
        VcCounts::uniform(2)
    }
    fn max_hops(&self) -> u32 {
        3
    }
    fn router_state(&self, _topo: &Topology, _router: u32) {}
    fn route(&self, cx: &mut Ctx<'_, Self>, pkt: &mut Packet) -> Hop {
        min_hop(cx, pkt)
    }
}

#[test]
fn a_routing_outside_the_crate_matches_the_builtin_min_byte_for_byte() {
    for (pattern, load) in [("ur", 0.4), ("adv+1", 0.3)] {
        let mut e = small(2, 4, 2, 1, Arrangement::Absolute, 2.0, 6.0);
        e.routing.algorithm = "MIN".into();
        e.traffic.pattern = pattern.into();
        e.traffic.load = load;
        let builtin = dflab_core::simulate(&e).unwrap();
        let ours = run(&e, TableMin);
        assert!(ours.summary.packets_delivered > 1000, "{pattern}");
        assert_eq!(serde_json::to_string(&ours.summary).unwrap(), serde_json::to_string(&builtin.summary).unwrap());
        assert_eq!(ours.hops_histogram, builtin.hops_histogram, "{pattern}");
    }
}

// ---------------------------------------------------------------------------------------------
// Beacon: timers, group messages, signals, probes, delivery.

/// ps between two beacons of a router.
const PERIOD: Time = 50_000;

#[derive(Default)]
struct BeaconLog {
    errors: Vec<String>,
    /// Delays of the group messages received (sent → received), all equal on one link class.
    msg_delays: Vec<Time>,
    fires: u64,
    received: u64,
}

struct Beacon {
    log: Arc<Mutex<BeaconLog>>,
}

#[derive(Default)]
struct BeaconState {
    armed: bool,
    fires: u64,
}

#[derive(Debug, Clone, Copy)]
struct BeaconMsg {
    from: u32,
    sent: Time,
    /// The sender's published signal when it sent the message.
    fires: u64,
}

impl Beacon {
    fn err(&self, e: String) {
        self.log.lock().unwrap().errors.push(e);
    }
}

impl Routing for Beacon {
    type Header = ();
    type RouterState = BeaconState;
    type Msg = BeaconMsg;
    const HOOKS: Hooks = Hooks::TIMER.with(Hooks::MSG).with(Hooks::DELIVER);

    fn vcs(&self) -> VcCounts {
        VcCounts::uniform(2)
    }
    fn max_hops(&self) -> u32 {
        3
    }
    fn router_state(&self, _topo: &Topology, _router: u32) -> BeaconState {
        BeaconState::default()
    }
    fn probes(&self) -> Vec<ProbeSpec> {
        vec![
            ProbeSpec::new("beacons", ProbeKind::PerRouter, "beacons a router sent"),
            ProbeSpec::new("seen_delivered", ProbeKind::Total, "packets the delivery hook saw"),
        ]
    }

    fn route(&self, cx: &mut Ctx<'_, Self>, pkt: &mut Packet) -> Hop {
        if !cx.state.armed {
            // The first packet a router routes arms its timer on the period's grid.
            cx.state.armed = true;
            cx.wake_at((cx.view.now / PERIOD + 1) * PERIOD);
        }
        min_hop(cx, pkt)
    }

    fn on_timer(&self, cx: &mut Ctx<'_, Self>) {
        if !cx.view.now.is_multiple_of(PERIOD) {
            self.err(format!("timer at {} ps, off the {PERIOD} ps grid", cx.view.now));
        }
        cx.state.fires += 1;
        cx.publish(cx.state.fires);
        cx.send(Dest::Group, BeaconMsg { from: cx.view.router, sent: cx.view.now, fires: cx.state.fires });
        cx.count(0, 1);
        self.log.lock().unwrap().fires += 1;
        cx.wake_at(cx.view.now + PERIOD);
    }

    fn on_msg(&self, cx: &mut Ctx<'_, Self>, port: u16, msg: BeaconMsg) {
        let topo = cx.view.topo;
        let delay = cx.view.now - msg.sent;
        if port == NO_PORT || topo.class_of_port(port) != LinkClass::Local {
            self.err(format!("group message on port {port}"));
        } else if topo.peer(cx.view.router, port).map(|(r, _)| r) != Some(msg.from) {
            self.err(format!("message from {} on the port of another router", msg.from));
        }
        if topo.group_of(msg.from) != cx.view.group || msg.from == cx.view.router {
            self.err(format!("router {} heard {}: not a group peer", cx.view.router, msg.from));
        }
        // The sender's signal, seen with the message's own delay, is its value at the send.
        let seen = cx.signal(msg.from, delay);
        if seen != msg.fires {
            self.err(format!("signal of {} seen {delay} ps late is {seen}, sent with {}", msg.from, msg.fires));
        }
        // Seen now, it is at least that (the sender may have fired again since).
        if cx.signal(msg.from, 0) < msg.fires {
            self.err(format!("signal of {} went back", msg.from));
        }
        let mut log = self.log.lock().unwrap();
        log.received += 1;
        log.msg_delays.push(delay);
    }

    fn on_deliver(&self, cx: &mut Ctx<'_, Self>, pkt: &Packet) {
        if pkt.dst_router != cx.view.router {
            self.err(format!("delivery hook at router {} for router {}", cx.view.router, pkt.dst_router));
        }
        cx.count(1, 1);
    }
}

#[test]
fn timers_group_messages_signals_probes_and_deliveries_keep_their_contracts() {
    let mut e = small(2, 4, 2, 1, Arrangement::Absolute, 1.0, 4.0);
    e.traffic.load = 0.3;
    let log = Arc::new(Mutex::new(BeaconLog::default()));
    let r = run(&e, Beacon { log: log.clone() });
    let log = log.lock().unwrap();
    assert!(log.errors.is_empty(), "{} errors, first: {:?}", log.errors.len(), &log.errors[..log.errors.len().min(5)]);

    // Every router fires on the grid from its first packet to the end (5 us / 50 ns = 100).
    let routers = 4 * 9;
    assert!(log.fires > routers * 95 && log.fires <= routers * 100, "{} timer fires", log.fires);
    // Each beacon reaches the a - 1 = 3 other routers of the group, after one local credit
    // latency (output + link + input), the same for every message.
    let n = &e.network;
    let local = ((n.output_latency_ns + n.local_latency_ns + n.input_latency_ns) * 1000.0).round() as Time;
    assert!(log.msg_delays.iter().all(|&d| d == local), "message delays {:?}", &log.msg_delays[..5]);
    let in_flight = 3 * routers; // the last beacons, sent within one latency of the end
    assert!(log.received <= 3 * log.fires && log.received + in_flight >= 3 * log.fires);

    // Probes count the measurement window only: 4 of the 5 us, 80 beacons per router.
    let beacons = &r.probes.per_router["beacons"];
    assert_eq!(beacons.len(), routers as usize);
    assert!(beacons.iter().all(|&b| (79..=81).contains(&b)), "{beacons:?}");
    // The delivery hook runs as a packet starts on its ejection link, the statistics count it
    // when it reaches the node: the two windows differ by the few packets ejecting across the
    // window's edges.
    let seen = r.probes.totals["seen_delivered"];
    assert!(seen.abs_diff(r.summary.packets_delivered) <= 10, "{seen} vs {}", r.summary.packets_delivered);
}

// ---------------------------------------------------------------------------------------------
// Detour: re-routing at the head of an injection queue.

const NONE: u32 = u32::MAX;

/// The detour's per-packet field: the intermediate group, once the packet was diverted.
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
#[repr(C)]
struct DetourHeader {
    mid_group: u32,
    reached: u32,
}

impl Default for DetourHeader {
    fn default() -> Self {
        DetourHeader { mid_group: NONE, reached: 0 }
    }
}

#[derive(Default)]
struct DetourLog {
    errors: Vec<String>,
}

struct Detour {
    log: Arc<Mutex<DetourLog>>,
}

impl Routing for Detour {
    type Header = DetourHeader;
    type RouterState = ();
    type Msg = dflab_core::routing::NoMsg;
    const HOOKS: Hooks = Hooks::REROUTE;

    /// VC 0 to the intermediate group, 1 from there, 2 in the destination group of a detour.
    fn vcs(&self) -> VcCounts {
        VcCounts::uniform(3)
    }
    fn max_hops(&self) -> u32 {
        5
    }
    fn router_state(&self, _topo: &Topology, _router: u32) {}
    fn probes(&self) -> Vec<ProbeSpec> {
        vec![
            ProbeSpec::new("refused", ProbeKind::Total, "refused injection heads asked again"),
            ProbeSpec::new("diverted", ProbeKind::Total, "packets sent on a detour"),
        ]
    }

    fn route(&self, cx: &mut Ctx<'_, Self>, pkt: &mut Packet) -> Hop {
        let h = *pkt.hdr::<DetourHeader>();
        let dst_group = cx.view.topo.group_of(pkt.dst_router);
        if h.mid_group == NONE {
            return min_hop(cx, pkt);
        }
        if cx.view.group == dst_group {
            return in_destination_group(&cx.view, pkt, 2);
        }
        if cx.view.group == h.mid_group || h.reached != 0 {
            pkt.hdr_mut::<DetourHeader>().reached = 1;
            return Hop { port: port_to_group(&cx.view, dst_group, cx.rng), vc: 1 };
        }
        Hop { port: port_to_group(&cx.view, h.mid_group, cx.rng), vc: 0 }
    }

    fn reroute_at_injection(&self, cx: &mut Ctx<'_, Self>, pkt: &mut Packet, hop: Hop) -> Option<Hop> {
        if !cx.view.is_source_router() || pkt.hops != 0 {
            self.log.lock().unwrap().errors.push(format!("re-route asked in transit at {}", cx.view.router));
        }
        cx.count(0, 1);
        let topo = cx.view.topo;
        let (src_group, dst_group) = (topo.group_of(topo.router_of_node(pkt.src)), topo.group_of(pkt.dst_router));
        if pkt.hdr::<DetourHeader>().mid_group != NONE || src_group == dst_group || hop.vc != 0 {
            return None;
        }
        let mid = random_intermediate_router(&cx.view, src_group, dst_group, cx.rng)?;
        let mid_group = topo.group_of(mid);
        pkt.hdr_mut::<DetourHeader>().mid_group = mid_group;
        pkt.nonminimal = true;
        cx.count(1, 1);
        Some(Hop { port: port_to_group(&cx.view, mid_group, cx.rng), vc: 0 })
    }
}

#[test]
fn rerouting_refused_injection_heads_beats_min_on_adversarial_traffic() {
    let mut e = small(2, 4, 2, 1, Arrangement::Absolute, 3.0, 6.0);
    e.traffic.pattern = "adv+1".into();
    e.traffic.load = 0.4;
    e.routing.algorithm = "MIN".into();
    let min = dflab_core::simulate(&e).unwrap();
    let log = Arc::new(Mutex::new(DetourLog::default()));
    let r = run(&e, Detour { log: log.clone() });
    let log = log.lock().unwrap();
    assert!(log.errors.is_empty(), "{:?}", &log.errors[..log.errors.len().min(5)]);
    // MIN is bound by one global link per group pair: 1/(a p) = 0.125 of the injection rate.
    assert!(min.summary.accepted_load < 0.13, "MIN accepted {}", min.summary.accepted_load);
    let (refused, diverted) = (r.probes.totals["refused"], r.probes.totals["diverted"]);
    assert!(diverted > 1000 && refused >= diverted, "refused {refused}, diverted {diverted}");
    // The new hops are taken: detours leave the saturated link and carry much more.
    assert!(r.summary.minimal_fraction < 0.9, "minimal fraction {}", r.summary.minimal_fraction);
    assert!(
        r.summary.accepted_load > 1.8 * min.summary.accepted_load,
        "detour {} vs MIN {}",
        r.summary.accepted_load,
        min.summary.accepted_load
    );
    assert!(r.hops_histogram.iter().skip(6).all(|&n| n == 0), "{:?}", r.hops_histogram);

    // Without refusals (light uniform traffic) nothing is diverted.
    e.traffic.pattern = "ur".into();
    e.traffic.load = 0.02;
    let quiet = run(&e, Detour { log: Arc::default() });
    assert!(quiet.probes.totals["diverted"] * 100 <= quiet.summary.packets_delivered, "{:?}", quiet.probes.totals);
}
