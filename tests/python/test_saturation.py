"""`dflab saturation`: bisection over the load grid finds the highest sustained load of every
curve, runs only what the store lacks when rerun, and writes its table atomically."""

from __future__ import annotations

import csv
from concurrent.futures import Executor, ThreadPoolExecutor
from pathlib import Path

import pytest

from dflab.config import Experiment
from dflab.errors import UserError
from dflab.loading import SweepSpec
from dflab.saturation import Criterion, grid, search
from dflab.store import Store
from fakes import fake_result
from helpers import TINY_TOML, assert_user_error, requires_engine, run_cli


def threads(jobs: int) -> Executor:
    return ThreadPoolExecutor(jobs)


def test_grid_and_criterion_refuse_bad_values() -> None:
    assert grid(0.05, 0.1, 0.01) == [0.05, 0.06, 0.07, 0.08, 0.09, 0.1]
    assert grid(0.5, 0.5, 0.1) == [0.5]
    for lo, hi, step, field in [
        (0.0, 1.0, 0.01, "--range"),
        (0.6, 0.5, 0.01, "--range"),
        (0.1, 1.0, 0.0, "--step"),
    ]:
        with pytest.raises(UserError, match=field):
            grid(lo, hi, step)
    with pytest.raises(UserError, match="--accept"):
        Criterion(accept=1.5)
    ok = {"summary": {"offered_load": 0.5, "accepted_load": 0.496, "latency_mean_ns": 900.0}}
    assert Criterion().sustained(ok)
    assert not Criterion(max_latency_ns=500.0).sustained(ok)
    assert not Criterion().sustained({"summary": {"offered_load": 0.5, "accepted_load": 0.49}})
    assert not Criterion().sustained(None)  # a failed point


def test_bisection_finds_each_curve_and_resumes_from_the_store(tmp_path: Path) -> None:
    # The fake network saturates at 0.6 under MIN and at 0.45 otherwise: with accepted >= 0.99
    # offered, 0.60 and 0.45 are the last sustained loads of the 0.01 grid.
    loads = grid(0.05, 1.0, 0.01)
    store = Store(tmp_path / "sat")
    spec = SweepSpec(routings=["MIN", "VALn"], traffics=["ur"], seeds=[1, 2])
    kwargs = {"loads": loads, "criterion": Criterion(), "jobs": 2, "runner": fake_result}
    results = search(Experiment(), spec, store, executor_factory=threads, **kwargs)
    found = {(r.routing, r.seed): (r.load, r.above) for r in results}
    assert found == {
        ("MIN", 1): (0.6, 0.61),
        ("MIN", 2): (0.6, 0.61),
        ("VALn", 1): (0.45, 0.46),
        ("VALn", 2): (0.45, 0.46),
    }
    # Bisection: about log2(96) runs per curve, not 96.
    runs = len(store.points())
    assert all(len(r.probes) <= 8 for r in results) and runs <= 32
    with (store.root / "saturation.csv").open() as f:
        table = {row["routing"]: row for row in csv.DictReader(f)}
    assert table["MIN"]["saturation_load"] == "0.6" and table["VALn"]["per_seed"] == "0.45 0.45"
    assert (table["MIN"]["accept"], table["MIN"]["max_latency_ns"]) == ("0.99", "")
    # Rerun with a third seed: only that seed's probes run.
    spec3 = SweepSpec(routings=["MIN", "VALn"], traffics=["ur"], seeds=[1, 2, 3])
    again = search(Experiment(), spec3, store, executor_factory=threads, **kwargs)
    assert len(store.points()) == runs + sum(len(r.probes) for r in again if r.seed == 3)
    assert {r.load for r in again if r.routing == "MIN"} == {0.6}


def test_a_range_that_never_saturates_or_starts_saturated_says_so(tmp_path: Path) -> None:
    store = Store(tmp_path / "edge")
    spec = SweepSpec(routings=["MIN"], traffics=["ur"], seeds=[1])
    low = search(Experiment(), spec, store, loads=grid(0.1, 0.3, 0.1), criterion=Criterion(),
                 runner=fake_result, executor_factory=threads)  # fmt: skip
    assert (low[0].load, low[0].above) == (0.3, None)
    high = search(Experiment(), spec, store, loads=grid(0.7, 0.9, 0.1), criterion=Criterion(),
                  runner=fake_result, executor_factory=threads)  # fmt: skip
    assert (high[0].load, high[0].above) == (None, 0.7)


@requires_engine
def test_the_command_finds_a_real_saturation_and_refuses_a_bad_range(tmp_path: Path) -> None:
    # The tiny network (dfly(2,4,2,9), 72 nodes) under ADV+1 with MIN: one global link per
    # group pair carries a group's 8 nodes, so 1/8 = 0.125 is the most it can accept. Its
    # 5 µs window is only 8 latencies long: accepted and offered load then differ by a per cent
    # or two below saturation, hence --accept 0.95.
    experiment = tmp_path / "tiny.toml"
    experiment.write_text(TINY_TOML)
    out = tmp_path / "sat"
    args = ["saturation", str(experiment), "--routings", "MIN", "--traffics", "adv+1"]
    grid_args = ["--range", "0.05:0.3", "--step", "0.01", "--accept", "0.95", "--jobs", "2"]
    proc = run_cli(*args, *grid_args, "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    with (out / "saturation.csv").open() as f:
        (row,) = list(csv.DictReader(f))
    assert 0.1 <= float(row["saturation_load"]) <= 0.125, row
    assert "saturation load" in proc.stdout and "MIN" in proc.stdout
    assert_user_error(run_cli(*args, "--range", "0.5:0.2", "--out", str(out)), "--range")
