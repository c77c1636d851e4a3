//! Training driver of the profile-guided build (scripts/pgo.sh): runs every experiment of a file
//! of JSON documents, one per line, and fails on the first error.
//!
//! It lives in this package, not in dflab-core, so that cargo resolves dflab-core's dependencies
//! with exactly the features of the extension build (dflab-core's examples would pull in its
//! dev-dependencies, which change those features and with them every symbol name, and a profile
//! only applies to the symbols it was recorded for).

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: pgo_train FILE (one experiment as JSON per line)");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("error: {path}: {e}");
        std::process::exit(2);
    });
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let run = dflab_core::Experiment::from_json(line).and_then(|cfg| dflab_core::simulate(&cfg));
        if let Err(e) = run {
            eprintln!("error: {path} line {}: {e}", i + 1);
            std::process::exit(1);
        }
    }
}
