//! DGB — decoupled, gradient-descent-based bias (Kasan, Kim, Yi, Kim, ISCA'22), as its public
//! code does it (hanskasan/booksim2, branch `sst-macro` 8d00456e, `networks/dragonfly.cpp` and
//! `routers/iq_router.cpp` with `DGB_ON`, default modes `DGB_IDEAL`, `T_EST_END2END`,
//! `DECOUPLING`); and EDGB (Chaulagain & Yuan, ICS'24 §5.1.2), DGB with UGAL-LE's contention
//! term. Both decide once per inter-group packet at the source router, between one minimal and
//! one Valiant candidate (UGAL-L's candidates and 4-VC layout, `ugal_l.rs`, but for the
//! minimal packets' VC in the source group, below):
//!
//! * **Decision**: minimal iff `H_min·q_min ≤ ⌊H_nm·(q_nm + b)⌋⁺`, with `q` the first ports'
//!   whole occupancies, `b` the rounded bias of (destination router, non-minimal first port)
//!   and, when exactly one of the two first ports is global, the local one's `q` multiplied by
//!   `local_q_scale`. The fork hard-codes 8, its network's 256:32 global:local buffer ratio;
//!   dflab's default is the configured ratio (8 there, 1 with equal buffers as in ICS'24).
//! * **Latency samples at the source** (recorded with the decision): `T = ⌊q + q_g + d + H⌋`,
//!   at least `H`, when the destination's residual `d` has arrived, else `q + (H − 1)·q_g`;
//!   `q_g` is the occupancy of the global port by which the path leaves the source group (read
//!   at the gateway router). When both candidates share their first port, the chosen packet
//!   also gives the other class a sample, `max(q + (H − 1)·q_g, H)`, if that class has feedback.
//! * **Residual at the destination router** (as the packet leaves for its node):
//!   `d = elapsed − Σwire − H − Σq_src`: the cycles since the source's decision that the wire
//!   latencies, one cycle per hop and the occupancies met in the source group do not explain.
//!   It reaches the source router at once (the fork's `DGB_IDEAL`; so DGB is an oracle and runs
//!   one partition), keyed per destination for minimal packets and per (destination, first
//!   port) for non-minimal ones. When both candidates left by the same (local) first port,
//!   the second router also works out the other class's residual, `(t₂ − q₁) + (H − 1)·q₂`:
//!   `t₂` the cycles from the decision to the second router less the first hop's wire and
//!   one cycle, `q₁` the first port's occupancy, `q₂` that of the port the other class would
//!   take at the second router (`same_port_residual`, as the fork).
//! * **Net occupancies** (samples, residuals, one-sided estimates): the raw occupancy less
//!   the flits the port sent within twice its link's latency (`inflight = "window"`, the
//!   fork's `GetUsedCredit − GetInFlight`, `network/sent_window.rs`). The decision and the
//!   exploration's vacancy read raw occupancies, as the fork does.
//! * **VCs**: a minimal packet takes the Valiant packets' first VC in its source group, its
//!   global hop included (`minimal_vc = "shared"`, the fork's VC 0 for both), so a minimal
//!   packet stalled behind a full global link holds back the Valiant packets behind it.
//! * **Training** before each decision: `dgb_table.rs`.
//!
//! EDGB (`EDGB`) adds `q_min·max(C − 1, 0)` to `H_min·q_min` when the source router has no
//! global link to the destination group (`C` from its own contention counters,
//! `contention.rs`, as UGAL-LE); its latency samples are DGB's. Decisions recorded in
//! `docs/ugal-le.md`.
//!
//! Deviations from the fork, each an option or a documented approximation:
//! * Options away from the fork: `inflight = "exact"` leaves out exactly the flits on the wire
//!   and the credits on their way back (what the window estimates); `remove_inflight = false`
//!   reads raw occupancies everywhere; `same_port_residual = false` gives only the chosen
//!   class a residual; `minimal_vc = "own"` keeps UGAL-L's VC 2 for minimal packets.
//! * The non-minimal residual is keyed per (destination, first port) at the source, as the
//!   fork's learnsets average it; the fork keeps it per global port at the destination between
//!   learnsets, which `DGB_IDEAL` hands over after every sample anyway.
//! * The exploration reads a global minimal first port's vacancy against a local buffer, as
//!   the fork's `DoTraining` does (its global-port branch is never taken);
//!   `explore_global_port` reads it against the global buffer.
//! * The exploration's channel difference uses the network's link latencies (the fork's
//!   constants 10 and 100 cycles are its network's); `chan_local_cycles`/`chan_global_cycles`
//!   set them. Samples are recorded at the decision, not when the tail leaves the router.
//! * The feedback transport is the fork's default `DGB_IDEAL`; `feedback = "piggyback"` is its
//!   `DGB_PIGGYBACK` (learnsets and global queues carried by packets, `dgb_piggyback.rs`).
//! * Candidates are UGAL-L's. The intermediate is drawn as the fork's `GetIntmNode`
//!   does (`intermediate = "any-shortcut"`, the default): any router, and the intermediate
//!   group's entry router when it is also its exit toward the destination group. A draw in the
//!   destination group leaves the packet minimal; the fork then routes it through that
//!   group's drawn router (a local detour behind the same global link).
//! * A packet that goes minimal undecided (its intermediate in the source or destination
//!   group) gives a minimal sample and a residual, as the fork samples every inter-group
//!   packet (`sample_forced`, default); the fork also trains before and decides on a draw in
//!   the destination group (recording a non-minimal sample when it takes the detour), which
//!   dflab does not.

