//! The event queue.
//!
//! Almost every event in a packet network is scheduled a *fixed* delay after the current time
//! (a link latency, a serialisation time, a crossbar transfer). Events pushed with the same delay
//! at non-decreasing times come out in non-decreasing time order, so one FIFO per distinct delay
//! is already sorted; the next event is the earliest head among a handful of FIFOs (at most 16
//! heads). The earliest head and the runner-up are kept: events come in runs from one FIFO, so
//! a pop rarely needs to rescan the heads. Each FIFO is a power-of-two ring buffer (`Fifo`). This is cheaper than a
//! binary heap over all pending events. Events at irregular times (a port that is free again,
//! generation of periodic traffic) go to a timer wheel (`wheel.rs`). Within a FIFO, equal times come out in insertion order; between FIFOs,
//! equal times come out by FIFO index (the wheel last, in insertion order). The order is total
//! and fixed by the code, so runs are reproducible.

use super::clock::Clock;
use super::event::Event;
use super::wheel::{Entry, Key, Wheel};
use crate::units::Time;

/// A FIFO entry: FIFOs keep insertion order themselves, so they need no sequence number.
#[derive(Debug, Clone, Copy)]
struct Timed {
    time: Time,
    ev: Event,
}

const FILLER: Timed = Timed { time: 0, ev: Event::FILLER };

/// The scratch space of [`EventQueue::canonicalize`]: keys with positions, and events.
#[derive(Debug, Default)]
pub struct Scratch {
    packed: Vec<u64>,
    counts: Vec<u32>,
    events: Vec<Event>,
}

/// Bits of a run position packed below a sort key.
const RUN_BITS: u32 = 20;

/// The events of one fixed delay, in push order: a ring buffer of power-of-two capacity,
/// indexed by free-running `u32` counters masked to the capacity (cheaper than `VecDeque`,
/// whose push and pop wrap indices with compares and check for a full buffer through the
/// allocator's capacity).
///
/// Besides the prefetch hint (`crate::prefetch`), the only `unsafe` of the crate is here: a
/// masked index is always within `buf`, and skipping its bounds checks measured 987 -> 972
/// instructions per traversal (MIN).
struct Fifo {
    delay: Time,
    buf: Vec<Timed>,
    /// Invariant: `buf.len() - 1` (`buf.len()` a power of two), set only by `new` and `grow`.
    mask: u32,
    /// Position of the front; `tail - head` (wrapping) is the number of entries.
    head: u32,
    tail: u32,
    /// The tail at the last [`EventQueue::canonicalize`] (lanes of events that cross between
    /// groups): what came after it is the last window's.
    mark: u32,
}

impl Fifo {
    fn new(delay: Time, cap: usize) -> Fifo {
        assert!(cap.is_power_of_two() && cap <= 1 << 31);
        Fifo { delay, buf: vec![FILLER; cap], mask: cap as u32 - 1, head: 0, tail: 0, mark: 0 }
    }

    #[inline]
    fn is_empty(&self) -> bool {
        self.head == self.tail
    }

    /// The entry at ring counter `pos`.
    #[inline(always)]
    fn at(&self, pos: u32) -> &Timed {
        // SAFETY: `mask == buf.len() - 1`, so `pos & mask < buf.len()`.
        unsafe { self.buf.get_unchecked((pos & self.mask) as usize) }
    }

    #[inline(always)]
    fn at_mut(&mut self, pos: u32) -> &mut Timed {
        // SAFETY: as in `at`.
        unsafe { self.buf.get_unchecked_mut((pos & self.mask) as usize) }
    }

    #[inline]
    fn push_back(&mut self, t: Timed) {
        if self.tail.wrapping_sub(self.head) > self.mask {
            self.grow();
        }
        *self.at_mut(self.tail) = t;
        self.tail = self.tail.wrapping_add(1);
    }

