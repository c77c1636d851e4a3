//! ACOR — Adaptive Congestion-Oblivious Routing (Benito et al., JPDC'19 §4.2), as FOGSim's
//! `ACOR` routing runs it (`routing/acor.cc`, `switch/switchModule.cc` at dcdd75f; acor-family
//! notes A4–A6): oblivious non-minimal routing whose misrouting policy is raised along a
//! sequence ([`Sequence`]: `2LA`, `2LB`, `3L`) when packets are blocked at injection.
//!
//! * Every packet to another switch is Valiant-routed: an inter-group packet under the policy
//!   of its level, an intra-group packet inside its group (RVAL), whatever the level.
//! * Recomputation is always on: a packet refused at the head of its injection buffer draws a
//!   new path at every attempt (every cycle), at the level current then; never in transit.
//! * `routing.management = "switch"` (ACOR-Switch, default): one level per switch, raised
//!   when the switch's refused attempts of misrouted packets reach `IT` and lowered when a
//!   hysteresis window of `hi_ns` ends with at most `DT` of them ([`super::acor_level`]).
//!   `"packet"` (ACOR-Packet): each packet starts at level 1 and goes up one level at each of
//!   its refused attempts.
//! * `routing.hysteresis = "restart"` (default, FOGSim): a level increase clears the count and
//!   restarts the switch's window; `"fixed"`: the windows run on a fixed grid and only their
//!   ends clear the count, as §4.2.2 reads (ACOR-Switch and PB-ACOR).
//! * Parameters default to the paper's Table 3 (HI 500 ns, IT 15/500, DT 5/15, sequence 3L).
//! * VCs: FOGSim's ladder `l0 g0 l1 l2 g1 l3`; at most 6 router hops.
//!
//! Observability: the trace probe `acor_level` records every switch's level (1-based, as in
//! the paper; every switch starts at 1) at each change; `paths_level_<n>` count delivered
//! inter-group packets by the level of their last draw (FOGSim's "% packets status").

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::acor_level::{Change, Hysteresis, Levels, Management, Sequence, SwitchLevel};
use super::misroute::{self, MisrouteHeader};
use super::paths::port_to_group;
use super::val::attempt_period;
use super::vc::Ladder;
use super::{BuildCtx, Ctx, Hooks, Hop, NoMsg, Routing, VcCounts};
use crate::config::RoutingParams;
use crate::error::Result;
use crate::network::Packet;
use crate::stats::{ProbeKind, ProbeSpec};
use crate::topology::Topology;
use crate::units::Time;

/// The parameters of ACOR (Table 3 of the paper).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct AcorParams {
    /// The sequence of misrouting policies (Table 2).
    pub sequence: Sequence,
    /// Where the level lives: per switch (hysteresis) or per packet.
    pub management: Management,
    /// Hysteresis interval (ACOR-Switch).
    #[schemars(range(min = 0.001, max = 1.0e9))]
    pub hi_ns: f64,
    /// Whether a level increase restarts the hysteresis window and clears the count
    /// (`restart`, FOGSim) or the windows run on a fixed grid (`fixed`, §4.2.2 as written).
    pub hysteresis: Hysteresis,
    /// Refused attempts that raise level 1 to 2.
    #[schemars(range(min = 1))]
    pub it1: u32,
    /// Refused attempts that raise level 2 to 3 (3L only).
    #[schemars(range(min = 1))]
    pub it2: u32,
    /// At most this many refused attempts in a window lower level 2 to 1.
    pub dt1: u32,
    /// At most this many lower level 3 to 2 (3L only).
    pub dt2: u32,
}

impl Default for AcorParams {
    fn default() -> Self {
        AcorParams {
            sequence: Sequence::ThreeL,
            management: Management::Switch,
            hi_ns: 500.0,
            hysteresis: Hysteresis::Restart,
            it1: 15,
            it2: 500,
            dt1: 5,
            dt2: 15,
        }
    }
}

impl RoutingParams for AcorParams {}

/// The probe of the switch levels and the per-level path counts, after `base` earlier probes.
pub fn level_probes(top: u8) -> Vec<ProbeSpec> {
    let mut specs =
        vec![ProbeSpec::new("acor_level", ProbeKind::Trace, "each switch's ACOR level (1-based) at each change")];
    for l in 1..=top + 1 {
        specs.push(ProbeSpec::new(
            &format!("paths_level_{l}"),
            ProbeKind::Total,
            &format!("inter-group packets delivered on a path drawn at ACOR level {l}"),
        ));
    }
    specs
}

/// The ACOR switch-level bookkeeping of a routing whose probes `acor_level` and `paths_level_*`
/// start at `probe` (shared with PB-ACOR).
pub struct SwitchLevels {
    pub levels: Levels,
    pub probe: usize,
}

impl SwitchLevels {
    /// The switch's level for a decision now (its timer resumes if it had stopped).
    pub fn current<R: Routing>(&self, cx: &mut Ctx<'_, R>, s: &mut SwitchLevel) -> u8 {
        if let Some(at) = s.ensure_armed(&self.levels, cx.view.now) {
            cx.wake_at(at);
        }
        s.level
    }

    /// A refused attempt of a misrouted packet: count it (the level may go up at once).
    pub fn blocked<R: Routing>(&self, cx: &mut Ctx<'_, R>, s: &mut SwitchLevel) {
        self.current(cx, s);
        if s.blocked_attempt(&self.levels, cx.view.now) == Change::Up {
            cx.record(self.probe, s.level as u64 + 1);
        }
    }

