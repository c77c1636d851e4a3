//! Real-machine shapes through the engine (issue 25): nodes with several NICs and groups
//! without compute nodes. What the patterns and the placement draw is unit-tested beside
//! them (`traffic/pattern.rs`, `workload/mpi/placement.rs`); here the whole run.

mod common;

use common::small;
use dflab_core::config::workload::{JobConfig, Placement, WorkloadConfig};
use dflab_core::config::Arrangement;
use dflab_core::Experiment;
use serde_json::{json, Value};

/// dfly(4,4,2,9) with 2 NICs per node and 5 of the 9 groups computing: 80 compute NICs.
fn machine(routing: &str) -> Experiment {
    let mut e = small(4, 4, 2, 1, Arrangement::Absolute, 2.0, 6.0);
    e.topology.nics_per_node = 2;
    e.topology.compute_groups = Some(5);
    e.routing.algorithm = routing.into();
    e
}

/// The offered load is per compute NIC and only those generate: the accepted load, normalised
/// the same way, matches it below saturation (it would be 9/5 of it if the storage groups'
/// NICs sent too).
#[test]
fn synthetic_load_is_per_compute_nic() {
    for (routing, pattern) in [("MIN", "ur"), ("VALn", "adv+1"), ("UGALn", "perm")] {
        let mut e = machine(routing);
        e.traffic.pattern = pattern.into();
        e.traffic.load = 0.2;
        let r = dflab_core::simulate(&e).unwrap_or_else(|err| panic!("{routing} {pattern}: {err}"));
        let acc = r.summary.accepted_load;
        assert!((acc - 0.2).abs() < 0.015, "{routing} {pattern}: accepted {acc}");
    }
}

/// A job on every compute NIC, all-to-all under Valiant routing: the host ports of the
/// non-compute groups move no byte, while their global ports carry the jobs' transit traffic.
#[test]
fn groups_without_compute_nodes_only_carry_transit() {
    let mut e = machine("VALn");
    (e.network.flit_bytes, e.network.packet_flits) = (128, 4);
    let ops: Vec<Value> = (0..80).map(|r| json!({ "rank": r, "op": "alltoall", "bytes": 2000 })).collect();
    let job = JobConfig {
        motif: "table".into(),
        ranks: 80,
        name: None,
        wait2start_us: 0.0,
        params: json!({ "ops": ops }).as_object().unwrap().clone(),
    };
    e.workload = Some(WorkloadConfig { jobs: vec![job], placement: Placement::Random, ..Default::default() });
    e.run.measure_us = 1000.0;
    let r = dflab_core::simulate(&e).unwrap();
    let ports = r.ports.unwrap();
    let bytes = |class: &str, compute: bool| -> u64 {
        ports.iter().filter(|p| p.class == class && (p.group < 5) == compute).map(|p| p.bytes[0]).sum()
    };
    assert_eq!(bytes("host", false), 0);
    assert!(bytes("host", true) > 0);
    assert!(bytes("global", false) > 0, "Valiant paths cross the storage groups");
    let received: u64 = r.workload.unwrap().throughput_bytes[0].iter().sum();
    assert_eq!(bytes("host", true), received);
}

/// More ranks than compute NICs is refused, naming the field.
#[test]
fn jobs_fit_the_compute_nics() {
    let mut e = machine("MIN");
    let job = JobConfig { motif: "null".into(), ranks: 81, name: None, wait2start_us: 0.0, params: Default::default() };
    e.workload = Some(WorkloadConfig { jobs: vec![job], ..Default::default() });
    let err = e.validate().unwrap_err().to_string();
    assert!(err.starts_with("workload.jobs") && err.contains("at most 80"), "{err}");
}
