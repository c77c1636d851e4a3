//! The contention counters of UGAL-LE (Chaulagain & Yuan, ICS'24 §4.2.1, Eq. 1), kept by every
//! router from local information only.
//!
//! `F[i][j]` counts the packets this router received, within the last `window`, that were
//! injected at router `i` of this router's group (a packet from one of its own nodes counts
//! under its own index) and are bound for group `j`; packets from other groups are not counted.
//! The contention factor of group `j` is `C_j = Σ_i [F[i][j] > threshold]` (strict), the number
//! of routers of the group with an active flow to `j`.
//!
//! The window slides exactly: an arrival at time `t` counts while `now − window < t`, kept in
//! a queue of the window's arrivals (⚠ the paper says "sliding" without a mechanism; a
//! tumbling reset or coarse buckets would count differently near the window's edge).

use std::collections::VecDeque;

use crate::units::Time;

/// One router's counters (`a · g` of them) and the arrivals of its window.
#[derive(Debug, Clone)]
pub struct ContentionCounters {
    g: usize,
    a: usize,
    window: Time,
    threshold: u32,
    counts: Vec<u32>,
    /// (arrival time, `i · g + j`), oldest first.
    recent: VecDeque<(Time, u32)>,
}

impl ContentionCounters {
    /// Counters for a group of `a` routers in a network of `g` groups.
    pub fn new(a: usize, g: usize, window: Time, threshold: u32) -> ContentionCounters {
        ContentionCounters { g, a, window, threshold, counts: vec![0; a * g], recent: VecDeque::new() }
    }

    /// Forget the arrivals that left the window (`t <= now − window`).
    fn expire(&mut self, now: Time) {
        while let Some(&(t, k)) = self.recent.front() {
            if t + self.window > now {
                break;
            }
            self.counts[k as usize] -= 1;
            self.recent.pop_front();
        }
    }

    /// A packet from router `i` of this group, bound for group `j`, arrived now.
    pub fn record(&mut self, now: Time, i: usize, j: usize) {
        self.expire(now);
        let k = i * self.g + j;
        self.counts[k] += 1;
        self.recent.push_back((now, k as u32));
    }

    /// §4.2.1: count `pkt`, arriving at `view.router` now, if it was injected in this group
    /// (under its source router and destination group).
    pub fn observe(&mut self, view: &super::RouterView, pkt: &crate::network::Packet) {
        let topo = view.topo;
        let src = topo.router_of_node(pkt.src);
        if topo.group_of(src) == view.group {
            self.record(view.now, topo.index_in_group(src) as usize, topo.group_of(pkt.dst_router) as usize);
        }
    }

    /// `F[i][j]` at `now`.
    pub fn count(&mut self, now: Time, i: usize, j: usize) -> u32 {
        self.expire(now);
        self.counts[i * self.g + j]
    }

    /// The contention factor `C_j` at `now` (Eq. 1).
    pub fn contention(&mut self, now: Time, j: usize) -> u32 {
        self.expire(now);
        (0..self.a).filter(|&i| self.counts[i * self.g + j] > self.threshold).count() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::ContentionCounters;

    /// The paper's Fig. 3 on dfly(2,4,2,9)'s counters (Fig. 4: a = 4, g = 9), threshold 5,
    /// window 50 cycles of 1 ns: flows from R0, R1 and R2 to group 5 pass the gateway R3.
    #[test]
    fn figure_3_flows_give_a_contention_factor_of_three_and_slide_out() {
        const NS: u64 = 1000;
        let mut c = ContentionCounters::new(4, 9, 50 * NS, 5);
        // Six packets of each flow within 20 cycles; R3's own node sends three (not active).
        for k in 0..6 {
            for i in 0..3 {
                c.record((k * 3 + i) as u64 * NS, i, 5);
            }
        }
        for k in 0..3 {
            c.record((20 + k) * NS, 3, 5);
        }
        assert_eq!(c.count(25 * NS, 1, 5), 6);
        assert_eq!(c.contention(25 * NS, 5), 3);
        assert_eq!(c.contention(25 * NS, 4), 0);
        // "Another active flow from the compute node in R3" raises it to 4: three more packets.
        for k in 0..3 {
            c.record((26 + k) * NS, 3, 5);
        }
        assert_eq!(c.contention(30 * NS, 5), 4);
        // Strictly more than the threshold: five packets are not an active flow.
        let mut five = ContentionCounters::new(4, 9, 50 * NS, 5);
        (0..5).for_each(|k| five.record(k * NS, 0, 2));
        assert_eq!(five.contention(10 * NS, 2), 0);
        five.record(6 * NS, 0, 2);
        assert_eq!(five.contention(10 * NS, 2), 1);
        // The window slides: R0's packets arrived at 0, 3, ..., 15 ns and leave it at 50 ns
        // after each (an arrival at t counts while now - 50 < t).
        assert_eq!(c.count(50 * NS, 0, 5), 5);
        assert_eq!(c.count(53 * NS, 0, 5), 4);
        assert_eq!(c.contention(53 * NS, 5), 1); // R3's six packets remain
        assert_eq!(c.contention(79 * NS, 5), 0);
        assert_eq!(c.count(200 * NS, 3, 5), 0);
    }
}
