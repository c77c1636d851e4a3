"""Rich tables and JSON rendering for the CLI (no computation happens here)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from rich.table import Table

# (summary field, label, unit) in display order; a field missing here is still shown, last.
_SUMMARY_ROWS: tuple[tuple[str, str, str], ...] = (
    ("offered_load", "offered load", "of host bw"),
    ("accepted_load", "accepted load", "of host bw"),
    ("offered_gbps_per_node", "offered", "GB/s/node"),
    ("accepted_gbps_per_node", "accepted", "GB/s/node"),
    ("accepted_total_gbps", "accepted total", "GB/s"),
    ("latency_mean_ns", "latency mean", "ns"),
    ("latency_p50_ns", "latency p50", "ns"),
    ("latency_p95_ns", "latency p95", "ns"),
    ("latency_p99_ns", "latency p99", "ns"),
    ("latency_max_ns", "latency max", "ns"),
    ("network_latency_mean_ns", "network latency mean", "ns"),
    ("network_latency_p50_ns", "network latency p50", "ns"),
    ("network_latency_p95_ns", "network latency p95", "ns"),
    ("network_latency_p99_ns", "network latency p99", "ns"),
    ("network_latency_max_ns", "network latency max", "ns"),
    ("hops_mean", "router hops mean", ""),
    ("minimal_fraction", "minimal fraction", ""),
    ("packets_generated", "packets generated", ""),
    ("packets_delivered", "packets delivered", ""),
    ("packets_in_flight_end", "in flight at end", "packets"),
    ("source_queue_end", "source queues at end", "packets"),
    ("sim_time_us", "simulated time", "µs"),
    ("router_traversals", "router traversals", ""),
    # The execution's measurements, shown after the results.
    ("wall_s", "wall time", "s"),
    ("events", "events", ""),
    ("ns_per_router_traversal", "cost", "ns/traversal"),
    ("sim_us_per_wall_s", "speed", "sim µs/wall s"),
    ("partitions", "logical partitions", ""),
)


def fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        return f"{value:,.1f}" if abs(value) >= 100 else f"{value:.4g}"
    return str(value)


def json_safe(value: Any) -> Any:
    """NaN/inf (e.g. latency with no packet delivered) become null: JSON has no NaN."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(item) for item in value]
    return value


def to_json(value: Any) -> str:
    return json.dumps(json_safe(value), allow_nan=False)


def summary_table(summary: Mapping[str, Any], title: str) -> Table:
    table = Table(title=title, show_header=True, header_style="bold")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("unit")
    known = {field for field, _, _ in _SUMMARY_ROWS}
    for field, label, unit in _SUMMARY_ROWS:
        if field in summary:
            table.add_row(label, fmt(summary[field]), unit)
    for field in summary:
        if field not in known:
            table.add_row(field, fmt(summary[field]), "")
    return table


# (summary field, column label) of the sweep's result table.
_SWEEP_COLUMNS = (
    ("accepted_load", "accepted"),
    ("latency_mean_ns", "latency mean ns"),
    ("latency_p99_ns", "latency p99 ns"),
    ("hops_mean", "hops"),
    ("minimal_fraction", "minimal"),
)


def plus_minus(mean: float | None, half: float) -> str:
    """`mean ± half`, the half-width to two significant digits and the mean to the same
    decimal place: 0.2983 ± 0.0053, 512 ± 16."""
    if mean is None or not math.isfinite(half) or not math.isfinite(mean):
        return f"{fmt(mean)} ± {fmt(half)}"
    if half == 0:
        return f"{fmt(mean)} ± 0"
    decimals = max(0, 1 - math.floor(math.log10(abs(half))))
    return f"{mean:,.{decimals}f} ± {half:,.{decimals}f}"


def sweep_tables(frame: Any) -> list[Table]:
    """The result table of a sweep from its summary frame (`Store.summary_frame`): one row per
    point; with several seeds per point, one row per point but the seed, each metric as
    `mean ± half-width of its 95 % confidence interval` over the seeds (Student t)."""
    from dflab.stats import aggregate
    from dflab.store import coordinate_axes, sort_columns

    coords = [c for c in sort_columns(coordinate_axes(frame.columns)) if c != "seed"]
    seeds = frame.group_by(coords).len()["len"].max() if frame.height else 0
    if seeds is None or seeds <= 1:
        show_seed = frame["seed"].n_unique() > 1
        table = Table(title="sweep results", header_style="bold")
        columns = [*coords, *(["seed"] if show_seed else [])]
        for column in columns:
            table.add_column(column)
        for _, label in _SWEEP_COLUMNS:
            table.add_column(label, justify="right")
        for row in frame.iter_rows(named=True):
            table.add_row(
                *(fmt(row[c]) for c in columns), *(fmt(row[f]) for f, _ in _SWEEP_COLUMNS)
            )
        return [table]
    means = aggregate(frame, coords)
    table = Table(title="sweep results: mean ± 95 % confidence interval over seeds")
    for column in (*coords, "seeds"):
        table.add_column(column)
    for _, label in _SWEEP_COLUMNS:
        table.add_column(label, justify="right")
    for row in means.iter_rows(named=True):
        cells = [fmt(row[c]) for c in coords] + [str(row["seeds"])]
        for field, _ in _SWEEP_COLUMNS:
            mean, half = row.get(f"{field}_mean"), row.get(f"{field}_ci95")
            cells.append(fmt(mean) if half is None else plus_minus(mean, half))
        table.add_row(*cells)
    return [table]


