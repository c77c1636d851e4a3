//! UR, uniform random traffic: SST Ember's `Random` motif (`emberrandomgen.cc` in the SC'22
//! toolkit, QR §4.3) as the paper's §IV uses it (Table I: 11,829.48 MB, peak 3.07 KB).
//!
//! Every iteration all ranks draw the same permutation of the ranks: an SST `XORShiftRNG`
//! seeded with `ranks + iteration` shuffles the identity (for each position `i`, swap it with
//! position `next_u32() % ranks`). Rank `r` sends one message to its image `perm[r]` and
//! receives one from its pre-image (the `i` with `perm[i] = r`), unless it is a fixed point;
//! it posts the send, then the receive, then waits for both.
//!
//! ⚠ Decisions:
//! * the message size is given in bytes (`bytes`, 3,072 = Ember's `messagesize` 384 doubles);
//! * a compute before the exchange is emitted only when `compute_ns > 0` (the reference has
//!   none; Ember queues a zero-length compute);
//! * Ember's `subiterations` (1 in the reference) is not offered;
//! * the permutations of the last few iterations are cached (behind a mutex) so that the ranks
//!   of one iteration do not each redraw it: O(ranks) per iteration instead of O(ranks²).

use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::units::{Time, PS_PER_NS};
use crate::workload::mpi::op::Op;

use super::{duration_ps, Motif, MotifParams};

/// Parameters of `ur` (Ember `Random`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct UrParams {
    /// Iterations (one permutation exchange each).
    pub iterations: u32,
    /// Payload of each message, bytes.
    pub bytes: u64,
    /// Computation before each exchange, ns (0: none).
    pub compute_ns: f64,
}

impl Default for UrParams {
    fn default() -> Self {
        UrParams { iterations: 7200, bytes: 3072, compute_ns: 0.0 }
    }
}

impl MotifParams for UrParams {
    fn build(self, ranks: u32, field: &str) -> Result<Box<dyn Motif>> {
        let compute = duration_ps(self.compute_ns, PS_PER_NS, field, "compute_ns")?;
        Ok(Box::new(Ur { ranks, p: self, compute, cache: Mutex::new(Vec::new()) }))
    }
}

/// SST core's `XORShiftRNG` (Marsaglia's xor128 with the state seeded as x = seed, y = z = w = 0).
pub struct XorShift {
    x: u32,
    y: u32,
    z: u32,
    w: u32,
}

impl XorShift {
    pub fn new(seed: u32) -> XorShift {
        XorShift { x: seed, y: 0, z: 0, w: 0 }
    }

    pub fn next_u32(&mut self) -> u32 {
        let t = self.x ^ (self.x << 11);
        self.x = self.y;
        self.y = self.z;
        self.z = self.w;
        self.w = self.w ^ (self.w >> 19) ^ t ^ (t >> 8);
        self.w
    }
}

/// One iteration's permutation: `image[r]` and `pre[r]` (its inverse).
pub struct Perm {
    pub image: Vec<u32>,
    pub pre: Vec<u32>,
}

/// The permutation all ranks draw in iteration `it` of a job of `ranks` ranks.
pub fn permutation(ranks: u32, it: u32) -> Perm {
    let mut rng = XorShift::new(ranks.wrapping_add(it));
    let mut image: Vec<u32> = (0..ranks).collect();
    for i in 0..ranks as usize {
        let j = (rng.next_u32() % ranks) as usize;
        image.swap(i, j);
    }
    let mut pre = vec![0; ranks as usize];
    for (i, &t) in image.iter().enumerate() {
        pre[t as usize] = i as u32;
    }
    Perm { image, pre }
}

/// How many iterations' permutations are kept.
const CACHE: usize = 8;

pub struct Ur {
    ranks: u32,
    p: UrParams,
    compute: Time,
    cache: Mutex<Vec<(u32, Arc<Perm>)>>,
}

impl Ur {
    fn perm(&self, it: u32) -> Arc<Perm> {
        let mut c = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, p)) = c.iter().find(|(i, _)| *i == it) {
            return p.clone();
        }
        let p = Arc::new(permutation(self.ranks, it));
        if c.len() == CACHE {
            c.remove(0);
        }
        c.push((it, p.clone()));
        p
    }
}

impl Motif for Ur {
    fn name(&self) -> &'static str {
        "ur"
    }

    fn iterations(&self) -> u32 {
        self.p.iterations
    }

    fn iteration(&self, rank: u32, it: u32, out: &mut Vec<Op>) {
        if self.compute > 0 {
            out.push(Op::Compute { ps: self.compute });
        }
        let perm = self.perm(it);
        let to = perm.image[rank as usize];
        if to == rank {
            return; // a fixed point: nothing to send or receive
        }
        let from = perm.pre[rank as usize];
        out.push(Op::Isend { to, bytes: self.p.bytes, tag: 0 });
        out.push(Op::Irecv { from, bytes: self.p.bytes, tag: 0 });
        out.push(Op::WaitAll);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xorshift_matches_the_sst_generator() {
        // x = 1, y = z = w = 0: t = 1 ^ (1 << 11) = 2049, w = t ^ (t >> 8) = 2049 ^ 8 = 2057.
        let mut r = XorShift::new(1);
        assert_eq!(r.next_u32(), 2057);
    }

    #[test]
    fn permutation_is_deterministic_and_a_bijection() {
        let a = permutation(528, 17);
        let b = permutation(528, 17);
        assert_eq!(a.image, b.image);
        let mut sorted = a.image.clone();
        sorted.sort();
        assert_eq!(sorted, (0..528).collect::<Vec<_>>());
        assert_ne!(a.image, permutation(528, 18).image);
        for r in 0..528 {
            assert_eq!(a.image[a.pre[r] as usize], r as u32);
        }
    }

    #[test]
    fn ranks_agree_on_the_exchange() {
        let m = UrParams::default().build(24, "j").unwrap();
        let mut a = Vec::new();
        let mut b = Vec::new();
        m.iteration(5, 3, &mut a);
        m.iteration(5, 3, &mut b);
        assert_eq!(a, b);
    }
}
