//! Many fixed-capacity FIFO queues of packet ids in one flat allocation. Every router buffer
//! (input or output, per port and VC) is one queue; a flat pool keeps them cache friendly and
//! avoids one heap allocation per buffer.

use super::PacketId;

pub struct RingPool {
    cap: u32,
    data: Vec<PacketId>,
    head: Vec<u32>,
    len: Vec<u32>,
}

impl RingPool {
    pub fn new(queues: usize, cap: u32) -> RingPool {
        RingPool { cap, data: vec![0; queues * cap as usize], head: vec![0; queues], len: vec![0; queues] }
    }

    #[inline]
    pub fn len(&self, q: usize) -> u32 {
        self.len[q]
    }

    #[inline]
    pub fn is_empty(&self, q: usize) -> bool {
        self.len[q] == 0
    }

    #[inline]
    pub fn front(&self, q: usize) -> Option<PacketId> {
        if self.len[q] == 0 {
            None
        } else {
            Some(self.data[q * self.cap as usize + self.head[q] as usize])
        }
    }

    /// Push at the back; returns false (and does nothing) when the queue is full.
    #[inline]
    pub fn push(&mut self, q: usize, id: PacketId) -> bool {
        let len = self.len[q];
        if len == self.cap {
            return false;
        }
        let mut pos = self.head[q] + len;
        if pos >= self.cap {
            pos -= self.cap;
        }
        self.data[q * self.cap as usize + pos as usize] = id;
        self.len[q] = len + 1;
        true
    }

    #[inline]
    pub fn pop(&mut self, q: usize) -> Option<PacketId> {
        if self.len[q] == 0 {
            return None;
        }
        let id = self.data[q * self.cap as usize + self.head[q] as usize];
        let mut h = self.head[q] + 1;
        if h == self.cap {
            h = 0;
        }
        self.head[q] = h;
        self.len[q] -= 1;
        Some(id)
    }

    pub fn iter(&self, q: usize) -> impl Iterator<Item = PacketId> + '_ {
        let base = q * self.cap as usize;
        (0..self.len[q]).map(move |i| self.data[base + ((self.head[q] + i) % self.cap) as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_order_wraps_and_respects_capacity() {
        let mut r = RingPool::new(3, 4);
        for round in 0..10u32 {
            for i in 0..4 {
                assert!(r.push(1, round * 10 + i));
            }
            assert!(!r.push(1, 99));
            assert_eq!(r.iter(1).collect::<Vec<_>>(), (0..4).map(|i| round * 10 + i).collect::<Vec<_>>());
            for i in 0..4 {
                assert_eq!(r.pop(1), Some(round * 10 + i));
            }
            assert_eq!(r.pop(1), None);
            assert!(r.is_empty(0) && r.is_empty(2));
        }
    }
}
