//! The experiment schema, owned by the engine: a JSON Schema generated from the config types
//! (their doc comments are the descriptions, their `#[schemars(...)]` attributes the ranges),
//! with the routing algorithms and their parameters from the registry and the traffic
//! patterns from the pattern table. `dflab._core.schema()` exports it; the Python models, the
//! docs' key tables and the CLI help are generated from that export (`scripts/gen_schema.py`,
//! with a test that they are fresh).
//!
//! The engine also checks every number against the ranges declared here ([`check_ranges`]), so
//! a range lives in one place, on its field.

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::{json, Map, Value};

use crate::error::{Error, Result};

/// The schema of `T` with every sub-schema inlined (no `$ref`), as a JSON value.
pub fn inline_schema_for<T: JsonSchema>() -> Value {
    let settings = SchemaSettings::draft2020_12().with(|s| s.inline_subschemas = true);
    let generator = settings.into_generator();
    let schema = generator.into_root_schema_for::<T>();
    schema.to_value()
}

/// The whole schema document: the experiment's JSON Schema, and under `x-dflab` the engine's
/// version and semantics version, the algorithms (names, aliases, parameters) and the pattern
/// families (names, parameters, forms).
pub fn document() -> Value {
    let mut schema = inline_schema_for::<super::Experiment>();
    let algorithms: Vec<Value> = crate::routing::registry::algorithm_table()
        .into_iter()
        .map(|(name, aliases, params)| json!({"name": name, "aliases": aliases, "params": params}))
        .collect();
    let patterns: Vec<Value> = crate::traffic::spec::PATTERNS
        .iter()
        .map(|p| {
            json!({
                "kind": p.kind,
                "aliases": p.aliases,
                "params": p.params.iter().map(|(n, h)| json!({"name": n, "help": h})).collect::<Vec<_>>(),
                "forms": p.forms,
                "help": p.help,
            })
        })
        .collect();
    let motifs: Vec<Value> = crate::workload::motifs::names()
        .iter()
        .map(|&name| {
            let params = crate::workload::motifs::params_schema(name).expect("a registered motif").to_value();
            json!({"name": name, "params": params})
        })
        .collect();
    if let Some(obj) = schema.as_object_mut() {
        obj.insert(
            "x-dflab".into(),
            json!({
                "version": env!("CARGO_PKG_VERSION"),
                "engine_semantics": crate::ENGINE_SEMANTICS,
                "algorithms": algorithms,
                "patterns": patterns,
                "motifs": motifs,
            }),
        );
    }
    schema
}

