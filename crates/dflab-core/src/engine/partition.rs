//! The order of simultaneous events, windows, and logical partitions.
//!
//! **The contract.** Everything one group's routers and nodes do depends only on their own
//! events and on what reaches them over global links, and every effect that crosses a global
//! link takes at least the *lookahead* `L` = output + global link + input latency (a packet
//! also its serialisation). Simultaneous events are handled in a canonical order: by lane (each
//! lane a fixed delay, registered in a fixed order, the timer wheel last); within a lane of a
//! group's own events, in the order the group's handlers sent them; within a lane of events
//! over global links, by sending group and then in the order that group's handlers sent them,
//! whichever partition they ran in. The order between events of different groups within a
//! window does not matter: their effects meet only over global links, where the barrier puts
//! them in order again; what groups share (packet ids, the arbiters' clock whose per-router
//! order alone counts, integer statistics) does not depend on it.
//!
//! **How the engine keeps it.** Time is cut into windows of `L`. Events over global links have
//! lanes of their own; a window's events there all fall at or after its end, so at the end of
//! the window (a barrier at time `k·L`, before anything at that time is handled) each such
//! lane's new events are put in the canonical order: a stable sort of each run of simultaneous
//! events by sending group (counting, or nothing when the run is in order). Credits over global
//! links are collected in the [`Mailbox`] and given back to their ledgers at the barrier, which
//! wakes a sender waiting for them at their arrival. Control messages to a router of another
//! group at a chosen delay (`Dest::Router`) are sorted there too. Nothing is late: whatever
//! crosses carries a time at or after the barrier.
//!
//! **Logical partitions** (execution only). The groups are split into P contiguous ranges, each
//! with its own event queue and its share of the workload's schedule. A window is run
//! partition by partition; events over global links wait in the mailbox, and the barrier
//! appends them to their lanes in their partitions before the lanes are ordered. By the
//! contract the results do not depend on P (a test runs 1 to 4 and compares the bytes): this is
//! the structure a multi-threaded engine will run in parallel, one partition per thread, with
//! the global-link latency as lookahead. Oracles (routings that read other routers' state at
//! once) and workloads that share state between nodes run one partition.

use std::ops::Range;

use super::event::Event;
use super::queue::{EventQueue, Scratch};
use super::sim::Simulation;
use crate::routing::{Hooks, Routing};
use crate::units::Time;

/// The sending group of an event over a global link: the group at the other end of its
/// target port (`peer_group`, by port index), the key of the canonical order.
#[inline]
fn sender_group(ev: &Event, peer_group: &[u32], radix: usize) -> u64 {
    let port = match *ev {
        Event::Arrive { pi, .. } | Event::PortWake { pi, .. } | Event::PortArm { pi, .. } => pi as usize,
        Event::Msg { router, port, .. } => router as usize * radix + port as usize,
        _ => unreachable!("only arrivals, credit wake-ups and arms, and messages cross between groups"),
    };
    peer_group[port] as u64
}

/// An event over a global link on its way to another partition (or a message at a chosen
/// delay): its time, target router and lane (`None`: the timer wheel), and the sending router
/// (of a message at a chosen delay; not kept for the others).
#[derive(Debug, Clone, Copy)]
pub struct Cross {
    pub time: Time,
    pub router: u32,
    pub lane: Option<usize>,
    pub ev: Event,
    pub from: u32,
}

/// Credits of a packet that left an input buffer fed by a global link, on their way back to the
/// upstream router's output VC `queue` (its router and port).
#[derive(Debug, Clone, Copy)]
pub struct CreditReturn {
    pub at: Time,
    pub queue: u32,
    pub router: u32,
    pub port: u16,
    pub flits: u32,
}

/// What crosses at the next barrier.
#[derive(Debug, Default)]
pub struct Mailbox {
    /// Events for other partitions (logical partitions only).
    pub events: Vec<Cross>,
    /// Messages between groups at a chosen delay.
    pub timed: Vec<Cross>,
    pub credits: Vec<CreditReturn>,
    /// The scratch space of [`EventQueue::canonicalize`].
    scratch: Scratch,
}

/// The partitions of a run: the routers and nodes of each, the window length, and the event
/// queues of the partitions not running now.
pub struct Partitions {
    /// Window length: the lookahead, or 1 µs when nothing crosses between groups (the windows
    /// then only pace the watchdog and the checks).
    pub window: Time,
    /// First router of each partition, and one past the last router.
    pub router_bounds: Vec<u32>,
    /// The partition whose queue and schedule are in place.
    pub active: usize,
    /// The event queues of the other partitions (the active one's is `Core::q`).
    pub parked: Vec<Option<EventQueue>>,
    /// By port index (`router·radix + port`): the group at the other end of a global port.
    pub peer_group: Vec<u32>,
}

impl Partitions {
    /// `count` partitions of `groups` groups of `a` routers (contiguous ranges of groups);
    /// `peer_group` as the field.
    pub fn new(count: usize, groups: usize, a: usize, window: Time, peer_group: Vec<u32>) -> Partitions {
        let router_bounds = (0..=count).map(|p| ((p * groups / count) * a) as u32).collect();
        Partitions { window, router_bounds, active: 0, parked: (0..count).map(|_| None).collect(), peer_group }
    }

