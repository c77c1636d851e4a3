"""SC'22 mixed workload (Table II, Fig. 10): six applications share `sc22-1056`, each alone and
in the mix, under several routings.

    python experiments/sc22/mixed.py --routings Q-adaptive,PAR
    python experiments/sc22/mixed.py --markdown

The jobs take consecutive slices of the `random-list` placement in Table II's order (FFT3D 140,
CosmoFlow 138, LU 140, UR 139, LQCD 256, Stencil5D 243 = 1,056 nodes). An application alone
keeps its slice: the other jobs are `null` (idle) jobs of the same sizes. One row per
(application, mix or alone, routing) goes to `results/mixed.csv` (resumable, written
atomically after every run). The interference is the change of the application's mean
communication time per rank in the mix against alone, under the same routing.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import rows as result_rows

from dflab.api import simulate

RESULTS = Path(__file__).resolve().parent / "results" / "mixed.csv"
# Table II, in job (placement) order.
JOBS = (
    ("fft3d", 140),
    ("cosmoflow", 138),
    ("lu", 140),
    ("ur", 139),
    ("lqcd", 256),
    ("stencil5d", 243),
)
LABEL = {
    "fft3d": "FFT3D",
    "cosmoflow": "CosmoFlow",
    "lu": "LU",
    "ur": "UR",
    "lqcd": "LQCD",
    "stencil5d": "Stencil5D",
}
# The paper's Fig. 10 as its text gives it: the change in the mix, per app where stated
# ("adaptive" is the mean over UGALg, UGALn and PAR).
PAPER = {
    "lqcd": ("+17.87 % adaptive", "+6.50 %"),
    "stencil5d": ("< 2 %", "< 2 %"),
}
PAPER_MEAN = "+96.01 % (adaptive); Q-adaptive 49.23 % less"
COLUMNS = (
    "app",
    "ranks",
    "mix",
    "routing",
    "seed",
    "finished",
    "exec_ms",
    "comm_mean_ms",
    "comm_std_ms",
    "comm_max_ms",
    "latency_mean_us",
    "latency_p99_us",
    "injection_rate_gbs",
    "wall_s",
)


def jobs(only: str | None) -> list[dict[str, Any]]:
    """Table II's jobs; with `only`, the others idle on their slices."""
    return [{"motif": m if only in (None, m) else "null", "ranks": n, "name": m} for m, n in JOBS]


def experiment(only: str | None, routing: str, seed: int) -> dict[str, Any]:
    """The mix (`only` None) or one app alone on its slice."""
    return {
        "preset": "sc22-1056",
        "seed": seed,
        "routing": {"algorithm": routing},
        "workload": {"jobs": jobs(only), "record_iterations": False},
    }


def run(only: str | None, routing: str, seed: int) -> list[dict[str, Any]]:
    """One simulation: the mix (`only` None) or one app alone; a row per app that ran."""
    start = time.monotonic()
    result = simulate(experiment(only, routing, seed))
    return rows_of(result, only, routing, seed, time.monotonic() - start)


def rows_of(
    result: Any, only: str | None, routing: str, seed: int, wall: float
) -> list[dict[str, Any]]:
    """The CSV rows of one simulation result: the mix (`only` None) or one app alone."""
    assert result.workload is not None
    rows = []
    for j in result.workload.jobs.to_dicts():
        if only not in (None, j["name"]):
            continue
        rows.append(
            {
                "app": j["name"],
                "ranks": j["ranks"],
                "mix": "alone" if only else "mixed",
                "routing": routing,
                "seed": seed,
                **result_rows.job_times(j),
                "injection_rate_gbs": j["injection_rate_gbs"],
                "wall_s": round(wall, 1),
            }
        )
    return rows


def read_rows() -> list[dict[str, str]]:
    return result_rows.read_rows(RESULTS)


def write_rows(done: list[dict[str, Any]]) -> None:
    result_rows.write_rows(RESULTS, COLUMNS, done)


def record(new: list[dict[str, Any]]) -> None:
    """Add the rows whose (app, mix, routing, seed) is not in the CSV yet (the figures' mix is
    the same simulation: one run serves both)."""
    result_rows.add_rows(RESULTS, COLUMNS, new, ("app", "mix", "routing", "seed"))