use bytemuck::{Pod, Zeroable};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::contention::ContentionCounters;
use super::dgb_piggyback::{Feedback, Piggyback, CARRIES_DEST, CARRIES_INTERMEDIATE};
use super::dgb_table::{table_bytes, DgbTable, Learning, Observation};
use super::ugal_l::{count_decision, decision_probe_specs, Candidate, Choice, MinGateways, UgalL, UgalLParams};
use super::valiant::ValiantHeader;
use super::{Ctx, Dest, Hooks, Hop, OracleView, Rng, RouterView, Routing, VcCounts, NO_PORT};
use crate::config::{Experiment, Intermediate, IntraGroup, RoutingParams};
use crate::error::{Error, Result};
use crate::network::Packet;
use crate::stats::ProbeSpec;
use crate::topology::{LinkClass, Topology, NONE};
use crate::units::{ns_to_ps, transfer_ps, Time};

/// The parameters of DGB (defaults: the fork's constants).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DgbParams {
    /// Learning rate `η` of the bias step (the fork's 0.25; ICS'24 uses 0.1).
    #[schemars(range(min = 0.0, max = 1000.0))]
    pub eta: f64,
    /// A (destination, port) bias is trained at least this often when used (cycles).
    #[schemars(range(min = 0.0, max = 1.0e9))]
    pub epoch_cycles: f64,
    /// Scale of the exploration step `p·explore_rate·chan_diff`.
    #[schemars(range(min = 0.0, max = 1000.0))]
    pub explore_rate: f64,
    /// Factor on the local first port's occupancy when the other candidate's is global
    /// (default: the global:local input-buffer ratio, the fork's hard-coded 8 on its 256:32
    /// buffers).
    #[schemars(range(min = 0.0, max = 1000.0))]
    pub local_q_scale: Option<f64>,
    /// Wire cycles of an extra local / global hop in the exploration's channel difference
    /// (default: the network's link latencies in cycles).
    pub chan_local_cycles: Option<f64>,
    pub chan_global_cycles: Option<f64>,
    /// How the Valiant intermediate router is drawn (`any-shortcut`: the fork's `GetIntmNode`).
    pub intermediate: Intermediate,
    /// Intra-group packets (minimal by default).
    pub intra_group: IntraGroup,
    /// Which parallel links are minimal candidates (as UGAL-L; the fork has one link per
    /// group pair).
    pub min_gateways: MinGateways,
    /// Latency estimates and residuals on net occupancies, without the flits and credits on
    /// the wires (the fork's `REMOVE_INFLIGHT`); false: the raw occupancies the decision reads.
    pub remove_inflight: bool,
    /// What the net occupancies leave out: `window` the flits sent within twice the link's
    /// latency (the fork's `GetInFlight`), `exact` the flits on the wire and the credits on
    /// their way back.
    pub inflight: Inflight,
    /// How residuals and the gateways' global queues reach the source router: `ideal` at once
    /// (the fork's default), `piggyback` carried by packets (`dgb_piggyback.rs`).
    pub feedback: Feedback,
    /// With `piggyback`: packets over local links carry their router's global queues; false:
    /// no router hears another's, as in the fork under BookSim's lookahead routing
    /// (`routing_delay = 0`), whose routing function runs for the next router at the previous
    /// one, so a packet carries the next router's own queues to it.
    pub piggyback_global_queues: bool,
    /// Packets that go minimal without a decision (their intermediate fell in the source or
    /// the destination group, as `any-shortcut` draws can) give a minimal latency sample at
    /// the source and a residual from the destination, as in the fork, whose `iq_router.cpp`
    /// samples every inter-group packet; false: only the decided packets do.
    pub sample_forced: bool,
    /// When the minimal first port is the router's own global link, the exploration reads its
    /// vacancy in a global buffer (true: what the fork's `DoTraining` means to do) or, as the
    /// fork does, in a local one (false: its test for a global port compares the port's index
    /// without the terminal ports with a router-port threshold and never holds, so a global
    /// port fuller than a local buffer leaves no vacancy and the owner of the minimal global
    /// link never explores). The same with equal buffers.
    pub explore_global_port: bool,
    /// When both candidates left by the same first port, the second router works out a
    /// residual for the class not taken from the occupancy of the port that class would take
    /// there, as the fork does; false: only the chosen class gets a residual.
    pub same_port_residual: bool,
    /// The VC of minimal packets in their source group: `shared` with the Valiant packets'
    /// first hops (the fork), `own` (UGAL-L's layout: a VC of their own).
    pub minimal_vc: MinimalVc,
}

