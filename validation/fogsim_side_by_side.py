"""dflab's `acor-1056` next to FOGSim itself, configuration by configuration.

Reads validation/results/fogsim_1056.csv (written by validation/fogsim/run_fogsim.py: FOGSim
dcdd75f on the paper's network at the Fig. 13 size), runs dflab on the matched configuration
(preset `acor-1056`, the row's routing, pattern and load, FOGSim's warm-up and measured cycles
as ns) for seeds 1..N and writes validation/results/dflab_vs_fogsim.csv: one row per
configuration, FOGSim's and dflab's mean latency (FOGSim's *total* latency, generation to
delivery, = dflab's `latency`), accepted load, router hops and non-minimal share side by side,
with the dflab command. See docs/validation.md, "FOGSim".

    .venv/bin/python validation/fogsim_side_by_side.py                 # all rows, 3 seeds
    .venv/bin/python validation/fogsim_side_by_side.py --only ACOR:UN --seeds 1
    .venv/bin/python validation/fogsim_side_by_side.py --size 5256 --seeds 1   # fogsim_5256.csv

Mapping (FOGSim labels of run_fogsim.py -> dflab):
* MIN -> MIN; VAL (OBL, SRCEXC_RECOMP, RRG_L) -> VAL restricted + recompute (rrg-sw);
  VAL_CRGGr / VAL_CRGSw -> VAL with policy crg-gr / crg-sw, restricted + recompute;
  VAL_NORC -> VAL restricted, no recomputation; VAL_UNR (OBL, SRCEXC, RRG) -> VAL plain;
* PB (SRC_ADP, SRCEXC_RECOMP, RRG_L) -> PB restricted + recompute; PB_NORC -> PB restricted;
  PB_UNR -> PB plain;
* ACOR (SWITCHCGCSRS) -> ACOR (3L, switch); ACOR_2LA / ACOR_2LB (SWITCHCGRS / SWITCHCSRS) ->
  ACOR 2LA / 2LB; PBACOR -> PB-ACOR (3L, IT2 = 50);
* UN -> ur; ADVl -> advl; ADV+1 -> adv+1; ADV+h -> adv+h (random node of group g+i); PERM -> perm;
  ADVc -> advc; HOT (HOTREGION, 25 % to the first 12.5 % of the nodes) -> hot;
* `Probability` (% of a phit per node per cycle, Bernoulli) -> `traffic.load`.
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
# FOGSim's rows and where the side-by-side goes, per network size (`--size`).
SIZES = {
    "1056": ("acor-1056", RESULTS / "fogsim_1056.csv", RESULTS / "dflab_vs_fogsim.csv"),
    "5256": ("acor-5256", RESULTS / "fogsim_5256.csv", RESULTS / "dflab_vs_fogsim_5256.csv"),
}

_R = ["--set", "routing.restricted=true"]
_RR = [*_R, "--set", "routing.recompute=true"]
_PLAIN = ["--set", "routing.restricted=false", "--set", "routing.recompute=false"]
ROUTINGS = {
    "MIN": ["--routing", "MIN"],
    "VAL": ["--routing", "VAL", *_RR],
    "VAL_CRGGr": ["--routing", "VAL", "--set", "routing.policy=crg-gr", *_RR],
    "VAL_CRGSw": ["--routing", "VAL", "--set", "routing.policy=crg-sw", *_RR],
    "VAL_CRGGr_NORC": ["--routing", "VAL", "--set", "routing.policy=crg-gr", *_R,
                       "--set", "routing.recompute=false"],
    "VAL_NORC": ["--routing", "VAL", *_R, "--set", "routing.recompute=false"],
    "VAL_UNR": ["--routing", "VAL", *_PLAIN],
    "PB": ["--routing", "PB", *_RR],
    "PB_NORC": ["--routing", "PB", *_R, "--set", "routing.recompute=false"],
    "PB_UNR": ["--routing", "PB", *_PLAIN],
    "ACOR": ["--routing", "ACOR"],
    "ACOR_2LA": ["--routing", "ACOR", "--set", "routing.sequence=2LA"],
    "ACOR_2LB": ["--routing", "ACOR", "--set", "routing.sequence=2LB"],
    "PBACOR": ["--routing", "PB-ACOR"],
}
PATTERNS = {
    "UN": "ur",
    "ADVl": "advl",
    "ADV+1": "adv+1",
    "ADV+h": "adv+h",
    "PERM": "perm",
    "ADVc": "advc",
    "HOT": "hot",
}


def dflab_command(row: dict, seed: int, preset: str = "acor-1056", sets: tuple[str, ...] = ()) -> list[str]:
    cmd = [str(DFLAB), "run", "--json", "--seed", str(seed), "--preset", preset]
    for kv in sets:
        cmd += ["--set", kv]
    cmd += ROUTINGS[row["routing"]]
    cmd += ["--traffic", PATTERNS[row["pattern"]], "--load", row["offered_load"]]
    # FOGSim cycles are ns.
    cmd += ["--warmup-us", str(int(row["warmup_cycles"]) / 1000), "--measure-us"]
    cmd += [str(int(row["measured_cycles"]) / 1000)]
    return cmd


def run(cmd: list[str]) -> dict:
    out = subprocess.run(["nice", "-n", "10", *cmd], capture_output=True, text=True, check=True)
    return json.loads(out.stdout[out.stdout.index("{") :])


def level_shares(r: dict) -> list[float]:
    totals = (r.get("probes") or {}).get("totals") or {}
    counts = [totals.get(f"paths_level_{n}", 0) for n in (1, 2, 3)]
    return [100.0 * c / sum(counts) for c in counts] if sum(counts) else []


def compare(row: dict, seeds: list[int], preset: str, sets: tuple[str, ...] = ()) -> dict:
    runs = [run(dflab_command(row, s, preset, sets)) for s in seeds]
    keys = ("latency_mean_ns", "accepted_load", "hops_mean", "minimal_fraction")
    avg = {k: mean([r[k] for r in runs if r[k] is not None] or [float("nan")]) for k in keys}
    shares = [s for s in (level_shares(r) for r in runs) if s]
    levels = [mean(col) for col in zip(*shares, strict=True)] if shares else []
    fog_lat, fog_acc = float(row["avg_total_latency"]), float(row["accepted_load"])
    saturated = fog_acc < 0.95 * float(row["offered_load"])
    cmd = dflab_command(row, seeds[0], preset, sets)
    cmd[0] = "dflab"
    return {
        "routing": row["routing"],
        "pattern": row["pattern"],
        "offered_load": row["offered_load"],
        "fogsim_saturated": saturated,
        "fogsim_latency": f"{fog_lat:.1f}",
        "dflab_latency": f"{avg['latency_mean_ns']:.1f}",
        "rel_latency": "" if saturated else f"{(avg['latency_mean_ns'] - fog_lat) / fog_lat:+.4f}",
        "fogsim_accepted": f"{fog_acc:.4f}",
        "dflab_accepted": f"{avg['accepted_load']:.4f}",
        "diff_accepted": f"{avg['accepted_load'] - fog_acc:+.4f}",
        "fogsim_hops": row["avg_hops"],
        "dflab_hops": f"{avg['hops_mean']:.3f}",
        "fogsim_nonmin": row["nonmin_share"],
        "dflab_nonmin": f"{1 - avg['minimal_fraction']:.3f}",
        "fogsim_levels_pct": "/".join(
            row[k] for k in ("acor_crggr_pct", "acor_crgsw_pct", "acor_rrgsw_pct") if row[k]
        ),
        "dflab_levels_pct": "/".join(f"{x:.1f}" for x in levels),
        "seeds": " ".join(map(str, seeds)),
        "cycles": f"{row['warmup_cycles']}+{row['measured_cycles']}",
        "fogsim_commit": row["fogsim_commit"][:8],
        "dflab_command": shlex.join(cmd).replace(" --seed 1 ", " --seed S "),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--seeds", type=int, default=3, help="dflab seeds 1..N (default 3)")
    ap.add_argument(
        "--only",
        help="ROUTING:PATTERN[:LOAD] as FOGSim labels them, comma-separated, e.g. ACOR:UN,VAL:HOT:0.7",
    )
    ap.add_argument("--size", choices=sorted(SIZES), default="1056", help="network (default 1056)")
    ap.add_argument("--out", type=Path, help="default: validation/results/dflab_vs_fogsim[_5256].csv")
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a config key for every dflab run, e.g. network.output_queue=per-vc (repeatable)",
    )
    args = ap.parse_args(argv)
    preset, source, out_csv = SIZES[args.size]
    rows = [r for r in csv.DictReader(source.open()) if r["status"] == "ok"]
    rows = [r for r in rows if r["routing"] in ROUTINGS]
    if args.only:
        wanted = [item.split(":") for item in args.only.split(",")]
        rows = [
            r
            for r in rows
            if any(
                (r["routing"], r["pattern"]) == (w[0], w[1])
                and (len(w) < 3 or float(r["offered_load"]) == float(w[2]))
                for w in wanted
            )
        ]
    out = []
    for r in rows:
        c = compare(r, list(range(1, args.seeds + 1)), preset, tuple(args.set))
        head = f"{c['routing']:9} {c['pattern']:5} {c['offered_load']:>4}"
        lat = f"{c['fogsim_latency']:>8} vs {c['dflab_latency']:>8} ({c['rel_latency'] or 'sat.'})"
        acc = f"{c['fogsim_accepted']} vs {c['dflab_accepted']}"
        rest = f"hops {c['fogsim_hops']} vs {c['dflab_hops']}, levels "
        rest += f"{c['fogsim_levels_pct'] or '-'} vs {c['dflab_levels_pct'] or '-'}"
        print(f"{head}: latency {lat}, accepted {acc}, {rest}", flush=True)
        out.append(c)
    write_rows(out, args.out or out_csv, ("routing", "pattern", "offered_load"), partial=bool(args.only))
    return 0


if __name__ == "__main__":
    sys.exit(main())
