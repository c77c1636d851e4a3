//! UGAL-LE — UGAL with local information, enhanced (Chaulagain & Yuan, ICS'24 §4.3,
//! Algorithm 2): UGAL-L's hop-weighted decision at the source router, with the minimal path's
//! estimate raised by a contention term when the router has no global link of its own to the
//! destination group:
//!
//! * own link to `G_D`: minimal iff `q_m·H_m <= q_nm·H_nm + b` (UGAL-L; `q_m` is the global
//!   port's occupancy);
//! * otherwise (`q_m` is the local port's toward the gateway): minimal iff
//!   `q_m·H_m + q_m·max(C − 1, 0) <= q_nm·H_nm + b`, so that the gateway's global queue is
//!   estimated as `q_m·C`.
//!
//! `C` is the contention factor of `G_D` from the router's own counters (`contention.rs`, §4.2,
//! Eq. 1): the routers of this group with more than `active_threshold` packets to `G_D`
//! observed here within `window_ns` (the BookSim runs' 500 cycles and 5 by default; the CODES
//! runs' 500 ns and 3 are `window_ns = 500, active_threshold = 3` at 1 ns per cycle). Every
//! packet arriving from a node or a router of this group is counted, at every router it crosses.
//!
//! Everything else is UGAL-L's (`ugal_l.rs`): candidates, `q` with VC discrimination on a shared
//! port, hop counts, Valiant to a router on 4 VCs, intra-group packets minimal. Decisions
//! recorded in `docs/ugal-le.md`:
//! * with `l > 1` links per group pair, `C` is per destination group, not per global link
//!   (the paper does not divide by `l`);
//! * the term multiplies the `q_m` the decision compares (per VC when the two candidates share
//!   their first port);
//! * the deciding packet has been counted when the router decides (it arrived first).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::contention::ContentionCounters;
use super::ugal_l::{count_decision, decision_probe_specs, MinGateways, MinimalPenalty, UgalL, UgalLParams};
use super::valiant::ValiantHeader;
use super::{Ctx, Hooks, Hop, NoMsg, Routing, VcCounts};
use crate::config::{Intermediate, IntraGroup, RoutingParams};
use crate::network::Packet;
use crate::stats::ProbeSpec;
use crate::topology::Topology;
use crate::units::{ns_to_ps, Time};

/// The parameters of UGAL-LE: UGAL-L's and the contention counters'.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct UgalLeParams {
    /// The bias `b` (flits) of Algorithm 2; positive favours minimal paths.
    pub bias: f64,
    /// Minimal paths compared per decision (as UGAL-L).
    #[schemars(range(min = 1, max = 64))]
    pub min_candidates: usize,
    /// Non-minimal paths compared per decision (as UGAL-L).
    #[schemars(range(min = 1, max = 64))]
    pub nonmin_candidates: usize,
    /// How the Valiant intermediate router is drawn (as UGAL-L).
    pub intermediate: Intermediate,
    /// Intra-group packets (as UGAL-L).
    pub intra_group: IntraGroup,
    /// Which parallel links are minimal candidates (as UGAL-L).
    pub min_gateways: MinGateways,
    /// The contention counters' sliding window (ICS'24: 500 cycles in BookSim, 500 ns in CODES).
    #[schemars(extend("exclusiveMinimum" = 0.0), range(max = 1.0e9))]
    pub window_ns: f64,
    /// A router's flow to a group is active with more packets than this in the window (ICS'24:
    /// 5 in BookSim, 3 in CODES).
    pub active_threshold: u32,
}

impl Default for UgalLeParams {
    fn default() -> UgalLeParams {
        let l = UgalLParams::default();
        UgalLeParams {
            bias: l.bias,
            min_candidates: l.min_candidates,
            nonmin_candidates: l.nonmin_candidates,
            intermediate: l.intermediate,
            intra_group: l.intra_group,
            min_gateways: l.min_gateways,
            window_ns: 500.0,
            active_threshold: 5,
        }
    }
}

