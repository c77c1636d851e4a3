"""SC'22 Figs. 5-9 and 11-13 in dflab: the runs behind them (their workload frames) and the
figures, PAR beside Q-adaptive as the paper draws them.

    python experiments/sc22/figures.py                 # run what is missing, draw, print numbers
    python experiments/sc22/figures.py --only mixed    # Figs. 11-13 (the mixed workload) only
    python experiments/sc22/figures.py --only lqcd     # Figs. 7-8 (LQCD with Stencil5D) only
    python experiments/sc22/figures.py --only cosmoflow  # Fig. 9 (CosmoFlow with Halo3D) only

Runs (seed 1, `sc22-1056`, the scripts' configurations, so the numbers are those of
`pairs.py` and `mixed.py`): FFT3D alone, FFT3D with Halo3D (Figs. 5-6), LQCD and Stencil5D
alone and paired (Figs. 7-8), and the Table II mix (Figs. 11-13), each under PAR and
Q-adaptive. Each run's frames go to
`results/frames/<run>-<routing>/` (the files of `dflab run --workload-out`; resumable: a run
whose frames exist is not run again; not committed), and its rows to `pairs.py`'s or
`mixed.py`'s CSV when they are not there yet. The figures go to `docs/figures/`, the
numbers beside the paper's to `results/figures.csv` and stdout.

* Fig. 5: communication throughput of FFT3D and Halo3D over time, co-running (GB/ms, the
  mean of 10 windows of 1 µs, as `dflab plot` smooths it).
* Fig. 6: FFT3D's packet latency alone and with Halo3D: box Q1-Q3, median, whisker to p95,
  p99 marked. Figs. 6 and 7 count from the packet's entry into the NIC's source queue, as SST
  does (the `packet_latency_*` columns).
* Fig. 7: LQCD's packet latency alone and with Stencil5D, as boxes over the run (the paper
  plots it over time; the frames hold each job's quantiles over the whole run).
* Fig. 8: LQCD's and Stencil5D's mean communication time per rank, alone and paired.
* Fig. 9: CosmoFlow's and Halo3D's throughput co-running: CosmoFlow's peak (smoothed) and
  when, Halo3D's lowest level within 0.5 ms of it, and Halo3D's mean after the 350 µs start.
* Fig. 11: the mix's port stall time, per group over its local ports and per global link of
  group 0 (SST's `output_port_stalls`, summed over the run).
* Fig. 12: the mix's congestion index, groups x groups (`dflab.workload.congestion_index`).
* Fig. 13: the mix's system-wide packet latency (every job's packets) and the aggregated
  throughput, two ways (the paper does not say how it aggregates): the system's, every job's
  received bytes over the time the last job ends (the mean over windows of the summed
  throughput), and the mean over the six jobs of each job's bytes over its own execution.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import mixed
import pairs
import polars as pl
import rows as result_rows
from matplotlib.figure import Figure

from dflab.api import simulate
from dflab.workload import congestion_index
from dflab.workload_plots import SMOOTH_WINDOWS, latency_box, throughput_lines, write_workload

HERE = Path(__file__).resolve().parent
FRAMES = HERE / "results" / "frames"
FIGURES = HERE.parent.parent / "docs" / "figures"
NUMBERS = HERE / "results" / "figures.csv"
ROUTINGS = ("PAR", "Q-adaptive")
# Figs. 6 and 7 count a packet's latency as SST does, from its entry into the NIC's source
# queue (`LinkControl::send`), not from its injection into the network.
SST_COUNTED = "packet_latency"
SST_AXIS = "latency from the NIC queue"
RUNS: dict[str, dict[str, Any]] = {
    "fft3d": {"what": "pairs", "args": ("fft3d", "none")},
    "fft3d+halo3d": {"what": "pairs", "args": ("fft3d", "halo3d")},
    "mixed": {"what": "mixed", "args": (None,)},
    "lqcd": {"what": "pairs", "args": ("lqcd", "none")},
    "stencil5d": {"what": "pairs", "args": ("stencil5d", "none")},
    "lqcd+stencil5d": {"what": "pairs", "args": ("lqcd", "stencil5d")},
    "cosmoflow+halo3d": {"what": "pairs", "args": ("cosmoflow", "halo3d")},
}
GROUPS = {
    "pair": ("fft3d", "fft3d+halo3d"),
    "mixed": ("mixed",),
    "lqcd": ("lqcd", "stencil5d", "lqcd+stencil5d"),
    "cosmoflow": ("cosmoflow+halo3d",),
}
# The paper's numbers (SC'22 §5; PAR, Q-adaptive), as its text states them.
PAPER = {
    "fft3d+halo3d: FFT3D throughput co-run, GB/ms": ("0.44", "1.13"),
    "fft3d+halo3d: FFT3D throughput co-run, active windows, GB/ms": ("0.44", "1.13"),
    "fft3d+halo3d: FFT3D throughput after Halo3D ends, GB/ms": ("2.46", "2.50"),
    "fft3d+halo3d: FFT3D throughput after Halo3D ends, active windows, GB/ms": ("2.46", "2.50"),
    "fft3d+halo3d: Halo3D ends, ms": ("14.66", "11.05"),
    "fft3d: latency mean, µs": ("≈ 1.42", "1.27"),
    "fft3d: latency median, µs": ("≈ 1.55", "1.16"),
    "fft3d+halo3d: FFT3D latency median, µs": ("1.55", "1.28"),
    "fft3d+halo3d: FFT3D latency p95, µs": ("6.50", "4.08"),
    "fft3d+halo3d: FFT3D latency p99, µs": ("16.92", "8.40"),
    # The same with the wait in the NIC's source queue, which SST's latency includes.
    "fft3d: latency mean with the NIC queue, µs": ("≈ 1.42", "1.27"),
    "fft3d: latency median with the NIC queue, µs": ("≈ 1.55", "1.16"),
    "fft3d+halo3d: FFT3D latency median with the NIC queue, µs": ("1.55", "1.28"),
    "fft3d+halo3d: FFT3D latency p95 with the NIC queue, µs": ("6.50", "4.08"),
    "fft3d+halo3d: FFT3D latency p99 with the NIC queue, µs": ("16.92", "8.40"),
    "mixed: local stall per group, mean, ms": ("59.15", "31.42"),
    "mixed: stall per global link, mean, ms": ("1.33", "0.52"),
    "mixed: system latency mean, µs": ("> 10.5", "3.87"),
    "mixed: system latency p99, µs": ("> 40.9", "15.13"),
    "mixed: aggregated throughput, system, GB/ms": ("0.94", "1.27"),
    "mixed: aggregated throughput, mean per job, GB/ms": ("0.94", "1.27"),
    "lqcd: latency mean, µs": ("13.59", "—"),
    "lqcd: latency p99, µs": ("42.94", "—"),
    "lqcd+stencil5d: LQCD latency mean, µs": ("21.37", "—"),
    "lqcd+stencil5d: LQCD latency p99, µs": ("77.44", "—"),
    "lqcd: latency mean with the NIC queue, µs": ("13.59", "—"),
    "lqcd: latency p99 with the NIC queue, µs": ("42.94", "—"),
    "lqcd+stencil5d: LQCD latency mean with the NIC queue, µs": ("21.37", "—"),
    "lqcd+stencil5d: LQCD latency p99 with the NIC queue, µs": ("77.44", "—"),
    "cosmoflow+halo3d: CosmoFlow peak throughput, GB/ms": ("—", "3.15"),
    "cosmoflow+halo3d: CosmoFlow peak at, ms": ("—", "5.51"),
    "cosmoflow+halo3d: Halo3D lowest while CosmoFlow peaks, GB/ms": ("—", "2.95"),
    "cosmoflow+halo3d: Halo3D mean, GB/ms": ("—", "4.51"),
    "lqcd: comm mean, ms": ("17.10", "13.43"),
    "lqcd+stencil5d: LQCD comm mean, ms": ("25.51", "14.67"),
    "lqcd+stencil5d: LQCD change, %": ("+49.14", "+9.27"),
    "lqcd+stencil5d: Stencil5D change, %": ("< 3", "< 3"),
}


def frames_dir(run: str, routing: str) -> Path:
    return FRAMES / f"{run}-{routing}"


def ensure(run: str, routing: str, seed: int) -> Path:
    """The frames of one run, running it if they are not there yet."""
    out = frames_dir(run, routing)
    if (out / "run.json").is_file():
        return out
    spec = RUNS[run]
    module = pairs if spec["what"] == "pairs" else mixed
    print(f"{run} under {routing} ...", file=sys.stderr, flush=True)
    start = time.monotonic()
    result = simulate(module.experiment(*spec["args"], routing, seed))
    wall = time.monotonic() - start
    out.mkdir(parents=True, exist_ok=True)
    write_workload(result, out, option="frames")
    # The same simulation is a row of pairs.py's or mixed.py's table.
    if spec["what"] == "pairs":
        pairs.record(pairs.pair_row(result, *spec["args"], routing, seed))
    else:
        mixed.record(mixed.rows_of(result, *spec["args"], routing, seed, wall))
    print(f"  done in {wall:.0f} s", file=sys.stderr, flush=True)
    return out


def load(run: str, routing: str) -> dict[str, Any]:
    d = frames_dir(run, routing)
    frames = {n: pl.read_parquet(d / f"{n}.parquet") for n in ("jobs", "throughput", "ports")}
    return {**frames, "meta": json.loads((d / "run.json").read_text("utf-8"))}


def job_row(frames: dict[str, Any], name: str) -> dict[str, Any]:
    return frames["jobs"].filter(pl.col("name") == name).row(0, named=True)


def throughput_panel(ax: Any, frames: dict[str, Any], title: str) -> None:
    """Every job's throughput over time, labelled by name (`dflab plot`'s panel)."""
    throughput_lines(ax, frames["throughput"], frames["jobs"]["name"].to_list())
    ax.set_title(title, fontsize="medium")


def stalls(frames: dict[str, Any]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Local stall time per group, and the stall time of each global port of group 0 (ms)."""
    ports = frames["ports"]
    local = (
        ports.filter(pl.col("class") == "local")
        .group_by("group")
        .agg((pl.col("stall_us").sum() / 1e3).alias("ms"))
        .sort("group")
    )
    glob = ports.filter(pl.col("class") == "global").with_columns(
        (pl.col("stall_us") / 1e3).alias("ms")
    )
    return local, glob


