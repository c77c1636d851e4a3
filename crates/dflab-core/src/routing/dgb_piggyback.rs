//! DGB's piggybacked feedback (`routing.feedback = "piggyback"`): the transport of the DGB
//! fork's `DGB_PIGGYBACK` mode (hanskasan/booksim2, branch `sst-macro` 8d00456e:
//! `learning/dgb.cpp` `RegisterDiff*`, `GenerateLearnset`, `ReceiveLearnset`,
//! `RegisterGlobalQ*`; `routers/iq_router.cpp` where a flit is sent and received;
//! `networks/dragonfly.cpp` where the global queues are attached), in place of the instant
//! hand-over of its default `DGB_IDEAL` (`feedback = "ideal"`, `dgb.rs`).
//!
//! * **Learnsets.** A destination router keeps, per source router, the newest minimal residual
//!   and the newest non-minimal one per (the source's first port, the global port by which the
//!   packet left the source group). When it sends a packet of its own whose destination router
//!   is one of those sources, it packs what it holds for that router into a *learnset* (the
//!   minimal residual; per first port the mean over the global ports) and forgets it; a
//!   non-minimal packet also carries a learnset for its intermediate router. The learnset is
//!   received when its packet reaches that router, and only if no newer learnset of the same
//!   router has been received there: its residuals replace the receiver's feedback. Feedback
//!   from D to S thus travels only on D's own traffic to (or through) S: under a shift
//!   pattern, where no packet goes back, a source hears nothing.
//! * **Global queues.** Every packet routed onto a local port carries the occupancies of the
//!   sending router's global ports, raw and net; the receiver keeps the newest per global port
//!   of its group, and its latency samples, emergency estimates and exploration read those
//!   instead of the gateway's own (DGB reads them instantly, as an oracle, in `ideal`). Before
//!   one has arrived the estimates use the first port's net occupancy and the exploration the
//!   first port's vacancy alone (the fork's −1 entries).
//!
//! How dflab carries them: the learnset stays at the router that generated it, and the packet
//! carries a flag; when the packet reaches the receiver (`on_arrive`), the receiver fetches it
//! with a message and the generator answers at once (both instant: DGB is an oracle and runs
//! in one partition). A learnset older than one already fetched is dropped unsent, as the
//! receiver would refuse it. Two deviations, not options:
//! * a learnset is generated when the source router decides the packet's route (the fork: when
//!   the packet leaves on its first link, after its crossbar and output-queue waits);
//! * the global queues travel as messages over the local link when the packet is routed, so
//!   they arrive one link latency later (the fork: with the packet, after its output-queue
//!   wait).

use std::collections::{HashMap, VecDeque};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::units::Time;

/// How DGB's residuals and the gateways' global queues reach the source routers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Feedback {
    /// At once, read directly (the fork's default `DGB_IDEAL`).
    #[default]
    Ideal,
    /// Carried by packets (the fork's `DGB_PIGGYBACK`).
    Piggyback,
}

/// The packet carries a learnset for its destination router.
pub const CARRIES_DEST: u8 = 1;
/// The packet carries a learnset for its intermediate router.
pub const CARRIES_INTERMEDIATE: u8 = 2;

/// What a destination router has measured of one source router's packets since its last
/// learnset for that router.
#[derive(Debug, Default)]
struct Measured {
    min: Option<f32>,
    /// (the source's first port, the global port index at the source group's exit, residual).
    nm: Vec<(u16, u8, f32)>,
}

/// A generated learnset, waiting for its packet to reach the receiver.
#[derive(Debug, Clone, PartialEq)]
pub struct Learnset {
    /// When it was generated (the carrier's decision).
    pub gen: Time,
    pub min: Option<f32>,
    /// (first port, mean residual over the global ports), by port.
    pub nm: Vec<(u16, f32)>,
}

/// One router's piggyback state.
#[derive(Debug)]
pub struct Piggyback {
    measured: HashMap<u32, Measured>,
    outgoing: HashMap<u32, VecDeque<Learnset>>,
    /// The generation time of the newest learnset received from each router.
    latest: HashMap<u32, Time>,
    /// The newest (raw, net) occupancy heard of each global port of the group, by
    /// `index_in_group · h + port`.
    global_q: Vec<Option<(u32, u32)>>,
}

impl Piggyback {
    /// The state of a router whose group has `global_ports` global ports.
    pub fn new(global_ports: usize) -> Piggyback {
        Piggyback {
            measured: HashMap::new(),
            outgoing: HashMap::new(),
            latest: HashMap::new(),
            global_q: vec![None; global_ports],
        }
    }