    /// Double the capacity, moving the entries to the front in order.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let n = self.buf.len();
        let mut buf = Vec::with_capacity(2 * n);
        buf.extend((0..n as u32).map(|j| *self.at(self.head.wrapping_add(j))));
        buf.resize(2 * n, FILLER);
        assert!(buf.len() <= 1 << 31, "event FIFO overflow");
        self.buf = buf;
        self.mask = (2 * n - 1) as u32;
        // The mark keeps its place relative to the front (it may lie before it).
        self.mark = self.mark.wrapping_sub(self.head);
        self.head = 0;
        self.tail = n as u32;
    }

    /// The front entry, if any.
    #[inline]
    fn front(&self) -> Option<&Timed> {
        (!self.is_empty()).then(|| self.at(self.head))
    }

    /// Sort the `n` entries from ring counter `pos` by time, stably.
    #[cold]
    fn sort_by_time(&mut self, pos: u32, n: u32) {
        let mut run: Vec<Timed> = (0..n).map(|i| *self.at(pos.wrapping_add(i))).collect();
        run.sort_by_key(|t| t.time);
        for (i, t) in run.into_iter().enumerate() {
            *self.at_mut(pos.wrapping_add(i as u32)) = t;
        }
    }

    /// Sort the `n` simultaneous entries from ring counter `pos` by `order` (below `keys`),
    /// stably: by counting when the run is long beside the number of keys, else by sorting
    /// the keys packed with their positions.
    fn sort_run(&mut self, pos: u32, n: u32, order: &impl Fn(&Event) -> u64, keys: u64, scratch: &mut Scratch) {
        scratch.events.clear();
        scratch.events.extend((0..n).map(|i| self.at(pos.wrapping_add(i)).ev));
        if keys <= 4 * n as u64 {
            let counts = &mut scratch.counts;
            counts.clear();
            counts.resize(keys as usize + 1, 0);
            for e in &scratch.events {
                counts[order(e) as usize + 1] += 1;
            }
            for k in 1..counts.len() {
                counts[k] += counts[k - 1];
            }
            for e in &scratch.events {
                let slot = &mut counts[order(e) as usize];
                self.at_mut(pos.wrapping_add(*slot)).ev = *e;
                *slot += 1;
            }
            return;
        }
        // Key and position packed in one word: a sort of plain integers, stable since the words
        // are distinct.
        assert!(keys < 1 << (64 - RUN_BITS) && n < 1 << RUN_BITS, "sort keys fit a word with the position");
        scratch.packed.clear();
        scratch.packed.extend(scratch.events.iter().enumerate().map(|(i, e)| order(e) << RUN_BITS | i as u64));
        scratch.packed.sort_unstable();
        for (j, &w) in scratch.packed.iter().enumerate() {
            let i = (w & ((1 << RUN_BITS) - 1)) as usize;
            self.at_mut(pos.wrapping_add(j as u32)).ev = scratch.events[i];
        }
    }

    /// Remove the front entry (there is one); return it and the time of the new front.
    #[inline]
    fn pop_front(&mut self) -> (Timed, Option<Time>) {
        debug_assert!(!self.is_empty());
        let e = *self.at(self.head);
        self.head = self.head.wrapping_add(1);
        let next = (!self.is_empty()).then(|| self.at(self.head).time);
        (e, next)
    }
}

const EMPTY: u64 = u64::MAX;
/// Head keys pack `time << SLOT_BITS | slot`, so the earliest head (ties to the lower slot) is a
/// plain minimum over the array, without tracking an index, and keys of different slots are
/// never equal.
const SLOT_BITS: u32 = 4;
const MAX_SLOTS: usize = 1 << SLOT_BITS;
/// Times must fit the key: 2^60 ps, about 13 simulated days.
pub const MAX_TIME: Time = (1 << (64 - SLOT_BITS)) - 1;

#[inline]
fn key(time: Time, slot: usize) -> u64 {
    debug_assert!(time <= MAX_TIME);
    time << SLOT_BITS | slot as u64
}

