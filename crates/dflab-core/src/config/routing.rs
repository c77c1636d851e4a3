//! The `[routing]` section: the algorithm, a forced VC count, and the algorithm's own
//! parameters. Each algorithm declares its parameters as a typed struct in its own file
//! ([`RoutingParams`], registered with it in `routing/registry.rs`); the section keeps them as
//! given, and the chosen algorithm reads its own. A parameter of another algorithm is accepted
//! and ignored (it leaves the effective configuration and the result store key unchanged, so a
//! sweep over algorithms can share one base); a key no algorithm knows is an error naming the
//! chosen algorithm's keys.

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// The parameters of one algorithm, in its file: defaults are the reference's, ranges are
/// declared on the fields (`#[schemars(range(...))]`) and checked by the engine from the
/// schema, like every other key.
pub trait RoutingParams: DeserializeOwned + Serialize + JsonSchema + Default + Clone {
    /// Checks that involve several parameters (single-value ranges are declared on the fields).
    fn check(&self) -> Result<()> {
        Ok(())
    }

    /// The same simulation's parameters with those that have no effect in it at one fixed
    /// value, so that equal simulations hash alike (the store key).
    fn canonical(self) -> Self {
        self
    }
}

/// An algorithm without parameters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

impl RoutingParams for NoParams {}

#[derive(Debug, Clone, PartialEq)]
pub struct RoutingConfig {
    /// The algorithm by its paper's name (any case; the aliases of `dflab presets` too).
    pub algorithm: String,
    /// Force the number of VCs (the algorithm's VC index is clamped to `vcs - 1`).
    pub vcs: Option<usize>,
    /// The algorithm's parameters as given (see the module comment).
    pub params: Map<String, Value>,
}

impl Default for RoutingConfig {
    fn default() -> Self {
        RoutingConfig { algorithm: "MIN".into(), vcs: None, params: Map::new() }
    }
}

impl RoutingConfig {
    /// Set parameter `key` (a parameter of some algorithm).
    pub fn set(&mut self, key: &str, value: impl Into<Value>) -> &mut Self {
        self.params.insert(key.into(), value.into());
        self
    }

    /// Parameters `P` of the algorithm from the given ones: keys of other algorithms (any of
    /// `known`) are left out, a key no algorithm has is an error naming `P`'s keys.
    pub fn params_as<P: RoutingParams>(&self, known: &[String]) -> Result<P> {
        let own = param_keys::<P>();
        let mut mine = Map::new();
        for (k, v) in &self.params {
            if own.iter().any(|o| o == k) {
                mine.insert(k.clone(), v.clone());
            } else if !known.contains(k) {
                let allowed = if own.is_empty() { "none".to_string() } else { own.join(", ") };
                return Err(Error::config(
                    format!("routing.{k}"),
                    format!("unknown key for {}; allowed: algorithm, vcs, {allowed}", self.algorithm),
                ));
            }
        }
        let p: P = serde_path_to_error::deserialize(Value::Object(mine)).map_err(|e| {
            Error::config(format!("routing.{}", e.path()), super::clean_serde_message(&e.inner().to_string()))
        })?;
        p.check()?;
        Ok(p)
    }
}

/// The keys of parameter struct `P` (its schema's properties).
pub fn param_keys<P: JsonSchema>() -> Vec<String> {
    let schema = super::schema::inline_schema_for::<P>();
    schema.get("properties").and_then(Value::as_object).map(|props| props.keys().cloned().collect()).unwrap_or_default()
}

impl Serialize for RoutingConfig {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut m = Map::new();
        m.insert("algorithm".into(), Value::String(self.algorithm.clone()));
        if let Some(v) = self.vcs {
            m.insert("vcs".into(), Value::from(v));
        }
        for (k, v) in &self.params {
            m.insert(k.clone(), v.clone());
        }
        m.serialize(s)
    }
}

impl<'de> Deserialize<'de> for RoutingConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let mut m = Map::<String, Value>::deserialize(d)?;
        let algorithm = match m.remove("algorithm") {
            None => "MIN".to_string(),
            Some(Value::String(s)) => s,
            Some(other) => return Err(D::Error::custom(format!("algorithm: expected a string, got {other}"))),
        };
        let vcs = match m.remove("vcs") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                v.as_u64()
                    .and_then(|v| usize::try_from(v).ok())
                    .ok_or_else(|| D::Error::custom(format!("vcs: expected an integer, got {v}")))?,
            ),
        };
        Ok(RoutingConfig { algorithm, vcs, params: m })
    }
}

impl JsonSchema for RoutingConfig {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "RoutingConfig".into()
    }

    /// The algorithm, `vcs`, and every algorithm's parameters, each marked with the algorithms
    /// it applies to (`x-algorithms`).
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let mut props = Map::new();
        props.insert(
            "algorithm".into(),
            serde_json::json!({
                "type": "string",
                "default": "MIN",
                "enum": crate::routing::ALGORITHM_NAMES,
                "x-aliases": crate::routing::registry::ALGORITHM_ALIASES
                    .iter()
                    .map(|(a, n)| (a.to_string(), Value::from(*n)))
                    .collect::<Map<String, Value>>(),
                "description": "The routing algorithm, by its paper's name (any case; the aliases too).",
            }),
        );
        props.insert(
            "vcs".into(),
            serde_json::json!({
                "type": ["integer", "null"],
                "format": "uint",
                "minimum": 1,
                "maximum": 64,
                "default": null,
                "description": "Force the number of VCs; fewer than the algorithm needs are allowed (deadlock studies): \
                                its VCs above are folded onto the last.",
            }),
        );
        for (key, (schema, algorithms)) in crate::routing::registry::params_union() {
            let mut s = schema;
            if let Some(obj) = s.as_object_mut() {
                obj.insert("x-algorithms".into(), Value::from(algorithms));
            }
            props.insert(key, s);
        }
        let mut obj = Map::new();
        obj.insert("type".into(), "object".into());
        obj.insert(
            "description".into(),
            "The routing algorithm and its parameters; only the chosen algorithm's parameters apply.".into(),
        );
        obj.insert("properties".into(), Value::Object(props));
        obj.insert("additionalProperties".into(), false.into());
        Schema::from(obj)
    }
}
