//! PB — Piggyback, the source-adaptive routing of Jiang, Kim and Dally (ISCA'09) in the FOGSim
//! variant that Benito et al. use as their adaptive baseline (JPDC'19 §5.3; FOGSim `SRC_ADP`
//! with `CongestionDetection=PER_PORT` at dcdd75f; acor-family note A7, baseline-algorithms
//! §3.1).
//!
//! * A decision at the source router for each packet whose destination is on another switch,
//!   taken again at every refused attempt at the head of the injection buffer, as FOGSim's
//!   `SRC_ADP` does: with `routing.recompute`, with a new non-minimal candidate each time;
//!   without it, with the candidate drawn at the first attempt (`routing.reevaluate`, the
//!   default; FOGSim keeps the Valiant node but evaluates the misroute condition at every
//!   allocation attempt). Option `routing.reevaluate = false`: without recomputation the
//!   first decision stays (docs/acor.md, decision 10).
//! * The non-minimal candidate is drawn under `routing.policy` (default `rrg-sw`) and, with
//!   `routing.restricted`, inside the group for intra-group packets ([`super::misroute`]).
//! * **Misroute** iff `q_min·H_min > q_nm·H_nm + t_l·P` or the global link of the minimal path
//!   is flagged saturated. `q` is the occupancy (output-buffer flits plus used credits) of the
//!   VC the packet would take on the candidate's first port, `H` the router hops of each path,
//!   `P` the packet's flits. The minimal global link is the source router's own or that of
//!   the router its minimal local hop reaches; the non-minimal global link is not checked.
//! * **Saturation flags.** Every cycle (one flit-time of the injection link; option
//!   `routing.flag_period_cycles` for fewer, cheaper computations) each router flags
//!   each of its global ports whose occupancy, averaged over the port's global VCs, exceeds
//!   `c_g_pct/100` times the mean of that average over its own global ports plus
//!   `t_g_packets·P` flits. It publishes the flags to its group ([`super::Ctx::publish`]);
//!   the others read them one local-link latency old. A router's own flags are read live.
//!   A router whose global ports are all empty stops ticking (its flags are all clear then)
//!   and starts again when it next routes a packet: the same flags as ticking every cycle.
//! * VCs: FOGSim's ladder `l0 g0 l1 l2 g1 l3`.
//!
//! Parameters default to the paper's Table 3 (`c_g_pct = 120`, `t_g_packets = 5`,
//! `t_l = 0`); FOGSim's own default for `c_g_pct` is 200 (an option). The paper's PB baseline
//! is restricted and recomputing (the `acor-*` presets set both).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::misroute::{self, Drawn, MisrouteHeader, Policy};
use super::paths::port_to_group;
use super::val::{attempt_period, ValParams};
use super::vc::Ladder;
use super::{BuildCtx, Ctx, Hooks, Hop, NoMsg, RouterView, Routing, VcCounts};
use crate::config::RoutingParams;
use crate::network::Packet;
use crate::stats::{ProbeKind, ProbeSpec};
use crate::topology::{LinkClass, Topology};
use crate::units::{ns_to_ps, Time};

/// The parameters of PB (and of PB-ACOR's decision).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PbParams {
    /// The misrouting policy of the non-minimal candidate.
    pub policy: Policy,
    /// Intra-group packets' non-minimal candidate stays inside their group (RPB).
    pub restricted: bool,
    /// Decide again at every refused attempt at the head of the injection buffer, with a new
    /// non-minimal candidate.
    pub recompute: bool,
    /// Without `recompute`: decide again at every refused attempt at the head of the injection
    /// buffer between the minimal path and the candidate drawn at the first attempt, as
    /// FOGSim's `SRC_ADP` does (the default). False: the first decision stays. No effect with
    /// `recompute`.
    pub reevaluate: bool,
    /// `C_g`: a global port is saturated above this percentage of its router's mean.
    #[schemars(range(min = 0.0, max = 100000.0))]
    pub c_g_pct: f64,
    /// `T_g`: ... plus this many packets.
    #[schemars(range(min = 0.0, max = 100000.0))]
    pub t_g_packets: f64,
    /// `T_l`: the minimal path's estimate may exceed the non-minimal one by this many packets.
    #[schemars(range(min = 0.0, max = 100000.0))]
    pub t_l: f64,
    /// Cycles between two computations of a router's saturation flags (FOGSim: every cycle).
    /// More is cheaper and leaves the flags up to that many cycles staler.
    #[schemars(range(min = 1, max = 1000000))]
    pub flag_period_cycles: u32,
}

