//! How users write a traffic pattern: the short form (`"router-mix:adv+1:25"`) or a table
//! (`{kind = "router-mix", base = "adv+1", percent = 25}`). A table is turned into the short
//! form here and every form is parsed in one place ([`Pattern::parse`]); the canonical form of a
//! pattern ([`Pattern::canonical`]) is the short form with every default made explicit, so
//! equal patterns written differently are one experiment (one result store key).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::pattern::{MixBase, MixLevel, Pattern};
use crate::config::schema::fmt_num;
use crate::error::{Error, Result};
use crate::topology::Topology;

/// A pattern family: its kind, other names, parameters (in the order of the short form) and
/// the short forms it accepts. The table the schema exports and the docs list.
pub struct PatternKind {
    pub kind: &'static str,
    pub aliases: &'static [&'static str],
    pub params: &'static [(&'static str, &'static str)],
    pub forms: &'static [&'static str],
    pub help: &'static str,
}

pub const PATTERNS: &[PatternKind] = &[
    PatternKind {
        kind: "ur",
        aliases: &["uniform"],
        params: &[],
        forms: &["ur"],
        help: "uniform random over the other nodes (`traffic.allow_self` includes the source)",
    },
    PatternKind {
        kind: "adv",
        aliases: &[],
        params: &[("shift", "groups ahead: an integer 1 to g-1, or \"h\"")],
        forms: &["adv+<i>", "adv+h"],
        help: "ADV+i: a node of the group i ahead, drawn uniformly",
    },
    PatternKind {
        kind: "advc",
        aliases: &[],
        params: &[],
        forms: &["advc"],
        help: "ADVc: the groups behind the source group's last router (consecutive adversarial)",
    },
    PatternKind {
        kind: "advl",
        aliases: &[],
        params: &[],
        forms: &["advl"],
        help: "ADVl: a node of the next router of the same group",
    },
    PatternKind {
        kind: "hot",
        aliases: &[],
        params: &[("traffic", "percent of the packets (default 25)"), ("nodes", "percent of the nodes (default 12.5)")],
        forms: &["hot", "hot:<traffic%>:<nodes%>"],
        help: "hot region: a share of the traffic goes to the first share of the nodes",
    },
    PatternKind {
        kind: "perm",
        aliases: &["permutation"],
        params: &[],
        forms: &["perm"],
        help: "a random node permutation drawn once from the seed",
    },
    PatternKind {
        kind: "router-mix",
        aliases: &[],
        params: &[("base", "adv+<i>, adv+h or perm"), ("percent", "percent of the routers taking part")],
        forms: &["router-mix:<base>:<percent>"],
        help: "ICS'24 mix: the nodes of a share of the routers follow <base>, the others send uniformly",
    },
    PatternKind {
        kind: "node-mix",
        aliases: &[],
        params: &[("base", "adv+<i>, adv+h or perm"), ("percent", "percent of the nodes taking part")],
        forms: &["node-mix:<base>:<percent>"],
        help: "ICS'24 mix: a share of the nodes follow <base>, the others send uniformly",
    },
    PatternKind {
        kind: "stencil",
        aliases: &[],
        params: &[("grid", "<X>x<Y>x<Z> with X*Y*Z = nodes (default p x a x g)")],
        forms: &["stencil", "stencil:<X>x<Y>x<Z>"],
        help: "3D stencil: rounds of one packet to each of the 6 periodic neighbours",
    },
    PatternKind {
        kind: "m2m",
        aliases: &["many-to-many"],
        params: &[("grid", "<X>x<Y>x<Z> with X*Y*Z = nodes (default p x a x g)")],
        forms: &["m2m", "m2m:<X>x<Y>x<Z>"],
        help: "many-to-many: rounds over the other nodes of the node's z line",
    },
    PatternKind {
        kind: "rn",
        aliases: &["random-neighbors"],
        params: &[("min", "smallest round (default 6)"), ("max", "largest round (default 20)")],
        forms: &["rn", "rn:<min>:<max>"],
        help: "random neighbours: rounds of min..max packets to fresh random targets",
    },
    PatternKind {
        kind: "rn-fixed",
        aliases: &["random-neighbors-fixed"],
        params: &[("min", "fewest targets (default 6)"), ("max", "most targets (default 20)")],
        forms: &["rn-fixed", "rn-fixed:<min>:<max>"],
        help: "random neighbours: one set of min..max targets per node for the whole run",
    },
];

