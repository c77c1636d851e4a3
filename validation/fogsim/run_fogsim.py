#!/usr/bin/env python3
"""Run FOGSim points for the ACOR family (JPDC'19) at 1,056 nodes and append one CSV row per point.

Reference simulator
-------------------
* FOGSim, github:fuentesp/fogsim, branch `release`, commit dcdd75f76788a367d4f71e7eaae131907ee8441f
  (the release the JPDC'19 ACOR paper used). Exported (git archive, unmodified) to
  /work/refsim/src/fogsim, outside this repository; no FOGSim source is kept here.
* Build (Debian 12, g++ 12.2.0), in /work/refsim/src/fogsim:

      nice -n 10 make -j1 dev CFLAGS="-c -O2 -Wno-sign-compare -std=c++11" DFLAGS="-O2"

  No -DNDEBUG: readConfiguration() reads every mandatory key inside assert(), so NDEBUG would
  silently drop the configuration.

Command line of each run
------------------------
One process at a time, in its own scratch directory /work/refsim/runs/fogsim_1056/<point>/:

    nice -n 10 <fogsim> <repo>/validation/fogsim/base_1056.cfg \\
        <routing keys> <traffic keys> Probability=<100*load> Seed=<seed> \\
        WarmupCycles=<W> MaxCycles=<M> OutputFileName=<point dir>/out

with <routing keys> from ROUTINGS and <traffic keys> from PATTERNS below (command-line key=value
pairs override the file). The exact argv of every point is stored in its `cmd` CSV column and in
<point dir>/meta.json; FOGSim's stdout/stderr go to <point dir>/stdout.txt / stderr.txt.

Usage
-----
    python3 validation/fogsim/run_fogsim.py --routings MIN,VAL --patterns UN --loads 0.1,0.3 \\
        [--warmup 10000] [--measure 10000] [--seed 1] [--timeout 900] [--deadline-epoch T]

Runs the Cartesian product routings x patterns x loads (in that nesting order: pattern, routing,
load). A point already present in the CSV (same routing, pattern, load, warm-up, measure, seed and
commit) is skipped, so a grid can be resumed. The CSV is rewritten atomically after every point.
`--deadline-epoch` (Unix time): no new point is started after it. `--timeout`: wall seconds after
which a point is killed (recorded with status=timeout). `--reparse DIR` re-parses one point dir.
Python 3 standard library only.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
COMMIT = "dcdd75f76788a367d4f71e7eaae131907ee8441f"
DEFAULT_BIN = Path("/work/refsim/src/fogsim/fogsim")
DEFAULT_CFG = HERE / "base_1056.cfg"
DEFAULT_OUT = ROOT / "validation" / "results" / "fogsim_1056.csv"
DEFAULT_RUNS = Path("/work/refsim/runs/fogsim_1056")

# Routing labels -> FOGSim keys (acor-family.md A.2, checked against the source; see README.md).
_VC_MIN = ["LocalLinkChannels=2", "GlobalChannels=1", "InjectionChannels=1"]
_VC_NM = ["LocalLinkChannels=4", "GlobalChannels=2", "InjectionChannels=1"]
ROUTINGS = {
    # minimal
    "MIN": ["routing=MIN"] + _VC_MIN,
    # VAL = restricted Valiant (RVAL) + recomputation, RRG-Sw (the paper's baseline "VAL")
    "VAL": ["routing=OBL", "ValiantType=SRCEXC_RECOMP", "GlobalMisroutingPolicy=RRG_L",
            "ValiantMisroutingDestination=NODE"] + _VC_NM,
    "VAL_CRGGr": ["routing=OBL", "ValiantType=SRCEXC_RECOMP", "GlobalMisroutingPolicy=CRG_L",
                  "ValiantMisroutingDestination=GROUP"] + _VC_NM,
    "VAL_CRGGr_NORC": ["routing=OBL", "ValiantType=SRCEXC", "GlobalMisroutingPolicy=CRG_L",
                       "ValiantMisroutingDestination=GROUP"] + _VC_NM,
    "VAL_CRGSw": ["routing=OBL", "ValiantType=SRCEXC_RECOMP", "GlobalMisroutingPolicy=CRG_L",
                  "ValiantMisroutingDestination=NODE"] + _VC_NM,
    # restricted Valiant WITHOUT recomputation (Fig. 4 "RVAL"; Fig. 5 "VAL" without Recomp)
    "VAL_NORC": ["routing=OBL", "ValiantType=SRCEXC", "GlobalMisroutingPolicy=RRG_L",
                 "ValiantMisroutingDestination=NODE"] + _VC_NM,
    # unrestricted Valiant without recomputation (Fig. 4 "VAL"): restriction is the _L suffix
    "VAL_UNR": ["routing=OBL", "ValiantType=SRCEXC", "GlobalMisroutingPolicy=RRG",
                "ValiantMisroutingDestination=NODE"] + _VC_NM,
    # PB = RPB + recomputation, RRG-Sw (FOGSim SRC_ADP)
    "PB": ["routing=SRC_ADP", "ValiantType=SRCEXC_RECOMP", "GlobalMisroutingPolicy=RRG_L"] + _VC_NM,
    "PB_NORC": ["routing=SRC_ADP", "ValiantType=SRCEXC", "GlobalMisroutingPolicy=RRG_L"] + _VC_NM,
    "PB_UNR": ["routing=SRC_ADP", "ValiantType=SRCEXC", "GlobalMisroutingPolicy=RRG"] + _VC_NM,
    # ACOR-Switch 3L (CRG-Gr -> CRG-Sw -> RRG-Sw), HI 500, IT 15/500, DT 5/15 (from the cfg)
    "ACOR": ["routing=ACOR", "ValiantType=SRCEXC_RECOMP", "acorStateManagement=SWITCHCGCSRS"] + _VC_NM,
    # ACOR-Switch 2LA (CRG-Gr -> RRG-Sw) and 2LB (CRG-Sw -> RRG-Sw)
    "ACOR_2LA": ["routing=ACOR", "ValiantType=SRCEXC_RECOMP", "acorStateManagement=SWITCHCGRS"] + _VC_NM,
    "ACOR_2LB": ["routing=ACOR", "ValiantType=SRCEXC_RECOMP", "acorStateManagement=SWITCHCSRS"] + _VC_NM,
    # PB-ACOR-Switch 3L, IT2 = 50
    "PBACOR": ["routing=PB_ACOR", "ValiantType=SRCEXC_RECOMP", "acorStateManagement=SWITCHCGCSRS",
               "acorInc2Packets=50"] + _VC_NM,
    # PB-ACOR-Switch 2LA (CRG-Gr -> RRG-Sw) and 2LB (CRG-Sw -> RRG-Sw)
    "PBACOR_2LA": ["routing=PB_ACOR", "ValiantType=SRCEXC_RECOMP", "acorStateManagement=SWITCHCGRS",
                   "acorInc2Packets=50"] + _VC_NM,
    "PBACOR_2LB": ["routing=PB_ACOR", "ValiantType=SRCEXC_RECOMP", "acorStateManagement=SWITCHCSRS",
                   "acorInc2Packets=50"] + _VC_NM,
}

PATTERNS = {
    "UN": ["Traffic=UN"],
    # router r -> router r+1 mod a of the same group, random node
    "ADVl": ["Traffic=ADV_LOCAL", "AdvTrafficLocalDistance=1"],
    # random node of group g+1 / g+h (h = 4)
    "ADV+1": ["Traffic=ADV_RANDOM_NODE", "AdvTrafficDistance=1"],
    "ADV+h": ["Traffic=ADV_RANDOM_NODE", "AdvTrafficDistance=4"],
    # a fixed random destination per node, drawn at its first packet among the nodes not yet
    # drawn (never itself)
    "PERM": ["Traffic=RANDOMPERMUTATION"],
    # each group's traffic to the h groups reached through its first router's global links
    # (FOGSim's ADVc, which reads no parameter)
    "ADVc": ["Traffic=ADVc"],
    # 25 % of every node's packets to the first 12.5 % of the nodes, the rest UN (Figs. 15-16)
    "HOT": ["Traffic=HOTREGION", "PercentTrafficToCongest=25", "PercentNodesIntoRegion=12.5"],
}

COLUMNS = [
    "routing", "pattern", "offered_load", "accepted_load", "applied_load",
    "avg_total_latency", "avg_network_latency", "avg_injection_latency",
    "avg_local_hops", "avg_global_hops", "avg_hops", "nonmin_share",
    "acor_crggr_pct", "acor_crgsw_pct", "acor_rrgsw_pct",
    "packets_received", "warmup_cycles", "measured_cycles", "seed", "fogsim_commit",
    "status", "wall_s", "cmd",
]
KEY_COLS = ("routing", "pattern", "offered_load", "warmup_cycles", "measured_cycles", "seed", "fogsim_commit")


def fmt_load(x: float) -> str:
    return f"{x:g}"


def point_key(row: dict) -> tuple:
    return tuple(str(row[c]) for c in KEY_COLS)


def read_csv(path: Path) -> list[dict]:
    if not path.exists():
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def write_csv(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=str(path.parent), prefix=".fogsim_", suffix=".csv")
    with os.fdopen(fd, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({c: r.get(c, "") for c in COLUMNS})
    os.replace(tmp, path)


_NUM = r"([-+]?nan|[-+]?inf|[-+0-9.eE]+)"


def _grab(text: str, label: str):
    m = re.search(r"^" + re.escape(label) + r":\s*" + _NUM, text, re.M)
    if not m:
        return None
    try:
        return float(m.group(1))
    except ValueError:
        return None


def parse_output(out_path: Path) -> dict:
    """Parse FOGSim's OutputFileName file into the CSV fields (empty when absent)."""
    if not out_path.exists():
        return {}
    t = out_path.read_text(errors="replace")
    if "STATISTICS" not in t:
        return {}
    r: dict = {}
    r["accepted_load"] = _grab(t, "Accepted Load")
    r["applied_load"] = _grab(t, "Applied Load")
    r["avg_total_latency"] = _grab(t, "Average Total Latency")
    r["avg_network_latency"] = _grab(t, "Average Latency")
    r["avg_injection_latency"] = _grab(t, "Average Inj Latency")
    r["avg_hops"] = _grab(t, "Average Distance")
    r["avg_local_hops"] = _grab(t, "Average Local Distance")
    r["avg_global_hops"] = _grab(t, "Average Global Distance")
    pk = _grab(t, "Packets Received")
    nm = _grab(t, "Non Minimally Routed Packets Received")
    r["packets_received"] = int(pk) if pk is not None else None
    r["nonmin_share"] = (nm / pk) if (pk and nm is not None) else None
    r["acor_crggr_pct"] = _grab(t, "% packets status CRGLGr")
    r["acor_crgsw_pct"] = _grab(t, "% packets status CRGLSw")
    r["acor_rrgsw_pct"] = _grab(t, "% packets status RRGLSw")
    m = re.search(r"^Cycles:\s*(\d+)\s*\(warmup:\s*(\d+)\)", t, re.M)
    if m:
        r["_cycles_total"] = int(m.group(1))
        r["_cycles_warmup"] = int(m.group(2))
    return r


