"""SC'22 Fig. 4: every target with every background under the four routings, on `sc22-1056`.

    python experiments/sc22/fig4.py --jobs 2          # run what is missing, cheapest first
    python experiments/sc22/fig4.py --targets fft3d,lu --routings PAR,Q-adaptive
    python experiments/sc22/fig4.py --markdown        # the tables, and docs/figures/sc22_fig4.png

Targets FFT3D, LU, LQCD, CosmoFlow, Stencil5D and LULESH; backgrounds none (the target alone),
UR, LU, FFT3D, CosmoFlow, DL and Halo3D; routings UGALg, UGALn, PAR and Q-adaptive (the paper's
Fig. 4 a-f). Each (target, background, routing) is one `pairs.py` simulation (its
configuration, `pairs.experiment`, ended by the target: `workload.end_with_jobs = [0]`, which
changes nothing of the target's row and leaves the background's time empty when it was still
running) and its row goes to `pairs.py`'s CSV, so the rows of either script serve both;
finished rows are not run again. `--jobs` runs that many simulations at once
(one process each, about 0.5-1.5 GB each); the main process alone writes the CSV. Simulations
are ordered by their expected cost (Halo3D, the largest background, last). Stop it with Ctrl-C
or by signalling its process group (the workers are its children); finished rows are kept.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

import pairs
from matplotlib.figure import Figure
from matplotlib.patches import Patch

HERE = Path(__file__).resolve().parent
FIGURE = HERE.parent.parent / "docs" / "figures" / "sc22_fig4.png"
TARGETS = ("fft3d", "lu", "lqcd", "cosmoflow", "stencil5d", "lulesh")
BACKGROUNDS = ("none", "ur", "lu", "fft3d", "cosmoflow", "dl", "halo3d")
ROUTINGS = ("UGALg", "UGALn", "PAR", "Q-adaptive")
LABEL = {
    "none": "alone",
    "ur": "UR",
    "lu": "LU",
    "fft3d": "FFT3D",
    "cosmoflow": "CosmoFlow",
    "dl": "DL",
    "halo3d": "Halo3D",
    "lqcd": "LQCD",
    "stencil5d": "Stencil5D",
    "lulesh": "LULESH",
}
# What the paper's text states of each panel (SC'22 §5.1), as changes against alone.
PAPER: dict[tuple[str, str], str] = {
    ("fft3d", "ur"): "< 3 %",
    ("fft3d", "lu"): "< 3 %",
    ("fft3d", "cosmoflow"): "+22.51 % (adaptive mean), +10.81 % (Q)",
    ("fft3d", "dl"): "+99.53 / +110.77 / +97.14 / +32.34 % (10.23 / 10.98 / 11.24 / 7.08 ms)",
    ("fft3d", "halo3d"): "+167 / +183 / +173 % (x2.67 / 2.83 / 2.73); Q 8.93 ms",
    ("lu", "ur"): "≤ 6.06 %",
    ("lu", "fft3d"): "≤ 6.06 %",
    ("lu", "cosmoflow"): "+9.34 % (adaptive), +9.99 % (Q)",
    ("lu", "dl"): "+43.49 / +46.63 / +40.16 %; Q +28.15 % (16.96 ms)",
    ("lu", "halo3d"): "+75.77 % (adaptive mean, 27.63 ms); Q 13.24 → 20.24 ms (+52.9 %)",
    ("lqcd", "halo3d"): "nearly immune; PAR ≤ +10.10 %",
    ("cosmoflow", "ur"): "< 1.5 %",
    ("cosmoflow", "lu"): "< 1.5 %",
    ("cosmoflow", "fft3d"): "< 1.5 %",
    ("cosmoflow", "dl"): "≤ +6.27 % (UGALg), +1.10 % (Q)",
    ("cosmoflow", "halo3d"): "+15.93 / +22.03 / +21.88 %; Q +4.88 % (2.90 ms)",
    ("lulesh", "halo3d"): "+46.81 % (adaptive), +19.62 % (Q)",
    ("lulesh", "dl"): "+21.08 % (adaptive), +12.30 % (Q)",
}
PAPER_ANY = {
    "lqcd": "nearly immune",
    "stencil5d": "≤ 8 % under every background",
    "lulesh": "≤ 7.35 % (adaptive), ≤ 4.35 % (Q)",
}
# Only the target's row counts here: the run stops when it has finished.
END_WITH_TARGET = {"workload.end_with_jobs": [0]}
# Expected cost order: the background's traffic first, then the target's.
COST = {b: i for i, b in enumerate(("none", "ur", "cosmoflow", "lu", "fft3d", "dl", "halo3d"))}


def missing(
    targets: list[str], backgrounds: list[str], routings: list[str], seed: int
) -> list[tuple[str, str, str]]:
    """The (target, background, routing) not in the CSV yet, cheapest first."""
    done = {(r["target"], r["background"], r["routing"], r["seed"]) for r in pairs.read_rows()}
    todo = [
        (t, b, r)
        for t in targets
        for b in backgrounds
        for r in routings
        if (t, b, r, str(seed)) not in done
    ]
    return sorted(todo, key=lambda k: (COST.get(k[1], 9), TARGETS.index(k[0]), k[2]))


def run_all(todo: list[tuple[str, str, str]], seed: int, jobs: int) -> None:
    """Run `todo` on `jobs` processes; record each row as it finishes."""
    context = multiprocessing.get_context("spawn")  # no fork of a threaded engine
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        queue = list(todo)
        running: dict[Future[dict[str, Any]], tuple[str, str, str]] = {}
        start = time.monotonic()
        done = 0
        while queue or running:
            while queue and len(running) < jobs:
                key = queue.pop(0)
                job = pool.submit(pairs.run_pair, *key, seed, pairs.SC22, END_WITH_TARGET)
                running[job] = key
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                key = running.pop(future)
                row = future.result()
                pairs.record(row)
                done += 1
                print(
                    f"[{done}/{len(todo)}] {key[0]} + {key[1]} under {key[2]}: comm "
                    f"{row['target_comm_mean_ms']:.2f} ms, wall {row['wall_s']:.0f} s "
                    f"({(time.monotonic() - start) / 60:.0f} min so far)",
                    flush=True,
                )


def comm_table(rows: list[dict[str, str]], seed: int) -> dict[tuple[str, str, str], dict]:
    return {(r["target"], r["background"], r["routing"]): r for r in rows if r["seed"] == str(seed)}


def markdown(seed: int) -> str:
    """Per target: the communication time per background and routing, its change against the
    target alone under the same routing, and what the paper states."""
    got = comm_table(pairs.read_rows(), seed)
    out: list[str] = []
    for t in TARGETS:
        out += [f"**{LABEL[t]}** (mean communication time per rank, ms; change against alone)", ""]
        out.append("| background | " + " | ".join(ROUTINGS) + " | paper |")
        out.append("|---|" + "---:|" * len(ROUTINGS) + "---|")
        for b in BACKGROUNDS:
            cells = []
            for r in ROUTINGS:
                row, alone = got.get((t, b, r)), got.get((t, "none", r))
                if row is None:
                    cells.append("not run")
                    continue
                comm = float(row["target_comm_mean_ms"])
                change = ""
                if b != "none" and alone is not None:
                    base = float(alone["target_comm_mean_ms"])
                    change = f" ({100 * (comm - base) / base:+.1f} %)"
                cells.append(f"{comm:.2f}{change}")
            paper = PAPER.get((t, b), PAPER_ANY.get(t, "") if b != "none" else "")
            out.append(f"| {LABEL[b]} | " + " | ".join(cells) + f" | {paper} |")
        out.append("")
    slower = []
    for t in ("lu", "lqcd", "stencil5d", "lulesh"):
        q, p = got.get((t, "none", "Q-adaptive")), got.get((t, "none", "PAR"))
        if q and p:
            qc, pc = float(q["target_comm_mean_ms"]), float(p["target_comm_mean_ms"])
            slower.append((qc - pc) / pc)
    if len(slower) == 4:
        out.append(
            "Alone, LU, LQCD, Stencil5D and LULESH communicate "
            f"{-100 * sum(slower) / 4:.2f} % less under Q-adaptive than under PAR on average "
            "(paper: 23.46 %)."
        )
    return "\n".join(out)


def plot(seed: int, path: Path = FIGURE) -> None:
    """Fig. 4: per target, bars per background grouped by routing, ± the std over ranks."""
    got = comm_table(pairs.read_rows(), seed)
    fig = Figure(figsize=(13, 7.5), layout="constrained")
    axes = fig.subplots(2, 3).ravel()
    width = 0.8 / len(BACKGROUNDS)
    colours = [f"C{i}" for i in range(len(BACKGROUNDS))]
    for ax, t in zip(axes, TARGETS, strict=True):
        for i, b in enumerate(BACKGROUNDS):
            xs, ys, es = [], [], []
            for j, r in enumerate(ROUTINGS):
                row = got.get((t, b, r))
                if row is not None:
                    xs.append(j + (i - (len(BACKGROUNDS) - 1) / 2) * width)
                    ys.append(float(row["target_comm_mean_ms"]))
                    es.append(float(row["target_comm_std_ms"]))
            ax.bar(xs, ys, width, yerr=es, color=colours[i], label=LABEL[b], capsize=1.5)
        ax.set_xticks(range(len(ROUTINGS)), ROUTINGS)
        ax.set_title(f"{LABEL[t]} (target)", fontsize="medium")
        ax.set_ylabel("communication time per rank, ms")
    # Handles of their own: a background with no bar yet still gets its colour.
    handles = [Patch(color=colours[i], label=LABEL[b]) for i, b in enumerate(BACKGROUNDS)]
    axes[0].legend(handles=handles, title="background", fontsize="small", ncols=2)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default=",".join(TARGETS))
    parser.add_argument("--backgrounds", default=",".join(BACKGROUNDS))
    parser.add_argument("--routings", default=",".join(ROUTINGS))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=1, help="simulations at once")
    parser.add_argument("--markdown", action="store_true", help="print the tables, draw, exit")
    args = parser.parse_args()
    chosen = {}
    for name, allowed in (
        ("targets", TARGETS),
        ("backgrounds", BACKGROUNDS),
        ("routings", ROUTINGS),
    ):
        chosen[name] = [x.strip() for x in getattr(args, name).split(",") if x.strip()]
        unknown = [x for x in chosen[name] if x not in allowed]
        if unknown:
            parser.error(f"--{name}: unknown {unknown}; allowed: {', '.join(allowed)}")
    if args.jobs < 1:
        parser.error("--jobs: must be at least 1")
    if not args.markdown:
        todo = missing(chosen["targets"], chosen["backgrounds"], chosen["routings"], args.seed)
        print(f"{len(todo)} simulations to run on {args.jobs} processes", flush=True)
        run_all(todo, args.seed, args.jobs)
    plot(args.seed)
    print(markdown(args.seed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
