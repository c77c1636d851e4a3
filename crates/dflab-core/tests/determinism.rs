//! Same config and seed give identical results; different seeds differ (must-show 3).

mod common;
use common::{hpdc, run};
use dflab_core::SimResult;

/// The whole result (the execution's measurements are kept apart from it).
fn fingerprint(r: &SimResult) -> String {
    let s = &r.summary;
    format!(
        "{}|{}|{:?}",
        serde_json::to_string(&s).unwrap(),
        serde_json::to_string(&r.series).unwrap(),
        r.hops_histogram
    )
}

#[test]
fn same_seed_same_bytes_different_seed_differs() {
    for (alg, pat) in [("MIN", "ur"), ("VALn", "adv+1"), ("VALg", "perm")] {
        let mut e = hpdc(alg, pat, 0.4, 2.0, 4.0);
        e.run.check = false;
        let a = fingerprint(&run(&e));
        let b = fingerprint(&run(&e));
        assert_eq!(a, b, "{alg} {pat}: rerun differs");
        e.seed = 2;
        let c = fingerprint(&run(&e));
        assert_ne!(a, c, "{alg} {pat}: seed has no effect");
    }
}