def aggregated_throughput(frames: dict[str, Any]) -> tuple[float, float]:
    """GB/ms (1e6 bytes per µs): every job's received bytes over the time the last job ends,
    and the mean over the jobs of each one's bytes over its own execution."""
    jobs, throughput = frames["jobs"], frames["throughput"]
    system = throughput["bytes"].sum() / frames["meta"]["summary"]["sim_time_us"] / 1e6
    per_job = [
        throughput.filter(pl.col("job") == j["job"])["bytes"].sum() / j["exec_us"] / 1e6
        for j in jobs.iter_rows(named=True)
        if j["exec_us"] > 0
    ]
    return system, sum(per_job) / len(per_job)


def mean_throughput(
    frames: dict[str, Any], name: str, start_us: float, end_us: float, *, active: bool = False
) -> float:
    """`name`'s mean throughput (GB/ms) over the windows that start in [start_us, end_us);
    with `active`, over those in which it received something (its communication phases)."""
    job = job_row(frames, name)["job"]
    start = pl.col("window_start_us")
    t = frames["throughput"].filter((pl.col("job") == job) & (start >= start_us) & (start < end_us))
    if active:
        t = t.filter(pl.col("bytes") > 0)
    return float(t["gb_per_ms"].mean()) if t.height else float("nan")


