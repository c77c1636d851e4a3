//! How far each job is while the run goes (for `dflab run`'s progress display): its ranks'
//! finished iterations, read from the ranks when the observer asks (about every 0.2 s of wall
//! time), so nothing is counted per event.

use super::rank::Activity;
use super::Mpi;
use crate::engine::observe::JobProgress;

impl Mpi {
    /// One entry per job, in job order.
    pub(super) fn job_progress(&self) -> Vec<JobProgress> {
        let mut out: Vec<JobProgress> = self
            .jobs
            .iter()
            .zip(&self.stats)
            .map(|(job, s)| JobProgress {
                name: job.name.clone(),
                ranks: s.comm.len() as u32,
                ranks_done: s.ranks_done,
                iterations: job.iterations,
                iterations_done: 0,
            })
            .collect();
        for r in &self.ranks {
            let iterations = self.jobs[r.job as usize].iterations;
            // `next_iteration` is the one to load next: the one running is not finished.
            let done = match r.activity {
                Activity::Done => iterations,
                _ => r.next_iteration.saturating_sub(r.in_iteration as u32),
            };
            out[r.job as usize].iterations_done += done as u64;
        }
        out
    }
}