impl RoutingParams for UgalLeParams {}

pub struct UgalLe {
    inner: UgalL,
    probes: bool,
    window: Time,
    threshold: u32,
}

impl UgalLe {
    pub fn new(p: UgalLeParams) -> UgalLe {
        let inner = UgalL::new(UgalLParams {
            bias: p.bias,
            min_candidates: p.min_candidates,
            nonmin_candidates: p.nonmin_candidates,
            intermediate: p.intermediate,
            intra_group: p.intra_group,
            min_gateways: p.min_gateways,
            ..UgalLParams::default()
        });
        UgalLe { inner, probes: false, window: ns_to_ps(p.window_ns).max(1), threshold: p.active_threshold }
    }

    /// With the decision probes of `run.decision_probes` when `on`.
    pub fn with_probes(mut self, on: bool) -> UgalLe {
        self.probes = on;
        self
    }
}

/// Algorithm 2's contention term for a destination group of contention factor `c`.
struct Contention(u32);

impl MinimalPenalty for Contention {
    #[inline]
    fn penalty(&self, q_m: u32, direct: bool) -> f64 {
        if direct {
            0.0
        } else {
            q_m as f64 * self.0.saturating_sub(1) as f64
        }
    }
}

impl Routing for UgalLe {
    type Header = ValiantHeader;
    type RouterState = ContentionCounters;
    type Msg = NoMsg;
    const HOOKS: Hooks = Hooks::ARRIVE;

    fn vcs(&self) -> VcCounts {
        self.inner.vcs()
    }

    fn max_hops(&self) -> u32 {
        self.inner.max_hops()
    }

    fn probes(&self) -> Vec<ProbeSpec> {
        decision_probe_specs(self.probes)
    }

    fn router_state(&self, topo: &Topology, _router: u32) -> ContentionCounters {
        ContentionCounters::new(topo.a, topo.g, self.window, self.threshold)
    }

    /// §4.2.1: a packet injected in this group is counted under its source router and
    /// destination group.
    fn on_arrive(&self, cx: &mut Ctx<'_, Self>, pkt: &mut Packet) {
        cx.state.observe(&cx.view, pkt);
    }

    fn route(&self, cx: &mut Ctx<'_, Self>, pkt: &mut Packet) -> Hop {
        if cx.view.is_source_router() && pkt.hops == 0 {
            let j = cx.view.topo.group_of(pkt.dst_router);
            let c = if j == cx.view.group { 0 } else { cx.state.contention(cx.view.now, j as usize) };
            let (hop, estimate) = self.inner.decide_at_source(&cx.view, pkt, cx.rng, &Contention(c));
            count_decision(cx, self.probes, estimate);
            return hop;
        }
        self.inner.next_hop(&cx.view, pkt, cx.rng)
    }

