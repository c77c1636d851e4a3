"""SC'22 Table I: each application alone at 528 ranks on preset sc22-1056, against the paper.

    .venv/bin/python experiments/sc22/table1.py [--routing Q-adaptive] [--apps cosmoflow,dl]
    .venv/bin/python experiments/sc22/table1.py --markdown [--routing PAR]

One simulation per app, one at a time: the app's job replaces the preset's pair (LULESH runs
512 ranks and leaves the other 16 of its slice idle); iteration rows are not kept. Each finished
app adds a row to results/table1_<routing>.csv (rewritten atomically after every app); apps
already in the file are skipped, so an interrupted sweep resumes where it stopped.

A run that passes --max-wall-s of wall time is stopped and not recorded (the app is reported as
skipped); so is one whose projected wall time (simulated-time rate so far, against 1.5 times
the paper's execution time) exceeds twice that limit once a minute has passed.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path
from typing import Any

import rows as result_rows

from dflab.api import simulate

PRESET = "sc22-1056"
RESULTS = Path(__file__).resolve().parent / "results"

# Cheapest first (wire bytes and expected wall time on a 2-core host).
ORDER = ("cosmoflow", "dl", "stencil5d", "lqcd", "lu", "fft3d", "ur", "lulesh", "halo3d")
RANKS = {"lulesh": 512}
LABEL = {
    "ur": "UR",
    "lu": "LU",
    "fft3d": "FFT3D",
    "halo3d": "Halo3D",
    "lqcd": "LQCD",
    "stencil5d": "Stencil5D",
    "cosmoflow": "CosmoFlow",
    "dl": "DL",
    "lulesh": "LULESH",
}
# Table I of the paper: total MB, exec ms, injection GB/s, peak ingress (as printed, and in
# bytes with K/M = 10^3/10^6; LULESH's is the larger of its two, the 26-point exchange).
PAPER = {
    "ur": (11829.48, 13.31, 888.48, "3.07 KB", 3.07e3),
    "lu": (13713.22, 13.71, 999.88, "30.0 KB", 30.0e3),
    "fft3d": (15781.09, 12.53, 1259.35, "51.68 KB", 51.68e3),
    "halo3d": (47769.10, 10.85, 4403.81, "1.15 MB", 1.15e6),
    "lqcd": (11924.31, 13.79, 864.70, "4.60 MB", 4.60e6),
    "stencil5d": (9833.95, 13.70, 717.87, "14.0 MB", 14.0e6),
    "cosmoflow": (2373.84, 13.65, 173.86, "2.25 MB", 2.25e6),
    "dl": (9714.44, 11.86, 819.12, "2.30 MB", 2.30e6),
    "lulesh": (17900.12, 12.34, 1450.78, "1.95 MB / 14.91 KB", 1.95e6),
}

COLUMNS = (
    "app",
    "routing",
    "ranks",
    "finished",
    "exec_ms",
    "total_msg_mb",
    "injection_rate_gbs",
    "peak_ingress_bytes",
    "comm_mean_ms",
    "comm_std_ms",
    "comm_max_ms",
    "latency_mean_us",
    "latency_p50_us",
    "latency_p99_us",
    "messages",
    "wait2start_ms",
    "injection_rate_after_start_gbs",
    "wall_s",
    "engine_semantics",
    "engine_sha256",
    "paper_total_msg_mb",
    "paper_exec_ms",
    "paper_injection_rate_gbs",
    "paper_peak_ingress",
    "paper_peak_ingress_bytes",
    "rel_total_msg",
    "rel_exec",
    "rel_injection_rate",
    "rel_peak_ingress",
)


def engine_identity() -> tuple[str, str]:
    """The loaded engine's semantics version and the first 12 hex digits of its library's
    SHA-256 (read at start: a rebuild during a sweep does not change the loaded engine)."""
    from dflab import _core

    digest = hashlib.sha256(Path(_core.__file__).read_bytes()).hexdigest()[:12]
    return str(_core.engine_semantics()), digest


ENGINE = engine_identity()


class TooSlow(Exception):
    """Raised from the progress callback to stop a run that would take too long."""


def rel(ours: float, paper: float) -> float:
    return (ours - paper) / paper


def config(app: str, routing: str) -> dict:
    return {
        "preset": PRESET,
        "routing": {"algorithm": routing},
        "workload": {
            "record_iterations": False,
            "jobs": [{"motif": app, "ranks": RANKS.get(app, 528)}],
        },
    }


def run_app(app: str, routing: str, max_wall_s: float, sets: dict[str, Any]) -> dict | None:
    paper_mb, paper_ms, paper_gbs, paper_peak, paper_peak_b = PAPER[app]
    expect_us = 1.5 * paper_ms * 1e3
    last = [0.0]

    def progress(now_us: float, end_us: float, wall_s: float) -> None:
        if wall_s - last[0] >= 30.0:
            last[0] = wall_s
            print(f"  {app}: {now_us / 1e3:7.3f} ms simulated, {wall_s:6.0f} s wall", flush=True)
        if wall_s > max_wall_s:
            raise TooSlow(f"{wall_s:.0f} s wall at {now_us / 1e3:.3f} ms simulated")
        if wall_s > 60.0 and now_us > 0:
            projected = expect_us / (now_us / wall_s)
            if projected > 2 * max_wall_s:
                raise TooSlow(f"projected {projected:.0f} s wall ({now_us / 1e3:.3f} ms so far)")

    start = time.monotonic()
    try:
        result = simulate(config(app, routing), progress=progress, **sets)
    except TooSlow as stop:
        print(f"{app}: stopped, {stop} (not recorded)", flush=True)
        return None
    print(f"  {app}: done in {time.monotonic() - start:.0f} s", flush=True)
    job = result.workload.jobs.row(0, named=True)
    wait2start_ms = 0.35
    exec_ms = job["exec_us"] / 1e3
    mb = job["wire_bytes"] / 1e6
    return {
        "app": app,
        "routing": routing,
        "ranks": job["ranks"],
        **result_rows.job_times(job),
        "total_msg_mb": mb,
        "injection_rate_gbs": job["injection_rate_gbs"],
        "peak_ingress_bytes": job["peak_ingress_bytes"],
        "latency_p50_us": job["latency_p50_ns"] / 1e3,
        "messages": job["messages"],
        "wait2start_ms": wait2start_ms,
        "injection_rate_after_start_gbs": mb / (exec_ms - wait2start_ms),
        "wall_s": result.execution.wall_s,
        "engine_semantics": ENGINE[0],
        "engine_sha256": ENGINE[1],
        "paper_total_msg_mb": paper_mb,
        "paper_exec_ms": paper_ms,
        "paper_injection_rate_gbs": paper_gbs,
        "paper_peak_ingress": paper_peak,
        "paper_peak_ingress_bytes": paper_peak_b,
        "rel_total_msg": rel(mb, paper_mb),
        "rel_exec": rel(exec_ms, paper_ms),
        "rel_injection_rate": rel(job["injection_rate_gbs"], paper_gbs),
        "rel_peak_ingress": rel(job["peak_ingress_bytes"], paper_peak_b),
    }


def csv_path(routing: str, tag: str = "") -> Path:
    return RESULTS / f"table1_{routing}{'_' + tag if tag else ''}.csv"


def read_rows(path: Path) -> list[dict]:
    return result_rows.read_rows(path)


def write_rows(path: Path, done: list[dict]) -> None:
    result_rows.write_rows(path, COLUMNS, sorted(done, key=lambda r: ORDER.index(r["app"])))


def pct(x: str) -> str:
    return f"{100 * float(x):+.1f} %"


def size(b: float) -> str:
    return f"{b / 1e6:.2f} MB" if b >= 1e6 else f"{b / 1e3:.2f} KB"


def markdown(routing: str, tag: str = "") -> str:
    rows = {r["app"]: r for r in read_rows(csv_path(routing, tag))}
    out = [
        "| app | ranks | total MB (paper) | Δ | exec ms (paper) | Δ | injection GB/s (paper) | Δ "
        "| peak ingress (paper) | Δ | comm mean / max ms | wall s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for app in ORDER:
        paper_mb, paper_ms, paper_gbs, paper_peak, _ = PAPER[app]
        r = rows.get(app)
        if r is None:
            out.append(
                f"| {LABEL[app]} | not run | - ({paper_mb:,.2f}) | | - ({paper_ms:.2f}) | "
                f"| - ({paper_gbs:,.2f}) | | - ({paper_peak}) | | | |"
            )
            continue
        done = "" if r["finished"] == "True" else " (not finished)"
        out.append(
            f"| {LABEL[app]} | {r['ranks']} "
            f"| {float(r['total_msg_mb']):,.2f} ({paper_mb:,.2f}) | {pct(r['rel_total_msg'])} "
            f"| {float(r['exec_ms']):.2f}{done} ({paper_ms:.2f}) | {pct(r['rel_exec'])} "
            f"| {float(r['injection_rate_gbs']):,.2f} ({paper_gbs:,.2f}) "
            f"| {pct(r['rel_injection_rate'])} "
            f"| {size(float(r['peak_ingress_bytes']))} ({paper_peak}) "
            f"| {pct(r['rel_peak_ingress'])} "
            f"| {float(r['comm_mean_ms']):.2f} / {float(r['comm_max_ms']):.2f} "
            f"| {float(r['wall_s']):.0f} |"
        )
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--routing", default="Q-adaptive", help="routing.algorithm (Q-adaptive)")
    parser.add_argument(
        "--apps", default=",".join(ORDER), help="comma-separated apps, run in this order"
    )
    parser.add_argument(
        "--max-wall-s", type=float, default=1200.0, help="stop an app's run after this wall time"
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an override on top of the preset (repeatable), e.g. workload.mpi.nic2host_ns=1000",
    )
    parser.add_argument(
        "--tag", default="", help="suffix of the CSV name (for runs with --set): table1_R_TAG.csv"
    )
    parser.add_argument("--markdown", action="store_true", help="print the table and exit")
    args = parser.parse_args()

    if args.markdown:
        print(markdown(args.routing, args.tag))
        return 0

    apps = [a.strip().lower() for a in args.apps.split(",") if a.strip()]
    unknown = [a for a in apps if a not in PAPER]
    if unknown:
        parser.error(f"unknown apps {unknown}; known: {', '.join(ORDER)}")
    sets = result_rows.parse_sets(args.set)
    if sets and not args.tag:
        parser.error("--set needs a --tag, so that its rows go to their own CSV")
    path = csv_path(args.routing, args.tag)
    rows = read_rows(path)
    skipped = []
    for app in apps:
        if any(r["app"] == app for r in rows):
            print(f"{app}: already in {path.name}, skipped")
            continue
        print(f"{app}: running alone under {args.routing}", flush=True)
        row = run_app(app, args.routing, args.max_wall_s, sets)
        if row is None:
            skipped.append(app)
            continue
        rows = [r for r in read_rows(path) if r["app"] != app] + [row]
        write_rows(path, rows)
        print(
            f"{app}: exec {row['exec_ms']:.3f} ms ({100 * row['rel_exec']:+.1f} %), "
            f"{row['total_msg_mb']:,.2f} MB, {row['injection_rate_gbs']:,.1f} GB/s, "
            f"finished {row['finished']}, wall {row['wall_s']:.0f} s",
            flush=True,
        )
    if skipped:
        print(f"not recorded (too slow): {', '.join(skipped)}")
    return 1 if skipped else 0


if __name__ == "__main__":
    sys.exit(main())
