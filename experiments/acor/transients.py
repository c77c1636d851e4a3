"""JPDC'19 Figs. 9-10 (ACOR transients) and Fig. 8 (per-switch accepted load), one command.

    .venv/bin/python experiments/acor/transients.py [--preset acor-5256] [--seeds 10]
        [--out results/acor] [--only transients|fairness]

Figs. 9-10: ADV+h, the load steps from 5 % to 25 % (and from 25 % to 5 %) at t = 0, after a
warm-up of 10 µs at the first load; mean latency of the packets delivered in each 100 ns window
(mean over the seeds, weighted by packets) for ACOR-Switch 3L with HI = 500 ns and the VAL
policies CRG-Gr, CRG-Sw and RRG-Sw; and the level of every switch of group 0 against time
(ACOR's `acor_level` trace, seed 1). Printed: when the latency settles (the first window from
which the 300 ns moving average stays within 10 % of its level over the last 2 µs), when the
first and the last switch of group 0 change level.

Fig. 8: ADVc at 0.5, accepted load of each switch of group 0 (flits delivered by the router
where they entered, `accepted_flits_by_source_router`, per node and ns) for the VAL policies and
the ACOR-Switch sequences; printed with the spread (max / min over the group's switches).

Every run is kept in OUT/runs/*.json (the summary, the series and the probes): a rerun reuses
them, so the script resumes where it stopped.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from dflab.api import simulate

WARMUP_US = 10.0
AFTER_US = 6.0
WINDOW_US = 0.1
VAL_POLICIES = ["crg-gr", "crg-sw", "rrg-sw"]


def cached(out: Path, name: str, config: dict) -> dict:
    """The run `name` of `config`, from OUT/runs/ or simulated and kept there (atomically)."""
    path = out / "runs" / f"{name}.json"
    if path.exists():
        return json.loads(path.read_text())
    r = simulate(config)
    data = {
        "summary": r.summary.to_dict(),
        "series": r.series.to_dict(as_series=False),
        "per_router": r.probes.per_router,
        "traces": r.probes.traces,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(data, f)
    os.replace(tmp, path)
    return data


def step_config(preset: str, routing: dict, before: float, after: float, seed: int) -> dict:
    return {
        "preset": preset,
        "seed": seed,
        "routing": {"restricted": True, "recompute": True, **routing},
        "traffic": {
            "pattern": "adv+h",
            "load": before,
            "phases": [{"start_us": WARMUP_US, "load": after}],
        },
        "run": {"warmup_us": WARMUP_US - 2.0, "measure_us": AFTER_US + 2.0, "window_us": WINDOW_US},
    }


def latency_curve(runs: list[dict]) -> list[tuple[float, float]]:
    """(ns after the step, mean latency) per window, weighted by the packets over the seeds."""
    sums: dict[float, tuple[float, int]] = {}
    for run in runs:
        s = run["series"]
        for t, lat, n in zip(
            s["window_start_us"], s["latency_mean_ns"], s["packets_delivered"], strict=True
        ):
            if lat is None or not n:
                continue
            key = round((t - WARMUP_US) * 1000.0, 3)
            total, count = sums.get(key, (0.0, 0))
            sums[key] = (total + lat * n, count + n)
    return sorted((t, total / count) for t, (total, count) in sums.items() if t >= -2000.0)


def settles_at(curve: list[tuple[float, float]]) -> float | None:
    """The first time after the step from which the 3-window moving average stays within 10 %
    of its level over the last 2 µs."""
    after = [(t, v) for t, v in curve if t >= 0]
    if len(after) < 25:
        return None
    tail = [v for t, v in after if t >= after[-1][0] - 2000.0]
    level = sum(tail) / len(tail)
    smooth = [
        (after[i][0], sum(v for _, v in after[i - 1 : i + 2]) / 3) for i in range(1, len(after) - 1)
    ]
    for i, (t, _) in enumerate(smooth):
        if all(abs(v - level) <= 0.1 * level for _, v in smooth[i:]):
            return t
    return None


def transients(args: argparse.Namespace) -> None:
    lines = {"ACOR-Switch 3L": {"algorithm": "ACOR"}}
    lines.update({f"VAL {p}": {"algorithm": "VAL", "policy": p} for p in VAL_POLICIES})
    fig, axes = plt.subplots(2, 2, figsize=(11, 7), sharex="col")
    for col, (before, after) in enumerate([(0.05, 0.25), (0.25, 0.05)]):
        ax = axes[0][col]
        for label, routing in lines.items():
            runs = [
                cached(
                    args.out,
                    f"step_{before}_{after}_{label.replace(' ', '_')}_s{seed}",
                    step_config(args.preset, routing, before, after, seed),
                )
                for seed in range(1, args.seeds + 1)
            ]
            curve = latency_curve(runs)
            ax.plot([t for t, _ in curve], [v for _, v in curve], label=label, lw=1)
            print(
                f"ADV+h {before} -> {after}, {label}: settles {settles_at(curve)} ns after the step"
            )
            if label.startswith("ACOR"):
                levels(axes[1][col], runs[0], args)
        ax.set_title(f"ADV+h, load {before:.0%} -> {after:.0%} at t = 0")
        ax.set_ylabel("mean latency (ns)")
        ax.legend(fontsize=8)
    for ax in axes[1]:
        ax.set_xlabel("time after the step (ns)")
    fig.tight_layout()
    fig.savefig(args.out / "fig9_fig10_transients.png", dpi=110)


def levels(ax, run: dict, args: argparse.Namespace) -> None:
    """The level of each switch of group 0 against time (Fig. 10), and when they changed."""
    a = {"acor-5256": 12, "acor-1056": 8, "acor-16512": 16}[args.preset]
    changes = [c for c in run["traces"].get("acor_level", []) if c[1] < a]
    for router in range(a):
        pts = [(-2000.0, 1)]
        for t, r, v in changes:
            if r == router:
                pts.append(((t / 1000.0 - WARMUP_US) * 1000.0, v))
        pts.append((AFTER_US * 1000.0, pts[-1][1]))
        ax.step([t for t, _ in pts], [v + 0.03 * router for _, v in pts], where="post", lw=0.8)
    # Per switch: when it first left level 1 after the step, and when it last returned to 1.
    ups, downs = [], []
    for router in range(a):
        mine = [((t / 1000.0 - WARMUP_US) * 1000.0, v) for t, r, v in changes if r == router]
        mine = [(t, v) for t, v in mine if t >= 0]
        if up := next((t for t, v in mine if v >= 2), None):
            ups.append(up)
        if mine and mine[-1][1] == 1:
            downs.append(mine[-1][0])
    if ups:
        print(
            f"  group 0: {len(ups)} of {a} switches up, the last {max(ups):.0f} ns after the step"
        )
    if downs:
        print(
            f"  group 0: {len(downs)} of {a} back at level 1, the last {max(downs):.0f} ns after it"
        )
    ax.set_ylabel("ACOR level, switches of group 0")


def fairness(args: argparse.Namespace) -> None:
    configs = {f"VAL {p}": {"algorithm": "VAL", "policy": p} for p in VAL_POLICIES}
    configs.update(
        {f"ACOR {s}": {"algorithm": "ACOR", "sequence": s} for s in ["2LA", "2LB", "3L"]}
    )
    a, p = {"acor-5256": (12, 6), "acor-1056": (8, 4), "acor-16512": (16, 8)}[args.preset]
    fig, ax = plt.subplots(figsize=(9, 4))
    width = 0.8 / len(configs)
    for i, (label, routing) in enumerate(configs.items()):
        config = {
            "preset": args.preset,
            "routing": {"restricted": True, "recompute": True, **routing},
            "traffic": {"pattern": "advc", "load": 0.5},
            "run": {"warmup_us": 10.0, "measure_us": 10.0},
        }
        run = cached(args.out, f"advc_0.5_{label.replace(' ', '_')}", config)
        flits = run["per_router"]["accepted_flits_by_source_router"][:a]
        # flits per node per ns, as a fraction of a 25 B flit per ns (the injection link)
        load = [f / p / (10.0 * 1000.0) for f in flits]
        ax.bar([r + i * width for r in range(a)], load, width, label=label)
        spread = max(load) / max(min(load), 1e-9)
        print(
            f"ADVc 0.5, {label}: per-switch {min(load):.3f}-{max(load):.3f} (max/min {spread:.2f})"
        )
    ax.set_xlabel("switch of group 0")
    ax.set_ylabel("accepted load (flits/node/ns)")
    ax.legend(fontsize=7, ncol=3)
    fig.tight_layout()
    fig.savefig(args.out / "fig8_per_switch.png", dpi=110)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument(
        "--preset", default="acor-5256", choices=["acor-5256", "acor-1056", "acor-16512"]
    )
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--out", type=Path, default=Path("results/acor"))
    ap.add_argument("--only", choices=["transients", "fairness"])
    args = ap.parse_args(argv)
    args.out = args.out / args.preset
    args.out.mkdir(parents=True, exist_ok=True)
    if args.only != "fairness":
        transients(args)
    if args.only != "transients":
        fairness(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
