"""Figures and tables of docs/qadaptive-results.md from the result stores of queue.sh.

.venv/bin/python experiments/qadaptive/make_figures.py   # docs/figures/qadaptive-*.png
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from dflab.figures import (
    plot_latency_distribution,
    plot_load_curves,
    plot_series,
    routing_key,
    summary_frames,
)
from dflab.store import Store

ROOT = Path(__file__).resolve().parents[2]
RES = ROOT / "results" / "qadaptive"
FIG = ROOT / "docs" / "figures"
BASE = ROOT / "results" / "baselines-1056"
STATS = ("mean", "p50", "p95", "p99", "max")


def series_of(store_dir: Path, **coords: object) -> pl.DataFrame | None:
    store = Store(store_dir)
    if not store.root.is_dir():
        return None
    for record in store.points():
        if all(record["coords"].get(k) == v for k, v in coords.items()):
            return store.series(record["hash"])
    return None


def table(frame: pl.DataFrame, columns: list[str]) -> str:
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in frame.select(columns).iter_rows():
        cells = [f"{v:.3f}" if isinstance(v, float) else str(v) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def fig5() -> None:
    q300 = summary_frames(RES / "fig5_q", RES / "fig5x_ur").with_columns(
        pl.when(pl.col("traffic") == "ur")
        .then(pl.col("routing"))
        .otherwise(pl.lit("Q-adaptive (300 µs warm-up)"))
        .alias("routing")
    )
    q700 = summary_frames(RES / "fig5_long", RES / "fig5x_adv", RES / "fig5_ur09")
    if not q700.is_empty():
        # UR 0.9 with the long warm-up replaces the 300 µs point.
        replaced = q700.filter(pl.col("traffic") == "ur").select("traffic", "load")
        q300 = q300.join(replaced, on=["traffic", "load"], how="anti")
    q1000 = summary_frames(RES / "fig5_1000")
    if not q1000.is_empty():
        q1000 = q1000.with_columns(pl.lit("Q-adaptive (1000 µs warm-up)").alias("routing"))
    frame = pl.concat([summary_frames(BASE), q300, q700, q1000], how="diagonal_relaxed")
    plot_load_curves(frame, FIG / "qadaptive-fig5.png")
    print("## Fig. 5 max accepted")
    best = (
        frame.sort("accepted_load", descending=True)
        .group_by(["traffic", "routing"], maintain_order=True)
        .first()
        .select("traffic", "routing", "accepted_load", "load", "latency_mean_ns", "hops_mean")
        .sort(["traffic", "routing"])
    )
    print(table(best, best.columns))
    print("## UR 0.8 and ADV 0.45 / 0.5 / 0.3 points")
    pick = frame.filter(
        ((pl.col("traffic") == "ur") & pl.col("load").is_in([0.5, 0.8]))
        | ((pl.col("traffic") != "ur") & pl.col("load").is_in([0.3, 0.45, 0.5]))
    ).select(
        "traffic",
        "load",
        "routing",
        "accepted_load",
        "latency_mean_ns",
        "network_latency_mean_ns",
        "latency_p99_ns",
        "hops_mean",
        "minimal_fraction",
        "source_queue_end",
        "wall_s",
    )
    print(table(pick.sort(["traffic", "load", "routing"]), pick.columns))
    for name in ("fig5_q", "fig5x_ur", "fig5x_adv", "fig5_long", "fig5_ur09", "fig5_1000"):
        q = summary_frames(RES / name)
        if not q.is_empty():
            print(f"{name}: wall s {q['wall_s'].sum():.0f}, points {q.height}")


def fig7() -> None:
    frames = {}
    for traffic in ("ur", "adv+1"):
        s = series_of(RES / "fig7_conv", traffic=traffic, load=0.4)
        if s is not None:
            frames[f"{traffic.upper()} 0.4"] = s
    for store, traffic, load in (
        ("fig5_q", "ur", 0.7),
        ("fig5_ur09", "ur", 0.8),
        ("fig5_long", "adv+1", 0.3),
        ("fig5_long", "adv+4", 0.3),
    ):
        s = series_of(RES / store, traffic=traffic, load=load)
        if s is not None:
            frames[f"{traffic.upper()} {load}"] = s
    if frames:
        plot_series(
            frames,
            ("latency_mean_ns", "latency_p99_ns", "accepted_load", "minimal_fraction"),
            FIG / "qadaptive-fig7.png",
            title="Q-adaptive from an empty network (1056 nodes, 10 µs windows)",
        )
        print("## Fig. 7 series (window start, latency mean, accepted, minimal)")
        for label, s in frames.items():
            rows = s.filter(pl.col("window_start_us") % 50 == 0).select(
                "window_start_us", "latency_mean_ns", "accepted_load", "minimal_fraction"
            )
            print(label, [tuple(round(v, 3) for v in r) for r in rows.iter_rows()])
    steps = {}
    for label, store in (
        ("ADV+1 0.2 → 0.4 at 300 µs", "fig8_step"),
        ("UR 0.4 → 0.8 at 300 µs → 0.4 at 600 µs", "fig8_ur_step"),
    ):
        s = series_of(RES / store)
        if s is not None:
            steps[label] = s
    if steps:
        plot_series(
            steps,
            ("offered_load", "accepted_load", "latency_mean_ns", "minimal_fraction"),
            FIG / "qadaptive-fig8.png",
            marks_us=[300.0, 600.0],
            title="Q-adaptive, load steps from an empty network (1056 nodes, 10 µs windows)",
        )
        for label, step in steps.items():
            rows = step.select(
                "window_start_us", "offered_load", "accepted_load", "latency_mean_ns"
            ).filter(pl.col("window_start_us") % 20 == 0)
            print("## Fig. 8", label, [tuple(round(v, 3) for v in r) for r in rows.iter_rows()])


def distribution(frame: pl.DataFrame, out: Path, title: str) -> None:
    if frame.is_empty():
        return
    rows = frame.sort("routing", descending=False).to_dicts()
    rows.sort(key=lambda r: routing_key(r["routing"]))
    plot_latency_distribution(rows, out, columns=3)
    print(f"## {title}")
    cols = [
        "traffic",
        "load",
        "routing",
        "accepted_load",
        "latency_mean_ns",
        "latency_p50_ns",
        "latency_p95_ns",
        "latency_p99_ns",
        "latency_max_ns",
        "wall_s",
    ]
    print(table(frame.sort(["traffic", "routing"]), cols))


def fig6() -> None:
    long_ur = RES / "fig5_ur09"
    ur = long_ur if summary_frames(long_ur).height else RES / "fig5x_ur"
    frame = summary_frames(BASE, ur, RES / "fig5x_adv", RES / "fig6_base")
    if frame.is_empty():
        return
    frame = frame.filter(
        ((pl.col("traffic") == "ur") & (pl.col("load") == 0.8))
        | ((pl.col("traffic") != "ur") & (pl.col("load") == 0.45))
    )
    # Q-adaptive under ADV carries a start-up source-queue backlog: also show its network
    # latency (injection -> delivery) as an extra box.
    net = frame.filter((pl.col("routing") == "Q-adaptive") & (pl.col("traffic") != "ur"))
    net = net.with_columns(
        pl.lit("Q-adaptive (network)").alias("routing"),
        *(pl.col(f"network_latency_{k}_ns").alias(f"latency_{k}_ns") for k in STATS),
    )
    frame = pl.concat([frame, net], how="diagonal_relaxed")
    distribution(frame, FIG / "qadaptive-fig6.png", "Fig. 6")


def fig9() -> None:
    stores = [RES / f"fig9_{kind}_{t}" for kind in ("base", "q") for t in ("ur", "adv", "app")]
    frame = summary_frames(*stores)
    long = summary_frames(RES / "fig9_q_long")
    if not long.is_empty():
        long = long.with_columns(pl.lit("Q-adaptive (650 µs warm-up)").alias("routing"))
        frame = pl.concat([frame, long], how="diagonal_relaxed")
    distribution(frame, FIG / "qadaptive-fig9.png", "Fig. 9 (2550)")


if __name__ == "__main__":
    for step in (fig5, fig7, fig6, fig9):
        try:
            step()
        except Exception as error:  # keep going with the other figures
            print(f"{step.__name__}: {type(error).__name__}: {error}")
