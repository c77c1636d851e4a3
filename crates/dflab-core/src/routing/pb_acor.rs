//! PB-ACOR — Piggyback with ACOR's misrouting levels (Benito et al., JPDC'19 §4.3 and §5.3;
//! FOGSim's `PB_ACOR` routing at dcdd75f; acor-family note A8): PB's source decision
//! ([`super::pb`]) whose non-minimal candidate is drawn under the policy of the switch's
//! ACOR-Switch level ([`super::acor_level`]).
//!
//! * Only refused attempts of packets whose last decision misrouted count toward the level
//!   (a packet waiting for a minimal path does not: FOGSim counts packets flagged misrouted).
//! * Restricted (RPB) and recomputing, as the paper's PB-ACOR; switch-level management only
//!   (the paper evaluates no per-packet variant).
//! * Parameters default to the paper's Table 3 for PB-ACOR: HI 500 ns, IT 15/50, DT 5/15,
//!   sequence 3L, and PB's `c_g_pct = 120`, `t_g_packets = 5`, `t_l = 0`.
//!
//! Probes: the family's (`reroutes`, `accepted_flits_by_source_router`), PB's
//! (`pb_flagged`, `pb_misrouted`) and ACOR's (`acor_level`, `paths_level_<n>`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::acor::{level_probes, SwitchLevels};
use super::acor_level::{Hysteresis, Levels, Sequence, SwitchLevel};
use super::misroute::{self, MisrouteHeader, Policy};
use super::pb::{PbParams, PbRule, PB_PROBES};
use super::{BuildCtx, Ctx, Hooks, Hop, NoMsg, Routing, VcCounts};
use crate::config::RoutingParams;
use crate::error::Result;
use crate::network::Packet;
use crate::stats::ProbeSpec;
use crate::topology::Topology;
use crate::units::Time;

/// The parameters of PB-ACOR (Table 3 of the paper).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PbAcorParams {
    /// The sequence of misrouting policies of the non-minimal candidate (Table 2).
    pub sequence: Sequence,
    /// Hysteresis interval.
    #[schemars(range(min = 0.001, max = 1.0e9))]
    pub hi_ns: f64,
    /// Whether a level increase restarts the hysteresis window and clears the count
    /// (`restart`, FOGSim) or the windows run on a fixed grid (`fixed`, §4.2.2 as written).
    pub hysteresis: Hysteresis,
    /// Refused attempts of misrouted packets that raise level 1 to 2.
    #[schemars(range(min = 1))]
    pub it1: u32,
    /// ... level 2 to 3 (3L only; PB-ACOR's Table 3 value is 50).
    #[schemars(range(min = 1))]
    pub it2: u32,
    /// At most this many in a window lower level 2 to 1.
    pub dt1: u32,
    /// At most this many lower level 3 to 2 (3L only).
    pub dt2: u32,
    /// PB's `C_g` (percent).
    #[schemars(range(min = 0.0, max = 100000.0))]
    pub c_g_pct: f64,
    /// PB's `T_g` (packets).
    #[schemars(range(min = 0.0, max = 100000.0))]
    pub t_g_packets: f64,
    /// PB's `T_l` (packets).
    #[schemars(range(min = 0.0, max = 100000.0))]
    pub t_l: f64,
    /// Cycles between two computations of a router's saturation flags (FOGSim: every cycle).
    #[schemars(range(min = 1, max = 1000000))]
    pub flag_period_cycles: u32,
}

impl Default for PbAcorParams {
    fn default() -> Self {
        let pb = PbParams::default();
        PbAcorParams {
            sequence: Sequence::ThreeL,
            hi_ns: 500.0,
            hysteresis: Hysteresis::Restart,
            it1: 15,
            it2: 50,
            dt1: 5,
            dt2: 15,
            c_g_pct: pb.c_g_pct,
            t_g_packets: pb.t_g_packets,
            t_l: pb.t_l,
            flag_period_cycles: pb.flag_period_cycles,
        }
    }
}

impl RoutingParams for PbAcorParams {}

