//! Credit ledger: the free downstream buffer space of every output VC, with credit returns kept
//! as (arrival time, flits) records instead of events.
//!
//! Credits travel upstream with a fixed latency, so the returns of one VC arrive in the order
//! they were sent. Recording them and absorbing the arrived ones whenever the sender (or a
//! routing reading the congestion signal) looks gives exactly the state an event per credit
//! would give, without the event: at moderate load a sender almost never waits for credits.
//! The engine schedules a wake-up only when a sender is actually blocked.

use super::sent_window::{Cycles, SentWindow};
use crate::units::Time;

pub struct CreditLedger {
    /// The largest downstream buffer (the ring's length per VC queue).
    cap: u32,
    /// Downstream buffer per link class (host, local, global), and each queue's class when they
    /// differ (empty when every buffer holds `cap`).
    caps: [u32; 4],
    queue_class: Vec<u8>,
    /// Free credits already absorbed, the newest pending return and the ring position of the
    /// older ones, per VC queue, side by side so that one cache line serves a lookup.
    state: Vec<State>,
    /// Pending returns older than the newest, packed `time << 16 | flits`, one ring of `cap`
    /// entries per VC queue.
    ring: Vec<u64>,
    /// Each port's recent sends ([`Self::keep_sent`]), for [`Self::window_occupancy`].
    sent: Option<Box<SentWindow>>,
}

/// Outcome of [`CreditLedger::admit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// The output buffer has no room for the packet; nothing changed.
    Full,
    /// The packet goes straight on to an idle output: it ejects, or its credits were taken.
    Through,
    /// The packet waits in the output buffer, whose flits now count it.
    Queue,
    /// Shared output queue only ([`CreditLedger::admit_shared`]): the VC's credits do not cover
    /// the packet; nothing changed (the next return: [`CreditLedger::next_return`]). No field,
    /// so that the per-VC grant's outcome stays one byte.
    Credits,
}

/// The newest pending return is kept in the state itself, with the flits of all pending
/// returns: when it has arrived, so have all the others (returns of one VC arrive in order),
/// and absorbing them needs no ring access. That is the common case on short links, where a
/// return arrives before the next packet is sent; the ring (a cache miss on most accesses in
/// a CPU profile) is then neither written nor read.
#[derive(Clone, Copy)]
struct State {
    /// The newest pending return, packed like the ring entries (valid when `len > 0`).
    newest: u64,
    free: u32,
    /// Flits of all pending returns.
    pending: u32,
    /// Ring position of the oldest pending return (the ring holds `len - 1` of them).
    head: u32,
    /// Pending returns, the newest included.
    len: u32,
    /// Flits in the sender's output buffer of this VC (including packets still crossing the
    /// crossbar): kept here because every reader of it also reads the credits.
    out_flits: u32,
    /// The sender is blocked on credits and waits for a return to wake it (see `watch`).
    watched: bool,
    /// Flits of this VC in transit that neither side holds: on the wire (sent onto the link,
    /// not yet arrived downstream), and returned credits of a global link still in the mail
    /// (given back to this ledger only at the window's barrier, `engine/partition.rs`, while
    /// they are already on their way). Saturating; kept only for routings that read net
    /// occupancies ([`crate::routing::Hooks::NET_OCCUPANCY`]). In the state's padding: no
    /// extra line.
    wire: u16,
}

impl State {
    /// If the newest pending return has arrived by `now`, so have all (they arrive in order):
    /// add them to the free credits without reading the ring. Call only with `len > 0`.
    #[inline]
    fn fold_if_all_arrived(&mut self, now: Time) -> bool {
        if unpack(self.newest).0 > now {
            return false;
        }
        self.free += self.pending;
        self.pending = 0;
        self.len = 0;
        true
    }
}

