//! Named probes: counters that routings and workloads declare and write (ACOR's blocked
//! injection attempts, UGAL-LE's contended decisions, a workload's messages), reported with
//! the results under their names without touching the engine's fixed statistics.
//!
//! A probe counts what happens during the measurement window, as the summary does. Its kind
//! says how it is reported: one total, one total per router, or one total per window (a
//! series column).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::units::Time;

/// How a probe is kept and reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeKind {
    /// One number for the run.
    Total,
    /// One number per router.
    PerRouter,
    /// One number per window of the per-window series (all windows, warm-up included).
    Series,
    /// A value recorded with its time and router at each change ([`Probes::record`]): a
    /// state's history (ACOR's level per switch), warm-up included.
    Trace,
}

/// A probe as its owner declares it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProbeSpec {
    /// The name results carry it under (snake_case, unique among the run's probes).
    pub name: String,
    pub kind: ProbeKind,
    /// What it counts, for users (units included).
    pub help: String,
}

impl ProbeSpec {
    pub fn new(name: &str, kind: ProbeKind, help: &str) -> ProbeSpec {
        ProbeSpec { name: name.into(), kind, help: help.into() }
    }
}

/// The probes of one run and their counts.
pub struct Probes {
    specs: Vec<ProbeSpec>,
    /// Per probe: its counts (1 for a total, one per router, one per window).
    counts: Vec<Vec<u64>>,
    /// Per probe: its records (trace probes only).
    traces: Vec<Vec<TraceRecord>>,
    measure_start: Time,
    measure_end: Time,
    window: Time,
}

/// One record of a trace probe: when (ps), where, and the new value.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct TraceRecord {
    pub time_ps: Time,
    pub router: u32,
    pub value: u64,
}

/// Probe counts as results carry them, by probe name.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct ProbeResults {
    pub totals: BTreeMap<String, u64>,
    pub per_router: BTreeMap<String, Vec<u64>>,
    pub series: BTreeMap<String, Vec<u64>>,
    /// Trace probes: their records in time order (left out of the JSON when there are none).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub traces: BTreeMap<String, Vec<TraceRecord>>,
}

impl Probes {
    /// Probes `specs` for a run of `routers` routers whose measurement window is
    /// `[measure_start, measure_end)` and whose series has windows of `window` ps.
    pub fn new(specs: Vec<ProbeSpec>, routers: usize, measure_start: Time, measure_end: Time, window: Time) -> Probes {
        let windows = measure_end.div_ceil(window.max(1)) as usize;
        let counts = specs
            .iter()
            .map(|s| match s.kind {
                ProbeKind::Total => vec![0],
                ProbeKind::PerRouter => vec![0; routers],
                ProbeKind::Series => vec![0; windows],
                ProbeKind::Trace => Vec::new(),
            })
            .collect();
        let traces = vec![Vec::new(); specs.len()];
        Probes { specs, counts, traces, measure_start, measure_end, window: window.max(1) }
    }

    /// No probes (tests, tools).
    pub fn none() -> Probes {
        Probes::new(Vec::new(), 0, 0, 0, 1)
    }

    pub fn specs(&self) -> &[ProbeSpec] {
        &self.specs
    }

    /// Add `n` to probe `probe` for `router` at `now`.
    #[inline]
    pub fn add(&mut self, probe: usize, router: u32, now: Time, n: u64) {
        let spec = &self.specs[probe];
        let counts = &mut self.counts[probe];
        match spec.kind {
            ProbeKind::Series => {
                if let Some(c) = counts.get_mut((now / self.window) as usize) {
                    *c += n;
                }
            }
            ProbeKind::Trace => self.record(probe, router, now, n),
            _ if now < self.measure_start || now >= self.measure_end => {}
            ProbeKind::Total => counts[0] += n,
            ProbeKind::PerRouter => counts[router as usize] += n,
        }
    }

    /// The measurement starts at `at` and ends at `end` at the latest (`run.steady_warmup`).
    pub fn begin_measurement(&mut self, at: Time, end: Time) {
        self.measure_start = at;
        self.measure_end = self.measure_end.min(end);
    }

    /// The measurement ends at `at` (`run.stop_when_saturated`).
    pub fn end_measurement(&mut self, at: Time) {
        self.measure_end = self.measure_end.min(at);
    }

    /// Record `value` for `router` at `now` in trace probe `probe` (up to the run's end).
    #[inline]
    pub fn record(&mut self, probe: usize, router: u32, now: Time, value: u64) {
        debug_assert_eq!(self.specs[probe].kind, ProbeKind::Trace);
        if now < self.measure_end {
            self.traces[probe].push(TraceRecord { time_ps: now, router, value });
        }
    }

    pub fn results(&self) -> ProbeResults {
        let mut out = ProbeResults::default();
        for ((spec, counts), trace) in self.specs.iter().zip(&self.counts).zip(&self.traces) {
            if spec.kind == ProbeKind::Trace {
                // In time order (then router): partitions record their routers' changes in the
                // order they run them; a router's own changes keep their order (stable sort).
                let mut trace = trace.clone();
                trace.sort_by_key(|r| (r.time_ps, r.router));
                out.traces.insert(spec.name.clone(), trace);
            }
            let name = spec.name.clone();
            match spec.kind {
                ProbeKind::Total => {
                    out.totals.insert(name, counts[0]);
                }
                ProbeKind::PerRouter => {
                    out.per_router.insert(name, counts.clone());
                }
                ProbeKind::Series => {
                    // Up to the run's end (which a stopped run moved earlier).
                    let windows = self.measure_end.div_ceil(self.window) as usize;
                    out.series.insert(name, counts[..windows.min(counts.len())].to_vec());
                }
                ProbeKind::Trace => {}
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_count_in_the_measurement_window_by_kind() {
        let specs = vec![
            ProbeSpec::new("a", ProbeKind::Total, ""),
            ProbeSpec::new("b", ProbeKind::PerRouter, ""),
            ProbeSpec::new("c", ProbeKind::Series, ""),
        ];
        let mut p = Probes::new(specs, 3, 100, 300, 100);
        for (t, r) in [(50, 0), (100, 1), (150, 1), (299, 2), (300, 2)] {
            for probe in 0..3 {
                p.add(probe, r, t, 1);
            }
        }
        let r = p.results();
        assert_eq!(r.totals["a"], 3, "warm-up (t < 100) and the end (t >= 300) are not counted");
        assert_eq!(r.per_router["b"], vec![0, 2, 1]);
        assert_eq!(r.series["c"], vec![1, 2, 1], "every window, warm-up included; none past the run");
    }

    #[test]
    fn traces_keep_every_change_up_to_the_end() {
        let mut p = Probes::new(vec![ProbeSpec::new("level", ProbeKind::Trace, "")], 3, 100, 300, 100);
        for (t, r, v) in [(50, 0, 1), (120, 2, 2), (299, 0, 0), (300, 1, 5)] {
            p.record(0, r, t, v);
        }
        let got: Vec<(Time, u32, u64)> =
            p.results().traces["level"].iter().map(|t| (t.time_ps, t.router, t.value)).collect();
        assert_eq!(got, vec![(50, 0, 1), (120, 2, 2), (299, 0, 0)], "warm-up kept, nothing at or past the end");
    }
}
