//! Watching a run from outside: an observer the event loop calls about every
//! [`Observer::every`] of wall time (at window barriers), with how far the run is. It shows
//! progress and it can stop the run (Ctrl-C: newcomer #1, where a run could not be interrupted
//! because the engine never looked).

use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::units::{ps_to_us, Time};

/// How far one job of a workload run is.
#[derive(Debug, Clone, PartialEq)]
pub struct JobProgress {
    pub name: String,
    pub ranks: u32,
    /// Ranks that have run all their iterations.
    pub ranks_done: u32,
    /// Iterations per rank, and iterations finished summed over the ranks (out of
    /// `ranks * iterations`).
    pub iterations: u32,
    pub iterations_done: u64,
}

/// How far a run is, as its observer sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// Simulated time reached (µs) and the end of the run (µs).
    pub now_us: f64,
    pub end_us: f64,
    /// Wall-clock seconds since the run started.
    pub wall_s: f64,
    /// Events handled so far.
    pub events: u64,
    /// Per job of a workload run (empty otherwise).
    pub jobs: Vec<JobProgress>,
}

/// The callback: `false` stops the run with [`Error::Interrupted`].
pub type ObserverFn = Box<dyn FnMut(&Progress) -> bool + Send>;

/// An observer and when to call it next.
pub struct Observer {
    f: ObserverFn,
    every: Duration,
    started: Instant,
    next: Instant,
}

impl Observer {
    pub fn new(every: Duration, f: ObserverFn) -> Observer {
        let now = Instant::now();
        Observer { f, every, started: now, next: now + every }
    }

    /// At a barrier at simulated time `now`: call the callback when its time has come. (A
    /// window is one global-link latency of simulated time, which a large network takes long
    /// to simulate: the clock is read at every barrier, a few ns beside the barrier's work.)
    /// `jobs` says how far the jobs are (asked only when the callback is called).
    #[inline]
    pub fn tick(&mut self, now: Time, end: Time, events: u64, jobs: impl FnOnce() -> Vec<JobProgress>) -> Result<()> {
        let wall = Instant::now();
        if wall < self.next {
            return Ok(());
        }
        self.next = wall + self.every;
        let p = Progress {
            now_us: ps_to_us(now),
            end_us: ps_to_us(end),
            wall_s: (wall - self.started).as_secs_f64(),
            events,
            jobs: jobs(),
        };
        if (self.f)(&p) {
            Ok(())
        } else {
            Err(Error::Interrupted(format!("stopped at t = {:.3} us of {:.3} us", p.now_us, p.end_us)))
        }
    }
}
