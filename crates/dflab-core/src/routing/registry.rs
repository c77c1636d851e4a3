//! The one place where algorithms are registered: one line per algorithm (its papers' name, the
//! other spellings users type, and how to build it from the experiment). Names are matched
//! case-insensitively. Everything else (the list of names, parsing, dispatch to the engine
//! compiled for the algorithm's type) follows from this table.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::{Map, Value};

use super::acor::{Acor, AcorParams};
use super::adaptive::AdaptiveParams;
use super::dgb::{dgb, DgbParams};
use super::edgb::{edgb, EdgbParams};
use super::imb::{Imb, ImbParams};
use super::minimal::{Minimal, MinimalParams};
use super::par::Par;
use super::pb::{Pb, PbParams};
use super::pb_acor::{PbAcor, PbAcorParams};
use super::q_adaptive::QAdaptive;
use super::q_routing::QRouting;
use super::q_table::{QAdaptiveParams, QParams, QRoutingParams};
use super::ugal::Ugal;
use super::ugal_global::{UgalGParams, UgalGlobal};
use super::ugal_global_path::{UgalGPathParams, UgalGlobalPath};
use super::ugal_l::{UgalL, UgalLParams};
use super::ugal_le::{UgalLe, UgalLeParams};
use super::val::{Val, ValParams};
use super::valiant::Valiant;
use super::{BuildCtx, Routing};
use crate::config::routing::param_keys;
use crate::config::schema::{inline_schema_for, properties};
use crate::config::{Experiment, NoParams};
use crate::error::{Error, Result};
use crate::topology::Topology;

/// Something to do with a routing whose type is known only at run time: the engine runs a
/// simulation compiled for it ([`crate::engine::simulate`]), tests walk packets through it.
pub trait Visit {
    type Output;
    fn visit<R: Routing>(self, routing: R, topo: Topology) -> Result<Self::Output>;
}

