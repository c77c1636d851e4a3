"""dflab's BookSim timing next to BookSim2 itself, configuration by configuration.

Reads the BookSim rows of validation/results/booksim_small.csv (dfly_72.cfg), booksim_load.csv
(dfly_1056.cfg) and booksim_dgb.csv (dgb_1056.cfg, the DGB fork's own network = dflab's preset
`booksim-dgb-1056`), runs dflab on the matched configuration (the `booksim-72` /
`booksim-1056` network written out below, the row's routing, pattern, load and VCs, BookSim's
15,000 + 5,000 cycles) for seeds 1-3 and writes validation/results/dflab_vs_booksim.csv: one row
per configuration, BookSim's and dflab's mean/p50/p99 latency (cycles = ns), accepted load and
router hops side by side, with the dflab command. See docs/validation.md.

    .venv/bin/python validation/booksim_side_by_side.py                  # all rows, 3 seeds
    .venv/bin/python validation/booksim_side_by_side.py --only min:uniform --seeds 1

Mapping (docs/validation.md, "BookSim2"):
* BookSim master `min` (2 VCs) -> `MIN` with `routing.vcs` = the row's VCs and BookSim's VC
  layout (`vc_layout = "booksim"`: VC1 from the global hop on, ejection on the phase's VC);
* BookSim master `ugal` (3 VCs) -> `UGAL-L` with `form = "booksim"` (q_m <= 2 q_nm + 30 on
  whole-port used credits) and `intermediate = "any"` (its random intermediate node), on
  UGAL-L's own 4 VCs: folded onto 3, its layout shares a VC between the hops toward a global
  link and the last local hop, which deadlocks (BookSim's 3-VC phase layout is not ported);
* `uniform` -> `uniform` with `traffic.allow_self` (BookSim's uniform includes the source);
  `bad_dragon` -> `adv+1` (a random node of the next group);
* `injection_rate` (flits/cycle/node, Bernoulli) -> `traffic.load` (fraction of the host link).
* DGB fork (repo `hk`, built with `SINGLE_CYCLE`), all with `network.router_pipeline =
  "single-cycle"`: `min` -> `MIN` as above; `ugal` (the fork's hop-weighted UGAL on whole-port
  used credits, b = 0) -> `UGAL-L` with the fork's intermediate (`intermediate =
  "any-shortcut"`); `dgb` -> `DGB` with its defaults and the fork's hard-coded
  `local_q_scale = 8`.
BookSim rows that did not finish (`stable` False) are compared on accepted load only.
"""

from __future__ import annotations

import argparse
import csv
import json
import shlex
import subprocess
import sys
from pathlib import Path
from statistics import mean

from tables import write_rows

ROOT = Path(__file__).resolve().parent.parent
DFLAB = ROOT / ".venv/bin/dflab"
RESULTS = ROOT / "validation/results"
SOURCES = [RESULTS / "booksim_small.csv", RESULTS / "booksim_load.csv", RESULTS / "booksim_dgb.csv"]
OUT_CSV = RESULTS / "dflab_vs_booksim.csv"

# dfly(k, 2k, k) as BookSim's dragonflynew builds it: 1 cycle = 1 ns = one 64 B flit at 64 GB/s
# on every channel; local/global channels 10/100 cycles, host 1; 256-flit VC buffers; speedup 2;
# BookSim's default unbounded output queue (any size >= 4 VCs x 256 flits is unbounded).
NETWORK = {
    "timing": "booksim",
    "flit_bytes": 64,
    "packet_flits": 1,
    "host_bw_gbps": 64,
    "local_bw_gbps": 64,
    "global_bw_gbps": 64,
    "xbar_bw_gbps": 128,
    "input_buffer_flits": 256,
    "output_buffer_flits": 1024,
    "host_latency_ns": 1,
    "local_latency_ns": 10,
    "global_latency_ns": 100,
    "input_latency_ns": 0,
    "output_latency_ns": 0,
}
K_OF_CFG = {
    "validation/booksim/dfly_72.cfg": 2,
    "validation/booksim/dfly_1056.cfg": 4,
    "validation/booksim/dgb_1056.cfg": 4,
}
# Configurations that are a dflab preset (their network and run length come from it).
PRESET_OF_CFG = {"validation/booksim/dgb_1056.cfg": "booksim-dgb-1056"}
PATTERNS = {"uniform": "uniform", "bad_dragon": "adv+1"}


def routing_args(row: dict) -> list[str] | None:
    """dflab's routing options for a BookSim row, None when dflab has no match."""
    vcs = ["--set", f"routing.vcs={row['num_vcs']}"]
    if row["repo"] == "hk":
        # The DGB fork is built with SINGLE_CYCLE; its `ugal` is DGB (DGB_ON, default modes).
        single = ["--set", "network.router_pipeline=single-cycle"]
        if row["routing"] == "min":
            return ["--routing", "MIN", *vcs, "--set", "routing.vc_layout=booksim", *single]
        if row["routing"] == "ugal":
            # The fork's `ugal` is hop-weighted UGAL-L on whole-port used credits, b = 0.
            return ["--routing", "UGAL-L", "--set", "routing.intermediate=any-shortcut", *single]
        if row["routing"] == "dgb":
            # (Its local-port scale is hard-coded 8; dflab's default is the buffer ratio, 1 here.)
            return ["--routing", "DGB", "--set", "routing.local_q_scale=8", *single]
        return None
    if row["repo"] != "bsmaster":
        return None
    if row["routing"] == "min":
        return ["--routing", "MIN", *vcs, "--set", "routing.vc_layout=booksim"]
    if row["routing"] == "ugal":
        return [
            "--routing",
            "UGAL-L",
            "--set",
            "routing.vcs=4",
            "--set",
            "routing.form=booksim",
            "--set",
            "routing.intermediate=any",
        ]
    return None


