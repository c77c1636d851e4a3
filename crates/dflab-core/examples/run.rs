//! Run one experiment from a JSON document given as the first argument (or `{}` for the
//! defaults) and print the summary as JSON. Handy for profiling the engine without Python:
//! `cargo run --release -p dflab-core --example run -- '{"traffic": {"load": 0.5}}'`.

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
        Ok(r) => println!("{}", serde_json::to_string_pretty(&r.summary).unwrap()),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
