//! Transient experiments: phases change load and/or pattern at given times, and the per-window
//! time series shows the change (issue 3; Q-adaptive §5.6 load steps, ICS'24 Fig. 17).

mod common;
use common::run;
use dflab_core::config::{PhaseConfig, Process};
use dflab_core::{Experiment, SimResult};

fn small() -> Experiment {
    let mut e = Experiment::default();
    e.topology.p = 2;
    e.topology.a = 4;
    e.topology.h = 2;
    e.run.warmup_us = 5.0;
    e.run.measure_us = 35.0;
    e.run.window_us = 2.0;
    e.run.check = true;
    e
}

/// Mean of a series column over windows fully inside [from, to) µs.
fn mean(r: &SimResult, col: &[f64], from: f64, to: f64) -> f64 {
    let s = &r.series;
    let v: Vec<f64> = (0..col.len())
        .filter(|&i| s.window_start_us[i] >= from && s.window_end_us[i] <= to && !col[i].is_nan())
        .map(|i| col[i])
        .collect();
    v.iter().sum::<f64>() / v.len() as f64
}

#[test]
fn a_load_step_shows_in_the_offered_load_series() {
    for process in [Process::Bernoulli, Process::Periodic] {
        let mut e = small();
        e.traffic.process = process;
        e.traffic.load = 0.2;
        e.traffic.phases = vec![PhaseConfig { start_us: 20.0, load: Some(0.6), pattern: None }];
        let r = run(&e);
        let s = &r.series;
        let before = mean(&r, &s.offered_load, 4.0, 20.0);
        let after = mean(&r, &s.offered_load, 20.0, 40.0);
        // 72 nodes × ~60 packets per 2 µs window at 0.2: a few % of noise per window.
        assert!((before - 0.2).abs() < 0.02, "{process:?}: before {before}");
        assert!((after - 0.6).abs() < 0.03, "{process:?}: after {after}");
        let accepted_after = mean(&r, &s.accepted_load, 24.0, 40.0);
        assert!((accepted_after - 0.6).abs() < 0.05, "{process:?}: accepted {accepted_after}");
    }
}

#[test]
fn a_pattern_change_to_adversarial_chokes_minimal_routing() {
    let mut e = small();
    e.traffic.load = 0.5;
    e.traffic.phases = vec![PhaseConfig { start_us: 20.0, load: None, pattern: Some("adv+1".into()) }];
    let r = run(&e);
    let s = &r.series;
    let before = mean(&r, &s.accepted_load, 6.0, 20.0);
    let after = mean(&r, &s.accepted_load, 26.0, 40.0);
    // dfly(2,4,2,9): one link per group pair carries a group's 8 nodes: MIN accepts 1/8.
    assert!((before - 0.5).abs() < 0.04, "before {before}");
    assert!(after < 0.125 * 1.05 && after > 0.125 * 0.75, "after {after}");
}

#[test]
fn bad_phases_are_named() {
    let mut e = small();
    e.traffic.phases = vec![
        PhaseConfig { start_us: 10.0, load: Some(0.3), pattern: None },
        PhaseConfig { start_us: 8.0, load: Some(0.4), pattern: None },
    ];
    let err = e.validate().unwrap_err().to_string();
    assert!(err.starts_with("traffic.phases[1].start_us"), "{err}");
    e.traffic.phases = vec![PhaseConfig { start_us: 10.0, load: None, pattern: Some("nope".into()) }];
    let err = e.validate().unwrap_err().to_string();
    assert!(err.starts_with("traffic.phases[0].pattern") && err.contains("allowed"), "{err}");
    e.traffic.phases = vec![PhaseConfig { start_us: 99.0, load: Some(0.3), pattern: None }];
    assert!(e.validate().unwrap_err().to_string().starts_with("traffic.phases[0].start_us"));
}