impl Default for PbParams {
    fn default() -> Self {
        let v = ValParams::default();
        PbParams {
            policy: v.policy,
            restricted: v.restricted,
            recompute: v.recompute,
            reevaluate: true,
            c_g_pct: 120.0,
            t_g_packets: 5.0,
            t_l: 0.0,
            flag_period_cycles: 1,
        }
    }
}

impl RoutingParams for PbParams {
    /// `reevaluate` matters only without `recompute`: with it, it reads false (the value that
    /// keeps the store keys of points made before the key).
    fn canonical(self) -> Self {
        PbParams { reevaluate: self.reevaluate && !self.recompute, ..self }
    }
}

/// A router's flag ticking (the flags themselves are published to the group's signals).
#[derive(Debug, Default)]
pub struct PbState {
    ticking: bool,
}

/// The PB decision and its saturation flags, shared with PB-ACOR.
pub struct PbRule {
    pub params: PbParams,
    pub ladder: Ladder,
    /// The allocator's attempt period (a cycle).
    pub cycle: Time,
    /// The flags' period (`flag_period_cycles` cycles).
    pub flag_period: Time,
    /// How old the group's flags are when read: the local link latency.
    pub flag_delay: Time,
    /// Flits of a packet.
    packet_flits: f64,
}

/// Probes of the PB decision (after the family's common ones): decisions by reason.
pub const PROBE_FLAGGED: usize = misroute::COMMON_PROBES;
pub const PROBE_MISROUTED: usize = misroute::COMMON_PROBES + 1;
/// Probes of PB: the common ones and the decision's.
pub const PB_PROBES: usize = misroute::COMMON_PROBES + 2;

impl PbRule {
    pub fn new(cx: &BuildCtx, params: PbParams) -> PbRule {
        PbRule {
            params,
            ladder: misroute::valiant_ladder(),
            cycle: attempt_period(cx),
            flag_period: attempt_period(cx) * params.flag_period_cycles as Time,
            flag_delay: ns_to_ps(cx.exp.network.local_latency_ns),
            packet_flits: cx.exp.network.packet_flits as f64,
        }
    }

    /// The family's common probes and the decision's.
    pub fn probe_specs() -> Vec<ProbeSpec> {
        let mut specs = misroute::common_probes();
        specs.extend([
            ProbeSpec::new("pb_flagged", ProbeKind::Total, "source decisions misrouted by a saturation flag"),
            ProbeSpec::new("pb_misrouted", ProbeKind::Total, "source decisions that chose the non-minimal path"),
        ]);
        specs
    }

    /// The saturation flags of `view`'s router now (bit k for global port k), and whether any
    /// of its global ports holds anything. Occupancies are summed over the port's global VCs:
    /// the comparison of their means is the comparison of the sums scaled by the VC count.
    pub fn flags_and_busy(&self, view: &RouterView) -> (u64, bool) {
        let topo = view.topo;
        let first = topo.first_global_port();
        let h = topo.h.min(64);
        let vcs = self.ladder.vcs().of(LinkClass::Global) as usize;
        let mut occ = [0u32; 64];
        let (mut sum, mut n) = (0u64, 0u32);
        for (k, o) in occ.iter_mut().enumerate().take(h) {
            let port = first + k as u16;
            if topo.global_port_group(view.router, port) == crate::topology::NONE {
                *o = u32::MAX;
                continue;
            }
            *o = (0..vcs).map(|vc| view.occupancy(port, vc)).sum();
            sum += *o as u64;
            n += 1;
        }
        if sum == 0 {
            return (0, false);
        }
        // occ_k / vcs > C_g/100 · (sum / n) / vcs + T_g · P, in sums over the port's VCs.
        let limit = self.params.c_g_pct / 100.0 * (sum as f64 / n as f64)
            + self.params.t_g_packets * self.packet_flits * vcs as f64;
        let flags = (0..h).filter(|&k| occ[k] != u32::MAX && occ[k] as f64 > limit).fold(0, |f, k| f | 1 << k);
        (flags, true)
    }

    /// The saturation flags alone.
    pub fn flags(&self, view: &RouterView) -> u64 {
        self.flags_and_busy(view).0
    }