def fig5_6(data: dict[tuple[str, str], dict[str, Any]]) -> tuple[Figure, Figure, dict[str, Any]]:
    numbers: dict[str, Any] = {}
    fig5 = Figure(figsize=(11, 4), layout="constrained")
    ax5 = fig5.subplots(1, 2, sharey=True)
    fig6 = Figure(figsize=(8, 4.5), layout="constrained")
    ax6 = fig6.subplots(1, 1)
    boxes = []
    for i, routing in enumerate(ROUTINGS):
        pair = data[("fft3d+halo3d", routing)]
        alone = data[("fft3d", routing)]
        halo = job_row(pair, "halo3d")
        throughput_panel(ax5[i], pair, f"({'ab'[i]}) {routing}")
        ax5[i].axvline(halo["exec_us"] / 1e3, color="grey", linestyle=":", linewidth=1)
        fft_alone, fft_pair = job_row(alone, "fft3d"), job_row(pair, "fft3d")
        boxes += [
            latency_box(fft_alone, f"{routing}\nalone", SST_COUNTED),
            latency_box(fft_pair, f"{routing}\n+ Halo3D", SST_COUNTED),
        ]
        key = f"{routing}"
        fft_end = fft_pair["exec_us"]
        numbers[("fft3d+halo3d: FFT3D throughput co-run, GB/ms", key)] = mean_throughput(
            pair, "fft3d", 0.0, halo["exec_us"]
        )
        co_run_active = "fft3d+halo3d: FFT3D throughput co-run, active windows, GB/ms"
        numbers[(co_run_active, key)] = mean_throughput(
            pair, "fft3d", 0.0, halo["exec_us"], active=True
        )
        numbers[("fft3d+halo3d: FFT3D throughput after Halo3D ends, GB/ms", key)] = mean_throughput(
            pair, "fft3d", halo["exec_us"], fft_end
        )
        after_active = "fft3d+halo3d: FFT3D throughput after Halo3D ends, active windows, GB/ms"
        numbers[(after_active, key)] = mean_throughput(
            pair, "fft3d", halo["exec_us"], fft_end, active=True
        )
        numbers[("fft3d+halo3d: Halo3D ends, ms", key)] = halo["exec_us"] / 1e3
        numbers[("fft3d: latency mean, µs", key)] = fft_alone["latency_mean_ns"] / 1e3
        numbers[("fft3d: latency median, µs", key)] = fft_alone["latency_p50_ns"] / 1e3
        queued = "with the NIC queue, µs"
        numbers[(f"fft3d: latency mean {queued}", key)] = fft_alone["packet_latency_mean_ns"] / 1e3
        numbers[(f"fft3d: latency median {queued}", key)] = fft_alone["packet_latency_p50_ns"] / 1e3
        for q in ("p50", "p95", "p99"):
            label = "median" if q == "p50" else q
            numbers[(f"fft3d+halo3d: FFT3D latency {label}, µs", key)] = (
                fft_pair[f"latency_{q}_ns"] / 1e3
            )
            numbers[(f"fft3d+halo3d: FFT3D latency {label} {queued}", key)] = (
                fft_pair[f"packet_latency_{q}_ns"] / 1e3
            )
    fig5.suptitle("SC'22 Fig. 5 in dflab: FFT3D and Halo3D co-running (dotted: Halo3D ends)")
    ax6.bxp(boxes, showmeans=True)
    ax6.set_yscale("log")
    ax6.set_ylabel(f"{SST_AXIS} (µs)\nbox Q1-Q3, whisker p95, dot p99")
    fig6.suptitle("SC'22 Fig. 6 in dflab: FFT3D's packet latency, alone and with Halo3D")
    return fig5, fig6, numbers


