//! Invariants (packets and credits conserved, buffers within capacity, hop bounds) hold across
//! routings, patterns, arrangements, parallel links, packet sizes and loads up to overload.
//! `run.check = true` makes the engine verify them every simulated microsecond and at the end;
//! any violation fails the run.

mod common;
use dflab_core::config::{Arrangement, Process};
use dflab_core::Experiment;

fn small(p: usize, a: usize, h: usize, l: usize, arr: Arrangement) -> Experiment {
    common::small(p, a, h, l, arr, 3.0, 6.0)
}

#[test]
fn invariants_hold_everywhere() {
    let shapes = [
        (2, 4, 2, 1, Arrangement::Absolute),
        (2, 4, 2, 1, Arrangement::Relative),
        (2, 4, 2, 1, Arrangement::Palmtree),
        (2, 4, 2, 1, Arrangement::Circulant),
        (4, 8, 4, 4, Arrangement::Absolute),
        (3, 5, 2, 2, Arrangement::Relative),
    ];
    let mut runs = 0;
    for (i, &(p, a, h, l, arr)) in shapes.iter().enumerate() {
        for alg in ["MIN", "VALg", "VALn"] {
            for (pat, load) in [("ur", 0.6), ("adv+1", 0.9), ("perm", 1.0)] {
                let mut e = small(p, a, h, l, arr);
                e.routing.algorithm = alg.into();
                e.traffic.pattern = pat.into();
                e.traffic.load = load;
                e.seed = i as u64;
                if i % 2 == 1 {
                    e.network.packet_flits = 3;
                    e.network.input_buffer_flits = 7;
                    e.network.output_buffer_flits = 5;
                    e.traffic.process = Process::Periodic;
                }
                let r = dflab_core::simulate(&e).unwrap_or_else(|err| panic!("{alg} {pat} {arr:?} l={l}: {err}"));
                let s = &r.summary;
                assert!(s.packets_delivered > 0);
                let bound = match alg {
                    "MIN" => 3,
                    "VALg" => 5,
                    _ => 6,
                };
                assert!(r.hops_histogram.len() <= bound + 1, "{alg}: {:?}", r.hops_histogram);
                assert!(s.accepted_load <= s.offered_load * 1.05 + 0.01);
                runs += 1;
            }
        }
    }
    assert_eq!(runs, 54);
}

/// The same with SST's port timing (timers, credit arms, the crossbar clock): every routing,
/// under load and overload, with single- and multi-flit packets and tiny buffers.
#[test]
fn invariants_hold_with_sst_timing() {
    let mut runs = 0;
    for (i, &(p, a, h, l, arr)) in
        [(2, 4, 2, 1, Arrangement::Absolute), (3, 5, 2, 2, Arrangement::Relative)].iter().enumerate()
    {
        for alg in ["MIN", "VALn", "UGALg", "UGALn", "PAR", "Q-adaptive"] {
            for (pat, load) in [("ur", 0.7), ("adv+1", 0.9)] {
                let mut e = small(p, a, h, l, arr);
                e.network.timing = dflab_core::config::PortTiming::Sst;
                e.routing.algorithm = alg.into();
                e.traffic.pattern = pat.into();
                e.traffic.load = load;
                e.traffic.process = Process::Lockstep;
                e.seed = i as u64;
                if i == 1 {
                    e.network.packet_flits = 3;
                    e.network.input_buffer_flits = 7;
                    e.network.output_buffer_flits = 5;
                    e.traffic.process = Process::Bernoulli;
                }
                let r = dflab_core::simulate(&e).unwrap_or_else(|err| panic!("sst {alg} {pat} {arr:?}: {err}"));
                let s = &r.summary;
                assert!(s.packets_delivered > 0, "sst {alg} {pat}");
                assert!(s.accepted_load <= s.offered_load * 1.05 + 0.01, "sst {alg} {pat}");
                runs += 1;
            }
        }
    }
    assert_eq!(runs, 24);
}

/// Input buffers of another size per link class (host 6, local 5, global 12 flits; packets of
/// 3 and 2 flits): run.check conserves each link's credits against its own buffer, in both
/// timings and under every routing family, past saturation.
#[test]
fn invariants_hold_with_per_class_buffers() {
    for timing in [dflab_core::config::PortTiming::LinkBusy, dflab_core::config::PortTiming::Sst] {
        for alg in ["MIN", "VALn", "UGAL-L", "PAR", "Q-adaptive"] {
            for (pat, load) in [("ur", 0.8), ("adv+1", 0.9)] {
                let mut e = small(2, 4, 2, 1, Arrangement::Absolute);
                e.network.timing = timing;
                e.network.packet_flits = if timing == dflab_core::config::PortTiming::Sst { 2 } else { 3 };
                e.network.input_buffer_flits = 99; // overridden for every class
                (e.network.host_buffer_flits, e.network.local_buffer_flits, e.network.global_buffer_flits) =
                    (Some(6), Some(5), Some(12));
                e.network.output_buffer_flits = 6;
                e.routing.algorithm = alg.into();
                e.traffic.pattern = pat.into();
                e.traffic.load = load;
                let r = dflab_core::simulate(&e).unwrap_or_else(|err| panic!("{timing:?} {alg} {pat}: {err}"));
                assert!(r.summary.packets_delivered > 0, "{timing:?} {alg} {pat}");
            }
        }
    }
}