    /// Whether the global link of the minimal path from this (source) router is flagged:
    /// `min_port` is the minimal path's first port.
    fn min_link_flagged<R: Routing>(&self, cx: &Ctx<'_, R>, min_port: u16, dst_group: u32) -> bool {
        let topo = cx.view.topo;
        let first = topo.first_global_port();
        match topo.class_of_port(min_port) {
            LinkClass::Global => self.flags(&cx.view) >> (min_port - first) & 1 == 1,
            LinkClass::Local => {
                let Some((n, _)) = topo.peer(cx.view.router, min_port) else { return false };
                let index = topo.index_in_group(n) as u16;
                let flags = cx.signal(n, self.flag_delay);
                topo.gateways(cx.view.group, dst_group)
                    .iter()
                    .find(|gw| gw.0 == index)
                    .is_some_and(|&(_, k)| flags >> k & 1 == 1)
            }
            LinkClass::Host => false,
        }
    }

    /// The source decision for `pkt` at `cx`'s router, the non-minimal candidate drawn under
    /// `policy`: the path to take.
    pub fn decide<R: Routing>(&self, cx: &mut Ctx<'_, R>, pkt: &Packet, policy: Policy) -> Drawn {
        let (nm, misroute) = self.draw_and_choose(cx, pkt, policy);
        if misroute {
            nm
        } else {
            Drawn::MINIMAL
        }
    }

    /// The non-minimal candidate for `pkt` drawn under `policy`, and whether the decision
    /// takes it.
    pub fn draw_and_choose<R: Routing>(&self, cx: &mut Ctx<'_, R>, pkt: &Packet, policy: Policy) -> (Drawn, bool) {
        let (topo, router) = (cx.view.topo, cx.view.router);
        if pkt.dst_router == router {
            return (Drawn::MINIMAL, false);
        }
        let nm = misroute::draw(topo, router, pkt.dst_router, policy, self.params.restricted, cx.rng);
        let misroute = self.choose(cx, pkt, &nm);
        (nm, misroute)
    }

    /// Whether the source decision for `pkt` at `cx`'s router takes the non-minimal `nm`
    /// rather than the minimal path.
    pub fn choose<R: Routing>(&self, cx: &mut Ctx<'_, R>, pkt: &Packet, nm: &Drawn) -> bool {
        let (topo, router) = (cx.view.topo, cx.view.router);
        let dst = pkt.dst_router;
        if dst == router || nm.is_minimal() {
            return false;
        }
        let dst_group = topo.group_of(dst);
        let min_port = if dst_group == cx.view.group {
            topo.local_port_to(router, dst, dst_group)
        } else {
            port_to_group(&cx.view, dst_group, cx.rng)
        };
        let nm_port = self.first_port(topo, router, nm, pkt);
        let q = |port: u16| cx.view.occupancy(port, misroute::first_vc(topo, &self.ladder, port) as usize) as f64;
        let (h_min, h_nm) = (topo.min_hops(router, dst) as f64, misroute::path_hops(topo, router, dst, nm) as f64);
        let by_queues = q(min_port) * h_min > q(nm_port) * h_nm + self.params.t_l * self.packet_flits;
        let flagged = !by_queues && dst_group != cx.view.group && self.min_link_flagged(cx, min_port, dst_group);
        if flagged {
            cx.count(PROBE_FLAGGED, 1);
        }
        if by_queues || flagged {
            cx.count(PROBE_MISROUTED, 1);
        }
        by_queues || flagged
    }

    /// The first port of path `d` (not minimal) from `router`.
    fn first_port(&self, topo: &Topology, router: u32, d: &Drawn, pkt: &Packet) -> u16 {
        let mut probe = *pkt;
        misroute::commit(&mut probe, d, 0, 0);
        misroute::next_hop(topo, &self.ladder, router, &mut probe, |_| None)
            .expect("a drawn path starts in its group")
            .port
    }

    /// Start ticking at this router if it is not (it routes a packet now).
    pub fn start_ticking<R: Routing>(&self, cx: &mut Ctx<'_, R>, ticking: &mut bool) {
        if !*ticking {
            *ticking = true;
            cx.wake_at(cx.view.now + self.flag_period);
        }
    }