/// `traffic.pattern` (and a phase's `pattern`) as written: the short form or a table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum PatternSpec {
    /// The short form, e.g. `"ur"`, `"adv+1"`, `"router-mix:adv+1:25"`, `"stencil:4x8x33"`.
    Short(String),
    /// A table with `kind` and the family's parameters, e.g.
    /// `{kind = "router-mix", base = "adv+1", percent = 25}`.
    Table(BTreeMap<String, Value>),
}

impl Default for PatternSpec {
    fn default() -> Self {
        PatternSpec::Short("ur".into())
    }
}

impl From<&str> for PatternSpec {
    fn from(s: &str) -> Self {
        PatternSpec::Short(s.into())
    }
}

impl PatternSpec {
    /// The short form this spec stands for (a table's parameters in the family's order).
    pub fn short(&self, field: &str) -> Result<String> {
        let table = match self {
            PatternSpec::Short(s) => return Ok(s.clone()),
            PatternSpec::Table(t) => t,
        };
        let kinds = || PATTERNS.iter().map(|p| p.kind).collect::<Vec<_>>().join(", ");
        let kind = table
            .get("kind")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::config(format!("{field}.kind"), format!("missing; allowed: {}", kinds())))?;
        let family = PATTERNS
            .iter()
            .find(|p| p.kind.eq_ignore_ascii_case(kind) || p.aliases.iter().any(|a| a.eq_ignore_ascii_case(kind)))
            .ok_or_else(|| {
                Error::config(format!("{field}.kind"), format!("'{kind}' is not allowed; allowed: {}", kinds()))
            })?;
        if let Some(extra) = table.keys().find(|k| *k != "kind" && !family.params.iter().any(|(p, _)| p == k)) {
            let allowed: Vec<&str> = family.params.iter().map(|(p, _)| *p).collect();
            let allowed = if allowed.is_empty() { "kind".to_string() } else { format!("kind, {}", allowed.join(", ")) };
            return Err(Error::config(
                format!("{field}.{extra}"),
                format!("unknown key for {kind}; allowed: {allowed}"),
            ));
        }
        let value = |name: &str| -> Option<String> {
            table.get(name).map(|v| match v {
                Value::String(s) => s.clone(),
                Value::Array(dims) => dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("x"),
                other => other.to_string(),
            })
        };
        if family.kind == "adv" {
            let shift = value("shift")
                .ok_or_else(|| Error::config(format!("{field}.shift"), "missing; allowed: 1 to g-1, or \"h\""))?;
            return Ok(format!("adv+{shift}"));
        }
        let mut out = family.kind.to_string();
        let given: Vec<String> = family.params.iter().filter_map(|(p, _)| value(p)).collect();
        if !given.is_empty() && given.len() != family.params.len() {
            let names: Vec<&str> = family.params.iter().map(|(p, _)| *p).collect();
            return Err(Error::config(field, format!("{} takes all of {} or none", family.kind, names.join(", "))));
        }
        for v in given {
            let _ = write!(out, ":{v}");
        }
        Ok(out)
    }

    /// The pattern on `topo` (errors name `field`).
    pub fn parse(&self, field: &str, topo: &Topology) -> Result<Pattern> {
        Pattern::parse(&self.short(field)?, topo).map_err(|e| match e {
            Error::Config { message, .. } => Error::config(field, message),
            other => other,
        })
    }
}

