//! The flits each output port put on its link within a recent span: the in-flight estimate of
//! the DGB code (hanskasan/booksim2 8d00456e, `IQRouter::GetInFlight`), which counts a port's
//! flits sent within twice its channel's latency as being on the wire or returning as
//! credits. It is an estimate: a flit that waits downstream is still counted as returning
//! until the span ends, and a credit that comes back later than the span (BookSim's router
//! and credit delays make every one do so by a cycle or more) counts as buffered meanwhile.
//! Kept per port (the estimate sums a port's VCs), only for routings that read net occupancies
//! ([`crate::routing::Hooks::NET_OCCUPANCY`]).
//!
//! Two exact representations of the same count. Under BookSim timing (single-flit packets, a
//! port sends at most one flit per cycle, at a tick) a port's sends of the last 256 cycles are
//! one bit per cycle beside the port's other fields ([`CycleRing`]): a record and a query are
//! a few word operations on one cache line. Otherwise a port keeps a log of its sends
//! ([`SendLog`]), whose oldest entry, written a span ago, is usually out of the cache.
//!
//! Under BookSim timing the window also keeps, per port, the credit returns still to arrive
//! ([`ReturnRing`], a count per cycle of their arrival): a port's raw occupancy is the credits
//! held downstream (ledger counters alone) plus those returns, and the estimate that less the
//! sends, so neither walks the ledger's rings of pending returns
//! ([`crate::network::credits::CreditLedger::port_occupancy`]).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::units::Time;

/// Cycles a [`CycleRing`] remembers: spans up to this many cycles use it.
const RING_CYCLES: u64 = 256;

/// Cycles ahead a [`ReturnRing`] can hold a return: credit latencies below this many cycles
/// less one use it.
const RETURN_CYCLES: u64 = 128;

/// Credit flits a [`ReturnRing`] holds per cycle and port.
const RETURNS_PER_CYCLE: u64 = 3;

/// What a cycle-based timing (BookSim's) guarantees the window: every send is one flit at a
/// multiple of `cycle` ps, at most one per cycle and port; a credit return arrives at most
/// `return_delay` ps after its record, at most `returns_per_cycle` flits per cycle and port.
#[derive(Clone, Copy, Debug)]
pub struct Cycles {
    pub cycle: Time,
    pub return_delay: Time,
    pub returns_per_cycle: u64,
}

/// Every port's recent sends, ports numbered `queue / vcs`.
pub struct SentWindow {
    vcs: usize,
    kind: Kind,
}

enum Kind {
    Log(Vec<SendLog>),
    /// Sends at multiples of `cycle` ps only, one flit each, at most one per cycle and port;
    /// with `returns`, each port's credit returns still to arrive.
    Cycles {
        cycle: Time,
        ports: Vec<CycleRing>,
        returns: Option<Vec<ReturnRing>>,
    },
}

impl SentWindow {
    /// `ports` ports of `vcs` VC queues each, port `p` counting its sends of the last
    /// `span_of(p)` ps. With `cycles` (BookSim timing), when every span is a whole number of at
    /// most 256 cycles the ports keep a bit per cycle instead of a log; and when its returns
    /// fit a [`ReturnRing`], each port keeps the credit returns still to arrive too
    /// ([`Self::returning`]).
    pub fn new(ports: usize, vcs: usize, cycles: Option<Cycles>, span_of: impl Fn(usize) -> Time) -> SentWindow {
        let spans: Vec<Time> = (0..ports).map(span_of).collect();
        let fits = |c: Time| c > 0 && spans.iter().all(|&s| s % c == 0 && s / c <= RING_CYCLES);
        let kind = match cycles {
            Some(t) if fits(t.cycle) => Kind::Cycles {
                cycle: t.cycle,
                ports: spans.iter().map(|&s| CycleRing::new(s)).collect(),
                returns: (t.return_delay / t.cycle + 2 < RETURN_CYCLES && t.returns_per_cycle <= RETURNS_PER_CYCLE)
                    .then(|| vec![ReturnRing::new(); ports]),
            },
            _ => Kind::Log(spans.iter().map(|&s| SendLog::new(s)).collect()),
        };
        SentWindow { vcs: vcs.max(1), kind }
    }

    /// Whether the ports keep a bit per cycle ([`CycleRing`]).
    pub fn by_cycle(&self) -> bool {
        matches!(self.kind, Kind::Cycles { .. })
    }

