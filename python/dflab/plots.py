"""Latency/throughput vs offered load from a result store (`dflab plot`).

One column of panels per traffic pattern; rows: mean packet latency, p99 latency (with `p99`),
accepted vs offered load. One curve per routing (per routing and value of each other swept key,
when the sweep had `[sweep]` axes), with its own colour, marker and line style in every panel
(`dflab.plot_style`). The x axis is the offered load, or, for a store of one load and one
numeric swept key, that key. Seeds of the same point are averaged, with bars of the 95 %
confidence interval of the mean (Student t, `dflab.stats`) when there are several. Saturated
points, where the network accepts clearly less than is offered (their latency grows with the
run length, so it is not a property of the network), are drawn hollow. The title says what
was simulated (`dflab.caption`); the legend sits below the panels, never on the data. Uses
matplotlib's object API on the Agg canvas: no display, no pyplot state.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import polars as pl
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from dflab.caption import store_caption
from dflab.errors import UserError
from dflab.outputs import check_output, figure_path, figure_suffixes, save_figure
from dflab.plot_style import Style, log_axis, routing_key, routing_styles, traffic_order
from dflab.stats import t_quantile
from dflab.store import Store, coordinate_axes

__all__ = [
    "curve_points",
    "latency_throughput_figure",
    "output_paths",
    "plot_store",
    "store_figure",
    "traffic_order",
]

# A point is saturated when its accepted load is below (1 - SATURATION_GAP) x its offered load.
SATURATION_GAP = 0.05

# Row metric -> (summary column, scale to the plotted unit, y label).
_METRICS = {
    "latency_mean": ("latency_mean_ns", 1e-3, "mean packet latency (µs)"),
    "latency_p99": ("latency_p99_ns", 1e-3, "p99 packet latency (µs)"),
    "accepted": ("accepted_load", 1.0, "accepted load"),
}


def _x_column(frame: pl.DataFrame) -> str:
    """The offered load, or the one numeric swept key of a store with one load."""
    if frame["load"].n_unique() > 1:
        return "load"
    numeric = [
        axis
        for axis in coordinate_axes(frame.columns)
        if frame.schema[axis].is_numeric() and frame[axis].n_unique() > 1
    ]
    return numeric[0] if len(numeric) == 1 else "load"


def _curve_labels(frame: pl.DataFrame, x: str) -> pl.DataFrame:
    """A `curve` column: the routing, with the value of every other swept key that varies
    (left out where the point's sweep does not have that key: sweeps over different keys drawn
    together)."""
    axes = [a for a in coordinate_axes(frame.columns) if a != x and frame[a].n_unique() > 1]
    label = pl.col("routing")
    for axis in axes:
        short = axis.rsplit(".", 1)[-1]
        value = pl.col(axis).cast(pl.String)
        part = pl.when(value.is_null()).then(pl.lit("")).otherwise(pl.lit(f" {short}=") + value)
        label = pl.concat_str([label, part])
    return frame.with_columns(label.alias("curve"))


def curve_points(frame: pl.DataFrame, x: str = "load") -> pl.DataFrame:
    """One row per (traffic, curve, x): each metric's mean over seeds and the half-width of its
    95 % confidence interval (null for one seed), the number of seeds, and whether the point
    is saturated."""
    frame = _curve_labels(frame, x)
    aggregates: list[pl.Expr] = [
        pl.col("seed").n_unique().alias("seeds"),
        pl.col("load").mean().alias("offered"),
        pl.first("routing").alias("routing"),
    ]
    for metric, (column, scale, _) in _METRICS.items():
        value = pl.col(column).cast(pl.Float64) * scale
        aggregates += [
            value.mean().alias(metric),
            value.std(ddof=1).alias(f"{metric}_std"),
            value.count().alias(f"{metric}_n"),
        ]
    curves = frame.group_by(["traffic", "curve", x]).agg(aggregates).rename({x: "x"})
    for metric in _METRICS:
        n = curves[f"{metric}_n"].to_list()
        quantile = [t_quantile(0.975, k - 1) if k > 1 else None for k in n]
        half = pl.Series(quantile, dtype=pl.Float64) * curves[f"{metric}_std"]
        half = half / pl.Series([math.sqrt(k) if k > 1 else None for k in n], dtype=pl.Float64)
        curves = curves.with_columns(half.alias(f"{metric}_ci"))
    saturated = pl.col("accepted") < (1.0 - SATURATION_GAP) * pl.col("offered")
    return curves.with_columns(saturated.fill_null(False).alias("saturated")).sort(
        ["traffic", "curve", "x"]
    )


def _draw_curve(ax: Any, line: pl.DataFrame, metric: str, routing: str, style: Style) -> None:
    """One curve of `metric`: the line, 95 % confidence bars over seeds, and its markers,
    filled where the network keeps up and hollow where it is saturated. The artists carry the
    curve's label ('_' hides the markers' from an automatic legend)."""
    if metric != "accepted":  # log axis: an empty sample (null) or 0 has no place on it
        line = line.filter(pl.col(metric) > 0)
    if line.is_empty():
        return
    x, y = line["x"].to_list(), line[metric].to_list()
    ax.plot(x, y, color=style.colour, linestyle=style.linestyle, linewidth=1.4, label=routing)
    spread = line.filter((pl.col("seeds") > 1) & pl.col(f"{metric}_ci").is_not_null())
    if not spread.is_empty():
        half = spread[f"{metric}_ci"].to_numpy()
        mean = spread[metric].to_numpy()
        # On the log axes, a bar reaching 0 or below is cut at a tenth of the mean.
        lower = half if metric == "accepted" else half.clip(max=0.9 * mean)
        ax.errorbar(
            spread["x"].to_list(),
            mean,
            yerr=[lower, half],
            fmt="none",
            ecolor=style.colour,
            elinewidth=1,
            capsize=2.5,
        )
    for saturated in (False, True):
        part = line.filter(pl.col("saturated") == saturated)
        if part.is_empty():
            continue
        ax.plot(
            part["x"].to_list(),
            part[metric].to_list(),
            linestyle="",
            marker=style.marker,
            color=style.colour,
            markersize=style.markersize,
            zorder=style.zorder,
            markerfacecolor="white" if saturated else style.colour,
            label=f"_{routing} {'saturated' if saturated else 'points'}",
        )


def _legend(figure: Figure, styles: dict[str, Style], any_saturated: bool) -> None:
    """One legend for the whole figure, below the panels (it never covers data)."""
    handles = [Line2D([], [], linewidth=1.4, **style.line_kwargs()) for style in styles.values()]
    labels = list(styles)
    if any_saturated:
        handles.append(
            Line2D([], [], linestyle="", marker="o", color="grey", markerfacecolor="white")
        )
        labels.append(f"saturated: accepted < {1 - SATURATION_GAP:.0%} of offered")
    figure.legend(
        handles, labels, loc="outside lower center", ncols=min(len(labels), 5), fontsize="small"
    )


def _format_axis(
    ax: Any, metric: str, *, top: bool, bottom: bool, traffic: str, x: str = "load"
) -> None:
    if metric == "accepted":
        if x == "load":  # the ideal network delivers everything offered
            ax.plot([0, 1], [0, 1], ":", color="grey", linewidth=1)
        ax.set_ylim(0, 1.02)
    else:
        log_axis(ax)
    if x == "load":
        ax.set_xlim(0, 1.02)
    ax.set_ylabel(_METRICS[metric][2])
    ax.grid(True, which="both", alpha=0.3)
    if top:
        ax.set_title(traffic.upper())
    if bottom:
        ax.set_xlabel("offered load" if x == "load" else x)


def latency_throughput_figure(
    frame: pl.DataFrame, *, p99: bool = False, caption: str | None = None
) -> Figure:
    """The figure of a store's summary frame; `caption` becomes the figure's title."""
    x = _x_column(frame)
    curves = curve_points(frame, x)
    traffics = sorted(curves["traffic"].unique().to_list(), key=traffic_order)
    styles = routing_styles(curves["curve"].unique().to_list())
    metrics = ["latency_mean", *(["latency_p99"] if p99 else []), "accepted"]

    figure = Figure(figsize=(4.2 * len(traffics), 2.9 * len(metrics) + 1.2), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(len(metrics), len(traffics), squeeze=False, sharex=True)
    for column, traffic in enumerate(traffics):
        for row, metric in enumerate(metrics):
            ax = axes[row][column]
            for routing in sorted(styles, key=routing_key):
                line = curves.filter((pl.col("traffic") == traffic) & (pl.col("curve") == routing))
                _draw_curve(ax, line, metric, routing, styles[routing])
            last = row == len(metrics) - 1
            _format_axis(ax, metric, top=row == 0, bottom=last, traffic=traffic, x=x)
    _legend(figure, styles, bool(curves["saturated"].any()))
    if caption:
        figure.suptitle(caption, fontsize="medium")
    return figure


def output_paths(root: str | Path, out: str | Path | None, *, pdf: bool) -> list[Path]:
    """The files `plot_store` writes: the figure (DIR/latency_throughput.png by default; a name
    without a suffix gets '.png'), then, with `pdf`, a PDF beside it."""
    figure = figure_path(out) if out is not None else Path(root) / "latency_throughput.png"
    paths = [figure]
    if pdf and figure.suffix.lower() != ".pdf":
        paths.append(figure.with_suffix(".pdf"))
    return paths


def _caption(store: Store, frame: pl.DataFrame) -> str | None:
    records = store.points()
    config = next((r["config"] for r in records if isinstance(r.get("config"), dict)), None)
    if config is None:
        return None
    names = {r.get("name") for r in records if r.get("name")}
    by = ["traffic", "routing", *coordinate_axes(frame.columns), "load"]
    seeds = frame.group_by(by).agg(pl.col("seed").n_unique())
    caption = store_caption(config, min(names) if names else None, seeds["seed"].to_list())
    if _x_column(frame) != "load":  # the load is no axis of the figure: name it
        caption += f" · offered load {frame['load'][0]:g}"
    return caption


def store_figure(store: Store, *, p99: bool = False) -> Figure:
    """The figure of a result store, titled with its configuration."""
    frame = store.summary_frame()
    if frame.is_empty():
        raise UserError(f"result directory '{store.root}' has no finished points")
    return latency_throughput_figure(frame, p99=p99, caption=_caption(store, frame))


def plot_store(
    root: str | Path,
    out: str | Path | None = None,
    *,
    p99: bool = False,
    pdf: bool = False,
    option: str = "--out",
) -> list[Path]:
    """Write the latency/throughput figure of a store; the written paths (figure, then PDF).
    The output paths are checked before the store is read (problems name `option`)."""
    store = Store(root)
    if not store.root.is_dir():
        raise UserError(f"result directory '{store.root}' not found")
    paths = [
        check_output(option, path, figure_suffixes()) for path in output_paths(root, out, pdf=pdf)
    ]
    figure = store_figure(store, p99=p99)
    save_figure(figure, paths, option, dpi=120)
    return paths