macro_rules! algorithms {
    ($( $name:literal $(| $alias:literal)* => $params:ty => $build:expr ),* $(,)?) => {
        /// The canonical names of the registered algorithms.
        pub const ALGORITHM_NAMES: &[&str] = &[$($name),*];

        /// Other accepted spellings, with the name they stand for.
        pub const ALGORITHM_ALIASES: &[(&str, &str)] = &[$( $( ($alias, $name), )* )*];

        /// Build algorithm `name` (canonical or alias, any case) with the parameters of `exp`
        /// for `topo`, and hand both to `visit`.
        pub(super) fn dispatch<V: Visit>(name: &str, topo: Topology, exp: &Experiment, visit: V) -> Result<V::Output> {
            let canonical = canonical_algorithm(name)?;
            $(
                if canonical == $name {
                    let params: $params = exp.routing.params_as(known_keys())?;
                    #[allow(clippy::redundant_closure_call)]
                    let routing = ($build)(&BuildCtx { topo: &topo, exp }, params)?;
                    return visit.visit(routing, topo);
                }
            )*
            unreachable!("canonical_algorithm returns a registered name")
        }

        /// Every algorithm: its name, aliases and parameter keys.
        pub fn algorithm_table() -> Vec<(&'static str, Vec<&'static str>, Vec<String>)> {
            vec![$( ($name, vec![$($alias),*], param_keys::<$params>()) ),*]
        }

        /// Every parameter key of every algorithm: its schema and the algorithms that have it.
        pub fn params_union() -> BTreeMap<String, (Value, Vec<&'static str>)> {
            let mut all: BTreeMap<String, (Value, Vec<&'static str>)> = BTreeMap::new();
            $(
                for (key, schema) in properties(&inline_schema_for::<$params>()) {
                    all.entry(key).or_insert_with(|| (schema, Vec::new())).1.push($name);
                }
            )*
            all
        }

        /// The effective parameters of `exp`'s algorithm: the given ones with the defaults.
        pub fn effective_params(exp: &Experiment) -> Result<Map<String, Value>> {
            let canonical = canonical_algorithm(&exp.routing.algorithm)?;
            $(
                if canonical == $name {
                    let params = crate::config::RoutingParams::canonical(exp.routing.params_as::<$params>(known_keys())?);
                    return match serde_json::to_value(params).expect("parameters serialise") {
                        Value::Object(m) => Ok(m),
                        _ => Ok(Map::new()),
                    };
                }
            )*
            unreachable!("canonical_algorithm returns a registered name")
        }

        /// Check the routing parameters of `exp`: its algorithm's, and each given parameter of
        /// another algorithm against that algorithm's definition (ignored, but never wrong).
        pub fn check_params(exp: &Experiment) -> Result<()> {
            effective_params(exp)?;
            let r = &exp.routing;
            $(
                {
                    let own = param_keys::<$params>();
                    if r.params.keys().any(|k| own.contains(k)) {
                        let mine = crate::config::RoutingConfig {
                            algorithm: $name.into(),
                            vcs: None,
                            params: r.params.iter().filter(|(k, _)| own.contains(k)).map(|(k, v)| (k.clone(), v.clone())).collect(),
                        };
                        mine.params_as::<$params>(known_keys())?;
                    }
                }
            )*
            Ok(())
        }
    };
}

// The one registration line per algorithm: names, parameter type, constructor.
algorithms! {
    "MIN" | "minimal" => MinimalParams => |_: &BuildCtx, p| Ok::<_, Error>(Minimal::with_params(p)),
    "VALg" => NoParams => |_: &BuildCtx, _| Ok::<_, Error>(Valiant::to_group()),
    "VALn" | "valiant" => NoParams => |_: &BuildCtx, _| Ok::<_, Error>(Valiant::to_router()),
    "UGALg" | "ugal-3vc" => AdaptiveParams => |_: &BuildCtx, p| Ok::<_, Error>(Ugal::to_group(p)),
    "UGALn" | "ugal-n" | "ugal-4vc" => AdaptiveParams => |_: &BuildCtx, p| Ok::<_, Error>(Ugal::to_router(p)),
    "UGAL-L" => UgalLParams => |cx: &BuildCtx, p| Ok::<_, Error>(UgalL::new(p).with_probes(cx.exp.run.decision_probes)),
    "UGAL-LE" => UgalLeParams => |cx: &BuildCtx, p| Ok::<_, Error>(UgalLe::new(p).with_probes(cx.exp.run.decision_probes)),
    "UGAL-G" => UgalGParams => |_: &BuildCtx, p| Ok::<_, Error>(UgalGlobal::new(p)),
    "UGAL-G-path" => UgalGPathParams => |_: &BuildCtx, p| Ok::<_, Error>(UgalGlobalPath::new(p)),
    "DGB" => DgbParams => |cx: &BuildCtx, p| dgb(cx.topo, cx.exp, p),
    "EDGB" => EdgbParams => |cx: &BuildCtx, p| edgb(cx.topo, cx.exp, p),
    "PAR" => AdaptiveParams => |_: &BuildCtx, p| Ok::<_, Error>(Par::new(p)),
    "IMB" | "increasingly-minimal-bias" => ImbParams =>
        |cx: &BuildCtx, p| Ok::<_, Error>(Imb::new(p, cx.exp.network.packet_flits)),
    "VAL" => ValParams => |cx: &BuildCtx, p| Ok::<_, Error>(Val::new(cx, p)),
    "PB" | "piggyback" => PbParams => |cx: &BuildCtx, p| Ok::<_, Error>(Pb::new(cx, p)),
    "ACOR" => AcorParams => |cx: &BuildCtx, p| Acor::new(cx, p),
    "PB-ACOR" | "pbacor" => PbAcorParams => |cx: &BuildCtx, p| PbAcor::new(cx, p),
    "Q-adaptive" | "qadaptive" => QAdaptiveParams =>
        |cx: &BuildCtx, p| Ok::<_, Error>(QAdaptive::new(cx.topo, QParams::adaptive(&p, &cx.exp.network))),
    "Q-routing" | "qrouting" => QRoutingParams =>
        |cx: &BuildCtx, p| Ok::<_, Error>(QRouting::new(cx.topo, QParams::routing(&p, &cx.exp.network))),
}

/// Every parameter key of every algorithm (those a configuration may give and the chosen
/// algorithm ignores).
pub fn known_keys() -> &'static [String] {
    static KEYS: OnceLock<Vec<String>> = OnceLock::new();
    KEYS.get_or_init(|| params_union().into_keys().collect())
}

/// The VCs (the larger class count) and the hop bound that algorithm `exp.routing.algorithm`
/// declares on `topo`.
pub fn declared_bounds(topo: Topology, exp: &Experiment) -> Result<(usize, u32)> {
    struct Bounds;
    impl Visit for Bounds {
        type Output = (usize, u32);
        fn visit<R: Routing>(self, r: R, _topo: Topology) -> Result<(usize, u32)> {
            Ok((r.vcs().max(), r.max_hops()))
        }
    }
    dispatch(&exp.routing.algorithm, topo, exp, Bounds)
}