    /// `flits` of VC queue `q` start on the link at `now` (times never decrease per port).
    #[inline]
    pub fn record(&mut self, q: usize, now: Time, flits: u32) {
        let p = q / self.vcs;
        match &mut self.kind {
            Kind::Log(ports) => ports[p].record(now, flits),
            Kind::Cycles { cycle, ports, .. } => {
                debug_assert!(flits == 1 && now.is_multiple_of(*cycle), "a send of {flits} flits at {now} ps");
                ports[p].record(now / *cycle);
            }
        }
    }

    /// Flits the port of VC queue `q` sent in `(now − span, now]`. Queries come at times that
    /// never decrease.
    #[inline]
    pub fn count(&self, q: usize, now: Time) -> u32 {
        let p = q / self.vcs;
        match &self.kind {
            Kind::Log(ports) => ports[p].count(now),
            Kind::Cycles { cycle, ports, .. } => ports[p].count(now, *cycle),
        }
    }

    /// At `now`, a return of `flits` credits to VC queue `q` arriving at `time` was recorded
    /// (every record of the port's returns and every query at a time not before the last).
    #[inline]
    pub fn returned(&mut self, q: usize, now: Time, time: Time, flits: u32) {
        if let Kind::Cycles { cycle, returns: Some(r), .. } = &mut self.kind {
            r[q / self.vcs].record(now, time, flits, *cycle);
        }
    }

    /// Flits of credit returns to the port of VC queue `q` recorded and arriving after `now`,
    /// if the window keeps them.
    #[inline]
    pub fn returning(&self, q: usize, now: Time) -> Option<u32> {
        match &self.kind {
            Kind::Cycles { cycle, returns: Some(r), .. } => Some(r[q / self.vcs].count(now, *cycle)),
            _ => None,
        }
    }
}

/// One port's credit returns by cycle of arrival, in one cache line: cycle `k` holds the
/// returns arriving at `k · cycle − delta` (BookSim timing's credits land half a cycle before
/// the pass that reads them; every return of a port has the same `delta`) as a 2-bit count, bit
/// `k % 128` of `lo` and of `hi`. The ring holds cycles `upto + 1 ..= last`, `ahead` flits in
/// all; those up to `upto` have arrived.
#[derive(Clone, Copy)]
#[repr(align(64))]
pub struct ReturnRing {
    lo: [u64; 2],
    hi: [u64; 2],
    upto: u64,
    last: u64,
    ahead: u32,
    /// `u32::MAX` until the first return.
    delta: u32,
}

impl ReturnRing {
    fn new() -> ReturnRing {
        ReturnRing { lo: [0; 2], hi: [0; 2], upto: 0, last: 0, ahead: 0, delta: u32::MAX }
    }

    /// Flits of the ring's cycles `from ..= to`.
    #[inline]
    fn sum(&self, from: u64, to: u64) -> u32 {
        let mut n = 0;
        for_range(from % RETURN_CYCLES, to + 1 - from, RETURN_CYCLES, |w, mask| {
            n += (self.lo[w] & mask).count_ones() + 2 * (self.hi[w] & mask).count_ones();
        });
        n
    }

    #[inline]
    fn record(&mut self, now: Time, time: Time, flits: u32, cycle: Time) {
        if self.delta == u32::MAX {
            self.delta = ((cycle - time % cycle) % cycle) as u32;
        }
        let delta = self.delta as Time;
        debug_assert_eq!((time + delta) % cycle, 0, "a credit return at {time} ps off its port's phase");
        let (k, m) = ((time + delta) / cycle, (now + delta) / cycle);
        // The cycles that have arrived by now leave the ring.
        let end = m.min(self.last);
        if end > self.upto {
            self.ahead -= self.sum(self.upto + 1, end);
            let (lo, hi) = (&mut self.lo, &mut self.hi);
            for_range((self.upto + 1) % RETURN_CYCLES, end - self.upto, RETURN_CYCLES, |w, mask| {
                lo[w] &= !mask;
                hi[w] &= !mask;
            });
        }
        self.upto = self.upto.max(m);
        if k <= self.upto {
            return;
        }
        debug_assert!(k - self.upto < RETURN_CYCLES, "a return {} cycles ahead", k - self.upto);
        let (w, bit) = (((k / 64) % 2) as usize, 1u64 << (k % 64));
        let v = (self.lo[w] & bit != 0) as u32 + 2 * (self.hi[w] & bit != 0) as u32 + flits;
        assert!(v <= 3, "more than 3 credit flits of one port arriving in one cycle");
        self.lo[w] = if v & 1 != 0 { self.lo[w] | bit } else { self.lo[w] & !bit };
        self.hi[w] = if v & 2 != 0 { self.hi[w] | bit } else { self.hi[w] & !bit };
        self.ahead += flits;
        self.last = self.last.max(k);
    }

