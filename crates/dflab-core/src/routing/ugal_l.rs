//! UGAL-L — UGAL with local information in the hop-weighted form of Chaulagain & Yuan
//! (ICS'24, Algorithm 1; after Kim et al. ISCA'08): route minimally iff
//! `q_m · H_m <= q_nm · H_nm + b`.
//!
//! * `q`: output-buffer flits + used credits summed over every VC of the candidate's first port
//!   at the source router (the congestion signal of design.md §2); when the best minimal and
//!   the best non-minimal candidate share that port, only the VC each would take (VC2 and VC0)
//!   — Kim'08's VC discrimination, as the Q-adaptive reference code does for UGALn.
//! * `H`: router-to-router hops of the candidate path from this router: through the candidate's
//!   gateway for a minimal path, `min_hops(S, I) + min_hops(I, D)` for a Valiant path through
//!   the intermediate router I.
//! * `b = routing.bias` in flits (default 0; positive favours minimal paths).
//! * `routing.form = "booksim"` (an option): BookSim2 master's `ugal_dragonflynew` rule instead,
//!   minimal iff `q_m <= 2·q_nm + 30 + b` (its `adaptive_threshold` is 30; the factor 2 stands
//!   for the hop ratio), `q` the whole first port's used credits (`GetUsedCredit`, no VC
//!   discrimination). With `intermediate = "any"` this is BookSim's UGAL: its random
//!   intermediate node in the source or destination group leaves the packet minimal.
//! * Candidates (default one of each): `routing.min_candidates` distinct gateways toward the
//!   destination group (`routing.min_gateways = "own-first"`, the default: this router's own
//!   links if it has any, else any of the group's; `"all"`: any link of the group, the paper's
//!   count of 4 minimal paths per router pair on dfly(4,8,4,9), ICS'24 §4.1) and
//!   `routing.nonmin_candidates` intermediate routers drawn by `routing.intermediate` (default:
//!   uniform outside the source and destination groups). Each class keeps its candidate with
//!   the smallest `q · H`; a tie keeps the first drawn. With one link per group pair there is a
//!   single minimal path, so `min_candidates` only matters with parallel links.
//! * One decision per packet at the source router; intra-group packets are minimal unless
//!   `routing.intra_group = "adaptive"` (then `H_m = 1`, `H_nm = 2`).
//!
//! The ICS'24 experiments use Valiant to a *router* with 4 VCs (after Won et al.), so the path
//! and VC layout are UGALn's: non-minimal VC0 to the intermediate group, VC1 to the
//! intermediate router, VC2 from there (and on the minimal path) to the destination group, VC3
//! inside it. At most 6 router hops.

use rand::Rng as _;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::adaptive::{candidate_occupancy, draw_intermediate, route_intra_group};
use super::paths::{port_to_gateway, port_to_group};
use super::valiant::{hdr_mut, Layout, ValiantHeader, LAYOUT_N, TO_DESTINATION};
use super::{Ctx, Hop, NoMsg, Rng, RouterView, Routing, VcCounts};
use crate::config::{Intermediate, IntraGroup, RoutingParams};
use crate::network::Packet;
use crate::stats::{ProbeKind, ProbeSpec};
use crate::topology::Topology;

const LAYOUT: Layout = LAYOUT_N;

/// The parameters of UGAL-L (ICS'24 Algorithm 1 with one candidate of each kind by default).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct UgalLParams {
    /// The bias `b` (flits) of `q_m·H_m <= q_nm·H_nm + b`; positive favours minimal paths.
    pub bias: f64,
    /// Minimal paths compared per decision (distinct gateways: it matters only with
    /// `links_per_pair > 1`).
    #[schemars(range(min = 1, max = 64))]
    pub min_candidates: usize,
    /// Non-minimal paths (intermediate routers) compared per decision.
    #[schemars(range(min = 1, max = 64))]
    pub nonmin_candidates: usize,
    /// How the Valiant intermediate router is drawn (as for UGALn).
    pub intermediate: Intermediate,
    /// Intra-group packets: direct, or the rule against a detour (`H_m = 1`, `H_nm = 2`).
    pub intra_group: IntraGroup,
    /// The decision rule: ICS'24's hop-weighted one, or BookSim2's `q_m <= 2·q_nm + 30 + bias`.
    pub form: UgalForm,
    /// Which parallel links toward the destination group are minimal candidates.
    pub min_gateways: MinGateways,
}