/// The canonical name of algorithm `name` (case-insensitive, aliases accepted), or the error
/// naming the allowed values. Beware: the Q-adaptive reference code calls UGALg `ugal-g`; here
/// `UGAL-G` (any case) is the global-information oracle, and the reference's UGALg is `UGALg`
/// or its other reference name `ugal-3vc`.
pub fn canonical_algorithm(name: &str) -> Result<&'static str> {
    let key = name.trim();
    if let Some(&n) = ALGORITHM_NAMES.iter().find(|n| n.eq_ignore_ascii_case(key)) {
        return Ok(n);
    }
    if let Some(&(_, n)) = ALGORITHM_ALIASES.iter().find(|(a, _)| a.eq_ignore_ascii_case(key)) {
        return Ok(n);
    }
    Err(Error::config("routing.algorithm", format!("'{name}' is not allowed; allowed: {}", ALGORITHM_NAMES.join(", "))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registered_name_parses_back_case_insensitively() {
        for &name in ALGORITHM_NAMES {
            assert_eq!(canonical_algorithm(name).unwrap(), name);
            assert_eq!(canonical_algorithm(&name.to_uppercase()).unwrap(), name);
            assert_eq!(canonical_algorithm(&format!(" {} ", name.to_lowercase())).unwrap(), name);
        }
        for &(alias, name) in ALGORITHM_ALIASES {
            assert_eq!(canonical_algorithm(alias).unwrap(), name);
            assert!(ALGORITHM_NAMES.contains(&name));
        }
    }

    #[test]
    fn reference_aliases_and_the_ugal_g_pitfall() {
        // The reference code's names for UGALg/UGALn. `ugal-g` is the oracle here.
        assert_eq!(canonical_algorithm("ugal-3vc").unwrap(), "UGALg");
        assert_eq!(canonical_algorithm("ugal-4vc").unwrap(), "UGALn");
        assert_eq!(canonical_algorithm("ugal-n").unwrap(), "UGALn");
        assert_eq!(canonical_algorithm("UGAL-G").unwrap(), "UGAL-G");
        assert_eq!(canonical_algorithm("UGALg").unwrap(), "UGALg");
        let err = canonical_algorithm("ugal").unwrap_err().to_string();
        assert!(err.starts_with("routing.algorithm") && err.contains("UGAL-L"), "{err}");
    }

    /// On one link per group pair, the routings that read no congestion after their source router
    /// answer every later hop without a view, except PAR's second decision (`walk` checks each
    /// answer against `route`).
    #[test]
    fn later_hops_need_no_view() {
        use crate::routing::harness::Net;
        use crate::routing::valiant::ValiantHeader;
        use rand::SeedableRng;
        struct Quick<'a>(&'a str);
        impl Visit for Quick<'_> {
            type Output = u32;
            fn visit<R: Routing>(self, alg: R, topo: Topology) -> Result<u32> {
                let (name, net) = (self.0, Net::of(topo));
                let topo = &net.topo;
                let mut rng = crate::routing::Rng::seed_from_u64(3);
                let mut answered = 0;
                for (src, dst) in net.sample_pairs(300, 4) {
                    let mut pkt = net.packet_for::<R>(src, dst);
                    let (mut router, mut in_port) = (topo.router_of_node(src), topo.host_port_of_node(src));
                    let mut state = alg.router_state(topo, router);
                    loop {
                        let at_source = topo.is_host_port(in_port) && pkt.hops == 0;
                        // PAR's unsure phase outside the destination group: the second decision.
                        let phase = pkt.routing.get::<ValiantHeader>().phase;
                        let second =
                            name == "PAR" && phase == 3 && topo.group_of(router) != topo.group_of(pkt.dst_router);
                        let quick = alg.route_without_view(topo, router, in_port, &mut pkt.clone());
                        assert_eq!(quick.is_some(), name == "MIN" || !(at_source || second), "{name} at {router}");
                        answered += quick.is_some() as u32;
                        let mut scratch = crate::routing::harness::Scratch::new(topo.routers());
                        let hop =
                            alg.route(&mut net.ctx(router, in_port, &mut state, &mut rng, &mut scratch), &mut pkt);
                        if topo.is_host_port(hop.port) {
                            break;
                        }
                        (router, in_port) = topo.peer(router, hop.port).unwrap();
                        state = alg.router_state(topo, router);
                        pkt.hops += 1;
                    }
                }
                Ok(answered)
            }
        }
        for name in [
            "MIN",
            "VALn",
            "VALg",
            "UGALg",
            "UGALn",
            "UGAL-L",
            "UGAL-LE",
            "UGAL-G",
            "UGAL-G-path",
            "PAR",
            "VAL",
            "ACOR",
        ] {
            let mut exp = crate::config::Experiment::default();
            exp.routing.algorithm = name.into();
            let topo = Topology::new(&exp.topology).unwrap();
            let answered = dispatch(name, topo, &exp, Quick(name)).unwrap();
            assert!(answered >= 300, "{name}: {answered}");
        }
    }

    /// Every registered algorithm builds and names VCs and a hop bound (dispatch reaches each).
    #[test]
    fn every_algorithm_builds() {
        struct Facts;
        impl Visit for Facts {
            type Output = (usize, u32);
            fn visit<R: Routing>(self, r: R, _topo: Topology) -> Result<(usize, u32)> {
                Ok((r.vcs().max(), r.max_hops()))
            }
        }
        let exp = crate::config::Experiment::default();
        for &name in ALGORITHM_NAMES {
            let topo = Topology::new(&exp.topology).unwrap();
            let (vcs, hops) = super::super::with_algorithm(name, topo, &exp, Facts).unwrap();
            assert!((2..=8).contains(&vcs) && (3..=7).contains(&hops), "{name}: {vcs} VCs, {hops} hops");
        }
    }
}
