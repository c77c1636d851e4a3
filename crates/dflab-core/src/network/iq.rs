//! The state of BookSim's input-queued router (`network.timing = "booksim"`) and its two
//! separable input-first allocators, as BookSim2 builds them (`routers/iq_router.cpp`,
//! `allocators/separable_input_first.cpp`, `arbiters/roundrobin_arb.*` at 28f43299):
//!
//! * **VC allocation.** Each input VC whose head waits for an output VC asks for the one VC
//!   its route names, if no packet holds it. Each output VC grants the first asking input VC
//!   at or after its round-robin pointer (over the router's input VCs, `port · vcs + vc`), and
//!   the pointer moves past the winner. The winner holds the output VC until its tail passes
//!   switch allocation (`wait_for_tail_credit = 0`).
//! * **Switch allocation.** Each input port asks, for each output, with one of its VCs that
//!   hold an output VC on that port and have a downstream credit (and room in the output
//!   queue): the first at or after the port's VC offset (`_sw_rr_offset`). The input arbiter
//!   picks the first requested output at or after its pointer, the output arbiter the first
//!   input at or after its pointer; a match moves both pointers past it and the VC offset
//!   past the VC. One iteration, no priorities (`priority = none`).

use super::PacketId;

/// An input VC with no packet.
pub const IDLE: u8 = 0;
/// An input VC whose head waits for VC allocation.
pub const VA: u8 = 1;
/// An input VC whose head holds its output VC and waits for switch allocation.
pub const ACTIVE: u8 = 2;
/// An output VC that no packet holds.
pub const FREE: u32 = u32::MAX;

/// Every router's allocator state; the vectors are empty with the other timings.
#[derive(Default)]
pub struct Iq {
    /// Per input VC queue: [`IDLE`], [`VA`] or [`ACTIVE`].
    pub state: Vec<u8>,
    /// Per input VC queue: the output VC its head was routed to, as the router's local index
    /// `port · vcs + vc` (valid when not idle; kept here so that allocation reads no packet).
    pub want: Vec<u16>,
    /// Per output VC queue: the input VC queue that holds it, or [`FREE`].
    pub held: Vec<u32>,
    /// Per output VC queue: the VC allocator's output arbiter pointer (over the router's input
    /// VCs).
    pub va_ptr: Vec<u32>,
    /// Per port: the switch allocator's input arbiter pointer (over outputs), output arbiter
    /// pointer (over inputs) and the input's VC offset.
    pub sw_in_ptr: Vec<u16>,
    pub sw_out_ptr: Vec<u16>,
    pub sw_vc_ptr: Vec<u8>,
    /// Per router, `words` words each: the input VCs in state [`VA`] and in state [`ACTIVE`],
    /// one bit per local input VC, so that a step visits only those.
    pub va_bits: Vec<u64>,
    pub active_bits: Vec<u64>,
    pub words: usize,
    /// Per router: (output port, packet) through switch allocation in the last internal step,
    /// in the order of their grants; they reach their output queue in the next step.
    pub xbar: Vec<Vec<(u16, PacketId)>>,
    /// Per router: input VCs holding packets, and packets in its output queues (a router with
    /// neither and nothing in its crossbar has no pass).
    pub busy_vcs: Vec<u32>,
    pub queued: Vec<u32>,
    /// Scratch of one allocation (no allocation per step).
    pub vc_asks: Vec<(u32, u32)>,
    pub vc_won: Vec<(u32, u32)>,
    pub sw_asks: Vec<SwitchAsk>,
    pub sw_won: Vec<SwitchAsk>,
}

impl Iq {
    pub fn new(routers: usize, radix: usize, vcs: usize) -> Iq {
        let queues = routers * radix * vcs;
        let words = (radix * vcs).div_ceil(64);
        Iq {
            state: vec![IDLE; queues],
            want: vec![0; queues],
            held: vec![FREE; queues],
            va_ptr: vec![0; queues],
            sw_in_ptr: vec![0; routers * radix],
            sw_out_ptr: vec![0; routers * radix],
            sw_vc_ptr: vec![0; routers * radix],
            va_bits: vec![0; routers * words],
            active_bits: vec![0; routers * words],
            words,
            xbar: vec![Vec::new(); routers],
            busy_vcs: vec![0; routers],
            queued: vec![0; routers],
            ..Iq::default()
        }
    }

    /// Whether router `r` has anything left for a pass.
    #[inline]
    pub fn active(&self, r: usize) -> bool {
        self.busy_vcs[r] > 0 || self.queued[r] > 0 || !self.xbar[r].is_empty()
    }

