//! Slot calendar for Bernoulli injection. Every Bernoulli packet is generated on a packet-slot
//! boundary, so instead of one heap entry per packet the engine keeps, for each of the next
//! `W` slots, the list of nodes whose next packet falls in it, and visits one slot per event.
//! Gaps longer than `W` slots (very low loads) go to a small overflow heap. Nodes of one slot
//! are generated in the order they were filed, which is fixed by the code: runs stay
//! reproducible.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

const W: usize = 1024;
/// No node (end of a list, empty slot).
const NONE: u32 = u32::MAX;

/// Each slot of the wheel is a list of nodes linked through `next` (a node is filed in at most
/// one slot at a time, its next packet's): filing is a few stores, with no growth of per-slot
/// vectors (which cost about a tenth of generation at low load, where every slot's vector grew
/// during the first laps).
pub struct SlotCalendar {
    /// First and last node filed in each slot of the wheel (`NONE`: empty), by `slot % W`.
    /// Fixed-size arrays: the index needs no bounds check.
    head: Box<[u32; W]>,
    tail: Box<[u32; W]>,
    /// Nodes filed in each slot of the wheel.
    count: Box<[u32; W]>,
    /// `next[node]`: the node filed after `node` in the same slot (meaningful up to the slot's
    /// tail only; `take` says how many nodes the slot holds).
    next: Vec<u32>,
    overflow: BinaryHeap<Reverse<(u64, u32)>>,
    len: usize,
}

impl SlotCalendar {
    /// A calendar for nodes `0..nodes`.
    pub fn new(nodes: usize) -> SlotCalendar {
        SlotCalendar {
            head: Box::new([NONE; W]),
            tail: Box::new([NONE; W]),
            count: Box::new([0; W]),
            next: vec![NONE; nodes],
            overflow: BinaryHeap::new(),
            len: 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Forget every filed node (a traffic phase restarts all schedules).
    pub fn clear(&mut self) {
        self.head.fill(NONE);
        self.tail.fill(NONE);
        self.count.fill(0);
        self.overflow.clear();
        self.len = 0;
    }

    /// File `node` (not filed already) for slot `slot`, seen from slot `current`
    /// (`slot >= current`).
    #[inline]
    pub fn insert(&mut self, slot: u64, current: u64, node: u32) {
        debug_assert!(slot >= current);
        if slot - current < W as u64 {
            let b = slot as usize % W;
            self.append(b, node);
        } else {
            self.insert_far(slot, node);
        }
        self.len += 1;
    }

    #[inline]
    fn append(&mut self, b: usize, node: u32) {
        let last = self.tail[b];
        if last == NONE {
            self.head[b] = node;
        } else {
            self.next[last as usize] = node;
        }
        self.tail[b] = node;
        self.count[b] += 1;
    }

    /// Beyond the wheel (gaps of more than `W` slots, rare but at very low loads).
    #[cold]
    #[inline(never)]
    fn insert_far(&mut self, slot: u64, node: u32) {
        self.overflow.push(Reverse((slot, node)));
    }

    /// Take out the nodes of slot `slot`, in filing order (then those from beyond the wheel):
    /// returns the first and how many; [`next`](Self::next) walks the rest. The links of a
    /// node stay valid until it is filed again.
    #[inline]
    pub fn take(&mut self, slot: u64) -> (u32, usize) {
        let b = slot as usize % W;
        while let Some(&Reverse((s, node))) = self.overflow.peek() {
            if s != slot {
                debug_assert!(s > slot);
                break;
            }
            self.overflow.pop();
            self.append(b, node);
        }
        let (first, count) = (self.head[b], self.count[b] as usize);
        self.head[b] = NONE;
        self.tail[b] = NONE;
        self.count[b] = 0;
        self.len -= count;
        (first, count)
    }

    /// The node taken after `node` from the same slot.
    #[inline]
    pub fn next(&self, node: u32) -> u32 {
        self.next[node as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taken(c: &mut SlotCalendar, slot: u64) -> Vec<u32> {
        let (mut node, count) = c.take(slot);
        let mut out = Vec::new();
        for k in 0..count {
            out.push(node);
            if k + 1 < count {
                node = c.next(node);
            }
        }
        out
    }

    #[test]
    fn nodes_come_back_in_their_slot_including_far_ones() {
        let mut c = SlotCalendar::new(16);
        c.insert(3, 0, 7);
        c.insert(3, 0, 8);
        c.insert(5000, 0, 9); // beyond the wheel
        c.insert(5000 % W as u64, 0, 10); // same bucket, earlier lap
        assert_eq!(taken(&mut c, 3), vec![7, 8]);
        assert_eq!(taken(&mut c, 5000 % W as u64), vec![10]);
        c.insert(5000, 4999, 11); // the wheel's bucket of slot 5000, after the far node 9
        assert_eq!(taken(&mut c, 5000), vec![11, 9]);
        assert!(c.is_empty());
        assert!(taken(&mut c, 6).is_empty());
    }
}
