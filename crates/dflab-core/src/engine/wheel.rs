//! Timer wheel for the events at irregular times (a port or NIC waking when it is free, a sender
//! waking when a credit returns, generation of periodic traffic).
//!
//! Profiling showed a binary heap costing ~290 instructions per pop for these events (a third of
//! all events under load are such wake-ups, almost all within one serialisation time). The wheel
//! files each event in a bucket of `2^BUCKET_LOG2` ps; buckets cover a horizon of
//! `BUCKETS × 2^BUCKET_LOG2` ps after the current bucket, later events wait in a heap and move
//! into the wheel as the horizon reaches them. The bucket holding the earliest entry is kept
//! located at every push and pop (a pop reads the next time from it). It is sorted once by
//! (time, insertion sequence) and drained from a read cursor, so events come out in exactly the
//! order the heap gave: by time, then insertion order. Sends cluster on a few picosecond values
//! (packet slots), so the current bucket often holds many events; a new one usually sorts after
//! all of them and is appended (an earlier descending layout shifted the bucket on every such
//! push).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::event::Event;
use crate::units::Time;

const BUCKET_LOG2: u32 = 10; // 1.024 ns
const BUCKETS: u64 = 512; // horizon ≈ 524 ns: every credit and serialisation delay of the presets
const WORDS: usize = (BUCKETS / 64) as usize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Key {
    pub time: Time,
    pub seq: u64,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Entry {
    pub key: Key,
    pub ev: Event,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.key.cmp(&o.key)
    }
}

#[inline]
fn bucket_of(t: Time) -> u64 {
    t >> BUCKET_LOG2
}

/// Position of absolute bucket `b` in the ring.
#[inline]
fn slot_of(b: u64) -> usize {
    (b & (BUCKETS - 1)) as usize
}

pub(super) struct Wheel {
    /// A fixed-size array, so that indexing by `slot_of` needs no bounds check.
    buckets: Box<[Vec<Entry>; BUCKETS as usize]>,
    occupied: [u64; WORDS],
    /// Absolute bucket index, never after the current time's bucket (so no push lands before
    /// it). Every wheel entry lies in `[base, base + BUCKETS)`, every `far` entry at or after
    /// `base + BUCKETS`, so the earliest entry is in the wheel whenever the wheel is not empty.
    /// Only pushes advance it (they carry the current time); pops need not.
    base: u64,
    /// The bucket holding the earliest entry, sorted in ascending key order from `pos` on
    /// (entries before `pos` are already popped); `EMPTY` if the wheel (not `far`) is empty.
    /// Kept located at every change, so that a pop knows where to look.
    cur: u64,
    pos: usize,
    far: BinaryHeap<Reverse<Entry>>,
}

/// `cur` of an empty wheel: after every bucket, so that the first push becomes the earliest.
const EMPTY: u64 = u64::MAX;

impl Default for Wheel {
    fn default() -> Self {
        Wheel {
            buckets: Box::new(std::array::from_fn(|_| Vec::new())),
            occupied: [0; WORDS],
            base: 0,
            cur: EMPTY,
            pos: 0,
            far: BinaryHeap::new(),
        }
    }
}

impl Wheel {
    /// File an entry at or after `now`, the time of the event being handled (no entry of the
    /// wheel is earlier than `now`).
    #[inline(always)]
    pub fn push(&mut self, e: Entry, now: Time) {
        debug_assert!(e.key.time >= now);
        let nb = bucket_of(now);
        if nb > self.base {
            self.advance(nb);
        }
        let b = bucket_of(e.key.time);
        // The usual case: a bucket after the earliest one (so unsorted), within the horizon.
        if b > self.cur && b < self.base + BUCKETS {
            let i = slot_of(b);
            self.buckets[i].push(e);
            self.occupied[i / 64] |= 1 << (i % 64);
        } else {
            self.push_slow(b, e);
        }
    }

    #[inline(never)]
    fn push_slow(&mut self, b: u64, e: Entry) {
        if b >= self.base + BUCKETS {
            self.far.push(Reverse(e));
        } else {
            self.file(b, e);
        }
    }

    /// File `e` in bucket `b` (within the horizon), keeping `cur` located.
    fn file(&mut self, b: u64, e: Entry) {
        let i = slot_of(b);
        let v = &mut self.buckets[i];
        if b == self.cur {
            // Keep the located bucket sorted from the cursor on; usually `e` goes last.
            if v.last().is_some_and(|x| x.key > e.key) {
                let at = self.pos + v[self.pos..].partition_point(|x| x.key < e.key);
                v.insert(at, e);
            } else {
                v.push(e);
            }
        } else if b < self.cur {
            // `cur` was the earliest occupied bucket (or the wheel was empty), so bucket `b`
            // is empty and becomes the earliest. Drop the old one's popped prefix so that it
            // can be sorted again when it is the earliest again.
            debug_assert!(v.is_empty());
            v.push(e);
            if self.cur != EMPTY {
                let j = slot_of(self.cur);
                self.buckets[j].drain(..self.pos);
            }
            self.cur = b;
            self.pos = 0;
        } else {
            v.push(e);
        }
        self.occupied[i / 64] |= 1 << (i % 64);
    }