    /// One flag tick: publish the flags; tick again in a cycle unless every global port is empty.
    pub fn tick<R: Routing>(&self, cx: &mut Ctx<'_, R>, ticking: &mut bool) {
        let (flags, busy) = self.flags_and_busy(&cx.view);
        cx.publish(flags);
        *ticking = busy;
        if busy {
            cx.wake_at(cx.view.now + self.flag_period);
        }
    }

    /// The hop of a packet whose path is written.
    pub fn hop<R: Routing>(&self, cx: &mut Ctx<'_, R>, pkt: &mut Packet) -> Hop {
        let (view, rng) = (&cx.view, &mut *cx.rng);
        misroute::next_hop(view.topo, &self.ladder, view.router, pkt, |g| Some(port_to_group(view, g, rng)))
            .expect("a view answers every hop")
    }
}

pub struct Pb {
    rule: PbRule,
}

impl Pb {
    pub fn new(cx: &BuildCtx, params: PbParams) -> Pb {
        Pb { rule: PbRule::new(cx, params) }
    }
}

impl Routing for Pb {
    type Header = MisrouteHeader;
    type RouterState = PbState;
    type Msg = NoMsg;
    const HOOKS: Hooks = Hooks::REROUTE.with(Hooks::TIMER).with(Hooks::DELIVER);

    fn vcs(&self) -> VcCounts {
        self.rule.ladder.vcs()
    }

    fn max_hops(&self) -> u32 {
        6
    }

    fn router_state(&self, _topo: &Topology, _router: u32) -> PbState {
        PbState::default()
    }

    fn probes(&self) -> Vec<ProbeSpec> {
        PbRule::probe_specs()
    }

    fn route(&self, cx: &mut Ctx<'_, Self>, pkt: &mut Packet) -> Hop {
        let mut ticking = cx.state.ticking;
        self.rule.start_ticking(cx, &mut ticking);
        cx.state.ticking = ticking;
        if cx.view.is_source_router() && pkt.hops == 0 {
            let (nm, misroute) = self.rule.draw_and_choose(cx, pkt, self.rule.params.policy);
            misroute::commit_choice(pkt, &nm, misroute, 0, cx.view.now);
        }
        self.rule.hop(cx, pkt)
    }

    fn on_deliver(&self, cx: &mut Ctx<'_, Self>, pkt: &Packet) {
        misroute::count_delivery(cx, pkt);
    }

    fn reroute_at_injection(&self, cx: &mut Ctx<'_, Self>, pkt: &mut Packet, _hop: Hop) -> Option<Hop> {
        if !misroute::new_attempt(pkt, cx.view.now, self.rule.cycle) {
            return None;
        }
        cx.count(misroute::PROBE_REROUTES, 1);
        let params = &self.rule.params;
        let (nm, misroute) = if params.recompute {
            self.rule.draw_and_choose(cx, pkt, params.policy)
        } else if params.reevaluate {
            let nm = misroute::candidate(cx.view.topo, cx.view.router, pkt);
            (nm, self.rule.choose(cx, pkt, &nm))
        } else {
            return None;
        };
        misroute::commit_choice(pkt, &nm, misroute, 0, cx.view.now);
        Some(self.rule.hop(cx, pkt))
    }

    fn reroute_interval(&self) -> Option<Time> {
        let params = &self.rule.params;
        (params.recompute || params.reevaluate).then_some(self.rule.cycle)
    }

