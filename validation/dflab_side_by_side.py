"""dflab next to the SST/Merlin Q-adaptive fork, configuration by configuration.

Reads validation/results/sst_fork_load.csv, keeps one SST row per (routing, pattern, offered
load) -- the latest in the file when a configuration was run twice -- runs dflab on the matched
configuration and writes validation/results/dflab_vs_sst_fork.csv (one row per configuration,
SST and dflab columns side by side, the command of each). See docs/validation.md.

    .venv/bin/python validation/dflab_side_by_side.py            # all configurations, 3 seeds
    .venv/bin/python validation/dflab_side_by_side.py --seeds 1 --only MIN:ur
    .venv/bin/python validation/dflab_side_by_side.py --timing link-busy   # the other timing

Runs are sequential under `nice -n 10`. Two dflab variants per configuration:
* "closed" (the one compared): lock-step injection (periodic with a random phase for the
  link-busy timing, as it was first compared), SST's uniform-with-self, and a source queue
  bounded at 20 packets (SST's TrafficGen defers a round while its NIC's 2560 B = 20-packet
  buffer is full; its latency starts when the packet enters that buffer);
* "open": the same without the bound (dflab's default open-loop source, unbounded queue).
Below saturation the two are identical; in saturated configurations only "closed" matches SST.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import shlex
import subprocess
import sys
import time
from pathlib import Path
from statistics import mean

ROOT = Path(__file__).resolve().parent.parent
SST_CSV = ROOT / "validation/results/sst_fork_load.csv"
OUT_CSV = ROOT / "validation/results/dflab_vs_sst_fork.csv"
# network.timing of the dflab runs (--timing); results of "link-busy" go to
# validation/results/dflab_linkbusy_vs_sst_fork.csv by default
TIMING = "sst"
DFLAB = ROOT / ".venv/bin/dflab"

ROUTINGS = ["MIN", "VALn", "UGALg", "UGALn", "PAR", "Q-adaptive"]
PATTERNS = {"ur": "ur", "adv1": "adv+1"}  # SST name -> dflab name (Tornado shift 1 = adv+1)
SOURCE_QUEUE = 20  # SST NIC output buffer: 2560 B / 128 B packets

# agreement criteria of docs/validation.md
TOL_MEAN, TOL_P99, TOL_ACC = 0.03, 0.05, 0.01


def num(x: str) -> str:
    """A CSV number as a short command-line literal (10.0 -> 10, 0.29907 stays)."""
    return f"{float(x):g}" if float(x) == int(float(x)) else x


def sst_configs(path: Path) -> list[dict]:
    """One SST row per (routing, pattern, offered load): the latest in file order."""
    rows: dict[tuple[str, str, str], dict] = {}
    earlier: dict[tuple[str, str, str], list[str]] = {}
    with path.open() as f:
        for r in csv.DictReader(f):
            key = (r["routing"].split("(")[0], r["pattern"], r["offered_load"])
            if key in rows:
                old = rows[key]
                earlier.setdefault(key, []).append(
                    f"{num(old['warmup_us'])}+{num(old['measure_us'])}us: "
                    f"mean {old['mean_lat_ns']} p99 {old['p99_lat_ns']} "
                    f"acc {old['accepted_load']}"
                )
            rows[key] = r
    out = []
    for key, r in rows.items():
        r = dict(r)
        r["_routing"], r["_pattern"] = key[0], key[1]
        r["_earlier"] = " | ".join(earlier.get(key, []))
        out.append(r)
    order = {name: i for i, name in enumerate(ROUTINGS)}
    out.sort(key=lambda r: (r["_pattern"] != "ur", float(r["offered_load"]), order[r["_routing"]]))
    return out


def dflab_args(r: dict, seed: int, closed: bool) -> list[str]:
    args = [
        "dflab", "run", "--preset", "qadaptive-1056",
        "--routing", r["_routing"], "--traffic", PATTERNS[r["_pattern"]],
        "--load", r["offered_load"],
        "--warmup-us", num(r["warmup_us"]), "--measure-us", num(r["measure_us"]),
        "--seed", str(seed), "--set", f"network.timing={TIMING}",
        "--set", f"traffic.process={'lockstep' if TIMING == 'sst' else 'periodic'}",
    ]  # fmt: skip
    if r["_pattern"] == "ur":
        args += ["--set", "traffic.allow_self=true"]
    if closed:
        args += ["--set", f"traffic.source_queue_packets={SOURCE_QUEUE}"]
    return [*args, "--json"]


def command_text(r: dict, seeds: list[int], closed: bool) -> str:
    one = shlex.join(dflab_args(r, 0, closed)).replace("--seed 0", "--seed $S")
    return f"for S in {' '.join(map(str, seeds))}; do {one}; done"


def run_dflab(r: dict, seed: int, closed: bool) -> dict:
    args = dflab_args(r, seed, closed)
    t0 = time.monotonic()
    p = subprocess.run(
        ["nice", "-n", "10", str(DFLAB), *args[1:]],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if p.returncode != 0:
        sys.exit(f"dflab failed ({p.returncode}): {shlex.join(args)}\n{p.stderr}")
    res = json.loads(p.stdout.strip().splitlines()[0])
    res["_wall"] = time.monotonic() - t0
    return res


def rel(a: float | None, b: float) -> float | None:
    return None if a is None or not b else (a - b) / b


def fmt(x: float | None, digits: int = 4) -> str:
    return "" if x is None else f"{x:.{digits}f}"


def summarise(runs: list[dict], prefix: str) -> dict:
    def m(key: str) -> float | None:
        vals = [x[key] for x in runs if x[key] is not None]
        return mean(vals) if vals else None

    lat = [x["latency_mean_ns"] for x in runs]
    return {
        f"{prefix}mean_lat_ns": m("latency_mean_ns"),
        f"{prefix}mean_lat_min_ns": min(lat),
        f"{prefix}mean_lat_max_ns": max(lat),
        f"{prefix}mean_lat_per_seed_ns": ";".join(f"{v:.1f}" for v in lat),
        f"{prefix}p50_lat_ns": m("latency_p50_ns"),
        f"{prefix}p99_lat_ns": m("latency_p99_ns"),
        f"{prefix}net_mean_lat_ns": m("network_latency_mean_ns"),
        f"{prefix}net_p99_lat_ns": m("network_latency_p99_ns"),
        f"{prefix}offered_load": m("offered_load"),
        f"{prefix}accepted_load": m("accepted_load"),
        f"{prefix}accepted_min": min(x["accepted_load"] for x in runs),
        f"{prefix}accepted_max": max(x["accepted_load"] for x in runs),
        f"{prefix}router_hops": m("hops_mean"),
        f"{prefix}source_queue_end": m("source_queue_end"),
        f"{prefix}steady": f"{sum(bool(x['steady_state']) for x in runs)}/{len(runs)}",
        f"{prefix}wall_s": mean(x["_wall"] for x in runs),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3, help="seeds per configuration (1..N)")
    ap.add_argument("--only", help="ROUTING[:PATTERN[:LOAD]] filter, e.g. MIN:ur or PAR:adv1")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument(
        "--timing", choices=["sst", "link-busy"], default="sst", help="dflab's network.timing"
    )
    a = ap.parse_args()
    global TIMING
    TIMING = a.timing
    if a.out is None:
        a.out = OUT_CSV if TIMING == "sst" else OUT_CSV.with_name("dflab_linkbusy_vs_sst_fork.csv")
    seeds = list(range(1, a.seeds + 1))
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    today = dt.date.today().isoformat()

    configs = sst_configs(SST_CSV)
    if a.only:
        want = a.only.split(":")
        configs = [
            r
            for r in configs
            if [r["_routing"], r["_pattern"], r["offered_load"]][: len(want)] == want
        ]
    rows = []
    for i, r in enumerate(configs, 1):
        label = f"{r['_routing']} {r['_pattern']} {r['offered_load']}"
        closed = [run_dflab(r, s, True) for s in seeds]
        open_ = [run_dflab(r, s, False) for s in seeds]
        d = summarise(closed, "dflab_") | summarise(open_, "dflab_open_")
        sst = {k: float(r[k]) for k in ("mean_lat_ns", "p50_lat_ns", "p99_lat_ns")}
        sst_acc, sst_hops = float(r["accepted_load"]), float(r["mean_router_hops"])
        err = {
            "err_mean": rel(d["dflab_mean_lat_ns"], sst["mean_lat_ns"]),
            "err_p50": rel(d["dflab_p50_lat_ns"], sst["p50_lat_ns"]),
            "err_p99": rel(d["dflab_p99_lat_ns"], sst["p99_lat_ns"]),
            "diff_accepted": d["dflab_accepted_load"] - sst_acc,
            "diff_router_hops": d["dflab_router_hops"] - sst_hops,
            "err_mean_open": rel(d["dflab_open_mean_lat_ns"], sst["mean_lat_ns"]),
            "diff_accepted_open": d["dflab_open_accepted_load"] - sst_acc,
        }
        agrees = (
            err["err_mean"] is not None
            and abs(err["err_mean"]) <= TOL_MEAN
            and abs(err["err_p99"]) <= TOL_P99
            and abs(err["diff_accepted"]) <= TOL_ACC
        )
        row = {
            "routing": r["_routing"],
            "pattern": PATTERNS[r["_pattern"]],
            "sst_pattern": r["_pattern"],
            "offered_load": r["offered_load"],
            "warmup_us": num(r["warmup_us"]),
            "measure_us": num(r["measure_us"]),
            "sst_mean_lat_ns": r["mean_lat_ns"],
            "sst_p50_lat_ns": r["p50_lat_ns"],
            "sst_p99_lat_ns": r["p99_lat_ns"],
            "sst_injected_load": r["injected_load"],
            "sst_accepted_load": r["accepted_load"],
            "sst_router_hops": r["mean_router_hops"],
            "sst_packets_measured": r["packets_measured"],
            "sst_earlier_rows": r["_earlier"],
            "sst_command": r["command"],
            "sst_commit": r["commit"],
            "dflab_seeds": len(seeds),
        }
        for k, v in (d | err).items():
            if isinstance(v, float):
                v = fmt(v, 5 if "load" in k or "accepted" in k or k.startswith("err") else 2)
            row[k] = "" if v is None else v
        row["agrees"] = agrees
        row["dflab_command"] = command_text(r, seeds, True)
        row["dflab_open_command"] = command_text(r, seeds, False)
        row["dflab_commit"] = commit
        row["run_date"] = today
        rows.append(row)
        print(
            f"[{i}/{len(configs)}] {label}: SST {sst['mean_lat_ns']:.1f} ns acc {sst_acc:.4f} | "
            f"dflab {d['dflab_mean_lat_ns']:.1f} ns acc {d['dflab_accepted_load']:.4f} "
            f"({row['err_mean']}) {d['dflab_wall_s']:.1f} s/run",
            file=sys.stderr,
        )
    with a.out.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {a.out} ({len(rows)} configurations)", file=sys.stderr)


if __name__ == "__main__":
    main()