    /// Put local input VC `i` of router `r` (queue `qi`) in `state`, keeping the bitsets.
    #[inline]
    pub fn set_state(&mut self, r: usize, i: usize, qi: usize, state: u8) {
        let (w, bit) = (r * self.words + i / 64, 1u64 << (i % 64));
        self.va_bits[w] = if state == VA { self.va_bits[w] | bit } else { self.va_bits[w] & !bit };
        self.active_bits[w] = if state == ACTIVE { self.active_bits[w] | bit } else { self.active_bits[w] & !bit };
        self.state[qi] = state;
    }
}

/// The local input VCs of router `r` whose bit is set in `bits`, in increasing order.
#[inline]
pub fn set_bits(bits: &[u64], r: usize, words: usize) -> impl Iterator<Item = usize> + '_ {
    bits[r * words..(r + 1) * words].iter().enumerate().flat_map(|(w, &word)| {
        let mut m = word;
        std::iter::from_fn(move || {
            (m != 0).then(|| {
                let b = m.trailing_zeros() as usize;
                m &= m - 1;
                w * 64 + b
            })
        })
    })
}

/// Round-robin order: how far `i` comes after pointer `ptr` among `size` positions
/// (`RoundRobinArbiter::Supersedes` with equal priorities: the smaller wins).
#[inline]
pub fn rr_rank(i: usize, ptr: usize, size: usize) -> usize {
    (i + size - ptr % size) % size
}

/// VC allocation of one router: `asks` holds (output VC, input VC) for each input VC whose
/// head waits for a free output VC (local indices); `ptr(o)` is output VC `o`'s pointer over
/// `inputs` input VCs. Writes the winners to `won` as (output VC, input VC), one per asked
/// output VC, in the order the output VCs were first asked for.
pub fn allocate_vcs(asks: &[(u32, u32)], inputs: usize, ptr: impl Fn(u32) -> u32, won: &mut Vec<(u32, u32)>) {
    won.clear();
    for &(o, i) in asks {
        let rank = rr_rank(i as usize, ptr(o) as usize, inputs);
        match won.iter_mut().find(|w| w.0 == o) {
            Some(w) if rank < rr_rank(w.1 as usize, ptr(o) as usize, inputs) => w.1 = i,
            Some(_) => {}
            None => won.push((o, i)),
        }
    }
}

/// One request of switch allocation: input port `input` asks for output port `output` with
/// its VC `vc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SwitchAsk {
    pub input: u16,
    pub output: u16,
    pub vc: u8,
}

