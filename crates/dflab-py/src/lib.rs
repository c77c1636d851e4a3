//! `dflab._core`: the thin PyO3 layer. It only converts — config JSON in, result out — and
//! releases the GIL while the engine runs. Results cross as one JSON document decoded by
//! Python's `json` module (no per-packet Python objects exist).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use dflab_core::engine::observe::{Observer, Progress};
use dflab_core::{info, Error, Experiment};
use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

create_exception!(_core, ConfigError, PyValueError, "Bad experiment description (names the field).");
create_exception!(_core, DeadlockError, PyRuntimeError, "The watchdog found the network stuck.");
create_exception!(_core, InvariantError, PyRuntimeError, "An internal consistency check failed (a dflab bug).");

fn to_py(e: Error) -> PyErr {
    match e {
        Error::Config { .. } => ConfigError::new_err(e.to_string()),
        Error::Deadlock(_) => DeadlockError::new_err(e.to_string()),
        Error::Invariant(_) => InvariantError::new_err(e.to_string()),
        Error::Interrupted(_) => PyKeyboardInterrupt::new_err(e.to_string()),
    }
}

fn json_to_py<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (text,))
}

fn parse(config_json: &str) -> PyResult<Experiment> {
    Experiment::from_json(config_json).map_err(to_py)
}

/// Run one experiment; returns {"summary", "execution", "series", "hops_histogram", "probes",
/// "config"}. About every `every_s` seconds of wall time the engine checks for Python signals
/// (Ctrl-C raises KeyboardInterrupt within about that time) and calls `progress(now_us,
/// end_us, wall_s)` if given; an exception it raises stops the run and propagates. In a workload
/// run, `job_progress(jobs)` is called just before, if given, with one `(name, ranks,
/// ranks_done, iterations, iterations_done)` tuple per job (`iterations_done` summed over the
/// ranks).
#[pyfunction]
#[pyo3(signature = (config_json, progress = None, every_s = 0.2, job_progress = None))]
fn simulate<'py>(
    py: Python<'py>,
    config_json: &str,
    progress: Option<Py<PyAny>>,
    every_s: f64,
    job_progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let cfg = parse(config_json)?;
    // What the observer raised, handed back to Python once the engine has stopped.
    let raised: Arc<Mutex<Option<PyErr>>> = Arc::default();
    let stash = raised.clone();
    let observe = move |p: &Progress| -> bool {
        Python::attach(|py| {
            let jobs = || -> Vec<(&str, u32, u32, u32, u64)> {
                p.jobs
                    .iter()
                    .map(|j| (j.name.as_str(), j.ranks, j.ranks_done, j.iterations, j.iterations_done))
                    .collect()
            };
            let outcome = py
                .check_signals()
                .and_then(|()| match &job_progress {
                    Some(f) if !p.jobs.is_empty() => f.call1(py, (jobs(),)).map(drop),
                    _ => Ok(()),
                })
                .and_then(|()| match &progress {
                    Some(f) => f.call1(py, (p.now_us, p.end_us, p.wall_s)).map(drop),
                    None => Ok(()),
                });
            outcome.map_err(|e| *stash.lock().expect("not poisoned") = Some(e)).is_ok()
        })
    };
    let every = Duration::from_secs_f64(every_s.clamp(0.001, 3600.0));
    let observer = Observer::new(every, Box::new(observe));
    let out = py.detach(|| {
        dflab_core::simulate_observed(&cfg, 1, Some(observer))
            .map(|r| serde_json::to_string(&r).expect("result serialises"))
    });
    if let Some(e) = raised.lock().expect("not poisoned").take() {
        return Err(e);
    }
    json_to_py(py, &out.map_err(to_py)?)
}

/// Topology summary: routers, nodes, radix, ports, links, diameter, VCs, hop bound.
#[pyfunction]
fn topology_info<'py>(py: Python<'py>, config_json: &str) -> PyResult<Bound<'py, PyAny>> {
    let cfg = parse(config_json)?;
    let i = info::topology_info(&cfg).map_err(to_py)?;
    json_to_py(py, &serde_json::to_string(&i).expect("info serialises"))
}

/// The normalised config (every default filled in), or ConfigError.
#[pyfunction]
fn validate<'py>(py: Python<'py>, config_json: &str) -> PyResult<Bound<'py, PyAny>> {
    let cfg = parse(config_json)?;
    json_to_py(py, &cfg.to_json())
}

/// The canonical effective config (the result store's key): the canonical algorithm with only
/// its parameters, defaults filled, canonical patterns, derived `g` and `links_per_pair`.
#[pyfunction]
fn canonical<'py>(py: Python<'py>, config_json: &str) -> PyResult<Bound<'py, PyAny>> {
    let cfg = parse(config_json)?.canonical().map_err(to_py)?;
    json_to_py(py, &cfg.to_json())
}

/// The experiment schema the Python models, the docs' key tables and the CLI help are
/// generated from (a JSON Schema with the algorithms and patterns under `x-dflab`).
#[pyfunction]
fn schema<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
    json_to_py(py, &dflab_core::config::schema::document().to_string())
}

/// The version of the model's semantics (results of different versions are never mixed).
#[pyfunction]
fn engine_semantics() -> u32 {
    dflab_core::ENGINE_SEMANTICS
}

/// The routing algorithms the engine implements, by their papers' names.
#[pyfunction]
fn routing_names() -> Vec<&'static str> {
    dflab_core::routing::ALGORITHM_NAMES.to_vec()
}

#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// How the engine was compiled: `release+pgo` when scripts/setup.sh built it with a profile
/// (scripts/pgo.sh), `release` otherwise. Reported by `dflab bench`.
#[pyfunction]
fn build() -> &'static str {
    // rustc records the variable in the dep-info, so cargo rebuilds when it changes.
    match option_env!("DFLAB_PGO_PROFILE") {
        Some(_) => "release+pgo",
        None => "release",
    }
}

/// The host's core clock in GHz, measured by a chain of dependent additions (the fastest of
/// `rounds`; see `dflab_core::hostclock`), or None where the probe does not exist. Read by
/// `dflab bench` before and after each scenario.
#[pyfunction]
#[pyo3(signature = (rounds = 5))]
fn host_clock_ghz(py: Python<'_>, rounds: u32) -> Option<f64> {
    py.detach(|| dflab_core::hostclock::clock_ghz(rounds))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(topology_info, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(canonical, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(engine_semantics, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(build, m)?)?;
    m.add_function(wrap_pyfunction!(routing_names, m)?)?;
    m.add_function(wrap_pyfunction!(host_clock_ghz, m)?)?;
    m.add("ConfigError", m.py().get_type::<ConfigError>())?;
    m.add("DeadlockError", m.py().get_type::<DeadlockError>())?;
    m.add("InvariantError", m.py().get_type::<InvariantError>())?;
    Ok(())
}
