//! Run one experiment from a JSON document given as the first argument (or `{}` for the
//! defaults) and print the summary with the execution's measurements (one flat JSON object, as
//! `scripts/ab.sh` reads it across versions): the engine exactly as the extension builds it (see
//! `pgo_train.rs` for why this lives here), so that a profile-guided build of this example runs
//! the code `dflab bench` runs. For A/B timing of engine changes and for profiling:
//! `cargo run --release -p dflab-py --example run -- '{"traffic": {"load": 0.5}}'`.

fn main() {
    let doc = std::env::args().nth(1).unwrap_or_else(|| "{}".into());
    let cfg = match dflab_core::Experiment::from_json(&doc) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    match dflab_core::simulate(&cfg) {
        Ok(r) => {
            let mut out = serde_json::to_value(&r.summary).unwrap();
            if let (Some(out), serde_json::Value::Object(execution)) =
                (out.as_object_mut(), serde_json::to_value(&r.execution).unwrap())
            {
                out.extend(execution);
            }
            println!("{}", serde_json::to_string_pretty(&out).unwrap());
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
