//! The flits each output port put on its link within a recent span: the in-flight estimate of
//! the DGB code (hanskasan/booksim2 8d00456e, `IQRouter::GetInFlight`), which counts a port's
//! flits sent within twice its channel's latency as being on the wire or returning as
//! credits. It is an estimate: a flit that waits downstream is still counted as returning
//! until the span ends, and a credit that comes back later than the span (BookSim's router
//! and credit delays make every one do so by a cycle or more) counts as buffered meanwhile.
//! Kept per port (the estimate sums a port's VCs), only for routings that read net occupancies
//! ([`crate::routing::Hooks::NET_OCCUPANCY`]).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::units::Time;

/// One port's sends: (time, flits sent so far) not yet found expired by a record, and what the
/// queries have found since. Simulated time never goes back, so a query starts where the last
/// one stopped, and one that finds nothing newly expired reads this struct alone.
struct Port {
    /// Flits whose sends a query found expired, and when the oldest send it did not find
    /// expired expires (`Time::MAX`: none).
    before: AtomicU64,
    next_expiry: AtomicU64,
    /// Sends (counted from the first) that a query found expired.
    stale: AtomicU64,
    span: Time,
    /// Flits sent so far; sends removed from the log, and their flits.
    total: u64,
    pruned: u64,
    pruned_total: u64,
    log: VecDeque<(Time, u64)>,
}

/// Every port's recent sends, ports numbered `queue / vcs`.
pub struct SentWindow {
    vcs: usize,
    ports: Vec<Port>,
}

impl SentWindow {
    /// `ports` ports of `vcs` VC queues each, port `p` counting its sends of the last
    /// `span_of(p)` ps.
    pub fn new(ports: usize, vcs: usize, span_of: impl Fn(usize) -> Time) -> SentWindow {
        let port = |p| Port {
            before: AtomicU64::new(0),
            next_expiry: AtomicU64::new(Time::MAX),
            stale: AtomicU64::new(0),
            span: span_of(p),
            total: 0,
            pruned: 0,
            pruned_total: 0,
            log: VecDeque::new(),
        };
        SentWindow { vcs: vcs.max(1), ports: (0..ports).map(port).collect() }
    }

    /// `flits` of VC queue `q` start on the link at `now` (times never decrease per port).
    pub fn record(&mut self, q: usize, now: Time, flits: u32) {
        let p = &mut self.ports[q / self.vcs];
        while let Some(&(t, sent)) = p.log.front() {
            if t + p.span > now {
                break;
            }
            p.pruned_total = sent;
            p.pruned += 1;
            p.log.pop_front();
        }
        p.total += flits as u64;
        p.log.push_back((now, p.total));
        // Every send a query found expired (at a time up to `now`) is pruned by now: the
        // oldest send left is the next to expire.
        *p.stale.get_mut() = p.pruned;
        *p.before.get_mut() = p.pruned_total;
        *p.next_expiry.get_mut() = p.log.front().map_or(Time::MAX, |&(t, _)| t + p.span);
    }

    /// Flits the port of VC queue `q` sent in `(now − span, now]`. Queries come at times that
    /// never decrease.
    #[inline]
    pub fn count(&self, q: usize, now: Time) -> u32 {
        let p = &self.ports[q / self.vcs];
        if now < p.next_expiry.load(Ordering::Relaxed) {
            return (p.total - p.before.load(Ordering::Relaxed)) as u32;
        }
        Self::expire(p, now)
    }

    /// [`Self::count`] when a send has expired since the last query.
    fn expire(p: &Port, now: Time) -> u32 {
        let mut i = (p.stale.load(Ordering::Relaxed) - p.pruned) as usize;
        while i < p.log.len() && p.log[i].0 + p.span <= now {
            i += 1;
        }
        let before = if i == 0 { p.pruned_total } else { p.log[i - 1].1 };
        let next = p.log.get(i).map_or(Time::MAX, |&(t, _)| t + p.span);
        p.stale.store(p.pruned + i as u64, Ordering::Relaxed);
        p.before.store(before, Ordering::Relaxed);
        p.next_expiry.store(next, Ordering::Relaxed);
        (p.total - before) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_the_sends_of_the_last_span_only() {
        // Two ports of 2 VCs: queues 0-1 and 2-3.
        let mut w = SentWindow::new(2, 2, |p| if p == 0 { 20 } else { 200 });
        for t in 0..30 {
            w.record((t % 2) as usize, t, 1);
        }
        // Sent at 10..=29 are within (9, 29]; the one at 9 left at 29 (9 + 20 <= 29).
        assert_eq!(w.count(0, 29), 20);
        assert_eq!(w.count(1, 40), 9);
        assert_eq!(w.count(0, 49), 0);
        assert_eq!(w.count(3, 49), 0);
        w.record(3, 100, 3);
        w.record(2, 100, 2);
        assert_eq!((w.count(2, 100), w.count(3, 299), w.count(2, 300)), (5, 5, 0));
    }

    #[test]
    fn pruning_by_a_later_record_keeps_the_count() {
        let mut w = SentWindow::new(1, 1, |_| 20);
        for t in 0..30 {
            w.record(0, t, 1);
        }
        assert_eq!(w.count(0, 40), 9);
        w.record(0, 45, 4);
        assert_eq!(w.count(0, 45), 4 + 4);
        assert_eq!(w.count(0, 64), 4);
        w.record(0, 70, 1);
        assert_eq!(w.count(0, 70), 1);
    }
}
