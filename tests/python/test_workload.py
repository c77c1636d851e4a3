"""Workloads from Python and the CLI: programs written as functions, the per-job frames, the
job table of `dflab run`, background traffic beside the jobs, each job's progress while a run
goes, the deadlock report and field-named errors."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from dflab import engine
from dflab.api import as_experiment, simulate
from dflab.engine import JobProgress
from dflab.errors import UserError
from dflab.progress import describe
from dflab.workload import (
    allreduce,
    alltoall,
    compute,
    irecv,
    isend,
    program,
    recv,
    send,
    waitall,
)
from dflab.workload_plots import latency_box
from helpers import requires_engine, run_cli

pytestmark = requires_engine

# dfly(2,4,2): 72 nodes, the SC'22 packets (4 flits of 128 B).
NET = {
    "topology": {"p": 2, "a": 4, "h": 2},
    "network": {"flit_bytes": 128, "packet_flits": 4},
    "run": {"warmup_us": 0, "measure_us": 2000},
}


def ring(rank: int, iteration: int):
    n = 6
    yield irecv((rank - 1) % n)
    yield isend((rank + 1) % n, bytes=20_000 + 1000 * iteration)
    yield waitall()
    yield compute(200)
    yield allreduce(8)


def test_a_python_program_runs_and_reports_per_job_frames() -> None:
    jobs = [program(ring, ranks=6, iterations=3, name="ring"), program(ring, ranks=6)]
    result = simulate({**NET, "workload": {"jobs": jobs, "placement": "random"}})
    w = result.workload
    assert w is not None
    assert w.jobs["name"].to_list() == ["ring", "table"]
    assert w.jobs["finished"].to_list() == [True, True]
    # 6 ring messages and 10 allreduce messages (2 per tree edge) per iteration.
    assert w.jobs["messages"].to_list() == [3 * 16, 16]
    # One row per rank and iteration; communication excludes the 200 ns of compute.
    assert w.iterations.filter(w.iterations["job"] == 0).height == 18
    row = w.iterations.row(0, named=True)
    assert row["comm_us"] == pytest.approx(row["stop_us"] - row["start_us"] - 0.2)
    # Every byte a job received is in its throughput windows: its wire bytes, each packet's
    # last flit rounded up to a whole flit.
    got = w.throughput.group_by("job").agg(pl.col("bytes").sum()).sort("job")["bytes"].to_list()
    for received, job in zip(got, w.jobs.iter_rows(named=True), strict=True):
        assert job["wire_bytes"] <= received < job["wire_bytes"] + 128 * job["packets"]
    # The rate in GB/ms over 1 us windows: GB/ms x (window in ms) x 1e9 is the window's bytes.
    t = w.throughput
    assert (t["gb_per_ms"] * 1e-3 * 1e9).to_list() == pytest.approx(
        t["bytes"].cast(float).to_list()
    )
    assert result.summary.packets_delivered == w.jobs["packets"].sum()
    # Counted from the source queue (as SST does), each quantile is at least the one from
    # injection, and the quantiles are ordered.
    stats = ("q1", "p50", "q3", "p95", "p99", "max")
    for job in w.jobs.iter_rows(named=True):
        queued = [job[f"packet_latency_{s}_ns"] for s in stats]
        assert queued == sorted(queued) and queued[0] > 0
        assert all(job[f"packet_latency_{s}_ns"] >= job[f"latency_{s}_ns"] for s in stats)


def test_latency_boxes_count_from_injection_or_from_the_source_queue() -> None:
    ns = {"q1": 1000.0, "p50": 1500.0, "q3": 2500.0, "p95": 6000.0, "p99": 9000.0, "mean": 2000.0}
    row = {f"latency_{s}_ns": v for s, v in ns.items()}
    row |= {f"packet_latency_{s}_ns": v + 500.0 for s, v in ns.items()}
    box = latency_box(row, "PAR")
    got = (box["q1"], box["med"], box["q3"], box["whishi"], box["fliers"])
    assert got == (1.0, 1.5, 2.5, 6.0, [9.0])
    sst = latency_box(row, "PAR", "packet_latency")
    assert (sst["q1"], sst["mean"], sst["fliers"]) == (1.5, 2.5, [9.5])
    with pytest.raises(ValueError, match="counted must be"):
        latency_box(row, "PAR", "latency_ns")


def test_a_program_must_yield_operations() -> None:
    with pytest.raises(UserError, match="yielded 3"):
        program(lambda r, i: [3], ranks=2)


def test_the_cli_prints_the_job_table_and_json_rows(tmp_path: Path) -> None:
    job = program(lambda r, i: [send(1, 5000)] if r == 0 else [recv(0)], ranks=2, name="pair")
    config = {**NET, "workload": {"jobs": [job]}}
    path = tmp_path / "pair.json"
    path.write_text(json.dumps(config))
    toml = tmp_path / "pair.toml"
    toml.write_text(_toml(config))
    proc = run_cli("run", str(toml))
    assert proc.returncode == 0, proc.stderr
    assert "jobs" in proc.stdout and "pair" in proc.stdout
    proc = run_cli("run", str(toml), "--json")
    assert proc.returncode == 0, proc.stderr
    jobs = json.loads(proc.stdout)["jobs"]
    assert [(j["name"], j["messages"], j["wire_bytes"]) for j in jobs] == [("pair", 1, 5040)]


def test_a_receive_that_never_matches_exits_1_naming_the_rank(tmp_path: Path) -> None:
    job = program(lambda r, i: [send(1, 100, tag=1)] if r == 0 else [recv(0, tag=2)], ranks=2)
    toml = tmp_path / "stuck.toml"
    toml.write_text(_toml({**NET, "workload": {"jobs": [job]}}))
    proc = run_cli("run", str(toml))
    assert proc.returncode == 1
    assert "job 0 (table) rank 1" in proc.stderr and "tag: 2" in proc.stderr


def test_bad_workloads_name_the_field(tmp_path: Path) -> None:
    for workload, needle in [
        ({"jobs": [{"motif": "nosuch", "ranks": 2}]}, "workload.jobs[0].motif"),
        ({"jobs": [{"motif": "table", "ranks": 1000}]}, "workload.jobs"),
        ({"jobs": [{"motif": "table", "ranks": 2}], "placement": "everywhere"}, "placement"),
    ]:
        with pytest.raises(UserError, match=needle.replace("[", r"\[").replace("]", r"\]")):
            simulate({**NET, "workload": workload})


def _toml(config: dict) -> str:
    """The config as TOML (the tests' configs are two levels deep, jobs inline)."""
    lines = []
    for section, table in config.items():
        if section == "workload":
            continue
        lines.append(f"[{section}]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in table.items()]
    lines.append("[workload]")
    lines += [f"{k} = {json.dumps(v)}" for k, v in config["workload"].items() if k != "jobs"]
    for job in config["workload"]["jobs"]:
        lines.append("[[workload.jobs]]")
        for k, v in job.items():
            lines.append(f"{k} = {_inline(v)}")
    return "\n".join(lines) + "\n"


def _inline(value: object) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_inline(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_inline(v) for v in value) + "]"
    return json.dumps(value)


def test_ports_and_the_congestion_index() -> None:
    from dflab.workload import congestion_index

    jobs = [program(lambda r, i: [alltoall(30_000)], ranks=40)]
    result = simulate({**NET, "workload": {"jobs": jobs, "placement": "random"}})
    w = result.workload
    assert w is not None
    assert w.ports.height == 36 * 7
    assert set(w.ports["class"]) == {"host", "local", "global"}
    bw = result.config["network"]["global_bw_gbps"]
    assert bw == result.config["network"]["local_bw_gbps"]
    index = congestion_index(w.ports, result.summary.sim_time_us, bw)
    assert len(index) == 9 and all(len(row) == 9 for row in index)
    # Every group pair is one global link each way; an all-to-all over 40 of 72 nodes uses
    # them all, below their capacity.
    off = [index[s][d] for s in range(9) for d in range(9) if s != d]
    assert all(0 < x < 1 for x in off)
    assert all(0 < index[s][s] < 1 for s in range(9))


def test_workload_out_and_its_figure(tmp_path: Path) -> None:
    job = program(lambda r, i: [alltoall(5000)], ranks=8, iterations=2, name="a2a")
    toml = tmp_path / "a2a.toml"
    toml.write_text(_toml({**NET, "workload": {"jobs": [job]}}))
    out = tmp_path / "frames"
    proc = run_cli("run", str(toml), "--workload-out", str(out))
    assert proc.returncode == 0, proc.stderr
    jobs = pl.read_parquet(out / "jobs.parquet")
    assert jobs["name"].to_list() == ["a2a"] and jobs["messages"].to_list() == [2 * 8 * 7]
    assert pl.read_parquet(out / "iterations.parquet").height == 16
    assert pl.read_parquet(out / "ports.parquet").height == 36 * 7
    assert not list(out.glob(".*.tmp"))
    proc = run_cli("plot", str(out))
    assert proc.returncode == 0, proc.stderr
    assert (out / "workload.png").stat().st_size > 10_000
    # Not a workload run: one clear error before anything runs.
    plain = tmp_path / "plain.toml"
    plain.write_text(_toml({**NET, "workload": {"jobs": [job]}}).split("[workload]")[0])
    proc = run_cli("run", str(plain), "--workload-out", str(tmp_path / "x"))
    assert proc.returncode != 0 and "--workload-out" in proc.stderr


# A 36-rank all-to-all on random nodes: the 36 idle nodes sit among its nodes.
def _alltoall(iterations: int) -> dict:
    params = {"iterations": iterations, "bytes": 4096}
    return {"motif": "alltoall", "ranks": 36, "wait2start_us": 0.0, "params": params}


def test_background_traffic_runs_beside_the_jobs(tmp_path: Path) -> None:
    workload = {"jobs": [_alltoall(4)], "placement": "random", "background": "idle-nodes"}
    config = {**NET, "traffic": {"load": 0.4}, "workload": workload}
    result = simulate(config)
    w = result.workload
    assert w is not None and w.background is not None
    bg = w.background.row(0, named=True)
    described = (bg["placement"], bg["nodes"], bg["pattern"], bg["load"])
    assert described == ("idle-nodes", 36, "ur", 0.4)
    assert bg["offered_load"] == pytest.approx(0.4, rel=0.05)
    assert bg["accepted_load"] == pytest.approx(bg["offered_load"], rel=0.03)
    # The jobs' rows count their own packets only; the run ends with the job.
    assert w.jobs["packets"].sum() + bg["packets_delivered"] <= result.summary.packets_delivered
    assert result.summary.sim_time_us == pytest.approx(w.jobs["exec_us"][0])
    toml = tmp_path / "bg.toml"
    toml.write_text(_toml(config))
    proc = run_cli("run", str(toml), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["background"]["nodes"] == 36
    proc = run_cli("run", str(toml))
    assert proc.returncode == 0, proc.stderr
    assert "background" in proc.stdout and "idle-nodes" in proc.stdout
    # Without background nothing says so.
    assert simulate({**NET, "workload": {"jobs": [_alltoall(1)]}}).workload.background is None


def test_background_on_idle_nodes_needs_idle_nodes() -> None:
    jobs = [{"motif": "alltoall", "ranks": 72}]
    with pytest.raises(UserError, match=r"workload\.background.*0 of the network's 72 nodes idle"):
        simulate({**NET, "workload": {"jobs": jobs, "background": "idle-nodes"}})
    with pytest.raises(UserError, match="background"):
        simulate({**NET, "workload": {"jobs": jobs, "background": "idle"}})


def test_job_progress_reaches_the_api_and_the_plain_progress_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    line = describe(10.0, 40.0, 2.0, [JobProgress("fft3d", 4, 1, 8, 12)])
    assert line.endswith("; jobs: fft3d 3.0/8 it (38%)"), line
    assert not describe(10.0, 40.0, 2.0, []).endswith(")")
    # A run of a fraction of a second of wall time, reporting every millisecond.
    workload = {"jobs": [_alltoall(24)], "placement": "random", "background": "idle-nodes"}
    config = {**NET, "traffic": {"load": 0.5}, "workload": workload}
    seen: list[list[JobProgress]] = []
    engine_json = as_experiment(config).to_engine_json()
    engine.simulate(engine_json, job_progress=seen.append, every_s=0.001)
    assert seen and all(len(jobs) == 1 and jobs[0].name == "alltoall" for jobs in seen)
    assert all(0 <= jobs[0].iterations_done <= 36 * 24 for jobs in seen)
    toml = tmp_path / "long.toml"
    toml.write_text(_toml(config))
    monkeypatch.setenv("DFLAB_PROGRESS_S", "0.01")
    proc = run_cli("run", str(toml))
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("progress: ")]
    assert lines, proc.stderr
    assert all("; jobs: alltoall " in ln and "/24 it (" in ln for ln in lines), proc.stderr


def test_a_sweep_of_workload_points_keeps_every_job_row(tmp_path: Path) -> None:
    """The result store's jobs table: one row per (point, job) with the point's coordinates,
    the same rows a single run gives, written with the summary and read by `load_jobs`."""
    from dflab import load_jobs
    from dflab.config import Experiment
    from dflab.loading import SweepSpec, validate
    from dflab.store import Store
    from dflab.sweep import expand, run_sweep
    from helpers import inline_executor

    jobs = [program(ring, ranks=6, iterations=2, name="ring"), program(ring, ranks=6, name="b")]
    base = validate(Experiment, {**NET, "workload": {"jobs": jobs}})
    points = expand(base, SweepSpec(routings=["MIN", "VALn"], seeds=[1, 2]))
    store = Store(tmp_path / "s")
    run_sweep(points, store, jobs=1, executor_factory=inline_executor)
    frame = load_jobs(tmp_path / "s")
    assert frame.height == 8
    assert frame.columns[:4] == ["hash", "routing", "traffic", "load"]
    assert sorted(set(frame["routing"])) == ["MIN", "VALn"]
    assert frame.filter(pl.col("routing") == "MIN")["name"].to_list() == ["ring", "b"] * 2
    one = simulate(points[0].experiment).workload
    assert one is not None
    row = frame.filter(pl.col("hash") == points[0].key)
    assert row["exec_us"].to_list() == one.jobs["exec_us"].to_list()
    assert row["latency_p99_ns"].to_list() == one.jobs["latency_p99_ns"].to_list()
    written = pl.read_csv(tmp_path / "s" / "jobs.csv")
    assert written.height == 8 and written["name"].to_list() == frame["name"].to_list()


def test_load_jobs_names_a_store_without_workload_points(tmp_path: Path) -> None:
    from dflab import load_jobs
    from dflab.store import Store

    Store(tmp_path / "s").create()
    with pytest.raises(UserError, match="no workload points"):
        load_jobs(tmp_path / "s")
