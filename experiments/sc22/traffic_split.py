"""Where a target's traffic goes beside a background, per routing: the SC'22 pairs of
`pairs.py` (same runs, ended when the target finishes), reduced to the target's bytes by port
class, the share of them on ports the background also uses, the stall time of those ports, the
target's injection rate and packet latency, and its delivered bytes per millisecond.

    python experiments/sc22/traffic_split.py --target lqcd --background halo3d \
        --routings PAR,UGALg --seeds 1,2 --jobs 2

One row per (target, background, routing, seed), alone included, goes to
`results/traffic_split.csv` (resumable; written atomically). docs/interference-results.md
reads it for LQCD beside Halo3D.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pairs
import polars as pl
import rows as result_rows

from dflab.api import simulate

RESULTS = Path(__file__).resolve().parent / "results" / "traffic_split.csv"
KEY = ("target", "background", "routing", "seed")
COLUMNS = (
    *KEY,
    "comm_mean_ms",
    "latency_mean_us",
    "latency_p99_us",
    "injection_gbs",
    "target_local_gb",
    "target_global_gb",
    "all_local_gb",
    "all_global_gb",
    "shared_share",
    "stall_local_s",
    "stall_global_s",
    "target_stall_local_s",
    "target_stall_global_s",
    "mb_per_ms",
)


def split(target: str, background: str, routing: str, seed: int) -> dict[str, Any]:
    """Run the pair and reduce it to one row."""
    config = pairs.experiment(target, background, routing, seed)
    w = simulate(config, **{"workload.end_with_jobs": [0]}).workload
    assert w is not None
    key = {"target": target, "background": background, "routing": routing, "seed": seed}
    return reduce(key, w.jobs.to_dicts()[0], w.ports, w.throughput)


def reduce(
    key: dict[str, Any], job: dict[str, Any], frame: pl.DataFrame, throughput: pl.DataFrame
) -> dict[str, Any]:
    """The row of a run: its key, the target's job row, the ports and throughput frames."""
    ports = frame.with_columns(
        pl.col("bytes").list.get(0).alias("mine"), pl.col("bytes").list.sum().alias("all")
    )
    row: dict[str, Any] = {
        **key,
        "comm_mean_ms": job["comm_mean_us"] / 1e3,
        "latency_mean_us": job["latency_mean_ns"] / 1e3,
        "latency_p99_us": job["latency_p99_ns"] / 1e3,
        "injection_gbs": job["injection_rate_gbs"],
    }
    for cls in ("local", "global"):
        p = ports.filter(pl.col("class") == cls)
        row[f"target_{cls}_gb"] = p["mine"].sum() / 1e9
        row[f"all_{cls}_gb"] = p["all"].sum() / 1e9
        row[f"stall_{cls}_s"] = p["stall_us"].sum() / 1e6
        # Each port's stall time weighted by the target's share of its bytes.
        share = p["mine"] / p["all"].clip(lower_bound=1)
        row[f"target_stall_{cls}_s"] = (p["stall_us"] * share).sum() / 1e6
    network = ports.filter(pl.col("class").is_in(["local", "global"]) & (pl.col("mine") > 0))
    shared = network.filter(pl.col("all") > pl.col("mine"))
    row["shared_share"] = shared["mine"].sum() / max(network["mine"].sum(), 1)
    tp = throughput.filter(pl.col("job") == 0)
    per_ms = (
        tp.with_columns((pl.col("window_start_us") // 1000).alias("ms"))
        .group_by("ms")
        .agg(pl.col("bytes").sum())
        .sort("ms")
    )
    row["mb_per_ms"] = " ".join(f"{b / 1e6:.0f}" for b in per_ms["bytes"].to_list())
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--target", default="lqcd")
    parser.add_argument("--background", default="halo3d")
    parser.add_argument("--routings", default="PAR,UGALg")
    parser.add_argument("--seeds", default="1")
    parser.add_argument("--jobs", type=int, default=1, help="simulations at once")
    args = parser.parse_args()
    done = {tuple(r[k] for k in KEY) for r in result_rows.read_rows(RESULTS)}
    todo = [
        (args.target, background, routing, int(seed))
        for seed in args.seeds.split(",")
        for routing in args.routings.split(",")
        for background in (args.background, "none")
        if (args.target, background, routing, seed) not in done
    ]
    context = multiprocessing.get_context("spawn")  # no fork of a threaded engine
    with ProcessPoolExecutor(max_workers=args.jobs, mp_context=context) as pool:
        for row in pool.map(split, *zip(*todo, strict=True)) if todo else []:
            result_rows.add_rows(RESULTS, COLUMNS, [row], KEY)
            print({k: row[k] for k in (*KEY, "comm_mean_ms", "injection_gbs")}, flush=True)
    for r in result_rows.read_rows(RESULTS):
        print(", ".join(f"{k} {r[k]}" for k in COLUMNS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
