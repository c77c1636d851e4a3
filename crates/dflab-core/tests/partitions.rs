//! Logical partitions change nothing (see `engine/partition.rs`): every scenario of the
//! identity set gives the same bytes in 1, 2, 3 and 4 partitions (at most one per group), except
//! the oracle routing's, which is refused with an error that says why.

use dflab_core::{simulate_partitioned, Experiment, SimResult};

const SCENARIOS: &str = include_str!("identity/scenarios.jsonl");

/// The whole result but the wall-clock measurements.
fn bytes(r: &SimResult) -> String {
    let s = &r.summary;
    format!(
        "{}|{}|{:?}|{}",
        serde_json::to_string(&s).unwrap(),
        serde_json::to_string(&r.series).unwrap(),
        r.hops_histogram,
        serde_json::to_string(&r.probes).unwrap()
    )
}

fn check(doc: &str) -> usize {
    let cfg = Experiment::from_json(doc).unwrap_or_else(|e| panic!("{doc}: {e}"));
    let one = bytes(&simulate_partitioned(&cfg, 1).unwrap_or_else(|e| panic!("{doc}: {e}")));
    let groups = cfg.topology.g.unwrap_or(usize::MAX);
    let mut compared = 0;
    for count in [2, 3, 4].into_iter().filter(|&c| c <= groups) {
        match simulate_partitioned(&cfg, count) {
            Ok(r) => {
                assert!(bytes(&r) == one, "{doc}: {count} partitions differ from one");
                compared += 1;
            }
            Err(e) => {
                let msg = e.to_string();
                assert!(msg.contains("partitions") && msg.contains("oracle"), "{doc}: {msg}");
            }
        }
    }
    compared
}

#[test]
fn one_two_three_and_four_partitions_give_the_same_bytes() {
    // Four simulations per scenario: the scenarios are spread over the machine's cores (each
    // thread takes every n-th line), since this one test would otherwise hold one core for minutes.
    let docs: Vec<&str> = SCENARIOS.lines().filter(|l| !l.trim().is_empty()).collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let compared: usize = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let docs = &docs;
                s.spawn(move || docs.iter().skip(t).step_by(threads).map(|d| check(d)).sum::<usize>())
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a scenario failed")).sum()
    });
    assert!(compared >= 30, "only {compared} comparisons ran");
}

/// More traffic crossing between groups than the identity set has: every packet goes to
/// another group, with control messages upstream (Q-adaptive) and multi-flit packets.
#[test]
fn partitions_agree_under_heavy_cross_group_traffic() {
    for doc in [
        r#"{"routing":{"algorithm":"Q-adaptive"},"topology":{"p":2,"a":4,"h":2,"g":9},
            "traffic":{"pattern":"adv+1","load":0.9},"run":{"warmup_us":2.0,"measure_us":4.0}}"#,
        r#"{"routing":{"algorithm":"VALg"},"network":{"packet_flits":3,"global_latency_ns":30.0},
            "topology":{"p":2,"a":4,"h":2,"g":9},"traffic":{"pattern":"ur","load":0.8,"process":"periodic",
            "phases":[{"start_us":2.5,"pattern":"adv+2","load":0.6}]},"run":{"warmup_us":2.0,"measure_us":4.0}}"#,
        // SST timing: credit arms cross global links as events of their own.
        r#"{"routing":{"algorithm":"Q-adaptive"},"network":{"timing":"sst"},"topology":{"p":2,"a":4,"h":2,"g":9},
            "traffic":{"pattern":"adv+1","load":0.9,"process":"lockstep"},"run":{"warmup_us":2.0,"measure_us":4.0}}"#,
        r#"{"routing":{"algorithm":"UGALn"},"network":{"timing":"sst","packet_flits":3},
            "topology":{"p":2,"a":4,"h":2,"g":9},"traffic":{"pattern":"ur","load":0.8},
            "run":{"warmup_us":2.0,"measure_us":4.0}}"#,
        // BookSim timing: router passes every cycle, credits with the credit delay across
        // global links, random injection VCs, the ICS'24 UGAL-L in saturation.
        r#"{"routing":{"algorithm":"UGAL-L","vcs":4},"topology":{"p":2,"a":4,"h":2,"g":9},
            "network":{"timing":"booksim","flit_bytes":64,"host_bw_gbps":64,"local_bw_gbps":64,
            "global_bw_gbps":64,"xbar_bw_gbps":160,"input_buffer_flits":32,"output_buffer_flits":128,
            "host_latency_ns":1,"local_latency_ns":10,"global_latency_ns":15,"input_latency_ns":0,
            "output_latency_ns":0},"traffic":{"pattern":"adv+1","load":0.5},"run":{"warmup_us":2.0,"measure_us":3.0}}"#,
        r#"{"routing":{"algorithm":"MIN","vc_layout":"booksim"},"topology":{"p":2,"a":4,"h":2,"g":9},
            "network":{"timing":"booksim","flit_bytes":64,"host_bw_gbps":64,"local_bw_gbps":64,
            "global_bw_gbps":64,"xbar_bw_gbps":100,"input_buffer_flits":256,"output_buffer_flits":1024,
            "host_latency_ns":1,"local_latency_ns":10,"global_latency_ns":100,"input_latency_ns":0,
            "output_latency_ns":0,"router_pipeline":"single-cycle"},"traffic":{"pattern":"ur","load":0.9},
            "run":{"warmup_us":2.0,"measure_us":3.0}}"#,
    ] {
        assert!(check(doc) >= 3);
    }
}

#[test]
fn partition_counts_out_of_range_are_refused_with_the_range() {
    let cfg =
        Experiment::from_json(r#"{"topology":{"p":2,"a":4,"h":2,"g":9},"run":{"warmup_us":0.1,"measure_us":0.1}}"#)
            .unwrap();
    for count in [0, 10] {
        let msg = simulate_partitioned(&cfg, count).unwrap_err().to_string();
        assert!(msg.contains("partitions") && msg.contains("allowed: 1 to 9"), "{msg}");
    }
}
