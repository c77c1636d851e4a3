"""The figure of a workload run (`dflab run --workload-out DIR`, then `dflab plot DIR`): the
SC'22 study's standard panels for one run.

* communication time per job: mean over ranks (bar), standard deviation (error bar), maximum
  (tick);
* communication throughput per job over time, GB/ms, averaged over 10 windows as the paper
  smooths it;
* packet latency per job: the box from the first to the third quartile, the median, and
  whiskers to p95 with p99 marked;
* stall time per group (its local ports) and the congestion index map (groups x groups).

Uses matplotlib's object API on the Agg canvas, like `dflab.plots`.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import polars as pl
from matplotlib.figure import Figure

from dflab.errors import UserError
from dflab.outputs import (
    check_output,
    figure_path,
    figure_suffixes,
    prepare,
    save_figure,
    write_failed,
)
from dflab.workload import WorkloadResult, congestion_index

FRAMES = ("jobs", "iterations", "throughput", "ports")
SMOOTH_WINDOWS = 10


def write_workload(result: Any, directory: Path, option: str = "--workload-out") -> list[Path]:
    """Write a run's workload frames (Parquet) and its summary and config (JSON) into
    `directory`, each file atomically (a temporary file renamed over it)."""
    w: WorkloadResult | None = result.workload
    if w is None:
        raise UserError(f"{option}: the experiment has no [workload]")
    files: dict[str, bytes] = {}
    for name in FRAMES:
        buffer = io.BytesIO()
        getattr(w, name).write_parquet(buffer)
        files[f"{name}.parquet"] = buffer.getvalue()
    meta = {"summary": result.summary.to_dict(), "config": result.config}
    if w.background is not None:
        meta["background"] = w.background.to_dicts()[0]
    files["run.json"] = json.dumps(meta, indent=1, sort_keys=True).encode()
    written = []
    for name, data in files.items():
        path = directory / name
        prepare(option, path)
        tmp = path.with_name(f".{name}.tmp")
        try:
            tmp.write_bytes(data)
            os.replace(tmp, path)
        except OSError as exc:
            raise write_failed(option, path, exc) from None
        written.append(path)
    return written


def is_workload_dir(directory: Path) -> bool:
    return (directory / "jobs.parquet").is_file() and (directory / "run.json").is_file()


def workload_figure(directory: Path) -> Figure:
    frames = {name: pl.read_parquet(directory / f"{name}.parquet") for name in FRAMES}
    meta = json.loads((directory / "run.json").read_text("utf-8"))
    jobs = frames["jobs"]
    labels = [f"{row['job']}: {row['name']}" for row in jobs.iter_rows(named=True)]
    figure = Figure(figsize=(13, 8.5), layout="constrained")
    axes = figure.subplots(2, 3)
    _comm_bars(axes[0][0], jobs, labels)
    throughput_lines(axes[0][1], frames["throughput"], labels)
    _latency_boxes(axes[0][2], jobs, labels)
    ports = frames["ports"]
    _stall_bars(axes[1][0], ports)
    net = meta["config"]["network"]
    sim_us = meta["summary"]["sim_time_us"]
    _congestion_map(figure, axes[1][1], ports, sim_us, net["global_bw_gbps"])
    axes[1][2].axis("off")
    name = meta["config"].get("name") or ""
    routing = meta["config"]["routing"]["algorithm"]
    figure.suptitle(f"{name + ': ' if name else ''}{routing}, {sim_us / 1e3:.2f} ms simulated")
    return figure


def _comm_bars(ax: Any, jobs: pl.DataFrame, labels: list[str]) -> None:
    x = range(jobs.height)
    ax.bar(x, jobs["comm_mean_us"] / 1e3, yerr=jobs["comm_std_us"] / 1e3, capsize=4)
    ax.scatter(x, jobs["comm_max_us"] / 1e3, marker="_", s=200, color="k", label="max")
    ax.set_xticks(list(x), labels, rotation=20)
    ax.set_ylabel("communication time per rank (ms)")
    ax.legend(loc="upper right", fontsize="small")


def throughput_lines(ax: Any, throughput: pl.DataFrame, labels: list[str]) -> None:
    """Each job's throughput over time (`labels[job]`), smoothed over SMOOTH_WINDOWS windows."""
    for job, label in enumerate(labels):
        line = throughput.filter(pl.col("job") == job).sort("window_start_us")
        smooth = line["gb_per_ms"].rolling_mean(SMOOTH_WINDOWS, min_samples=1)
        ax.plot(line["window_start_us"] / 1e3, smooth, label=label)
    ax.set_xlabel("time (ms)")
    ax.set_ylabel(f"throughput (GB/ms, {SMOOTH_WINDOWS}-window mean)")
    ax.legend(fontsize="small")