/// `CreditLedger::absorb` on the state `s` of VC queue `q` (borrowed apart from the `ring`,
/// so that a caller holding the state need not look it up again). The usual cases (nothing
/// pending, or all pending returns arrived) read the state alone.
#[inline(always)]
fn absorb_in(s: &mut State, ring: &[u64], cap: u32, q: usize, now: Time) -> u32 {
    if s.len == 0 || s.fold_if_all_arrived(now) {
        return s.free;
    }
    // The newest is still on its way: absorb the older ones that have arrived.
    let base = q * cap as usize;
    while s.len > 1 {
        let (t, flits) = unpack(ring[base + s.head as usize]);
        if t > now {
            break;
        }
        s.free += flits;
        s.pending -= flits;
        s.head = if s.head + 1 == cap { 0 } else { s.head + 1 };
        s.len -= 1;
    }
    s.free
}

/// Whether the free credits of VC `q` at `now` cover `flits`, absorbing the arrived returns only
/// if the already absorbed credits do not. Returns left pending are absorbed by a later look,
/// with the same totals, so every decision is the same as with absorbing at every look; but
/// the ring of older returns (1.3 MB on `qadaptive-1056`, a cache miss on most reads) is read
/// only by a sender that needs the credits: MIN UR 0.5 ran 10 % faster (docs/perf-log.md).
#[inline(always)]
fn covers_in(s: &mut State, ring: &[u64], cap: u32, q: usize, now: Time, flits: u32) -> bool {
    s.free >= flits || absorb_in(s, ring, cap, q, now) >= flits
}

const FLITS_BITS: u32 = 16;

#[inline]
fn unpack(v: u64) -> (Time, u32) {
    (v >> FLITS_BITS, (v & ((1 << FLITS_BITS) - 1)) as u32)
}

impl CreditLedger {
    /// `queues` VC queues whose downstream buffers hold `cap` flits.
    pub fn new(queues: usize, cap: u32) -> CreditLedger {
        let empty = State { newest: 0, free: cap, pending: 0, head: 0, len: 0, out_flits: 0, watched: false, wire: 0 };
        const { assert!(std::mem::size_of::<State>() == 32) };
        CreditLedger {
            cap,
            caps: [cap; 4],
            queue_class: Vec::new(),
            state: vec![empty; queues],
            ring: vec![0; queues * cap as usize],
            sent: None,
        }
    }

    /// Keep each port's sends (its `vcs` queues together) of the last `span_of(port)` ps: from
    /// now on [`Self::wire_out`] records them, for [`Self::window_occupancy`]; `cycles`:
    /// (BookSim timing) what the timing guarantees ([`Cycles`]).
    pub fn keep_sent(&mut self, vcs: usize, cycles: Option<Cycles>, span_of: impl Fn(usize) -> Time) {
        let ports = self.state.len() / vcs.max(1);
        self.sent = Some(Box::new(SentWindow::new(ports, vcs, cycles, span_of)));
    }

    /// `queues` VC queues whose downstream buffers hold `caps[class_of(q)]` flits, by link class
    /// (0 host, 1 local, 2 global).
    pub fn with_classes(queues: usize, caps: [u32; 3], class_of: impl Fn(usize) -> u8) -> CreditLedger {
        let cap = caps.into_iter().max().unwrap_or(0);
        let mut ledger = CreditLedger::new(queues, cap);
        if caps.iter().all(|&c| c == cap) {
            return ledger;
        }
        ledger.caps = [caps[0], caps[1], caps[2], cap];
        ledger.queue_class = (0..queues).map(&class_of).collect();
        for q in 0..queues {
            ledger.state[q].free = ledger.cap_of(q);
        }
        ledger
    }

    /// The downstream buffer of VC queue `q`, in flits.
    #[inline(always)]
    pub fn cap_of(&self, q: usize) -> u32 {
        if self.queue_class.is_empty() {
            self.cap
        } else {
            self.caps[self.queue_class[q] as usize & 3]
        }
    }

    /// Prefetch the state line of VC `q` (see [`crate::prefetch`]).
    #[inline]
    pub fn prefetch(&self, q: usize) {
        crate::prefetch::prefetch(&self.state, q);
    }

    pub fn capacity(&self) -> u32 {
        self.cap
    }

    /// The `i`-th oldest pending return of queue `q` held in the ring (`i < len - 1`).
    #[inline]
    fn older(&self, q: usize, i: u32) -> (Time, u32) {
        let mut pos = self.state[q].head + i;
        if pos >= self.cap {
            pos -= self.cap;
        }
        unpack(self.ring[q * self.cap as usize + pos as usize])
    }

