"""Figures and tables of docs/qadaptive-results.md from the result stores of queue_sq.sh.

.venv/bin/python experiments/qadaptive/make_figures.py   # docs/figures/qadaptive-*.png + tables

Figs. 5, 6, 7 and 9 come from results/qadaptive-sq (bounded source queues, 20 packets, as SST);
Fig. 8 (load steps) too (stores fig8_ur_step, fig8_adv4_step).
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
SQ = ROOT / "results" / "qadaptive-sq"
OLD = ROOT / "results" / "qadaptive"
FIG = ROOT / "docs" / "figures"
FIG5 = ("fig5_q_adv", "fig5_q_ur", "fig5_q_ur_hi", "fig5_base", "fig5_par", "fig5_q_adv_long")
SEED2 = ("fig5_q_adv_s2", "fig5_q_ur_s2", "fig5_q_ur_hi_s2")
FIG9 = (
    "fig9_base_ur",
    "fig9_base_adv",
    "fig9_base_app",
    "fig9_q_ur",
    "fig9_q_adv",
    "fig9_q_stencil",
)
# Longer runs that replace the points of the same coordinates in FIG9.
FIG9_LONG = ("fig9_base_adv_long", "fig9_q_adv_long")
Q = "Q-adaptive"


def stores(*names: str) -> pl.DataFrame:
    return summary_frames(*(SQ / name for name in names), execution=True)


def series_of(store_dir: Path, **coords: object) -> pl.DataFrame | None:
    store = Store(store_dir)
    if not store.root.is_dir():
        return None
    for record in store.points():
        if all(record["coords"].get(k) == v for k, v in coords.items()):
            return store.series(record["hash"])
    return None


def fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 100 else f"{value:.0f}"
    return str(value)


def table(frame: pl.DataFrame, columns: list[str] | None = None) -> str:
    columns = columns or frame.columns
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in frame.select(columns).iter_rows():
        lines.append("| " + " | ".join(fmt(v) for v in row) + " |")
    return "\n".join(lines)


def us(frame: pl.DataFrame) -> pl.DataFrame:
    """Latency columns in µs (for the printed tables)."""
    return frame.with_columns(
        (pl.col(c) / 1000).round(3).alias(c.replace("_ns", "_us"))
        for c in frame.columns
        if "latency" in c and (c.endswith("_ns") or "_ns_" in c)
    )


def replaced(frame: pl.DataFrame, longer: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with its points at the coordinates of ``longer`` replaced by ``longer``'s."""
    if longer.is_empty():
        return frame
    keys = ["routing", "traffic", "load", "seed"]
    frame = frame.join(longer.select(keys), on=keys, how="anti")
    return pl.concat([frame, longer], how="diagonal_relaxed")


def fig5_frame() -> pl.DataFrame:
    """Seed 1 of the Fig. 5 sweeps; the 1200 µs warm-up points replace the 600 µs ones."""
    return replaced(stores(*FIG5[:-1]), stores("fig5_q_adv_long"))


def fig5() -> None:
    frame = fig5_frame()
    if frame.is_empty():
        return
    plot_load_curves(frame, FIG / "qadaptive-fig5.png")
    print("## Fig. 5 max accepted")
    best = (
        frame.sort("accepted_load", descending=True)
        .group_by(["traffic", "routing"], maintain_order=True)
        .first()
        .select("traffic", "routing", "accepted_load", "load", "hops_mean")
        .sort(["traffic", "routing"])
    )
    print(table(best))
    print("## Fig. 5 mean latency (µs) per load")
    lat = us(frame).pivot(on="routing", index=["traffic", "load"], values="latency_mean_us")
    lat = lat.select("traffic", "load", *sorted(lat.columns[2:], key=routing_key))
    print(table(lat.sort(["traffic", "load"])))
    print("## Fig. 5 Q-adaptive points")
    q = us(frame.filter(pl.col("routing") == Q)).select(
        "traffic",
        "load",
        "offered_load",
        "accepted_load",
        "latency_mean_us",
        "latency_p99_us",
        "network_latency_mean_us",
        "hops_mean",
        "minimal_fraction",
        "source_queue_end",
        "wall_s",
    )
    print(table(q.sort(["traffic", "load"])))
    print("## Fig. 5 baselines at ADV 0.45 / UR 0.8")
    pick = frame.filter(
        ((pl.col("traffic") == "ur") & (pl.col("load") == 0.8))
        | ((pl.col("traffic") != "ur") & (pl.col("load") == 0.45))
    )
    print(
        table(
            us(pick).sort(["traffic", "routing"]),
            [
                *("traffic", "routing", "offered_load", "accepted_load", "latency_mean_us"),
                *("latency_p99_us", "hops_mean", "minimal_fraction"),
            ],
        )
    )


