//! `network.timing = "sst"`: zero-load latency per path equals SST/Merlin's (the table of
//! `sst-port-timing.md` §1.3 for the lock-step phase, 1 ns), and the timer cases behave as
//! Merlin's `PortControl` does: a packet entering an output within a packet-time of a
//! departure leaves when the timer fires, a credit arms an idle port, multi-flit packets are
//! charged one flit-time per link. Expected times are worked out by hand in each test
//! (s = 32 ns per flit, tick 3.2 ns, host/local/global link 10/30/300 ns, input and output
//! stages 10 ns).

mod common;

use common::timed;
use dflab_core::config::PortTiming;
use dflab_core::engine;
use dflab_core::units::Time;
use dflab_core::Experiment;

const NS: Time = 1000;

fn sst() -> Experiment {
    let mut e = Experiment::default();
    e.network.timing = PortTiming::Sst;
    e.run.check = true;
    e
}

#[test]
fn zero_load_per_path_is_ssts_for_the_lock_step_phase() {
    // sst-port-timing.md §1.3: sends at 1 ns; nodes 0-3 on router 0, 4-7 on router 1 of
    // group 0; 32-35 on router 0 of group 1 (router 0's global link leads there under the
    // absolute arrangement); 40 on router 2 of group 1.
    let e = sst();
    let cases = [
        (1, 105_400), // same router: 52 + (1.4 + 32 + 10 + 10)
        (12, 188_600),
        (32, 460_600),
        (40, 543_800),
    ];
    for (dst, want) in cases {
        assert_eq!(timed(&e, &[(NS, 0, dst)]), vec![want], "0 -> {dst}");
    }
    // Local, global, local (router 1 of group 0 to router 2 of group 1 goes through router 0).
    assert_eq!(timed(&e, &[(NS, 5, 40)]), vec![627_000]);
}

#[test]
fn zero_load_from_time_zero_follows_the_tick_grid() {
    // trace() sends at 0: the first router sees the packet at 52 ns, its tick at 54.4 ns
    // (w = 2.4), the ejection leaves at 86.4 and lands 20 ns later.
    let (_, t) = engine::trace(&sst(), &[(0, 1)]).unwrap()[0];
    assert_eq!(t, 106_400);
    // Local: 86.4 + 50 = 136.4 at router 1, its tick 137.6, ejection 137.6 + 52.
    let (_, t) = engine::trace(&sst(), &[(0, 12)]).unwrap()[0];
    assert_eq!(t, 189_600);
}

#[test]
fn a_packet_within_a_packet_time_of_a_departure_leaves_at_the_timer() {
    // A: node 0 -> 1 at 0: enters router 0's port to node 1 at 54.4, leaves at 86.4, so the
    // timer runs to 118.4. B: node 2 -> 1 at 40: at the router at 92, enters at its tick
    // 92.8, inside A's packet-time: it leaves at 118.4 (not 92.8 + 32), delivered at 138.4.
    let lat = timed(&sst(), &[(0, 0, 1), (40 * NS, 2, 1)]);
    assert_eq!(lat, vec![106_400, 98_400]);
    // The link-busy timing has no timer: B (at the router at 92) finds the port free and
    // takes its zero-load time, 107.2 ns.
    assert_eq!(timed(&Experiment::default(), &[(0, 0, 1), (40 * NS, 2, 1)])[1], 107_200);
}

#[test]
fn a_credit_arms_an_idle_port() {
    // A: node 0 -> 12 at 0 leaves router 0's port to router 1 at 86.4 (timer to 118.4) and
    // is granted at router 1 at 137.6; its credit is back at 137.6 + 50 = 187.6, when the
    // port waits: it arms the timer to 219.6. B: node 2 -> 12 at 140: at router 0 at 192,
    // tick 195.2 (192 is a tick: strictly after), inside the armed timer, so it leaves at
    // 219.6, not 227.2; at router 1 at 269.6, tick 272, delivered at 272 + 52 = 324.
    let lat = timed(&sst(), &[(0, 0, 12), (140 * NS, 2, 12)]);
    assert_eq!(lat, vec![189_600, 184_000]);
}

#[test]
fn the_nic_credit_of_an_ejected_packet_arms_the_ejection_port() {
    // A: node 0 -> 1 at 0 leaves the ejection port at 86.4 (timer to 118.4); the NIC's credit
    // is back 20 + 1 + 20 ns later, at 127.4, and arms the port to 159.4. B: node 2 -> 1 at
    // 80: at the router at 132, tick 134.4, leaves at 159.4, delivered at 179.4.
    let lat = timed(&sst(), &[(0, 0, 1), (80 * NS, 2, 1)]);
    assert_eq!(lat, vec![106_400, 99_400]);
}

#[test]
fn multi_flit_packets_pay_one_flit_time_per_link() {
    // Four flits: each timer is armed one flit (32 ns) ahead and the packet is whole
    // downstream out + L + in after its send; the crossbar holds the ports 4 ticks. Same
    // router from 1 ns: 1 + 32 + 20 = 53, tick 54.4, + 32 + 20: 105.4, as for one flit.
    let mut e = sst();
    e.network.packet_flits = 4;
    e.network.input_buffer_flits = 80;
    e.network.output_buffer_flits = 80;
    assert_eq!(timed(&e, &[(NS, 0, 1)]), vec![105_400]);
    // Two packets from one node: the second leaves the NIC a packet-time (128 ns) after the
    // first, at 161 ns; at the router at 181, tick 182.4; the ejection port's timer (from the
    // first's send at 86.4) ran to 214.4: it enters a waiting port and leaves at 214.4.
    let lat = timed(&e, &[(NS, 0, 1), (NS, 0, 1)]);
    assert_eq!(lat, vec![105_400, 233_400]);
}
