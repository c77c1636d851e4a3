//! Virtual-channel assignment, shared by the routings: how many VCs each link class has, and
//! the three policies of the literature for picking a packet's VC on its next link so that VCs
//! never decrease along a path (which keeps the channel dependency graph acyclic):
//!
//! * [`PhaseVcs`]: one VC per path segment (Valiant and the UGAL family, PAR; the Q-adaptive
//!   reference code's layouts);
//! * [`per_hop`]: VC = router hops taken so far (Q-adaptive, Q-routing);
//! * [`Ladder`]: FOGSim's per-class ladder (ACOR, Piggyback): a fixed sequence of link classes,
//!   and the next hop takes the first later slot of its class.

use crate::error::{Error, Result};
use crate::topology::LinkClass;

/// VCs per router-to-router link class (host links have one). The engine sizes every port for
/// the larger count; a port of a class with fewer VCs uses only its first ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VcCounts {
    pub local: u8,
    pub global: u8,
}

impl VcCounts {
    /// The same count on local and global links.
    pub const fn uniform(n: u8) -> VcCounts {
        VcCounts { local: n, global: n }
    }

    /// The larger count: VCs per port in the engine's buffers.
    pub fn max(self) -> usize {
        self.local.max(self.global) as usize
    }

    /// The count of links of `class` (1 for host links).
    pub fn of(self, class: LinkClass) -> u8 {
        match class {
            LinkClass::Host => 1,
            LinkClass::Local => self.local,
            LinkClass::Global => self.global,
        }
    }
}

/// One VC per segment of a (possibly non-minimal) path: the VCs only grow along it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhaseVcs {
    /// Source group up to and including the global hop into the intermediate group.
    pub to_group: u8,
    /// In the intermediate group, the local hop to the intermediate router.
    pub to_inter_router: u8,
    /// From the intermediate router (or group) to the destination group; also the minimal path
    /// of the adaptive routings in the source group.
    pub to_destination: u8,
    /// Inside the destination group.
    pub destination: u8,
}

impl PhaseVcs {
    pub fn vcs(&self) -> VcCounts {
        VcCounts::uniform(self.destination + 1)
    }
}

/// The VC of the next link of a packet that has taken `hops` router-to-router hops.
#[inline(always)]
pub fn per_hop(hops: u8) -> u8 {
    hops
}

/// Most slots of a ladder.
pub const MAX_LADDER: usize = 16;

/// FOGSim's VC ladder: a fixed sequence of link classes (e.g. `L G L L G L` for Valiant paths).
/// A packet keeps its position in the ladder; its next hop over a link of class `c` takes the
/// first slot of class `c` after its position, and the VC is that slot's rank among the slots
/// of class `c`. Positions only grow, so VCs of each class only grow along a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ladder {
    slots: [LinkClass; MAX_LADDER],
    len: u8,
}

impl Ladder {
    /// From a string of `L` and `G` (spaces and dashes ignored), e.g. `"L-G-L-L-G-L"`.
    pub fn parse(text: &str) -> Result<Ladder> {
        let mut slots = [LinkClass::Local; MAX_LADDER];
        let mut len = 0;
        for c in text.chars().filter(|c| !c.is_whitespace() && *c != '-') {
            let class = match c.to_ascii_uppercase() {
                'L' => LinkClass::Local,
                'G' => LinkClass::Global,
                _ => return Err(Error::config("ladder", format!("'{text}': allowed: L and G, e.g. L-G-L-L-G-L"))),
            };
            if len == MAX_LADDER {
                return Err(Error::config("ladder", format!("'{text}': at most {MAX_LADDER} slots")));
            }
            slots[len] = class;
            len += 1;
        }
        if len == 0 {
            return Err(Error::config("ladder", "an empty ladder; allowed: L and G, e.g. L-G-L-L-G-L"));
        }
        Ok(Ladder { slots, len: len as u8 })
    }