def base_long() -> None:
    """Baselines near saturation: 150 + 50 µs runs against the 10 + 20 µs (30 + 20 PAR) ones."""
    long = stores("fig5_base_long", "fig6_base", "fig6_base_ur")
    if long.is_empty():
        return
    print("## Baselines: 150 + 50 µs (long) vs 10 + 20 µs (short)")
    cols = ["accepted_load", "latency_mean_ns", "latency_p99_ns"]
    keys = ["routing", "traffic", "load"]
    both = us(
        long.select(*keys, *cols)
        .join(stores("fig5_base", "fig5_par").select(*keys, *cols), on=keys, suffix="_short")
        .sort(["traffic", "routing", "load"])
    )
    print(table(both, [c for c in both.columns if "_ns" not in c]))


def flatness() -> None:
    """Is a Q-adaptive point at steady state? Last ~100 µs of its series, 50 µs halves."""
    print("## Convergence check: last 100 µs of each Q-adaptive series (two 50 µs halves)")
    rows = []
    for name in (*FIG5, *SEED2, *FIG9, *FIG9_LONG):
        store = Store(SQ / name)
        if not store.root.is_dir():
            continue
        for record in store.points():
            if record["coords"]["routing"] != Q:
                continue
            s = store.series(record["hash"])
            end = s["window_end_us"].max()
            halves = []
            for lo, hi in ((end - 100, end - 50), (end - 50, end)):
                w = s.filter((pl.col("window_start_us") >= lo) & (pl.col("window_end_us") <= hi))
                n = w["packets_delivered"].sum()
                lat = (w["latency_mean_ns"] * w["packets_delivered"]).sum() / max(n, 1)
                mf = (w["minimal_fraction"] * w["packets_delivered"]).sum() / max(n, 1)
                halves.append((lat / 1000, mf, w["accepted_load"].mean()))
            (l1, m1, a1), (l2, m2, a2) = halves
            c = record["coords"]
            rows.append(
                (
                    *(name, c["traffic"], c["load"], c["seed"], round(l1, 3), round(l2, 3)),
                    *(f"{100 * (l2 - l1) / l1:+.1f}%", round(m1, 3), round(m2, 3)),
                    *(round(a1, 3), round(a2, 3)),
                )
            )
    cols = ["store", "traffic", "load", "seed", "lat1_us", "lat2_us", "change"]
    cols += ["min1", "min2", "acc1", "acc2"]
    print(table(pl.DataFrame(rows, schema=cols, orient="row").sort(["traffic", "load"])))


def seeds() -> None:
    one = stores("fig5_q_adv", "fig5_q_ur", "fig5_q_ur_hi")  # same warm-ups as seed 2
    two = stores(*SEED2)
    if two.is_empty():
        return
    print("## Seed spread (Q-adaptive, seed 1 vs 2)")
    cols = ["accepted_load", "latency_mean_ns", "latency_p99_ns", "minimal_fraction"]
    both = us(
        two.select("traffic", "load", *cols)
        .join(one.select("traffic", "load", *cols), on=["traffic", "load"], suffix="_s1")
        .sort(["traffic", "load"])
    )
    print(table(both, [c for c in both.columns if "_ns" not in c]))


