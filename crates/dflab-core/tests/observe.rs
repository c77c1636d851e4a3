//! The run's observer (progress and interrupts, newcomer #1): it is called while the run goes,
//! with simulated time moving forward, it changes no result, and returning false stops the run
//! at once with `Error::Interrupted`.

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::hpdc;
use dflab_core::engine::observe::{Observer, Progress};
use dflab_core::{simulate, simulate_observed, Error};

#[test]
fn progress_moves_forward_and_changes_nothing() {
    let e = hpdc("MIN", "ur", 0.5, 2.0, 6.0);
    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let log = seen.clone();
    let observer = Observer::new(
        Duration::ZERO,
        Box::new(move |p| {
            log.lock().unwrap().push(p.clone());
            true
        }),
    );
    let watched = simulate_observed(&e, 1, Some(observer)).unwrap();
    let plain = simulate(&e).unwrap();
    assert_eq!(serde_json::to_string(&watched.summary).unwrap(), serde_json::to_string(&plain.summary).unwrap());
    let seen = seen.lock().unwrap();
    assert!(seen.len() >= 10, "{} calls", seen.len());
    assert!(seen.windows(2).all(|w| w[0].now_us < w[1].now_us && w[0].events <= w[1].events));
    assert!(seen.iter().all(|p| p.end_us == 8.0 && p.now_us <= 8.0));
}

#[test]
fn an_observer_that_says_stop_ends_the_run_at_once() {
    // 2 ms of simulated time would take minutes; the stop comes after about 0.2 s.
    let e = hpdc("MIN", "ur", 0.5, 1000.0, 1000.0);
    let started = Instant::now();
    let observer = Observer::new(Duration::from_millis(100), Box::new(|p| p.wall_s < 0.2));
    let err = simulate_observed(&e, 1, Some(observer)).unwrap_err();
    let took = started.elapsed();
    assert!(matches!(err, Error::Interrupted(_)), "{err}");
    assert!(err.to_string().starts_with("interrupted: stopped at t = "), "{err}");
    assert!(took < Duration::from_secs(5), "took {took:?}");
}
