//! The flits each output VC put on its link within a recent span: the in-flight estimate of
//! the DGB code (hanskasan/booksim2 8d00456e, `IQRouter::GetInFlight`), which counts a VC's
//! flits sent within twice its channel's latency as being on the wire or returning as
//! credits. It is an estimate: a flit that waits downstream is still counted as returning
//! until the span ends, and a credit that comes back later than the span (BookSim's router
//! and credit delays make every one do so by a cycle or more) counts as buffered meanwhile.
//! Kept only for routings that read net occupancies ([`crate::routing::Hooks::NET_OCCUPANCY`]).

use std::collections::VecDeque;

use crate::units::Time;

/// Per VC queue: its span, its sends (time, flits sent so far) within the span or a little
/// older (pruned as new ones are recorded), and the running totals.
pub struct SentWindow {
    span: Vec<Time>,
    log: Vec<VecDeque<(Time, u64)>>,
    /// Flits sent so far, and those of the sends pruned from the log.
    total: Vec<u64>,
    pruned: Vec<u64>,
}

impl SentWindow {
    /// `queues` VC queues, queue `q` counting its sends of the last `span_of(q)` ps.
    pub fn new(queues: usize, span_of: impl Fn(usize) -> Time) -> SentWindow {
        SentWindow {
            span: (0..queues).map(span_of).collect(),
            log: (0..queues).map(|_| VecDeque::new()).collect(),
            total: vec![0; queues],
            pruned: vec![0; queues],
        }
    }

    /// `flits` of queue `q` start on the link at `now` (times never decrease per queue).
    pub fn record(&mut self, q: usize, now: Time, flits: u32) {
        let (span, log) = (self.span[q], &mut self.log[q]);
        while let Some(&(t, sent)) = log.front() {
            if t + span > now {
                break;
            }
            self.pruned[q] = sent;
            log.pop_front();
        }
        self.total[q] += flits as u64;
        log.push_back((now, self.total[q]));
    }

    /// Flits queue `q` sent in `(now − span, now]`.
    pub fn count(&self, q: usize, now: Time) -> u32 {
        let (span, log) = (self.span[q], &self.log[q]);
        let old = log.partition_point(|&(t, _)| t + span <= now);
        let before = if old == 0 { self.pruned[q] } else { log[old - 1].1 };
        (self.total[q] - before) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_the_sends_of_the_last_span_only() {
        let mut w = SentWindow::new(2, |q| if q == 0 { 20 } else { 200 });
        for t in 0..30 {
            w.record(0, t, 1);
        }
        // Sent at 10..=29 are within (9, 29]; the one at 9 left at 29 (9 + 20 <= 29).
        assert_eq!(w.count(0, 29), 20);
        assert_eq!(w.count(0, 40), 9);
        assert_eq!(w.count(0, 49), 0);
        assert_eq!(w.count(1, 49), 0);
        w.record(1, 100, 3);
        w.record(1, 100, 2);
        assert_eq!((w.count(1, 100), w.count(1, 299), w.count(1, 300)), (5, 5, 0));
        // Pruning on a later record keeps the count.
        w.record(0, 45, 4);
        assert_eq!(w.count(0, 45), 4 + 4);
        assert_eq!(w.count(0, 64), 4);
    }
}
