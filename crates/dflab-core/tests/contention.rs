//! Two packets competing for one crossbar output: the second waits for the first and follows it
//! one serialisation time later, wherever the first was granted (straight through an idle output
//! or into its buffer); with the transit priority, router inputs before node inputs.

mod common;

use common::timed;
use dflab_core::engine::trace;
use dflab_core::units::{transfer_ps, Time};
use dflab_core::Experiment;

fn ser(e: &Experiment, bw: f64) -> Time {
    e.network.packet_flits as u64 * transfer_ps(e.network.flit_bytes as u64, bw)
}

#[test]
fn a_request_refused_by_a_busy_crossbar_output_is_granted_when_it_frees() {
    let mut e = Experiment::default();
    e.run.watchdog_us = 5.0;
    let p = e.topology.p as u32;
    // Nodes 0 and 1 sit on router 0; node p is on router 1 of the same group: both packets take
    // the same local port of router 0 and reach it at the same time.
    let alone = trace(&e, &[(0, p)]).unwrap()[0].1;
    let both = trace(&e, &[(0, p), (1, p + 1)]).unwrap();
    assert_eq!(both[0].1, alone, "the first packet is not delayed");
    // The second leaves router 0 when the local link is free again, one local serialisation
    // later; from there on its path (other ejection port) is free.
    assert_eq!(both[1].1, alone + ser(&e, e.network.local_bw_gbps), "second packet: {both:?}");
}

#[test]
fn three_packets_for_one_output_leave_one_serialisation_apart() {
    // The second is granted into the output buffer (the link is busy), the third waits for the
    // crossbar after it: each grant path must wake the next request.
    let e = Experiment::default();
    let p = e.topology.p as u32;
    let alone = trace(&e, &[(0, p)]).unwrap()[0].1;
    let all = trace(&e, &[(0, p), (1, p + 1), (2, p + 2)]).unwrap();
    let s = ser(&e, e.network.local_bw_gbps);
    let times: Vec<Time> = all.iter().map(|d| d.1).collect();
    assert_eq!(times, vec![alone, alone + s, alone + 2 * s]);
}

/// `network.transit_priority` (FOGSim's `PrioLRS`): two requests for one ejection port, one from
/// a router input (a packet from router 0) and one from a node input (a packet from a node of
/// the same router), wait together behind a third packet's crossbar transfer. Least recently
/// granted alone (neither input was ever granted) ties and takes the lower input, the node's;
/// with the priority the transit packet goes first. Each leaves one ejection serialisation
/// after the other.
#[test]
fn the_transit_priority_serves_a_router_input_before_a_node_input() {
    let order = |priority: bool| {
        let mut e = Experiment::default();
        e.network.transit_priority = priority;
        let p = e.topology.p as u32;
        // All three eject at node p (router 1): Z from node p + 2, Y from node p + 1 (node
        // inputs of router 1), X from node 0 (router 0, through a local link).
        let (d, x, y, z) = (p, 0, p + 1, p + 2);
        let alone = |src: u32| timed(&e, &[(0, src, d)])[0];
        let (lx, ly, lz) = (alone(x), alone(y), alone(z));
        // The same tail from the crossbar to the node for all three, so a packet's request
        // reaches router 1's crossbar at (send + its latency alone) minus that tail: X and Y
        // request half a crossbar transfer after Z's grant, while it holds the output.
        let xfer = transfer_ps(e.network.packet_flits as u64 * e.network.flit_bytes as u64, e.network.xbar_bw_gbps);
        let base = lx.max(ly);
        let at = base + lz + xfer / 2;
        let sends = [(base, z, d), (at - ly, y, d), (at - lx, x, d)];
        let lat = timed(&e, &sends);
        let done: Vec<Time> = sends.iter().zip(&lat).map(|(s, l)| s.0 + l).collect();
        assert_eq!(done[0], base + lz, "Z alone");
        let s = ser(&e, e.network.host_bw_gbps);
        let (first, second) = if done[1] < done[2] { (done[1], done[2]) } else { (done[2], done[1]) };
        assert_eq!(second - first, s, "one ejection serialisation apart: {done:?}");
        if done[2] < done[1] {
            "transit"
        } else {
            "node"
        }
    };
    assert_eq!(order(false), "node", "least recently granted, ties by input");
    assert_eq!(order(true), "transit");
}