    /// Number of entries (a scan: for diagnostics, not the event loop).
    pub fn len(&self) -> usize {
        let filed: usize = self.buckets.iter().map(Vec::len).sum();
        let popped = if self.cur == EMPTY { 0 } else { self.pos };
        filed - popped + self.far.len()
    }

    /// Earliest entry time, if any.
    #[cfg(test)]
    pub fn min_time(&self) -> Option<Time> {
        if self.cur == EMPTY {
            return self.far.peek().map(|Reverse(e)| e.key.time);
        }
        Some(self.buckets[slot_of(self.cur)][self.pos].key.time)
    }

    /// The earliest entry's event, if any (the located bucket's, or the far heap's): a hint
    /// for prefetching, see `EventQueue::peek`.
    #[inline]
    pub fn peek(&self) -> Option<&Event> {
        if self.cur == EMPTY {
            return self.far.peek().map(|Reverse(e)| &e.ev);
        }
        self.buckets[slot_of(self.cur)].get(self.pos).map(|e| &e.ev)
    }

    /// Remove the earliest entry (call only when there is one); return it and the time of the
    /// next one, if any.
    #[inline(always)]
    pub fn pop(&mut self) -> (Entry, Option<Time>) {
        if self.cur == EMPTY {
            return self.pop_far();
        }
        let v = &mut self.buckets[slot_of(self.cur)];
        let e = v[self.pos];
        self.pos += 1;
        if let Some(next) = v.get(self.pos) {
            return (e, Some(next.key.time));
        }
        (e, self.next_bucket())
    }

    #[inline(never)]
    fn pop_far(&mut self) -> (Entry, Option<Time>) {
        let e = self.far.pop().expect("the wheel is not empty").0;
        (e, self.far.peek().map(|Reverse(e)| e.key.time))
    }

    /// The located bucket is used up: clear it, locate and sort the next occupied one, and
    /// return its earliest time (or the far heap's if the wheel is now empty).
    #[inline(never)]
    fn next_bucket(&mut self) -> Option<Time> {
        let i = slot_of(self.cur);
        self.buckets[i].clear();
        self.pos = 0;
        self.occupied[i / 64] &= !(1 << (i % 64));
        if self.occupied.iter().all(|&w| w == 0) {
            self.cur = EMPTY;
            return self.far.peek().map(|Reverse(e)| e.key.time);
        }
        // Every entry lies in `(cur, base + BUCKETS)`, within `BUCKETS` after `cur`: the first
        // occupied position of the ring after `cur` is the next bucket.
        let start = self.cur + 1;
        let mut off = 0u64;
        loop {
            let i = slot_of(start + off);
            let word = self.occupied[i / 64] >> (i % 64);
            if word != 0 {
                off += word.trailing_zeros() as u64;
                break;
            }
            off += 64 - (i % 64) as u64;
            debug_assert!(off < 2 * BUCKETS, "a non-empty wheel has an occupied bucket");
        }
        self.cur = start + off;
        let v = &mut self.buckets[slot_of(self.cur)];
        v.sort_unstable_by_key(|e| e.key);
        Some(v[0].key.time)
    }

    /// The current time reached bucket `nb`: advance the horizon and move the far entries it
    /// now covers into the wheel.
    #[cold]
    #[inline(never)]
    fn advance(&mut self, nb: u64) {
        self.base = nb;
        while let Some(Reverse(top)) = self.far.peek() {
            let b = bucket_of(top.key.time);
            if b >= self.base + BUCKETS {
                break;
            }
            let e = self.far.pop().expect("peeked").0;
            self.file(b, e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn entry(time: Time, seq: u64) -> Entry {
        Entry { key: Key { time, seq }, ev: Event::Workload { kind: 0, a: 0, b: seq as u32 } }
    }

    proptest! {
        /// Interleaved pushes (near, within the horizon, and far beyond it) and pops give the
        /// same sequence as a binary heap ordered by (time, seq).
        #[test]
        fn same_order_as_a_heap(ops in proptest::collection::vec((0u8..4, 0u64..4_000_000), 1..400)) {
            let mut w = Wheel::default();
            let mut h = BinaryHeap::new();
            let mut now = 0u64;
            let mut seq = 0u64;
            for (op, d) in ops {
                if op < 3 {
                    // Mostly short delays, some ties, some far beyond the horizon.
                    let t = now + match op { 0 => d % 3_000, 1 => (d % 4) * 1024, _ => d };
                    w.push(entry(t, seq), now);
                    h.push(Reverse(entry(t, seq)));
                    seq += 1;
                } else if let Some(t) = w.min_time() {
                    let (e, next) = w.pop();
                    prop_assert_eq!(next, w.min_time());
                    let Reverse(x) = h.pop().expect("heap agrees it is not empty");
                    prop_assert_eq!((t, e.key), (x.key.time, x.key));
                    now = t;
                } else {
                    prop_assert!(h.is_empty());
                }
            }
            while let Some(t) = w.min_time() {
                let (e, next) = w.pop();
                prop_assert_eq!(next, w.min_time());
                let Reverse(x) = h.pop().expect("heap agrees it is not empty");
                prop_assert_eq!((t, e.key), (x.key.time, x.key));
            }
            prop_assert!(h.is_empty());
        }
    }
}