/// Which of the links toward the destination group a source router draws its minimal
/// candidates from (it matters only with `links_per_pair > 1`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum MinGateways {
    /// This router's own links when it has one, else every link of its group: only the
    /// shortest minimal paths.
    #[default]
    OwnFirst,
    /// Every link of the group, own or not: the 4 minimal paths per router pair that ICS'24
    /// §4.1 counts on dfly(4,8,4,9).
    All,
}

/// The decision rule of UGAL-L.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum UgalForm {
    /// `q_m·H_m <= q_nm·H_nm + bias` (ICS'24 Algorithm 1).
    #[default]
    HopWeighted,
    /// `q_m <= 2·q_nm + 30 + bias` on whole-port occupancies (BookSim2 master `ugal`).
    Booksim,
}

/// BookSim2 master's `adaptive_threshold` (`networks/dragonfly.cpp`).
const BOOKSIM_THRESHOLD: f64 = 30.0;

impl Default for UgalLParams {
    fn default() -> UgalLParams {
        UgalLParams {
            bias: 0.0,
            min_candidates: 1,
            nonmin_candidates: 1,
            intermediate: Intermediate::Outside,
            intra_group: IntraGroup::Minimal,
            form: UgalForm::HopWeighted,
            min_gateways: MinGateways::OwnFirst,
        }
    }
}

impl RoutingParams for UgalLParams {}

pub struct UgalL {
    params: UgalLParams,
    bias: f64,
    min_candidates: usize,
    nonmin_candidates: usize,
    /// `run.decision_probes`: count the minimal estimates of source decisions.
    probes: bool,
}

/// The series probes of source decisions (`run.decision_probes`, ICS'24 Fig. 17a): probe 0 sums
/// the minimal candidate's estimate as the rule compares it, probe 1 counts the decisions.
pub(crate) fn decision_probe_specs(on: bool) -> Vec<ProbeSpec> {
    if !on {
        return Vec::new();
    }
    vec![
        ProbeSpec::new("min_estimate_sum", ProbeKind::Series, "minimal estimates of source decisions (flits x hops)"),
        ProbeSpec::new("source_decisions", ProbeKind::Series, "source decisions between two candidates"),
    ]
}

/// Count a source decision's minimal estimate (declared by [`decision_probe_specs`]).
#[inline]
pub(crate) fn count_decision<R: Routing>(cx: &mut Ctx<'_, R>, on: bool, estimate: Option<f64>) {
    if let (true, Some(e)) = (on, estimate) {
        cx.count(0, e.max(0.0).round() as u64);
        cx.count(1, 1);
    }
}

/// One candidate path: its first port, its length and its port's occupancy (every VC).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Candidate {
    pub port: u16,
    pub hops: u32,
    pub q: u32,
}

/// The two candidates of a source decision: the best minimal and the best Valiant path (to
/// intermediate router `ir`), and whether the minimal one leaves by this router's own global
/// link.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Choice {
    pub min: Candidate,
    pub nm: Candidate,
    pub ir: u32,
    pub direct: bool,
}

/// What UGAL-LE adds to a minimal candidate's estimate `q_m · H_m` (ICS'24 Algorithm 2): given
/// `q_m` and whether the deciding router has its own global link to the destination group.
pub(crate) trait MinimalPenalty {
    fn penalty(&self, q_m: u32, direct: bool) -> f64;
}

/// UGAL-L itself: no penalty.
pub(crate) struct NoPenalty;

impl MinimalPenalty for NoPenalty {
    #[inline(always)]
    fn penalty(&self, _q_m: u32, _direct: bool) -> f64 {
        0.0
    }
}

impl Candidate {
    fn cost(&self) -> u64 {
        self.q as u64 * self.hops as u64
    }
}

/// Algorithm 1, line 1.
#[inline]
pub fn minimal_wins(q_m: u32, h_m: u32, q_nm: u32, h_nm: u32, bias: f64) -> bool {
    (q_m as u64 * h_m as u64) as f64 <= (q_nm as u64 * h_nm as u64) as f64 + bias
}

impl UgalL {
    pub fn new(params: UgalLParams) -> UgalL {
        UgalL {
            bias: params.bias,
            min_candidates: params.min_candidates,
            nonmin_candidates: params.nonmin_candidates,
            params,
            probes: false,
        }
    }

    /// With the decision probes of `run.decision_probes` when `on`.
    pub fn with_probes(mut self, on: bool) -> UgalL {
        self.probes = on;
        self
    }