impl Pattern {
    /// The short form with every default explicit (`uniform` → `ur`, `hot` → `hot:25:12.5`,
    /// `adv+h` → `adv+<h>`, `stencil` → `stencil:<p>x<a>x<g>`): one string per experiment.
    pub fn canonical(&self) -> String {
        let pct = |x: f64| fmt_num((x * 1e9).round() / 1e7);
        match self {
            Pattern::Uniform => "ur".into(),
            Pattern::Adversarial { shift } => format!("adv+{shift}"),
            Pattern::AdversarialConsecutive => "advc".into(),
            Pattern::AdversarialLocal => "advl".into(),
            Pattern::HotRegion { traffic, nodes } => format!("hot:{}:{}", pct(*traffic), pct(*nodes)),
            Pattern::Permutation => "perm".into(),
            Pattern::Mix { level, base, percent } => {
                let level = if *level == MixLevel::Router { "router-mix" } else { "node-mix" };
                let base = match base {
                    MixBase::Shift { shift } => format!("adv+{shift}"),
                    MixBase::Permutation => "perm".into(),
                };
                format!("{level}:{base}:{}", fmt_num(*percent))
            }
            Pattern::Stencil { grid } | Pattern::ManyToMany { grid } => {
                let kind = if matches!(self, Pattern::Stencil { .. }) { "stencil" } else { "m2m" };
                let [x, y, z] = grid.dims;
                format!("{kind}:{x}x{y}x{z}")
            }
            Pattern::RandomNeighbors { min, max, fixed } => {
                format!("{}:{min}:{max}", if *fixed { "rn-fixed" } else { "rn" })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TopologyConfig;

    fn topo() -> Topology {
        Topology::new(&TopologyConfig::default()).unwrap()
    }

    #[test]
    fn tables_and_short_forms_are_one_pattern_with_one_canonical_form() {
        let t = topo();
        let table = |v: serde_json::Value| -> PatternSpec { serde_json::from_value(v).unwrap() };
        for (spec, canonical) in [
            (PatternSpec::from("UNIFORM"), "ur"),
            (table(serde_json::json!({"kind": "ur"})), "ur"),
            (table(serde_json::json!({"kind": "adv", "shift": 3})), "adv+3"),
            (table(serde_json::json!({"kind": "adv", "shift": "h"})), "adv+4"),
            (PatternSpec::from("adv+h"), "adv+4"),
            (PatternSpec::from("hot"), "hot:25:12.5"),
            (table(serde_json::json!({"kind": "hot", "traffic": 25, "nodes": 12.5})), "hot:25:12.5"),
            (PatternSpec::from("hot:25%:12.5%"), "hot:25:12.5"),
            (table(serde_json::json!({"kind": "router-mix", "base": "adv+1", "percent": 25})), "router-mix:adv+1:25"),
            (PatternSpec::from("many-to-many"), "m2m:4x8x33"),
            (table(serde_json::json!({"kind": "stencil", "grid": [4, 8, 33]})), "stencil:4x8x33"),
            (PatternSpec::from("random-neighbors-fixed"), "rn-fixed:6:20"),
            (PatternSpec::from("permutation"), "perm"),
        ] {
            let p = spec.parse("traffic.pattern", &t).unwrap_or_else(|e| panic!("{spec:?}: {e}"));
            assert_eq!(p.canonical(), canonical, "{spec:?}");
            // The canonical form parses to the same pattern.
            assert_eq!(Pattern::parse(canonical, &t).unwrap(), p, "{canonical}");
        }
    }

    #[test]
    fn bad_tables_name_the_key_and_the_allowed_values() {
        let t = topo();
        for (v, field, allowed) in [
            (serde_json::json!({"shift": 1}), "traffic.pattern.kind", "allowed: ur, adv"),
            (serde_json::json!({"kind": "zigzag"}), "traffic.pattern.kind", "allowed: ur"),
            (serde_json::json!({"kind": "adv", "shift": 1, "x": 2}), "traffic.pattern.x", "allowed: kind, shift"),
            (serde_json::json!({"kind": "hot", "traffic": 30}), "traffic.pattern", "all of traffic, nodes"),
            (serde_json::json!({"kind": "adv", "shift": 40}), "traffic.pattern", "allowed:"),
        ] {
            let spec: PatternSpec = serde_json::from_value(v.clone()).unwrap();
            let err = spec.parse("traffic.pattern", &t).unwrap_err().to_string();
            assert!(err.starts_with(field) && err.contains(allowed), "{v}: {err}");
        }
    }
}