def key_value_table(data: Mapping[str, Any], title: str) -> Table:
    """Nested dicts are flattened to dotted keys (e.g. ports.global)."""
    table = Table(title=title, show_header=False)
    table.add_column("key")
    table.add_column("value", justify="right")

    def add(prefix: str, value: Any) -> None:
        if isinstance(value, Mapping):
            for key, item in value.items():
                add(f"{prefix}.{key}" if prefix else str(key), item)
        else:
            table.add_row(prefix.replace("_", " "), fmt(value))

    add("", data)
    return table


def rows_table(
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[str],
    title: str,
    labels: Mapping[str, str] | None = None,
) -> Table:
    """One row per mapping; `labels` gives short headers for some columns (default: the key).

    The first column names the row, so it is never cut short: it is as wide as its longest
    value, and the other columns wrap their headers instead."""
    labels = labels or {}
    table = Table(title=title, header_style="bold")
    key_width = max((len(fmt(row.get(columns[0]))) for row in rows), default=0)
    for index, column in enumerate(columns):
        if index == 0:
            table.add_column(labels.get(column, column), no_wrap=True, min_width=key_width)
        else:
            table.add_column(labels.get(column, column), justify="right")
    for row in rows:
        table.add_row(*(fmt(row.get(column)) for column in columns))
    return table


# (job row field, column label) of `dflab run`'s job table (docs/workloads.md).
JOB_COLUMNS = {
    "name": "job",
    "ranks": "ranks",
    "finished": "done",
    "exec_us": "exec µs",
    "comm_mean_us": "comm mean µs",
    "comm_std_us": "comm std µs",
    "comm_max_us": "comm max µs",
    "wire_bytes": "wire bytes",
    "injection_rate_gbs": "inj. GB/s",
    "peak_ingress_bytes": "peak ingress B",
    "latency_mean_ns": "lat. mean ns",
    "latency_p99_ns": "lat. p99 ns",
}


def jobs_table(jobs: Sequence[Mapping[str, Any]]) -> Table:
    """One row per job of a workload run."""
    return rows_table(jobs, list(JOB_COLUMNS), "jobs", labels=JOB_COLUMNS)


# (background row field, column label) of `dflab run`'s background table.
BACKGROUND_COLUMNS = {
    "placement": "background",
    "nodes": "nodes",
    "pattern": "pattern",
    "load": "load",
    "offered_load": "offered",
    "accepted_load": "accepted",
    "packets_delivered": "packets",
    "latency_mean_ns": "lat. mean ns",
    "latency_p99_ns": "lat. p99 ns",
}


def background_table(row: Mapping[str, Any]) -> Table:
    """The background traffic beside a workload's jobs."""
    return rows_table([row], list(BACKGROUND_COLUMNS), "background", labels=BACKGROUND_COLUMNS)


def _background(result: Any) -> dict[str, Any] | None:
    w = result.workload
    if w is None or w.background is None:
        return None
    return dict(w.background.to_dicts()[0])


def run_json(result: Any) -> str:
    """`dflab run --json`: the summary, whether it reached a steady state, how the run went,
    the routing's probe totals if it declares any, and a workload run's job rows (and its
    background traffic), as one JSON object."""
    jobs = {"jobs": result.workload.jobs.to_dicts()} if result.workload is not None else {}
    if result.probes.totals:
        jobs["probes"] = {"totals": result.probes.totals}
    background = _background(result)
    if background is not None:
        jobs["background"] = background
    return to_json(
        {
            **result.summary.to_dict(),
            "steady_state": result.diagnostics.steady_state,
            "execution": result.execution.to_dict(),
            **jobs,
        }
    )


def run_tables(result: Any, title: str) -> list[Table]:
    """`dflab run`'s tables: the summary with the run's execution, then a workload's jobs."""
    tables = [summary_table({**result.summary.to_dict(), **result.execution.to_dict()}, title)]
    if result.workload is not None:
        tables.append(jobs_table(result.workload.jobs.to_dicts()))
    background = _background(result)
    if background is not None:
        tables.append(background_table(background))
    return tables
