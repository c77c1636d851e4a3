"""The Dask backend on a two-worker LocalCluster: the same sweep as the local pool, and a
worker that dies, a task that fails or hangs: every point ends in the store exactly once."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from pathlib import Path

import polars as pl
import pytest

from dflab.config import Experiment
from dflab.errors import UserError
from dflab.loading import SweepSpec, validate
from dflab.store import Store
from dflab.sweep import expand, run_sweep
from fakes import MARKS, die_once_at_half_load, fake_result, hang_once_at_half_load
from helpers import TINY_TOML, assert_user_error, requires_engine, run_cli

distributed = pytest.importorskip("distributed")
backends = pytest.importorskip("dflab.backends")

BASE = validate(Experiment, {"name": "d", "topology": {"p": 2, "a": 4, "h": 2}})
SPEC = SweepSpec(routings=["MIN", "VALn"], loads=[0.2, 0.5, 0.8], seeds=[1, 2])


def _exactly_once(store: Store, points: list) -> None:
    """Every point in the store once: its file, one journal line, one summary row."""
    keys = sorted(point.key for point in points)
    assert sorted(path.stem for path in store.points_dir.glob("*.json")) == keys
    lines = [json.loads(line) for line in store.journal.read_text().splitlines()]
    assert sorted(entry["record"]["hash"] for entry in lines) == keys
    summary = pl.read_parquet(store.root / "summary.parquet")
    assert sorted(summary["hash"].to_list()) == keys
    assert list(store.failed_dir.glob("*.json")) == []


@pytest.fixture
def marks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "marks"
    directory.mkdir()
    monkeypatch.setenv(MARKS, str(directory))
    return directory


def _dask(scheduler: str = "local:2", **options) -> backends.DaskBackend:
    return backends.backend(backends.cluster_spec({"scheduler": scheduler, **options}))


def test_a_sweep_on_two_dask_workers_equals_the_local_one(tmp_path: Path) -> None:
    points = expand(BASE, SPEC)
    local = Store(tmp_path / "local")
    run_sweep(points, local, jobs=2, runner=fake_result)
    with _dask() as dask:
        assert dask.describe() == "Dask LocalCluster of 2 workers"
        assert dask.default_jobs() == 2
        assert dask.factory(1).capacity() == 2  # points in flight follow the cluster's threads
        store = Store(tmp_path / "dask")
        outcome = run_sweep(
            points, store, jobs=2, runner=fake_result, executor_factory=dask.factory
        )
    assert (outcome.ran, outcome.failures, outcome.retried) == (12, [], 0)
    _exactly_once(store, points)
    assert (store.root / "summary.csv").read_bytes() == (local.root / "summary.csv").read_bytes()


@pytest.mark.parametrize("dask_retries", [3, 0], ids=["dask-reschedules", "sweep-retries"])
def test_a_worker_that_dies_costs_no_point_and_duplicates_none(
    tmp_path: Path, marks: Path, dask_retries: int
) -> None:
    """The worker running a load-0.5 point dies (os._exit) the first time. Dask reschedules
    its task on the other worker (allowed-failures 3), or, with 0, reports KilledWorker and the
    sweep retries the point itself: either way, every point is stored exactly once."""
    import dask

    points = expand(BASE, SPEC)
    store = Store(tmp_path / "res")
    with (
        dask.config.set({"distributed.scheduler.allowed-failures": dask_retries}),
        _dask(retries=2) as backend,
    ):
        outcome = run_sweep(
            points,
            store,
            jobs=2,
            runner=die_once_at_half_load,
            executor_factory=backend.factory,
            policy=backend.spec.policy(),
        )
    assert (marks / "died").exists()
    assert (outcome.ran, outcome.failures) == (12, [])
    assert outcome.retried == (1 if dask_retries == 0 else 0)
    _exactly_once(store, points)
    # The point whose worker died ran twice; each of the others once, except that the result of
    # a point the same worker finished just before can die with it (Dask sends results in
    # batches), and that point runs again too.
    calls = sorted(p.name.rsplit("-", 1)[1] for p in marks.iterdir() if p.name != "died")
    lost = len(calls) - 13
    assert lost in (0, 1), calls
    assert calls.count("0.5") in {4 + 1, 4 + 1 + lost}, calls


def test_a_hung_point_times_out_and_its_retry_is_stored_once(tmp_path: Path, marks: Path) -> None:
    points = expand(BASE, SweepSpec(loads=[0.2, 0.5, 0.8]))
    store = Store(tmp_path / "res")
    with _dask(retries=1, timeout_s=3.0) as backend:
        outcome = run_sweep(
            points,
            store,
            jobs=2,
            runner=hang_once_at_half_load,
            executor_factory=backend.factory,
            policy=backend.spec.policy(),
        )
    assert (marks / "hung").exists()
    assert (outcome.ran, outcome.failures, outcome.retried) == (3, [], 1)
    _exactly_once(store, points)


def test_without_retries_a_lost_point_is_reported_then_rerun(tmp_path: Path, marks: Path) -> None:
    import dask

    points = expand(BASE, SweepSpec(loads=[0.2, 0.5]))
    store = Store(tmp_path / "res")
    with (
        dask.config.set({"distributed.scheduler.allowed-failures": 0}),
        _dask(retries=0) as backend,
    ):
        run = dict(jobs=2, runner=die_once_at_half_load, executor_factory=backend.factory)
        outcome = run_sweep(points, store, policy=backend.spec.policy(), **run)
        ((failed, message),) = outcome.failures
        assert failed.coords["load"] == 0.5 and "KilledWorker" in message
        assert len(store.failures()) == 1
        again = run_sweep(points, store, policy=backend.spec.policy(), **run)
    assert (again.ran, again.skipped, again.failures) == (1, 1, [])
    _exactly_once(store, points)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"backend": "spark"}, "cluster.backend: 'spark' is not allowed; allowed: local, dask"),
        (
            {"scheduler": "yarn"},
            "cluster.scheduler: 'yarn' is not allowed; allowed: local, local:N",
        ),
        ({"scheduler": "local:0"}, "expected local:N with N >= 1"),
        ({"backend": "local", "scheduler": "local"}, 'needs backend = "dask"'),
        ({"retries": -1}, "cluster.retries: -1 is out of range"),
        ({"cores": 2, "walltme": "1:00:00"}, "cluster.walltme: unknown key; allowed keys"),
    ],
)
def test_cluster_settings_are_checked(table: dict, message: str) -> None:
    with pytest.raises(UserError) as error:
        backends.cluster_spec(table)
    assert message in error.value.message


def test_slurm_settings_make_the_job_script() -> None:
    pytest.importorskip("dask_jobqueue")
    spec = backends.cluster_spec(
        {
            "scheduler": "slurm",
            "jobs": 4,
            "cores": 8,
            "memory": "16GB",
            "walltime": "02:00:00",
            "queue": "compute",
            "account": "proj42",
            "job_extra": ["--exclusive"],
        }
    )
    assert spec.dask and spec.policy().retries == 2
    cluster = backends.jobqueue_cluster(spec)
    try:
        script = cluster.job_script()
    finally:
        cluster.close()
    for line in ("#SBATCH -p compute", "#SBATCH -A proj42", "#SBATCH -t 02:00:00"):
        assert line in script
    assert "#SBATCH --exclusive" in script and "#SBATCH --cpus-per-task=8" in script


@requires_engine
def test_dflab_sweep_runs_on_a_local_dask_cluster(tmp_path: Path) -> None:
    (tmp_path / "tiny.toml").write_text(TINY_TOML)
    args = ["sweep", "tiny.toml", "--loads", "0.1,0.2", "--seeds", "1:2"]
    proc = run_cli(*args, "--backend", "dask", "--scheduler", "local:2", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "sweep: 4 points, 2 jobs (Dask LocalCluster of 2 workers)" in proc.stderr
    frame = pl.read_csv(tmp_path / "results" / "tiny" / "summary.csv")
    assert frame.height == 4
    # The same points on the local pool: nothing to do, the store has them all.
    again = run_cli(*args, cwd=tmp_path)
    assert again.returncode == 0 and "4 points were already done" in again.stderr
    assert_user_error(
        run_cli(*args, "--scheduler", "local:x", cwd=tmp_path), "--scheduler", "local:N"
    )


def test_the_cluster_extra_is_pinned_and_in_dev() -> None:
    import tomllib

    from helpers import REPO

    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert [req.split("==")[0] for req in extras["cluster"]] == ["distributed", "dask-jobqueue"]
    assert all("==" in req for req in extras["cluster"])
    assert set(extras["cluster"]) <= set(extras["dev"])


def test_the_saturation_search_runs_on_dask_too(tmp_path: Path) -> None:
    from dflab.saturation import Criterion, grid, search

    spec = SweepSpec(routings=["MIN", "VALn"], traffics=["ur"], seed_count=2)
    with _dask() as dask:
        results = search(
            Experiment(),
            spec,
            Store(tmp_path / "sat"),
            loads=grid(0.05, 1.0, 0.05),
            criterion=Criterion(),
            jobs=2,
            runner=fake_result,
            executor_factory=dask.factory,
            policy=dask.spec.policy(),
        )
    found = {(r.routing, r.seed): r.load for r in results}
    assert found == {("MIN", 1): 0.6, ("MIN", 2): 0.6, ("VALn", 1): 0.45, ("VALn", 2): 0.45}


@requires_engine
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_sigterm_to_the_group_stops_a_dask_sweep(tmp_path: Path, signum: int) -> None:
    """As on the local pool: the Dask workers ignore SIGINT, the sweep cancels its points,
    closes the cluster, keeps the finished points and says so; no process is left."""
    from test_sweep_cli import _group, _no_group_left, _start_sweep, _wait_for

    proc, log = _start_sweep(tmp_path, "--scheduler", "local:2")
    try:
        points = tmp_path / "results" / "interrupt" / "points"
        saved = lambda: len(list(points.glob("*.json"))) if points.is_dir() else 0  # noqa: E731
        assert _wait_for(lambda: saved() == 2, 60), log.read_text()
        started = time.monotonic()
        os.killpg(proc.pid, signum)
        code = proc.wait(timeout=60)
        took = time.monotonic() - started
        print(f"\n{signal.Signals(signum).name}: stopped in {took:.2f} s, exit {code}")
        assert code == 128 + signum and took < 20
        assert _no_group_left(proc.pid) == []
    finally:
        for pid in _group(proc.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    err = log.read_text()
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    name = signal.Signals(signum).name
    assert f"error: interrupted ({name}); 2 of 4 points saved; rerun" in err
    frame = pl.read_parquet(tmp_path / "results" / "interrupt" / "summary.parquet")
    assert frame["load"].to_list() == [0.001, 0.002]
