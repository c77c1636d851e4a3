//! VAL — oblivious Valiant routing with the misrouting policies of Benito et al. (JPDC'19,
//! §2.3 Table 1), restricted Valiant (RVAL, §3.1) and recomputation (§3.2), as FOGSim's
//! `OBL` routing does them (`routing/obl.cc` at dcdd75f; acor-family notes A1–A3, A9).
//!
//! * Every packet whose destination is on another switch is misrouted: the source router
//!   draws its path under `routing.policy` (`crg-gr`, `crg-sw`, `rrg-gr`, `rrg-sw`; default
//!   `rrg-sw`, full Valiant) — see [`super::misroute`] for the paths. Packets to another node
//!   of the same switch go straight out.
//! * `routing.restricted = true` (RVAL): intra-group packets misroute only inside their group
//!   (L-L), through a switch drawn over all `a` switches of the group (FOGSim's draw).
//! * `routing.recompute = true`: while the packet heads its injection buffer and is refused by
//!   the crossbar, it draws a new path at every attempt (every cycle, one flit-time of the
//!   injection link, as FOGSim's allocator retries); never in transit.
//! * VCs: FOGSim's ladder `l0 g0 l1 l2 g1 l3` (4 local, 2 global VCs; acor-family A9).
//!
//! Deviations, each an option here or documented in docs/acor.md: the paper's VAL baselines
//! after Fig. 4 are restricted and recomputing (the `acor-*` presets set both; the algorithm's
//! defaults are plain Valiant); FOGSim's allocator may iterate twice per cycle, dflab asks
//! once per attempt. Not an option: with a `-gr` policy FOGSim's restricted intra-group
//! packets go minimally (their intermediate "group" is their own, reached at the source:
//! `obl.cc`, `valNodeReached`), where this VAL detours them through a switch of the group as
//! under every other policy (about 3 % of the flows under PERM on `acor-1056`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::misroute::{self, Drawn, MisrouteHeader, Policy};
use super::paths::port_to_group;
use super::vc::Ladder;
use super::{BuildCtx, Ctx, Hooks, Hop, NoMsg, Routing, VcCounts};
use crate::config::RoutingParams;
use crate::network::Packet;
use crate::stats::ProbeSpec;
use crate::topology::Topology;
use crate::units::{ns_to_ps, Time};

/// The parameters of VAL (and of the misrouting of PB, ACOR and PB-ACOR).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ValParams {
    /// The misrouting policy (Table 1 of the ACOR paper).
    pub policy: Policy,
    /// RVAL: intra-group packets misroute inside their group only (L-L).
    pub restricted: bool,
    /// Draw a new path at every refused attempt at the head of the injection buffer.
    pub recompute: bool,
}

impl Default for ValParams {
    fn default() -> Self {
        ValParams { policy: Policy::RrgSw, restricted: false, recompute: false }
    }
}

impl RoutingParams for ValParams {}

/// The period of FOGSim's allocation attempts: one cycle, one flit-time of the injection link
/// (a phit per cycle in FOGSim's setups).
pub fn attempt_period(cx: &BuildCtx) -> Time {
    let n = &cx.exp.network;
    ns_to_ps(n.flit_bytes as f64 / n.host_bw_gbps).max(1)
}

pub struct Val {
    params: ValParams,
    ladder: Ladder,
    period: Time,
}

impl Val {
    pub fn new(cx: &BuildCtx, params: ValParams) -> Val {
        Val { params, ladder: misroute::valiant_ladder(), period: attempt_period(cx) }
    }

    fn draw(&self, cx: &mut Ctx<'_, Self>, pkt: &mut Packet) -> Drawn {
        let (topo, router) = (cx.view.topo, cx.view.router);
        if pkt.dst_router == router {
            return Drawn::MINIMAL;
        }
        misroute::draw(topo, router, pkt.dst_router, self.params.policy, self.params.restricted, cx.rng)
    }

    fn hop(&self, cx: &mut Ctx<'_, Self>, pkt: &mut Packet) -> Hop {
        let (view, rng) = (&cx.view, &mut *cx.rng);
        misroute::next_hop(view.topo, &self.ladder, view.router, pkt, |g| Some(port_to_group(view, g, rng)))
            .expect("a view answers every hop")
    }
}

impl Routing for Val {
    type Header = MisrouteHeader;
    type RouterState = ();
    type Msg = NoMsg;
    const HOOKS: Hooks = Hooks::REROUTE.with(Hooks::DELIVER);

    fn vcs(&self) -> VcCounts {
        self.ladder.vcs()
    }

    fn max_hops(&self) -> u32 {
        6
    }

    fn router_state(&self, _topo: &Topology, _router: u32) {}

    fn probes(&self) -> Vec<ProbeSpec> {
        misroute::common_probes()
    }

    fn route(&self, cx: &mut Ctx<'_, Self>, pkt: &mut Packet) -> Hop {
        if cx.view.is_source_router() && pkt.hops == 0 {
            let d = self.draw(cx, pkt);
            misroute::commit(pkt, &d, 0, cx.view.now);
        }
        self.hop(cx, pkt)
    }

    #[inline(always)]
    fn route_without_view(&self, topo: &Topology, router: u32, in_port: u16, pkt: &mut Packet) -> Option<Hop> {
        if topo.is_host_port(in_port) && pkt.hops == 0 {
            return None;
        }
        misroute::next_hop(topo, &self.ladder, router, pkt, misroute::table_to_group(topo, router))
    }

    fn on_deliver(&self, cx: &mut Ctx<'_, Self>, pkt: &Packet) {
        misroute::count_delivery(cx, pkt);
    }

    fn reroute_at_injection(&self, cx: &mut Ctx<'_, Self>, pkt: &mut Packet, _hop: Hop) -> Option<Hop> {
        if !misroute::new_attempt(pkt, cx.view.now, self.period) {
            return None;
        }
        cx.count(misroute::PROBE_REROUTES, 1);
        if !self.params.recompute {
            return None;
        }
        let d = self.draw(cx, pkt);
        misroute::commit(pkt, &d, 0, cx.view.now);
        Some(self.hop(cx, pkt))
    }

    fn reroute_interval(&self) -> Option<Time> {
        self.params.recompute.then_some(self.period)
    }
}