    /// The switch's timer.
    pub fn on_timer<R: Routing>(&self, cx: &mut Ctx<'_, R>, s: &mut SwitchLevel) {
        let (change, next) = s.on_timer(&self.levels, cx.view.now);
        if change != Change::None {
            cx.record(self.probe, s.level as u64 + 1);
        }
        if let Some(at) = next {
            cx.wake_at(at);
        }
    }

    /// The delivery count by level of an inter-group packet.
    pub fn count_delivery<R: Routing>(&self, cx: &mut Ctx<'_, R>, pkt: &Packet) {
        let topo = cx.view.topo;
        if topo.group_of(topo.router_of_node(pkt.src)) != topo.group_of(pkt.dst_router) {
            cx.count(self.probe + 1 + misroute::hdr(pkt).level as usize, 1);
        }
    }
}

pub struct Acor {
    params: AcorParams,
    switch: SwitchLevels,
    ladder: Ladder,
    period: Time,
}

impl Acor {
    pub fn new(cx: &BuildCtx, params: AcorParams) -> Result<Acor> {
        let levels = Levels::new(
            params.sequence,
            params.hi_ns,
            params.hysteresis,
            (params.it1, params.it2),
            (params.dt1, params.dt2),
        )?;
        Ok(Acor {
            params,
            switch: SwitchLevels { levels, probe: misroute::COMMON_PROBES },
            ladder: misroute::valiant_ladder(),
            period: attempt_period(cx),
        })
    }

    /// Draw and write the packet's path at `level`; its first hop.
    fn decide(&self, cx: &mut Ctx<'_, Self>, pkt: &mut Packet, level: u8) -> Hop {
        let (topo, router) = (cx.view.topo, cx.view.router);
        if pkt.dst_router != router {
            let policy = self.switch.levels.policy(level);
            let d = misroute::draw(topo, router, pkt.dst_router, policy, true, cx.rng);
            misroute::commit(pkt, &d, level, cx.view.now);
        }
        self.hop(cx, pkt)
    }

    fn hop(&self, cx: &mut Ctx<'_, Self>, pkt: &mut Packet) -> Hop {
        let (view, rng) = (&cx.view, &mut *cx.rng);
        misroute::next_hop(view.topo, &self.ladder, view.router, pkt, |g| Some(port_to_group(view, g, rng)))
            .expect("a view answers every hop")
    }
}

impl Routing for Acor {
    type Header = MisrouteHeader;
    type RouterState = SwitchLevel;
    type Msg = NoMsg;
    const HOOKS: Hooks = Hooks::REROUTE.with(Hooks::TIMER).with(Hooks::DELIVER);

    fn vcs(&self) -> VcCounts {
        self.ladder.vcs()
    }

    fn max_hops(&self) -> u32 {
        6
    }

    fn router_state(&self, _topo: &Topology, _router: u32) -> SwitchLevel {
        SwitchLevel::default()
    }

    fn probes(&self) -> Vec<ProbeSpec> {
        let mut specs = misroute::common_probes();
        specs.extend(level_probes(self.switch.levels.top()));
        specs
    }

    fn route(&self, cx: &mut Ctx<'_, Self>, pkt: &mut Packet) -> Hop {
        if !(cx.view.is_source_router() && pkt.hops == 0) {
            return self.hop(cx, pkt);
        }
        let level = match self.params.management {
            Management::Switch => {
                let mut s = std::mem::take(cx.state);
                let level = self.switch.current(cx, &mut s);
                *cx.state = s;
                level
            }
            Management::Packet => 0,
        };
        self.decide(cx, pkt, level)
    }

    #[inline(always)]
    fn route_without_view(&self, topo: &Topology, router: u32, in_port: u16, pkt: &mut Packet) -> Option<Hop> {
        if topo.is_host_port(in_port) && pkt.hops == 0 {
            return None;
        }
        misroute::next_hop(topo, &self.ladder, router, pkt, misroute::table_to_group(topo, router))
    }

    fn reroute_at_injection(&self, cx: &mut Ctx<'_, Self>, pkt: &mut Packet, _hop: Hop) -> Option<Hop> {
        if !misroute::new_attempt(pkt, cx.view.now, self.period) {
            return None;
        }
        cx.count(misroute::PROBE_REROUTES, 1);
        let level = match self.params.management {
            Management::Switch => {
                let mut s = std::mem::take(cx.state);
                if pkt.nonminimal {
                    self.switch.blocked(cx, &mut s);
                }
                let level = self.switch.current(cx, &mut s);
                *cx.state = s;
                level
            }
            Management::Packet => (misroute::hdr(pkt).level + 1).min(self.switch.levels.top()),
        };
        Some(self.decide(cx, pkt, level))
    }

    fn reroute_interval(&self) -> Option<Time> {
        Some(self.period)
    }

    fn on_timer(&self, cx: &mut Ctx<'_, Self>) {
        let mut s = std::mem::take(cx.state);
        self.switch.on_timer(cx, &mut s);
        *cx.state = s;
    }

    fn on_deliver(&self, cx: &mut Ctx<'_, Self>, pkt: &Packet) {
        misroute::count_delivery(cx, pkt);
        self.switch.count_delivery(cx, pkt);
    }
}
