"""The tables of docs/qadaptive-results.md, from the result stores of the Q-adaptive studies.

    dflab reproduce qadaptive-fig5 --full    # and -fig6 ... -fig9: runs, figures, checks
    .venv/bin/python experiments/qadaptive/analysis.py   # the page's tables, printed

`dflab reproduce` draws the figures and checks the paper's numbers (docs/studies.md); this
script prints what the page discusses beyond them: the curves' values per load, the convergence
check of every Q-adaptive series, the UR drift blocks, seed 1 against seed 2 (after
`dflab reproduce qadaptive-fig5 --full --seeds 2`), the steady-state baselines
(`dflab sweep experiments/qadaptive/sq_fig5_base_long.toml --out results/qadaptive/fig5_base_long`)
and the wall time per sweep. Missing stores are skipped.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from dflab.figures import routing_key, summary_frames
from dflab.store import Store

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "results" / "reproduce"
Q = "Q-adaptive"
# (study, sweep) of the Fig. 5 curves, in the order a later one replaces an earlier one's point.
FIG5 = ("base", "par", "q_ur", "q_ur_hi", "q_adv", "q_adv_long")


def store(study: str, sweep: str) -> Path:
    return RUNS / study / "full" / sweep


def frame(study: str, *sweeps: str) -> pl.DataFrame:
    return summary_frames(*(store(study, s) for s in sweeps), execution=True)


def fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 100 else f"{value:.0f}"
    return str(value)


def table(data: pl.DataFrame, columns: list[str] | None = None) -> str:
    columns = columns or data.columns
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in data.select(columns).iter_rows():
        lines.append("| " + " | ".join(fmt(v) for v in row) + " |")
    return "\n".join(lines)


def us(data: pl.DataFrame) -> pl.DataFrame:
    """Latency columns in µs (for the printed tables)."""
    return data.with_columns(
        (pl.col(c) / 1000).round(3).alias(c.replace("_ns", "_us"))
        for c in data.columns
        if "latency" in c and (c.endswith("_ns") or "_ns_" in c)
    )


def fig5() -> None:
    data = frame("qadaptive-fig5", *FIG5).filter(pl.col("seed") == 1)
    if data.is_empty():
        return
    print("## Fig. 5 max accepted")
    best = (
        data.sort("accepted_load", descending=True)
        .group_by(["traffic", "routing"], maintain_order=True)
        .first()
        .select("traffic", "routing", "accepted_load", "load", "hops_mean")
        .sort(["traffic", "routing"])
    )
    print(table(best))
    print("## Fig. 5 mean latency (µs) per load")
    lat = us(data).pivot(on="routing", index=["traffic", "load"], values="latency_mean_us")
    lat = lat.select("traffic", "load", *sorted(lat.columns[2:], key=routing_key))
    print(table(lat.sort(["traffic", "load"])))
    print("## Fig. 5 Q-adaptive points")
    columns = ["traffic", "load", "offered_load", "accepted_load", "latency_mean_us"]
    columns += ["latency_p50_us", "latency_p99_us", "network_latency_mean_us", "hops_mean"]
    columns += ["minimal_fraction", "source_queue_end", "wall_s"]
    print(table(us(data.filter(pl.col("routing") == Q)).sort(["traffic", "load"]), columns))


def base_long() -> None:
    """Baselines near saturation: 150 + 50 µs runs against the 10 + 20 µs (30 + 20 PAR) ones."""
    long = summary_frames(
        ROOT / "results" / "qadaptive" / "fig5_base_long",
        store("qadaptive-fig6", "base_ur"),
        store("qadaptive-fig6", "base_adv"),
    )
    short = frame("qadaptive-fig5", "base", "par")
    if long.is_empty() or short.is_empty():
        return
    print("## Baselines: 150 + 50 µs (long) vs 10 + 20 µs (short)")
    cols = ["accepted_load", "latency_mean_ns", "latency_p99_ns"]
    keys = ["routing", "traffic", "load"]
    both = us(
        long.select(*keys, *cols)
        .join(short.select(*keys, *cols), on=keys, suffix="_short")
        .sort(["traffic", "routing", "load"])
    )
    print(table(both, [c for c in both.columns if "_ns" not in c]))


def halves(series: pl.DataFrame) -> tuple[tuple[float, float, float], ...]:
    """(latency µs, minimal fraction, accepted) over the two 50 µs halves of the last 100 µs."""
    end = series["window_end_us"].max()
    found = []
    for lo, hi in ((end - 100, end - 50), (end - 50, end)):
        w = series.filter((pl.col("window_start_us") >= lo) & (pl.col("window_end_us") <= hi))
        n = max(w["packets_delivered"].sum(), 1)
        lat = (w["latency_mean_ns"] * w["packets_delivered"]).sum() / n
        mf = (w["minimal_fraction"] * w["packets_delivered"]).sum() / n
        found.append((lat / 1000, mf, w["accepted_load"].mean()))
    return tuple(found)


def flatness() -> None:
    """Is a Q-adaptive point at steady state? Last ~100 µs of its series, 50 µs halves."""
    rows = []
    for study, sweeps in (("qadaptive-fig5", FIG5), ("qadaptive-fig9", ("q", "q_adv"))):
        for sweep in sweeps:
            results = Store(store(study, sweep))
            if not results.root.is_dir():
                continue
            for record in results.points():
                if record["coords"]["routing"] != Q:
                    continue
                (l1, m1, a1), (l2, m2, a2) = halves(results.series(record["hash"]))
                c = record["coords"]
                rows.append(
                    (
                        *(f"{study.removeprefix('qadaptive-')}/{sweep}", c["traffic"], c["load"]),
                        *(c["seed"], round(l1, 3), round(l2, 3)),
                        *(f"{100 * (l2 - l1) / l1:+.1f}%", round(m1, 3), round(m2, 3)),
                        *(round(a1, 3), round(a2, 3)),
                    )
                )
    if not rows:
        return
    print("## Convergence check: last 100 µs of each Q-adaptive series (two 50 µs halves)")
    cols = ["sweep", "traffic", "load", "seed", "lat1_us", "lat2_us", "change"]
    cols += ["min1", "min2", "acc1", "acc2"]
    print(table(pl.DataFrame(rows, schema=cols, orient="row").sort(["traffic", "load"])))


def seeds() -> None:
    data = frame("qadaptive-fig5", *FIG5).filter(pl.col("routing") == Q)
    if data.is_empty() or data["seed"].n_unique() < 2:
        return
    print("## Seed spread (Q-adaptive, seed 1 vs 2)")
    cols = ["accepted_load", "latency_mean_ns", "latency_p99_ns", "minimal_fraction"]
    keys = ["traffic", "load"]
    one = data.filter(pl.col("seed") == 1).select(*keys, *cols)
    two = data.filter(pl.col("seed") == 2).select(*keys, *cols)
    both = us(two.join(one, on=keys, suffix="_s1").sort(keys))
    print(table(both, [c for c in both.columns if "_ns" not in c]))


def ur_drift() -> None:
    """Q-adaptive UR 0.3-0.5 per 100 µs (packet-weighted), for the UR 0.5 section."""
    results = Store(store("qadaptive-fig5", "q_ur"))
    if not results.root.is_dir():
        return
    print("## UR drift: packet-weighted mean latency (µs) and minimal fraction per 100 µs")
    for record in sorted(results.points(), key=lambda r: r["coords"]["load"]):
        if record["coords"]["load"] not in (0.3, 0.4, 0.5) or record["coords"]["seed"] != 1:
            continue
        s = results.series(record["hash"])
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
        print(record["coords"]["load"], blocks.rows())


def distribution(study: str, title: str) -> None:
    data = summary_frames(*sorted((RUNS / study / "full").glob("*/")), execution=True)
    if data.is_empty():
        return
    print(f"## {title}")
    cols = ["traffic", "load", "routing", "offered_load", "accepted_load"]
    cols += [f"latency_{k}_us" for k in ("mean", "p50", "p95", "p99", "max")]
    cols += ["network_latency_mean_us", "hops_mean", "minimal_fraction", "wall_s"]
    print(table(us(data).sort(["traffic", "routing"]), cols))


def walls() -> None:
    print("## Wall time per sweep (sum of per-point wall_s)")
    for path in sorted(RUNS.glob("*/full/timing.csv")):
        timing = pl.read_csv(path)
        per_sweep = timing.group_by("sweep").agg(pl.len(), pl.col("wall_s").sum().round(1))
        print(path.parent.parent.name, per_sweep.sort("wall_s", descending=True).rows())


if __name__ == "__main__":
    pl.Config.set_tbl_rows(200)
    steps = (fig5, base_long, flatness, seeds, ur_drift)
    for step in steps:
        step()
    distribution("qadaptive-fig6", "Fig. 6")
    distribution("qadaptive-fig9", "Fig. 9 (2550)")
    walls()
