"""ICS'24 Figs. 7-16 as the paper draws them: mean packet latency against offered load, one
panel per figure, one curve per routing, from the points the saturation searches ran (every
probe of `dflab saturation` is a stored point, docs/ugal-le-results.md). The searches bisect
toward the knee, so a curve has its points around its own saturation load (the lowest probe is
0.2-0.4), not an even grid; the paper's saturation load of each routing is marked on the load
axis in the routing's colour, and the campaigns' criterion (mean latency at most 120 cycles)
as a dashed line.

    .venv/bin/python experiments/ics24/curves.py [RESULTS] [--out FILE]

RESULTS is the directory of experiments/ics24/run.sh (default results/ics24). Figures whose
campaign has not run are left out. Which sweep is which figure is read from the campaign files
(python/dflab/studies/ics24-*.toml: the `sweeps` and `source` of their checks).
"""

from __future__ import annotations

import argparse
import re
import tomllib
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import polars as pl

STUDIES = Path(__file__).resolve().parents[2] / "python" / "dflab" / "studies"
CAMPAIGNS = {  # result directory of run.sh -> campaign file
    "shift": "ics24-shift",
    "ics24-perm": "ics24-perm",
    "ics24-router-mix": "ics24-router-mix",
    "ics24-node-mix": "ics24-node-mix",
}
ROUTINGS = ("UGAL-L", "UGAL-LE", "PAR", "UGAL-G-path", "DGB", "EDGB")
COLOURS = {r: f"C{i}" for i, r in enumerate(ROUTINGS)}
CRITERION_NS = 120.0
Y_MAX_NS = 400.0


def figure_map(campaign: str) -> tuple[dict[str, int], dict[tuple[int, str], float]]:
    """The figure of each sweep of `campaign`, and the paper's saturation load per (figure,
    routing), from its checks."""
    doc = tomllib.loads((STUDIES / f"{campaign}.toml").read_text())
    sweeps: dict[str, int] = {}
    paper: dict[tuple[int, str], float] = {}
    for check in doc.get("checks", []):
        fig = re.search(r"Fig\. (\d+)", check.get("source", ""))
        if not fig or check.get("metric") != "saturation_load":
            continue
        number = int(fig.group(1))
        for sweep in check.get("sweeps", []):
            sweeps[sweep] = number
        routing = (check.get("where") or {}).get("routing")
        absolute = "relative_to" not in check  # a ratio (Fig. 11) marks no load
        if routing and absolute and isinstance(check.get("paper"), int | float):
            paper[(number, routing)] = float(check["paper"])
    return sweeps, paper


def points(results: Path) -> tuple[pl.DataFrame, dict[tuple[int, str], float]]:
    """Every stored point of the campaigns under `results` with its figure, and the paper's
    saturation loads."""
    frames, paper = [], {}
    for directory, campaign in CAMPAIGNS.items():
        sweeps, marks = figure_map(campaign)
        paper.update(marks)
        for sweep, number in sweeps.items():
            path = results / directory / sweep / "summary.parquet"
            if not path.exists():
                continue
            frame = pl.read_parquet(path).select("routing", "offered_load", "latency_mean_ns")
            frames.append(frame.with_columns(pl.lit(number).alias("figure")))
    if not frames:
        return pl.DataFrame(), paper
    return pl.concat(frames).sort("figure", "routing", "offered_load"), paper


def draw(frame: pl.DataFrame, paper: dict[tuple[int, str], float], out: Path) -> None:
    figures = sorted(frame["figure"].unique())
    ncols = 4
    nrows = -(-len(figures) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.3 * ncols, 2.7 * nrows), squeeze=False)
    for ax, number in zip(axes.flat, figures, strict=False):
        sub = frame.filter(pl.col("figure") == number)
        for routing in ROUTINGS:
            curve = sub.filter(pl.col("routing") == routing)
            if curve.is_empty():
                continue
            colour = COLOURS[routing]
            ax.plot(
                curve["offered_load"],
                curve["latency_mean_ns"].clip(upper_bound=Y_MAX_NS),
                "o-",
                ms=2.5,
                lw=1,
                color=colour,
                label=routing,
            )
            if (number, routing) in paper:
                ax.plot(paper[(number, routing)], 0, "^", color=colour, ms=6, clip_on=False)
        ax.axhline(CRITERION_NS, color="0.5", lw=0.8, ls="--")
        ax.set_ylim(0, Y_MAX_NS)
        ax.set_xlim(0.2, 1.0)
        ax.set_title(f"Fig. {number}", fontsize=9)
        ax.tick_params(labelsize=7)
    for ax in axes.flat[len(figures) :]:
        ax.axis("off")
    for row in axes:
        row[0].set_ylabel("mean latency (cycles)", fontsize=8)
    for ax in axes[-1]:
        ax.set_xlabel("offered load", fontsize=8)
    handles, labels = [], []
    for ax in axes.flat:
        for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if label not in labels:
                handles.append(h)
                labels.append(label)
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(out, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="?", type=Path, default=Path("results/ics24"))
    ap.add_argument("--out", type=Path, default=Path("ics24_curves.png"))
    args = ap.parse_args()
    frame, paper = points(args.results)
    if frame.is_empty():
        raise SystemExit(f"no campaign points under {args.results}: run experiments/ics24/run.sh")
    draw(frame, paper, args.out)
    print(f"wrote {args.out}: {frame.height} points, figures {sorted(frame['figure'].unique())}")


if __name__ == "__main__":
    main()