impl Default for DgbParams {
    fn default() -> DgbParams {
        DgbParams {
            eta: 0.25,
            epoch_cycles: 50.0,
            explore_rate: 0.25,
            local_q_scale: None,
            chan_local_cycles: None,
            chan_global_cycles: None,
            intermediate: Intermediate::AnyShortcut,
            intra_group: IntraGroup::Minimal,
            min_gateways: MinGateways::OwnFirst,
            remove_inflight: true,
            inflight: Inflight::Window,
            feedback: Feedback::Ideal,
            piggyback_global_queues: true,
            sample_forced: true,
            explore_global_port: false,
            same_port_residual: true,
            minimal_vc: MinimalVc::Shared,
        }
    }
}

impl RoutingParams for DgbParams {}

/// The VC of an inter-group minimal packet in its source group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum MinimalVc {
    /// The Valiant packets' first VC (the fork's): a minimal packet stalled behind a full
    /// global link holds back the Valiant packets queued behind it on the same local link.
    Shared,
    /// UGAL-L's layout: the VC minimal packets take toward the destination group.
    Own,
}

/// How the net occupancies of DGB's estimates count the flits in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Inflight {
    /// The fork's estimate: the flits the port sent within twice its link's latency
    /// (`network/sent_window.rs`).
    Window,
    /// The flits on the wire and the credits on their way back, as they are.
    Exact,
}

/// The packet fields of DGB: UGAL-L's Valiant fields first (UGAL-L's path code reads them
/// there), then what the destination needs for the residual.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct DgbHeader {
    pub valiant: ValiantHeader,
    /// The non-minimal candidate's first port (the bias key of a non-minimal residual).
    pub nm_port: u16,
    /// Σ occupancy of the output ports taken in the source group (saturating).
    pub q_src: u16,
    /// When the source router decided.
    pub decided_at: Time,
    /// `TRAIN` if the packet carries a residual back (an inter-group packet), with
    /// `SAME_PORT` if its two candidates shared their first port, and `OTHER` once the second
    /// router has worked out the other class's residual (`d_other`).
    pub train: u8,
    /// `piggyback`: the learnsets it carries (`CARRIES_DEST`, `CARRIES_INTERMEDIATE`).
    pub carries: u8,
    /// `piggyback`: the index (at its router) of the global port by which a non-minimal packet
    /// leaves the source group (the key of its residual at the destination).
    pub exit: u8,
    /// `SAME_PORT`: the other candidate's hop count.
    pub h_other: u8,
    /// `OTHER`: the other class's residual, from the second router (`same_port_residual`).
    pub d_other: i32,
}

/// [`DgbHeader::train`]'s flags.
const TRAIN: u8 = 1;
const SAME_PORT: u8 = 2;
const OTHER: u8 = 4;

/// DGB's control messages.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DgbMsg {
    /// `ideal`: a residual, straight to the source router.
    Residual(Residual),
    /// `piggyback`: global port `index` of the group (`index_in_group · h + port`) held `raw`
    /// (net `net`) flits when a packet left the sender over a local link.
    GlobalQ { index: u16, raw: u32, net: u32 },
    /// `piggyback`: a packet carrying the learnset generated at `gen` for `receiver` has reached
    /// it: the generator sends the learnset.
    Fetch { receiver: u32, gen: Time },
    /// `piggyback`: one residual of the learnset `generator` generated at `gen` (`port`
    /// [`NO_PORT`] for the minimal one).
    Entry { generator: u32, gen: Time, port: u16, d: f32 },
}

/// A residual handed from a destination router to a source router.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Residual {
    /// The destination router that measured it.
    pub from: u32,
    /// The non-minimal packet's first port at the source, or [`NO_PORT`] for a minimal packet.
    pub port: u16,
    pub d: f32,
}

/// One router's DGB state, and EDGB's contention counters.
pub struct DgbState {
    pub table: DgbTable,
    pub counters: Option<ContentionCounters>,
    /// `piggyback` only.
    pub piggyback: Option<Box<Piggyback>>,
}

/// EDGB's contention counters' settings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Contention {
    pub window: Time,
    pub threshold: u32,
}