    /// Free credits at time `now`, counting returns that have arrived but were not absorbed.
    #[inline]
    pub fn free_at(&self, q: usize, now: Time) -> u32 {
        let s = self.state[q];
        if s.len == 0 {
            return s.free;
        }
        if unpack(s.newest).0 <= now {
            return s.free + s.pending;
        }
        let mut f = s.free;
        for i in 0..s.len - 1 {
            let (t, flits) = self.older(q, i);
            if t > now {
                break;
            }
            f += flits;
        }
        f
    }

    /// Absorb the returns that have arrived by `now`; returns the free credits.
    #[inline(always)]
    pub fn absorb(&mut self, q: usize, now: Time) -> u32 {
        absorb_in(&mut self.state[q], &self.ring, self.cap, q, now)
    }

    /// Whether the free credits of VC `q` at `now` cover `flits` (see [`covers_in`]).
    #[inline(always)]
    pub fn covers(&mut self, q: usize, now: Time, flits: u32) -> bool {
        covers_in(&mut self.state[q], &self.ring, self.cap, q, now, flits)
    }

    /// A crossbar request for a packet of `flits` flits into the output buffer of VC `q`
    /// (`out_cap` flits): `Full` if the buffer has no room for it (nothing changes); `Through`
    /// if the output is `idle` and the packet can go straight on: it ejects (`host`, no
    /// credits) or the VC's free credits after absorbing the arrived returns cover it (they are
    /// taken); otherwise `Queue`, with its flits added to the buffer's. One lookup of the
    /// state for what `out_flits`, `absorb`, `take` and `add_out_flits` do.
    #[inline(always)]
    pub fn admit(&mut self, q: usize, now: Time, flits: u32, out_cap: u32, idle: bool, host: bool) -> Admit {
        let s = &mut self.state[q];
        if s.out_flits + flits > out_cap {
            return Admit::Full;
        }
        if idle {
            if host {
                return Admit::Through;
            }
            if covers_in(s, &self.ring, self.cap, q, now, flits) {
                s.free -= flits;
                return Admit::Through;
            }
            s.out_flits += flits;
            return Admit::Queue;
        }
        s.out_flits += flits;
        Admit::Queue
    }

    /// [`Self::admit`] for an output port whose VCs share one queue (`network.output_queue =
    /// "shared"`, FOGSim's `bufferedOutPort`): the queue of the port's VC queues `qb..qb + vcs`
    /// holds `out_cap` flits in all (else `Full`), and a packet for VC `q` enters it only if
    /// that VC's free credits, after absorbing the arrived returns and net of the flits the
    /// queue already holds for it, cover the packet (FOGSim's `getCredits`; else `Credits`, and
    /// the returns absorbed by `now`, so that `next_return` is the next one still on its way).
    /// Every queued packet can then leave when its turn comes: its credits are taken at the
    /// send, as with per-VC buffers, so the congestion signal counts it once. Out of line: the
    /// per-VC grant is the hot path.
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    pub fn admit_shared(
        &mut self,
        qb: usize,
        vcs: usize,
        q: usize,
        now: Time,
        flits: u32,
        out_cap: u32,
        idle: bool,
        host: bool,
    ) -> Admit {
        if self.port_out_flits(qb, vcs) + flits > out_cap {
            return Admit::Full;
        }
        let s = &mut self.state[q];
        if !host {
            let free = absorb_in(s, &self.ring, self.cap, q, now);
            if free < s.out_flits + flits {
                return Admit::Credits;
            }
        }
        if idle {
            if !host {
                s.free -= flits;
            }
            return Admit::Through;
        }
        s.out_flits += flits;
        Admit::Queue
    }

    /// Flits in the output buffers of the VC queues `qb..qb + vcs` (one port's).
    #[inline]
    pub fn port_out_flits(&self, qb: usize, vcs: usize) -> u32 {
        self.state[qb..qb + vcs].iter().map(|s| s.out_flits).sum()
    }

    /// Use `flits` credits (the caller checked they are free after `absorb`).
    #[inline]
    pub fn take(&mut self, q: usize, flits: u32) {
        self.state[q].free -= flits;
    }

