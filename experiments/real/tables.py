"""The real-machine study's tables and figure (docs/real-machines.md) from the result stores
that `experiments/real/run.sh` fills: prints Markdown; `--plot` draws accepted against offered
load per network and pattern.

    python experiments/real/tables.py [--out results/real] [--plot docs/figures/real_machines.png]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib
import polars as pl

from dflab.store import load_results

matplotlib.use("Agg")
import matplotlib.pyplot as plt

ROUTINGS = ("MIN", "UGALn", "PAR", "Q-adaptive", "UGAL-LE", "IMB")
# The networks of the figure: store and label.
NETWORKS = (
    ("small", "frontier-class-small"),
    ("balanced", "balanced dfly(4,8,4,33)"),
    ("aurora-small", "aurora-class-small"),
    ("frontier-10us", "frontier-class (37,888 NICs)"),
)
SMALL = (
    ("small", "frontier-class-small"),
    ("balanced", "balanced"),
    ("aurora-small", "aurora-class-small"),
)


def _summary(out: Path, store: str) -> pl.DataFrame:
    """Every finished point of a store (also of a sweep still running or stopped)."""
    if not (out / store / "points").is_dir():
        raise FileNotFoundError(out / store)
    return load_results(out / store)


def _cell(df: pl.DataFrame, routing: str, traffic: str) -> tuple[str, str]:
    """Mean latency at load 0.1 (ns) and the most accepted load over the loads."""
    d = df.filter((pl.col("routing") == routing) & (pl.col("traffic") == traffic))
    if d.is_empty():
        return "—", "—"
    low = d.filter(pl.col("load") == d["load"].min())["latency_mean_ns"][0]
    return f"{low:,.0f}", f"{d['accepted_load'].max():.3f}"


def small_presets(out: Path) -> list[str]:
    """frontier-class-small / balanced / aurora-class-small, one row per routing."""
    frames = [_summary(out, store) for store, _ in SMALL]
    names = " / ".join(label for _, label in SMALL)
    lines = [
        f"| routing ({names}) | UR latency | UR most accepted | ADV+1 latency "
        "| ADV+1 most accepted |",
        "|---|---|---|---|---|",
    ]
    for r in ROUTINGS:
        cells = [[_cell(df, r, t) for df in frames] for t in ("ur", "adv+1")]
        ur, adv = cells
        lines.append(
            f"| {r} | {' / '.join(c[0] for c in ur)} | {' / '.join(c[1] for c in ur)} | "
            f"{' / '.join(c[0] for c in adv)} | {' / '.join(c[1] for c in adv)} |"
        )
    return lines


def by_load(df: pl.DataFrame, title: str) -> list[str]:
    """One row per (traffic, routing): accepted load and mean latency at each load."""
    lines = [f"| {title} | load | accepted | latency mean / p99 (ns) | hops | minimal |"]
    lines.append("|---|---|---|---|---|---|")
    for (traffic, routing), d in df.sort("traffic", "routing", "load").group_by(
        ["traffic", "routing"], maintain_order=True
    ):
        for row in d.iter_rows(named=True):
            lines.append(
                f"| {routing} {traffic.upper()} | {row['load']} | {row['accepted_load']:.3f} | "
                f"{row['latency_mean_ns']:,.0f} / {row['latency_p99_ns']:,.0f} | "
                f"{row['hops_mean']:.2f} | {row['minimal_fraction']:.2f} |"
            )
    return lines


def compact(df: pl.DataFrame) -> list[str]:
    """One row per routing: accepted load (mean latency, ns) at each load of each pattern."""
    cols = [
        (t, load)
        for t in ("ur", "adv+1")
        for load in sorted(df.filter(pl.col("traffic") == t)["load"].unique())
    ]
    head = " | ".join(f"{t.upper()} {load}" for t, load in cols)
    lines = [f"| routing | {head} |", "|---|" + "---|" * len(cols)]
    for r in ROUTINGS:
        cells = []
        for t, load in cols:
            d = df.filter(
                (pl.col("routing") == r) & (pl.col("traffic") == t) & (pl.col("load") == load)
            )
            cells.append(
                "—"
                if d.is_empty()
                else f"{d['accepted_load'][0]:.3f} ({d['latency_mean_ns'][0]:,.0f})"
            )
        lines.append(f"| {r} | {' | '.join(cells)} |")
    return lines


def imb_schedules(out: Path) -> list[str]:
    df = _summary(out, "imb-schedule")
    key = "routing.bias_schedule"
    lines = [
        "| bias schedule | UR latency at 0.1 (ns) | UR minimal at 0.1 | UR most accepted | "
        "ADV+1 latency at 0.1 (ns) | ADV+1 most accepted |",
        "|---|---|---|---|---|---|",
    ]
    for schedule, d in df.sort(key).group_by(key, maintain_order=True):
        ur = d.filter(pl.col("traffic") == "ur")
        adv = d.filter(pl.col("traffic") == "adv+1")
        low_ur = ur.filter(pl.col("load") == 0.1)
        low_adv = adv.filter(pl.col("load") == 0.1)
        lines.append(
            f"| {schedule[0]} | {low_ur['latency_mean_ns'][0]:,.0f} | "
            f"{low_ur['minimal_fraction'][0]:.2f} | {ur['accepted_load'].max():.3f} | "
            f"{low_adv['latency_mean_ns'][0]:,.0f} | {adv['accepted_load'].max():.3f} |"
        )
    return lines


def plot(out: Path, path: Path) -> None:
    """Accepted against offered load: a row per network, UR and ADV+1 side by side."""
    fig, axes = plt.subplots(len(NETWORKS), 2, figsize=(8, 2.4 * len(NETWORKS)), sharex=True)
    for row, (store, label) in zip(axes, NETWORKS, strict=True):
        try:
            df = _summary(out, store)
        except FileNotFoundError:
            df = pl.DataFrame()
        for ax, traffic in zip(row, ("ur", "adv+1"), strict=True):
            for routing in ROUTINGS:
                if df.is_empty():
                    break
                d = df.filter((pl.col("routing") == routing) & (pl.col("traffic") == traffic))
                d = d.sort("load")
                ax.plot(d["offered_load"], d["accepted_load"], "o-", ms=2.5, lw=1, label=routing)
            ax.plot([0, 0.8], [0, 0.8], color="0.7", lw=0.6, ls=":")
            ax.set_title(f"{label}, {traffic.upper()}", fontsize=8)
            ax.tick_params(labelsize=7)
            ax.set_ylim(0, 0.85)
        row[0].set_ylabel("accepted load", fontsize=8)
    for ax in axes[-1]:
        ax.set_xlabel("offered load (per NIC)", fontsize=8)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("results/real"))
    parser.add_argument("--plot", type=Path, help="draw the figure to this PNG")
    args = parser.parse_args()
    if args.plot:
        plot(args.out, args.plot)
    sections = [
        ("The small presets", lambda: small_presets(args.out)),
        (
            "Q-adaptive after 200 us",
            lambda: [
                line
                for store in (
                    "qlong-frontier-class-small",
                    "qlong-aurora-class-small",
                    "qlong-balanced",
                    "qlong-frontier",
                    "qlong-frontier-ramp",
                )
                for line in [f"**{store}**", *by_load(_summary(args.out, store), "Q-adaptive"), ""]
            ],
        ),
        ("IMB's bias schedule", lambda: imb_schedules(args.out)),
        ("frontier-class", lambda: compact(_summary(args.out, "frontier-10us"))),
        (
            "frontier-class, every column",
            lambda: by_load(_summary(args.out, "frontier-10us"), "routing"),
        ),
    ]
    for title, table in sections:
        print(f"### {title}\n")
        try:
            print("\n".join(table()) + "\n")
        except FileNotFoundError as missing:
            print(f"(not run yet: {missing})\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
