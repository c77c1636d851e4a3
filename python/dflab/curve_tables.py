"""The numbers behind a load-curves figure, as Markdown tables (`curves.md` of `dflab
reproduce`).

One table per traffic pattern, one row per curve of the figure (the routing, with the value of
every other swept key that varies, labelled as the legend labels it), one column per offered
load. A cell is the mean packet latency in ns (mean over the seeds); where the point is
saturated (accepted load below 95 % of the offered, `plots.SATURATION_GAP`, the points the
figures draw hollow) the accepted load follows in parentheses, because past saturation the
latency grows with the run length and the accepted load is the number that describes the
network. A curve without a point at some load has an empty cell there.
"""

from __future__ import annotations

import polars as pl

from dflab.plot_style import routing_key, traffic_order
from dflab.plots import curve_points


def _cell(latency_us: float | None, accepted: float | None, saturated: bool) -> str:
    if latency_us is None:
        return "—" if accepted is None else f"— ({accepted:.3f})"
    text = f"{latency_us * 1e3:.0f}"
    return f"{text} ({accepted:.3f})" if saturated and accepted is not None else text


def curve_tables(frame: pl.DataFrame) -> str:
    """The Markdown tables of the load curves in `frame` (a summary frame, as `Store.
    summary_frame` or `checks.Results.frame` give), or "" when it holds no point."""
    if frame.is_empty():
        return ""
    points = curve_points(frame, "load")
    blocks = []
    for traffic in sorted(points["traffic"].unique().to_list(), key=traffic_order):
        rows = points.filter(pl.col("traffic") == traffic)
        loads = sorted(rows["x"].unique().to_list())
        header = f"| {traffic.upper()} | " + " | ".join(f"{load:g}" for load in loads) + " |"
        lines = [header, "|---" * (len(loads) + 1) + "|"]
        for curve in sorted(rows["curve"].unique().to_list(), key=routing_key):
            line = rows.filter(pl.col("curve") == curve)
            by_load = {r["x"]: r for r in line.iter_rows(named=True)}
            cells = [
                _cell(r["latency_mean"], r["accepted"], r["saturated"]) if r else ""
                for r in (by_load.get(load) for load in loads)
            ]
            lines.append(f"| {curve} | " + " | ".join(cells) + " |")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"
