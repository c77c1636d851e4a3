//! Slot calendar for Bernoulli injection. Every Bernoulli packet is generated on a packet-slot
//! boundary, so instead of one heap entry per packet the engine keeps, for each of the next
//! `W` slots, the list of nodes whose next packet falls in it, and visits one slot per event.
//! Gaps longer than `W` slots (very low loads) go to a small overflow heap. Nodes of one slot
//! are generated in the order they were filed, which is fixed by the code: runs stay
//! reproducible.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

const W: usize = 1024;

pub struct SlotCalendar {
    /// A fixed-size array: the index `slot % W` needs no bounds check.
    buckets: Box<[Vec<u32>; W]>,
    overflow: BinaryHeap<Reverse<(u64, u32)>>,
    len: usize,
}

impl Default for SlotCalendar {
    fn default() -> Self {
        let buckets = vec![Vec::new(); W].into_boxed_slice().try_into().expect("W buckets");
        SlotCalendar { buckets, overflow: BinaryHeap::new(), len: 0 }
    }
}

impl SlotCalendar {
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Forget every filed node (a traffic phase restarts all schedules).
    pub fn clear(&mut self) {
        self.buckets.iter_mut().for_each(Vec::clear);
        self.overflow.clear();
        self.len = 0;
    }

    /// File `node` for slot `slot`, seen from slot `current` (`slot >= current`).
    #[inline]
    pub fn insert(&mut self, slot: u64, current: u64, node: u32) {
        debug_assert!(slot >= current);
        if slot - current < W as u64 {
            self.buckets[slot as usize % W].push(node);
        } else {
            self.insert_far(slot, node);
        }
        self.len += 1;
    }

    /// Beyond the wheel (gaps of more than `W` slots, rare but at very low loads).
    #[cold]
    #[inline(never)]
    fn insert_far(&mut self, slot: u64, node: u32) {
        self.overflow.push(Reverse((slot, node)));
    }

    /// Move the nodes of slot `slot` into `out` (which is cleared first).
    #[inline]
    pub fn take(&mut self, slot: u64, out: &mut Vec<u32>) {
        out.clear();
        std::mem::swap(out, &mut self.buckets[slot as usize % W]);
        while let Some(&Reverse((s, node))) = self.overflow.peek() {
            if s != slot {
                debug_assert!(s > slot);
                break;
            }
            self.overflow.pop();
            out.push(node);
        }
        self.len -= out.len();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_come_back_in_their_slot_including_far_ones() {
        let mut c = SlotCalendar::default();
        c.insert(3, 0, 7);
        c.insert(3, 0, 8);
        c.insert(5000, 0, 9); // beyond the wheel
        c.insert(5000 % W as u64, 0, 10); // same bucket, earlier lap
        let mut out = Vec::new();
        c.take(3, &mut out);
        assert_eq!(out, vec![7, 8]);
        c.take(5000 % W as u64, &mut out);
        assert_eq!(out, vec![10]);
        c.take(5000, &mut out);
        assert_eq!(out, vec![9]);
        assert!(c.is_empty());
    }
}