def markdown(rows: list[dict[str, str]], routings: list[str], seed: int = 1) -> str:
    """Per app and routing: communication time alone and in the mix, the change, the paper's
    (the rows of one seed)."""
    got = {(r["app"], r["mix"], r["routing"]): r for r in rows if r["seed"] == str(seed)}
    out = [
        "| app | ranks | routing | comm alone ms | comm mixed ms | change (paper) "
        "| p99 latency alone / mixed µs |",
        "|---|---:|---|---:|---:|---:|---:|",
    ]
    changes: dict[str, list[float]] = {r: [] for r in routings}
    for app, ranks in JOBS:
        for routing in routings:
            alone, mixed = got.get((app, "alone", routing)), got.get((app, "mixed", routing))
            paper = PAPER.get(app, ("—", "—"))[routing == "Q-adaptive"]
            if alone is None or mixed is None:
                out.append(f"| {LABEL[app]} | {ranks} | {routing} | not run | | ({paper}) | |")
                continue
            a, m = float(alone["comm_mean_ms"]), float(mixed["comm_mean_ms"])
            change = (m - a) / a
            if app != "stencil5d":
                changes[routing].append(change)
            out.append(
                f"| {LABEL[app]} | {ranks} | {routing} | {a:.2f} | {m:.2f} "
                f"| {100 * change:+.1f} % ({paper}) "
                f"| {float(alone['latency_p99_us']):.2f} / {float(mixed['latency_p99_us']):.2f} |"
            )
    for routing, c in changes.items():
        if len(c) == len(JOBS) - 1:
            out.append(
                f"| mean of the five (not Stencil5D) | | {routing} | | "
                f"| {100 * sum(c) / len(c):+.1f} % | |"
            )
    return "\n".join(out)


def seed_spread(rows: list[dict[str, str]], routings: list[str]) -> str:
    """Per app and routing, the change in the mix under each seed that has both rows (the seed
    draws the routing's random numbers; the placement is the same `random-list`)."""
    comm = {(r["app"], r["mix"], r["routing"], r["seed"]): float(r["comm_mean_ms"]) for r in rows}
    seeds = sorted({r["seed"] for r in rows}, key=int)
    out = ["| app | routing | " + " | ".join(f"seed {s}" for s in seeds) + " |"]
    out.append("|---|---|" + "---:|" * len(seeds))
    for app, _ in JOBS:
        for routing in routings:
            cells = []
            for s in seeds:
                alone = comm.get((app, "alone", routing, s))
                mixed = comm.get((app, "mixed", routing, s))
                cells.append(f"{100 * (mixed / alone - 1):+.1f} %" if alone and mixed else "")
            out.append(f"| {LABEL[app]} | {routing} | " + " | ".join(cells) + " |")
    for routing in routings:
        cells = []
        for s in seeds:
            changes = [
                comm[(app, "mixed", routing, s)] / comm[(app, "alone", routing, s)] - 1
                for app, _ in JOBS
                if app != "stencil5d"
                and (app, "mixed", routing, s) in comm
                and (app, "alone", routing, s) in comm
            ]
            whole = len(changes) == len(JOBS) - 1
            cells.append(f"{100 * sum(changes) / len(changes):+.1f} %" if whole else "")
        out.append(f"| mean of the five (not Stencil5D) | {routing} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--routings", default="Q-adaptive,PAR")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--markdown", action="store_true", help="print the table and exit")
    args = parser.parse_args()
    routings = [r.strip() for r in args.routings.split(",") if r.strip()]
    if args.markdown:
        print(markdown(read_rows(), routings, args.seed))
        print()
        print(seed_spread(read_rows(), routings))
        return 0
    for routing in routings:
        for only in [*(m for m, _ in JOBS), None]:
            mix = "alone" if only else "mixed"
            app = only or JOBS[0][0]
            # Read afresh: figures.py may have added the row since.
            if any(
                (r["app"], r["mix"], r["routing"], r["seed"]) == (app, mix, routing, str(args.seed))
                for r in read_rows()
            ):
                continue
            print(f"{routing}: {only or 'the mix'} ...", file=sys.stderr, flush=True)
            new = run(only, routing, args.seed)
            record(new)
            print(f"  done in {new[0]['wall_s']} s", file=sys.stderr, flush=True)
    print(markdown(read_rows(), routings, args.seed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