/// DGB (`E = false`) or EDGB (`E = true`, `edgb.rs`).
pub struct Dgb<const E: bool> {
    inner: UgalL,
    learning: Learning,
    local_q_scale: f64,
    /// The flit time of a local link (ps): DGB's cycle.
    cycle_ps: f64,
    /// Link latencies in cycles: the residual's wire, and the exploration's channel difference.
    wire: [f64; 2],
    chan: [f64; 2],
    contention: Option<Contention>,
    /// How the estimates' occupancies leave out the flits in flight (None: raw ones).
    inflight: Option<Inflight>,
    piggyback: bool,
    global_queues: bool,
    sample_forced: bool,
    same_port_residual: bool,
    minimal_vc: MinimalVc,
    probes: bool,
}

impl<const E: bool> Dgb<E> {
    pub(crate) fn build(
        topo: &Topology,
        exp: &Experiment,
        p: DgbParams,
        contention: Option<Contention>,
    ) -> Result<Dgb<E>> {
        let ports = topo.radix - topo.first_local_port() as usize;
        let bytes = table_bytes(topo.routers(), ports) as f64 * topo.routers() as f64;
        if bytes > 4.0 * (1u64 << 30) as f64 {
            return Err(Error::Config {
                field: "routing.algorithm".into(),
                message: format!(
                    "DGB keeps a bias per (destination router, port) at every router: {:.1} GiB for {} routers \
                     (at most 4 GiB); use a smaller network",
                    bytes / (1u64 << 30) as f64,
                    topo.routers()
                ),
            });
        }
        let net = &exp.network;
        let cycle_ps = transfer_ps(net.flit_bytes as u64, net.local_bw_gbps).max(1) as f64;
        let cycles = |ns: f64| ns * 1000.0 / cycle_ps;
        let wire = [cycles(net.local_latency_ns), cycles(net.global_latency_ns)];
        let chan = [p.chan_local_cycles.unwrap_or(wire[0]), p.chan_global_cycles.unwrap_or(wire[1])];
        let inner = UgalL::new(UgalLParams {
            intermediate: p.intermediate,
            intra_group: p.intra_group,
            min_gateways: p.min_gateways,
            ..UgalLParams::default()
        });
        let common = net.input_buffer_flits;
        let learning = Learning {
            eta: p.eta,
            explore_rate: p.explore_rate,
            epoch: (p.epoch_cycles * cycle_ps).round() as Time,
            local_buffer: net.local_buffer_flits.unwrap_or(common),
            global_buffer: net.global_buffer_flits.unwrap_or(common),
            global_port_vacancy: p.explore_global_port,
        };
        let ratio = learning.global_buffer as f64 / learning.local_buffer.max(1) as f64;
        let local_q_scale = p.local_q_scale.unwrap_or(ratio);
        let inflight = p.remove_inflight.then_some(p.inflight);
        let piggyback = p.feedback == Feedback::Piggyback;
        let global_queues = piggyback && p.piggyback_global_queues;
        let probes = exp.run.decision_probes;
        Ok(Dgb {
            inner,
            learning,
            local_q_scale,
            cycle_ps,
            wire,
            chan,
            contention,
            inflight,
            piggyback,
            global_queues,
            sample_forced: p.sample_forced,
            same_port_residual: p.same_port_residual,
            minimal_vc: p.minimal_vc,
            probes,
        })
    }

    /// What the source router sees of the two candidates (with `pig`, the global queues it
    /// heard of, `dgb_piggyback.rs`).
    fn observe(
        &self,
        view: &RouterView,
        oracle: &OracleView,
        ch: &Choice,
        dest: u32,
        pig: Option<&Piggyback>,
    ) -> Observation {
        let topo = view.topo;
        let (q_min_net, q_nm_net) = (self.q_net(view, ch.min.port, ch.min.q), self.q_net(view, ch.nm.port, ch.nm.q));
        let exit =
            |port: u16, group: u32, q_first_net: u32| self.exit_queues(view, oracle, port, group, q_first_net, pig);
        let (min_global, [q_min_g, q_min_g_net]) = exit(ch.min.port, topo.group_of(dest), q_min_net);
        let (_, [q_nm_g, q_nm_g_net]) = exit(ch.nm.port, topo.group_of(ch.ir), q_nm_net);
        // Two global hops against one; the rest are local.
        let extra_local = ch.nm.hops as f64 - 2.0 - (ch.min.hops as f64 - 1.0);
        Observation {
            dest,
            nm_port: ch.nm.port,
            min_global,
            h_min: ch.min.hops,
            h_nm: ch.nm.hops,
            q_min: ch.min.q,
            q_nm: ch.nm.q,
            q_min_g,
            q_nm_g,
            q_min_net,
            q_nm_net,
            q_min_g_net: q_min_g_net as u32,
            q_nm_g_net: q_nm_g_net as u32,
            chan_diff: extra_local * self.chan[0] + self.chan[1],
        }
    }

    /// The occupancy of first port `port` the estimates read (`raw` is the decision's).
    fn q_net(&self, view: &RouterView, port: u16, raw: u32) -> u32 {
        match self.inflight {
            None => raw,
            Some(_) => self.net_of(view, port),
        }
    }