def fig7_8(data: dict[tuple[str, str], dict[str, Any]]) -> tuple[Figure, Figure, dict[str, Any]]:
    """Fig. 7 as LQCD's latency boxes alone and with Stencil5D (the frames have each job's
    quantiles over the run, not over time), Fig. 8 as the two apps' communication times."""
    numbers: dict[str, Any] = {}
    fig7 = Figure(figsize=(7, 4.5), layout="constrained")
    ax7 = fig7.subplots(1, 1)
    fig8 = Figure(figsize=(9, 4), layout="constrained")
    ax8 = fig8.subplots(1, 2, sharey=True)
    boxes = []
    for i, routing in enumerate(ROUTINGS):
        pair = data[("lqcd+stencil5d", routing)]
        alone = {app: job_row(data[(app, routing)], app) for app in ("lqcd", "stencil5d")}
        boxes += [
            latency_box(alone["lqcd"], f"{routing}\nalone", SST_COUNTED),
            latency_box(job_row(pair, "lqcd"), f"{routing}\n+ Stencil5D", SST_COUNTED),
        ]
        for prefix, row in (
            ("lqcd:", alone["lqcd"]),
            ("lqcd+stencil5d: LQCD", job_row(pair, "lqcd")),
        ):
            for stat in ("mean", "p99"):
                numbers[(f"{prefix} latency {stat}, µs", routing)] = row[f"latency_{stat}_ns"] / 1e3
                queued = f"{prefix} latency {stat} with the NIC queue, µs"
                numbers[(queued, routing)] = row[f"packet_latency_{stat}_ns"] / 1e3
        apps = ("lqcd", "stencil5d")
        solo = [alone[a]["comm_mean_us"] / 1e3 for a in apps]
        paired = [job_row(pair, a)["comm_mean_us"] / 1e3 for a in apps]
        ax8[i].bar([0, 2], solo, width=0.8, label="alone")
        ax8[i].bar([1, 3], paired, width=0.8, label="paired")
        ax8[i].set_xticks([0.5, 2.5], ["LQCD", "Stencil5D"])
        ax8[i].set_title(routing, fontsize="medium")
        numbers[("lqcd: comm mean, ms", routing)] = solo[0]
        numbers[("lqcd+stencil5d: LQCD comm mean, ms", routing)] = paired[0]
        numbers[("lqcd+stencil5d: LQCD change, %", routing)] = 100 * (paired[0] / solo[0] - 1)
        numbers[("lqcd+stencil5d: Stencil5D change, %", routing)] = 100 * (paired[1] / solo[1] - 1)
    ax7.bxp(boxes, showmeans=True)
    ax7.set_yscale("log")
    ax7.set_ylabel(f"{SST_AXIS} (µs)\nbox Q1-Q3, whisker p95, dot p99")
    fig7.suptitle("SC'22 Fig. 7 in dflab: LQCD's packet latency, alone and with Stencil5D")
    ax8[0].set_ylabel("communication time per rank, mean (ms)")
    ax8[0].legend(fontsize="small")
    fig8.suptitle("SC'22 Fig. 8 in dflab: LQCD and Stencil5D, alone and paired")
    return fig7, fig8, numbers