    pub fn count(&self) -> usize {
        self.router_bounds.len() - 1
    }

    /// The partition of `router`.
    #[inline]
    pub fn of_router(&self, router: u32) -> usize {
        self.router_bounds.partition_point(|&b| b <= router) - 1
    }

    /// The routers of partition `p`.
    pub fn routers(&self, p: usize) -> Range<u32> {
        self.router_bounds[p]..self.router_bounds[p + 1]
    }
}

impl<R: Routing> Simulation<R> {
    /// Put partition `p`'s event queue and workload schedule in place.
    pub(crate) fn switch_to(&mut self, p: usize) {
        let from = self.parts.active;
        if p == from {
            return;
        }
        let incoming = self.parts.parked[p].take().expect("a parked partition has its queue");
        let outgoing = std::mem::replace(&mut self.core.q, incoming);
        self.parts.parked[from] = Some(outgoing);
        self.traffic.switch_partition(p);
        self.parts.active = p;
        self.core.now = self.core.q.now();
    }

    /// The event queue of `router`'s partition.
    #[inline]
    fn queue_of(&mut self, router: u32) -> &mut EventQueue {
        if self.parts.count() == 1 {
            return &mut self.core.q;
        }
        let p = self.parts.of_router(router);
        match self.parts.parked[p].as_mut() {
            Some(q) => q,
            None => &mut self.core.q,
        }
    }

    /// The barrier at `at`: give back the credits that crossed during the window (waking the
    /// senders that wait for them), hand the events for other partitions to their queues, and
    /// put every partition's lanes of events over global links in the canonical order.
    pub(crate) fn barrier(&mut self, at: Time) {
        if !self.core.cross {
            return;
        }
        // What other partitions sent, then the credits' wake-ups: in every partition count the
        // lane of messages holds the messages before the wake-ups (the order they take at the
        // same time and sending group).
        let mut events = std::mem::take(&mut self.core.mail.events);
        for c in events.drain(..) {
            debug_assert!(c.time >= at, "an event over a global link faster than the lookahead");
            let lane = c.lane.expect("events for other partitions have their lane");
            self.queue_of(c.router).append_at(lane, c.time, c.ev);
        }
        self.core.mail.events = events;
        self.give_back_credits(at);
        let mut timed = std::mem::take(&mut self.core.mail.timed);
        if !timed.is_empty() {
            // Stable: equal keys come from one sending group, in its order.
            let topo = &self.core.topo;
            timed.sort_by_key(|c| (c.time, topo.group_of(c.from), c.router));
            for c in timed.drain(..) {
                self.queue_of(c.router).at(c.time, c.ev);
            }
        }
        self.core.mail.timed = timed;
        let mut scratch = std::mem::take(&mut self.core.mail.scratch);
        let (radix, groups) = (self.core.topo.radix, self.core.topo.g as u64);
        let peer_group = &self.parts.peer_group;
        let order = |ev: &Event| sender_group(ev, peer_group, radix);
        for p in 0..self.parts.count() {
            let q = match self.parts.parked[p].as_mut() {
                Some(q) => q,
                None => &mut self.core.q,
            };
            for &lane in self.core.lanes.global() {
                q.canonicalize(lane, order, groups, &mut scratch);
            }
        }
        self.core.mail.scratch = scratch;
    }

    /// Give back the credits that crossed during the window ending at `at`, and wake the
    /// senders that wait for them when they arrive.
    fn give_back_credits(&mut self, at: Time) {
        let credit_lane = self.core.lanes.credit[2];
        let mut credits = std::mem::take(&mut self.core.mail.credits);
        let vcs = self.fab.vcs;
        for c in credits.drain(..) {
            debug_assert!(c.at >= at, "a credit return faster than the lookahead");
            if R::HOOKS.has(Hooks::NET_OCCUPANCY) {
                self.fab.credits.delivered(c.queue as usize, c.flits);
            }
            if self.fab.credits.give_back(c.queue as usize, at, c.at, c.flits) {
                let pi = self.fab.pidx(c.router, c.port);
                let st = &mut self.fab.ports[pi];
                if !st.wake {
                    st.wake = true;
                    st.wake_at = c.at;
                    for v in 0..vcs {
                        self.fab.credits.set_watched(pi * vcs + v, false);
                    }
                    let ev = Event::PortWake { router: c.router, port: c.port, pi: pi as u32 };
                    self.queue_of(c.router).append_at(credit_lane, c.at, ev);
                }
            }
        }
        self.core.mail.credits = credits;
    }
}

#[cfg(test)]
mod tests {
    use super::Partitions;

    #[test]
    fn partitions_are_contiguous_ranges_of_whole_groups() {
        let parts = Partitions::new(4, 33, 8, 1, Vec::new());
        assert_eq!(parts.count(), 4);
        let sizes: Vec<u32> = (0..4).map(|p| parts.routers(p).len() as u32 / 8).collect();
        assert_eq!(sizes, [8, 8, 8, 9]);
        assert_eq!(parts.routers(3).end, 33 * 8);
        for r in 0..33 * 8 {
            assert!(parts.routers(parts.of_router(r)).contains(&r));
        }
    }
}