    /// The net occupancy of this router's `port` (with `inflight` set).
    fn net_of(&self, view: &RouterView, port: u16) -> u32 {
        match self.inflight {
            Some(Inflight::Exact) => view.port_net_occupancy(port),
            _ => view.port_window_occupancy(port),
        }
    }

    /// Whether the path that leaves by `port` toward `group` crosses this router's own global
    /// link, and the raw and estimating occupancies of the global port by which it leaves the
    /// group (with `pig`, as heard; the fork's `−1` and the first port's `q_first_net` when
    /// nothing was heard).
    fn exit_queues(
        &self,
        view: &RouterView,
        oracle: &OracleView,
        port: u16,
        group: u32,
        q_first_net: u32,
        pig: Option<&Piggyback>,
    ) -> (bool, [i64; 2]) {
        let net = self.inflight.is_some();
        let Some((router, exit)) = exit_port(view, port, group) else { return (false, [0, 0]) };
        let own = router == view.router;
        let (raw, net_q) = match pig.filter(|_| !own) {
            // Read directly: the router's own port, or any with `ideal` feedback.
            None => {
                let raw = oracle.port_occupancy(router, exit);
                let net_q = match self.inflight {
                    None => raw,
                    Some(Inflight::Exact) => oracle.port_net_occupancy(router, exit),
                    Some(Inflight::Window) => oracle.port_window_occupancy(router, exit),
                };
                (raw, net_q)
            }
            Some(pig) => match pig.global_q(global_index(view.topo, router, exit)) {
                Some((raw, heard_net)) => (raw, if net { heard_net } else { raw }),
                // The fork's −1: the estimates fall back on the first port's occupancy.
                None => return (false, [-1, q_first_net as i64]),
            },
        };
        (own, [raw as i64, net_q as i64])
    }

    /// The decision rule (EDGB's term with contention factor `c`; DGB passes 0), and the
    /// minimal side it compared.
    fn minimal_wins(&self, o: &Observation, nm_global: bool, bias: f64, c: u32) -> (bool, f64) {
        let (mut q_m, mut q_nm) = (o.q_min as f64, o.q_nm as f64);
        if o.min_global && !nm_global {
            q_nm *= self.local_q_scale;
        }
        if !o.min_global && nm_global {
            q_m *= self.local_q_scale;
        }
        let mut min_hq = o.h_min as f64 * q_m;
        if !o.min_global {
            min_hq += q_m * c.saturating_sub(1) as f64;
        }
        let nm_hq = (o.h_nm as f64 * (q_nm + bias)).trunc().max(0.0);
        (min_hq <= nm_hq, min_hq)
    }

    /// The source router's decision, training and samples.
    fn decide(&self, cx: &mut Ctx<'_, Self>, pkt: &mut Packet) -> Hop {
        let view = &cx.view;
        let (now, dest) = (view.now, pkt.dst_router);
        let oracle = cx.oracle();
        let topo = view.topo;
        let dst_group = topo.group_of(dest);
        let DgbState { table, counters, piggyback } = &mut *cx.state;
        let c = match counters {
            Some(cc) if dst_group != view.group => cc.contention(now, dst_group as usize),
            _ => 0,
        };
        let pig = piggyback.as_deref();
        let (mut seen, mut estimate, mut forced) = (None, None, None);
        let on_forced = |min: &Candidate| forced = self.sample_forced.then_some(*min);
        let decide = |ch: &Choice, rng: &mut Rng| {
            let o = self.observe(view, &oracle, ch, dest, pig);
            table.train(now, &o, &self.learning, rng);
            let nm_global = topo.class_of_port(ch.nm.port) == LinkClass::Global;
            let (minimal, min_hq) = self.minimal_wins(&o, nm_global, table.bias(dest, ch.nm.port), c);
            // `piggyback`: the key of a non-minimal residual at the destination.
            let exit = pig
                .and_then(|_| exit_port(view, ch.nm.port, topo.group_of(ch.ir)))
                .map(|(_, e)| e - topo.first_global_port());
            (seen, estimate) = (Some((o, ch.min.port == ch.nm.port, minimal, exit)), Some(min_hq));
            minimal
        };
        let hop = self.inner.decide_or_forced(view, pkt, cx.rng, decide, on_forced);
        if let Some(min) = forced {
            // Undecided, yet sampled and trained on like a minimal packet (`sample_forced`).
            let q = self.q_net(view, min.port, min.q);
            let (_, [_, q_g]) = self.exit_queues(view, &oracle, min.port, dst_group, q, pig);
            table.record_min(dest, estimate_of(q, q_g as u32, min.hops, table.feedback_min(dest)));
            let q_src = self.src_queue(view, hop.port);
            let h = pkt.hdr_mut::<DgbHeader>();
            *h = DgbHeader { nm_port: NO_PORT, q_src, decided_at: now, train: TRAIN, carries: 0, exit: 0, ..*h };
        }
        if let Some((o, same_port, minimal, exit)) = seen {
            record_samples(table, &o, same_port, minimal);
            let q = self.src_queue(view, hop.port);
            let mut carries = 0;
            if let Some(pig) = piggyback.as_deref_mut() {
                // The learnsets this packet carries back (`GenerateLearnset`).
                let ir = pkt.hdr::<ValiantHeader>().inter_router;
                if pig.generate(dest, now) {
                    carries |= CARRIES_DEST;
                }
                let via = pkt.nonminimal && ir != NONE && ir != view.router && ir != dest;
                if via && pig.generate(ir, now) {
                    carries |= CARRIES_INTERMEDIATE;
                }
            }
            let exit = exit.unwrap_or(0) as u8;
            let train = if same_port && self.same_port_residual { TRAIN | SAME_PORT } else { TRAIN };
            let h_other = if minimal { o.h_nm } else { o.h_min }.min(u8::MAX as u32) as u8;
            let h = pkt.hdr_mut::<DgbHeader>();
            *h = DgbHeader { nm_port: o.nm_port, q_src: q, decided_at: now, train, carries, exit, h_other, ..*h };
        }
        count_decision(cx, self.probes, estimate);
        hop
    }

