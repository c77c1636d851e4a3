//! `run.steady_warmup` and `run.stop_when_saturated` (engine/steady.rs, stats/online.rs): a
//! run that ends its warm-up as soon as the network is steady measures what a long fixed
//! warm-up measures; a saturated run stops early and says so; an unsaturated one runs to its
//! end; both verdicts are the same in any number of partitions.

use dflab_core::{simulate, simulate_partitioned, Experiment, SimResult};

fn run(doc: &str) -> SimResult {
    simulate(&Experiment::from_json(doc).unwrap_or_else(|e| panic!("{doc}: {e}"))).unwrap()
}

const NET: &str = r#""topology": {"p": 2, "a": 4, "h": 2}"#;

#[test]
fn a_steady_warm_up_ends_early_and_measures_what_a_long_one_does() {
    let adaptive = run(&format!(
        r#"{{{NET}, "traffic": {{"pattern": "ur", "load": 0.4}},
            "run": {{"warmup_us": 40.0, "measure_us": 20.0, "steady_warmup": true}}}}"#
    ));
    let s = &adaptive.summary;
    let start = s.measure_start_us.expect("the measurement start is reported");
    // The first verdict needs 2 × 5 windows of 1 µs; an empty network at 0.4 is steady by
    // then or soon after, well before the 40 µs bound.
    assert!((10.0..20.0).contains(&start), "measurement started at {start} µs");
    assert!((s.sim_time_us - (start + 20.0)).abs() < 1e-6, "the run ends measure_us after it starts");
    assert!(s.stopped.is_none());
    let fixed = run(&format!(
        r#"{{{NET}, "traffic": {{"pattern": "ur", "load": 0.4}}, "run": {{"warmup_us": 40.0, "measure_us": 20.0}}}}"#
    ));
    let (a, f) = (s.latency_mean_ns, fixed.summary.latency_mean_ns);
    // Two 20 µs samples of the same steady state (different packets): 3 % covers their noise.
    assert!((a - f).abs() < 0.03 * f, "steady warm-up {a} ns against fixed {f} ns");
    assert!((s.accepted_load - fixed.summary.accepted_load).abs() < 0.01);
    assert!(fixed.summary.measure_start_us.is_none(), "reported only when the warm-up is adaptive");
    // The series ends with the run; its measured windows start at the measurement.
    let series = &adaptive.series;
    assert!(*series.window_end_us.last().unwrap() <= s.sim_time_us + 1e-9);
    let first = series.in_measurement.iter().position(|&m| m).unwrap();
    assert!(series.window_start_us[first] >= start);
}

#[test]
fn a_network_that_never_settles_keeps_the_whole_warm_up() {
    // MIN under ADV+1 at 0.6 is far past its 1/(a·p) = 1/8 saturation: never steady.
    let r = run(&format!(
        r#"{{{NET}, "traffic": {{"pattern": "adv+1", "load": 0.6}},
            "run": {{"warmup_us": 8.0, "measure_us": 4.0, "steady_warmup": true}}}}"#
    ));
    assert_eq!(r.summary.measure_start_us, Some(8.0));
    assert_eq!(r.summary.sim_time_us, 12.0);
}

#[test]
fn a_saturated_run_stops_early_and_an_unsaturated_one_does_not() {
    let doc = |pattern: &str, load: f64| {
        format!(
            r#"{{{NET}, "traffic": {{"pattern": "{pattern}", "load": {load}}},
                "run": {{"warmup_us": 2.0, "measure_us": 200.0, "stop_when_saturated": true}}}}"#
        )
    };
    let sat = run(&doc("adv+1", 0.6));
    let s = &sat.summary;
    assert_eq!(s.stopped.as_deref(), Some("saturated"));
    // Judged on 2 × 5 measured windows of 1 µs: stopped within a few µs of the warm-up.
    assert!(s.sim_time_us < 20.0, "stopped at {} µs", s.sim_time_us);
    assert!(s.accepted_load < 0.95 * s.offered_load, "{} of {}", s.accepted_load, s.offered_load);
    let ok = run(&doc("ur", 0.3));
    assert!(ok.summary.stopped.is_none());
    assert_eq!(ok.summary.sim_time_us, 202.0);
    // Without the option the summary carries neither field (results of other runs unchanged).
    let plain =
        serde_json::to_string(&run(&format!(r#"{{{NET}, "run": {{"warmup_us": 1.0, "measure_us": 2.0}}}}"#)).summary)
            .unwrap();
    assert!(!plain.contains("stopped") && !plain.contains("measure_start_us"));
}

#[test]
fn the_verdicts_do_not_depend_on_partitions() {
    for doc in [
        format!(
            r#"{{{NET}, "traffic": {{"pattern": "ur", "load": 0.4}},
                "run": {{"warmup_us": 30.0, "measure_us": 5.0, "steady_warmup": true}}}}"#
        ),
        format!(
            r#"{{{NET}, "traffic": {{"pattern": "adv+1", "load": 0.6}},
                "run": {{"warmup_us": 2.0, "measure_us": 50.0, "stop_when_saturated": true}}}}"#
        ),
    ] {
        let cfg = Experiment::from_json(&doc).unwrap();
        let one = serde_json::to_string(&simulate_partitioned(&cfg, 1).unwrap().summary).unwrap();
        for parts in [2, 3] {
            let other = serde_json::to_string(&simulate_partitioned(&cfg, parts).unwrap().summary).unwrap();
            assert_eq!(one, other, "{doc}: {parts} partitions");
        }
    }
}

#[test]
fn bad_settings_are_refused_by_field() {
    for (doc, field) in [
        (r#"{"run": {"steady_windows": 0}}"#, "run.steady_windows"),
        (r#"{"run": {"steady_tolerance": 0.0}}"#, "run.steady_tolerance"),
        (
            r#"{"run": {"steady_warmup": true}, "workload": {"jobs": [{"motif": "pingpong", "ranks": 2}]}}"#,
            "run.steady_warmup",
        ),
    ] {
        let err = Experiment::from_json(doc).and_then(|c| c.validate().map(|_| c)).unwrap_err().to_string();
        assert!(err.contains(field), "{doc}: {err}");
    }
}