/// FOGSim's output stage: one output queue per port shared by its VCs (6 flits: two 3-flit
/// packets, whichever VCs), credits net of the queue's packets, transit served first; under
/// routings that re-route refused injection heads (VAL, PB, ACOR with recomputation) and those
/// that do not, up to overload. run.check also verifies that a request marked as facing a full
/// buffer faces a full port queue.
#[test]
fn invariants_hold_with_shared_output_queues_and_the_transit_priority() {
    for alg in ["MIN", "VALn", "UGAL-L", "VAL", "PB", "ACOR"] {
        for (pat, load) in [("ur", 0.8), ("adv+1", 0.9), ("perm", 1.0)] {
            let mut e = small(2, 4, 2, 1, Arrangement::Palmtree);
            e.network.output_queue = dflab_core::config::OutputQueue::Shared;
            e.network.transit_priority = true;
            (e.network.packet_flits, e.network.input_buffer_flits, e.network.output_buffer_flits) = (3, 7, 6);
            e.routing.algorithm = alg.into();
            if matches!(alg, "VAL" | "PB") {
                e.routing.set("recompute", true);
            }
            e.traffic.pattern = pat.into();
            e.traffic.load = load;
            let r = dflab_core::simulate(&e).unwrap_or_else(|err| panic!("shared {alg} {pat}: {err}"));
            assert!(r.summary.packets_delivered > 0, "shared {alg} {pat}");
            assert!(r.summary.accepted_load <= r.summary.offered_load * 1.05 + 0.01, "shared {alg} {pat}");
        }
    }
}

#[test]
fn watchdog_reports_where_a_one_vc_valiant_network_deadlocks() {
    // VALn needs 4 VCs; on 1 VC with tiny buffers the channel dependency cycle closes.
    let mut e = small(2, 4, 2, 1, Arrangement::Absolute);
    e.routing.algorithm = "VALn".into();
    e.routing.vcs = Some(1);
    e.network.input_buffer_flits = 4;
    e.network.output_buffer_flits = 4;
    e.traffic.load = 0.9;
    e.run.measure_us = 200.0;
    e.run.watchdog_us = 5.0;
    let err = dflab_core::simulate(&e).unwrap_err().to_string();
    assert!(err.starts_with("deadlock:"), "{err}");
    assert!(err.contains("first stuck: router"), "{err}");
    assert!(err.contains("input port") && err.contains("waits for output port"), "{err}");
    assert!(err.contains("VC 0"), "{err}");
    // The same load with the 4 VCs VALn needs runs to the end.
    e.routing.vcs = None;
    e.run.measure_us = 20.0;
    assert!(dflab_core::simulate(&e).is_ok());
}

/// Sends every packet to the last global port of its router (ejecting at the destination).
struct LastGlobalPort {
    radix: u16,
    p: u32,
}

impl dflab_core::routing::Routing for LastGlobalPort {
    type Header = ();
    type RouterState = ();
    type Msg = dflab_core::routing::NoMsg;

    fn vcs(&self) -> dflab_core::routing::VcCounts {
        dflab_core::routing::VcCounts::uniform(2)
    }
    fn max_hops(&self) -> u32 {
        3
    }
    fn router_state(&self, _topo: &dflab_core::topology::Topology, _router: u32) {}
    fn route(
        &self,
        cx: &mut dflab_core::routing::Ctx<'_, Self>,
        pkt: &mut dflab_core::network::Packet,
    ) -> dflab_core::routing::Hop {
        let port = if cx.view.router == pkt.dst_router { (pkt.dst % self.p) as u16 } else { self.radix - 1 };
        dflab_core::routing::Hop { port, vc: 0 }
    }
}

#[test]
fn a_routing_that_picks_an_unconnected_port_is_an_error_not_a_crash() {
    // dfly(2,4,2) with g = 5: each group needs 4 of its 8 global ports, so routers 2 and 3 of
    // every group have no link on their last global port.
    let mut e = small(2, 4, 2, 1, Arrangement::Absolute);
    e.topology.g = Some(5);
    e.traffic.load = 0.3;
    let topo = dflab_core::topology::Topology::new(&e.topology).unwrap();
    let routing = LastGlobalPort { radix: topo.radix as u16, p: topo.p as u32 };
    let err = dflab_core::engine::Simulation::new(&e, topo, routing).unwrap().run().unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("routed onto unconnected port 6"), "{msg}");
}