    /// `piggyback`: a packet leaving this router over a local link carries the occupancies of
    /// the router's global ports to the next router (`dragonfly.cpp`, `carry_qlobalq`).
    fn send_global_queues(&self, cx: &mut Ctx<'_, Self>, port: u16) {
        let topo = cx.view.topo;
        if topo.class_of_port(port) != LinkClass::Local {
            return;
        }
        let first = topo.first_global_port();
        for k in 0..topo.h as u16 {
            let g = first + k;
            let raw = cx.view.port_occupancy(g);
            let net = if self.inflight.is_some() { self.net_of(&cx.view, g) } else { raw };
            let index = global_index(topo, cx.view.router, g) as u16;
            cx.send(Dest::Port(port), DgbMsg::GlobalQ { index, raw, net });
        }
    }
}

impl<const E: bool> Dgb<E> {
    /// `minimal_vc = "shared"`: an inter-group minimal packet in its source group (its global
    /// hop included) takes the Valiant packets' first VC, as in the fork's 4-VC assignment
    /// (`dragonfly.cpp`: VC 0 for both phases in the source group).
    #[inline]
    fn source_group_vc(&self, view: &RouterView, pkt: &Packet, hop: Hop) -> Hop {
        let topo = view.topo;
        let shared = self.minimal_vc == MinimalVc::Shared
            && !pkt.nonminimal
            && !topo.is_host_port(hop.port)
            && topo.group_of(pkt.dst_router) != view.group
            && topo.group_of(topo.router_of_node(pkt.src)) == view.group;
        if shared {
            Hop { vc: UgalL::first_valiant_vc(), ..hop }
        } else {
            hop
        }
    }

    /// At the second router of a packet whose candidates shared their first port: the other
    /// class's residual, from the time the packet took to get here and the occupancy of the
    /// port the other path would take from here (`iq_router.cpp`, "Special treatment if the
    /// MIN and NON ports are the same port", with `dragonfly.cpp`'s `q_count_at_2ndrouter`
    /// and `until_2ndrouter`): `(t₂ − q₁) + (H_other − 1)·q₂`, with `t₂` the cycles since the
    /// decision less the first hop's wire and one cycle, and `q₁` the first port's occupancy.
    fn second_hop(&self, view: &RouterView, pkt: &mut Packet) {
        let h = *pkt.hdr::<DgbHeader>();
        let other = if pkt.nonminimal { pkt.dst_router } else { h.valiant.inter_router };
        let Some(port) = toward(view.topo, view.router, other) else { return };
        let q2 = self.q_net(view, port, view.port_occupancy(port)) as f64;
        let t2 = view.now.saturating_sub(h.decided_at) as f64 / self.cycle_ps - self.wire[0] - 1.0;
        let d = (t2 - h.q_src as f64) + (h.h_other as f64 - 1.0) * q2;
        let h = pkt.hdr_mut::<DgbHeader>();
        h.d_other = d.round() as i32;
        h.train |= OTHER;
    }

    /// The occupancy the residual subtracts for a source-group hop by `port`.
    fn src_queue(&self, view: &RouterView, port: u16) -> u16 {
        let q = if self.inflight.is_some() { self.net_of(view, port) } else { view.port_occupancy(port) };
        q.min(u16::MAX as u32) as u16
    }
}

