//! Q-routing (Boyan & Littman, NIPS'93) on a Dragonfly, as the Q-adaptive paper describes it
//! (HPDC'21 §2.3; baseline-algorithms.md §8.1), with the paper's "naive" hop limit `maxQ`.
//!
//! * **Table** per router: one row per *other* router of the network (the reference's row type
//!   `r`, g·a − 1 rows), columns = the non-host ports. Q = estimated time from this router's
//!   input to the destination router's input, in ns.
//! * **Initial values**: the zero-load link latency of the port plus the link latencies of a
//!   minimal path from the neighbour to the destination router (local/global latencies only,
//!   like Q-adaptive's 300/330 ns initialisation).
//! * **Learning**: same transport and rule as Q-adaptive: the downstream router returns the hop
//!   delay and its min-Q for the destination router (0 when it is the destination router);
//!   hysteretic (α good news, β bad news) by default, plain `Q += η·Δ` with
//!   `routing.q_update = "plain"` (η = `learning_rate`).
//! * **Decisions**: argmin over the connected non-host ports (ties to the lowest port), ε-greedy,
//!   at every router while fewer than `routing.max_q` router hops have been taken; minimal
//!   afterwards. So at most `max_q + 3` router hops, VC = hop index, `max_q + 3` VCs.
//!   A packet at its destination router is always ejected.

use rand::Rng as _;

use super::paths::{in_destination_group, port_to_group};
use super::q_table::{connected, random_port, Feedback, QHeader, QParams, QTable};
use super::{Ctx, Dest, Hooks, Hop, Routing, VcCounts};
use crate::fastdiv::FastDiv;
use crate::network::Packet;
use crate::topology::Topology;

pub struct QRouting {
    pub params: QParams,
    p: usize,
    /// Division by `p` without a hardware divide (every feedback; see `crate::fastdiv`).
    div_p: FastDiv,
}

impl QRouting {
    pub fn new(topo: &Topology, params: QParams) -> QRouting {
        QRouting { params, p: topo.p, div_p: FastDiv::new(topo.p as u32) }
    }

    /// The initial table of router `r` (zero-load latencies, see the module comment).
    pub fn initial_table(&self, topo: &Topology, r: u32) -> QTable {
        let n = topo.routers();
        let mut table = QTable::new(n - 1, topo.radix - topo.p, 0.0);
        let (ll, gl) = (self.params.local_latency_ns, self.params.global_latency_ns);
        for port in topo.p as u16..topo.radix as u16 {
            let col = port as usize - topo.p;
            let peer = if connected(topo, r, port) { topo.peer(r, port) } else { None };
            for d in (0..n as u32).filter(|&d| d != r) {
                let v = match peer {
                    None => f64::INFINITY,
                    Some((pr, _)) => {
                        let link = if port >= topo.first_global_port() { gl } else { ll };
                        link + zero_load_distance(topo, pr, d, ll, gl)
                    }
                };
                table.set(row_of(d, r), col, v);
            }
        }
        table
    }
}

/// The packet's learning fields.
#[inline(always)]
fn qh(pkt: &mut Packet) -> &mut QHeader {
    pkt.hdr_mut()
}

/// Row of destination router `d` in the table of router `own` (own row skipped).
#[inline]
fn row_of(d: u32, own: u32) -> usize {
    debug_assert_ne!(d, own);
    (if d > own { d - 1 } else { d }) as usize
}

/// Sum of link latencies along the cheapest minimal path between two routers.
fn zero_load_distance(topo: &Topology, from: u32, to: u32, ll: f64, gl: f64) -> f64 {
    if from == to {
        return 0.0;
    }
    let (gf, gt) = (topo.group_of(from), topo.group_of(to));
    if gf == gt {
        return ll;
    }
    let (rf, rt) = (topo.index_in_group(from), topo.index_in_group(to));
    topo.gateways(gf, gt)
        .iter()
        .map(|&(r, k)| {
            let (peer, _) = topo.peer(gf * topo.a as u32 + r as u32, topo.first_global_port() + k).expect("gateway");
            let locals = (r as u32 != rf) as u32 + (topo.index_in_group(peer) != rt) as u32;
            gl + locals as f64 * ll
        })
        .fold(f64::INFINITY, f64::min)
}

