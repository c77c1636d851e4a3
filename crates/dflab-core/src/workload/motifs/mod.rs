//! The motif library: application communication patterns as programs of [`Op`]s, one
//! iteration at a time, after SST Ember's motifs (the SC'22 interference study's set and a few
//! generic ones). Each motif is one file; its parameters are a typed struct whose defaults are
//! the reference run's (`../shared/reference/workloads.md` §3.2, QR §4.3), given in the job's
//! `params` table.
//!
//! [`build`] makes a motif from its name, the job's rank count and its `params` table;
//! [`totals`] counts what a motif sends without a network (the Table I sanity targets).

pub mod allreduce;
pub mod alltoall;
pub mod cosmoflow;
pub mod dl;
pub mod fft3d;
pub mod grid;
pub mod halo2d;
pub mod halo3d;
pub mod lqcd;
pub mod lu;
pub mod lulesh;
pub mod null;
pub mod pingpong;
pub mod stencil5d;
pub mod table;
pub mod totals;
pub mod ur;

#[cfg(test)]
mod progress;
#[cfg(test)]
mod tests;

use schemars::{JsonSchema, Schema};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::workload::mpi::op::Op;

/// The 350 µs every Ember motif of the reference computes before its first iteration
/// (`wait2start`): the default of `workload.jobs[].wait2start_us`.
pub const WAIT2START_US: f64 = 350.0;

/// An application's communication pattern (see the module comment).
pub trait Motif: Send + Sync {
    /// The motif's name as written in `workload.jobs[].motif`.
    fn name(&self) -> &'static str;

    /// Iterations each rank runs (each one is a row of the per-iteration record).
    fn iterations(&self) -> u32;

    /// Rank `rank`'s operations before its first iteration (not part of any iteration's record),
    /// appended to `out`, after the job's `wait2start_us` compute (which the MPI layer adds):
    /// none by default.
    fn prologue(&self, _rank: u32, _out: &mut Vec<Op>) {}

    /// Rank `rank`'s operations in iteration `it` (0-based), appended to `out`.
    fn iteration(&self, rank: u32, it: u32, out: &mut Vec<Op>);
}

/// The parameters of a motif: a typed struct (defaults = the reference run's values) whose
/// constructor checks them against the job's rank count.
trait MotifParams: DeserializeOwned + Serialize + JsonSchema + Sized {
    /// The motif for a job of `ranks` ranks; `field` is the job's config path
    /// (`workload.jobs[1]`) for error messages.
    fn build(self, ranks: u32, field: &str) -> Result<Box<dyn Motif>>;
}

/// How an entry makes its motif: (ranks, params, field) → motif.
type Builder = fn(u32, &Map<String, Value>, &str) -> Result<Box<dyn Motif>>;

/// One entry of the registry.
struct Entry {
    name: &'static str,
    build: Builder,
    schema: fn() -> Schema,
    canonical: Canonical,
}

/// How an entry writes its parameters out in full: (params, field) → params.
type Canonical = fn(&Map<String, Value>, &str) -> Result<Map<String, Value>>;

fn entry<P: MotifParams>(name: &'static str) -> Entry {
    Entry { name, build: parse_and_build::<P>, schema: schema_of::<P>, canonical: canonical_of::<P> }
}

fn registry() -> [Entry; 15] {
    [
        entry::<ur::UrParams>("ur"),
        entry::<lu::LuParams>("lu"),
        entry::<fft3d::Fft3dParams>("fft3d"),
        entry::<halo3d::Halo3dParams>("halo3d"),
        entry::<lqcd::LqcdParams>("lqcd"),
        entry::<stencil5d::Stencil5dParams>("stencil5d"),
        entry::<cosmoflow::CosmoflowParams>("cosmoflow"),
        entry::<dl::DlParams>("dl"),
        entry::<lulesh::LuleshParams>("lulesh"),
        entry::<alltoall::AlltoallParams>("alltoall"),
        entry::<allreduce::AllreduceParams>("allreduce"),
        entry::<halo2d::Halo2dParams>("halo2d"),
        entry::<pingpong::PingpongParams>("pingpong"),
        entry::<null::NullParams>("null"),
        entry::<table::TableParams>("table"),
    ]
}

/// The motif names [`build`] knows, in the registry's order.
pub fn names() -> &'static [&'static str] {
    &[
        "ur",
        "lu",
        "fft3d",
        "halo3d",
        "lqcd",
        "stencil5d",
        "cosmoflow",
        "dl",
        "lulesh",
        "alltoall",
        "allreduce",
        "halo2d",
        "pingpong",
        "null",
        "table",
    ]
}