    #[inline(always)]
    fn route_without_view(&self, topo: &Topology, router: u32, in_port: u16, pkt: &mut Packet) -> Option<Hop> {
        self.inner.route_without_view(topo, router, in_port, pkt)
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;
    use crate::routing::harness::{Net, Scratch};
    use crate::routing::valiant::hdr;
    use crate::routing::Rng;

    /// dfly(4,8,4,33), router 0 of group 0. Its own global links lead to groups 1-4 (absolute
    /// arrangement); group 5 is reached through router 1 (`H_m = 3` to router 1 of group 5).
    const FAR: u32 = 5 * 32 + 6;
    const DIRECT: u32 = 2 * 32 + 6;

    /// 1 flit on the minimal port toward `dst`, 2 on every other port, and counters in which
    /// `active` routers of group 0 have 6 packets to `dst`'s group (threshold 5): the route of a
    /// packet from node 0 under `seed`, with its Valiant path length.
    fn decide(alg: &UgalLe, dst: u32, active: usize, seed: u64) -> (bool, u32) {
        let mut net = Net::new(4, 8, 4, 1);
        let mut pkt = net.packet_for::<UgalLe>(0, dst);
        let min_port = net
            .route_once(&UgalL::new(UgalLParams { bias: 1e9, ..Default::default() }), 0, 0, &mut pkt.clone(), 1)
            .port;
        for port in net.topo.first_local_port()..net.topo.radix as u16 {
            net.set_used_credits(0, port, 0, if port == min_port { 1 } else { 2 });
        }
        let mut state = alg.router_state(&net.topo, 0);
        let j = net.topo.group_of(pkt.dst_router) as usize;
        for i in 0..active {
            (0..6).for_each(|_| state.record(0, i, j));
        }
        let (mut rng, mut scratch) = (Rng::seed_from_u64(seed), Scratch::new(net.topo.routers()));
        let hop = alg.route(&mut net.ctx(0, 0, &mut state, &mut rng, &mut scratch), &mut pkt);
        assert_eq!(hop.port == min_port, !pkt.nonminimal);
        let ir = hdr(&pkt).inter_router;
        let h_nm = if pkt.nonminimal { net.topo.min_hops(0, ir) + net.topo.min_hops(ir, pkt.dst_router) } else { 0 };
        (pkt.nonminimal, h_nm)
    }

    /// Algorithm 2 on constructed queues: without a direct link the contention term
    /// `q_m·(C − 1)` raises the minimal estimate; with one it does not apply.
    #[test]
    fn algorithm_2_adds_the_contention_term_only_without_a_direct_link() {
        let alg = UgalLe::new(UgalLeParams::default());
        // UGAL-L's estimate: 1·3 = 3 against 2·H_nm >= 4: always minimal, with C <= 1 too.
        for seed in 0..200 {
            assert!(!decide(&alg, FAR, 0, seed).0);
            assert!(!decide(&alg, FAR, 1, seed).0);
        }
        // C = 8: 3 + 1·7 = 10 against 2·H_nm: Valiant paths of at most 4 hops win.
        let (mut nonmin, mut min) = (0, 0);
        for seed in 0..400 {
            match decide(&alg, FAR, 8, seed) {
                (true, h_nm) => {
                    assert!(h_nm <= 4, "seed {seed}: {h_nm}-hop Valiant path won");
                    nonmin += 1;
                }
                (false, _) => min += 1,
            }
        }
        // (About one Valiant candidate in twenty has at most 4 hops from router 0.)
        assert!(nonmin > 5 && min > 300, "{nonmin} {min}");
        // Router 0's own link to group 2: no term, whatever C.
        for seed in 0..200 {
            assert!(!decide(&alg, DIRECT, 8, seed).0, "seed {seed}");
        }
    }

    /// A bias of b flits shifts Algorithm 2's cut as UGAL-L's: with C = 8 the same candidates
    /// (same draws) that won at `10 > 2·H_nm` win at `10 > 2·H_nm + 2` only with at most 3 hops.
    #[test]
    fn the_bias_applies_to_the_contention_estimate() {
        let plain = UgalLe::new(UgalLeParams::default());
        let biased = UgalLe::new(UgalLeParams { bias: 2.0, ..Default::default() });
        let mut moved = 0;
        for seed in 0..400 {
            let (nonmin, h_nm) = decide(&plain, FAR, 8, seed);
            let (biased_nonmin, biased_h_nm) = decide(&biased, FAR, 8, seed);
            assert_eq!(biased_nonmin, nonmin && h_nm <= 3, "seed {seed}: {h_nm}-hop Valiant candidate");
            if biased_nonmin {
                assert_eq!(biased_h_nm, h_nm, "seed {seed}: the same candidate");
            }
            moved += (nonmin && !biased_nonmin) as u32;
        }
        assert!(moved > 3, "the bias kept {moved} 4-hop Valiant paths minimal");
    }
}
