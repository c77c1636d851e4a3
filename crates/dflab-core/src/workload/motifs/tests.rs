//! Tests across the library: the generator against the paper's Table I and §3.4 peaks
//! (`workloads.md` §3.4, §3.6), pairing of every send with one receive, the registry's errors.

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use super::totals::{for_each_op, totals, Totals};
use super::*;
use crate::workload::mpi::op::Op;

const HEADER: u64 = 40;
const EAGER: u64 = 12_000;

fn params(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

fn motif(name: &str, ranks: u32, p: Value) -> Box<dyn Motif> {
    build(name, ranks, &params(p), "workload.jobs[0]").unwrap_or_else(|e| panic!("{name} at {ranks}: {e}"))
}

fn totals_of(name: &str, ranks: u32) -> Totals {
    totals(motif(name, ranks, json!({})).as_ref(), ranks, HEADER, EAGER)
}

/// Table I's "Total Msg (MB)" (1 MB = 10⁶ B) at 528 ranks (LULESH: 512), and the peak ingress
/// of §3.4 in bytes, for the reference parameters.
const TABLE_I: [(&str, u32, f64, u64); 9] = [
    ("ur", 528, 11_829.48, 3_072),
    ("lu", 528, 13_713.22, 2 * 15_000),
    ("fft3d", 528, 15_781.09, 51_680),
    ("halo3d", 528, 47_769.10, 2 * 576_000),
    ("lqcd", 528, 11_924.31, 4_599_936),
    ("stencil5d", 528, 9_833.95, 5 * 2_800_000),
    ("cosmoflow", 528, 2_373.84, 2 * 1_126_000),
    ("dl", 528, 9_714.44, 2 * 1_152_000),
    ("lulesh", 512, 17_900.12, 26 * 74_814),
];

#[test]
fn wire_totals_are_within_one_percent_of_table_i() {
    for (name, ranks, mb, _) in TABLE_I {
        let t = totals_of(name, ranks);
        let got = t.wire_bytes as f64 / 1e6;
        let err = (got - mb) / mb;
        // Shown with `--nocapture`: the table of the report.
        println!(
            "{name:10} {ranks:4} msgs {:9} payload {:10.2} MB wire {got:10.2} MB Table I {mb:9.2} ({:+.3} %) peak {}",
            t.messages,
            t.payload_bytes as f64 / 1e6,
            100.0 * err,
            t.peak_ingress_bytes
        );
        assert!(err.abs() < 0.01, "{name}: {got:.2} MB vs Table I {mb} MB ({:+.3} %)", 100.0 * err);
    }
}

#[test]
fn peak_ingress_matches_the_paper() {
    for (name, ranks, _, peak) in TABLE_I {
        assert_eq!(totals_of(name, ranks).peak_ingress_bytes, peak, "{name}");
    }
}

#[test]
fn message_counts_of_the_sanity_table() {
    // workloads.md §3.4: Halo3D 2,764 messages per iteration, Stencil5D 3,512, an allreduce
    // over 528 ranks 1,054 (527 tree edges, up and down), LU 1,010 per step and direction.
    assert_eq!(totals_of("halo3d", 528).messages, 2_764 * 30);
    assert_eq!(totals_of("stencil5d", 528).messages, 3_512);
    assert_eq!(totals_of("cosmoflow", 528).messages, 1_054 * 2);
    assert_eq!(totals_of("dl", 528).messages, 1_054 * 8);
    assert_eq!(totals_of("lu", 528).messages, 1_010 * 150 * 2 * 3);
}

/// Every send meets exactly one receive with the same (source, destination, tag), over all
/// ranks: the programs pair up (no message waits for a receive that never comes).
fn assert_paired(name: &str, m: &dyn Motif, ranks: u32) {
    let mut balance: HashMap<(u32, u32, u32), i64> = HashMap::new();
    for_each_op(m, ranks, |rank, op| match *op {
        Op::Isend { to, tag, .. } | Op::Send { to, tag, .. } => {
            assert!(to < ranks && to != rank, "{name}: rank {rank} sends to {to}");
            *balance.entry((rank, to, tag)).or_default() += 1;
        }
        Op::Irecv { from, tag, .. } | Op::Recv { from, tag, .. } => {
            assert!(from < ranks && from != rank, "{name}: rank {rank} receives from {from}");
            *balance.entry((from, rank, tag)).or_default() -= 1;
        }
        _ => {}
    });
    let unpaired: Vec<_> = balance.iter().filter(|(_, &n)| n != 0).take(5).collect();
    assert!(unpaired.is_empty(), "{name} at {ranks} ranks: unpaired (src, dst, tag) → sends − receives: {unpaired:?}");
}

/// Rank counts a motif documents as impossible: LQCD's lattice 132⁴ = (2²·3·11)⁴ cannot be
/// cut by 5, 7 or 23, nor by 3 five times (139 is a prime above 53), and a ping-pong needs a
/// pair.
const IMPOSSIBLE: [(&str, u32); 7] =
    [("lqcd", 5), ("lqcd", 7), ("lqcd", 138), ("lqcd", 139), ("lqcd", 140), ("lqcd", 243), ("pingpong", 1)];

#[test]
fn every_send_has_one_receive_at_528_and_small_sizes() {
    // 528: the pairwise runs; 138, 139, 140, 243, 256: the mixed run's sizes (Table II).
    for &name in names() {
        for ranks in [528, 16, 24, 5, 1, 2, 7, 138, 139, 140, 243, 256] {
            // UR's permutations differ every iteration: 300 of them at 528 ranks are enough.
            let p = if name == "ur" && ranks == 528 { json!({"iterations": 300}) } else { json!({}) };
            match build(name, ranks, &params(p), "j") {
                Ok(m) => assert_paired(name, m.as_ref(), ranks),
                Err(e) => assert!(IMPOSSIBLE.contains(&(name, ranks)), "{name} at {ranks}: {e}"),
            }
        }
    }
    for (name, ranks) in IMPOSSIBLE {
        assert!(build(name, ranks, &Map::new(), "j").is_err(), "{name} at {ranks}");
    }
    assert_paired("lulesh", motif("lulesh", 512, json!({})).as_ref(), 512);
}

#[test]
fn every_program_runs_to_completion_under_rendezvous_semantics() {
    let sizes: [(&str, u32); 4] = [("", 528), ("", 16), ("", 24), ("lulesh", 512)];
    for &name in names() {
        for (only, ranks) in sizes {
            if !only.is_empty() && only != name {
                continue;
            }
            // A few iterations suffice: every iteration runs the same program shape.
            let p = match name {
                "null" => json!({}),
                // A user's program: an allreduce and a ring exchange, every rank.
                "table" => json!({"ops": table_ring(ranks)}),
                _ => json!({"iterations": 2}),
            };
            let m = build(name, ranks, &params(p), "j").unwrap_or_else(|e| panic!("{name} at {ranks}: {e}"));
            let done = super::progress::run_to_completion(m.as_ref(), ranks);
            assert!(done.is_ok(), "{name} at {ranks} ranks is stuck: {}", done.unwrap_err());
        }
    }
}

#[test]
fn ur_is_deterministic_across_builds() {
    let ops = |m: &dyn Motif| {
        let mut out = Vec::new();
        for it in [0, 1, 7199] {
            for r in 0..528 {
                m.iteration(r, it, &mut out);
            }
        }
        out
    };
    let a = motif("ur", 528, json!({}));
    let b = motif("ur", 528, json!({}));
    assert_eq!(ops(a.as_ref()), ops(b.as_ref()));
}

/// A table program of `n` ranks: an allreduce, then each rank sends to the next.
fn table_ring(n: u32) -> Value {
    let rows: Vec<Value> = (0..n)
        .flat_map(|r| {
            [
                json!({"rank": r, "op": "allreduce", "bytes": 16}),
                json!({"rank": r, "op": "irecv", "peer": (r + n - 1) % n}),
                json!({"rank": r, "op": "send", "peer": (r + 1) % n, "bytes": 20000}),
                json!({"rank": r, "op": "waitall"}),
            ]
        })
        .collect();
    Value::Array(rows)
}

#[test]
fn registry_knows_every_name_and_schema() {
    assert!(registry().iter().map(|e| e.name).eq(names().iter().copied()));
    for &name in names() {
        let m = motif(name, 16, json!({}));
        assert_eq!(m.name(), name);
        let schema = params_schema(name).unwrap().to_value();
        let props = schema.get("properties").and_then(Value::as_object);
        if name != "null" {
            let props = props.unwrap_or_else(|| panic!("{name}: {schema}"));
            assert!(props.values().all(|p| p.get("description").is_some()), "{name}: {schema}");
        }
    }
}

fn error_of(name: &str, ranks: u32, p: Value) -> String {
    match build(name, ranks, &params(p), "workload.jobs[1]") {
        Ok(_) => panic!("{name} at {ranks} ranks should fail"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn errors_name_the_field_and_what_is_allowed() {
    let e = error_of("halo4d", 16, json!({}));
    assert!(e.starts_with("workload.jobs[1].motif: ") && e.contains("halo3d") && e.contains("stencil5d"), "{e}");
    let e = error_of("halo3d", 16, json!({"fields": 3}));
    assert!(e.starts_with("workload.jobs[1].params.fields: ") && e.contains("fields_per_cell"), "{e}");
    let e = error_of("lu", 16, json!({"iterations": "three"}));
    assert!(e.starts_with("workload.jobs[1].params.iterations: "), "{e}");
    let e = error_of("lqcd", 139, json!({}));
    assert!(e.starts_with("workload.jobs[1].ranks: ") && e.contains("allowed"), "{e}");
    let e = error_of("ur", 0, json!({}));
    assert!(e.starts_with("workload.jobs[1].ranks: "), "{e}");
    let e = error_of("pingpong", 1, json!({}));
    assert!(e.starts_with("workload.jobs[1].ranks: "), "{e}");
    let e = error_of("lu", 16, json!({"compute_ns": -1.0}));
    assert!(e.starts_with("workload.jobs[1].params.compute_ns: "), "{e}");
    assert!(params_schema("nope").is_err());
}

#[test]
fn null_does_nothing() {
    let t = totals_of("null", 16);
    assert_eq!(t, Totals::default());
}
