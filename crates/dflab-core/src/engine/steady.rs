//! The run's own steady-state and saturation verdicts, taken at barriers
//! (`run.steady_warmup`, `run.stop_when_saturated`; the rule is in `stats/online.rs`). At a
//! barrier after which a window of the series has completed, the last `2k` windows are judged:
//! during the warm-up, a steady network starts the measurement at the barrier (and the run then
//! ends `measure_us` later); during the measurement, a saturated one ends the run at the
//! barrier. Barriers are the same for every partition count, so the verdicts are too.

use super::sim::Simulation;
use crate::config::Experiment;
use crate::routing::Routing;
use crate::stats::online;
use crate::units::{us_to_ps, Time};

/// What to watch for, and how far the watch has come.
pub(crate) struct SteadyWatch {
    /// Still in the warm-up, looking for a steady network.
    warming: bool,
    stop_saturated: bool,
    k: usize,
    tolerance: f64,
    measure: Time,
    packet_bytes: u64,
    /// Windows of the series judged so far.
    judged: usize,
    /// The window the measurement started in (saturation is judged on measured windows only).
    first_measured: usize,
}

impl SteadyWatch {
    /// The watch `cfg` asks for, if any; `warm` is the configured end of the warm-up.
    pub(crate) fn of(cfg: &Experiment, warm: Time, window: Time) -> Option<SteadyWatch> {
        let r = &cfg.run;
        (r.steady_warmup || r.stop_when_saturated).then(|| SteadyWatch {
            warming: r.steady_warmup,
            stop_saturated: r.stop_when_saturated,
            k: r.steady_windows as usize,
            tolerance: r.steady_tolerance,
            measure: us_to_ps(r.measure_us),
            packet_bytes: cfg.network.flit_bytes as u64 * cfg.network.packet_flits as u64,
            judged: 0,
            first_measured: warm.div_ceil(window) as usize,
        })
    }
}

impl<R: Routing> Simulation<R> {
    /// The verdicts at the barrier at `at` (see the module's doc).
    pub(crate) fn watch_steady(&mut self, at: Time) {
        let Some(w) = &mut self.steady else { return };
        let stats = &mut self.core.stats;
        let done = (at / stats.window()) as usize;
        if done <= w.judged {
            return;
        }
        w.judged = done;
        if w.warming && at < self.core.t.warm {
            if stats.halves(done, w.k).is_some_and(|h| online::steady(h, w.tolerance)) {
                let end = at.saturating_add(w.measure).min(self.core.t.end);
                stats.begin_measurement(at, end);
                self.core.probes.begin_measurement(at, end);
                self.core.t.end = end;
                w.warming = false;
                w.first_measured = done + 1;
            }
            return;
        }
        w.warming = false;
        let judged = w.stop_saturated && done >= w.first_measured + 2 * w.k;
        if judged && stats.halves(done, w.k).is_some_and(|h| online::saturated(h, w.packet_bytes)) {
            stats.end_measurement(at);
            self.core.probes.end_measurement(at);
            self.core.t.end = at;
            self.stopped = Some("saturated");
        }
    }
}
