"""SC'22 pairwise interference (Fig. 4 and the headline checks): a target application alone and
with a background application, 528 ranks each on `sc22-1056`, under several routings.

    python experiments/sc22/pairs.py --target fft3d --background halo3d --routings PAR,Q-adaptive

One row per (target, background, routing) goes to `results/pairs.csv` (resumable: rows already
there are not run again; written atomically). `--preset` runs the pair on another network with
the SC'22 toolkit's MPI host costs, run window and `random-list` placement (the real-machine
study runs it on `frontier-class`), `--out` names its CSV, `--set key=value` overrides a key of
every run (with an `--out` of its own). A background of `none` is the
target alone. The interference is `(T_comm co-run - T_comm alone) / T_comm alone` on the
target's mean communication time per rank (the paper's "variation").
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import rows as result_rows

from dflab.api import simulate
from dflab.loading import preset as load_preset

RESULTS = Path(__file__).resolve().parent / "results" / "pairs.csv"
SC22 = "sc22-1056"
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


# Each job's slice of the placement. A target that runs fewer ranks (LULESH: a cube of 512)
# leaves the rest of its slice idle, as the paper does, so the background keeps its nodes.
SLICE = 528
RANKS = {"lulesh": 512}


def experiment(
    target: str, background: str, routing: str, seed: int, preset: str = SC22
) -> dict[str, Any]:
    """The target (job 0) with the background (the last job; `none`: the target alone)."""
    ranks = RANKS.get(target, SLICE)
    jobs = [{"motif": target, "ranks": ranks}]
    if background != "none":
        if ranks < SLICE:
            jobs.append({"motif": "null", "ranks": SLICE - ranks})
        jobs.append({"motif": background, "ranks": SLICE})
    workload: dict[str, Any] = {"jobs": jobs, "record_iterations": False}
    out: dict[str, Any] = {"preset": preset, "seed": seed, "routing": {"algorithm": routing}}
    if preset != SC22:
        # The SC'22 toolkit's host model and run window on the other network.
        sc22 = load_preset(SC22)
        assert sc22.workload is not None
        workload["placement"] = sc22.workload.placement
        workload["mpi"] = sc22.workload.mpi.model_dump()
        out["run"] = {"warmup_us": sc22.run.warmup_us, "measure_us": sc22.run.measure_us}
    return {**out, "workload": workload}


def run_pair(
    target: str,
    background: str,
    routing: str,
    seed: int,
    preset: str = SC22,
    sets: dict[str, Any] | None = None,
) -> dict[str, Any]:
    result = simulate(experiment(target, background, routing, seed, preset), **(sets or {}))
    return pair_row(result, target, background, routing, seed)


def pair_row(result: Any, target: str, background: str, routing: str, seed: int) -> dict[str, Any]:
    """The CSV row of one pair's simulation result."""
    assert result.workload is not None
    rows = result.workload.jobs.to_dicts()
    t = rows[0]
    return {
        "target": target,
        "background": background,
        "routing": routing,
        "seed": seed,
        **result_rows.job_times(t, "target_"),
        "background_exec_ms": background_exec_ms(rows[-1]) if background != "none" else "",
        "wall_s": round(result.execution.wall_s, 1),
    }


def background_exec_ms(row: dict[str, Any]) -> float | str:
    """The background's execution time; empty when the target ended the run first
    (`workload.end_with_jobs`, as fig4.py runs)."""
    return row["exec_us"] / 1e3 if row["finished"] else ""


def read_rows(path: Path | None = None) -> list[dict[str, str]]:
    return result_rows.read_rows(path or RESULTS)


def write_rows(done: list[dict[str, Any]], path: Path | None = None) -> None:
    result_rows.write_rows(path or RESULTS, COLUMNS, done)


def record(row: dict[str, Any], path: Path | None = None) -> None:
    """Add `row` to the CSV unless its (target, background, routing, seed) is there (the
    figures' runs are the same simulations: one run serves both)."""
    key = ("target", "background", "routing", "seed")
    result_rows.add_rows(path or RESULTS, COLUMNS, [row], key)


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
    parser.add_argument("--preset", default=SC22, help="the network (default %(default)s)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="the CSV (default %(default)s)")
    parser.add_argument("--markdown", action="store_true", help="print the table and exit")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a configuration key of every run (needs --out)",
    )
    args = parser.parse_args()
    sets = result_rows.parse_sets(args.set)
    if sets and args.out == RESULTS:
        parser.error("--set needs an --out, so that its rows go to their own CSV")
    rows = read_rows(args.out)
    if args.markdown:
        print("\n".join(interference(rows)))
        return 0
    for routing in args.routings.split(","):
        for background in ["none", *args.background.split(",")]:
            key = (args.target, background, routing, str(args.seed))
            # Read afresh: figures.py may have added the row since.
            done = {
                (r["target"], r["background"], r["routing"], r["seed"]) for r in read_rows(args.out)
            }
            if key in done:
                continue
            row = run_pair(args.target, background, routing, args.seed, args.preset, sets)
            record(row, args.out)
            print(row, file=sys.stderr, flush=True)
    print("\n".join(interference(read_rows(args.out))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