def latency_box(row: dict[str, Any], label: str, counted: str = "latency") -> dict[str, Any]:
    """A matplotlib `bxp` box (µs) from a job row's latency quantiles (ns): box Q1-Q3, median,
    whisker to p95, p99 as the one flier, the mean. `counted` picks the columns: `latency`
    (from injection into the network) or `packet_latency` (from entering the NIC's source
    queue, as SST counts it)."""
    if counted not in ("latency", "packet_latency"):
        raise ValueError(f"counted must be 'latency' or 'packet_latency', not {counted!r}")

    def us(stat: str) -> float:
        return float(row[f"{counted}_{stat}_ns"]) / 1e3

    return {
        "label": label,
        "q1": us("q1"),
        "med": us("p50"),
        "q3": us("q3"),
        "whislo": us("q1"),
        "whishi": us("p95"),
        "mean": us("mean"),
        "fliers": [us("p99")],
    }


def _latency_boxes(ax: Any, jobs: pl.DataFrame, labels: list[str]) -> None:
    stats = [
        latency_box(row, label)
        for row, label in zip(jobs.iter_rows(named=True), labels, strict=True)
    ]
    ax.bxp(stats, showmeans=True)
    ax.set_ylabel("packet latency (µs): box Q1-Q3, whisker p95, dot p99")
    ax.tick_params(axis="x", rotation=20)


def _stall_bars(ax: Any, ports: pl.DataFrame) -> None:
    for cls, offset in (("local", -0.2), ("global", 0.2)):
        per_group = (
            ports.filter(pl.col("class") == cls)
            .group_by("group")
            .agg(pl.col("stall_us").sum())
            .sort("group")
        )
        ax.bar(per_group["group"] + offset, per_group["stall_us"] / 1e3, width=0.4, label=cls)
    ax.set_xlabel("group")
    ax.set_ylabel("port stall time, summed per group (ms)")
    ax.legend(fontsize="small")


def _congestion_map(figure: Figure, ax: Any, ports: pl.DataFrame, sim_us: float, bw: float) -> None:
    index = congestion_index(ports, sim_us, bw)
    image = ax.imshow(index, cmap="Greys", vmin=0.0, vmax=max(0.1, max(map(max, index), default=0)))
    ax.set_xlabel("destination group")
    ax.set_ylabel("source group (diagonal: its local links)")
    ax.set_title("congestion index", fontsize="medium")
    figure.colorbar(image, ax=ax)


def plot_workload(
    directory: Path, out: str | Path | None, *, pdf: bool, option: str = "--out"
) -> list[Path]:
    """Write the figure of a workload directory; the written paths."""
    figure_file = figure_path(out) if out is not None else directory / "workload.png"
    paths = [figure_file]
    if pdf and figure_file.suffix.lower() != ".pdf":
        paths.append(figure_file.with_suffix(".pdf"))
    paths = [check_output(option, path, figure_suffixes()) for path in paths]
    figure = workload_figure(directory)
    save_figure(figure, paths, option, dpi=110)
    return paths
