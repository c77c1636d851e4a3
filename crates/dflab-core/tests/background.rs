//! Synthetic background traffic beside application jobs (`workload.background`): delivered at
//! its load on the idle nodes, slowing a co-running job, deterministic, ending with the jobs,
//! and absent unless asked for.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::small;
use dflab_core::config::workload::{Background, JobConfig, Placement, WorkloadConfig};
use dflab_core::config::{Arrangement, PhaseConfig, Process};
use dflab_core::engine::observe::{JobProgress, Observer};
use dflab_core::workload::background::BackgroundReport;
use dflab_core::{Experiment, SimResult};
use serde_json::json;

/// dfly(2, 4, 2): 72 nodes, SC'22 packets (4 flits of 128 B), MIN; a 36-rank all-to-all of
/// 4 KiB blocks with 20 us of computation before each of its 5 iterations (about 625 us
/// alone), on randomly placed nodes: the 36 idle nodes sit among its nodes.
fn jobs(background: Background, load: f64) -> Experiment {
    let mut e = small(2, 4, 2, 1, Arrangement::Absolute, 0.0, 2000.0);
    e.routing.algorithm = "MIN".into();
    (e.network.flit_bytes, e.network.packet_flits) = (128, 4);
    e.traffic.load = load;
    let job = JobConfig {
        motif: "alltoall".into(),
        ranks: 36,
        name: None,
        wait2start_us: 0.0,
        params: json!({ "iterations": 5, "bytes": 4096, "compute_us": 20.0 }).as_object().unwrap().clone(),
    };
    e.workload =
        Some(WorkloadConfig { jobs: vec![job], placement: Placement::Random, background, ..Default::default() });
    e
}

fn run(e: &Experiment) -> SimResult {
    dflab_core::simulate(e).unwrap_or_else(|err| panic!("{err}"))
}

fn bg(r: &SimResult) -> &BackgroundReport {
    r.background.as_ref().expect("a background report")
}

fn exec_us(r: &SimResult) -> f64 {
    let job = &r.workload.as_ref().unwrap().jobs[0];
    assert!(job.finished);
    job.exec_us
}

/// The whole result but the wall-clock measurements.
fn bytes(r: &SimResult) -> String {
    let mut v = serde_json::to_value(r).unwrap();
    v.as_object_mut().unwrap().remove("execution");
    v.to_string()
}

#[test]
fn background_on_idle_nodes_is_delivered_at_its_load() {
    let r = run(&jobs(Background::IdleNodes, 0.4));
    let b = bg(&r);
    eprintln!("{b:?}");
    assert_eq!((b.placement, b.nodes, b.pattern.as_str()), ("idle-nodes", 36, "ur"));
    // About 75,000 Bernoulli packets over the run: the generated count is within 3 % of the
    // load (its standard deviation is 0.3 %); the accepted load falls short of the offered
    // only by the packets still in flight when the job ends (a few per node, under 1 %).
    assert!((b.offered_load - 0.4).abs() < 0.4 * 0.03, "offered {}", b.offered_load);
    assert!(b.accepted_load <= b.offered_load);
    assert!((b.offered_load - b.accepted_load) < 0.02 * b.offered_load, "accepted {}", b.accepted_load);
    // Every background packet is delivered or still in the network when the run ends.
    let s = &r.summary;
    let left = s.packets_in_flight_end + s.source_queue_end;
    assert!(b.packets_generated >= b.packets_delivered + left, "{b:?} {left}");
    assert!(b.latency.p50_ns > 0.0 && b.latency.p50_ns <= b.latency.p99_ns);
    // The run ends with the job (about 670 us), long before the stop time (2 ms), with
    // background still flowing.
    assert!(s.sim_time_us < 1000.0 && (s.sim_time_us - exec_us(&r)).abs() < 1.0, "{}", s.sim_time_us);
}