pub struct EventQueue {
    fifos: Vec<Fifo>,
    /// Key (time and slot) of each FIFO's front (EMPTY if none); the last slot mirrors the wheel's
    /// minimum.
    heads: [u64; MAX_SLOTS],
    /// The smallest head key (the next event's; EMPTY if there is none) and the smallest of the
    /// other slots' heads (the runner-up). Events come in runs from one slot: packets move in
    /// step (they are generated on slot boundaries), so at each picosecond a batch of events
    /// waits in one FIFO, and 98 % of pops (MIN UR 0.5) take from the slot of the pop before.
    /// A pop whose slot's new head is still below the runner-up therefore needs no scan; only
    /// the others rescan the 16 heads. (Before: the minimum of each group of four heads and of
    /// the groups, rescanned at every pop, about 20 instructions per event.)
    top: u64,
    rest: u64,
    wheel: Wheel,
    seq: u64,
    now: Time,
    /// SST timing: the crossbar clock's calendar (`clock.rs`), served as slot 0 (the first, so
    /// that a tick comes first among events of the same time; `clock_slot` is 0 with a clock,
    /// `usize::MAX` without). Nothing else fills slot 0, so a pop tests the slot index (a
    /// register) and the link-busy timing pays no load for the clock.
    clock: Clock,
    clock_slot: usize,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            // Slot 0 is the crossbar clock's (SST timing; `clock_channel`); its FIFO stays empty.
            fifos: vec![Fifo::new(Time::MAX, 2)],
            heads: [EMPTY; MAX_SLOTS],
            top: EMPTY,
            rest: EMPTY,
            wheel: Wheel::default(),
            seq: 0,
            now: 0,
            clock: Clock::default(),
            clock_slot: usize::MAX,
        }
    }
}

impl EventQueue {
    pub fn new() -> EventQueue {
        EventQueue::default()
    }

    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    /// Number of pending events, counted on demand (not kept up to date by every push and pop).
    pub fn len(&self) -> usize {
        self.fifos.iter().map(|f| f.tail.wrapping_sub(f.head) as usize).sum::<usize>()
            + self.wheel.len()
            + self.clock.len()
    }

    pub fn is_empty(&self) -> bool {
        self.min_key() == EMPTY
    }

    /// The FIFO for events `delay` after now; register fixed delays once and push with
    /// [`EventQueue::push`] to skip the lookup. Panics when every lane is taken (the engine's
    /// own lanes fit: see [`EventQueue::try_channel`] for optional ones).
    pub fn channel(&mut self, delay: Time) -> usize {
        self.try_channel(delay).expect("the engine's fixed delays fit the queue's lanes")
    }

    /// [`EventQueue::channel`], or None when every lane is taken (the caller then schedules
    /// with [`EventQueue::at`], which takes any time).
    pub fn try_channel(&mut self, delay: Time) -> Option<usize> {
        match self.fifos.iter().position(|f| f.delay == delay) {
            Some(i) => Some(i),
            None if self.fifos.len() + 2 <= MAX_SLOTS => Some(self.add_fifo(delay)),
            None => None,
        }
    }

    /// A lane of its own for `delay` (not shared with another lane of the same delay): for the
    /// events that cross between groups, which [`EventQueue::canonicalize`] orders.
    pub fn own_channel(&mut self, delay: Time) -> usize {
        assert!(self.fifos.len() + 2 <= MAX_SLOTS, "at most {} event lanes", MAX_SLOTS - 1);
        self.add_fifo(delay)
    }

    /// Append `ev` at `time` to lane `lane` (not before now), whatever the lane's delay; the
    /// caller restores the lane's time order with [`EventQueue::canonicalize`] before anything
    /// of it is popped.
    pub fn append_at(&mut self, lane: usize, time: Time, ev: Event) {
        debug_assert!(time >= self.now);
        let f = &mut self.fifos[lane];
        let was_empty = f.is_empty();
        f.push_back(Timed { time, ev });
        if was_empty {
            self.lower_head(lane, key(time, lane));
        }
    }

