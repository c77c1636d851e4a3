#!/usr/bin/env python3
"""FOGSim's own ACOR-Switch transients (JPDC'19 Figs. 9-10): the load steps under ADV+h, the level
of each switch of group 0 every cycle, one CSV row per run.

Reference simulator: FOGSim dcdd75f, built as validation/fogsim/run_fogsim.py says. FOGSim's
`Traffic=TRANSIENT` switches from the first pattern and injection probability to the second
`transientTrafficCycle` cycles after the warm-up (`generator/trafficPattern/transient.cc`), and an
ACOR-Switch run writes the state of every switch of group 0 at every cycle to `<out>.acorStatus`
(`dgflySimulator.cc`, `writeAcorGroup0SwsStatus`; states 1 / 2 / 3 = CRG-Gr / CRG-Sw / RRG-Sw for
3L) and, with `trackTempStats`, the latency of the packets delivered in each cycle around the step
to `<out>.transient`. Command line of each run (one process at a time, in its own scratch
directory /work/refsim/runs/fogsim_transient/<run>/):

    nice -n 10 <fogsim> <cfg> <ACOR keys of run_fogsim.py> Traffic=TRANSIENT
        transientTrafficFirstPattern=ADV_RANDOM_NODE transientTrafficSecondPattern=ADV_RANDOM_NODE
        AdvTrafficDistance=<h> transientTrafficNextDist=<h> transientTrafficCycle=0
        transientTrafficFirstProbability=<100*before> transientTrafficSecondProbability=<100*after>
        Probability=<100*before> trackTempStats=1 transientRecordCycles=<after>
        transientRecordPrevCycles=2000 Seed=<seed> WarmupCycles=<W> MaxCycles=<after>
        OutputFileName=<run dir>/out

Per run the CSV has: for the step up, when each switch of group 0 first left level 1 (cycles =
ns after the step; 0 for a switch already up) and how many did within 1,000 cycles; for the step
down, when each was back at level 1 for good and how many within 500; and the mean latency of the
packets delivered in each 100-cycle window from 2,000 before to 6,000 after the step (as dflab's
experiments/acor/transients.py reads its own runs).

Usage:
    python3 validation/fogsim/run_fogsim_transient.py [--cfg validation/fogsim/base_5256.cfg]
        [--seeds 1,2,3] [--steps up,down] [--hi 500]
Python 3 standard library only; a run already in the CSV (same step, seed, cfg, HI) is skipped.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
from run_fogsim import COMMIT, DEFAULT_BIN, ROUTINGS  # noqa: E402

DEFAULT_CFG = HERE / "base_5256.cfg"
DEFAULT_OUT = ROOT / "validation" / "results" / "fogsim_transients.csv"
DEFAULT_RUNS = Path("/work/refsim/runs/fogsim_transient")
STEPS = {"up": (0.05, 0.25), "down": (0.25, 0.05)}
WARMUP, AFTER, BEFORE_RECORD, WINDOW = 10_000, 6_000, 2_000, 100
COLUMNS = [
    "cfg",
    "step",
    "hi_cycles",
    "seed",
    "switches",
    "changed",
    "within_bound",
    "bound_cycles",
    "last_change",
    "changes",
    "latency_windows",
    "fogsim_commit",
    "wall_s",
    "cmd",
]


def argv_of(args, step: str, seed: int, out: Path) -> list[str]:
    before, after = STEPS[step]
    h = re.search(r"^H=(\d+)", args.cfg.read_text(), re.M).group(1)
    return (
        ["nice", "-n", "10", str(args.bin), str(args.cfg.resolve())]
        + ROUTINGS["ACOR"]
        + [
            "Traffic=TRANSIENT",
            "transientTrafficFirstPattern=ADV_RANDOM_NODE",
            "transientTrafficSecondPattern=ADV_RANDOM_NODE",
            f"AdvTrafficDistance={h}",
            f"transientTrafficNextDist={h}",
            "transientTrafficCycle=0",
            f"transientTrafficFirstProbability={before * 100:g}",
            f"transientTrafficSecondProbability={after * 100:g}",
            f"Probability={before * 100:g}",
            "trackTempStats=1",
            f"transientRecordCycles={AFTER}",
            f"transientRecordPrevCycles={BEFORE_RECORD}",
            f"acorHystCycles={args.hi}",
            f"Seed={seed}",
            f"WarmupCycles={WARMUP}",
            f"MaxCycles={AFTER}",
            f"OutputFileName={out}",
        ]
    )


def level_changes(status: Path, rising: bool) -> list[int | None]:
    """Per switch of group 0, cycles after the step: first above level 1 (rising) or back at
    level 1 for good (falling); None when it never was."""
    rows = [line.split("\t") for line in status.read_text().splitlines()[1:] if line.strip()]
    levels = [[int(v) for v in row[1:]] for row in rows]
    result: list[int | None] = []
    for s in range(len(levels[0])):
        series = [lv[s] for lv in levels]
        after = series[WARMUP:]
        if rising:
            result.append(next((c for c, v in enumerate(after) if v >= 2), None))
        elif after[-1] == 1:
            last_up = max((c for c, v in enumerate(after) if v != 1), default=-1)
            result.append(last_up + 1)
        else:
            result.append(None)
    return result


def latency_windows(transient: Path) -> list[float | None]:
    """Mean latency of the packets delivered in each WINDOW-cycle window around the step (the
    file's rows: absolute cycle, cycle after the step, the latencies summed over the packets
    delivered in it, their number, ...)."""
    sums: dict[int, list[float]] = {}
    for line in transient.read_text().splitlines()[1:]:
        cells = line.split("\t")
        if len(cells) < 4 or not cells[2].strip():
            continue
        cycle, latency_sum, packets = int(cells[1]), float(cells[2]), float(cells[3])
        key = (cycle + BEFORE_RECORD) // WINDOW
        total = sums.setdefault(key, [0.0, 0.0])
        total[0] += latency_sum
        total[1] += packets
    return [round(t[0] / t[1], 1) if t[1] else None for _, t in sorted(sums.items())]


def run(args, step: str, seed: int) -> dict:
    label = f"{args.cfg.stem}__{step}__hi{args.hi}__s{seed}"
    pdir = args.runs / label
    pdir.mkdir(parents=True, exist_ok=True)
    out = pdir / "out"
    argv = argv_of(args, step, seed, out)
    t0 = time.time()
    with (pdir / "stdout.txt").open("w") as so, (pdir / "stderr.txt").open("w") as se:
        rc = subprocess.run(argv, stdout=so, stderr=se, cwd=str(pdir)).returncode
    wall = time.time() - t0
    if rc != 0:
        raise SystemExit(f"{label}: FOGSim exited with {rc} (see {pdir}/stderr.txt)")
    rising = step == "up"
    changes = level_changes(Path(f"{out}.acorStatus"), rising)
    bound = 1000 if rising else 500
    done = [c for c in changes if c is not None]
    (pdir / "meta.json").write_text(json.dumps({"argv": argv, "rc": rc, "wall_s": wall}, indent=1))
    return {
        "cfg": args.cfg.name,
        "step": step,
        "hi_cycles": args.hi,
        "seed": seed,
        "switches": len(changes),
        "changed": len(done),
        "within_bound": sum(1 for c in done if c <= bound),
        "bound_cycles": bound,
        "last_change": max(done) if len(done) == len(changes) else "",
        "changes": " ".join("-" if c is None else str(c) for c in changes),
        "latency_windows": " ".join(
            "" if v is None else str(v) for v in latency_windows(Path(f"{out}.transient"))
        ),
        "fogsim_commit": COMMIT,
        "wall_s": f"{wall:.0f}",
        "cmd": " ".join(argv),
    }


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--cfg", type=Path, default=DEFAULT_CFG)
    ap.add_argument("--bin", type=Path, default=DEFAULT_BIN)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--runs", type=Path, default=DEFAULT_RUNS)
    ap.add_argument("--seeds", default="1")
    ap.add_argument("--steps", default="up,down")
    ap.add_argument("--hi", type=int, default=500)
    args = ap.parse_args()
    rows = list(csv.DictReader(args.out.open())) if args.out.exists() else []
    have = {(r["cfg"], r["step"], r["hi_cycles"], r["seed"]) for r in rows}
    for step in args.steps.split(","):
        for seed in (int(s) for s in args.seeds.split(",")):
            if (args.cfg.name, step, str(args.hi), str(seed)) in have:
                continue
            print(f"run {args.cfg.name} {step} HI {args.hi} seed {seed} ...", flush=True)
            row = run(args, step, seed)
            print(
                f"  {row['within_bound']} of {row['switches']} within {row['bound_cycles']} cycles,"
                f" last {row['last_change']} ({row['wall_s']} s)",
                flush=True,
            )
            rows.append(row)
            tmp = args.out.with_suffix(".tmp")
            with tmp.open("w", newline="") as f:
                writer = csv.DictWriter(f, fieldnames=COLUMNS)
                writer.writeheader()
                writer.writerows(rows)
            tmp.replace(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