#[test]
fn background_slows_a_co_running_job() {
    let alone = exec_us(&run(&jobs(Background::None, 0.5)));
    let idle = exec_us(&run(&jobs(Background::IdleNodes, 0.9)));
    let all = exec_us(&run(&jobs(Background::AllNodes, 0.6)));
    eprintln!("alone {alone:.2} us, idle-nodes 0.9 {idle:.2} us, all-nodes 0.6 {all:.2} us");
    assert!(idle > alone * 1.01, "idle-nodes background: {idle} vs {alone}");
    assert!(all > alone * 1.01, "all-nodes background: {all} vs {alone}");
}

#[test]
fn every_injection_process_runs_as_background_on_its_nodes_only() {
    // Lock-step rounds, periodic events and Bernoulli slots: each generates on the 36 idle
    // nodes alone, at its load, with a phase changing the load half way.
    for process in [Process::Lockstep, Process::Periodic, Process::Bernoulli] {
        let mut e = jobs(Background::IdleNodes, 0.2);
        e.traffic.process = process;
        e.traffic.phases = vec![PhaseConfig { start_us: 300.0, load: Some(0.6), pattern: None }];
        let r = run(&e);
        let b = bg(&r);
        let end = r.summary.sim_time_us;
        let want = (0.2 * 300.0 + 0.6 * (end - 300.0)) / end;
        assert!((b.offered_load - want).abs() < 0.03 * want, "{process:?}: {} vs {want}", b.offered_load);
        assert!(b.offered_load - b.accepted_load < 0.02 * b.offered_load, "{process:?}");
    }
}

#[test]
fn background_runs_repeat_exactly() {
    for mode in [Background::IdleNodes, Background::AllNodes] {
        let e = jobs(mode, 0.5);
        assert_eq!(bytes(&run(&e)), bytes(&run(&e)), "{mode:?}");
    }
}

#[test]
fn without_background_nothing_changes() {
    // `background = "none"` is the default, is left out of the configuration's serialised
    // form (and so of the result store's key), and gives the very same run; the engine's
    // other results are guarded by the identity fingerprints (tests/identity.rs).
    let plain = jobs(Background::None, 0.5);
    let doc = serde_json::to_value(&plain).unwrap();
    assert!(doc["workload"].get("background").is_none());
    let parsed = Experiment::from_json(&doc.to_string()).unwrap();
    assert_eq!(parsed, plain);
    let r = run(&plain);
    assert!(r.background.is_none());
    assert!(!serde_json::to_string(&r).unwrap().contains("\"background\""));
}

#[test]
fn background_without_idle_nodes_is_a_field_named_error() {
    let mut e = jobs(Background::IdleNodes, 0.5);
    e.workload.as_mut().unwrap().jobs[0].ranks = 71;
    let err = dflab_core::simulate(&e).unwrap_err().to_string();
    assert!(err.contains("workload.background") && err.contains("1 of the network's 72 nodes idle"), "{err}");
    let doc = json!({"topology": {"p": 2, "a": 4, "h": 2}, "workload": {"background": "idle-node",
        "jobs": [{"motif": "null", "ranks": 4}]}});
    let err = Experiment::from_json(&doc.to_string()).unwrap_err().to_string();
    assert!(err.contains("background"), "{err}");
}

#[test]
fn the_observer_sees_each_jobs_progress() {
    let e = jobs(Background::IdleNodes, 0.3);
    let seen: Arc<Mutex<Vec<Vec<JobProgress>>>> = Arc::default();
    let log = seen.clone();
    let observer = Observer::new(
        Duration::ZERO,
        Box::new(move |p| {
            log.lock().unwrap().push(p.jobs.clone());
            true
        }),
    );
    dflab_core::simulate_observed(&e, 1, Some(observer)).unwrap();
    let seen = seen.lock().unwrap();
    assert!(seen.len() > 10);
    let first = &seen[0][0];
    assert_eq!((first.name.as_str(), first.ranks, first.iterations), ("alltoall", 36, 5));
    let done: Vec<u64> = seen.iter().map(|jobs| jobs[0].iterations_done).collect();
    assert!(done.windows(2).all(|w| w[0] <= w[1]), "never backwards");
    assert!(done[0] < 36 && *done.last().unwrap() >= 4 * 36, "{done:?}");
}
