"""Paper-style figures (HPDC'21 Q-adaptive reproductions): load curves, time series, latency
distributions.

Every function takes plain data (polars frames, dicts) so it can be fed from one or several
result stores, builds a matplotlib ``Figure`` on the Agg canvas (no pyplot state) and, with
``out``, writes it as PNG and returns the path.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from dflab.plot_style import ROUTING_ORDER, log_axis, routing_key, routing_styles, traffic_order
from dflab.plots import _curve_labels as curve_labels
from dflab.store import Store

__all__ = [
    "ROUTING_ORDER",
    "load_curves_figure",
    "plot_latency_distribution",
    "plot_load_curves",
    "plot_series",
    "routing_key",
    "summary_frames",
]

LABELS = {
    "latency_mean_ns": "mean packet latency (µs)",
    "latency_p99_ns": "p99 packet latency (µs)",
    "accepted_load": "accepted load",
    "offered_load": "offered load",
    "hops_mean": "average router hops",
    "minimal_fraction": "minimal fraction",
    "network_latency_mean_ns": "mean network latency (µs)",
}


def _colours(routings: Iterable[str]) -> dict[str, str]:
    return {routing: style.colour for routing, style in routing_styles(routings).items()}


def _scale(column: str) -> float:
    """ns columns are shown in µs."""
    return 1e-3 if column.endswith("_ns") else 1.0


def _new_figure(width: float, height: float) -> Figure:
    figure = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def _save(figure: Figure, out: str | Path | None) -> Path | None:
    if out is None:
        return None
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    return path


def summary_frames(*roots: str | Path, execution: bool = False) -> pl.DataFrame:
    """The finished points of several result stores as one frame (missing stores skipped);
    with `execution`, each point's wall time, events and speed too."""
    frames = [
        _with_execution(Store(root)) if execution else Store(root).summary_frame()
        for root in roots
        if Path(root).is_dir()
    ]
    frames = [frame for frame in frames if not frame.is_empty()]
    return pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame()


def _with_execution(store: Store) -> pl.DataFrame:
    return store.summary_frame().join(store.execution_frame(), on="hash", how="left")


def load_curves_figure(
    frame: pl.DataFrame,
    metrics: Sequence[str] = ("latency_mean_ns", "accepted_load", "hops_mean"),
    *,
    log_latency: bool = True,
) -> Figure:
    """One column per traffic pattern, one row per metric, one line per routing vs offered load
    (the sweep's nominal ``load``), or per routing and value of each other swept key that varies
    ("ACOR sequence=3L", "VAL policy=crg-sw", as `dflab plot` labels them); seeds averaged."""
    curves = (
        curve_labels(frame, "load")
        .group_by(["traffic", "curve", "load"])
        .agg(*(pl.col(metric).mean() for metric in metrics))
        .sort(["traffic", "curve", "load"])
    )
    traffics = sorted(curves["traffic"].unique().to_list(), key=traffic_order)
    routings = sorted(curves["curve"].unique().to_list(), key=routing_key)
    styles = routing_styles(routings)
    figure = _new_figure(4.0 * len(traffics), 2.8 * len(metrics))
    axes = figure.subplots(len(metrics), len(traffics), squeeze=False, sharex=True)
    for column, traffic in enumerate(traffics):
        for row, metric in enumerate(metrics):
            ax = axes[row][column]
            for routing in routings:
                line = curves.filter((pl.col("traffic") == traffic) & (pl.col("curve") == routing))
                if line.is_empty():
                    continue
                values = [v * _scale(metric) for v in line[metric].to_list()]
                ax.plot(
                    line["load"].to_list(),
                    values,
                    label=routing,
                    **styles[routing].line_kwargs(),
                )
            if metric == "accepted_load":
                ax.plot([0, 1], [0, 1], ":", color="grey", linewidth=1)
                ax.set_ylim(0, 1.02)
            if log_latency and "latency" in metric:
                log_axis(ax)
            ax.set_ylabel(LABELS.get(metric, metric))
            ax.grid(True, which="both", alpha=0.3)
            if row == 0:
                ax.set_title(traffic.upper())
            if row == len(metrics) - 1:
                ax.set_xlabel("offered load")
            ax.set_xlim(0, 1.0)
    # One legend with every routing, even those missing from the first panel.
    handles: dict[str, Any] = {}
    for ax in figure.axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    order = sorted(handles, key=routing_key)
    axes[0][0].legend([handles[k] for k in order], order, fontsize="small")
    return figure


def plot_load_curves(
    source: pl.DataFrame | Store | str | Path,
    out: str | Path | None = None,
    metrics: Sequence[str] = ("latency_mean_ns", "accepted_load", "hops_mean"),
    **kwargs: Any,
) -> Figure:
    """``source``: a summary frame, a ``Store`` or a store directory."""
    if isinstance(source, Store):
        frame = source.summary_frame()
    elif isinstance(source, pl.DataFrame):
        frame = source
    else:
        frame = Store(source).summary_frame()
    figure = load_curves_figure(frame, metrics, **kwargs)
    _save(figure, out)
    return figure