def dflab_command(row: dict, seed: int) -> list[str]:
    k = K_OF_CFG[row["config"]]
    cmd = [str(DFLAB), "run", "--json", "--seed", str(seed)]
    if row["config"] in PRESET_OF_CFG:
        cmd += ["--preset", PRESET_OF_CFG[row["config"]]]
    else:
        for key, value in {"p": k, "a": 2 * k, "h": k, "arrangement": "absolute"}.items():
            cmd += ["--set", f"topology.{key}={value}"]
        for key, value in NETWORK.items():
            cmd += ["--set", f"network.{key}={value}"]
    cmd += routing_args(row) or []
    cmd += ["--traffic", PATTERNS[row["pattern"]], "--load", row["offered_load"]]
    cmd += ["--set", "traffic.allow_self=true", "--warmup-us", "15", "--measure-us", "5"]
    return cmd


def run(cmd: list[str]) -> dict:
    out = subprocess.run(["nice", "-n", "10", *cmd], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def compare(row: dict, seeds: list[int]) -> dict:
    runs = [run(dflab_command(row, s)) for s in seeds]
    # (A saturated run that delivered nothing in its window has no latency: None, left out.)
    keys = ("latency_mean_ns", "latency_p50_ns", "latency_p99_ns", "accepted_load", "hops_mean")
    avg = {k: mean([r[k] for r in runs if r[k] is not None] or [float("nan")]) for k in keys}
    avg["wall_s"] = mean(r["execution"]["wall_s"] for r in runs)
    stable = row["stable"] == "True"

    def rel(d: float, b: str) -> str:
        return f"{(d - float(b)) / float(b):+.4f}" if stable and b not in ("", "999+") else ""

    cmd = dflab_command(row, seeds[0])
    cmd[0] = "dflab"
    return {
        "nodes": 2 * K_OF_CFG[row["config"]] ** 2 * (2 * K_OF_CFG[row["config"]] ** 2 + 1),
        "routing": row["routing"],
        "num_vcs": row["num_vcs"],
        "pattern": row["pattern"],
        "offered_load": row["offered_load"],
        "booksim_stable": row["stable"],
        "booksim_mean": row["mean_plat_cycles"] if stable else "",
        "dflab_mean": f"{avg['latency_mean_ns']:.2f}",
        "rel_mean": rel(avg["latency_mean_ns"], row["mean_plat_cycles"]),
        "booksim_p50": row["p50_plat_cycles"] if stable else "",
        "dflab_p50": f"{avg['latency_p50_ns']:.1f}",
        "booksim_p99": row["p99_plat_cycles"] if stable else "",
        "dflab_p99": f"{avg['latency_p99_ns']:.1f}",
        "rel_p99": rel(avg["latency_p99_ns"], row["p99_plat_cycles"]),
        "booksim_accepted": row["accepted_load"],
        "dflab_accepted": f"{avg['accepted_load']:.4f}",
        "diff_accepted": f"{avg['accepted_load'] - float(row['accepted_load']):+.4f}",
        "booksim_hops": row["mean_router_hops"] if stable else "",
        "dflab_hops": f"{avg['hops_mean']:.3f}",
        "seeds": " ".join(map(str, seeds)),
        "dflab_wall_s": f"{avg['wall_s']:.2f}",
        "booksim_wall_s": row["wall_s"],
        "booksim_commit": row["commit"][:8],
        "dflab_command": shlex.join(cmd).replace(" --seed 1 ", " --seed S "),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--seeds", type=int, default=3, help="dflab seeds 1..N (default 3)")
    ap.add_argument("--only", help="ROUTING:PATTERN, e.g. min:uniform")
    ap.add_argument("--repo", help="only the rows of this BookSim build (bsmaster or hk)")
    ap.add_argument("--out", type=Path, default=OUT_CSV)
    args = ap.parse_args(argv)
    rows = [r for src in SOURCES for r in csv.DictReader(src.open())]
    rows = [r for r in rows if routing_args(r) is not None]
    if args.repo:
        rows = [r for r in rows if r["repo"] == args.repo]
    if args.only:
        routing, pattern = args.only.split(":")
        rows = [r for r in rows if (r["routing"], r["pattern"]) == (routing, pattern)]
    out = []
    for r in rows:
        c = compare(r, list(range(1, args.seeds + 1)))
        print(
            f"{c['nodes']:5} {c['routing']:5} {c['pattern']:10} {c['offered_load']:>5}: mean "
            f"{c['booksim_mean'] or '-':>8} vs {c['dflab_mean']:>8}, accepted "
            f"{c['booksim_accepted']} vs {c['dflab_accepted']}, hops {c['booksim_hops'] or '-'} "
            f"vs {c['dflab_hops']}",
            flush=True,
        )
        out.append(c)
    write_rows(
        out,
        args.out,
        ("booksim_commit", "nodes", "routing", "num_vcs", "pattern", "offered_load"),
        partial=bool(args.repo or args.only),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
