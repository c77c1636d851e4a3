//! Q-adaptive (Kang, Wang, Lan, HPDC'21), as the public reference code behaves
//! (qadaptive-reference.md §1.2–1.6, mode `destG_srcN` + `src_mid_group_q`, `max_hops = 1`).
//!
//! * **Table** per router: rows = (destination group other than the own group, own group
//!   skipped) × (source node mod p), columns = every non-host port (`port − p`, locals first).
//!   Values in ns. Initial value: the global link latency on the router's own global port(s) to
//!   that group, global + local latency everywhere else (300 / 330 ns for `qadaptive-1056`).
//!   Option `q_init_scale` multiplies them (1, the reference's values, by default).
//! * **Learning**: the downstream router S returns `hop_delay` (arrival at R's input → arrival
//!   at S's input) and S's estimate, min over all of S's non-host ports of its row (0 in the
//!   destination group, where feedback is sent only for packets that arrived on a global port).
//!   R updates the column of the port it used with the hysteretic rule of [`QParams::learn`].
//! * **Decisions** only at the source router (argmin over all non-host ports vs the minimal
//!   port, relative threshold `q_thld1`) and at the first router of an intermediate group
//!   (its direct link to the destination group if it has one; else a random other router of the
//!   group vs the minimal port, threshold `q_thld2`). ε-greedy at those two points only, uniform
//!   over the non-host ports. Everything else is minimal.
//! * **VCs**: VC = router hops taken so far; 5 VCs, at most 5 router hops.

use rand::Rng as _;

use super::paths::{in_destination_group, port_to_group, port_to_router};
use super::q_table::{connected, random_port, Feedback, QHeader, QParams, QTable};
use super::{Ctx, Dest, Hooks, Hop, Rng, RouterView, Routing, VcCounts};
use crate::fastdiv::FastDiv;
use crate::network::Packet;
use crate::topology::Topology;

pub struct QAdaptive {
    pub params: QParams,
    p: usize,
    a: usize,
    first_global: u16,
    /// Division by `p` without a hardware divide: the table row of every hop and every
    /// feedback needs it (see `crate::fastdiv`).
    div_p: FastDiv,
    div_pa: FastDiv,
}

impl QAdaptive {
    pub fn new(topo: &Topology, params: QParams) -> QAdaptive {
        QAdaptive {
            params,
            p: topo.p,
            a: topo.a,
            first_global: topo.first_global_port(),
            div_p: FastDiv::new(topo.p as u32),
            div_pa: FastDiv::new((topo.p * topo.a) as u32),
        }
    }

    /// The initial table of router `r`: the global latency on its own global port(s) to each
    /// group, global + local latency everywhere else, +∞ on unconnected ports; each times
    /// `init_scale`.
    pub fn initial_table(&self, topo: &Topology, r: u32) -> QTable {
        let (p, g) = (topo.p, topo.g);
        let rows = (g - 1) * p;
        let scale = self.params.init_scale;
        let far = scale * (self.params.global_latency_ns + self.params.local_latency_ns);
        let mut table = QTable::new(rows, topo.radix - p, far);
        let own = topo.group_of(r);
        for port in self.first_global..topo.radix as u16 {
            let col = (port as usize) - p;
            if !connected(topo, r, port) {
                for row in 0..rows {
                    table.set(row, col, f64::INFINITY);
                }
                continue;
            }
            let dg = rel_group(topo.global_port_group(r, port), own);
            for s in 0..p {
                table.set(dg * p + s, col, scale * self.params.global_latency_ns);
            }
        }
        table
    }

    /// Table row for a packet from node `src` to group `dst_group` at a router of `own` group.
    #[inline]
    pub fn row(&self, own: u32, dst_group: u32, src: u32) -> usize {
        rel_group(dst_group, own) * self.p + self.div_p.rem(src) as usize
    }

    /// Take `min_port` unless `cand` is better by at least the relative threshold
    /// (`ΔV = (Q_min − Q_cand)/Q_min`, minimal iff ΔV < thld).
    #[inline]
    fn threshold(&self, table: &QTable, row: usize, min_port: u16, cand: u16, thld: f64) -> u16 {
        if cand == min_port {
            return min_port;
        }
        let qm = table.get(row, min_port as usize - self.p);
        if qm <= 0.0 {
            return min_port;
        }
        let dv = (qm - table.get(row, cand as usize - self.p)) / qm;
        if dv < thld {
            min_port
        } else {
            cand
        }
    }