def _round(v):
    if isinstance(v, float):
        return f"{v:.6g}"
    return "" if v is None else v


def run_point(args, routing: str, pattern: str, load: float) -> dict:
    label = f"{routing}__{pattern}__{fmt_load(load)}__w{args.warmup}_m{args.measure}_s{args.seed}"
    pdir = args.runs / label
    pdir.mkdir(parents=True, exist_ok=True)
    out = pdir / "out"
    if out.exists():
        out.unlink()
    traffic = PATTERNS[pattern]
    if pattern == "ADV+h":  # h of the configuration's network (4 on 1,056 nodes, 6 on 5,256)
        h = re.search(r"^H=(\d+)", args.cfg.read_text(), re.M)
        traffic = [traffic[0], f"AdvTrafficDistance={h.group(1) if h else 4}"]
    argv = ["nice", "-n", "10", str(args.bin), str(args.cfg.resolve())] + ROUTINGS[routing] + traffic + [
        f"Probability={fmt_load(round(load * 100, 6))}", f"Seed={args.seed}",
        f"WarmupCycles={args.warmup}", f"MaxCycles={args.measure}", f"OutputFileName={out}",
    ]
    t0 = time.time()
    status = "ok"
    with (pdir / "stdout.txt").open("w") as so, (pdir / "stderr.txt").open("w") as se:
        proc = subprocess.Popen(argv, stdout=so, stderr=se, cwd=str(pdir), start_new_session=True)
        try:
            rc = proc.wait(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # only the process group this script started
            rc = proc.wait()
            status = "timeout"
    wall = time.time() - t0
    if status == "ok" and rc != 0:
        status = f"rc={rc}"
    (pdir / "meta.json").write_text(json.dumps(
        {"argv": argv, "cwd": str(pdir), "rc": rc, "status": status, "wall_s": wall,
         "start": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t0)), "commit": COMMIT}, indent=1))
    row = make_row(routing, pattern, load, args, parse_output(out), status, wall, argv)
    return row