    /// Put the events of lane `lane` added since the last call (and not popped) in the order
    /// of (time, `order`), stably, and mark the lane's tail; `order` is below `keys`. The caller
    /// guarantees that they are not earlier than the lane's events from before (true of a
    /// window's events over global links, see `partition.rs`). They are usually in time order
    /// already (one pass checks); then only runs of simultaneous events out of order are sorted.
    pub fn canonicalize(&mut self, lane: usize, order: impl Fn(&Event) -> u64, keys: u64, scratch: &mut Scratch) {
        let f = &mut self.fifos[lane];
        // The part of the segment still queued: from the mark, or from the front if it passed it.
        let start = if f.tail.wrapping_sub(f.mark) > f.tail.wrapping_sub(f.head) { f.head } else { f.mark };
        let n = f.tail.wrapping_sub(start);
        f.mark = f.tail;
        if !(1..n).all(|i| f.at(start.wrapping_add(i - 1)).time <= f.at(start.wrapping_add(i)).time) {
            // Events appended from several sources (messages and credit wake-ups, partitions):
            // a stable merge of their runs by time first.
            f.sort_by_time(start, n);
            let front = f.at(f.head).time;
            self.set_head(lane, key(front, lane));
        }
        let f = &mut self.fifos[lane];
        let mut i = 0;
        while i < n {
            // The run of events at the time of event `i`, and whether it is in order.
            let first = f.at(start.wrapping_add(i));
            let (time, mut last) = (first.time, order(&first.ev));
            let mut j = i + 1;
            let mut ordered = true;
            while j < n {
                let e = f.at(start.wrapping_add(j));
                if e.time != time {
                    break;
                }
                let k = order(&e.ev);
                ordered &= last <= k;
                last = k;
                j += 1;
            }
            if !ordered {
                f.sort_run(start.wrapping_add(i), j - i, &order, keys, scratch);
            }
            i = j;
        }
    }

    /// Time of the next event, if any.
    #[inline(always)]
    pub fn next_time(&self) -> Option<Time> {
        (self.top != EMPTY).then_some(self.top >> SLOT_BITS)
    }

    /// Schedule `ev` on a channel from [`EventQueue::channel`].
    // `always`: with plain `inline` the compiler outlined it (a call per push, +11 instructions
    // per traversal on MIN).
    #[inline(always)]
    pub fn push(&mut self, chan: usize, ev: Event) {
        let f = &mut self.fifos[chan];
        let time = self.now + f.delay;
        let was_empty = f.is_empty();
        f.push_back(Timed { time, ev });
        if was_empty {
            self.lower_head(chan, key(time, chan));
        }
    }

    fn add_fifo(&mut self, delay: Time) -> usize {
        self.fifos.push(Fifo::new(delay, 1024));
        // The wheel's slot moves to the end (its key carries the slot index).
        let w = self.fifos.len();
        let wheel_head = self.heads[w - 1];
        self.set_head(w - 1, EMPTY);
        self.set_head(w, if wheel_head == EMPTY { EMPTY } else { key(wheel_head >> SLOT_BITS, w) });
        w - 1
    }

    /// SST timing: the crossbar clock of `period` ps as the queue's lane, registered first
    /// (it must come first among events of the same time); returns its index. Nothing is
    /// pushed on it: its events are the ticks with passes filed ([`EventQueue::file_pass`]).
    pub fn clock_channel(&mut self, period: Time) -> usize {
        // Slot 0, kept from the start with an empty FIFO (a delay no push names): only the
        // clock's head ever fills it, so a pop from slot 0 is a tick without loading anything.
        self.clock_slot = 0;
        self.clock = Clock::new(period);
        0
    }

    /// File a crossbar pass of `router` at tick `at` (after now); returns the tick it was filed
    /// at (an earlier one if `at` is beyond the calendar).
    #[inline]
    pub fn file_pass(&mut self, at: Time, router: u32) -> Time {
        let filed = self.clock.file(self.now, at, router);
        self.lower_head(self.clock_slot, key(filed, self.clock_slot));
        filed
    }

