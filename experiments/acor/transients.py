"""JPDC'19 Figs. 9-10 (ACOR transients) and Fig. 8 (per-switch accepted load), one command.

    .venv/bin/python experiments/acor/transients.py [--preset acor-5256] [--seeds 10]
        [--out results/acor] [--only transients|fairness] [--hi 100,500,2000]
        [--hysteresis restart|fixed] [--set KEY=VALUE ...]

Figs. 9-10: ADV+h, the load steps from 5 % to 25 % (and from 25 % to 5 %) at t = 0, after a
warm-up of 10 µs at the first load; mean latency of the packets delivered in each 100 ns window
(mean over the seeds, weighted by packets) for ACOR-Switch 3L with each hysteresis interval of
`--hi` (Table 3's 500 ns by default) and the VAL policies CRG-Gr, CRG-Sw and RRG-Sw; and the
level of every switch of group 0 against time (ACOR's `acor_level` trace, seed 1). Printed:
when the latency settles (the first window from which the 300 ns moving average stays within
10 % of its level over the last 2 µs) and its peak after the step, when the first and the last
switch of group 0 change level.

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
from dflab.errors import UserError
from dflab.overrides import apply_overrides, parse_override

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
    # ACOR-Switch 3L at each hysteresis interval (Fig. 9's series; 500 ns is Table 3's).
    # `--hysteresis fixed`: the paper's fixed grid of windows (runs and labels of their own).
    fixed = args.hysteresis == "fixed"
    sets = "".join(f" {item}" for item in args.set)
    suffix = (" fixed windows" if fixed else "") + sets
    lines = {
        ("ACOR-Switch 3L" if hi == 500 else f"ACOR-Switch 3L HI {hi:g} ns") + suffix: {
            "algorithm": "ACOR",
            **({} if hi == 500 else {"hi_ns": hi}),
            **({"hysteresis": "fixed"} if fixed else {}),
        }
        for hi in args.hi
    }
    lines.update({f"VAL {p}{sets}": {"algorithm": "VAL", "policy": p} for p in VAL_POLICIES})
    fig, axes = plt.subplots(2, 2, figsize=(11, 7), sharex="col")
    for col, (before, after) in enumerate([(0.05, 0.25), (0.25, 0.05)]):
        ax = axes[0][col]
        for label, routing in lines.items():
            runs = [
                cached(
                    args.out,
                    f"step_{before}_{after}_{label.replace(' ', '_')}_s{seed}",
                    apply_overrides(
                        step_config(args.preset, routing, before, after, seed), args.set
                    ),
                )
                for seed in range(1, args.seeds + 1)
            ]
            curve = latency_curve(runs)
            ax.plot([t for t, _ in curve], [v for _, v in curve], label=label, lw=1)
            peak = max((v for t, v in curve if t >= 0), default=float("nan"))
            print(
                f"ADV+h {before} -> {after}, {label}: settles {settles_at(curve)} ns after the"
                f" step, peak {peak:.0f} ns"
            )
            if label.startswith("ACOR"):
                # Fig. 10 draws the switches at Table 3's interval; the others are printed.
                ax_levels = axes[1][col] if label == "ACOR-Switch 3L" + suffix else None
                levels(ax_levels, runs, args, rising=after > before)
        ax.set_title(f"ADV+h, load {before:.0%} -> {after:.0%} at t = 0")
        ax.set_ylabel("mean latency (ns)")
        ax.legend(fontsize=8)
    for ax in axes[1]:
        ax.set_xlabel("time after the step (ns)")
    fig.tight_layout()
    name = "fig9_fig10_transients" + ("_fixed" if fixed else "") + ("_set" if args.set else "")
    name += ".png"
    fig.savefig(args.out / name, dpi=110)


def switch_changes(run: dict, a: int) -> tuple[list[float], list[float]]:
    """Per switch of group 0 (the first `a` routers): when it was first above level 1 after the
    step, and when it was last back at level 1 for good (ns after the step; 0 for a switch
    already there at the step; switches that never were are left out)."""
    changes = [c for c in run["traces"].get("acor_level", []) if c[1] < a]
    ups, downs = [], []
    for router in range(a):
        mine = [((t / 1000.0 - WARMUP_US) * 1000.0, v) for t, r, v in changes if r == router]
        at_step = ([1] + [v for t, v in mine if t < 0])[-1]
        mine = [(0.0, at_step)] + [(t, v) for t, v in mine if t >= 0]
        if (up := next((t for t, v in mine if v >= 2), None)) is not None:
            ups.append(up)
        if mine[-1][1] == 1:
            downs.append(mine[-1][0])
    return ups, downs


def within(per_seed: list[list[float]], a: int, bound_ns: float) -> tuple[int, int]:
    """The paper's bound on the level changes (Figs. 9-10: all switches up within 1 µs, back
    at level 1 within 0.5 µs): the seeds in which every one of the `a` switches changed by
    `bound_ns`, and the switches over all seeds that did."""
    seeds = sum(1 for times in per_seed if len(times) == a and max(times) <= bound_ns)
    return seeds, sum(1 for times in per_seed for t in times if t <= bound_ns)


def levels(ax, runs: list[dict], args: argparse.Namespace, rising: bool) -> None:
    """The level of each switch of group 0 against time in the first seed (Fig. 10, drawn on
    `ax` unless it is None), and over the seeds when the last switch changed (left level 1
    after a `rising` step, came back to it after a falling one)."""
    a = {"acor-5256": 12, "acor-1056": 8, "acor-16512": 16}[args.preset]
    changes = [c for c in runs[0]["traces"].get("acor_level", []) if c[1] < a]
    for router in range(a if ax is not None else 0):
        mine = [((t / 1000.0 - WARMUP_US) * 1000.0, v) for t, r, v in changes if r == router]
        before = [v for t, v in mine if t < -2000.0]  # the level when the plot starts
        pts = [(-2000.0, before[-1] if before else 1)] + [(t, v) for t, v in mine if t >= -2000.0]
        pts.append((AFTER_US * 1000.0, pts[-1][1]))
        ax.step([t for t, _ in pts], [v + 0.03 * router for _, v in pts], where="post", lw=0.8)
    # After a rise, when the switches left level 1; after a fall, when they were back at 1.
    kind, index = ("up", 0) if rising else ("back at level 1", 1)
    per_seed = [switch_changes(run, a)[index] for run in runs]
    lasts = sorted(max(ts) for ts in per_seed if len(ts) == a)
    if any(per_seed):
        whole = f"in {len(lasts)} of {len(runs)} seeds"
        if lasts:
            whole += (
                f", the last switch {lasts[len(lasts) // 2]:.0f} ns after the step (median;"
                f" {lasts[0]:.0f}-{lasts[-1]:.0f})"
            )
        first = per_seed[0]
        print(f"  group 0: all {a} switches {kind} {whole}; seed 1: {len(first)} of {a}")
        bound = 1000.0 if rising else 500.0
        seeds, switches = within(per_seed, a, bound)
        print(
            f"  within {bound:.0f} ns (the paper's bound): all {a} in {seeds} of {len(runs)}"
            f" seeds, {switches} of {a * len(runs)} switches"
        )
    if ax is not None:
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
    ap.add_argument(
        "--hi",
        type=lambda v: [float(x) for x in v.split(",")],
        default=[500.0],
        help="ACOR-Switch hysteresis intervals in ns, comma-separated (Fig. 9; default 500)",
    )
    ap.add_argument(
        "--hysteresis",
        choices=["restart", "fixed"],
        default="restart",
        help="ACOR-Switch's windows: FOGSim's restart at a level increase (default) or the"
        " paper's fixed grid (routing.hysteresis)",
    )
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a configuration key of every transient run (e.g. network.output_buffer_flits=50);"
        " the runs get names of their own",
    )
    args = ap.parse_args(argv)
    try:
        for item in args.set:
            parse_override(item)
    except UserError as err:
        ap.error(str(err))
    if any(hi <= 0 for hi in args.hi):
        ap.error("--hi: every hysteresis interval must be > 0 ns")
    args.out = args.out / args.preset
    args.out.mkdir(parents=True, exist_ok=True)
    if args.only != "fairness":
        transients(args)
    if args.only != "transients":
        fairness(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
