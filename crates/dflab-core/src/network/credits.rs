//! Credit ledger: the free downstream buffer space of every output VC, with credit returns kept
//! as (arrival time, flits) records instead of events.
//!
//! Credits travel upstream with a fixed latency, so the returns of one VC arrive in the order
//! they were sent. Recording them and absorbing the arrived ones whenever the sender (or a
//! routing reading the congestion signal) looks gives exactly the state an event per credit
//! would give, without the event: at moderate load a sender almost never waits for credits.
//! The engine schedules a wake-up only when a sender is actually blocked.

use crate::units::Time;

pub struct CreditLedger {
    cap: u32,
    /// Free credits already absorbed and the ring position of the pending returns, per VC
    /// queue, side by side so that one cache line serves a lookup.
    state: Vec<State>,
    /// Pending returns, packed `time << 16 | flits`, one ring of `cap` entries per VC queue.
    ring: Vec<u64>,
}

#[derive(Clone, Copy)]
struct State {
    free: u32,
    head: u32,
    len: u32,
    /// The sender is blocked on credits and waits for a return to wake it (see `watch`).
    watched: bool,
    /// Flits in the sender's output buffer of this VC (including packets still crossing the
    /// crossbar): kept here because every reader of it also reads the credits.
    out_flits: u32,
}

const FLITS_BITS: u32 = 16;

impl CreditLedger {
    /// `queues` VC queues whose downstream buffers hold `cap` flits.
    pub fn new(queues: usize, cap: u32) -> CreditLedger {
        CreditLedger {
            cap,
            state: vec![State { free: cap, head: 0, len: 0, watched: false, out_flits: 0 }; queues],
            ring: vec![0; queues * cap as usize],
        }
    }

    pub fn capacity(&self) -> u32 {
        self.cap
    }

    #[inline]
    fn entry(&self, q: usize, i: u32) -> (Time, u32) {
        let mut pos = self.state[q].head + i;
        if pos >= self.cap {
            pos -= self.cap;
        }
        let v = self.ring[q * self.cap as usize + pos as usize];
        (v >> FLITS_BITS, (v & ((1 << FLITS_BITS) - 1)) as u32)
    }

    /// Free credits at time `now`, counting returns that have arrived but were not absorbed.
    #[inline]
    pub fn free_at(&self, q: usize, now: Time) -> u32 {
        let s = self.state[q];
        let mut f = s.free;
        for i in 0..s.len {
            let (t, flits) = self.entry(q, i);
            if t > now {
                break;
            }
            f += flits;
        }
        f
    }

    /// Absorb the returns that have arrived by `now`; returns the free credits.
    #[inline]
    pub fn absorb(&mut self, q: usize, now: Time) -> u32 {
        let base = q * self.cap as usize;
        let s = &mut self.state[q];
        while s.len > 0 {
            let v = self.ring[base + s.head as usize];
            if v >> FLITS_BITS > now {
                break;
            }
            s.free += (v & ((1 << FLITS_BITS) - 1)) as u32;
            s.head = if s.head + 1 == self.cap { 0 } else { s.head + 1 };
            s.len -= 1;
        }
        s.free
    }

    /// Use `flits` credits (the caller checked they are free after `absorb`).
    #[inline]
    pub fn take(&mut self, q: usize, flits: u32) {
        self.state[q].free -= flits;
    }

    /// Record a return of `flits` credits arriving at `time`.
    #[inline]
    pub fn give_back(&mut self, q: usize, time: Time, flits: u32) {
        let s = &mut self.state[q];
        debug_assert!(s.len < self.cap, "more credits returning than the buffer holds");
        let mut pos = s.head + s.len;
        if pos >= self.cap {
            pos -= self.cap;
        }
        s.len += 1;
        self.ring[q * self.cap as usize + pos as usize] = (time << FLITS_BITS) | flits as u64;
    }

    /// Flits in the output buffer of VC queue `q`.
    #[inline]
    pub fn out_flits(&self, q: usize) -> u32 {
        self.state[q].out_flits
    }

    #[inline]
    pub fn add_out_flits(&mut self, q: usize, flits: u32) {
        self.state[q].out_flits += flits;
    }

    #[inline]
    pub fn remove_out_flits(&mut self, q: usize, flits: u32) {
        self.state[q].out_flits -= flits;
    }

    /// The congestion signal of VC queue `q` at `now`: output-buffer flits plus used credits
    /// (ejection ports keep full credits, so theirs is the output buffer alone).
    #[inline]
    pub fn occupancy(&self, q: usize, now: Time) -> u32 {
        self.state[q].out_flits + (self.cap - self.free_at(q, now))
    }

    /// Mark (or unmark) the queue's sender as waiting for a return. The flag lives with the
    /// credit state, so the code recording a return sees it without touching the sender's
    /// other state (another router's cache lines).
    #[inline]
    pub fn set_watched(&mut self, q: usize, on: bool) {
        self.state[q].watched = on;
    }

    #[inline]
    pub fn watched(&self, q: usize) -> bool {
        self.state[q].watched
    }

    /// Arrival time of the earliest pending return, if any.
    #[inline]
    pub fn next_return(&self, q: usize) -> Option<Time> {
        (self.state[q].len > 0).then(|| self.entry(q, 0).0)
    }

    /// Absorbed free credits and flits still on their way back (for invariant checks).
    pub fn parts(&self, q: usize) -> (u32, u32) {
        let pending = (0..self.state[q].len).map(|i| self.entry(q, i).1).sum();
        (self.state[q].free, pending)
    }

    /// Test helper: make `free` credits free and nothing pending.
    pub fn set_free(&mut self, q: usize, free: u32) {
        self.state[q].free = free;
        self.state[q].len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn returns_count_only_once_arrived() {
        let mut l = CreditLedger::new(2, 4);
        l.take(1, 3);
        l.give_back(1, 100, 1);
        l.give_back(1, 200, 2);
        assert_eq!(l.free_at(1, 99), 1);
        assert_eq!(l.free_at(1, 100), 2);
        assert_eq!(l.free_at(1, 250), 4);
        assert_eq!(l.next_return(1), Some(100));
        assert_eq!(l.absorb(1, 150), 2);
        assert_eq!(l.parts(1), (2, 2));
        assert_eq!(l.absorb(1, 200), 4);
        assert_eq!(l.next_return(1), None);
        assert_eq!(l.free_at(0, 0), 4);
    }

    #[test]
    fn ring_wraps() {
        let mut l = CreditLedger::new(1, 3);
        for round in 0..10u64 {
            l.take(0, 3);
            for i in 0..3 {
                l.give_back(0, round * 10 + i, 1);
            }
            assert_eq!(l.absorb(0, round * 10 + 2), 3);
        }
    }
}
