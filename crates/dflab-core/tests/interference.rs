//! The SC'22 study's headline behaviours at reduced size (`sc22-1056`'s network parameters on
//! dfly(2,4,2), 72 nodes, two jobs of 36 ranks): a high-injection job (Halo3D) slows a
//! co-running FFT3D far more under PAR than under Q-adaptive, and Stencil5D, whose own messages
//! are the largest, is nearly immune to it. The full-size numbers are in
//! docs/interference-results.md.

use dflab_core::Experiment;
use serde_json::{json, Value};

/// The sc22-1056 network parameters on dfly(2,4,2) with `routing` and `jobs`.
fn sc22_small(routing: &str, jobs: Value, seed: u64) -> Experiment {
    let cfg = json!({
        "seed": seed,
        "topology": {"p": 2, "a": 4, "h": 2, "arrangement": "absolute"},
        "network": {
            "flit_bytes": 128, "packet_flits": 4, "host_bw_gbps": 25.0, "local_bw_gbps": 25.0,
            "global_bw_gbps": 25.0, "xbar_bw_gbps": 100.0, "input_buffer_flits": 120,
            "output_buffer_flits": 120, "host_latency_ns": 10.0, "local_latency_ns": 30.0,
            "global_latency_ns": 300.0, "input_latency_ns": 10.0, "output_latency_ns": 10.0,
            "timing": "sst"
        },
        "routing": {"algorithm": routing},
        "run": {"warmup_us": 0.0, "measure_us": 100000.0},
        "workload": {"placement": "random-list", "record_iterations": false, "jobs": jobs},
    });
    Experiment::from_json(&cfg.to_string()).unwrap()
}

/// The first job's mean communication time per rank (us), every job having finished.
fn comm_of_first(e: &Experiment) -> f64 {
    let r = dflab_core::simulate(e).unwrap_or_else(|err| panic!("{err}"));
    let w = r.workload.unwrap();
    assert!(w.jobs.iter().all(|j| j.finished), "{:?}", w.jobs);
    w.jobs[0].comm_mean_us
}

/// Communication time of `target` with `background` over alone.
fn slowdown(routing: &str, target: Value, background: Value, seed: u64) -> f64 {
    let alone = comm_of_first(&sc22_small(routing, json!([target.clone()]), seed));
    let corun = comm_of_first(&sc22_small(routing, json!([target, background]), seed));
    corun / alone
}

fn halo3d() -> Value {
    json!({"motif": "halo3d", "ranks": 36, "wait2start_us": 1.0, "params": {"iterations": 4}})
}

#[test]
fn halo3d_slows_fft3d_far_more_under_par_than_under_q_adaptive() {
    // FFT3D on a 96^3 grid (its messages a few KB, as at full size), 2 iterations.
    let fft = json!({"motif": "fft3d", "ranks": 36, "wait2start_us": 1.0, "params": {"iterations": 2, "n": 96}});
    for seed in [1, 2] {
        let par = slowdown("PAR", fft.clone(), halo3d(), seed);
        let q = slowdown("Q-adaptive", fft.clone(), halo3d(), seed);
        // Measured (seeds 1-4): PAR 3.0-3.5x, Q-adaptive 2.0-2.5x; the variations (the
        // paper's measure, co-run over alone minus 1) differ by 1.50-2.2x.
        assert!(par > 2.5, "seed {seed}: PAR slows FFT3D only {par:.2}x");
        assert!(par - 1.0 > 1.4 * (q - 1.0), "seed {seed}: PAR {par:.2}x, Q-adaptive {q:.2}x");
    }
}

#[test]
fn stencil5d_is_nearly_immune_to_halo3d() {
    // The reference's 2.8 MB messages: the largest peak ingress of the study.
    let stencil = json!({"motif": "stencil5d", "ranks": 36, "wait2start_us": 1.0});
    for routing in ["PAR", "Q-adaptive"] {
        let s = slowdown(routing, stencil.clone(), halo3d(), 1);
        // Measured: +6.9 % (PAR), +5.2 % (Q-adaptive); the paper: <= 8 % under every background.
        assert!((s - 1.0).abs() < 0.08, "{routing}: Stencil5D changes by {:.1} %", 100.0 * (s - 1.0));
    }
}
