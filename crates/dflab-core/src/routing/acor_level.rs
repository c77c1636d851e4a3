//! ACOR's misrouting levels (Benito et al., JPDC'19 §4.2; acor-family notes A4–A6, A8): the
//! sequence of misrouting policies, from the shortest paths to full Valiant, and the
//! per-switch state machine of ACOR-Switch with hysteresis, shared by ACOR and PB-ACOR.
//!
//! Sequences (Table 2): `2LA` = CRG-Gr, RRG-Sw; `2LB` = CRG-Sw, RRG-Sw; `3L` = CRG-Gr, CRG-Sw,
//! RRG-Sw.
//!
//! ACOR-Switch, as FOGSim's `switchModule.cc` runs it (the paper's "exceeds"/"lower than" are
//! FOGSim's `>=`/`<=`, its default here):
//! * `blocked` counts the refused attempts at an injection head of a packet already
//!   misrouted (every attempt, not every packet);
//! * when `blocked >= IT(level)` the level goes up at once, and `blocked` and the hysteresis
//!   window (`HI`) restart;
//! * when a window ends with `blocked <= DT(level)` the level goes down; either way `blocked`
//!   and the window restart.
//!
//! `routing.hysteresis = "fixed"` is §4.2.2 as the paper writes it, which FOGSim does not
//! do: "the blocked packet counter is reset at the end of every hysteresis interval", and a
//! level goes up "without waiting for the end of the interval", with no word of a restart. So
//! the windows run on a fixed grid of `HI` from t = 0 and the counter is cleared only at their
//! ends: a level increase neither clears it nor moves the window. Every switch's windows then
//! end together, and the window that ends first after a load step holds no time before it
//! (with FOGSim's restart a switch's window straddles the step; docs/acor-results.md, Figs.
//! 9-10).
//!
//! Thresholds: 3L uses IT1 to leave level 1, IT2 to leave level 2, DT1 to return to level 1
//! and DT2 to return to level 2; 2LA and 2LB use only IT1 and DT1 (FOGSim's indexing).
//! Levels are 0-based here (the paper's level 1 is 0).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::misroute::Policy;
use crate::error::{Error, Result};
use crate::units::{ns_to_ps, Time};

/// A sequence of misrouting policies (Table 2).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Sequence {
    /// CRG-Gr, RRG-Sw.
    #[serde(rename = "2LA", alias = "2la")]
    TwoLA,
    /// CRG-Sw, RRG-Sw.
    #[serde(rename = "2LB", alias = "2lb")]
    TwoLB,
    /// CRG-Gr, CRG-Sw, RRG-Sw.
    #[default]
    #[serde(rename = "3L", alias = "3l")]
    ThreeL,
}

impl Sequence {
    pub fn policies(self) -> &'static [Policy] {
        match self {
            Sequence::TwoLA => &[Policy::CrgGr, Policy::RrgSw],
            Sequence::TwoLB => &[Policy::CrgSw, Policy::RrgSw],
            Sequence::ThreeL => &[Policy::CrgGr, Policy::CrgSw, Policy::RrgSw],
        }
    }

    pub fn top(self) -> u8 {
        self.policies().len() as u8 - 1
    }
}

/// Where the level lives (§4.2.2).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Management {
    /// ACOR-Packet: each packet starts at level 1 and goes up one level at each refused
    /// attempt at its injection head.
    Packet,
    /// ACOR-Switch: one level per switch, with hysteresis.
    #[default]
    Switch,
}

/// When ACOR-Switch's hysteresis window restarts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Hysteresis {
    /// FOGSim's `switchModule.cc`: a level increase clears the counter and restarts the
    /// window; a window's end clears it and starts the next.
    #[default]
    Restart,
    /// §4.2.2 as written: windows on a fixed grid of `HI` from t = 0; the counter is cleared
    /// only at a window's end.
    Fixed,
}

/// The level thresholds and the hysteresis window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Levels {
    pub sequence: Sequence,
    /// Hysteresis interval.
    pub hi: Time,
    /// Whether a level increase restarts the window (and clears the counter).
    pub hysteresis: Hysteresis,
    /// Per level: go up when `blocked >= up[level]` (None at the top).
    up: [Option<u32>; 3],
    /// Per level: go down when a window ends with `blocked <= down[level]` (None at level 0).
    down: [Option<u32>; 3],
}

impl Levels {
    /// `it`/`dt` are (IT1, IT2) and (DT1, DT2); `hi_ns` the window.
    pub fn new(
        sequence: Sequence,
        hi_ns: f64,
        hysteresis: Hysteresis,
        it: (u32, u32),
        dt: (u32, u32),
    ) -> Result<Levels> {
        let hi = ns_to_ps(hi_ns);
        if hi == 0 {
            return Err(Error::config("routing.hi_ns", format!("{hi_ns}: must be above 0")));
        }
        let (up, down) = match sequence {
            Sequence::ThreeL => ([Some(it.0), Some(it.1), None], [None, Some(dt.0), Some(dt.1)]),
            _ => ([Some(it.0), None, None], [None, Some(dt.0), None]),
        };
        Ok(Levels { sequence, hi, hysteresis, up, down })
    }