/// Check every number of `value` (a config or part of one, at dotted `path`) against the
/// bounds its `schema` declares: `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`,
/// and the range of an integer `format` (`uint32`, ...). Keys the schema does not know are
/// left to the deserializer (which names the allowed keys).
pub fn check_ranges(value: &Value, schema: &Value, path: &str) -> Result<()> {
    match value {
        Value::Object(map) => {
            let Some(props) = schema.get("properties").and_then(Value::as_object) else { return Ok(()) };
            for (k, v) in map {
                if let Some(s) = props.get(k) {
                    check_ranges(v, s, &join(path, k))?;
                }
            }
            Ok(())
        }
        Value::Array(items) => {
            let Some(item) = schema.get("items") else { return Ok(()) };
            for (i, v) in items.iter().enumerate() {
                check_ranges(v, item, &format!("{path}[{i}]"))?;
            }
            Ok(())
        }
        Value::Number(n) => {
            let Some(x) = n.as_f64() else { return Ok(()) };
            match Bounds::of(schema) {
                Some(b) if !b.holds(x) => {
                    Err(Error::config(path, format!("{} is out of range; allowed: {}", fmt_num(x), b.describe())))
                }
                _ => Ok(()),
            }
        }
        _ => Ok(()),
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// The numeric bounds a schema declares.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    pub lo: Option<(f64, bool)>,
    pub hi: Option<(f64, bool)>,
}

impl Bounds {
    /// `(value, inclusive)` for each side, from the keywords and the integer format.
    pub fn of(schema: &Value) -> Option<Bounds> {
        let num = |k: &str| schema.get(k).and_then(Value::as_f64);
        let (fmt_lo, fmt_hi) = match schema.get("format").and_then(Value::as_str) {
            Some("uint8") => (Some(0.0), Some(u8::MAX as f64)),
            Some("uint16") => (Some(0.0), Some(u16::MAX as f64)),
            Some("uint32") => (Some(0.0), Some(u32::MAX as f64)),
            Some("uint64" | "uint") => (Some(0.0), Some(u64::MAX as f64)),
            Some("int32") => (Some(i32::MIN as f64), Some(i32::MAX as f64)),
            _ => (None, None),
        };
        let lo = match (num("exclusiveMinimum"), num("minimum").or(fmt_lo)) {
            (Some(x), _) => Some((x, false)),
            (None, Some(x)) => Some((x, true)),
            (None, None) => None,
        };
        let hi = match (num("exclusiveMaximum"), num("maximum").or(fmt_hi)) {
            (Some(x), _) => Some((x, false)),
            (None, Some(x)) => Some((x, true)),
            (None, None) => None,
        };
        (lo.is_some() || hi.is_some()).then_some(Bounds { lo, hi })
    }

    pub fn holds(&self, x: f64) -> bool {
        let lo_ok = self.lo.is_none_or(|(l, incl)| if incl { x >= l } else { x > l });
        let hi_ok = self.hi.is_none_or(|(h, incl)| if incl { x <= h } else { x < h });
        lo_ok && hi_ok
    }

    /// "1 to 64", ">= 0", "> 0 and <= 1".
    pub fn describe(&self) -> String {
        match (self.lo, self.hi) {
            (Some((l, true)), Some((h, true))) => format!("{} to {}", fmt_num(l), fmt_num(h)),
            (lo, hi) => {
                let lo = lo.map(|(l, incl)| format!("{} {}", if incl { ">=" } else { ">" }, fmt_num(l)));
                let hi = hi.map(|(h, incl)| format!("{} {}", if incl { "<=" } else { "<" }, fmt_num(h)));
                lo.into_iter().chain(hi).collect::<Vec<_>>().join(" and ")
            }
        }
    }
}

/// A number as a user writes it: integers without a fraction, others as short as exact.
pub fn fmt_num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e16 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// The properties of a section's schema, by name (for tools and tests).
pub fn properties(schema: &Value) -> Map<String, Value> {
    schema.get("properties").and_then(Value::as_object).cloned().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_read_every_keyword_and_describe_themselves() {
        let b = Bounds::of(&json!({"type": "integer", "format": "uint32", "minimum": 1})).unwrap();
        assert!(b.holds(1.0) && b.holds(4294967295.0) && !b.holds(0.0) && !b.holds(4294967296.0));
        assert_eq!(b.describe(), "1 to 4294967295");
        let b = Bounds::of(&json!({"type": "number", "exclusiveMinimum": 0.0, "maximum": 1.0})).unwrap();
        assert!(b.holds(1.0) && !b.holds(0.0) && b.holds(1e-9) && !b.holds(1.0000001));
        assert_eq!(b.describe(), "> 0 and <= 1");
        let b = Bounds::of(&json!({"type": "number", "minimum": 0.0})).unwrap();
        assert_eq!(b.describe(), ">= 0");
        assert!(Bounds::of(&json!({"type": "number"})).is_none());
    }

    #[test]
    fn ranges_are_checked_through_objects_and_lists_with_the_dotted_path() {
        let schema = json!({"properties": {
            "a": {"properties": {"x": {"type": "integer", "minimum": 1, "maximum": 64}}},
            "list": {"items": {"properties": {"load": {"exclusiveMinimum": 0.0, "maximum": 1.0}}}},
        }});
        assert!(check_ranges(&json!({"a": {"x": 64}}), &schema, "").is_ok());
        let err = check_ranges(&json!({"a": {"x": 65}}), &schema, "").unwrap_err().to_string();
        assert_eq!(err, "a.x: 65 is out of range; allowed: 1 to 64");
        let err = check_ranges(&json!({"list": [{"load": 0.5}, {"load": 0}]}), &schema, "").unwrap_err();
        assert_eq!(err.to_string(), "list[1].load: 0 is out of range; allowed: > 0 and <= 1");
        // Unknown keys and other types are the deserializer's business.
        assert!(check_ranges(&json!({"b": -5, "a": {"x": "big"}}), &schema, "").is_ok());
    }
}