impl Routing for QRouting {
    type Header = QHeader;
    type RouterState = QTable;
    type Msg = Feedback;
    const HOOKS: Hooks = Hooks::ARRIVE.with(Hooks::DEPART).with(Hooks::MSG);

    fn vcs(&self) -> VcCounts {
        VcCounts::uniform(self.params.max_q as u8 + 3)
    }

    fn max_hops(&self) -> u32 {
        self.params.max_q + 3
    }

    fn router_state(&self, topo: &Topology, router: u32) -> QTable {
        self.initial_table(topo, router)
    }

    fn route(&self, cx: &mut Ctx<'_, Self>, pkt: &mut Packet) -> Hop {
        let (view, rng) = (&cx.view, &mut *cx.rng);
        let h = pkt.hops;
        if pkt.dst_router == view.router {
            qh(pkt).estimate = 0.0;
            return in_destination_group(view, pkt, h);
        }
        let topo = view.topo;
        let (best, best_q) = cx.state.best(row_of(pkt.dst_router, view.router));
        qh(pkt).estimate = best_q;
        let dst_group = topo.group_of(pkt.dst_router);
        let min_port = if view.group == dst_group {
            in_destination_group(view, pkt, h).port
        } else {
            port_to_group(view, dst_group, rng)
        };
        let port = if (h as u32) < self.params.max_q {
            let chosen = (best + self.p) as u16;
            if self.params.epsilon > 0.0 && rng.gen::<f64>() < self.params.epsilon {
                random_port(view, rng)
            } else {
                chosen
            }
        } else {
            min_port
        };
        if port != min_port {
            pkt.nonminimal = true;
        }
        Hop { port, vc: h }
    }

    #[inline(always)]
    fn on_arrive(&self, _cx: &mut Ctx<'_, Self>, pkt: &mut Packet) {
        qh(pkt).prev_arrival = pkt.arrival;
    }

    fn on_depart(&self, cx: &mut Ctx<'_, Self>, pkt: &Packet) {
        let h: &QHeader = pkt.hdr();
        let fb = Feedback {
            dst: pkt.dst,
            src: pkt.src,
            hop_delay: pkt.arrival - h.prev_arrival,
            estimate: if pkt.dst_router == cx.view.router { 0.0 } else { h.estimate },
        };
        cx.send(Dest::Upstream, fb);
    }

    fn on_msg(&self, cx: &mut Ctx<'_, Self>, port: u16, fb: Feedback) {
        let router = cx.view.router;
        let d = self.div_p.div(fb.dst);
        if d == router {
            return;
        }
        let (row, col) = (row_of(d, router), port as usize - self.p);
        cx.state.learn(row, col, &self.params, &fb);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::harness::{walk, Net};

    #[test]
    fn untrained_tables_route_minimally() {
        // The zero-load initialisation makes the minimal ports the argmin (ties aside, which
        // keep a minimal length because all tied paths have the same latency sum).
        let net = Net::new(4, 8, 4, 1);
        let alg = QRouting::new(&net.topo, QParams { epsilon: 0.0, ..QParams::default() });
        for (src, dst) in net.sample_pairs(2000, 5) {
            let path = walk(&net, &alg, src, dst, 1);
            let (sr, dr) = (net.topo.router_of_node(src), net.topo.router_of_node(dst));
            assert_eq!(path.len() as u32, net.topo.min_hops(sr, dr), "{src}->{dst}");
        }
    }

    #[test]
    fn hop_bound_is_max_q_plus_three() {
        let net = Net::new(2, 4, 2, 1);
        for max_q in [0u32, 1, 2, 4] {
            let alg = QRouting::new(&net.topo, QParams { epsilon: 1.0, max_q, ..QParams::default() });
            assert_eq!(alg.vcs().max(), max_q as usize + 3);
            let mut longest = 0;
            for (i, (src, dst)) in net.sample_pairs(3000, 6).into_iter().enumerate() {
                let path = walk(&net, &alg, src, dst, i as u64);
                longest = longest.max(path.len());
                for (i, s) in path.iter().enumerate() {
                    assert_eq!(s.vc as usize, i);
                }
            }
            assert!(longest <= max_q as usize + 3);
        }
    }
}