    /// Flits recorded whose cycle is after the one arrived by `now`: the ring's cycles from
    /// there to the newest, or all it holds less those up to there (whichever is fewer words).
    #[inline]
    fn count(&self, now: Time, cycle: Time) -> u32 {
        if self.delta == u32::MAX {
            return 0;
        }
        let m = (now + self.delta as Time) / cycle;
        if m >= self.last {
            0
        } else if m <= self.upto {
            self.ahead
        } else if m - self.upto <= self.last - m {
            self.ahead - self.sum(self.upto + 1, m)
        } else {
            self.sum(m + 1, self.last)
        }
    }
}

/// One port's sends of the last [`RING_CYCLES`] cycles, bit `c % 256` for cycle `c` (the cycles
/// after the newest send are not in the ring yet: a record clears them first).
#[derive(Clone, Copy)]
#[repr(align(64))]
pub struct CycleRing {
    bits: [u64; 4],
    /// The cycle of the newest send (meaningful when `any`).
    last: u64,
    any: bool,
    /// The span in ps.
    span: Time,
}

impl CycleRing {
    fn new(span: Time) -> CycleRing {
        CycleRing { bits: [0; 4], last: 0, any: false, span }
    }

    #[inline]
    fn record(&mut self, c: u64) {
        if self.span == 0 {
            return;
        }
        if self.any {
            debug_assert!(c > self.last, "two sends of one port in cycle {c}");
            // Cycles last + 1 ..= c take the places of cycles a whole ring earlier.
            let gap = (c - self.last).min(RING_CYCLES);
            let first = (c + 1 - gap) % RING_CYCLES;
            for_range(first, gap, RING_CYCLES, |w, mask| self.bits[w] &= !mask);
        }
        self.bits[(c / 64 % 4) as usize] |= 1 << (c % 64);
        self.last = c;
        self.any = true;
    }

    /// Sends at cycles `c` with `c · cycle > now − span`, i.e. from cycle
    /// `floor((now − span) / cycle) + 1` to the newest (at most span / cycle ≤ 256 of them).
    #[inline]
    fn count(&self, now: Time, cycle: Time) -> u32 {
        if !self.any || self.span == 0 {
            return 0;
        }
        let lo = if now < self.span { 0 } else { (now - self.span) / cycle + 1 };
        // Queries come at or after the newest send: the range is within the ring.
        debug_assert!(lo + RING_CYCLES > self.last, "a query at {now} ps before cycle {}", self.last);
        if lo > self.last {
            return 0;
        }
        let mut n = 0;
        for_range(lo % RING_CYCLES, self.last - lo + 1, RING_CYCLES, |w, mask| n += (self.bits[w] & mask).count_ones());
        n
    }
}

/// Call `f(word, mask)` for the places `first .. first + len` of a ring of `ring` bits (`len ≤
/// ring`, a multiple of 64).
#[inline]
fn for_range(first: u64, len: u64, ring: u64, mut f: impl FnMut(usize, u64)) {
    let (mut pos, mut left) = (first, len);
    while left > 0 {
        let off = pos % 64;
        let take = (64 - off).min(left);
        let mask = if take == 64 { !0 } else { ((1u64 << take) - 1) << off };
        f((pos / 64) as usize, mask);
        left -= take;
        pos = (pos + take) % ring;
    }
}

/// One port's sends: (time, flits sent so far) not yet found expired by a record, and what the
/// queries have found since. Simulated time never goes back, so a query starts where the last
/// one stopped, and one that finds nothing newly expired reads this struct alone.
pub struct SendLog {
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

impl SendLog {
    fn new(span: Time) -> SendLog {
        SendLog {
            before: AtomicU64::new(0),
            next_expiry: AtomicU64::new(Time::MAX),
            stale: AtomicU64::new(0),
            span,
            total: 0,
            pruned: 0,
            pruned_total: 0,
            log: VecDeque::new(),
        }
    }