/// Switch allocation of one router of `radix` ports and `vcs` VCs: `asks` holds every input
/// VC that may go, grouped by input port; `in_ptr`, `out_ptr` and `vc_ptr` are the router's
/// per-port pointers (input arbiters, output arbiters, input VC offsets), moved past each
/// match. Writes the matches to `won`. Consumes `asks`.
pub fn allocate_switch(
    asks: &mut Vec<SwitchAsk>,
    radix: usize,
    vcs: usize,
    in_ptr: &mut [u16],
    out_ptr: &mut [u16],
    vc_ptr: &mut [u8],
    won: &mut Vec<SwitchAsk>,
) {
    won.clear();
    let mut k = 0;
    while k < asks.len() {
        let input = asks[k].input;
        let end = k + asks[k..].iter().take_while(|a| a.input == input).count();
        let (vc_off, in_off) = (vc_ptr[input as usize] as usize, in_ptr[input as usize] as usize);
        // One request per output: the VC first at or after the input's offset (the VCs of one
        // input are distinct, so each output has exactly one); then the input arbiter's pick,
        // the output first at or after its pointer.
        let slice = &asks[k..end];
        let vc_rank = |a: &SwitchAsk| rr_rank(a.vc as usize, vc_off, vcs);
        let request = |a: &&SwitchAsk| slice.iter().all(|b| b.output != a.output || vc_rank(b) >= vc_rank(a));
        let pick = slice.iter().filter(request).min_by_key(|a| rr_rank(a.output as usize, in_off, radix)).copied();
        // The output arbiter: the input first at or after its pointer.
        let a = pick.expect("an input with asks picks one");
        let out_off = out_ptr[a.output as usize] as usize;
        match won.iter_mut().find(|w| w.output == a.output) {
            Some(w) if rr_rank(a.input as usize, out_off, radix) < rr_rank(w.input as usize, out_off, radix) => *w = a,
            Some(_) => {}
            None => won.push(a),
        }
        k = end;
    }
    asks.clear();
    for a in won.iter() {
        in_ptr[a.input as usize] = ((a.output as usize + 1) % radix) as u16;
        out_ptr[a.output as usize] = ((a.input as usize + 1) % radix) as u16;
        vc_ptr[a.input as usize] = ((a.vc as usize + 1) % vcs) as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ask(input: u16, output: u16, vc: u8) -> SwitchAsk {
        SwitchAsk { input, output, vc }
    }

    /// Each output VC grants the first asking input VC at or after its pointer.
    #[test]
    fn vc_allocation_is_round_robin_per_output_vc() {
        let mut won = Vec::new();
        // Output VC 5's pointer at 2: 3 comes first (7 after it, 1 wraps around).
        allocate_vcs(&[(5, 1), (5, 7), (5, 3), (2, 0)], 8, |o| if o == 5 { 2 } else { 0 }, &mut won);
        assert_eq!(won, vec![(5, 3), (2, 0)]);
        allocate_vcs(&[(5, 1), (5, 7), (5, 3)], 8, |_| 4, &mut won);
        assert_eq!(won, vec![(5, 7)]);
    }

    /// The separable input-first allocator on a constructed state: input 0 asks for outputs 1
    /// and 2, input 1 for output 1, input 2 for output 1 with two VCs.
    #[test]
    fn switch_allocation_is_separable_input_first() {
        let (radix, vcs) = (4, 2);
        let (mut inp, mut out, mut vc) = (vec![0u16; radix], vec![0u16; radix], vec![0u8; radix]);
        inp[0] = 2; // input 0 prefers output 2 over output 1
        out[1] = 2; // output 1 prefers input 2, then 3, 0, 1
        vc[2] = 1; // input 2 prefers VC 1
        let mut won = Vec::new();
        let mut asks = vec![ask(0, 1, 0), ask(0, 2, 1), ask(1, 1, 0), ask(2, 1, 0), ask(2, 1, 1)];
        allocate_switch(&mut asks, radix, vcs, &mut inp, &mut out, &mut vc, &mut won);
        assert_eq!(won, vec![ask(0, 2, 1), ask(2, 1, 1)]);
        // Pointers move past each match only.
        assert_eq!((inp[0], inp[2], inp[1]), (3, 2, 0));
        assert_eq!((out[1], out[2]), (3, 1));
        assert_eq!((vc[0], vc[2], vc[1]), (0, 0, 0));
        // Input 1 lost output 1 to input 2; with the pointers moved, next time it wins.
        let mut asks = vec![ask(1, 1, 0), ask(2, 1, 0)];
        allocate_switch(&mut asks, radix, vcs, &mut inp, &mut out, &mut vc, &mut won);
        assert_eq!(won, vec![ask(1, 1, 0)]);
    }

    proptest! {
        /// A matching: at most one grant per input and per output, each granted ask was asked,
        /// and an input that asked is served or lost an output it asked for to another input
        /// (its input arbiter picked that output, which then had a candidate to grant).
        #[test]
        fn switch_allocation_is_a_matching_that_serves_every_input_arbiters_pick(
            raw in proptest::collection::vec((0u16..6, 0u16..6, 0u8..3), 0..30),
            ptrs in proptest::collection::vec(0u16..6, 12),
        ) {
            let (radix, vcs) = (6, 3);
            // As the router files them: one ask per input VC, grouped by input.
            let mut asks: Vec<SwitchAsk> = raw.iter().map(|&(i, o, v)| ask(i, o, v)).collect();
            asks.sort_by_key(|a| (a.input, a.vc));
            asks.dedup_by_key(|a| (a.input, a.vc));
            let asked = asks.clone();
            let (mut inp, mut out) = (ptrs[..6].to_vec(), ptrs[6..].to_vec());
            let mut vc = vec![0u8; radix];
            let mut won = Vec::new();
            allocate_switch(&mut asks, radix, vcs, &mut inp, &mut out, &mut vc, &mut won);
            for (k, a) in won.iter().enumerate() {
                prop_assert!(asked.contains(a));
                prop_assert!(won[k + 1..].iter().all(|b| b.input != a.input && b.output != a.output));
            }
            for a in &asked {
                let served = won.iter().any(|w| w.input == a.input);
                let lost = won.iter().any(|w| asked.iter().any(|b| b.input == a.input && b.output == w.output));
                prop_assert!(served || lost, "input {} asked but neither won nor lost an output it asked for", a.input);
            }
        }
    }
}