def ur_drift() -> None:
    """Q-adaptive UR 0.3-0.5 per 100 µs (packet-weighted), for the UR 0.5 section."""
    print("## UR drift: packet-weighted mean latency (µs) and minimal fraction per 100 µs")
    for load in (0.3, 0.4, 0.5):
        s = series_of(SQ / "fig5_q_ur", traffic="ur", load=load, seed=1)
        if s is None:
            continue
        s = s.with_columns((pl.col("window_start_us") // 100 * 100).alias("block"))
        w = pl.col("packets_delivered")
        blocks = (
            s.group_by("block")
            .agg(
                ((pl.col("latency_mean_ns") * w).sum() / w.sum() / 1000).round(4),
                ((pl.col("minimal_fraction") * w).sum() / w.sum()).round(3),
            )
            .sort("block")
        )
        print(load, blocks.rows())


def walls() -> None:
    print("## Wall time per sweep (sum of per-point wall_s)")
    rows = []
    for name in (*FIG5, *SEED2, "fig6_base", "fig6_base_ur", "fig5_base_long", *FIG9, *FIG9_LONG):
        q = stores(name)
        if not q.is_empty():
            rows.append((name, q.height, round(q["wall_s"].sum(), 1)))
    print(table(pl.DataFrame(rows, schema=["store", "points", "wall_s"], orient="row")))
    log = SQ / "queue.log"
    if log.is_file():
        print("queue.log:\n" + log.read_text())


def fig7() -> None:
    frames = {}
    for store, traffic, load in (
        ("fig5_q_ur", "ur", 0.4),
        ("fig5_q_ur", "ur", 0.7),
        ("fig5_q_ur_hi", "ur", 0.8),
        ("fig5_q_adv", "adv+1", 0.3),
        ("fig5_q_adv_long", "adv+1", 0.45),
        ("fig5_q_adv", "adv+4", 0.3),
        ("fig5_q_adv_long", "adv+4", 0.45),
    ):
        s = series_of(SQ / store, traffic=traffic, load=load, seed=1)
        if s is not None:
            frames[f"{traffic.upper()} {load}"] = s
    if frames:
        plot_series(
            frames,
            ("latency_mean_ns", "latency_p99_ns", "accepted_load", "minimal_fraction"),
            FIG / "qadaptive-fig7.png",
            title="Q-adaptive from an empty network (1056 nodes, source queues ≤ 20 packets)",
        )
        print("## Fig. 7 series (window start, latency mean µs, accepted, minimal)")
        for label, s in frames.items():
            rows = s.filter(pl.col("window_start_us") % 50 == 0).select(
                "window_start_us", "latency_mean_ns", "accepted_load", "minimal_fraction"
            )
            print(
                label,
                [
                    (r[0], round(r[1] / 1000, 3), round(r[2], 3), round(r[3], 3))
                    for r in rows.iter_rows()
                ],
            )
    steps = {}
    for label, store in (
        ("UR 0.4 → 0.8 at 300 µs → 0.4 at 600 µs", "fig8_ur_step"),
        ("ADV+4 0.2 → 0.4 at 700 µs", "fig8_adv4_step"),
    ):
        s = series_of(SQ / store)
        if s is not None:
            steps[label] = s
            rows = s.select(
                "window_start_us", "latency_mean_ns", "accepted_load", "minimal_fraction"
            )
            print(
                f"## Fig. 8 series: {label}",
                [
                    (r[0], round(r[1] / 1000, 3), round(r[2], 3), round(r[3], 3))
                    for r in rows.iter_rows()
                ],
            )
    if steps:
        plot_series(
            steps,
            ("offered_load", "accepted_load", "latency_mean_ns", "minimal_fraction"),
            FIG / "qadaptive-fig8.png",
            marks_us=[300.0, 600.0, 700.0],
            title="Q-adaptive, load steps (1056 nodes, bounded source queues, 10 µs windows)",
        )


def distribution(frame: pl.DataFrame, out: Path, title: str) -> None:
    if frame.is_empty():
        return
    rows = sorted(frame.to_dicts(), key=lambda r: routing_key(r["routing"]))
    plot_latency_distribution(rows, out, columns=3)
    print(f"## {title}")
    cols = ["traffic", "load", "routing", "offered_load", "accepted_load"]
    cols += [f"latency_{k}_us" for k in ("mean", "p50", "p95", "p99", "max")]
    cols += ["network_latency_mean_us", "hops_mean", "minimal_fraction", "wall_s"]
    print(table(us(frame).sort(["traffic", "routing"]), cols))


def fig6() -> None:
    frame = fig5_frame()
    if frame.is_empty():
        return
    frame = frame.filter(
        ((pl.col("traffic") == "ur") & (pl.col("load") == 0.8))
        | ((pl.col("traffic") != "ur") & (pl.col("load") == 0.45))
    )
    # The baselines' 150 + 50 µs runs (sq_fig6_base) replace their 10 + 20 µs Fig. 5 points.
    frame = replaced(frame, stores("fig6_base", "fig6_base_ur"))
    distribution(frame, FIG / "qadaptive-fig6.png", "Fig. 6")


def fig9() -> None:
    frame = replaced(stores(*FIG9), stores(*FIG9_LONG))
    # Q-adaptive m2m / rn 0.5 were not rerun with bounded source queues: the earlier open-loop
    # runs (650 µs warm-up; no congested start, source queues empty) are shown, labelled.
    old = summary_frames(OLD / "fig9_q_long")
    if not old.is_empty():
        old = old.with_columns(pl.lit("Q-adaptive (open loop)").alias("routing"))
        frame = pl.concat([frame, old], how="diagonal_relaxed")
    distribution(frame, FIG / "qadaptive-fig9.png", "Fig. 9 (2550)")


if __name__ == "__main__":
    pl.Config.set_tbl_rows(200)
    for step in (fig5, base_long, flatness, seeds, ur_drift, fig7, fig6, fig9, walls):
        try:
            step()
        except Exception as error:  # keep going with the other figures
            print(f"{step.__name__}: {type(error).__name__}: {error}")
