"""SC'22 pairwise interference (Fig. 4 and the headline checks): a target application alone and
with a background application, 528 ranks each on `sc22-1056`, under several routings.

    python experiments/sc22/pairs.py --target fft3d --background halo3d --routings PAR,Q-adaptive

One row per (target, background, routing) goes to `results/pairs.csv` (resumable: rows already
there are not run again; written atomically). A background of `none` is the target alone. The
interference is `(T_comm co-run - T_comm alone) / T_comm alone` on the target's mean
communication time per rank (the paper's "variation").
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import rows as result_rows

from dflab.api import simulate

RESULTS = Path(__file__).resolve().parent / "results" / "pairs.csv"
COLUMNS = (
    "target",
    "background",
    "routing",
    "seed",
    "target_finished",
    "target_exec_ms",
    "target_comm_mean_ms",
    "target_comm_std_ms",
    "target_comm_max_ms",
    "target_latency_mean_us",
    "target_latency_p99_us",
    "background_exec_ms",
    "wall_s",
)


def experiment(target: str, background: str, routing: str, seed: int) -> dict[str, Any]:
    """The target (job 0) with the background (job 1; `none`: the target alone)."""
    jobs = [{"motif": target, "ranks": 528}]
    if background != "none":
        jobs.append({"motif": background, "ranks": 528})
    return {
        "preset": "sc22-1056",
        "seed": seed,
        "routing": {"algorithm": routing},
        "workload": {"jobs": jobs, "record_iterations": False},
    }


def run_pair(target: str, background: str, routing: str, seed: int) -> dict[str, Any]:
    result = simulate(experiment(target, background, routing, seed))
    assert result.workload is not None
    rows = result.workload.jobs.to_dicts()
    t = rows[0]
    return {
        "target": target,
        "background": background,
        "routing": routing,
        "seed": seed,
        **result_rows.job_times(t, "target_"),
        "background_exec_ms": rows[1]["exec_us"] / 1e3 if len(rows) > 1 else "",
        "wall_s": round(result.execution.wall_s, 1),
    }


def read_rows() -> list[dict[str, str]]:
    return result_rows.read_rows(RESULTS)


def write_rows(done: list[dict[str, Any]]) -> None:
    result_rows.write_rows(RESULTS, COLUMNS, done)


def interference(rows: list[dict[str, str]]) -> list[str]:
    """Markdown rows: per target, background and routing, the communication time and its
    change against the target alone under the same routing."""
    alone = {
        (r["target"], r["routing"]): float(r["target_comm_mean_ms"])
        for r in rows
        if r["background"] == "none"
    }
    out = [
        "| target | background | routing | comm mean ms | vs alone | p99 latency us | wall s |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in sorted(rows, key=lambda r: (r["target"], r["background"], r["routing"])):
        base = alone.get((r["target"], r["routing"]))
        comm = float(r["target_comm_mean_ms"])
        change = f"{100 * (comm - base) / base:+.1f} %" if base else "—"
        out.append(
            f"| {r['target']} | {r['background']} | {r['routing']} | {comm:.2f} | {change} | "
            f"{float(r['target_latency_p99_us']):.2f} | {r['wall_s']} |"
        )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="fft3d")
    parser.add_argument("--background", default="halo3d", help="comma list; 'none' = alone")
    parser.add_argument("--routings", default="PAR,Q-adaptive")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--markdown", action="store_true", help="print the table and exit")
    args = parser.parse_args()
    rows = read_rows()
    if args.markdown:
        print("\n".join(interference(rows)))
        return 0
    done = {(r["target"], r["background"], r["routing"], r["seed"]) for r in rows}
    for routing in args.routings.split(","):
        for background in ["none", *args.background.split(",")]:
            key = (args.target, background, routing, str(args.seed))
            if key in done:
                continue
            row = run_pair(args.target, background, routing, args.seed)
            rows.append({k: str(v) for k, v in row.items()})
            write_rows(rows)
            print(row, file=sys.stderr, flush=True)
    print("\n".join(interference(rows)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
