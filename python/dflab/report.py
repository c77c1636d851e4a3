"""Rich tables and JSON rendering for the CLI (no computation happens here)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
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


def sweep_table(records: Iterable[Mapping[str, Any]], show_seed: bool) -> Table:
    table = Table(title="sweep results", header_style="bold")
    columns = ["routing", "traffic", "load", *(["seed"] if show_seed else [])]
    for column in columns:
        table.add_column(column)
    for column in ("accepted", "latency mean ns", "latency p99 ns", "hops", "minimal"):
        table.add_column(column, justify="right")
    for record in records:
        coords, summary = record["coords"], record["summary"]
        table.add_row(
            *(fmt(coords[column]) for column in columns),
            fmt(summary["accepted_load"]),
            fmt(summary["latency_mean_ns"]),
            fmt(summary["latency_p99_ns"]),
            fmt(summary["hops_mean"]),
            fmt(summary["minimal_fraction"]),
        )
    return table


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