    pub fn policy(&self, level: u8) -> Policy {
        self.sequence.policies()[level as usize]
    }

    pub fn top(&self) -> u8 {
        self.sequence.top()
    }
}

/// One switch's ACOR state.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SwitchLevel {
    /// The current level (0-based).
    pub level: u8,
    /// Refused attempts counted in the current window.
    pub blocked: u32,
    /// When the current window began (its end is `start + HI`).
    pub start: Time,
    /// Whether the router's timer is set for the end of a window.
    pub armed: bool,
}

/// What a step of the state machine did, for the caller's timer and trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    None,
    Up,
    Down,
}

impl SwitchLevel {
    /// The end of the window running at `now`, continuing the grid of windows from the last
    /// restart (a switch that stopped its timer resumes it on the same grid).
    pub fn window_end(&self, levels: &Levels, now: Time) -> Time {
        let done = now.saturating_sub(self.start) / levels.hi;
        self.start + (done + 1) * levels.hi
    }

    /// A refused attempt of a misrouted packet at an injection head at `now`.
    pub fn blocked_attempt(&mut self, levels: &Levels, now: Time) -> Change {
        self.blocked += 1;
        match levels.up[self.level as usize] {
            Some(it) if self.blocked >= it => {
                self.level += 1;
                if levels.hysteresis == Hysteresis::Restart {
                    self.blocked = 0;
                    self.start = now;
                }
                Change::Up
            }
            _ => Change::None,
        }
    }

    /// The end of a window at `now` (the caller checked `now` is one).
    pub fn window_ends(&mut self, levels: &Levels, now: Time) -> Change {
        let change = match levels.down[self.level as usize] {
            Some(dt) if self.blocked <= dt => {
                self.level -= 1;
                Change::Down
            }
            _ => Change::None,
        };
        self.blocked = 0;
        self.start = now;
        change
    }

    /// Whether the state is the one a window end would leave unchanged forever (level 0,
    /// nothing counted): the timer may stop.
    pub fn at_rest(&self) -> bool {
        self.level == 0 && self.blocked == 0
    }

    /// Before the switch counts or decides at `now`: if its timer stopped, resume its window
    /// grid and return when the timer must fire.
    pub fn ensure_armed(&mut self, levels: &Levels, now: Time) -> Option<Time> {
        if self.armed {
            return None;
        }
        self.armed = true;
        self.start = self.window_end(levels, now) - levels.hi;
        Some(self.start + levels.hi)
    }