    /// Record, at `now`, a return of `flits` credits arriving at `time` (not before the returns
    /// already recorded for `q`: they travel with a fixed latency). If every pending return has
    /// arrived by `now` they are absorbed first (as any later reading would), so the new one
    /// becomes the only pending return and the ring is not written. Returns whether the sender
    /// is watching for a return (see `set_watched`), read from the same line.
    #[inline(always)]
    pub fn give_back(&mut self, q: usize, now: Time, time: Time, flits: u32) -> bool {
        let s = &mut self.state[q];
        if s.len > 0 {
            s.fold_if_all_arrived(now);
        }
        debug_assert!(s.len < self.cap, "more credits returning than the buffer holds");
        debug_assert!(s.len == 0 || unpack(s.newest).0 <= time, "credit returns out of order");
        if s.len == 0 {
            // An empty ring restarts at its first slot, so a VC's records stay in few lines.
            s.head = 0;
        } else {
            let mut pos = s.head + s.len - 1;
            if pos >= self.cap {
                pos -= self.cap;
            }
            self.ring[q * self.cap as usize + pos as usize] = s.newest;
        }
        s.newest = (time << FLITS_BITS) | flits as u64;
        s.len += 1;
        s.pending += flits;
        let watched = s.watched;
        if let Some(w) = &mut self.sent {
            w.returned(q, now, time, flits);
        }
        watched
    }

    /// A packet of `flits` flits leaves the output buffer of VC queue `q` for its link, using
    /// as many downstream credits if `take` (the caller checked they are free after `absorb`).
    /// Returns whether the buffer was full before for a packet of `largest` flits (the
    /// largest packet of the run: a request for one may have been refused), within `out_cap`:
    /// one lookup for what `out_flits`, `remove_out_flits` and `take` do.
    #[inline]
    pub fn leave_out(&mut self, q: usize, flits: u32, largest: u32, out_cap: u32, take: bool) -> bool {
        let s = &mut self.state[q];
        let was_full = s.out_flits + largest > out_cap;
        s.out_flits -= flits;
        if take {
            s.free -= flits;
        }
        was_full
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
        self.state[q].out_flits + (self.cap_of(q) - self.free_at(q, now))
    }

    /// Net occupancy of VC queue `q`: the raw one without the flits on the wire and the
    /// credits on their way back, i.e. output-buffer flits, flits waiting for the link after
    /// taking their credit, and flits in the downstream input buffer (what the DGB code's
    /// `GetUsedCredit − GetInFlight` estimates). Needs [`Self::wire_out`]/[`Self::wire_in`],
    /// and [`Self::mailed`]/[`Self::delivered`] around the mail of a global link's credits.
    #[inline]
    pub fn net_occupancy(&self, q: usize) -> u32 {
        let s = &self.state[q];
        // Credits taken and not yet given back by the downstream router (returned or not).
        let held = self.cap_of(q).saturating_sub(s.free + s.pending);
        s.out_flits + held.saturating_sub(s.wire as u32)
    }

    /// The congestion signal of the port whose `vcs` VC queues start at `base`: [`Self::occupancy`]
    /// summed over its VCs. When the window ([`Self::keep_sent`]) keeps the credit returns still
    /// to arrive, the same sum is the credits held downstream (counters alone) plus those
    /// returns, read without walking the rings of pending returns.
    #[inline]
    pub fn port_occupancy(&self, base: usize, vcs: usize, now: Time) -> u32 {
        match self.sent.as_deref().and_then(|w| w.returning(base, now)) {
            Some(returning) => {
                let held = |q: usize| {
                    let s = &self.state[q];
                    s.out_flits + self.cap_of(q) - s.free - s.pending
                };
                (0..vcs).map(|vc| held(base + vc)).sum::<u32>() + returning
            }
            None => (0..vcs).map(|vc| self.occupancy(base + vc, now)).sum(),
        }
    }

    /// The DGB code's estimate of the flits of the port whose VC queues start at `base`: its
    /// [`Self::port_occupancy`] less the flits it sent within its span ([`Self::keep_sent`];
    /// without it, nothing is subtracted).
    #[inline]
    pub fn window_occupancy(&self, base: usize, vcs: usize, now: Time) -> u32 {
        let sent = self.sent.as_deref().map_or(0, |w| w.count(base, now));
        self.port_occupancy(base, vcs, now).saturating_sub(sent)
    }