    /// A residual `d` measured here for a packet of router `source`: minimal (`nm` None) or
    /// non-minimal that left `source` by first port `nm.0` and its group by global port index
    /// `nm.1` (`RegisterDiffMin` / `RegisterDiffNon`: the newest replaces).
    pub fn record(&mut self, source: u32, nm: Option<(u16, u8)>, d: f32) {
        let m = self.measured.entry(source).or_default();
        match nm {
            None => m.min = Some(d),
            Some((port, exit)) => match m.nm.iter_mut().find(|e| (e.0, e.1) == (port, exit)) {
                Some(e) => e.2 = d,
                None => m.nm.push((port, exit, d)),
            },
        }
    }

    /// Pack what was measured of `receiver`'s packets into a learnset generated at `now`, to
    /// be fetched by `receiver`, and forget it (`GenerateLearnset`); false if there was none.
    pub fn generate(&mut self, receiver: u32, now: Time) -> bool {
        let Some(m) = self.measured.remove(&receiver) else { return false };
        let mut ports: Vec<u16> = m.nm.iter().map(|e| e.0).collect();
        ports.sort_unstable();
        ports.dedup();
        let nm = ports
            .into_iter()
            .map(|p| {
                let ds: Vec<f32> = m.nm.iter().filter(|e| e.0 == p).map(|e| e.2).collect();
                (p, ds.iter().sum::<f32>() / ds.len() as f32)
            })
            .collect();
        self.outgoing.entry(receiver).or_default().push_back(Learnset { gen: now, min: m.min, nm });
        true
    }

    /// The learnset generated at `gen` for `receiver`, whose packet has just reached it, with
    /// every older one for it dropped; None if a newer one was fetched before (then the
    /// receiver refuses it anyway).
    pub fn fetch(&mut self, receiver: u32, gen: Time) -> Option<Learnset> {
        let queue = self.outgoing.get_mut(&receiver)?;
        let at = queue.iter().position(|l| l.gen == gen)?;
        queue.drain(..at);
        let l = queue.pop_front();
        if queue.is_empty() {
            self.outgoing.remove(&receiver);
        }
        l
    }

    /// Whether a learnset of `generator` generated at `gen` is taken (`ReceiveLearnset`: not
    /// older than the newest taken from it); taking it makes it the newest.
    pub fn accept(&mut self, generator: u32, gen: Time) -> bool {
        let latest = self.latest.entry(generator).or_insert(0);
        if gen < *latest {
            return false;
        }
        *latest = gen;
        true
    }

    /// Global port `index` of the group held `raw` (net `net`) flits when a packet left for
    /// this router.
    pub fn set_global_q(&mut self, index: usize, raw: u32, net: u32) {
        if let Some(slot) = self.global_q.get_mut(index) {
            *slot = Some((raw, net));
        }
    }

    /// The newest (raw, net) occupancy heard of global port `index` of the group.
    pub fn global_q(&self, index: usize) -> Option<(u32, u32)> {
        self.global_q.get(index).copied().flatten()
    }