/// The first port of a minimal path from `router` to router `to` (with parallel links, by the
/// first of the group's links), if `to` is another router.
fn toward(topo: &Topology, router: u32, to: u32) -> Option<u16> {
    if to == router || to == NONE {
        return None;
    }
    if let Some((port, _)) = topo.minimal_first_port(router, to) {
        return Some(port);
    }
    let (grp, to_grp) = (topo.group_of(router), topo.group_of(to));
    let &(index, k) = topo.gateways(grp, to_grp).first()?;
    let gateway = grp * topo.a as u32 + index as u32;
    Some(if gateway == router { topo.first_global_port() + k } else { topo.local_port_to(router, gateway, grp) })
}

/// The router and global port by which a path that leaves the deciding router by `port`
/// leaves the group toward `group` (`port` itself when it is global), if any.
fn exit_port(view: &RouterView, port: u16, group: u32) -> Option<(u32, u16)> {
    let topo = view.topo;
    if topo.class_of_port(port) == LinkClass::Global {
        return Some((view.router, port));
    }
    let (gateway, _) = topo.peer(view.router, port)?;
    let index = topo.index_in_group(gateway);
    let gw = topo.gateways(view.group, group).iter().find(|gw| gw.0 as u32 == index)?;
    Some((gateway, topo.first_global_port() + gw.1))
}

/// The index of global port `port` of `router` among its group's (`index_in_group · h + k`).
fn global_index(topo: &Topology, router: u32, port: u16) -> usize {
    topo.index_in_group(router) as usize * topo.h + (port - topo.first_global_port()) as usize
}

/// The fork's latency estimate with feedback `d`, or from the occupancies alone.
fn estimate_of(q: u32, q_g: u32, h: u32, d: Option<f64>) -> f64 {
    match d {
        Some(d) => ((q + q_g) as f64 + d + h as f64).trunc().max(h as f64),
        None => q as f64 + (h as f64 - 1.0) * q_g as f64,
    }
}

/// Record the chosen class's sample, and the other class's when both share the first port.
fn record_samples(table: &mut DgbTable, o: &Observation, same_port: bool, minimal: bool) {
    let other = |q: u32, q_g: u32, h: u32| (q as f64 + (h as f64 - 1.0) * q_g as f64).max(h as f64);
    if minimal {
        table.record_min(o.dest, estimate_of(o.q_min_net, o.q_min_g_net, o.h_min, table.feedback_min(o.dest)));
        if same_port && table.feedback_nm(o.dest, o.nm_port).is_some() {
            table.record_nm(o.dest, o.nm_port, other(o.q_nm_net, o.q_nm_g_net, o.h_nm));
        }
    } else {
        let t = estimate_of(o.q_nm_net, o.q_nm_g_net, o.h_nm, table.feedback_nm(o.dest, o.nm_port));
        table.record_nm(o.dest, o.nm_port, t);
        if same_port && table.feedback_min(o.dest).is_some() {
            table.record_min(o.dest, other(o.q_min_net, o.q_min_g_net, o.h_min));
        }
    }
}

impl<const E: bool> Routing for Dgb<E> {
    type Header = DgbHeader;
    type RouterState = DgbState;
    type Msg = DgbMsg;
    const HOOKS: Hooks =
        Hooks::DELIVER.with(Hooks::MSG).with(Hooks::ORACLE).with(Hooks::NET_OCCUPANCY).with(Hooks::ARRIVE);

    fn vcs(&self) -> VcCounts {
        self.inner.vcs()
    }

    fn max_hops(&self) -> u32 {
        self.inner.max_hops()
    }

    fn probes(&self) -> Vec<ProbeSpec> {
        decision_probe_specs(self.probes)
    }

    fn router_state(&self, topo: &Topology, _router: u32) -> DgbState {
        let first = topo.first_local_port();
        DgbState {
            table: DgbTable::new(topo.routers(), first, topo.radix - first as usize),
            counters: self.contention.map(|c| ContentionCounters::new(topo.a, topo.g, c.window, c.threshold)),
            piggyback: self.piggyback.then(|| Box::new(Piggyback::new(topo.a * topo.h))),
        }
    }

    /// EDGB: UGAL-LE's counters (§4.2.1). `piggyback`: a packet that carries a learnset for
    /// this router has reached it (`iq_router.cpp`, `ReceiveLearnset` on the tail's arrival):
    /// fetch it from the router that generated it.
    fn on_arrive(&self, cx: &mut Ctx<'_, Self>, pkt: &mut Packet) {
        if let Some(cc) = &mut cx.state.counters {
            cc.observe(&cx.view, pkt);
        }
        let h = *pkt.hdr::<DgbHeader>();
        if h.carries == 0 {
            return;
        }
        let here = cx.view.router;
        let for_dest = h.carries & CARRIES_DEST != 0 && here == pkt.dst_router;
        let for_ir = h.carries & CARRIES_INTERMEDIATE != 0 && here == h.valiant.inter_router;
        if for_dest || for_ir {
            let generator = cx.view.topo.router_of_node(pkt.src);
            cx.send(Dest::Router { router: generator, delay: 0 }, DgbMsg::Fetch { receiver: here, gen: h.decided_at });
        }
    }