    /// The best of `min_candidates` gateways toward the destination group, drawn without
    /// replacement (selection sampling, no allocation) from the pool `min_gateways` names, and
    /// whether it is this router's own link.
    fn best_minimal(&self, view: &RouterView, pkt: &Packet, rng: &mut Rng) -> (Candidate, bool) {
        let topo = view.topo;
        let gws = topo.gateways(view.group, topo.group_of(pkt.dst_router));
        let is_own = |gw: &(u16, u16)| gw.0 as u32 == view.index;
        let own = gws.iter().filter(|gw| is_own(gw)).count();
        let only_own = own > 0 && self.params.min_gateways == MinGateways::OwnFirst;
        let pool = gws.iter().filter(|gw| !only_own || is_own(gw));
        let n = if only_own { own } else { gws.len() };
        let mut wanted = self.min_candidates.min(n);
        let mut best: Option<(Candidate, bool)> = None;
        for (i, gw) in pool.enumerate() {
            let (r, k) = *gw;
            if wanted == 0 {
                break;
            }
            if wanted < n - i && rng.gen_range(0..n - i) >= wanted {
                continue;
            }
            wanted -= 1;
            let port = port_to_gateway(view, (r, k));
            let gw_router = view.group * topo.a as u32 + r as u32;
            let landing = topo.peer(gw_router, topo.first_global_port() + k).map_or(u32::MAX, |(pr, _)| pr);
            let at_own = is_own(gw);
            let hops = !at_own as u32 + 1 + (landing != pkt.dst_router) as u32;
            let c = Candidate { port, hops, q: view.port_occupancy(port) };
            if best.is_none_or(|(b, _)| c.cost() < b.cost()) {
                best = Some((c, at_own));
            }
        }
        best.expect("every pair of groups is connected")
    }

    /// The best of `nonmin_candidates` Valiant paths, with its intermediate router.
    fn best_nonminimal(&self, view: &RouterView, pkt: &Packet, rng: &mut Rng) -> Option<(Candidate, u32)> {
        let topo = view.topo;
        let dst_group = topo.group_of(pkt.dst_router);
        let mut best: Option<(Candidate, u32)> = None;
        for _ in 0..self.nonmin_candidates {
            let Some(ir) = draw_intermediate(view, self.params.intermediate, view.group, dst_group, rng) else {
                continue;
            };
            let port = port_to_group(view, topo.group_of(ir), rng);
            let hops = topo.min_hops(view.router, ir) + topo.min_hops(ir, pkt.dst_router);
            let c = Candidate { port, hops, q: view.port_occupancy(port) };
            if best.is_none_or(|(b, _)| c.cost() < b.cost()) {
                best = Some((c, ir));
            }
        }
        best
    }

    /// The source router's decision, with `extra`'s penalty on the minimal side (none for
    /// UGAL-L itself), and the minimal estimate it compared (None without two candidates).
    pub(crate) fn decide_at_source(
        &self,
        view: &RouterView,
        pkt: &mut Packet,
        rng: &mut Rng,
        extra: &impl MinimalPenalty,
    ) -> (Hop, Option<f64>) {
        let mut estimate = None;
        let hop = self.decide_with(view, pkt, rng, |ch, _| match self.params.form {
            UgalForm::HopWeighted => {
                let (q_m, q_nm) =
                    candidate_occupancy(view, ch.min.port, ch.nm.port, LAYOUT.vc.to_destination, LAYOUT.vc.to_group);
                let penalty = extra.penalty(q_m, ch.direct);
                estimate = Some((q_m as u64 * ch.min.hops as u64) as f64 + penalty);
                minimal_wins(q_m, ch.min.hops, q_nm, ch.nm.hops, self.bias - penalty)
            }
            UgalForm::Booksim => {
                estimate = Some(ch.min.q as f64);
                minimal_wins(ch.min.q, 1, ch.nm.q, 2, BOOKSIM_THRESHOLD + self.bias)
            }
        });
        (hop, estimate)
    }

    /// The source router's decision by `minimal`, which sees both candidates (and the router's
    /// random stream) and says whether the minimal one wins; the candidates are drawn as
    /// UGAL-L draws them. Intra-group packets never reach `minimal`.
    pub(crate) fn decide_with(
        &self,
        view: &RouterView,
        pkt: &mut Packet,
        rng: &mut Rng,
        minimal: impl FnMut(&Choice, &mut Rng) -> bool,
    ) -> Hop {
        self.decide_or_forced(view, pkt, rng, minimal, |_| {})
    }

