//! Timer wheel for the events at irregular times (a port or NIC waking when it is free, a sender
//! waking when a credit returns, generation of periodic traffic).
//!
//! Profiling showed a binary heap costing ~290 instructions per pop for these events (a third of
//! all events under load are such wake-ups, almost all within one serialisation time). The wheel
//! files each event in a bucket of `2^BUCKET_LOG2` ps; buckets cover a horizon of
//! `BUCKETS × 2^BUCKET_LOG2` ps after the current bucket, later events wait in a heap and move
//! into the wheel as the horizon reaches them. The current bucket is sorted once by
//! (time, insertion sequence) and drained from a read cursor, so events come out in exactly the
//! order the heap gave: by time, then insertion order. Sends cluster on a few picosecond values
//! (packet slots), so the current bucket often holds many events; a new one usually sorts after
//! all of them and is appended (an earlier descending layout shifted the bucket on every such
//! push).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::queue::Event;
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

pub(super) struct Wheel {
    buckets: Vec<Vec<Entry>>,
    occupied: [u64; WORDS],
    /// Absolute bucket index, never after the current time's bucket (so no push lands before
    /// it). Every wheel entry lies in `[base, base + BUCKETS)`, every `far` entry at or after
    /// `base + BUCKETS`, so the earliest entry is in the wheel whenever the wheel is not empty.
    base: u64,
    /// The bucket holding the earliest entry, sorted in ascending key order from `pos` on
    /// (entries before `pos` are already popped); `NOT_LOCATED` after a change that may have
    /// moved the minimum to another bucket.
    cur: u64,
    pos: usize,
    len: usize,
    far: BinaryHeap<Reverse<Entry>>,
}

const NOT_LOCATED: u64 = u64::MAX;

impl Default for Wheel {
    fn default() -> Self {
        Wheel {
            buckets: (0..BUCKETS).map(|_| Vec::new()).collect(),
            occupied: [0; WORDS],
            base: 0,
            cur: NOT_LOCATED,
            pos: 0,
            len: 0,
            far: BinaryHeap::new(),
        }
    }
}

impl Wheel {
    /// File an entry at or after `now`, the time of the event being handled (no entry of the
    /// wheel is earlier than `now`).
    #[inline]
    pub fn push(&mut self, e: Entry, now: Time) {
        debug_assert!(e.key.time >= now);
        let nb = bucket_of(now);
        if nb > self.base {
            self.base = nb;
            self.refill();
        }
        let b = bucket_of(e.key.time);
        if b >= self.base + BUCKETS {
            self.far.push(Reverse(e));
        } else {
            self.file(b, e);
        }
    }

    #[inline]
    fn file(&mut self, b: u64, e: Entry) {
        let i = (b & (BUCKETS - 1)) as usize;
        let v = &mut self.buckets[i];
        if b == self.cur {
            // Keep the located bucket sorted from the cursor on; usually `e` goes last.
            if v.last().is_some_and(|x| x.key > e.key) {
                let at = self.pos + v[self.pos..].partition_point(|x| x.key < e.key);
                v.insert(at, e);
            } else {
                v.push(e);
            }
        } else {
            v.push(e);
            if b < self.cur {
                // An earlier bucket now holds the minimum: give up the located one, dropping
                // its popped prefix so that it can be sorted again later.
                if self.cur != NOT_LOCATED {
                    let j = (self.cur & (BUCKETS - 1)) as usize;
                    self.buckets[j].drain(..self.pos);
                    self.pos = 0;
                }
                self.cur = NOT_LOCATED;
            }
        }
        self.occupied[i / 64] |= 1 << (i % 64);
        self.len += 1;
    }

    /// Earliest entry time, if any.
    #[inline]
    pub fn min_time(&mut self) -> Option<Time> {
        if self.len == 0 {
            return self.far.peek().map(|Reverse(e)| e.key.time);
        }
        if self.cur == NOT_LOCATED {
            self.locate();
        }
        let v = &self.buckets[(self.cur & (BUCKETS - 1)) as usize];
        Some(v[self.pos].key.time)
    }

    /// The earliest entry's event if it is already located (no search for the next occupied
    /// bucket: this is only a prefetch hint, see `EventQueue::peek`).
    #[inline]
    pub fn peek_located(&self) -> Option<&Event> {
        if self.len == 0 || self.cur == NOT_LOCATED {
            return None;
        }
        self.buckets[(self.cur & (BUCKETS - 1)) as usize].get(self.pos).map(|e| &e.ev)
    }

    /// Remove the earliest entry; call only when there is one.
    #[inline]
    pub fn pop(&mut self) -> Entry {
        if self.len == 0 {
            return self.far.pop().expect("the wheel is not empty").0;
        }
        if self.cur == NOT_LOCATED {
            self.locate();
        }
        let i = (self.cur & (BUCKETS - 1)) as usize;
        let v = &mut self.buckets[i];
        let e = v[self.pos];
        self.pos += 1;
        self.len -= 1;
        if self.pos == v.len() {
            v.clear();
            self.pos = 0;
            self.occupied[i / 64] &= !(1 << (i % 64));
            self.cur = NOT_LOCATED;
        }
        // The popped time becomes the current time: the horizon may advance.
        let nb = bucket_of(e.key.time);
        if nb > self.base {
            self.base = nb;
            self.refill();
        }
        e
    }

    /// Find the first occupied bucket from `base` (the wheel is not empty) and sort it.
    fn locate(&mut self) {
        let mut off = 0u64;
        loop {
            let i = ((self.base + off) & (BUCKETS - 1)) as usize;
            let word = self.occupied[i / 64] >> (i % 64);
            if word != 0 {
                off += word.trailing_zeros() as u64;
                break;
            }
            off += 64 - (i % 64) as u64;
            debug_assert!(off < 2 * BUCKETS, "a non-empty wheel has an occupied bucket");
        }
        self.cur = self.base + off;
        let i = (self.cur & (BUCKETS - 1)) as usize;
        self.buckets[i].sort_unstable_by_key(|e| e.key);
        self.pos = 0;
    }

    /// Move far entries that the advanced horizon now covers into the wheel.
    fn refill(&mut self) {
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
        Entry { key: Key { time, seq }, ev: Event { kind: 0, vc: 0, port: 0, a: 0, b: seq as u32 } }
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
                    let e = w.pop();
                    let Reverse(x) = h.pop().expect("heap agrees it is not empty");
                    prop_assert_eq!((t, e.key), (x.key.time, x.key));
                    now = t;
                } else {
                    prop_assert!(h.is_empty());
                }
            }
            while let Some(t) = w.min_time() {
                let e = w.pop();
                let Reverse(x) = h.pop().expect("heap agrees it is not empty");
                prop_assert_eq!((t, e.key), (x.key.time, x.key));
            }
            prop_assert!(h.is_empty());
        }
    }
}