    /// ε-greedy: with probability ε, a uniformly random non-host port instead of `chosen`.
    #[inline]
    fn explore(&self, view: &RouterView, chosen: u16, rng: &mut Rng) -> u16 {
        if self.params.epsilon > 0.0 && rng.gen::<f64>() < self.params.epsilon {
            random_port(view, rng)
        } else {
            chosen
        }
    }
}

/// Index of group `g` among the groups other than `own`.
#[inline]
fn rel_group(g: u32, own: u32) -> usize {
    debug_assert_ne!(g, own);
    (if g > own { g - 1 } else { g }) as usize
}

/// The packet's learning fields.
#[inline(always)]
fn qh(pkt: &mut Packet) -> &mut QHeader {
    pkt.hdr_mut()
}

impl Routing for QAdaptive {
    type Header = QHeader;
    type RouterState = QTable;
    type Msg = Feedback;
    const HOOKS: Hooks = Hooks::ARRIVE.with(Hooks::DEPART).with(Hooks::MSG);

    fn vcs(&self) -> VcCounts {
        VcCounts::uniform(5)
    }

    fn max_hops(&self) -> u32 {
        5
    }

    fn router_state(&self, topo: &Topology, router: u32) -> QTable {
        self.initial_table(topo, router)
    }

    fn route(&self, cx: &mut Ctx<'_, Self>, pkt: &mut Packet) -> Hop {
        let (view, rng, table) = (&cx.view, &mut *cx.rng, &*cx.state);
        let topo = view.topo;
        let h = pkt.hops;
        let dst_group = topo.group_of(pkt.dst_router);
        if view.group == dst_group {
            qh(pkt).estimate = 0.0;
            return in_destination_group(view, pkt, h);
        }
        let row = self.row(view.group, dst_group, pkt.src);
        let (best, best_q) = table.best(row);
        // Off-policy bootstrap: S's estimate is its best value even when it must go minimally.
        qh(pkt).estimate = best_q;
        let best_port = (best + self.p) as u16;
        let min_port = port_to_group(view, dst_group, rng);
        let port = if h == 0 {
            // Source router.
            let chosen = self.threshold(table, row, min_port, best_port, self.params.thld1);
            let port = self.explore(view, chosen, rng);
            if port != min_port {
                pkt.nonminimal = true;
            }
            port
        } else if h == 1 && view.group != topo.group_of(topo.router_of_node(pkt.src)) {
            // First router of an intermediate group (reached by the source router's global hop).
            pkt.nonminimal = true;
            if min_port >= self.first_global {
                min_port
            } else {
                let mut t = rng.gen_range(0..self.a as u32 - 1);
                if t >= view.index {
                    t += 1;
                }
                let cand = port_to_router(view, t);
                let chosen = self.threshold(table, row, min_port, cand, self.params.thld2);
                self.explore(view, chosen, rng)
            }
        } else {
            min_port
        };
        Hop { port, vc: h }
    }

    /// Inside the destination group a hop reads no table, draws nothing and goes minimally
    /// (the estimate sent back from there is 0): the first-port table answers it without a view,
    /// as for MIN. The hops before it need the view (the table row's minimum is the estimate).
    #[inline(always)]
    fn route_without_view(&self, topo: &Topology, router: u32, _in_port: u16, pkt: &mut Packet) -> Option<Hop> {
        if pkt.dst_router == router {
            qh(pkt).estimate = 0.0;
            // `dst_router` is `dst / p`: `host_port_of_node(dst)` without a division.
            return Some(Hop { port: (pkt.dst - router * topo.p as u32) as u16, vc: 0 });
        }
        match topo.minimal_first_port(router, pkt.dst_router)? {
            (port, true) => {
                qh(pkt).estimate = 0.0;
                Some(Hop { port, vc: pkt.hops })
            }
            (_, false) => None,
        }
    }

    #[inline(always)]
    fn on_arrive(&self, _cx: &mut Ctx<'_, Self>, pkt: &mut Packet) {
        qh(pkt).prev_arrival = pkt.arrival;
    }

    fn on_depart(&self, cx: &mut Ctx<'_, Self>, pkt: &Packet) {
        let view = &cx.view;
        let in_dest_group = view.group == view.topo.group_of(pkt.dst_router);
        if in_dest_group && view.in_port < self.first_global {
            return;
        }
        let h: &QHeader = pkt.hdr();
        let fb = Feedback {
            dst: pkt.dst,
            src: pkt.src,
            hop_delay: pkt.arrival - h.prev_arrival,
            estimate: if in_dest_group { 0.0 } else { h.estimate },
        };
        cx.send(Dest::Upstream, fb);
    }