def plot_series(
    frames: Mapping[str, pl.DataFrame],
    columns: str | Sequence[str] = "latency_mean_ns",
    out: str | Path | None = None,
    *,
    log: Sequence[str] = ("latency_mean_ns", "latency_p99_ns"),
    marks_us: Sequence[float] = (),
    title: str | None = None,
) -> Figure:
    """Per-window series over time (x = window midpoint, µs), one line per labelled frame, one
    panel per column; ``marks_us`` draws vertical lines (e.g. a load step, the warm-up end)."""
    columns = [columns] if isinstance(columns, str) else list(columns)
    figure = _new_figure(8.0, 2.6 * len(columns))
    axes = figure.subplots(len(columns), 1, squeeze=False, sharex=True)
    for row, column in enumerate(columns):
        ax = axes[row][0]
        for index, (label, frame) in enumerate(frames.items()):
            mid = ((frame["window_start_us"] + frame["window_end_us"]) / 2).to_list()
            values = [None if v is None else v * _scale(column) for v in frame[column].to_list()]
            ax.plot(mid, values, "-", color=f"C{index % 10}", label=label, linewidth=1.3)
        for mark in marks_us:
            ax.axvline(mark, color="grey", linestyle=":", linewidth=1)
        if column in log:
            log_axis(ax)
        ax.set_ylabel(LABELS.get(column, column))
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].legend(fontsize="small")
    if title:
        axes[0][0].set_title(title)
    axes[-1][0].set_xlabel("simulated time (µs)")
    _save(figure, out)
    return figure


def plot_latency_distribution(
    rows: Sequence[Mapping[str, Any]],
    out: str | Path | None = None,
    *,
    panel: str = "traffic",
    log: bool = True,
    columns: int | None = None,
) -> Figure:
    """Box/whisker-style latency distribution from percentiles, one panel per ``panel`` value,
    one box per routing: box p50→p95, whisker p95→p99, cross = max, diamond = mean.

    ``rows``: dicts (or a frame's ``to_dicts()``) with ``routing``, the ``panel`` key and
    ``latency_{mean,p50,p95,p99,max}_ns``."""
    panels = sorted({row[panel] for row in rows}, key=traffic_order)
    ncols = min(columns or len(panels), len(panels)) or 1
    nrows = -(-len(panels) // ncols)
    width = max(4.5, 0.75 * len({row["routing"] for row in rows}))
    figure = _new_figure(width * ncols, 4.2 * nrows)
    grid = figure.subplots(nrows, ncols, squeeze=False)
    flat = [ax for line in grid for ax in line]
    for unused in flat[len(panels) :]:
        unused.set_visible(False)
    colours = _colours(row["routing"] for row in rows)
    for column, name in enumerate(panels):
        ax = flat[column]
        mine = sorted(
            (r for r in rows if r[panel] == name), key=lambda r: routing_key(r["routing"])
        )
        for x, row in enumerate(mine):
            us = {k: row[f"latency_{k}_ns"] / 1000 for k in ("mean", "p50", "p95", "p99", "max")}
            colour = colours[row["routing"]]
            ax.bar(
                x,
                us["p95"] - us["p50"],
                bottom=us["p50"],
                width=0.6,
                color=colour,
                alpha=0.35,
                edgecolor=colour,
            )
            ax.plot([x - 0.3, x + 0.3], [us["p50"]] * 2, color="black", linewidth=1.5)
            ax.plot([x, x], [us["p95"], us["p99"]], color=colour, linewidth=1.5)
            ax.plot([x - 0.15, x + 0.15], [us["p99"]] * 2, color=colour, linewidth=1.5)
            ax.plot(x, us["max"], "x", color=colour)
            ax.plot(x, us["mean"], "D", color="black", markersize=4)
            ax.annotate(
                f"{us['p99']:.3g}",
                (x, us["p99"]),
                textcoords="offset points",
                xytext=(8, 0),
                fontsize="x-small",
                va="center",
            )
        ax.set_xticks(range(len(mine)), [r["routing"] for r in mine], rotation=30)
        if log:
            log_axis(ax)
            if mine:
                low = min(min(r["latency_p50_ns"], r["latency_mean_ns"]) for r in mine) / 1000
                ax.set_ylim(bottom=0.8 * low)
        ax.set_title(str(name).upper())
        ax.set_ylabel("packet latency (µs)")
        ax.grid(True, axis="y", which="both", alpha=0.3)
    keys = [
        Line2D([], [], marker="D", color="black", linestyle="", markersize=4),
        Line2D([], [], color="black"),
        Line2D([], [], marker="x", color="grey", linestyle=""),
    ]
    labels = ["mean", "p50; box to p95, whisker to p99 (value)", "max"]
    figure.legend(keys, labels, loc="outside lower center", ncols=3, fontsize="small")
    _save(figure, out)
    return figure
