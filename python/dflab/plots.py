"""Latency/throughput vs offered load from a result store.

One column of panels per traffic pattern; top row mean packet latency (p99 dashed, optional),
bottom row accepted vs offered load; one line per routing, the same colour in every panel.
Seeds of the same point are averaged. Uses matplotlib's object API on the Agg canvas, so no
display and no global pyplot state are involved.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from dflab.errors import UserError
from dflab.store import Store


def traffic_order(pattern: str) -> tuple[int, int, str]:
    """Panels left to right: ur, adv+1, adv+2, ..., adv+h, perm, then anything else."""
    if pattern == "ur":
        return (0, 0, pattern)
    if pattern.startswith("adv+"):
        offset = pattern[4:]
        return (1, int(offset), pattern) if offset.isdigit() else (2, 0, pattern)
    return (3 if pattern == "perm" else 4, 0, pattern)


def _curves(frame: pl.DataFrame) -> pl.DataFrame:
    return (
        frame.group_by(["traffic", "routing", "load"])
        .agg(
            pl.col("accepted_load").mean(),
            (pl.col("latency_mean_ns").mean() / 1000).alias("latency_mean_us"),
            (pl.col("latency_p99_ns").mean() / 1000).alias("latency_p99_us"),
        )
        .sort(["traffic", "routing", "load"])
    )


def latency_throughput_figure(frame: pl.DataFrame, *, p99: bool = False) -> Figure:
    curves = _curves(frame)
    traffics = sorted(curves["traffic"].unique().to_list(), key=traffic_order)
    routings = sorted(curves["routing"].unique().to_list())
    colours = {r: f"C{i % 10}" for i, r in enumerate(routings)}

    figure = Figure(figsize=(4.2 * len(traffics), 7.0), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(2, len(traffics), squeeze=False, sharex=True)
    for column, traffic in enumerate(traffics):
        latency_ax, accepted_ax = axes[0][column], axes[1][column]
        for routing in routings:
            line = curves.filter((pl.col("traffic") == traffic) & (pl.col("routing") == routing))
            if line.is_empty():
                continue
            load = line["load"].to_list()
            colour = colours[routing]
            latency_ax.plot(
                load, line["latency_mean_us"].to_list(), "o-", color=colour, label=routing
            )
            if p99:
                latency_ax.plot(
                    load,
                    line["latency_p99_us"].to_list(),
                    "--",
                    color=colour,
                    label=f"{routing} p99",
                )
            accepted_ax.plot(
                load, line["accepted_load"].to_list(), "o-", color=colour, label=routing
            )
        latency_ax.set_title(traffic.upper())
        # Latency spans decades near saturation: log scale, with plain 1-2-5 labels.
        latency_ax.set_yscale("log")
        latency_ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        latency_ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        latency_ax.yaxis.set_minor_formatter(NullFormatter())
        latency_ax.set_ylabel("packet latency (µs)")
        latency_ax.grid(True, which="both", alpha=0.3)
        latency_ax.legend(fontsize="small")
        # The ideal network delivers everything offered.
        accepted_ax.plot([0, 1], [0, 1], ":", color="grey", linewidth=1)
        accepted_ax.set_xlim(0, 1.02)
        accepted_ax.set_ylim(0, 1.02)
        accepted_ax.set_xlabel("offered load")
        accepted_ax.set_ylabel("accepted load")
        accepted_ax.grid(True, alpha=0.3)
    return figure


def plot_store(
    root: str | Path, out: str | Path | None = None, *, p99: bool = False, pdf: bool = False
) -> list[Path]:
    """Write the latency/throughput figure of a store; the written paths (PNG, then PDF)."""
    store = Store(root)
    if not store.root.is_dir():
        raise UserError(f"result directory '{store.root}' not found")
    frame = store.summary_frame()
    if frame.is_empty():
        raise UserError(f"result directory '{store.root}' has no finished points")
    png = Path(out) if out is not None else store.root / "latency_throughput.png"
    png.parent.mkdir(parents=True, exist_ok=True)
    figure = latency_throughput_figure(frame, p99=p99)
    figure.savefig(png, dpi=120)
    written = [png]
    if pdf:
        figure.savefig(png.with_suffix(".pdf"))
        written.append(png.with_suffix(".pdf"))
    return written
