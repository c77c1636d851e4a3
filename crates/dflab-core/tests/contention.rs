//! Two packets competing for one crossbar output: the second waits for the first and follows it
//! one serialisation time later, wherever the first was granted (straight through an idle output
//! or into its buffer).

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