    /// `flits` of VC queue `q` start on the link at `now`.
    #[inline]
    pub fn wire_out(&mut self, q: usize, now: Time, flits: u32) {
        self.on_wire(q, flits);
        if let Some(w) = &mut self.sent {
            w.record(q, now, flits);
        }
    }

    #[inline]
    fn on_wire(&mut self, q: usize, flits: u32) {
        let s = &mut self.state[q];
        s.wire = s.wire.saturating_add(flits.min(u16::MAX as u32) as u16);
    }

    /// `flits` of VC queue `q` arrived at the downstream input.
    #[inline]
    pub fn wire_in(&mut self, q: usize, flits: u32) {
        let s = &mut self.state[q];
        s.wire = s.wire.saturating_sub(flits.min(u16::MAX as u32) as u16);
    }

    /// `flits` credits of VC queue `q` left the downstream router over a global link in the
    /// mail: on their way, though not yet recorded by [`Self::give_back`].
    #[inline]
    pub fn mailed(&mut self, q: usize, flits: u32) {
        self.on_wire(q, flits);
    }

    /// The mailed credits of [`Self::mailed`] are handed to the ledger (before `give_back`).
    #[inline]
    pub fn delivered(&mut self, q: usize, flits: u32) {
        self.wire_in(q, flits);
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

    /// Arrival time of the earliest pending return, if any. Ask right after `absorb(q, now)`,
    /// as the engine does: returns that arrived since may or may not have been absorbed (see
    /// `give_back`), so before that it may name one that already arrived.
    #[inline]
    pub fn next_return(&self, q: usize) -> Option<Time> {
        match self.state[q].len {
            0 => None,
            1 => Some(unpack(self.state[q].newest).0),
            _ => Some(self.older(q, 0).0),
        }
    }

    /// Absorbed free credits and flits still on their way back (for invariant checks).
    pub fn parts(&self, q: usize) -> (u32, u32) {
        (self.state[q].free, self.state[q].pending)
    }

    /// Test helper: make `free` credits free and nothing pending.
    pub fn set_free(&mut self, q: usize, free: u32) {
        let s = &mut self.state[q];
        s.free = free;
        s.pending = 0;
        s.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Per-class buffers: each queue starts with its class's credits, occupancy counts against
    /// them, and returns fill them back; one size for every class keeps the plain ledger.
    #[test]
    fn queues_of_each_class_count_against_their_own_buffer() {
        let mut l = CreditLedger::with_classes(3, [8, 4, 16], |q| q as u8);
        assert_eq!((l.cap_of(0), l.cap_of(1), l.cap_of(2), l.capacity()), (8, 4, 16, 16));
        assert_eq!((l.free_at(1, 0), l.occupancy(1, 0), l.occupancy(2, 0)), (4, 0, 0));
        l.take(1, 3);
        l.take(2, 3);
        assert_eq!((l.occupancy(1, 0), l.occupancy(2, 0)), (3, 3));
        assert!(!l.covers(1, 0, 2) && l.covers(2, 0, 13));
        l.give_back(1, 0, 10, 3);
        assert_eq!((l.occupancy(1, 9), l.occupancy(1, 10), l.free_at(1, 10)), (3, 0, 4));
        let uniform = CreditLedger::with_classes(3, [5, 5, 5], |q| q as u8);
        assert!(uniform.queue_class.is_empty() && uniform.cap_of(2) == 5);
    }

    /// FOGSim's shared output queue on a constructed port of two VCs (queues 0 and 1), a
    /// 20-flit queue and 10-flit packets: the VCs fill one queue between them, and a VC whose
    /// credits, net of what the queue holds for it, fall short is refused with the time of its
    /// next return (or none), though the queue has room.
    #[test]
    fn a_shared_output_queue_admits_within_its_room_and_the_vcs_net_credits() {
        let mut l = CreditLedger::new(4, 30);
        let admit = |l: &mut CreditLedger, q: usize, now: Time| l.admit_shared(0, 2, q, now, 10, 20, false, false);
        assert_eq!(admit(&mut l, 0, 0), Admit::Queue);
        assert_eq!(admit(&mut l, 1, 0), Admit::Queue);
        assert_eq!(l.port_out_flits(0, 2), 20);
        // Per-VC buffers of 20 would take a second packet on each VC; the shared one is full.
        assert_eq!(admit(&mut l, 0, 0), Admit::Full);
        assert_eq!(admit(&mut l, 1, 0), Admit::Full);
        assert_eq!(l.admit(0, 0, 10, 20, false, false), Admit::Queue, "the per-VC rule");
        l.remove_out_flits(0, 10);
        // VC 1 sends its packet (its credits taken at the send) and the next VC 1 packet is
        // admitted: 30 credits, 10 used downstream, 10 held by the queue, 10 left.
        assert!(!l.leave_out(1, 10, 10, u32::MAX, true));
        assert_eq!(admit(&mut l, 1, 0), Admit::Queue);
        // Now 10 used + 10 queued of VC 1's 30: one more packet's worth, but the queue (VC 0's
        // 10 and VC 1's 10) is full again.
        assert_eq!(admit(&mut l, 1, 0), Admit::Full);
        // Make room in the queue; VC 1's credits then decide: 10 used downstream, 10 queued,
        // 10 free, so another 10-flit packet fits, and after it none.
        l.remove_out_flits(0, 10);
        assert_eq!(admit(&mut l, 1, 0), Admit::Queue);
        l.remove_out_flits(1, 20);
        l.take(1, 20);
        assert_eq!(l.free_at(1, 0), 0);
        assert_eq!((admit(&mut l, 1, 0), l.next_return(1)), (Admit::Credits, None), "no return on its way");
        l.give_back(1, 0, 500, 10);
        assert_eq!((admit(&mut l, 1, 100), l.next_return(1)), (Admit::Credits, Some(500)));
        assert_eq!(admit(&mut l, 1, 500), Admit::Queue, "the return arrived");
        // An ejection port needs no credits; an idle output goes straight through.
        l.remove_out_flits(1, 10);
        assert_eq!(l.admit_shared(2, 2, 3, 0, 10, 20, true, false), Admit::Through);
        assert_eq!(l.free_at(3, 0), 20, "a packet straight through takes its credits");
        assert_eq!(l.admit_shared(2, 2, 2, 0, 10, 20, false, true), Admit::Queue);
    }

    #[test]
    fn returns_count_only_once_arrived() {
        let mut l = CreditLedger::new(2, 4);
        l.take(1, 3);
        l.give_back(1, 0, 100, 1);
        l.give_back(1, 0, 200, 2);
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

    proptest::proptest! {
        /// Against a plain list of pending returns: every reading agrees after any sequence of
        /// takes, returns (in time order, as links deliver them) and absorbs at rising times.
        #[test]
        fn agrees_with_a_list_of_returns(ops in proptest::collection::vec((0u8..5, 0u64..40, 1u32..3), 1..200)) {
            let cap = 8;
            let mut l = CreditLedger::new(1, cap);
            let (mut free, mut pending): (u32, Vec<(u64, u32)>) = (cap, Vec::new());
            let (mut now, mut last) = (0u64, 0u64);
            for (op, dt, flits) in ops {
                let in_flight: u32 = pending.iter().map(|p| p.1).sum();
                // Absorbing what has arrived, in the reference.
                let absorb = |free: &mut u32, pending: &mut Vec<(u64, u32)>| {
                    *free += pending.iter().filter(|p| p.0 <= now).map(|p| p.1).sum::<u32>();
                    pending.retain(|p| p.0 > now);
                };
                match op {
                    0 => {
                        // Send if there are credits (the engine absorbs first).
                        absorb(&mut free, &mut pending);
                        proptest::prop_assert_eq!(l.absorb(0, now), free);
                        if free >= flits {
                            l.take(0, flits);
                            free -= flits;
                        }
                    }
                    // A return: only of credits in use (the downstream buffer holds them).
                    1 if in_flight + free + flits <= cap => {
                        last = last.max(now) + dt;
                        l.give_back(0, now, last, flits);
                        pending.push((last, flits));
                    }
                    2 => now += dt,
                    4 => {
                        // Send if there are credits, through `covers` (which absorbs only when the
                        // absorbed credits fall short): the same decision, the same totals after.
                        absorb(&mut free, &mut pending);
                        let covered = l.covers(0, now, flits);
                        proptest::prop_assert_eq!(covered, free >= flits);
                        if covered {
                            l.take(0, flits);
                            free -= flits;
                        }
                    }
                    _ => {
                        absorb(&mut free, &mut pending);
                        proptest::prop_assert_eq!(l.absorb(0, now), free);
                    }
                }
                let arrived: u32 = pending.iter().filter(|p| p.0 <= now).map(|p| p.1).sum();
                proptest::prop_assert_eq!(l.free_at(0, now), free + arrived);
                if op == 0 || op == 3 {
                    // Right after absorbing, as the engine asks it.
                    proptest::prop_assert_eq!(l.next_return(0), pending.first().map(|p| p.0));
                }
                let (f, p) = l.parts(0);
                proptest::prop_assert_eq!(f + p, free + pending.iter().map(|p| p.1).sum::<u32>());
            }
        }
    }

    #[test]
    fn admit_and_leave_out_keep_the_buffer_and_credits() {
        // 4 downstream credits per VC; an output buffer of 4 flits; packets of 2 flits.
        let (out_cap, flits) = (4, 2);
        let mut l = CreditLedger::new(1, 4);
        // Idle output with credits: straight through, credits taken, buffer untouched.
        assert_eq!(l.admit(0, 0, flits, out_cap, true, false), Admit::Through);
        assert_eq!((l.absorb(0, 0), l.out_flits(0)), (2, 0));
        // Ejection needs no credits.
        assert_eq!(l.admit(0, 0, flits, out_cap, true, true), Admit::Through);
        assert_eq!((l.absorb(0, 0), l.out_flits(0)), (2, 0));
        // A busy output queues the packet whatever the credits.
        assert_eq!(l.admit(0, 0, flits, out_cap, false, false), Admit::Queue);
        assert_eq!((l.absorb(0, 0), l.out_flits(0)), (2, 2));
        // Idle, but the credits (2 free, 2 more only at time 50) do not cover it after the
        // returns that arrived are absorbed: it queues without taking any.
        l.take(0, 2);
        l.give_back(0, 0, 50, 2);
        assert_eq!(l.admit(0, 10, flits, out_cap, true, false), Admit::Queue);
        assert_eq!((l.absorb(0, 10), l.out_flits(0)), (0, 4));
        // The buffer is full now: refused, nothing changes.
        assert_eq!(l.admit(0, 60, flits, out_cap, true, false), Admit::Full);
        assert_eq!((l.out_flits(0), l.parts(0)), (4, (0, 2)));
        // Leaving: reports the buffer was full, frees its flits and takes the credits asked for.
        assert_eq!(l.absorb(0, 60), 2);
        assert!(l.leave_out(0, flits, flits, out_cap, true));
        assert_eq!((l.out_flits(0), l.absorb(0, 60)), (2, 0));
        assert!(!l.leave_out(0, flits, flits, out_cap, false));
        assert_eq!((l.out_flits(0), l.absorb(0, 60)), (0, 0));
        // Full for the run's largest packet (3 flits with 2 of 4 used) though not for the
        // 1-flit packet that leaves: a refused 3-flit request must hear of it.
        assert_eq!(l.admit(0, 60, flits, out_cap, true, false), Admit::Queue);
        assert!(l.leave_out(0, 1, 3, out_cap, false));
    }

    #[test]
    fn ring_wraps() {
        let mut l = CreditLedger::new(1, 3);
        for round in 0..10u64 {
            l.take(0, 3);
            for i in 0..3 {
                l.give_back(0, round * 10, round * 10 + i, 1);
            }
            assert_eq!(l.absorb(0, round * 10 + 2), 3);
        }
    }

    /// Net occupancy: the used credits without the flits on the wire and the returns on their
    /// way back; the output buffer counts in both.
    #[test]
    fn net_occupancy_leaves_out_the_wires_both_ways() {
        let mut l = CreditLedger::new(1, 10);
        l.add_out_flits(0, 2);
        l.take(0, 4); // 4 flits took their credits (waiting for the link)
        assert_eq!((l.occupancy(0, 0), l.net_occupancy(0)), (6, 6));
        l.wire_out(0, 0, 3); // 3 of them start on the link
        assert_eq!((l.occupancy(0, 0), l.net_occupancy(0)), (6, 3));
        l.wire_in(0, 3); // they arrive downstream
        assert_eq!(l.net_occupancy(0), 6);
        l.give_back(0, 0, 50, 2); // 2 leave the downstream buffer: credits on their way
        assert_eq!((l.occupancy(0, 10), l.net_occupancy(0)), (6, 4));
        assert_eq!((l.occupancy(0, 50), l.net_occupancy(0)), (4, 4));
        // 1 more leaves over a global link: its credit travels in the mail until the window's
        // barrier, on its way though not yet recorded; the raw occupancy still counts it.
        l.mailed(0, 1);
        assert_eq!((l.occupancy(0, 60), l.net_occupancy(0)), (4, 3));
        l.delivered(0, 1);
        l.give_back(0, 70, 150, 1);
        assert_eq!((l.occupancy(0, 100), l.net_occupancy(0)), (4, 3));
        assert_eq!((l.occupancy(0, 150), l.net_occupancy(0)), (3, 3));
    }

    proptest::proptest! {
        /// The port occupancy and window estimate from the counters and the returns still to
        /// arrive (BookSim timing) equal those from the walk of the pending returns, after any
        /// sends (one per cycle, at ticks), credit returns (landing half a cycle before a tick,
        /// `delay` after their record) and queries at whole and half cycles.
        #[test]
        fn occupancies_without_the_rings_agree_with_the_walk(
            ops in proptest::collection::vec((0u8..4, 0usize..2, 0u64..8), 1..400),
            delay in 1u64..=120,
        ) {
            let (c, cap) = (1_000u64, 8);
            let mut fast = CreditLedger::new(2, cap);
            let mut walk = CreditLedger::new(2, cap);
            let return_delay = delay * c - c / 2;
            let cycles = |return_delay| Some(Cycles { cycle: c, return_delay, returns_per_cycle: 3 });
            fast.keep_sent(2, cycles(return_delay), |_| 40 * c);
            walk.keep_sent(2, cycles(1_000 * c), |_| 40 * c);
            let (mut now, mut next_send, mut used) = (0u64, 0u64, [0u32; 2]);
            // The returns recorded for the latest arrival, at most 3 (as an input's credits at
            // a speedup of up to 3).
            let (mut last_arrival, mut at_last) = (0u64, 0u32);
            for (op, vc, step) in ops {
                match op {
                    0 => {
                        let at = now.next_multiple_of(c).max(next_send);
                        now = at;
                        if fast.absorb(vc, now) > 0 {
                            proptest::prop_assert!(walk.absorb(vc, now) > 0);
                            for l in [&mut fast, &mut walk] {
                                l.take(vc, 1);
                                l.wire_out(vc, now, 1);
                                l.wire_in(vc, 1);
                            }
                            used[vc] += 1;
                            next_send = now + c;
                        }
                    }
                    1 if used[vc] > 0 => {
                        let arrival = now.next_multiple_of(c) + return_delay;
                        if arrival == last_arrival && at_last == 3 {
                            continue;
                        }
                        at_last = if arrival == last_arrival { at_last + 1 } else { 1 };
                        last_arrival = arrival;
                        fast.give_back(vc, now, arrival, 1);
                        walk.give_back(vc, now, arrival, 1);
                        used[vc] -= 1;
                    }
                    2 => now += step * c / 2,
                    _ => {}
                }
                let port = (fast.port_occupancy(0, 2, now), walk.port_occupancy(0, 2, now));
                let window = (fast.window_occupancy(0, 2, now), walk.window_occupancy(0, 2, now));
                proptest::prop_assert_eq!(port.0, port.1, "at {} ps", now);
                proptest::prop_assert_eq!(window.0, window.1, "at {} ps", now);
            }
        }
    }
}