def fig9(data: dict[tuple[str, str], dict[str, Any]]) -> tuple[Figure, dict[str, Any]]:
    """CosmoFlow's and Halo3D's throughput co-running; the paper's panel (b) is taken to be
    Q-adaptive (its routing is not named; Halo3D's level matches Q-adaptive's)."""
    numbers: dict[str, Any] = {}
    fig = Figure(figsize=(11, 4), layout="constrained")
    axes = fig.subplots(1, 2, sharey=True)
    for i, routing in enumerate(ROUTINGS):
        frames = data[("cosmoflow+halo3d", routing)]
        throughput_panel(axes[i], frames, f"({'ab'[i]}) {routing}")
        smooth = {}
        for name in ("cosmoflow", "halo3d"):
            job = job_row(frames, name)["job"]
            line = frames["throughput"].filter(pl.col("job") == job).sort("window_start_us")
            smooth[name] = line.with_columns(
                pl.col("gb_per_ms").rolling_mean(SMOOTH_WINDOWS, min_samples=1).alias("s")
            )
        peak = smooth["cosmoflow"].row(int(smooth["cosmoflow"]["s"].arg_max()), named=True)
        halo = smooth["halo3d"]
        # Halo3D's lowest smoothed level within 0.5 ms of CosmoFlow's peak.
        near = halo.filter((pl.col("window_start_us") - peak["window_start_us"]).abs() <= 500.0)
        end = job_row(frames, "halo3d")["exec_us"]
        numbers[("cosmoflow+halo3d: CosmoFlow peak throughput, GB/ms", routing)] = peak["s"]
        numbers[("cosmoflow+halo3d: CosmoFlow peak at, ms", routing)] = (
            peak["window_start_us"] / 1e3
        )
        numbers[("cosmoflow+halo3d: Halo3D lowest while CosmoFlow peaks, GB/ms", routing)] = float(
            near["s"].min()
        )
        numbers[("cosmoflow+halo3d: Halo3D mean, GB/ms", routing)] = mean_throughput(
            frames, "halo3d", 350.0, end
        )
    fig.suptitle("SC'22 Fig. 9 in dflab: CosmoFlow and Halo3D co-running")
    return fig, numbers