fn find(name: &str) -> Result<Entry> {
    registry()
        .into_iter()
        .find(|e| e.name == name)
        .ok_or_else(|| Error::config("motif", format!("unknown motif `{name}`; allowed: {}", names().join(", "))))
}

/// Motif `name` for a job of `ranks` ranks with the given `params` (missing keys take the
/// reference run's values). `field` is the job's config path (`workload.jobs[1]`): errors name
/// `<field>.params.<key>` or `<field>.ranks` and say what is allowed.
pub fn build(name: &str, ranks: u32, params: &Map<String, Value>, field: &str) -> Result<Box<dyn Motif>> {
    let e = find(name).map_err(|e| match e {
        Error::Config { message, .. } => Error::config(format!("{field}.motif"), message),
        other => other,
    })?;
    if ranks == 0 {
        return Err(Error::config(format!("{field}.ranks"), "a job needs at least 1 rank; allowed: 1 or more"));
    }
    (e.build)(ranks, params, field)
}

/// The JSON Schema of motif `name`'s parameters (for the docs); an unknown name is the same
/// error as in [`build`].
pub fn params_schema(name: &str) -> Result<Schema> {
    Ok((find(name)?.schema)())
}

fn schema_of<P: JsonSchema>() -> Schema {
    let settings = schemars::generate::SchemaSettings::draft2020_12().with(|s| s.inline_subschemas = true);
    settings.into_generator().into_root_schema_for::<P>()
}

/// Motif `name`'s parameters with every default written out (the result store's key: equal
/// simulations have equal forms); errors as in [`build`].
pub fn canonical_params(name: &str, params: &Map<String, Value>, field: &str) -> Result<Map<String, Value>> {
    let e = find(name).map_err(|e| match e {
        Error::Config { message, .. } => Error::config(format!("{field}.motif"), message),
        other => other,
    })?;
    (e.canonical)(params, field)
}

fn canonical_of<P: MotifParams>(params: &Map<String, Value>, field: &str) -> Result<Map<String, Value>> {
    let p: P = parse::<P>(params, field)?;
    match serde_json::to_value(p).expect("parameters serialise") {
        Value::Object(map) => Ok(map),
        _ => unreachable!("parameters are a table"),
    }
}

/// Deserialise `P` from the job's `params` (unknown keys and ill-typed values are errors that
/// name the key and list `P`'s keys), then build the motif.
fn parse_and_build<P: MotifParams>(ranks: u32, params: &Map<String, Value>, field: &str) -> Result<Box<dyn Motif>> {
    parse::<P>(params, field)?.build(ranks, field)
}

/// `P` from the job's `params`: unknown keys and ill-typed values are errors naming the key.
fn parse<P: MotifParams>(params: &Map<String, Value>, field: &str) -> Result<P> {
    let keys = crate::config::routing::param_keys::<P>();
    let allowed = if keys.is_empty() { "none".to_string() } else { keys.join(", ") };
    if let Some(k) = params.keys().find(|k| !keys.contains(k)) {
        return Err(Error::config(format!("{field}.params.{k}"), format!("unknown parameter; allowed: {allowed}")));
    }
    let p: P = serde_path_to_error::deserialize(Value::Object(params.clone())).map_err(|e| {
        let path = e.path().to_string();
        let at = if path == "." { format!("{field}.params") } else { format!("{field}.params.{path}") };
        let msg = crate::config::clean_serde_message(&e.inner().to_string());
        Error::config(at, format!("{msg} (parameters: {allowed})"))
    })?;
    Ok(p)
}

/// A rank-count error: `<field>.ranks` with what is allowed.
pub(crate) fn ranks_error(field: &str, message: impl Into<String>) -> Error {
    Error::config(format!("{field}.ranks"), message)
}

/// A parameter error: `<field>.params.<key>` with what is allowed.
pub(crate) fn param_error(field: &str, key: &str, message: impl Into<String>) -> Error {
    Error::config(format!("{field}.params.{key}"), message)
}

/// A duration parameter in ns or µs as picoseconds; negative or not finite is an error.
pub(crate) fn duration_ps(value: f64, per_unit_ps: f64, field: &str, key: &str) -> Result<crate::units::Time> {
    if !value.is_finite() || value < 0.0 {
        return Err(param_error(field, key, format!("{value} is not a duration; allowed: 0 or more")));
    }
    Ok((value * per_unit_ps).round() as crate::units::Time)
}