    /// The slots in order.
    pub fn slots(&self) -> &[LinkClass] {
        &self.slots[..self.len as usize]
    }

    /// VCs per class: the number of slots of each class.
    pub fn vcs(&self) -> VcCounts {
        let count = |c| self.slots().iter().filter(|&&s| s == c).count() as u8;
        VcCounts { local: count(LinkClass::Local).max(1), global: count(LinkClass::Global).max(1) }
    }

    /// The next hop of a packet at ladder position `pos` (slots `0..pos` are behind it; a new
    /// packet is at 0) over a link of `class`: its VC and new position, or None when no later
    /// slot has that class (the path is longer than the ladder allows).
    #[inline]
    pub fn next(&self, pos: u8, class: LinkClass) -> Option<(u8, u8)> {
        let slots = self.slots();
        let at = (pos as usize..slots.len()).find(|&i| slots[i] == class)?;
        let vc = slots[..at].iter().filter(|&&s| s == class).count() as u8;
        Some((vc, at as u8 + 1))
    }

    /// The VCs a path of link classes takes, or None if it does not fit the ladder.
    pub fn vcs_of_path(&self, path: &[LinkClass]) -> Option<Vec<u8>> {
        let mut pos = 0;
        path.iter()
            .map(|&c| {
                let (vc, next) = self.next(pos, c)?;
                pos = next;
                Some(vc)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use LinkClass::{Global as G, Local as L};

    #[test]
    fn valiant_ladder_gives_each_class_its_own_increasing_vcs() {
        // FOGSim's Valiant ladder: local 0, global 0, local 1, local 2, global 1, local 3.
        let ladder = Ladder::parse("L-G-L-L-G-L").unwrap();
        assert_eq!(ladder.vcs(), VcCounts { local: 4, global: 2 });
        // The full Valiant path takes every slot.
        assert_eq!(ladder.vcs_of_path(&[L, G, L, L, G, L]).unwrap(), vec![0, 0, 1, 2, 1, 3]);
        // A minimal path skips slots: its local hop after the global one takes the first local
        // slot after that global slot.
        assert_eq!(ladder.vcs_of_path(&[L, G, L]).unwrap(), vec![0, 0, 1]);
        // The ACOR paper's CRG-Gr example, a path starting with its global hop (the source
        // router owns the link), G-LGL: g0, l1, g1, l3.
        assert_eq!(ladder.vcs_of_path(&[G, L, G, L]).unwrap(), vec![0, 1, 1, 3]);
        assert_eq!(ladder.vcs_of_path(&[G, L, L, G]).unwrap(), vec![0, 1, 2, 1]);
        // Too many global hops for the ladder.
        assert!(ladder.vcs_of_path(&[G, G, G]).is_none());
        assert!(ladder.vcs_of_path(&[L, G, L, L, G, L, L]).is_none());
    }

    #[test]
    fn per_class_vcs_never_decrease_along_any_path_that_fits() {
        let ladder = Ladder::parse("L G L L G L").unwrap();
        // Every path of up to 7 hops over both classes.
        for len in 1..=7u32 {
            for bits in 0..(1u32 << len) {
                let path: Vec<LinkClass> = (0..len).map(|i| if bits >> i & 1 == 1 { G } else { L }).collect();
                let Some(vcs) = ladder.vcs_of_path(&path) else { continue };
                for class in [L, G] {
                    let of: Vec<u8> = path.iter().zip(&vcs).filter(|(c, _)| **c == class).map(|(_, &v)| v).collect();
                    assert!(of.windows(2).all(|w| w[0] < w[1]), "{path:?}: {vcs:?}");
                    assert!(of.iter().all(|&v| v < ladder.vcs().of(class)));
                }
            }
        }
    }

    #[test]
    fn bad_ladders_name_the_allowed_letters() {
        for bad in ["", "L-X-G", &"L".repeat(17)] {
            let err = Ladder::parse(bad).unwrap_err().to_string();
            assert!(err.starts_with("ladder"), "{err}");
        }
    }
}