    /// The routers with a pass at this tick (`Event::Clock`: now), in filing order.
    #[inline]
    pub fn take_passes(&mut self) -> Vec<u32> {
        self.clock.take(self.now)
    }

    #[inline]
    pub fn give_back_passes(&mut self, list: Vec<u32>) {
        self.clock.give_back(list);
    }

    /// Pop the clock's tick `k` (its passes are taken by the handler): the clock's next tick
    /// becomes its slot's head. Returns nothing (a call returning the popped event moved
    /// `pop_peek`'s results to memory on every pop).
    #[cold]
    #[inline(never)]
    fn pop_clock(&mut self, k: u64) {
        let (t, i) = (k >> SLOT_BITS, self.clock_slot);
        self.now = t;
        self.heads[i] = self.clock.next_after(t).map_or(EMPTY, |n| key(n, i));
        self.rescan();
    }

    /// Schedule `ev` `delay` ps from now. Use only for delays drawn from a small fixed set
    /// (link, serialisation, crossbar times); arbitrary delays belong in [`EventQueue::at`].
    #[inline]
    pub fn after(&mut self, delay: Time, ev: Event) {
        let i = self.channel(delay);
        self.push(i, ev);
    }

    /// Schedule `ev` at an arbitrary time not before now.
    #[inline(always)]
    pub fn at(&mut self, time: Time, ev: Event) {
        debug_assert!(time >= self.now);
        let k = Key { time, seq: self.seq };
        self.seq += 1;
        self.wheel.push(Entry { key: k, ev }, self.now);
        // The mask is a no-op (at most 15 FIFOs) that drops a bounds check.
        let w = self.fifos.len() & (MAX_SLOTS - 1);
        self.lower_head(w, key(time, w));
    }

    /// Set head `i` to `k` (any value) and recompute the top and the runner-up.
    #[inline]
    fn set_head(&mut self, i: usize, k: u64) {
        self.heads[i] = k;
        self.rescan();
    }

    /// Find the smallest head and the runner-up by a scan of all heads (rare: see `top`).
    #[inline(never)]
    fn rescan(&mut self) {
        let (mut top, mut rest) = (EMPTY, EMPTY);
        for &h in &self.heads {
            if h < top {
                rest = top;
                top = h;
            } else if h < rest {
                rest = h;
            }
        }
        self.top = top;
        self.rest = rest;
    }

    /// Lower head `i` to `k` if `k` is smaller (a push): the top and runner-up follow.
    #[inline]
    fn lower_head(&mut self, i: usize, k: u64) {
        if k < self.heads[i] {
            self.heads[i] = k;
            if k < self.top {
                // A new earliest slot: the old top (another slot's) is now the runner-up. If
                // `i` held the top already (the wheel lowering its own head), the runner-up
                // stays. (An empty queue's top, EMPTY, names slot 15 and leaves `rest` EMPTY.)
                if (self.top & (MAX_SLOTS as u64 - 1)) as usize != i {
                    self.rest = self.top;
                }
                self.top = k;
            } else if k < self.rest {
                // `i` is not the top's slot (its head was at least the top and is now lower).
                self.rest = k;
            }
        }
    }

    /// Smallest head key (EMPTY if there is no event).
    #[inline]
    fn min_key(&self) -> u64 {
        self.top
    }

    /// The event [`EventQueue::pop`] returns next, if any.
    #[inline]
    pub fn peek(&self) -> Option<&Event> {
        let i = (self.top & (MAX_SLOTS as u64 - 1)) as usize;
        if i == 0 {
            return Some(&Event::Clock);
        }
        match self.fifos.get(i) {
            Some(f) => f.front().map(|t| &t.ev),
            None if self.top != EMPTY => self.wheel.peek(),
            None => None,
        }
    }

