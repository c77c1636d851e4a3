"""ICS'24 saturation figures side by side: for every figure a campaign checked (Figs. 6-10 and
12-16), dflab's saturation load next to the paper's, per routing, from the campaigns'
`checks.csv` (docs/ugal-le-results.md). Campaigns not run yet are left out; checks that are
ratios (Fig. 11 states no number) are not drawn.

    .venv/bin/python experiments/ics24/saturation_bars.py [RESULTS] [--out FILE]

RESULTS is the directory of experiments/ics24/run.sh (default results/ics24).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import polars as pl

CAMPAIGNS = ("shift", "ics24-perm", "ics24-router-mix", "ics24-node-mix")
ROUTINGS = ("UGAL-L", "UGAL-LE", "PAR", "UGAL-G", "DGB", "EDGB")


def rows(results: Path) -> pl.DataFrame:
    """One row per (figure, routing) with a number: figure, routing, dflab, paper, status."""
    out = []
    for name in CAMPAIGNS:
        path = results / name / "checks.csv"
        if not path.exists():
            continue
        for r in pl.read_csv(path, infer_schema_length=0).iter_rows(named=True):
            fig = re.search(r"Fig\. (\d+)", r["source"] or "")
            routing = next((x for x in ROUTINGS if re.search(rf"\b{x}\b(?!-)", r["name"])), None)
            if not fig or not routing or "/" in r["name"] or not r["paper"] or not r["value"]:
                continue
            out.append(
                (int(fig.group(1)), routing, float(r["value"]), float(r["paper"]), r["status"])
            )
    cols = ["figure", "routing", "dflab", "paper", "status"]
    return pl.DataFrame(out, schema=cols, orient="row").unique(["figure", "routing"], keep="last")


def draw(frame: pl.DataFrame, out: Path) -> None:
    figures = sorted(frame["figure"].unique())
    ncols = 4
    nrows = -(-len(figures) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.2 * ncols, 2.6 * nrows), squeeze=False)
    for ax, number in zip(axes.flat, figures, strict=False):
        sub = frame.filter(pl.col("figure") == number)
        names = [r for r in ROUTINGS if r in sub["routing"].to_list()]
        at = {r: i for i, r in enumerate(names)}
        for r in sub.iter_rows(named=True):
            x = at[r["routing"]]
            ax.bar(x - 0.2, r["paper"], 0.4, color="0.75")
            ax.bar(
                x + 0.2,
                r["dflab"],
                0.4,
                color="C3" if abs(r["dflab"] / r["paper"] - 1) > 0.10 else "C0",
            )
        ax.set_xticks(range(len(names)), names, rotation=45, ha="right", fontsize=7)
        ax.set_title(f"Fig. {number}", fontsize=9)
        ax.set_ylim(0, 1)
        ax.tick_params(axis="y", labelsize=7)
    for ax in axes.flat[len(figures) :]:
        ax.axis("off")
    axes[0][0].set_ylabel("saturation load", fontsize=8)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in ("0.75", "C0", "C3")]
    fig.legend(
        handles,
        ["paper", "dflab (within 10 %)", "dflab (off by more)"],
        loc="lower center",
        ncol=3,
        fontsize=8,
    )
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(out, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="?", type=Path, default=Path("results/ics24"))
    ap.add_argument("--out", type=Path, default=Path("ics24_saturation.png"))
    args = ap.parse_args()
    frame = rows(args.results)
    if frame.is_empty():
        raise SystemExit(
            f"no campaign checks under {args.results}: run experiments/ics24/run.sh first"
        )
    draw(frame, args.out)
    print(
        f"wrote {args.out}: {frame.height} routings over figures {sorted(frame['figure'].unique())}"
    )


if __name__ == "__main__":
    main()