    /// Learnsets generated here and not yet fetched (their packets are in flight).
    pub fn pending(&self) -> usize {
        self.outgoing.values().map(VecDeque::len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Experiment, Intermediate};
    use crate::routing::dgb::{Dgb, DgbHeader, DgbMsg, DgbParams, Inflight};
    use crate::routing::harness::{Harness, Net};
    use crate::routing::{Dest, NO_PORT};

    /// dfly(4,8,4,33) with the ICS'24 BookSim numbers (1 cycle = 1 ns; links 10 and 15
    /// cycles), DGB with piggybacked feedback (intermediate routers outside the source and
    /// destination groups).
    fn harness() -> Harness<Dgb<false>> {
        let mut exp = Experiment::default();
        let n = &mut exp.network;
        (n.flit_bytes, n.local_bw_gbps, n.global_bw_gbps, n.host_bw_gbps) = (64, 64.0, 64.0, 64.0);
        (n.local_latency_ns, n.global_latency_ns, n.input_buffer_flits) = (10.0, 15.0, 256);
        let net = Net::new(4, 8, 4, 1);
        // The wire's flits left out exactly (the tests set them on the wire).
        let (feedback, intermediate) = (Feedback::Piggyback, Intermediate::Outside);
        let p = DgbParams { feedback, intermediate, inflight: Inflight::Exact, ..DgbParams::default() };
        let alg = Dgb::<false>::build(&net.topo, &exp, p, None).unwrap();
        Harness::new(net, alg, 1)
    }

    /// A node on router 6 of group 5.
    const FAR: u32 = 5 * 32 + 6;

    /// The residual a destination measures stays there until the destination sends a packet
    /// of its own to the source (or through it): that packet's arrival brings it to the source,
    /// whose next sample then includes it (`ideal` would have handed it over at once).
    #[test]
    fn a_residual_reaches_its_source_only_on_the_destinations_own_packet_to_it() {
        let mut h = harness();
        let topo = h.net.topo.clone();
        let dest = topo.router_of_node(FAR);
        let mut pkt = h.packet(0, FAR);
        h.walk(&mut pkt);
        assert_eq!((pkt.nonminimal, pkt.hops, pkt.global_hops), (false, 3, 1));
        // Delivered 100 cycles after the decision: 100 − (10 + 15 + 10) − 3 − 0 = 62.
        h.net.now = 100_000;
        h.sent();
        assert!(h.deliver(&pkt).is_empty(), "kept for a learnset");
        assert_eq!(h.state(0).table.feedback_min(dest), None);
        // A packet of the destination router to router 0 carries it.
        h.net.now = 150_000;
        let mut back = h.packet(FAR, 1);
        h.walk(&mut back);
        assert_eq!(back.hdr::<DgbHeader>().carries, CARRIES_DEST);
        assert_eq!(h.state(dest).piggyback.as_ref().unwrap().pending(), 1);
        // Its arrival at router 0 (the last `arrive` of the walk) fetched it.
        let fetch = h.sent().into_iter().filter(|m| matches!(m.1, DgbMsg::Fetch { .. })).collect::<Vec<_>>();
        assert_eq!(fetch, vec![(Dest::Router { router: dest, delay: 0 }, DgbMsg::Fetch { receiver: 0, gen: 150_000 })]);
        let entries = h.message(dest, NO_PORT, fetch[0].1);
        let entry = DgbMsg::Entry { generator: dest, gen: 150_000, port: NO_PORT, d: 62.0 };
        assert_eq!(entries, vec![(Dest::Router { router: 0, delay: 0 }, entry)]);
        assert!(h.message(0, NO_PORT, entry).is_empty());
        assert_eq!(h.state(0).table.feedback_min(dest), Some(62.0));
        // Fetched once: nothing is left, and an older learnset is refused.
        assert!(h.message(dest, NO_PORT, fetch[0].1).is_empty());
        let older = DgbMsg::Entry { generator: dest, gen: 149_000, port: NO_PORT, d: 1.0 };
        h.message(0, NO_PORT, older);
        assert_eq!(h.state(0).table.feedback_min(dest), Some(62.0));
    }

    /// A non-minimal packet also carries a learnset for its intermediate router, fetched when
    /// it reaches that router.
    #[test]
    fn a_nonminimal_packet_carries_a_learnset_for_its_intermediate_router() {
        let mut h = harness();
        let topo = h.net.topo.clone();
        let dest = topo.router_of_node(FAR);
        // Router 0 has measured something of every router's packets; its minimal port toward
        // FAR is full and every bias strongly favours Valiant paths.
        let min_port = topo.minimal_first_port(0, dest).unwrap().0;
        h.net.set_used_credits(0, min_port, 0, 20);
        let pig = h.state_mut(0).piggyback.as_mut().unwrap();
        (0..topo.routers() as u32).for_each(|r| pig.record(r, None, r as f32));
        for port in topo.first_local_port()..topo.radix as u16 {
            h.state_mut(0).table.set_bias(dest, port, -200.0);
        }
        let mut pkt = h.packet(0, FAR);
        h.walk(&mut pkt);
        assert!(pkt.nonminimal);
        let hdr = *pkt.hdr::<DgbHeader>();
        let ir = hdr.valiant.inter_router;
        assert_eq!(hdr.carries, CARRIES_DEST | CARRIES_INTERMEDIATE);
        let fetches: Vec<_> = h.sent().into_iter().filter(|m| matches!(m.1, DgbMsg::Fetch { .. })).collect();
        let fetch = |receiver| (Dest::Router { router: 0, delay: 0 }, DgbMsg::Fetch { receiver, gen: 0 });
        assert_eq!(fetches, vec![fetch(ir), fetch(dest)]);
        let entries = h.message(0, NO_PORT, fetches[0].1);
        let entry = DgbMsg::Entry { generator: 0, gen: 0, port: NO_PORT, d: ir as f32 };
        assert_eq!(entries, vec![(Dest::Router { router: ir, delay: 0 }, entry)]);
    }

    /// A packet routed onto a local link carries the router's global queues to the next
    /// router, whose latency samples read them; before they arrive, the first port's own
    /// occupancy stands in for the gateway's.
    #[test]
    fn the_gateways_global_queues_arrive_with_its_packets_over_local_links() {
        let mut h = harness();
        let topo = h.net.topo.clone();
        let dest = topo.router_of_node(FAR);
        // Router 1's link toward group 5: 10 flits, 7 net of the 3 on the wire.
        let (r, k) = topo.gateways(0, 5)[0];
        assert_eq!(r, 1);
        let g = topo.first_global_port() + k;
        h.net.set_used_credits(1, g, 0, 10);
        h.net.set_on_wire(1, g, 0, 3);
        // Router 0: 2 flits on every port, biases that keep FAR's packets minimal.
        for port in topo.first_local_port()..topo.radix as u16 {
            h.net.set_used_credits(0, port, 0, 2);
            h.state_mut(0).table.set_bias(dest, port, 100.0);
        }
        let decide = |h: &mut Harness<Dgb<false>>, src: u32| {
            let mut pkt = h.packet(src, FAR);
            h.route(0, topo.host_port_of_node(src), &mut pkt);
            assert!(!pkt.nonminimal);
        };
        // Nothing heard: T = q + (H − 1)·q = 2 + 2·2.
        decide(&mut h, 0);
        assert_eq!(h.state(0).table.min_mean(dest), 6.0);
        h.sent();
        // Router 1 sends a packet to router 0: its 4 global queues go with it.
        let mut pkt = h.packet(4, 1);
        let hop = h.route(1, topo.host_port_of_node(4), &mut pkt);
        let (peer, in_port) = topo.peer(1, hop.port).unwrap();
        assert_eq!(peer, 0);
        let sent = h.sent();
        assert_eq!(sent.len(), 4);
        assert!(sent.iter().all(|m| m.0 == Dest::Port(hop.port)));
        let index = topo.index_in_group(1) as u16 * 4 + k;
        assert!(sent.contains(&(Dest::Port(hop.port), DgbMsg::GlobalQ { index, raw: 10, net: 7 })));
        for (_, m) in sent {
            h.message(0, in_port, m);
        }
        // Heard: T = q + (H − 1)·q_g = 2 + 2·7.
        h.net.now = 1_000;
        decide(&mut h, 1);
        assert_eq!(h.state(0).table.min_mean(dest), (6.0 + 16.0) / 2.0);
    }

    /// The fork's `GenerateLearnset`: the newest minimal residual, the newest non-minimal one
    /// per (port, global port), averaged per port; then nothing is left for that router.
    #[test]
    fn a_learnset_holds_the_newest_residuals_averaged_over_the_global_ports() {
        let mut p = Piggyback::new(32);
        assert!(!p.generate(7, 100));
        p.record(7, None, 5.0);
        p.record(7, None, 9.0);
        p.record(7, Some((3, 0)), 10.0);
        p.record(7, Some((3, 1)), 20.0);
        p.record(7, Some((3, 1)), 40.0);
        p.record(7, Some((2, 0)), 1.0);
        p.record(8, None, 77.0);
        assert!(p.generate(7, 100));
        assert_eq!(p.pending(), 1);
        let l = p.fetch(7, 100).unwrap();
        assert_eq!(l, Learnset { gen: 100, min: Some(9.0), nm: vec![(2, 1.0), (3, 25.0)] });
        assert!(!p.generate(7, 200), "nothing measured since");
        assert!(p.generate(8, 200), "other routers keep theirs");
        assert_eq!(p.fetch(8, 200).unwrap().min, Some(77.0));
        assert_eq!(p.pending(), 0);
    }

    /// A fetch drops the older learnsets for the same receiver (it would refuse them), and a
    /// learnset fetched late after a newer one is not found.
    #[test]
    fn fetching_a_learnset_drops_the_older_ones_and_the_receiver_takes_only_newer_ones() {
        let mut p = Piggyback::new(4);
        for gen in [10, 20, 30] {
            p.record(5, None, gen as f32);
            assert!(p.generate(5, gen));
        }
        assert_eq!(p.fetch(5, 20).unwrap().min, Some(20.0));
        assert_eq!(p.fetch(5, 10), None, "older than one fetched");
        assert_eq!(p.fetch(5, 30).unwrap().min, Some(30.0));
        assert_eq!(p.pending(), 0);
        let mut r = Piggyback::new(4);
        assert!(r.accept(9, 0), "the first, even at time 0");
        assert!(r.accept(9, 30) && r.accept(9, 30), "every entry of one learnset");
        assert!(!r.accept(9, 20), "older than the newest taken");
        assert!(r.accept(4, 20), "per generator");
    }

    #[test]
    fn global_queues_are_unknown_until_heard_and_then_the_newest() {
        let mut p = Piggyback::new(4);
        assert_eq!(p.global_q(2), None);
        p.set_global_q(2, 10, 7);
        p.set_global_q(2, 12, 9);
        assert_eq!(p.global_q(2), Some((12, 9)));
        assert_eq!(p.global_q(9), None);
    }
}
