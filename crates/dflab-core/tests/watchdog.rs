//! The watchdog reports a deadlock only when packets are stuck: packets whose delivery falls
//! after the end of the run are not (newcomer trial #2: low-load periodic runs on small
//! networks were reported as deadlocked when the last packet's delivery lay past the end).

use dflab_core::{simulate, Experiment};

#[test]
fn packets_delivered_after_the_end_are_not_a_deadlock() {
    for (topology, warmup, measure) in
        [(r#"{"p":2,"a":2,"h":1,"g":3}"#, 0.5, 2.0), (r#"{"p":4,"a":8,"h":4,"g":1}"#, 5.0, 20.0)]
    {
        let mut in_flight_at_end = 0;
        for seed in 1..=30 {
            let doc = format!(
                r#"{{"seed":{seed},"topology":{topology},"traffic":{{"process":"periodic","load":0.01}},
                    "run":{{"warmup_us":{warmup},"measure_us":{measure}}}}}"#
            );
            let cfg = Experiment::from_json(&doc).unwrap();
            let r = simulate(&cfg).unwrap_or_else(|e| panic!("seed {seed} {topology}: {e}"));
            in_flight_at_end += r.summary.packets_in_flight_end;
        }
        // The case the trial hit: some runs end with a packet on its way.
        assert!(in_flight_at_end > 0, "{topology}: no run ended with a packet in flight");
    }
}

#[test]
fn a_real_deadlock_is_still_reported_with_its_times() {
    // One VC for a routing that needs two: local-global-local paths close cycles of credits at
    // saturation.
    let doc = r#"{"routing":{"algorithm":"VALn","vcs":1},"topology":{"p":2,"a":4,"h":2,"g":9},
        "traffic":{"pattern":"adv+1","load":1.0},"run":{"warmup_us":0.0,"measure_us":200.0,"watchdog_us":5.0}}"#;
    let cfg = Experiment::from_json(doc).unwrap();
    let msg = simulate(&cfg).unwrap_err().to_string();
    assert!(msg.contains("deadlock") && msg.contains("no packet moved from t ="), "{msg}");
    assert!(msg.contains("run.watchdog_us = 5"), "{msg}");
}

/// Newcomer #17: a watchdog shorter than one hop used to fire on a moving network ("no packet
/// moved for 0.0 us"). The watchdog looks at window barriers, so a value below a window means
/// one window without movement, which a loaded network never has.
#[test]
fn a_watchdog_below_one_hop_does_not_fire_on_a_moving_network() {
    let mut e = Experiment::default();
    e.traffic.load = 0.5;
    e.run.warmup_us = 1.0;
    e.run.measure_us = 5.0;
    e.run.watchdog_us = 0.001;
    let r = simulate(&e).unwrap_or_else(|err| panic!("{err}"));
    assert!(r.summary.packets_delivered > 10_000);
}
