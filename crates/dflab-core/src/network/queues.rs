//! Many FIFO queues of packet ids (every router buffer, per port and VC, is one), as intrusive
//! linked lists: each queue keeps head, tail, length and occupancy in flits side by side, and the
//! link to the next packet is stored per packet id. A packet sits in at most one queue of a pool
//! at a time.
//!
//! Profiling showed the previous flat ring per queue (capacity-sized, so mostly empty) costing a
//! cache miss on almost every push and pop; the lists touch only the queue's 12 bytes and the
//! packet's link.

use super::PacketId;

const NIL: PacketId = PacketId::MAX;

#[derive(Clone, Copy)]
struct Meta {
    head: PacketId,
    tail: PacketId,
    len: u32,
    /// Flits held (the buffer occupancy), kept with the list so one cache line serves both.
    flits: u32,
}

pub struct PacketQueues {
    /// Packets a queue may hold; `push` refuses more.
    cap: u32,
    meta: Vec<Meta>,
    /// `next[id]`: the packet after `id` in its queue.
    next: Vec<PacketId>,
}

impl PacketQueues {
    pub fn new(queues: usize, cap: u32) -> PacketQueues {
        PacketQueues { cap, meta: vec![Meta { head: NIL, tail: NIL, len: 0, flits: 0 }; queues], next: Vec::new() }
    }

    /// Prefetch the state of queue `q` (see [`crate::prefetch`]).
    #[inline]
    pub fn prefetch(&self, q: usize) {
        crate::prefetch::prefetch(&self.meta, q);
    }

    #[inline]
    pub fn len(&self, q: usize) -> u32 {
        self.meta[q].len
    }

    /// Flits held by queue `q`.
    #[inline]
    pub fn flits(&self, q: usize) -> u32 {
        self.meta[q].flits
    }

    #[inline]
    pub fn is_empty(&self, q: usize) -> bool {
        self.meta[q].len == 0
    }

    #[inline]
    pub fn front(&self, q: usize) -> Option<PacketId> {
        let m = self.meta[q];
        (m.len > 0).then_some(m.head)
    }

    /// Push a packet of `flits` flits at the back; returns false (and does nothing) when the
    /// queue is full.
    #[inline(always)]
    pub fn push(&mut self, q: usize, id: PacketId, flits: u32) -> bool {
        if id as usize >= self.next.len() {
            self.grow_links(id);
        }
        let m = &mut self.meta[q];
        if m.len == self.cap {
            return false;
        }
        if m.len == 0 {
            m.head = id;
        } else {
            self.next[m.tail as usize] = id;
        }
        m.tail = id;
        m.len += 1;
        m.flits += flits;
        true
    }

    /// Make room for the link of packet `id` (ids grow with the packets alive at once).
    #[cold]
    #[inline(never)]
    fn grow_links(&mut self, id: PacketId) {
        self.next.resize((id as usize + 1).next_power_of_two().max(1024), NIL);
    }

    /// Pop the front packet, which has `flits` flits.
    #[inline]
    pub fn pop(&mut self, q: usize, flits: u32) -> Option<PacketId> {
        let m = &mut self.meta[q];
        if m.len == 0 {
            return None;
        }
        let id = m.head;
        m.len -= 1;
        m.flits -= flits;
        if m.len > 0 {
            m.head = self.next[id as usize];
        }
        Some(id)
    }

    /// Round robin over queues `base..base + n` starting at `base + start` (`start < n`): pop
    /// the head of the first non-empty queue whose index `ok` accepts (its packet has `flits`
    /// flits), as (offset from `base`, packet). The queues are scanned as one slice (one bounds
    /// check), and the pop uses the queue's state found by the scan (a separate `pop` looked
    /// it up and checked its bounds again).
    // `always`: called from both timings' output stages, plain `inline` left it a call.
    #[inline(always)]
    pub fn pop_rr(
        &mut self,
        base: usize,
        n: usize,
        start: usize,
        flits: u32,
        mut ok: impl FnMut(usize) -> bool,
    ) -> Option<(usize, PacketId)> {
        let metas = &mut self.meta[base..base + n];
        let (before, from) = metas.split_at_mut(start.min(n));
        let found = match from.iter_mut().enumerate().find(|(k, m)| m.len > 0 && ok(base + start + k)) {
            Some((k, m)) => Some((start + k, m)),
            None => before.iter_mut().enumerate().find(|(k, m)| m.len > 0 && ok(base + k)),
        };
        let (v, m) = found?;
        let id = m.head;
        m.len -= 1;
        m.flits -= flits;
        if m.len > 0 {
            m.head = self.next[id as usize];
        }
        Some((v, id))
    }

    /// [`PacketQueues::pop_rr`] for packets of several sizes: `ok(queue, head)` gives the
    /// head's flits if it may go; returns them with the pop.
    #[inline]
    pub fn pop_rr_sized(
        &mut self,
        base: usize,
        n: usize,
        start: usize,
        mut ok: impl FnMut(usize, PacketId) -> Option<u32>,
    ) -> Option<(usize, PacketId, u32)> {
        let start = start.min(n);
        let pick = (start..n).chain(0..start).find_map(|k| {
            let m = self.meta[base + k];
            if m.len == 0 {
                return None;
            }
            ok(base + k, m.head).map(|f| (k, f))
        });
        let (v, flits) = pick?;
        let id = self.pop(base + v, flits)?;
        Some((v, id, flits))
    }

    pub fn iter(&self, q: usize) -> impl Iterator<Item = PacketId> + '_ {
        let m = self.meta[q];
        let mut at = m.head;
        (0..m.len).map(move |i| {
            if i > 0 {
                at = self.next[at as usize];
            }
            at
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_order_and_capacity() {
        let mut r = PacketQueues::new(3, 4);
        for round in 0..10u32 {
            for i in 0..4 {
                assert!(r.push(1, round * 10 + i, 1));
            }
            assert!(!r.push(1, 99, 1));
            assert_eq!(r.iter(1).collect::<Vec<_>>(), (0..4).map(|i| round * 10 + i).collect::<Vec<_>>());
            assert_eq!(r.front(1), Some(round * 10));
            for i in 0..4 {
                assert_eq!(r.pop(1, 1), Some(round * 10 + i));
            }
            assert_eq!(r.pop(1, 1), None);
            assert!(r.is_empty(0) && r.is_empty(2));
        }
    }

    #[test]
    fn queues_are_independent_when_interleaved() {
        let mut r = PacketQueues::new(2, 8);
        for id in 0..8u32 {
            assert!(r.push((id % 2) as usize, id, 2));
        }
        assert_eq!(r.iter(0).collect::<Vec<_>>(), vec![0, 2, 4, 6]);
        assert_eq!(r.iter(1).collect::<Vec<_>>(), vec![1, 3, 5, 7]);
        assert_eq!(r.pop(1, 2), Some(1));
        assert!(r.push(0, 1, 2));
        assert_eq!(r.iter(0).collect::<Vec<_>>(), vec![0, 2, 4, 6, 1]);
        assert_eq!(r.iter(1).collect::<Vec<_>>(), vec![3, 5, 7]);
        assert_eq!((r.flits(0), r.flits(1)), (10, 6));
    }
}