    fn on_timer(&self, cx: &mut Ctx<'_, Self>) {
        let mut ticking = cx.state.ticking;
        self.rule.tick(cx, &mut ticking);
        cx.state.ticking = ticking;
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;
    use crate::config::Experiment;
    use crate::network::CreditLedger;
    use crate::routing::harness::{Net, Scratch};
    use crate::routing::Rng;
    use crate::stats::Probes;

    const NS: Time = 1000;

    /// dfly(2,4,4) with 17 groups, deep buffers; and PB with 10-flit packets, 15 ns local links.
    fn setup(c_g_pct: f64) -> (Net, Pb) {
        let mut net = Net::new(2, 4, 4, 1);
        net.in_cap = 2000;
        net.credits = CreditLedger::new(net.topo.routers() * net.topo.radix * net.vcs, 2000);
        let mut exp = Experiment::default();
        exp.network.packet_flits = 10;
        exp.network.local_latency_ns = 15.0;
        let params = PbParams { c_g_pct, ..PbParams::default() };
        let pb = Pb::new(&BuildCtx { topo: &net.topo, exp: &exp }, params);
        (net, pb)
    }

    fn scratch(net: &Net) -> Scratch<NoMsg> {
        let mut s = Scratch::new(net.topo.routers());
        s.probes = Probes::new(PbRule::probe_specs(), net.topo.routers(), 0, Time::MAX, NS);
        s
    }

    #[test]
    fn a_global_port_is_flagged_above_c_g_times_the_routers_mean_plus_t_g() {
        // Port 0 at x flits (mean over its 2 global VCs), the other three empty: the mean is
        // x/4, so with C_g = 120 % and T_g = 5 packets of 10 flits the limit is 0.3x + 50:
        // flagged iff x > 71.4.
        let (mut net, pb) = setup(120.0);
        let first = net.topo.first_global_port();
        for (vc0, vc1, flagged) in [(72, 72, true), (71, 71, false), (144, 0, true), (142, 0, false)] {
            net.set_used_credits(0, first, 0, vc0);
            net.set_used_credits(0, first, 1, vc1);
            assert_eq!(pb.rule.flags(&net.view(0, 0)), flagged as u64, "{vc0}+{vc1}");
        }
        // C_g = 200 (FOGSim's default): limit 0.5x + 50, so 72 is no longer saturated.
        let (mut net, pb) = setup(200.0);
        net.set_used_credits(0, first, 0, 72);
        net.set_used_credits(0, first, 1, 72);
        assert_eq!(pb.rule.flags(&net.view(0, 0)), 0);
        net.set_used_credits(0, first + 2, 0, 300);
        net.set_used_credits(0, first + 2, 1, 300);
        assert_eq!(pb.rule.flags(&net.view(0, 0)), 0b100, "only the port far above the mean");
    }

    /// Router 0, a destination group reached through a neighbour N's global port k, and a
    /// packet to a node there.
    fn through_neighbour(net: &Net) -> (u32, u16, Packet) {
        let topo = &net.topo;
        let dg = (1..topo.g as u32).find(|&g| topo.gateways(0, g)[0].0 != 0).unwrap();
        let (n, k) = topo.gateways(0, dg)[0];
        let dst = dg * topo.a as u32 * topo.p as u32;
        let pkt = net.packet_for::<Pb>(0, dst);
        (n as u32, k, pkt)
    }

    fn decide(net: &Net, pb: &Pb, scratch: &mut Scratch<NoMsg>, pkt: &Packet, seed: u64) -> Drawn {
        let mut state = PbState::default();
        let mut rng = Rng::seed_from_u64(seed);
        let mut cx = net.ctx::<Pb>(0, 0, &mut state, &mut rng, scratch);
        pb.rule.decide(&mut cx, pkt, Policy::RrgSw)
    }

    #[test]
    fn the_minimal_global_link_flag_arrives_after_the_local_latency() {
        let (mut net, pb) = setup(120.0);
        let (n, k, pkt) = through_neighbour(&net);
        let mut s = scratch(&net);
        // Empty queues and no flag: minimal.
        net.now = 100 * NS;
        assert!(decide(&net, &pb, &mut s, &pkt, 1).is_minimal());
        // N flags the link at 100 ns: still minimal 14 ns later, misrouted 15 ns later.
        s.signals.publish(n, 100 * NS, 1 << k);
        net.now = 114 * NS;
        assert!(decide(&net, &pb, &mut s, &pkt, 2).is_minimal());
        net.now = 115 * NS;
        assert!(!decide(&net, &pb, &mut s, &pkt, 3).is_minimal());
        assert_eq!(s.probes.results().totals["pb_flagged"], 1);
        // A flag on another of N's ports, or of another router, is not the minimal link.
        s.signals.publish(n, 200 * NS, 1 << ((k + 1) % 4));
        s.signals.publish(n ^ 1, 200 * NS, 0b1111);
        net.now = 300 * NS;
        assert!(decide(&net, &pb, &mut s, &pkt, 4).is_minimal());
    }

    #[test]
    fn hop_weighted_queues_misroute_without_any_flag() {
        let (mut net, pb) = setup(120.0);
        let (n, _, pkt) = through_neighbour(&net);
        let min_port = net.topo.local_port(0, n);
        let mut s = scratch(&net);
        // q_min·H_min = 3q against 0 on the (empty) non-minimal port: any queue misroutes, on
        // the VC the minimal hop takes (l0), not on another.
        net.set_used_credits(0, min_port, 1, 500);
        let drawn: Vec<Drawn> = (0..20).map(|i| decide(&net, &pb, &mut s, &pkt, i)).collect();
        assert!(drawn.iter().all(|d| d.is_minimal()), "a queue on another VC is not the packet's");
        net.set_used_credits(0, min_port, 0, 10);
        let misrouted = (0..50).filter(|&i| !decide(&net, &pb, &mut s, &pkt, i).is_minimal()).count();
        // Only candidates leaving by the same first port and VC tie (and stay minimal).
        assert!(misrouted >= 35, "{misrouted} of 50");
        assert_eq!(s.probes.results().totals["pb_flagged"], 0);
    }

    /// Route `pkt` at router 0, arrived from a host port, at `now`.
    fn route_at_source(net: &mut Net, pb: &Pb, pkt: &mut Packet, now: Time) -> Hop {
        let mut s = scratch(net);
        let mut state = PbState::default();
        let mut rng = Rng::seed_from_u64(7);
        net.now = now;
        pb.route(&mut net.ctx::<Pb>(0, 0, &mut state, &mut rng, &mut s), pkt)
    }

    /// Ask again for `pkt`, the refused head of router 0's injection buffer, at `now`.
    fn reroute(net: &mut Net, pb: &Pb, pkt: &mut Packet, now: Time) -> Option<Hop> {
        let mut s = scratch(net);
        let mut state = PbState::default();
        let mut rng = Rng::seed_from_u64(8);
        net.now = now;
        let hop = Hop { port: 0, vc: 0 };
        pb.reroute_at_injection(&mut net.ctx::<Pb>(0, 0, &mut state, &mut rng, &mut s), pkt, hop)
    }

    #[test]
    fn without_recomputation_a_refused_head_decides_again_with_its_first_candidate() {
        // FOGSim's SRC_ADP keeps the Valiant node drawn at the first attempt and evaluates the
        // misroute condition at every refused attempt; `reevaluate = false` keeps the first
        // decision.
        let (mut net, mut pb) = setup(120.0);
        assert!(!pb.rule.params.recompute && pb.rule.params.reevaluate);
        let (n, _, pkt0) = through_neighbour(&net);
        let min_port = net.topo.local_port(0, n);
        // Empty queues: the first decision is minimal, and the candidate is kept.
        let mut pkt = pkt0;
        let first = route_at_source(&mut net, &pb, &mut pkt, 100 * NS);
        assert_eq!(first.port, min_port);
        assert!(!pkt.nonminimal);
        let cand = misroute::candidate(&net.topo, 0, &pkt);
        assert!(!cand.is_minimal());
        let nm_port = pb.rule.first_port(&net.topo, 0, &cand, &pkt);
        assert_ne!(nm_port, min_port, "seed 7 draws a candidate leaving by another port");
        // The minimal port's queue grows: the next refused attempt takes that same candidate.
        net.set_used_credits(0, min_port, 0, 10);
        let hop = reroute(&mut net, &pb, &mut pkt, 200 * NS).expect("decided again");
        assert_eq!(hop.port, nm_port);
        assert!(pkt.nonminimal);
        assert_eq!(misroute::candidate(&net.topo, 0, &pkt), cand);
        // A second attempt within the same cycle is not a new one.
        assert!(reroute(&mut net, &pb, &mut pkt, 200 * NS).is_none());
        // The queue drains: back to the minimal path, the candidate still the same.
        net.set_used_credits(0, min_port, 0, 0);
        let hop = reroute(&mut net, &pb, &mut pkt, 300 * NS).expect("decided again");
        assert_eq!(hop.port, min_port);
        assert!(!pkt.nonminimal);
        assert_eq!(misroute::candidate(&net.topo, 0, &pkt), cand);
        // Deciding once: the refused head keeps its minimal path whatever the queues.
        pb.rule.params.reevaluate = false;
        let mut pkt = pkt0;
        net.set_used_credits(0, min_port, 0, 0);
        route_at_source(&mut net, &pb, &mut pkt, 100 * NS);
        net.set_used_credits(0, min_port, 0, 10);
        assert!(reroute(&mut net, &pb, &mut pkt, 200 * NS).is_none());
        assert!(!pkt.nonminimal);
        assert!(pb.reroute_interval().is_none());
    }
}
