"""Python API: `simulate(...) -> Result`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import polars as pl

from dflab import engine
from dflab.config import Experiment
from dflab.engine import JobProgress
from dflab.errors import UserError
from dflab.loading import load_experiment, validate, with_overrides
from dflab.workload import WorkloadResult


@dataclass(frozen=True)
class Summary:
    """The engine's summary of one run; field names and units as in docs/config.md. A statistic
    of an empty sample (latencies, hops and minimal share when nothing was delivered in the
    measurement window) is None, never 0."""

    offered_load: float | None
    accepted_load: float | None
    offered_gbps_per_node: float | None
    accepted_gbps_per_node: float | None
    accepted_total_gbps: float | None
    latency_mean_ns: float | None
    latency_p50_ns: float | None
    latency_p95_ns: float | None
    latency_p99_ns: float | None
    latency_max_ns: float | None
    network_latency_mean_ns: float | None
    network_latency_p50_ns: float | None
    network_latency_p95_ns: float | None
    network_latency_p99_ns: float | None
    network_latency_max_ns: float | None
    hops_mean: float | None
    minimal_fraction: float | None
    packets_generated: int
    packets_delivered: int
    packets_in_flight_end: int
    source_queue_end: int
    sim_time_us: float
    router_traversals: int
    # Set only by `run.steady_warmup` (where the measurement started) and
    # `run.stop_when_saturated` ("saturated" when it stopped the run).
    measure_start_us: float | None = None
    stopped: str | None = None

    @classmethod
    def field_names(cls) -> list[str]:
        return [field.name for field in fields(cls)]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Summary:
        """From the engine's summary dict; extra keys are ignored, missing required ones are an
        error."""
        required = [f.name for f in fields(cls) if f.default is MISSING]
        missing = [name for name in required if name not in data]
        if missing:
            raise RuntimeError(f"engine summary lacks fields: {', '.join(missing)}")
        return cls(**{name: data[name] for name in cls.field_names() if name in data})

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Execution:
    """How a run was carried out, not what it found (kept apart from the summary so that result
    files can be compared byte for byte): wall-clock time, events handled, the cost per router
    traversal, simulated µs per wall-clock second, and the logical partitions."""

    wall_s: float
    events: int
    ns_per_router_traversal: float
    sim_us_per_wall_s: float
    partitions: int

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Execution:
        return cls(**{field.name: data[field.name] for field in fields(cls)})

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


SERIES_COLUMNS: tuple[str, ...] = (
    "window_start_us",
    "window_end_us",
    "offered_load",
    "accepted_load",
    "latency_mean_ns",
    "latency_p99_ns",
    "minimal_fraction",
    "packets_delivered",
    "in_measurement",
)


@dataclass(frozen=True)
class Probes:
    """The named counters the routing and the workload declared, over the measurement window:
    one number per probe (`totals`), one per router (`per_router`), or one per window of the
    series (`series`, warm-up included); and the traces, a state's changes as
    `(time_ns, router, value)` in time order (ACOR's `acor_level`, warm-up included)."""

    totals: dict[str, int]
    per_router: dict[str, list[int]]
    series: dict[str, list[int]]
    traces: dict[str, list[tuple[float, int, int]]] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Probes:
        return cls(
            totals={k: int(v) for k, v in data.get("totals", {}).items()},
            per_router={k: [int(x) for x in v] for k, v in data.get("per_router", {}).items()},
            series={k: [int(x) for x in v] for k, v in data.get("series", {}).items()},
            traces={
                k: [(r["time_ps"] / 1000.0, int(r["router"]), int(r["value"])) for r in v]
                for k, v in data.get("traces", {}).items()
            },
        )


@dataclass(frozen=True)
class Diagnostics:
    """Whether the run reached a steady state (None: too few packets to tell) and the engine's
    warnings: saturation (accepted clearly below offered), latency still drifting between the
    halves of the measurement, a large source backlog."""

    steady_state: bool | None
    warnings: list[str]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Diagnostics:
        return cls(steady_state=data.get("steady_state"), warnings=list(data.get("warnings", [])))


@dataclass(frozen=True)
class Result:
    summary: Summary
    execution: Execution
    series: pl.DataFrame
    hops_histogram: list[int]
    config: dict[str, Any]
    probes: Probes
    diagnostics: Diagnostics
    # The per-job frames of a run with a [workload] (docs/workloads.md); None otherwise.
    workload: WorkloadResult | None = None

    @classmethod
    def from_engine(cls, raw: dict[str, Any]) -> Result:
        return cls(
            summary=Summary.from_dict(raw["summary"]),
            execution=Execution.from_dict(raw["execution"]),
            series=series_frame(raw.get("series") or {}),
            hops_histogram=[int(count) for count in raw.get("hops_histogram", [])],
            config=raw.get("config", {}),
            probes=Probes.from_dict(raw.get("probes") or {}),
            diagnostics=Diagnostics.from_dict(raw.get("diagnostics") or {}),
            workload=(
                WorkloadResult.from_engine(raw["workload"], raw.get("ports"), raw.get("background"))
                if raw.get("workload")
                else None
            ),
        )


def series_frame(columns: dict[str, list[Any]]) -> pl.DataFrame:
    """The per-window series as a DataFrame, documented columns first."""
    frame = pl.DataFrame(columns)
    ordered = [c for c in SERIES_COLUMNS if c in frame.columns]
    return frame.select(ordered + [c for c in frame.columns if c not in ordered])


def as_experiment(config: Experiment | dict[str, Any] | str | Path) -> Experiment:
    if isinstance(config, Experiment):
        return config
    if isinstance(config, dict):
        return validate(Experiment, config)
    if isinstance(config, str | Path):
        return load_experiment(config)
    raise UserError(f"cannot make an experiment from {type(config).__name__}")


def simulate(
    config: Experiment | dict[str, Any] | str | Path,
    *,
    progress: Callable[[float, float, float], None] | None = None,
    job_progress: Callable[[list[JobProgress]], None] | None = None,
    **overrides: Any,
) -> Result:
    """Run one experiment.

    `config` is an Experiment, a dict in the TOML structure, or a path to a TOML file;
    `overrides` are dotted (`**{"traffic.load": 0.3}`) or nested (`routing={"algorithm": "VALn"}`).
    `progress(now_us, end_us, wall_s)` is called about every 0.2 s of wall time; an exception
    it raises stops the run. Ctrl-C stops a run within about that time (KeyboardInterrupt).
    In a workload run `job_progress(jobs)` is called just before, one `dflab.engine.JobProgress`
    per job (iterations and ranks finished).
    """
    experiment = with_overrides(as_experiment(config), overrides)
    raw = engine.simulate(experiment.to_engine_json(), progress=progress, job_progress=job_progress)
    return Result.from_engine(raw)
