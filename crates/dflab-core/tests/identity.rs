//! Byte identity of the engine's results (the guard of every refactoring and speed-up).
//!
//! Each scenario of `identity/scenarios.jsonl` (every routing, every injection process, phases,
//! a bounded source queue, multi-flit packets, parallel global links, several arrangements and
//! patterns) runs to completion; its fingerprint is the SHA-256 of its whole result (summary,
//! per-window series, hop histogram, probes; not the execution's measurements) and must equal the line of
//! `identity/fingerprints.txt`. A change meant to keep results (a refactoring, a speed-up)
//! must leave every fingerprint as it is; a change of the model's semantics bumps
//! `ENGINE_SEMANTICS` and records the new fingerprints with
//!
//! ```text
//! DFLAB_BLESS=1 cargo test --release -p dflab-core --test identity
//! ```

use std::fmt::Write as _;

use dflab_core::{Experiment, SimResult};
use sha2::{Digest, Sha256};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/identity");

fn fingerprint(r: &SimResult) -> String {
    let s = &r.summary;
    let text = format!(
        "{}|{}|{:?}|{}",
        serde_json::to_string(&s).unwrap(),
        serde_json::to_string(&r.series).unwrap(),
        r.hops_histogram,
        serde_json::to_string(&r.probes).unwrap()
    );
    Sha256::digest(text.as_bytes()).iter().take(8).fold(String::new(), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

#[test]
fn results_are_byte_identical_to_the_recorded_fingerprints() {
    let scenarios = std::fs::read_to_string(format!("{DIR}/scenarios.jsonl")).unwrap();
    let docs: Vec<&str> = scenarios.lines().filter(|l| !l.trim().is_empty()).collect();
    let run = |doc: &str| {
        let cfg = Experiment::from_json(doc).unwrap_or_else(|e| panic!("{doc}: {e}"));
        let result = dflab_core::simulate(&cfg).unwrap_or_else(|e| panic!("{doc}: {e}"));
        format!("{}  {doc}\n", fingerprint(&result))
    };
    // The scenarios are independent: spread over the cores (thread t takes every n-th one) and
    // put back in file order.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut slots = vec![String::new(); docs.len()];
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (docs, run) = (&docs, &run);
                s.spawn(move || {
                    let mine = (t..docs.len()).step_by(threads);
                    mine.map(|i| (i, run(docs[i]))).collect::<Vec<_>>()
                })
            })
            .collect();
        for h in handles {
            for (i, line) in h.join().expect("a scenario failed") {
                slots[i] = line;
            }
        }
    });
    let lines = slots.concat();
    let path = format!("{DIR}/fingerprints.txt");
    let header = format!("# engine_semantics {}\n", dflab_core::ENGINE_SEMANTICS);
    let got = header + &lines;
    if std::env::var_os("DFLAB_BLESS").is_some() {
        std::fs::write(&path, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap();
    if got != want {
        let diff: Vec<String> = want
            .lines()
            .zip(got.lines())
            .filter(|(w, g)| w != g)
            .map(|(w, g)| format!("  recorded {w}\n  now      {g}"))
            .collect();
        panic!("results differ from the recorded fingerprints:\n{}", diff.join("\n"));
    }
}
