//! Fuzzing the engine's configuration parsing (issue 24): documents made by mutating valid
//! experiments (a value replaced by an extreme number, a wrong type, a string, an empty or
//! nested object, a key removed or invented) and arbitrary JSON go through `Experiment::from_json`
//! and `validate`. Every outcome must be a value or a `Config` error naming a field, never a
//! panic; documents that validate and describe a small network then run for a few hundred
//! nanoseconds, which must end in a result or a field-named error too (the engine refuses
//! what it cannot run before it allocates or simulates). Bounded: 1,500 parse cases and
//! 150 runs per CI run (a few seconds); `DFLAB_FUZZ_CASES=N` multiplies both by N/1500 for
//! a longer exploration.

use proptest::prelude::*;
use serde_json::{json, Map, Value};

use dflab_core::{Error, Experiment};

/// `default` cases, scaled by `DFLAB_FUZZ_CASES` (the parse count it stands for).
fn cases(default: u32) -> u32 {
    let scale = std::env::var("DFLAB_FUZZ_CASES").ok().and_then(|v| v.parse::<u32>().ok()).unwrap_or(1500);
    (default as u64 * scale as u64 / 1500).max(1) as u32
}

/// A valid base: a small network, short windows, every section present.
fn base() -> Value {
    json!({
        "seed": 3,
        "topology": {"p": 2, "a": 4, "h": 2, "g": 9, "arrangement": "absolute"},
        "network": {"flit_bytes": 64, "packet_flits": 1, "input_buffer_flits": 20, "output_buffer_flits": 20,
                    "host_bw_gbps": 4.0, "global_latency_ns": 100.0, "xbar_bw_gbps": 40.0},
        "routing": {"algorithm": "UGALn", "adaptive_threshold": 1.0},
        "traffic": {"pattern": "adv+1", "load": 0.3, "process": "bernoulli", "allow_self": false},
        "run": {"warmup_us": 0.2, "measure_us": 0.3, "window_us": 0.1, "watchdog_us": 50.0, "check": true}
    })
}

fn nasty_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!(null)),
        Just(json!(true)),
        Just(json!(0)),
        Just(json!(-1)),
        Just(json!(1e308)),
        Just(json!(-1e308)),
        Just(json!(1e-308)),
        Just(json!(u64::MAX)),
        Just(json!(i64::MIN)),
        Just(json!(4294967296u64)),
        Just(json!(65536)),
        Just(json!("")),
        Just(json!("adv+99")),
        Just(json!("hot:200%:0%")),
        Just(json!("ü∞\u{0}")),
        Just(json!([])),
        Just(json!({})),
        Just(json!([{"start_us": 0.1}])),
        any::<i64>().prop_map(|v| json!(v)),
        any::<f64>().prop_filter("JSON numbers are finite", |v| v.is_finite()).prop_map(|v| json!(v)),
        "[a-z+:%0-9.-]{0,12}".prop_map(Value::String),
    ]
}

/// Replace, remove or add one entry at the path `(section index, key index)` of `doc`.
fn mutate(mut doc: Value, section: usize, key: usize, op: u8, value: Value) -> Value {
    let root = doc.as_object_mut().unwrap();
    let names: Vec<String> = root.keys().cloned().collect();
    let name = &names[section % names.len()];
    match root.get_mut(name).unwrap() {
        Value::Object(m) => mutate_object(m, key, op, value),
        leaf => *leaf = value,
    }
    doc
}

fn mutate_object(m: &mut Map<String, Value>, key: usize, op: u8, value: Value) {
    let keys: Vec<String> = m.keys().cloned().collect();
    let k = keys[key % keys.len()].clone();
    match op % 4 {
        0 | 1 => {
            m.insert(k, value);
        }
        2 => {
            m.remove(&k);
        }
        _ => {
            m.insert(format!("{k}_x"), value);
        }
    }
}

fn check_outcome(doc: &Value, outcome: Result<(), Error>) -> Result<(), TestCaseError> {
    match outcome {
        Ok(()) => Ok(()),
        Err(Error::Config { field, message }) => {
            prop_assert!(!field.is_empty() && !message.is_empty(), "{doc}: empty error");
            Ok(())
        }
        // A run that the watchdog or a check stops is a simulation outcome, not a crash; none
        // is expected from these small valid networks, so report it.
        Err(e) => Err(TestCaseError::fail(format!("{doc}: {e}"))),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(1500), failure_persistence: None, ..ProptestConfig::default() })]
    #[test]
    fn mutated_documents_parse_or_name_a_field(section in 0usize..8, key in 0usize..12, op in 0u8..4,
                                               value in nasty_value(), twice in any::<bool>(),
                                               key2 in 0usize..12, value2 in nasty_value()) {
        let mut doc = mutate(base(), section, key, op, value);
        if twice {
            doc = mutate(doc, section + 1, key2, 0, value2);
        }
        let outcome = Experiment::from_json(&doc.to_string()).and_then(|e| e.validate());
        check_outcome(&doc, outcome)?;
    }

    #[test]
    fn arbitrary_text_is_refused_or_parsed(text in "[{}\\[\\]\":,a-z0-9. -]{0,40}") {
        match Experiment::from_json(&text) {
            Ok(_) => {}
            Err(Error::Config { field, .. }) => prop_assert!(!field.is_empty()),
            Err(e) => prop_assert!(false, "{text}: {e}"),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(150), failure_persistence: None, ..ProptestConfig::default() })]
    #[test]
    fn valid_mutants_run_or_are_refused(section in 0usize..8, key in 0usize..12, op in 0u8..4,
                                        value in nasty_value(), sst in any::<bool>()) {
        // Both port timings: SST's timers and crossbar clock see the same extreme values.
        let mut start = base();
        if sst {
            start["network"]["timing"] = json!("sst");
        }
        let doc = mutate(start, section, key, op, value);
        let Ok(cfg) = Experiment::from_json(&doc.to_string()) else { return Ok(()) };
        // Keep the runs small: the fuzzer is after crashes, not long simulations.
        let small = cfg.topology.p * cfg.topology.a * cfg.topology.g.unwrap_or(9) <= 512
            && cfg.run.warmup_us + cfg.run.measure_us <= 2.0
            && cfg.network.input_buffer_flits <= 4096
            && cfg.network.output_buffer_flits <= 4096;
        prop_assume!(small);
        let outcome = dflab_core::simulate(&cfg).map(|_| ());
        check_outcome(&doc, outcome)?;
    }
}