    fn on_msg(&self, cx: &mut Ctx<'_, Self>, port: u16, fb: Feedback) {
        let own = cx.view.group;
        let dst_group = self.div_pa.div(fb.dst);
        if dst_group == own {
            return;
        }
        let row = self.row(own, dst_group, fb.src);
        let col = port as usize - self.p;
        cx.state.learn(row, col, &self.params, &fb);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::harness::{walk, Net};

    #[test]
    fn eps_zero_paths_stay_within_five_hops_and_vc_is_the_hop_index() {
        let net = Net::new(4, 8, 4, 1);
        let alg = QAdaptive::new(&net.topo, QParams { epsilon: 0.0, ..QParams::default() });
        for (src, dst) in net.sample_pairs(3000, 3) {
            let path = walk(&net, &alg, src, dst, src as u64);
            // Untrained tables: every decision keeps the minimal path.
            let sr = net.topo.router_of_node(src);
            let dr = net.topo.router_of_node(dst);
            assert_eq!(path.len() as u32, net.topo.min_hops(sr, dr));
            for (i, s) in path.iter().enumerate() {
                assert_eq!(s.vc as usize, i);
            }
        }
    }

    /// Every hop inside the destination group is answered without a view, no other hop is
    /// (`walk` checks each answer against `route`, packet writes included).
    #[test]
    fn destination_group_hops_need_no_view() {
        let net = Net::new(4, 8, 4, 1);
        let topo = &net.topo;
        let alg = QAdaptive::new(topo, QParams::default());
        let (mut inside, mut answered) = (0, 0);
        for (src, dst) in net.sample_pairs(2000, 6) {
            let mut pkt = net.packet_for::<QAdaptive>(src, dst);
            let dst_group = topo.group_of(pkt.dst_router);
            for router in 0..topo.routers() as u32 {
                pkt.hops = 1;
                let quick = alg.route_without_view(topo, router, topo.first_local_port(), &mut pkt.clone());
                let here = topo.group_of(router) == dst_group;
                assert_eq!(quick.is_some(), here, "router {router}, packet {src}->{dst}");
                inside += here as u32;
                answered += quick.is_some() as u32;
            }
        }
        assert_eq!(answered, inside);
        assert!(inside >= 2000 * topo.a as u32);
    }

    #[test]
    fn full_exploration_stays_within_five_hops() {
        let net = Net::new(4, 8, 4, 1);
        let alg = QAdaptive::new(&net.topo, QParams { epsilon: 1.0, ..QParams::default() });
        let mut longest = 0;
        for (i, (src, dst)) in net.sample_pairs(5000, 4).into_iter().enumerate() {
            let path = walk(&net, &alg, src, dst, i as u64);
            longest = longest.max(path.len());
            for (i, s) in path.iter().enumerate() {
                assert_eq!(s.vc as usize, i);
            }
        }
        assert_eq!(longest, 5, "ε = 1 must reach the 5-hop worst case");
    }

    /// `init_scale` multiplies every initial entry; unconnected ports stay +∞. On a row where
    /// the minimal port has learnt a loaded latency (here 1,600 ns), an untried detour at the
    /// reference's 330 ns wins the argmin; scaled by 8 (2,640 ns) it does not.
    #[test]
    fn the_initial_scale_multiplies_every_entry() {
        let net = Net::new(4, 8, 4, 1);
        let topo = &net.topo;
        let plain = QAdaptive::new(topo, QParams::default());
        let scaled = QAdaptive::new(topo, QParams { init_scale: 8.0, ..QParams::default() });
        for r in [0, 5, 17] {
            let (a, b) = (plain.initial_table(topo, r), scaled.initial_table(topo, r));
            for row in 0..a.rows {
                for col in 0..a.cols {
                    let (x, y) = (a.get(row, col), b.get(row, col));
                    assert!(x == y && x.is_infinite() || y == 8.0 * x, "{r} {row} {col}: {x} {y}");
                }
            }
            assert!(b.is_narrow(), "whole-ns initial values keep the f32 tables");
        }
        let (row, minimal) = (0, 0);
        for (alg, detour_wins) in [(&plain, true), (&scaled, false)] {
            let mut t = alg.initial_table(topo, 0);
            t.set(row, minimal, 1600.0);
            assert_eq!(t.best(row).0 != minimal, detour_wins);
        }
    }
}