def make_row(routing, pattern, load, args, parsed, status, wall, argv) -> dict:
    if status == "ok" and not parsed:
        status = "no-output"
    row = {
        "routing": routing, "pattern": pattern, "offered_load": fmt_load(load),
        "warmup_cycles": args.warmup, "measured_cycles": args.measure, "seed": args.seed,
        "fogsim_commit": COMMIT, "status": status, "wall_s": f"{wall:.1f}" if wall is not None else "",
        "cmd": " ".join(argv),
    }
    for k in COLUMNS:
        if k in parsed:
            row[k] = _round(parsed[k])
    if parsed.get("_cycles_total") is not None:
        row["measured_cycles"] = parsed["_cycles_total"] - parsed["_cycles_warmup"]
        row["warmup_cycles"] = parsed["_cycles_warmup"]
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--routings", default="MIN", help="comma list of " + ",".join(ROUTINGS))
    ap.add_argument("--patterns", default="UN", help="comma list of " + ",".join(PATTERNS))
    ap.add_argument("--loads", default="0.1", help="comma list of offered loads (phits/node/cycle)")
    ap.add_argument("--warmup", type=int, default=10000)
    ap.add_argument("--measure", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--deadline-epoch", type=float, default=None)
    ap.add_argument("--bin", type=Path, default=DEFAULT_BIN)
    ap.add_argument("--cfg", type=Path, default=DEFAULT_CFG)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--runs", type=Path, default=DEFAULT_RUNS)
    ap.add_argument("--dry-run", action="store_true")
    args = ap.parse_args()

    routings = [r for r in args.routings.split(",") if r]
    patterns = [p for p in args.patterns.split(",") if p]
    loads = [float(x) for x in args.loads.split(",") if x]
    for r in routings:
        if r not in ROUTINGS:
            sys.exit(f"unknown routing {r}")
    for p in patterns:
        if p not in PATTERNS:
            sys.exit(f"unknown pattern {p}")

    rows = read_csv(args.out)
    done = {point_key(r) for r in rows}
    for pattern in patterns:
        for routing in routings:
            for load in loads:
                probe = {"routing": routing, "pattern": pattern, "offered_load": fmt_load(load),
                         "warmup_cycles": args.warmup, "measured_cycles": args.measure, "seed": args.seed,
                         "fogsim_commit": COMMIT}
                if point_key(probe) in done:
                    print(f"skip {routing} {pattern} {fmt_load(load)} (in CSV)", flush=True)
                    continue
                if args.deadline_epoch is not None and time.time() > args.deadline_epoch:
                    print("deadline passed; stopping", flush=True)
                    return 0
                if args.dry_run:
                    print(f"would run {routing} {pattern} {fmt_load(load)}", flush=True)
                    continue
                print(f"run {routing} {pattern} {fmt_load(load)} ...", flush=True)
                row = run_point(args, routing, pattern, load)
                rows = read_csv(args.out)  # re-read: keep rows appended by anyone else
                rows.append(row)
                write_csv(args.out, rows)
                done.add(point_key(row))
                print(f"  {row['status']} wall={row['wall_s']}s acc={row.get('accepted_load','')} "
                      f"lat={row.get('avg_total_latency','')} net={row.get('avg_network_latency','')} "
                      f"nonmin={row.get('nonmin_share','')}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