    /// The event `k` places behind the next one in the next event's FIFO, if that FIFO holds
    /// it: a hint for prefetching further ahead than the next event (`Simulation::run`).
    /// Events come in runs from one FIFO (see `top`), so this is usually the event popped
    /// `k + 1` pops from now; when it is not, only the prefetch is wasted.
    #[inline(always)]
    pub fn peek_far(&self, k: u32) -> Option<&Event> {
        let i = (self.top & (MAX_SLOTS as u64 - 1)) as usize;
        let f = self.fifos.get(i).filter(|_| i != 0)?;
        (f.tail.wrapping_sub(f.head) > k).then(|| &f.at(f.head.wrapping_add(k)).ev)
    }

    /// Remove and return the earliest event, advancing the clock to it.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        let k = self.min_key();
        if k == EMPTY {
            return None;
        }
        let i = (k & (MAX_SLOTS as u64 - 1)) as usize;
        if i == 0 {
            self.pop_clock(k);
            return Some((k >> SLOT_BITS, Event::Clock));
        }
        let (e, next) = if i == self.fifos.len() {
            let (e, next) = self.wheel.pop();
            (Timed { time: e.key.time, ev: e.ev }, next)
        } else {
            self.fifos[i].pop_front()
        };
        let nk = next.map_or(EMPTY, |t| key(t, i));
        self.heads[i] = nk;
        if nk < self.rest {
            // Still the earliest slot (keys of different slots differ): no scan.
            self.top = nk;
        } else {
            self.rescan();
        }
        self.now = e.time;
        Some((e.time, e.ev))
    }

    /// [`EventQueue::pop`], also returning a copy of the event [`EventQueue::peek`] would name
    /// next (for prefetching). In the usual case the popped FIFO still holds the earliest event
    /// (see `top`): the next one is its new front, at hand without a second lookup.
    // `always`: the event loop is generic (compiled in the crate that names the routing), and
    // with plain `inline` LLVM left this a call returning its three results through memory.
    #[inline(always)]
    pub fn pop_peek(&mut self) -> Option<(Time, Event, Option<Event>)> {
        let k = self.top;
        if k == EMPTY {
            return None;
        }
        let i = (k & (MAX_SLOTS as u64 - 1)) as usize;
        if i == 0 {
            self.pop_clock(k);
            return Some((k >> SLOT_BITS, Event::Clock, self.peek().copied()));
        }
        if let Some(f) = self.fifos.get_mut(i) {
            let e = *f.at(f.head);
            f.head = f.head.wrapping_add(1);
            self.now = e.time;
            if !f.is_empty() {
                let n = *f.at(f.head);
                let nk = key(n.time, i);
                self.heads[i] = nk;
                if nk < self.rest {
                    self.top = nk;
                    return Some((e.time, e.ev, Some(n.ev)));
                }
            } else {
                self.heads[i] = EMPTY;
            }
            self.rescan();
            return Some((e.time, e.ev, self.peek().copied()));
        }
        let (e, next) = self.wheel.pop();
        let nk = next.map_or(EMPTY, |t| key(t, i));
        self.heads[i] = nk;
        self.now = e.key.time;
        if nk < self.rest {
            // Still the earliest slot: the next event is the wheel's.
            self.top = nk;
            return Some((e.key.time, e.ev, self.wheel.peek().copied()));
        }
        self.rescan();
        Some((e.key.time, e.ev, self.peek().copied()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ev(b: u32) -> Event {
        Event::Workload { kind: 0, a: 0, b }
    }

    fn b_of(e: &Event) -> u32 {
        match e {
            Event::Workload { b, .. } => *b,
            _ => unreachable!("the tests queue workload events only"),
        }
    }

    /// `peek_far(k)` names the event `k` places behind the next one while the next event's FIFO
    /// holds it (then it is the one popped `k + 1` pops later), and nothing beyond the FIFO's
    /// end or when the next event is the wheel's.
    #[test]
    fn peek_far_looks_into_the_next_events_fifo() {
        let mut q = EventQueue::new();
        let (fast, slow) = (q.channel(5), q.channel(50));
        for b in 0..4 {
            q.push(fast, ev(b));
        }
        q.push(slow, ev(100));
        assert_eq!(q.peek_far(0).map(b_of), Some(0));
        assert_eq!(q.peek_far(3).map(b_of), Some(3));
        assert_eq!(q.peek_far(4), None, "beyond the FIFO's end");
        let far = q.peek_far(2).copied();
        for _ in 0..2 {
            q.pop();
        }
        assert_eq!(q.peek().copied(), far, "popped 3 pops later");
        q.pop();
        q.pop();
        // The next event is now the other FIFO's only one.
        assert_eq!(q.peek_far(0).map(b_of), Some(100));
        assert_eq!(q.peek_far(1), None);
        q.pop();
        q.at(q.now() + 7, ev(200));
        assert_eq!(q.peek().map(b_of), Some(200));
        assert_eq!(q.peek_far(0), None, "the wheel is not looked into");
    }

    /// A FIFO that wraps around and then grows (twice) keeps its order.
    #[test]
    fn fifo_grows_in_order() {
        let mut q = EventQueue::new();
        let c = q.channel(5);
        let (mut pushed, mut popped) = (0u32, 0u32);
        for round in 0..6 {
            for _ in 0..700 * (round + 1) {
                q.push(c, ev(pushed));
                pushed += 1;
            }
            for _ in 0..600 {
                let (_, e) = q.pop().expect("not empty");
                assert_eq!(b_of(&e), popped);
                popped += 1;
            }
        }
        assert!(q.fifos[c].buf.len() > 4096);
        while let Some((_, e)) = q.pop() {
            assert_eq!(b_of(&e), popped);
            popped += 1;
        }
        assert_eq!(popped, pushed);
    }

    proptest! {
        /// `canonicalize` puts a lane's new events in the order of a stable sort by (time, key),
        /// whether they came in time order (a window's sends) or in two interleaved runs (messages
        /// and credit wake-ups, partitions), across windows and the ring's wrap and growth.
        #[test]
        fn canonicalize_is_a_stable_sort_by_time_and_key(
            windows in proptest::collection::vec((proptest::collection::vec((0u64..4, 0u32..6), 0..400), any::<bool>()), 1..6),
            keys in 1u64..40,
        ) {
            let mut q = EventQueue::new();
            let lane = q.own_channel(1_000);
            let order = |e: &Event| b_of(e) as u64 % keys;
            let mut scratch = Scratch::default();
            let (mut next, mut base) = (0u32, 0u64);
            let mut want: Vec<(u64, u64, u32)> = Vec::new();
            for (events, two_runs) in windows {
                let mut times: Vec<u64> = events.iter().scan(base, |t, &(dt, _)| { *t += dt; Some(*t) }).collect();
                if two_runs {
                    // A second time-ordered run appended after the first.
                    let half = times.len() / 2;
                    times[half..].iter_mut().zip(0..).for_each(|(t, i)| *t = base + i);
                }
                let mut window: Vec<(u64, u64, u32)> = Vec::new();
                for (&time, &(_, k)) in times.iter().zip(&events) {
                    let b = next * 40 + k;
                    next += 1;
                    q.append_at(lane, time, ev(b));
                    window.push((time, b as u64 % keys, b));
                }
                q.canonicalize(lane, order, keys, &mut scratch);
                window.sort_by_key(|&(t, k, _)| (t, k));
                want.extend(window);
                base = times.iter().copied().max().unwrap_or(base) + 1;
            }
            let got: Vec<(u64, u64, u32)> =
                std::iter::from_fn(|| q.pop()).map(|(t, e)| (t, order(&e), b_of(&e))).collect();
            prop_assert_eq!(got, want);
        }

        /// Whatever mix of delays and absolute times is scheduled, events come out sorted by
        /// (time, insertion order) — the same order a stable sort would give. Up to 14 delays: every
        /// FIFO slot (slot 0 is the SST clock's) and the wheel, so every group of the two-level
        /// minimum.
        #[test]
        fn pops_in_time_then_insertion_order(ops in proptest::collection::vec((0u8..3, 0u64..14, 0u64..50), 1..300)) {
            let mut q = EventQueue::new();
            let mut expected: Vec<(u64, u64)> = Vec::new(); // (time, seq)
            let mut delay_of: Vec<u64> = Vec::new(); // delay class, u64::MAX for the heap
            let mut seq = 0u64;
            let mut out = Vec::new();
            for (op, d, t) in ops {
                match op {
                    0 => { q.after(d * 7, ev(seq as u32)); expected.push((q.now() + d * 7, seq)); delay_of.push(d * 7); seq += 1; }
                    1 => { q.at(q.now() + t, ev(seq as u32)); expected.push((q.now() + t, seq)); delay_of.push(u64::MAX); seq += 1; }
                    _ => {
                        prop_assert_eq!(q.len(), expected.len() - out.len());
                        if let Some((time, e)) = q.pop() { out.push((time, b_of(&e) as u64)); }
                    }
                }
            }
            while let Some((time, e)) = q.pop() { out.push((time, b_of(&e) as u64)); }
            // Replaying the pops must be consistent: time never goes back...
            prop_assert!(out.windows(2).all(|w| w[0].0 <= w[1].0));
            // ...and events of one delay class keep their insertion order.
            let mut by_delay: std::collections::HashMap<u64, Vec<u64>> = Default::default();
            for &(_, b) in &out {
                let (t, _) = expected[b as usize];
                by_delay.entry(delay_of[b as usize]).or_default().push(t * 1_000_000 + b);
            }
            for v in by_delay.values() {
                prop_assert!(v.windows(2).all(|w| w[0] < w[1]));
            }
            prop_assert_eq!(out.len(), expected.len());
            prop_assert!(q.is_empty());
            prop_assert_eq!(q.len(), 0);
        }

        /// `pop_peek` pops what `pop` would and names the event `pop` returns next.
        #[test]
        fn pop_peek_names_the_next_pop(ops in proptest::collection::vec((0u8..3, 0u64..14, 0u64..2000), 1..300)) {
            let (mut q, mut r) = (EventQueue::new(), EventQueue::new());
            let mut named: Option<Event> = None;
            for (b, (op, d, t)) in ops.into_iter().enumerate() {
                match op {
                    0 => { q.after(d * 7, ev(b as u32)); r.after(d * 7, ev(b as u32)); named = q.peek().copied(); }
                    1 => { let at = q.now() + t * 1000; q.at(at, ev(b as u32)); r.at(at, ev(b as u32)); named = q.peek().copied(); }
                    _ => {
                        let got = q.pop_peek();
                        let want = r.pop();
                        prop_assert_eq!(got.map(|g| (g.0, g.1)), want);
                        prop_assert_eq!(got.map(|g| g.1), named);
                        named = got.and_then(|g| g.2);
                        prop_assert_eq!(named, r.peek().copied());
                    }
                }
            }
        }

        /// `peek` names exactly the event `pop` returns next.
        #[test]
        fn peek_names_the_next_pop(ops in proptest::collection::vec((0u8..3, 0u64..14, 0u64..2000), 1..300)) {
            let mut q = EventQueue::new();
            let check_pop = |q: &mut EventQueue| -> Result<bool, TestCaseError> {
                let peeked = q.peek().copied();
                let popped = q.pop().map(|(_, e)| e);
                prop_assert_eq!(peeked, popped);
                Ok(popped.is_some())
            };
            for (b, (op, d, t)) in ops.into_iter().enumerate() {
                match op {
                    // Fixed delays, and absolute times near and beyond the wheel's horizon.
                    0 => q.after(d * 7, ev(b as u32)),
                    1 => q.at(q.now() + t * 1000, ev(b as u32)),
                    _ => { check_pop(&mut q)?; }
                }
            }
            while check_pop(&mut q)? {}
        }
    }
}