    fn route(&self, cx: &mut Ctx<'_, Self>, pkt: &mut Packet) -> Hop {
        let hop = if cx.view.is_source_router() && pkt.hops == 0 {
            self.decide(cx, pkt)
        } else {
            let hop = self.inner.next_hop(&cx.view, pkt, cx.rng);
            if pkt.hops == 1 && pkt.hdr::<DgbHeader>().train & SAME_PORT != 0 {
                self.second_hop(&cx.view, pkt);
            }
            // The source group's occupancies, for the residual.
            let topo = cx.view.topo;
            if topo.group_of(topo.router_of_node(pkt.src)) == cx.view.group {
                let q = self.src_queue(&cx.view, hop.port);
                let h = pkt.hdr_mut::<DgbHeader>();
                h.q_src = h.q_src.saturating_add(q);
            }
            hop
        };
        if self.global_queues {
            self.send_global_queues(cx, hop.port);
        }
        self.source_group_vc(&cx.view, pkt, hop)
    }

    /// Outside the source group the path is UGAL-L's table walk; inside it the occupancies are
    /// read ([`Routing::route`]); with `piggyback` every hop is routed, as it may carry the
    /// global queues.
    #[inline(always)]
    fn route_without_view(&self, topo: &Topology, router: u32, in_port: u16, pkt: &mut Packet) -> Option<Hop> {
        if self.piggyback || topo.group_of(topo.router_of_node(pkt.src)) == topo.group_of(router) {
            return None;
        }
        self.inner.route_without_view(topo, router, in_port, pkt)
    }

    /// The destination router's residual: handed to the source router at once (`ideal`), or
    /// kept for a learnset (`piggyback`).
    fn on_deliver(&self, cx: &mut Ctx<'_, Self>, pkt: &Packet) {
        let h = *pkt.hdr::<DgbHeader>();
        if h.train == 0 {
            return;
        }
        let elapsed = cx.view.now.saturating_sub(h.decided_at) as f64 / self.cycle_ps;
        let global = pkt.global_hops as f64;
        let wire = (pkt.hops as f64 - global) * self.wire[0] + global * self.wire[1];
        let d = elapsed - wire - pkt.hops as f64 - h.q_src as f64;
        let src = cx.view.topo.router_of_node(pkt.src);
        // The chosen class's residual, and the other class's from the second router.
        let other = (h.train & OTHER != 0).then_some((!pkt.nonminimal, h.d_other as f32));
        for (nonminimal, d) in [(pkt.nonminimal, d as f32)].into_iter().chain(other) {
            if let Some(pig) = &mut cx.state.piggyback {
                pig.record(src, nonminimal.then_some((h.nm_port, h.exit)), d);
                continue;
            }
            let port = if nonminimal { h.nm_port } else { NO_PORT };
            let residual = Residual { from: cx.view.router, port, d };
            cx.send(Dest::Router { router: src, delay: 0 }, DgbMsg::Residual(residual));
        }
    }

    fn on_msg(&self, cx: &mut Ctx<'_, Self>, _port: u16, m: DgbMsg) {
        let here = cx.view.router;
        let state = &mut *cx.state;
        match m {
            DgbMsg::Residual(r) => state.table.receive(r.from, (r.port != NO_PORT).then_some(r.port), r.d as f64),
            DgbMsg::GlobalQ { index, raw, net } => {
                if let Some(pig) = &mut state.piggyback {
                    pig.set_global_q(index as usize, raw, net);
                }
            }
            DgbMsg::Fetch { receiver, gen } => {
                let Some(l) = state.piggyback.as_mut().and_then(|pig| pig.fetch(receiver, gen)) else { return };
                let to = Dest::Router { router: receiver, delay: 0 };
                if let Some(d) = l.min {
                    cx.send(to, DgbMsg::Entry { generator: here, gen, port: NO_PORT, d });
                }
                for (port, d) in l.nm {
                    cx.send(to, DgbMsg::Entry { generator: here, gen, port, d });
                }
            }
            DgbMsg::Entry { generator, gen, port, d } => {
                let Some(pig) = &mut state.piggyback else { return };
                if pig.accept(generator, gen) {
                    state.table.receive(generator, (port != NO_PORT).then_some(port), d as f64);
                }
            }
        }
    }
}

/// DGB's constructor for the registry.
pub fn dgb(topo: &Topology, exp: &Experiment, p: DgbParams) -> Result<Dgb<false>> {
    Dgb::build(topo, exp, p, None)
}

/// The window of EDGB's contention counters in ps.
pub(crate) fn window_ps(ns: f64) -> Time {
    ns_to_ps(ns).max(1)
}

#[cfg(test)]
mod tests;