def fig11_13(data: dict[tuple[str, str], dict[str, Any]]) -> tuple[list[Figure], dict[str, Any]]:
    numbers: dict[str, Any] = {}
    fig11 = Figure(figsize=(12, 4), layout="constrained")
    ax11 = fig11.subplots(1, 2, sharey=True)
    fig12 = Figure(figsize=(11, 5), layout="constrained")
    ax12 = fig12.subplots(1, 2)
    fig13 = Figure(figsize=(9, 4), layout="constrained")
    ax13 = fig13.subplots(1, 2, width_ratios=(2, 1))
    bars = []
    vmax = 0.1
    maps = {}
    for routing in ROUTINGS:
        frames = data[("mixed", routing)]
        meta = frames["meta"]
        sim_us = meta["summary"]["sim_time_us"]
        bw = meta["config"]["network"]["global_bw_gbps"]
        maps[routing] = congestion_index(frames["ports"], sim_us, bw)
        vmax = max(vmax, max(map(max, maps[routing])))
    for i, routing in enumerate(ROUTINGS):
        frames = data[("mixed", routing)]
        local, glob = stalls(frames)
        g0 = glob.filter(pl.col("group") == 0).sort("peer_group")
        ax = ax11[i]
        ax.bar(local["group"] - 0.2, local["ms"], width=0.4, label="local ports of the group")
        ax.bar(g0["peer_group"] + 0.2, g0["ms"], width=0.4, label="global link group 0 → x")
        ax.set_title(routing, fontsize="medium")
        ax.set_xlabel("group")
        ax.legend(fontsize="small")
        numbers[("mixed: local stall per group, mean, ms", routing)] = float(local["ms"].mean())
        numbers[("mixed: stall per global link, mean, ms", routing)] = float(glob["ms"].mean())
        image = ax12[i].imshow(maps[routing], cmap="Greys", vmin=0.0, vmax=vmax)
        ax12[i].set_title(routing, fontsize="medium")
        ax12[i].set_xlabel("destination group")
        s = frames["meta"]["summary"]
        stats = ("mean", "p50", "p95", "p99")
        values = [s[f"latency_{k}_ns"] / 1e3 for k in stats]
        ax13[0].bar(
            [j + 0.4 * i - 0.2 for j in range(len(stats))], values, width=0.4, label=routing
        )
        ax13[0].set_xticks(range(len(stats)), stats)
        numbers[("mixed: system latency mean, µs", routing)] = s["latency_mean_ns"] / 1e3
        numbers[("mixed: system latency p99, µs", routing)] = s["latency_p99_ns"] / 1e3
        system, per_job = aggregated_throughput(frames)
        bars.append(system)
        numbers[("mixed: aggregated throughput, system, GB/ms", routing)] = system
        numbers[("mixed: aggregated throughput, mean per job, GB/ms", routing)] = per_job
    ax11[0].set_ylabel("port stall time over the run (ms)")
    fig11.suptitle("SC'22 Fig. 11 in dflab: the mix's stall time (SST's output_port_stalls)")
    ax12[0].set_ylabel("source group (diagonal: its local links)")
    fig12.colorbar(image, ax=list(ax12))
    fig12.suptitle("SC'22 Fig. 12 in dflab: the mix's congestion index")
    ax13[0].set_yscale("log")
    ax13[0].set_ylabel("packet latency, every job's packets (µs)")
    ax13[0].legend(fontsize="small")
    ax13[1].bar(list(ROUTINGS), bars)
    ax13[1].set_ylabel("system throughput (GB/ms): all jobs' bytes / run")
    fig13.suptitle("SC'22 Fig. 13 in dflab: the mix, system-wide")
    return [fig11, fig12, fig13], numbers


COLUMNS = ("quantity", "routing", "dflab", "paper")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(GROUPS), help="one group of figures")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    groups = [args.only] if args.only else list(GROUPS)
    runs = [(run, r) for group in groups for run in GROUPS[group] for r in ROUTINGS]
    for run, routing in runs:
        ensure(run, routing, args.seed)
    data = {(run, routing): load(run, routing) for run, routing in runs}
    numbers: dict[Any, Any] = {}
    figures: dict[str, Figure] = {}
    if "pair" in groups:
        figures["sc22_fig5"], figures["sc22_fig6"], got = fig5_6(data)
        numbers |= got
    if "lqcd" in groups:
        figures["sc22_fig7"], figures["sc22_fig8"], got = fig7_8(data)
        numbers |= got
    if "cosmoflow" in groups:
        figures["sc22_fig9"], got = fig9(data)
        numbers |= got
    if "mixed" in groups:
        made, got = fig11_13(data)
        figures |= dict(zip(("sc22_fig11", "sc22_fig12", "sc22_fig13"), made, strict=True))
        numbers |= got
    FIGURES.mkdir(parents=True, exist_ok=True)
    for name, figure in figures.items():
        figure.savefig(FIGURES / f"{name}.png", dpi=100)
    rows = [
        {
            "quantity": quantity,
            "routing": routing,
            "dflab": f"{value:.3f}",
            "paper": PAPER[quantity][ROUTINGS.index(routing)],
        }
        for (quantity, routing), value in numbers.items()
    ]
    old = [
        r for r in result_rows.read_rows(NUMBERS) if (r["quantity"], r["routing"]) not in numbers
    ]
    result_rows.write_rows(
        NUMBERS, COLUMNS, sorted(old + rows, key=lambda r: (r["quantity"], r["routing"]))
    )
    print("| quantity | PAR: dflab (paper) | Q-adaptive: dflab (paper) |")
    print("|---|---:|---:|")
    table: dict[str, dict[str, str]] = {}
    for r in rows:
        table.setdefault(r["quantity"], {})[r["routing"]] = f"{r['dflab']} ({r['paper']})"
    for quantity, cells in table.items():
        print(f"| {quantity} | {cells.get('PAR', '')} | {cells.get('Q-adaptive', '')} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