    /// [`Self::decide_with`], and `forced` called with the minimal candidate of an inter-group
    /// packet that has no Valiant candidate (its intermediate fell in the source or the
    /// destination group), which goes minimal without a decision.
    pub(crate) fn decide_or_forced(
        &self,
        view: &RouterView,
        pkt: &mut Packet,
        rng: &mut Rng,
        mut minimal: impl FnMut(&Choice, &mut Rng) -> bool,
        mut forced: impl FnMut(&Candidate),
    ) -> Hop {
        let topo = view.topo;
        hdr_mut(pkt).phase = TO_DESTINATION;
        if view.group == topo.group_of(pkt.dst_router) {
            let bias = self.bias;
            return route_intra_group(
                view,
                pkt,
                self.params.intra_group,
                LAYOUT.vc.to_group,
                LAYOUT.vc.destination,
                rng,
                |m, n| !minimal_wins(view.port_occupancy(m), 1, view.port_occupancy(n), 2, bias),
            );
        }
        let (min, direct) = self.best_minimal(view, pkt, rng);
        match self.best_nonminimal(view, pkt, rng) {
            Some((nm, ir)) => {
                if !minimal(&Choice { min, nm, ir, direct }, rng) {
                    LAYOUT.start_valiant(topo, pkt, ir);
                    return Hop { port: nm.port, vc: LAYOUT.vc.to_group };
                }
            }
            None => forced(&min),
        }
        Hop { port: min.port, vc: LAYOUT.vc.to_destination }
    }
}

impl UgalL {
    /// The VC of a Valiant packet's hops in its source group.
    pub(crate) const fn first_valiant_vc() -> u8 {
        LAYOUT.vc.to_group
    }

    /// The hop after the source router (the Valiant layout's), shared with UGAL-LE.
    pub(crate) fn next_hop(&self, view: &RouterView, pkt: &mut Packet, rng: &mut Rng) -> Hop {
        LAYOUT.next_hop(view, pkt, rng)
    }
}

impl Routing for UgalL {
    type Header = ValiantHeader;
    type RouterState = ();
    type Msg = NoMsg;

    fn vcs(&self) -> VcCounts {
        LAYOUT.vcs()
    }

    fn max_hops(&self) -> u32 {
        LAYOUT.max_hops()
    }

    fn router_state(&self, _topo: &Topology, _router: u32) {}

    fn probes(&self) -> Vec<ProbeSpec> {
        decision_probe_specs(self.probes)
    }

    fn route(&self, cx: &mut Ctx<'_, Self>, pkt: &mut Packet) -> Hop {
        if cx.view.is_source_router() && pkt.hops == 0 {
            let (hop, estimate) = self.decide_at_source(&cx.view, pkt, cx.rng, &NoPenalty);
            count_decision(cx, self.probes, estimate);
            return hop;
        }
        self.next_hop(&cx.view, pkt, cx.rng)
    }