    /// The switch's timer fired at `now`: the window's end if it is one (a level change since
    /// the timer was set moved the window), and when to fire next (None: at rest, stopped).
    pub fn on_timer(&mut self, levels: &Levels, now: Time) -> (Change, Option<Time>) {
        if now < self.start + levels.hi {
            return (Change::None, Some(self.start + levels.hi));
        }
        let change = self.window_ends(levels, now);
        if self.at_rest() {
            self.armed = false;
            return (change, None);
        }
        (change, Some(now + levels.hi))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NS: Time = 1000;

    fn levels(seq: Sequence) -> Levels {
        Levels::new(seq, 500.0, Hysteresis::Restart, (15, 500), (5, 15)).unwrap()
    }

    #[test]
    fn three_levels_go_up_at_it_and_down_at_dt() {
        let l = levels(Sequence::ThreeL);
        let mut s = SwitchLevel::default();
        for i in 1..15 {
            assert_eq!(s.blocked_attempt(&l, i * NS), Change::None);
        }
        // The 15th attempt reaches IT1 (>=): up at once, a new window starts then.
        assert_eq!(s.blocked_attempt(&l, 20 * NS), Change::Up);
        assert_eq!((s.level, s.blocked, s.start), (1, 0, 20 * NS));
        assert_eq!(s.window_end(&l, 21 * NS), 520 * NS);
        // Level 2 needs IT2 = 500 attempts in a window.
        for i in 0..499 {
            assert_eq!(s.blocked_attempt(&l, 21 * NS + i), Change::None);
        }
        assert_eq!(s.blocked_attempt(&l, 30 * NS), Change::Up);
        assert_eq!(s.level, 2);
        // A window with 15 attempts (DT2, <=) goes down; one with 16 does not.
        for _ in 0..16 {
            s.blocked_attempt(&l, 100 * NS);
        }
        assert_eq!(s.window_ends(&l, 530 * NS), Change::None);
        assert_eq!((s.level, s.blocked), (2, 0));
        for _ in 0..15 {
            s.blocked_attempt(&l, 600 * NS);
        }
        assert_eq!(s.window_ends(&l, 1030 * NS), Change::Down);
        assert_eq!(s.level, 1);
        // Level 1 returns to 0 when a window has at most DT1 = 5.
        for _ in 0..6 {
            s.blocked_attempt(&l, 1100 * NS);
        }
        assert_eq!(s.window_ends(&l, 1530 * NS), Change::None);
        assert_eq!(s.window_ends(&l, 2030 * NS), Change::Down);
        assert_eq!(s.level, 0);
        // Level 0 never goes down; the top never goes up.
        assert_eq!(s.window_ends(&l, 2530 * NS), Change::None);
        assert!(s.at_rest());
    }

    #[test]
    fn two_level_sequences_use_it1_and_dt1_only() {
        for seq in [Sequence::TwoLA, Sequence::TwoLB] {
            let l = levels(seq);
            let mut s = SwitchLevel::default();
            for _ in 0..14 {
                s.blocked_attempt(&l, NS);
            }
            assert_eq!(s.blocked_attempt(&l, NS), Change::Up);
            // At the top: no IT2, however many attempts.
            for _ in 0..10_000 {
                assert_eq!(s.blocked_attempt(&l, 2 * NS), Change::None);
            }
            assert_eq!(s.window_ends(&l, 501 * NS), Change::None);
            for _ in 0..5 {
                s.blocked_attempt(&l, 600 * NS);
            }
            assert_eq!(s.window_ends(&l, 1001 * NS), Change::Down, "DT1 = 5, <=");
            assert_eq!(l.policy(0), seq.policies()[0]);
        }
    }

    #[test]
    fn a_resting_switch_resumes_its_window_grid() {
        let l = levels(Sequence::ThreeL);
        let mut s = SwitchLevel { start: 100 * NS, ..Default::default() };
        // Windows end at 600, 1100, 1600 ... ns.
        assert_eq!(s.window_end(&l, 1234 * NS), 1600 * NS);
        assert_eq!(s.window_end(&l, 1600 * NS), 2100 * NS);
        assert_eq!(s.ensure_armed(&l, 1234 * NS), Some(1600 * NS));
        assert_eq!(s.ensure_armed(&l, 1300 * NS), None, "already armed");
        assert_eq!(s.start, 1100 * NS);
        // A level change moves the window: the timer set for 1600 finds it stale.
        for _ in 0..15 {
            s.blocked_attempt(&l, 1300 * NS);
        }
        assert_eq!(s.on_timer(&l, 1600 * NS), (Change::None, Some(1800 * NS)));
        // The window ends with nothing counted: down to level 0, at rest, the timer stops.
        assert_eq!(s.on_timer(&l, 1800 * NS), (Change::Down, None));
        assert!(!s.armed && s.at_rest());
    }

    #[test]
    fn fixed_windows_neither_restart_nor_clear_at_a_level_increase() {
        let l = Levels::new(Sequence::ThreeL, 500.0, Hysteresis::Fixed, (15, 500), (5, 15)).unwrap();
        let mut s = SwitchLevel::default();
        assert_eq!(s.ensure_armed(&l, 130 * NS), Some(500 * NS));
        for _ in 0..14 {
            assert_eq!(s.blocked_attempt(&l, 200 * NS), Change::None);
        }
        // Up at the 15th attempt, at once; the counter goes on and the window stays.
        assert_eq!(s.blocked_attempt(&l, 210 * NS), Change::Up);
        assert_eq!((s.level, s.blocked, s.start), (1, 15, 0));
        assert_eq!(s.window_end(&l, 300 * NS), 500 * NS);
        // IT2 counts from the window's start: 485 more attempts reach 500.
        for _ in 0..484 {
            assert_eq!(s.blocked_attempt(&l, 300 * NS), Change::None);
        }
        assert_eq!(s.blocked_attempt(&l, 310 * NS), Change::Up);
        assert_eq!((s.level, s.blocked), (2, 500));
        // The timer set at the first arming finds the window's end where it was.
        assert_eq!(s.on_timer(&l, 500 * NS), (Change::None, Some(1000 * NS)));
        assert_eq!((s.blocked, s.start), (0, 500 * NS));
        // A quiet window on the grid lowers the level at its end, 1 µs after t = 0.
        assert_eq!(s.on_timer(&l, 1000 * NS), (Change::Down, Some(1500 * NS)));
        // With FOGSim's restart the same attempts leave the level 1 window at 710 ns.
        let r = levels(Sequence::ThreeL);
        let mut s = SwitchLevel::default();
        for _ in 0..15 {
            s.blocked_attempt(&r, 210 * NS);
        }
        assert_eq!((s.level, s.blocked, s.window_end(&r, 300 * NS)), (1, 0, 710 * NS));
    }

    #[test]
    fn sequences_parse_by_the_papers_labels() {
        let s: Sequence = serde_json::from_str("\"2LB\"").unwrap();
        assert_eq!(s, Sequence::TwoLB);
        assert_eq!(serde_json::from_str::<Sequence>("\"3l\"").unwrap(), Sequence::ThreeL);
        assert_eq!(Sequence::ThreeL.policies(), &[Policy::CrgGr, Policy::CrgSw, Policy::RrgSw]);
        assert!(Levels::new(Sequence::ThreeL, 0.0, Hysteresis::Restart, (1, 1), (1, 1)).is_err());
    }
}
