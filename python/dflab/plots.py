"""Latency/throughput vs offered load from a result store (`dflab plot`).

One column of panels per traffic pattern; rows: mean packet latency, p99 latency (with `p99`),
accepted vs offered load. One curve per routing, with its own colour, marker and line style in
every panel (`dflab.plot_style`). Seeds of the same point are averaged, with min-max bars when
there are several. Saturated points, where the network accepts clearly less than is offered
(their latency grows with the run length, so it is not a property of the network), are drawn
hollow. The title says what was simulated (`dflab.caption`); the legend sits below the panels,
never on the data. Uses matplotlib's object API on the Agg canvas: no display, no pyplot state.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from dflab.caption import store_caption
from dflab.errors import UserError
from dflab.outputs import check_output, figure_path, figure_suffixes, write_failed
from dflab.plot_style import Style, log_axis, routing_key, routing_styles, traffic_order
from dflab.store import Store

__all__ = [
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


def _curves(frame: pl.DataFrame) -> pl.DataFrame:
    """One row per (traffic, routing, load): each metric's mean, min and max over seeds, the
    number of seeds, and whether the point is saturated."""
    aggregates: list[pl.Expr] = [pl.col("seed").n_unique().alias("seeds")]
    for metric, (column, scale, _) in _METRICS.items():
        value = pl.col(column).cast(pl.Float64) * scale
        aggregates += [
            value.mean().alias(metric),
            value.min().alias(f"{metric}_min"),
            value.max().alias(f"{metric}_max"),
        ]
    curves = frame.group_by(["traffic", "routing", "load"]).agg(aggregates)
    saturated = pl.col("accepted") < (1.0 - SATURATION_GAP) * pl.col("load")
    return curves.with_columns(saturated.fill_null(False).alias("saturated")).sort(
        ["traffic", "routing", "load"]
    )


def _draw_curve(ax: Any, line: pl.DataFrame, metric: str, routing: str, style: Style) -> None:
    """One routing's curve of `metric`: the line, min-max bars over seeds, and its markers,
    filled where the network keeps up and hollow where it is saturated. The artists carry the
    routing as label ('_' hides the markers' from an automatic legend)."""
    if metric != "accepted":  # log axis: an empty sample (null) or 0 has no place on it
        line = line.filter(pl.col(metric) > 0)
    if line.is_empty():
        return
    x, y = line["load"].to_list(), line[metric].to_list()
    ax.plot(x, y, color=style.colour, linestyle=style.linestyle, linewidth=1.4, label=routing)
    spread = line.filter(pl.col("seeds") > 1)
    if not spread.is_empty():
        mean = spread[metric].to_numpy()
        # Clipped at 0: the mean of equal values may differ from them in the last bit.
        bars = [
            (mean - spread[f"{metric}_min"].to_numpy()).clip(min=0),
            (spread[f"{metric}_max"].to_numpy() - mean).clip(min=0),
        ]
        ax.errorbar(
            spread["load"].to_list(),
            mean,
            yerr=bars,
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
            part["load"].to_list(),
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


def _format_axis(ax: Any, metric: str, *, top: bool, bottom: bool, traffic: str) -> None:
    if metric == "accepted":
        # The ideal network delivers everything offered.
        ax.plot([0, 1], [0, 1], ":", color="grey", linewidth=1)
        ax.set_ylim(0, 1.02)
    else:
        log_axis(ax)
    ax.set_xlim(0, 1.02)
    ax.set_ylabel(_METRICS[metric][2])
    ax.grid(True, which="both", alpha=0.3)
    if top:
        ax.set_title(traffic.upper())
    if bottom:
        ax.set_xlabel("offered load")


def latency_throughput_figure(
    frame: pl.DataFrame, *, p99: bool = False, caption: str | None = None
) -> Figure:
    """The figure of a store's summary frame; `caption` becomes the figure's title."""
    curves = _curves(frame)
    traffics = sorted(curves["traffic"].unique().to_list(), key=traffic_order)
    styles = routing_styles(curves["routing"].unique().to_list())
    metrics = ["latency_mean", *(["latency_p99"] if p99 else []), "accepted"]

    figure = Figure(figsize=(4.2 * len(traffics), 2.9 * len(metrics) + 1.2), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(len(metrics), len(traffics), squeeze=False, sharex=True)
    for column, traffic in enumerate(traffics):
        for row, metric in enumerate(metrics):
            ax = axes[row][column]
            for routing in sorted(styles, key=routing_key):
                line = curves.filter(
                    (pl.col("traffic") == traffic) & (pl.col("routing") == routing)
                )
                _draw_curve(ax, line, metric, routing, styles[routing])
            last = row == len(metrics) - 1
            _format_axis(ax, metric, top=row == 0, bottom=last, traffic=traffic)
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
    seeds = frame.group_by(["traffic", "routing", "load"]).agg(pl.col("seed").n_unique())
    return store_caption(config, min(names) if names else None, seeds["seed"].to_list())


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
    for path in paths:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            figure.savefig(path, dpi=120)
        except OSError as exc:
            raise write_failed(option, path, exc) from None
    return paths
