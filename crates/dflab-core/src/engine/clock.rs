//! The crossbar clock of the SST timing (`network/sst.rs`): the routers whose crossbar has a pass
//! at each coming tick, filed in a calendar of `SLOTS` ticks. The event queue serves the
//! calendar as its first lane: at a tick, one `Event::Clock` runs every pass filed for it, in
//! filing order, before any other event of that time (SST runs clock handlers before the events
//! of their time). An event per router pass cost a timer-wheel entry, its sort and a dispatch
//! each (MIN UR 0.5: about a fifth of the SST timing's instructions).

use crate::units::Time;

/// Ticks ahead a pass can be filed; one asked for later runs at the last tick of the calendar
/// (it finds its crossbar port still busy and files itself again).
pub const SLOTS: u64 = 64;

#[derive(Debug, Default)]
pub struct Clock {
    /// The tick period.
    pub period: Time,
    /// Routers with a pass at each tick, by tick number modulo `SLOTS`.
    slots: Vec<Vec<u32>>,
    /// Bit `j`: slot `j` holds passes.
    filled: u64,
    /// An empty list to swap in for the one being run (keeps its allocation).
    spare: Vec<u32>,
}

impl Clock {
    pub fn new(period: Time) -> Clock {
        Clock { period, slots: vec![Vec::new(); SLOTS as usize], filled: 0, spare: Vec::new() }
    }

    /// File a pass of `router` at tick `at` (a multiple of the period after `now`), or at the
    /// calendar's last tick if `at` is beyond it; returns the tick it was filed at.
    #[inline]
    pub fn file(&mut self, now: Time, at: Time, router: u32) -> Time {
        debug_assert!(at > now && at.is_multiple_of(self.period));
        let k = (at / self.period).min(now / self.period + SLOTS - 1);
        let j = (k % SLOTS) as usize;
        self.slots[j].push(router);
        self.filled |= 1 << j;
        k * self.period
    }

    /// The earliest tick after `t` with passes.
    #[inline]
    pub fn next_after(&self, t: Time) -> Option<Time> {
        let k = t / self.period;
        // Bit i of `ahead` is tick k + 1 + i; bit 63 is tick k itself.
        let ahead = self.filled.rotate_right(((k + 1) % SLOTS) as u32) & !(1 << 63);
        (ahead != 0).then(|| (k + 1 + ahead.trailing_zeros() as u64) * self.period)
    }

    /// The routers with a pass at tick `at`, in filing order; give the list back with
    /// [`Clock::give_back`] when done.
    #[inline]
    pub fn take(&mut self, at: Time) -> Vec<u32> {
        let j = ((at / self.period) % SLOTS) as usize;
        self.filled &= !(1 << j);
        std::mem::replace(&mut self.slots[j], std::mem::take(&mut self.spare))
    }

    #[inline]
    pub fn give_back(&mut self, mut list: Vec<u32>) {
        list.clear();
        self.spare = list;
    }

    /// Passes filed and not yet run.
    pub fn len(&self) -> usize {
        self.slots.iter().map(Vec::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.filled == 0
    }
}

#[cfg(test)]
mod tests {
    use super::{Clock, SLOTS};

    #[test]
    fn passes_come_back_by_tick_in_filing_order() {
        let p = 3200;
        let mut c = Clock::new(p);
        assert_eq!(c.file(0, p, 7), p);
        assert_eq!(c.file(100, 3 * p, 5), 3 * p);
        assert_eq!(c.file(100, p, 3), p);
        // Beyond the calendar: filed at its last tick.
        assert_eq!(c.file(100, p * (SLOTS + 5), 1), p * (SLOTS - 1));
        assert_eq!(c.len(), 4);
        assert_eq!(c.next_after(0), Some(p));
        let l = c.take(p);
        assert_eq!(l, vec![7, 3]);
        c.give_back(l);
        assert_eq!(c.next_after(p), Some(3 * p));
        assert_eq!(c.take(3 * p), vec![5]);
        assert_eq!(c.next_after(3 * p), Some(p * (SLOTS - 1)));
        assert_eq!(c.take(p * (SLOTS - 1)), vec![1]);
        assert_eq!(c.next_after(p * (SLOTS - 1)), None);
        // Around the ring: a tick 63 ahead of a late time.
        let t = p * 1000;
        assert_eq!(c.file(t, t + 63 * p, 9), t + 63 * p);
        assert_eq!(c.next_after(t), Some(t + 63 * p));
    }
}