    #[inline(always)]
    fn route_without_view(&self, topo: &Topology, router: u32, in_port: u16, pkt: &mut Packet) -> Option<Hop> {
        LAYOUT.table_hop_after_source(topo, router, in_port, pkt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::harness::{walk_pkt, Net};
    use crate::topology::LinkClass;

    const FAR: u32 = 5 * 32 + 6; // group 5, router index 1: minimal path 0 -> router 1 -> group 5

    fn cfg(bias: f64, nonmin: usize) -> UgalLParams {
        UgalLParams { bias, nonmin_candidates: nonmin, ..UgalLParams::default() }
    }

    #[test]
    fn hop_weighting_against_the_bias() {
        assert!(minimal_wins(0, 3, 0, 5, 0.0));
        // 4 flits on a 3-hop minimal path (12) vs 2 flits on a 5-hop Valiant path (10).
        assert!(!minimal_wins(4, 3, 2, 5, 0.0));
        assert!(minimal_wins(4, 3, 2, 5, 2.0));
        assert!(!minimal_wins(4, 3, 2, 5, 1.5));
        // A negative bias favours the Valiant path.
        assert!(!minimal_wins(1, 3, 0, 5, -1.0));
    }

    #[test]
    fn empty_network_is_minimal_and_a_congested_minimal_port_diverts() {
        let mut net = Net::new(4, 8, 4, 1);
        let alg = UgalL::new(cfg(0.0, 1));
        for seed in 0..100 {
            assert!(!walk_pkt(&net, &alg, 0, FAR, seed).1.nonminimal);
        }
        // 3 flits on the minimal local port (H_m = 3 when the link lands off router 1 of
        // group 5): 9 > 0 for every Valiant candidate on an empty port.
        let min_port = net.topo.local_port(0, 1);
        net.set_used_credits(0, min_port, 0, 3);
        for seed in 0..300 {
            let (path, pkt) = walk_pkt(&net, &alg, 0, FAR, seed);
            // Same port (intermediate behind router 1): per-VC, VC2 is empty -> minimal.
            assert_eq!(pkt.nonminimal, path[0].port != min_port, "seed {seed}");
        }
    }

    /// Router 0 of dfly(4,8,4,33) with `q_min` flits on the minimal port toward FAR and
    /// `q_other` on every other non-host port (all on VC0).
    fn loaded(q_min: u32, q_other: u32) -> (Net, u16) {
        // BookSim's 256-flit VC buffers: the occupancies below exceed the harness's 20.
        let mut net = Net::of_cap(Net::new(4, 8, 4, 1).topo, 256);
        let min_port = net.topo.local_port(0, 1);
        for port in net.topo.first_local_port()..net.topo.radix as u16 {
            net.set_used_credits(0, port, 0, if port == min_port { q_min } else { q_other });
        }
        (net, min_port)
    }

    #[test]
    fn hop_counts_weigh_the_occupancies() {
        // The minimal path to FAR has H_m = 3 (local, global, local). Valiant paths through a
        // router have 2 to 6 hops.
        // q_m = 1, q_nm = 2: 3 < 2·H_nm for every H_nm >= 2, so always minimal.
        let (net, _) = loaded(1, 2);
        let alg = UgalL::new(cfg(0.0, 1));
        for seed in 0..300 {
            assert!(!walk_pkt(&net, &alg, 0, FAR, seed).1.nonminimal, "seed {seed}");
        }
        // q_m = 2, q_nm = 1: minimal iff 6 <= H_nm + b. The unweighted reference rule would
        // keep every packet minimal (2 <= floor(2·1)); here Valiant paths of at most 5 hops
        // win, 6-hop ones lose, and a bias of 1 flit moves the cut to 4 hops.
        let (net, min_port) = loaded(2, 1);
        for (bias, longest) in [(0.0, 5), (1.0, 4)] {
            let alg = UgalL::new(cfg(bias, 1));
            let (mut nonmin, mut min) = (0, 0);
            for seed in 0..1000 {
                let (path, pkt) = walk_pkt(&net, &alg, 0, FAR, seed);
                if pkt.nonminimal {
                    let ir = super::super::valiant::hdr(&pkt).inter_router;
                    let h_nm = net.topo.min_hops(0, ir) + net.topo.min_hops(ir, pkt.dst_router);
                    assert_eq!(path.len() as u32, h_nm);
                    assert!(path.len() <= longest, "bias {bias}: {path:?}");
                    nonmin += 1;
                } else {
                    assert_eq!(path[0].port, min_port);
                    min += 1;
                }
            }
            assert!(nonmin > 30 && min > 100, "bias {bias}: {nonmin} {min}");
        }
    }

    #[test]
    fn more_candidates_pick_the_least_loaded_valiant_port() {
        // Congest every port of router 0 except the local port to router 7 (whose global links
        // lead to groups 29-32); the minimal port (to router 1) carries the most.
        let mut net = Net::new(4, 8, 4, 1);
        let quiet = net.topo.local_port(0, 7);
        let min_port = net.topo.local_port(0, 1);
        for port in net.topo.first_local_port()..net.topo.radix as u16 {
            if port != quiet {
                net.set_used_credits(0, port, 0, if port == min_port { 12 } else { 6 });
            }
        }
        let one = UgalL::new(cfg(0.0, 1));
        let eight = UgalL::new(cfg(0.0, 8));
        let share = |alg: &UgalL| {
            (0..500).filter(|&s| walk_pkt(&net, alg, 0, FAR, s).0[0].port == quiet).count() as f64 / 500.0
        };
        let (s1, s8) = (share(&one), share(&eight));
        // One candidate lands behind router 7 with probability 4/31; the best of eight with
        // 1 - (27/31)^8 ≈ 0.67.
        assert!(s1 < 0.25 && s8 > 0.5, "{s1} {s8}");
    }

    #[test]
    fn parallel_links_offer_several_minimal_candidates() {
        // dfly(4,8,4,9) with 4 links per group pair: router 1 of group 0 has no own link to
        // group 1, so the minimal candidates are local hops to the 4 gateways. Congest three.
        let mut net = Net::new(4, 8, 4, 4);
        let gws: Vec<(u16, u16)> = net.topo.gateways(0, 1).to_vec();
        let me = (0..8u32).find(|r| gws.iter().all(|g| g.0 as u32 != *r)).unwrap();
        let free = port_to_gateway(&net.view(me, 0), gws[3]);
        for &gw in &gws[..3] {
            let port = port_to_gateway(&net.view(me, 0), gw);
            net.set_used_credits(me, port, 0, 9);
        }
        let src = me * 4;
        let dst = 32 + 5;
        let alg = UgalL::new(UgalLParams { min_candidates: 4, nonmin_candidates: 1, ..cfg(1000.0, 1) });
        for seed in 0..100 {
            let (path, pkt) = walk_pkt(&net, &alg, src, dst, seed);
            assert!(!pkt.nonminimal);
            assert_eq!(path[0].port, free);
        }
    }

    #[test]
    fn min_gateways_all_draws_every_link_of_the_group() {
        // dfly(4,8,4,9), 4 links per group pair: a router that owns one link to group 1 takes
        // it with `own-first`; with `all` each of the 4 links is the minimal candidate about a
        // quarter of the time, the other three through a local hop to their router, and the
        // packet still crosses exactly one global link.
        let net = Net::new(4, 8, 4, 4);
        let gws: Vec<(u16, u16)> = net.topo.gateways(0, 1).to_vec();
        let me = gws[0].0 as u32;
        assert_eq!(gws.iter().filter(|g| g.0 as u32 == me).count(), 1);
        let ports: Vec<u16> = gws.iter().map(|&gw| port_to_gateway(&net.view(me, 0), gw)).collect();
        let (src, dst) = (me * 4, 32 + 5);
        let firsts = |gateways: MinGateways| {
            let alg = UgalL::new(UgalLParams { min_gateways: gateways, ..cfg(1000.0, 1) });
            let mut counts = [0usize; 4];
            for seed in 0..400 {
                let (path, pkt) = walk_pkt(&net, &alg, src, dst, seed);
                assert!(!pkt.nonminimal);
                let globals = path.iter().filter(|h| net.topo.class_of_port(h.port) == LinkClass::Global).count();
                assert_eq!(globals, 1, "seed {seed}");
                counts[ports.iter().position(|&p| p == path[0].port).expect("a gateway's first port")] += 1;
            }
            counts
        };
        assert_eq!(firsts(MinGateways::OwnFirst), [400, 0, 0, 0]);
        let all = firsts(MinGateways::All);
        assert!(all.iter().all(|&c| (60..=140).contains(&c)), "{all:?}");
    }

    /// BookSim2 master's rule: minimal iff `q_m <= 2·q_nm + 30`, whatever the path lengths, on
    /// whole-port occupancies; a Valiant candidate behind the minimal port never wins.
    #[test]
    fn booksim_form_is_its_fixed_ratio_and_threshold() {
        let booksim = |bias| UgalL::new(UgalLParams { form: UgalForm::Booksim, ..cfg(bias, 1) });
        for (q_min, q_other, bias, diverts) in
            [(30, 0, 0.0, false), (31, 0, 0.0, true), (70, 20, 0.0, false), (71, 20, 0.0, true), (71, 20, 1.0, false)]
        {
            let (net, min_port) = loaded(q_min, q_other);
            let alg = booksim(bias);
            let mut nonmin = 0;
            for seed in 0..300 {
                let (path, pkt) = walk_pkt(&net, &alg, 0, FAR, seed);
                // The minimal port's own Valiant candidates compare equal occupancies: minimal.
                assert!(!(pkt.nonminimal && path[0].port == min_port), "q_min {q_min}, seed {seed}");
                nonmin += pkt.nonminimal as u32;
            }
            // About 26 of 31 intermediate groups lie behind another port.
            assert_eq!(nonmin > 200, diverts, "q_min {q_min}, q_other {q_other}, bias {bias}: {nonmin}");
            assert!(nonmin == 0 || diverts, "q_min {q_min}: {nonmin}");
        }
    }
}