    fn record(&mut self, now: Time, flits: u32) {
        while let Some(&(t, sent)) = self.log.front() {
            if t + self.span > now {
                break;
            }
            self.pruned_total = sent;
            self.pruned += 1;
            self.log.pop_front();
        }
        self.total += flits as u64;
        self.log.push_back((now, self.total));
        // Every send a query found expired (at a time up to `now`) is pruned by now: the
        // oldest send left is the next to expire.
        *self.stale.get_mut() = self.pruned;
        *self.before.get_mut() = self.pruned_total;
        *self.next_expiry.get_mut() = self.log.front().map_or(Time::MAX, |&(t, _)| t + self.span);
    }

    #[inline]
    fn count(&self, now: Time) -> u32 {
        if now < self.next_expiry.load(Ordering::Relaxed) {
            return (self.total - self.before.load(Ordering::Relaxed)) as u32;
        }
        Self::expire(self, now)
    }

    /// [`Self::count`] when a send has expired since the last query.
    fn expire(p: &SendLog, now: Time) -> u32 {
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

    /// One flit per cycle of `ns` ps, no returns kept.
    fn sends(ns: Time) -> Cycles {
        Cycles { cycle: ns, return_delay: Time::MAX / 2, returns_per_cycle: 1 }
    }

    #[test]
    fn counts_the_sends_of_the_last_span_only() {
        // Two ports of 2 VCs: queues 0-1 and 2-3.
        let mut w = SentWindow::new(2, 2, None, |p| if p == 0 { 20 } else { 200 });
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
        let mut w = SentWindow::new(1, 1, None, |_| 20);
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

    #[test]
    fn the_cycle_ring_counts_the_sends_of_the_last_span_only() {
        // 1 ns cycles; port 0 a span of 20 cycles, port 1 of 256 (the ring's whole length).
        let ns = 1_000;
        let mut w = SentWindow::new(2, 1, Some(sends(ns)), |p| if p == 0 { 20 * ns } else { 256 * ns });
        assert!(w.by_cycle());
        for c in 0..30 {
            w.record(0, c * ns, 1);
        }
        // Cycles 10..=29 are within (9, 29] ns; at 29.5 ns too; at 40 ns cycles 21..=29.
        assert_eq!((w.count(0, 29 * ns), w.count(0, 29 * ns + ns / 2), w.count(0, 40 * ns)), (20, 20, 9));
        assert_eq!(w.count(0, 49 * ns), 0);
        // A send after a gap of more than a ring clears what the ring held.
        w.record(0, 1_000 * ns, 1);
        assert_eq!(w.count(0, 1_000 * ns), 1);
        for c in 0..300 {
            w.record(1, c * ns, 1);
        }
        assert_eq!((w.count(1, 299 * ns), w.count(1, 400 * ns), w.count(1, 555 * ns)), (256, 155, 0));
    }

    #[test]
    fn spans_the_ring_cannot_hold_keep_a_log() {
        let ns = 1_000;
        assert!(!SentWindow::new(1, 1, Some(sends(ns)), |_| 257 * ns).by_cycle());
        assert!(!SentWindow::new(1, 1, Some(sends(ns)), |_| 20 * ns + 1).by_cycle());
        assert!(!SentWindow::new(1, 1, None, |_| 20 * ns).by_cycle());
    }

    proptest::proptest! {
        /// The ring and the log count alike, for any sends (at most one per cycle and port,
        /// mostly a few cycles apart, sometimes hundreds) and queries (between sends, within a
        /// span or after it).
        #[test]
        fn the_cycle_ring_counts_as_the_log(
            ops in proptest::collection::vec((proptest::bool::ANY, 0usize..4, 0u64..700, 0u64..1_000), 1..1_200),
            span in proptest::prop_oneof![1u64..=256, 250u64..=256],
        ) {
            let ns = 1_000;
            let mut ring = SentWindow::new(2, 2, Some(sends(ns)), |_| span * ns);
            let mut log = SentWindow::new(2, 2, None, |_| span * ns);
            let (mut now, mut last): (u64, [Option<u64>; 2]) = (0, [None; 2]);
            for (send, q, g, frac) in ops {
                let gap = if g < 500 { g % 3 } else { g - 500 };
                if send {
                    let c = (now.div_ceil(ns) + gap).max(last[q / 2].map_or(0, |l| l + 1));
                    now = c * ns;
                    last[q / 2] = Some(c);
                    ring.record(q, now, 1);
                    log.record(q, now, 1);
                } else {
                    now += gap * ns + frac;
                    proptest::prop_assert_eq!(ring.count(q, now), log.count(q, now), "at {} ps", now);
                }
            }
        }
    }
}
