//! Global link arrangements: which group, router and port each global port reaches.
//!
//! Formulas: `../shared/reference/baseline-algorithms.md` §7 (absolute = SST's default and
//! BookSim's, relative, palmtree = FOGSim's, circulant = SST/macro's). For `l > 1` links per
//! group pair, slot `i = r*h + k` of a group holds raw index `i`; its relative group index is
//! `i mod (g-1)` and its parallel-link slice `i div (g-1)` (SST `global_link_map`). The peer
//! port is the slot with the same slice whose relative index points back. Circulant is defined
//! for the canonical `g = a*h + 1`, one link per pair, even `h`. The port holding slot `i` is
//! router `i / h`, port `i mod h` (`by-router`, SST's) or router `i mod a`, port `i / a`
//! (`round-robin`, which spreads a tapered group's links over its routers).

use super::NONE;
use crate::config::{Arrangement, GlobalPortOrder};
use crate::error::{Error, Result};

pub struct Wiring {
    /// Per (router, slot): (peer router id, peer slot) or (NONE, 0).
    pub peer: Vec<(u32, u16)>,
    /// Per (router, slot): destination group or NONE.
    pub group: Vec<u32>,
}

/// The (router, port) of slot `i` of a group, and back.
#[derive(Clone, Copy)]
struct Slots {
    order: GlobalPortOrder,
    a: usize,
    h: usize,
}

impl Slots {
    fn port_of(self, i: usize) -> (usize, usize) {
        match self.order {
            GlobalPortOrder::ByRouter => (i / self.h, i % self.h),
            GlobalPortOrder::RoundRobin => (i % self.a, i / self.a),
        }
    }

    fn slot_of(self, r: usize, k: usize) -> usize {
        match self.order {
            GlobalPortOrder::ByRouter => r * self.h + k,
            GlobalPortOrder::RoundRobin => k * self.a + r,
        }
    }
}

pub fn wire(arr: Arrangement, order: GlobalPortOrder, a: usize, h: usize, g: usize, l: usize) -> Result<Wiring> {
    let slots = g * a * h;
    let mut w = Wiring { peer: vec![(NONE, 0); slots], group: vec![NONE; slots] };
    if g <= 1 {
        return Ok(w);
    }
    let slots_of = Slots { order, a, h };
    if arr == Arrangement::Circulant {
        if order != GlobalPortOrder::ByRouter {
            return Err(Error::config(
                "topology.global_port_order",
                "circulant pairs a router's ports itself; allowed with it: by-router",
            ));
        }
        if !h.is_multiple_of(2) {
            return Err(Error::config("topology.arrangement", format!("circulant needs an even h (h = {h})")));
        }
        if l != 1 || g != a * h + 1 {
            return Err(Error::config(
                "topology.arrangement",
                format!(
                    "circulant needs one link per group pair and g = a*h + 1 = {} (got g = {g}, links_per_pair = {l})",
                    a * h + 1
                ),
            ));
        }
    }
    let m = g - 1; // relative group indices 0..m
    for grp in 0..g {
        for r in 0..a {
            for k in 0..h {
                let i = slots_of.slot_of(r, k);
                let idx = (grp * a + r) * h + k;
                let (d, pr, pk) = match arr {
                    Arrangement::Circulant => {
                        let o = i / 2 + 1;
                        let d = if k % 2 == 0 { (grp + o) % g } else { (grp + g - o % g) % g };
                        (d, r, k ^ 1)
                    }
                    _ => {
                        if i >= m * l {
                            continue; // unconnected port, as SST leaves it
                        }
                        let (j, slice) = (i % m, i / m);
                        let (d, jp) = match arr {
                            Arrangement::Absolute => {
                                let d = if j < grp { j } else { j + 1 };
                                (d, if grp < d { grp } else { grp - 1 })
                            }
                            Arrangement::Relative => ((grp + j + 1) % g, g - 2 - j),
                            Arrangement::Palmtree => ((grp + g - (j + 1) % g) % g, g - 2 - j),
                            Arrangement::Circulant => unreachable!(),
                        };
                        let (pr, pk) = slots_of.port_of(slice * m + jp);
                        (d, pr, pk)
                    }
                };
                w.group[idx] = d as u32;
                w.peer[idx] = ((d * a + pr) as u32, pk as u16);
            }
        }
    }
    Ok(w)
}
