"""ICS'24 Fig. 17 from the stores of fig17_transient*.toml: (a) the mean minimal estimate of the
source decisions and (b) the mean total queue on new packets' minimal paths, per 50-cycle
window, against the cycles since uniform 0.6 became shift 0.25; mean over the seeds. Prints each
routing's settling time and level, checks the paper's claims, and draws the figure.

    .venv/bin/python experiments/ics24/fig17.py STORE [STORE ...] [--out fig17.png] [--routings A,B]

Settling time: the first window after the switch from which the series stays within 10 % of
its level over the last 4 µs (on a 3-window moving average, so that one noisy window does not
decide).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import polars as pl

from dflab.store import Store

SWITCH_US = 20.0
CYCLE_NS = 1.0
BAND = 0.10


def curves(stores: list[Path], only: set[str] | None = None) -> dict[str, pl.DataFrame]:
    """Per routing: t (cycles after the switch), est, queue, averaged over seeds."""
    out: dict[str, list[pl.DataFrame]] = {}
    for root in stores:
        store = Store(root)
        for rec in store.points():
            if only and rec["coords"]["routing"] not in only:
                continue
            s = store.series(rec["hash"])
            t = ((s["window_start_us"] - SWITCH_US) * 1000 / CYCLE_NS).alias("t")
            est = (s["probe_min_estimate_sum"] / s["probe_source_decisions"]).alias("est")
            queue = (s["probe_min_path_queue_sum"] / s["probe_min_path_packets"]).alias("queue")
            out.setdefault(rec["coords"]["routing"], []).append(pl.DataFrame([t, est, queue]))
    mean = (pl.col("est").mean(), pl.col("queue").mean())
    return {r: pl.concat(fs).group_by("t").agg(*mean).sort("t") for r, fs in out.items()}


def settling(frame: pl.DataFrame, col: str) -> tuple[float, float, float]:
    """(settling time in cycles, final level, peak after the switch)."""
    after = frame.filter(pl.col("t") >= 0)
    smooth = after[col].rolling_mean(3, min_samples=1)
    final = after.filter(pl.col("t") >= (after["t"].max() - 4000))[col].mean()
    inside = ((smooth - final).abs() <= BAND * final).to_list()
    settle = next(
        (after["t"][i] for i in range(len(inside)) if all(inside[i:])), float(after["t"].max())
    )
    return float(settle), float(final), float(after[col].max())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("stores", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, default=Path("fig17.png"))
    ap.add_argument("--routings", help="comma list: only these routings")
    args = ap.parse_args(argv)
    data = curves(args.stores, set(args.routings.split(",")) if args.routings else None)
    head = ("(a) settle", "level", "(b) settle", "level", "peak")
    print(f"{'routing':8} " + " ".join(f"{h:>11}" for h in head))
    rows = {}
    for routing, frame in sorted(data.items()):
        (ta, la, _), (tb, lb, pb) = settling(frame, "est"), settling(frame, "queue")
        rows[routing] = (ta, la, tb, lb)
        print(f"{routing:8} {ta:9.0f} c {la:11.1f} {tb:9.0f} c {lb:11.1f} {pb:11.1f}")
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for routing, frame in sorted(data.items()):
        window = frame.filter((pl.col("t") >= -1000) & (pl.col("t") <= 3000))
        axes[0].plot(window["t"], window["est"], label=routing)
        axes[1].plot(window["t"], window["queue"], label=routing)
    axes[0].set(xlabel="cycles after the switch", ylabel="mean minimal estimate (flits x hops)")
    axes[1].set(xlabel="cycles after the switch", ylabel="total queue on minimal path (flits)")
    axes[0].legend()
    fig.suptitle("ICS'24 Fig. 17: uniform 0.6 -> shift 0.25, dfly(4,8,4,33)")
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")
    if {"UGAL-L", "UGAL-LE"} <= rows.keys():
        base, le = rows["UGAL-L"], rows["UGAL-LE"]
        checks = [
            ("UGAL-LE settles several times faster (b)", le[2] * 3 <= base[2]),
            ("UGAL-LE's minimal-path queue is lower (b)", le[3] < base[3]),
        ]
        for text, ok in checks:
            print(f"{'PASS' if ok else 'FAIL'}  {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