/// A router's state: PB's flag ticking and ACOR's switch level.
#[derive(Debug, Default)]
pub struct PbAcorState {
    ticking: bool,
    level: SwitchLevel,
}

pub struct PbAcor {
    rule: PbRule,
    switch: SwitchLevels,
}

impl PbAcor {
    pub fn new(cx: &BuildCtx, p: PbAcorParams) -> Result<PbAcor> {
        let pb = PbParams {
            policy: Policy::RrgSw,
            restricted: true,
            recompute: true,
            reevaluate: true,
            c_g_pct: p.c_g_pct,
            t_g_packets: p.t_g_packets,
            t_l: p.t_l,
            flag_period_cycles: p.flag_period_cycles,
        };
        let levels = Levels::new(p.sequence, p.hi_ns, p.hysteresis, (p.it1, p.it2), (p.dt1, p.dt2))?;
        Ok(PbAcor { rule: PbRule::new(cx, pb), switch: SwitchLevels { levels, probe: PB_PROBES } })
    }

    /// PB's decision with the candidate of the switch's level, written into `pkt`; its hop.
    fn decide(&self, cx: &mut Ctx<'_, Self>, pkt: &mut Packet, level: u8) -> Hop {
        let d = self.rule.decide(cx, pkt, self.switch.levels.policy(level));
        misroute::commit(pkt, &d, level, cx.view.now);
        self.rule.hop(cx, pkt)
    }
}

impl Routing for PbAcor {
    type Header = MisrouteHeader;
    type RouterState = PbAcorState;
    type Msg = NoMsg;
    const HOOKS: Hooks = Hooks::REROUTE.with(Hooks::TIMER).with(Hooks::DELIVER);

    fn vcs(&self) -> VcCounts {
        self.rule.ladder.vcs()
    }

    fn max_hops(&self) -> u32 {
        6
    }

    fn router_state(&self, _topo: &Topology, _router: u32) -> PbAcorState {
        PbAcorState::default()
    }

    fn probes(&self) -> Vec<ProbeSpec> {
        let mut specs = PbRule::probe_specs();
        specs.extend(level_probes(self.switch.levels.top()));
        specs
    }

    fn route(&self, cx: &mut Ctx<'_, Self>, pkt: &mut Packet) -> Hop {
        let mut s = std::mem::take(cx.state);
        self.rule.start_ticking(cx, &mut s.ticking);
        let source = cx.view.is_source_router() && pkt.hops == 0;
        let level = if source { self.switch.current(cx, &mut s.level) } else { 0 };
        *cx.state = s;
        if source {
            self.decide(cx, pkt, level)
        } else {
            self.rule.hop(cx, pkt)
        }
    }

    fn reroute_at_injection(&self, cx: &mut Ctx<'_, Self>, pkt: &mut Packet, _hop: Hop) -> Option<Hop> {
        if !misroute::new_attempt(pkt, cx.view.now, self.rule.cycle) {
            return None;
        }
        cx.count(misroute::PROBE_REROUTES, 1);
        let mut s = std::mem::take(cx.state);
        if pkt.nonminimal {
            self.switch.blocked(cx, &mut s.level);
        }
        let level = self.switch.current(cx, &mut s.level);
        *cx.state = s;
        Some(self.decide(cx, pkt, level))
    }

    fn reroute_interval(&self) -> Option<Time> {
        Some(self.rule.cycle)
    }

    /// One timer serves both clocks: PB's flag tick every cycle and ACOR's window ends.
    fn on_timer(&self, cx: &mut Ctx<'_, Self>) {
        let mut s = std::mem::take(cx.state);
        if s.ticking {
            self.rule.tick(cx, &mut s.ticking);
        }
        if s.level.armed {
            self.switch.on_timer(cx, &mut s.level);
        }
        *cx.state = s;
    }

    fn on_deliver(&self, cx: &mut Ctx<'_, Self>, pkt: &Packet) {
        misroute::count_delivery(cx, pkt);
        self.switch.count_delivery(cx, pkt);
    }
}
