"""Result store and sweeps with fake runners: persistence, resume, crashes, failures."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from dflab.api import Summary
from dflab.config import ENGINE_SEMANTICS, Experiment
from dflab.errors import UserError
from dflab.loading import SweepSpec, validate
from dflab.store import Store, atomic_write
from dflab.sweep import expand, process_pool, run_sweep
from fakes import die_at_half_load, fail_at_half_load, fake_result
from helpers import inline_executor

BASE = validate(Experiment, {"name": "t", "topology": {"p": 2, "a": 4, "h": 2}})
SPEC = SweepSpec(routings=["MIN", "VALn"], loads=[0.2, 0.5, 0.8])


class Counting:
    """A runner that counts calls and, optionally, 'crashes' the sweep after `crash_after`."""

    def __init__(self, crash_after: int | None = None) -> None:
        self.calls: list[str] = []
        self.crash_after = crash_after

    def __call__(self, config_json: str) -> dict[str, Any]:
        if self.crash_after is not None and len(self.calls) == self.crash_after:
            # BaseException: escapes the worker's error capture, like the process being killed.
            raise KeyboardInterrupt
        self.calls.append(Experiment.model_validate_json(config_json).content_hash())
        return fake_result(config_json)


def _sweep(store: Store, runner: Any, points: list | None = None) -> Any:
    return run_sweep(
        points or expand(BASE, SPEC), store, jobs=2, runner=runner, executor_factory=inline_executor
    )


def test_expand_crosses_normalises_and_dedupes() -> None:
    spec = SweepSpec(routings=["min", "MIN", "valn"], traffics=["UR", "adv+1"], loads=[0.5])
    points = expand(BASE, spec)
    assert [(p.coords["routing"], p.coords["traffic"]) for p in points] == [
        ("MIN", "ur"), ("MIN", "adv+1"), ("VALn", "ur"), ("VALn", "adv+1"),
    ]  # fmt: skip
    assert len({p.key for p in points}) == 4
    assert all(p.experiment.seed == BASE.seed for p in points)
    # Without lists the sweep is the experiment itself.
    (only,) = expand(BASE, SweepSpec())
    assert only.key == BASE.content_hash()


def test_finished_points_are_stored_and_not_rerun(tmp_path: Path) -> None:
    store = Store(tmp_path / "res")
    first = Counting()
    outcome = _sweep(store, first)
    assert (outcome.ran, outcome.skipped, outcome.failures) == (6, 0, [])
    assert len(first.calls) == 6
    assert store.done_hashes() == {p.key for p in outcome.points}
    assert len(list(store.series_dir.glob("*.parquet"))) == 6

    table = pl.read_parquet(store.root / "summary.parquet")
    assert table.height == 6
    assert table.columns[:6] == ["hash", "name", "routing", "traffic", "load", "seed"]
    assert set(Summary.field_names()) <= set(table.columns)
    # Results only: how the points ran is kept apart (newcomer #24).
    assert not {"wall_s", "events", "ns_per_router_traversal"} & set(table.columns)
    assert store.execution_frame()["events"].to_list() == [100] * 6
    assert table.filter(pl.col("routing") == "VALn")["accepted_load"].to_list() == [0.2, 0.45, 0.45]
    assert pl.read_csv(store.root / "summary.csv").height == 6

    record = json.loads((store.points_dir / f"{outcome.points[0].key}.json").read_text())
    assert record["coords"] == {"routing": "MIN", "traffic": "ur", "load": 0.2, "seed": 1}
    assert record["config"] == outcome.points[0].experiment.canonical()
    assert record["engine_semantics"] == ENGINE_SEMANTICS
    assert record["hops_histogram"] == [0, 1, 2]
    assert record["execution"]["wall_s"] == 0.01
    assert (
        json.loads((store.root / "store.json").read_text())["engine_semantics"] == ENGINE_SEMANTICS
    )

    again = Counting()
    rerun = _sweep(store, again)
    assert again.calls == []
    assert (rerun.ran, rerun.skipped) == (0, 6)


def test_a_store_of_other_engine_semantics_is_refused_not_mixed(tmp_path: Path) -> None:
    # A store made before the manifest existed (points, no store.json) ...
    old = Store(tmp_path / "old")
    old.points_dir.mkdir(parents=True)
    (old.points_dir / "0123456789abcdef.json").write_text("{}")
    with pytest.raises(UserError, match=r"holds results of an older dflab .*never mixed"):
        _sweep(old, Counting())
    # ... and one of another semantics.
    other = Store(tmp_path / "other")
    other.create()
    manifest = json.loads(other.manifest.read_text())
    other.manifest.write_text(json.dumps({**manifest, "engine_semantics": ENGINE_SEMANTICS - 1}))
    with pytest.raises(
        UserError, match=rf"holds results of engine semantics {ENGINE_SEMANTICS - 1}"
    ):
        _sweep(other, Counting())


def test_crash_keeps_finished_points_and_rerun_does_the_rest(tmp_path: Path) -> None:
    store = Store(tmp_path / "res")
    crashing = Counting(crash_after=2)
    with pytest.raises(KeyboardInterrupt):
        _sweep(store, crashing)
    assert store.done_hashes() == set(crashing.calls)
    assert len(crashing.calls) == 2
    assert pl.read_parquet(store.root / "summary.parquet").height == 2
    assert not list(store.root.rglob("*.tmp"))

    rest = Counting()
    outcome = _sweep(store, rest)
    assert len(rest.calls) == 4
    assert not set(rest.calls) & set(crashing.calls)
    assert outcome.skipped == 2
    assert pl.read_parquet(store.root / "summary.parquet").height == 6


def test_failed_point_is_recorded_sweep_continues_and_retry_clears_it(tmp_path: Path) -> None:
    store = Store(tmp_path / "res")
    # The real spawn process pool, one process per point, with a picklable fake runner.
    outcome = run_sweep(
        expand(BASE, SPEC), store, jobs=2, runner=fail_at_half_load, executor_factory=process_pool
    )
    assert outcome.ran == 6
    failed = sorted((p.coords["routing"], p.coords["load"]) for p, _ in outcome.failures)
    assert failed == [("MIN", 0.5), ("VALn", 0.5)]
    assert all(m == "RuntimeError: deadlock at router 3 port 2 vc 0" for _, m in outcome.failures)
    assert len(store.done_hashes()) == 4
    assert {r["error"] for r in store.failures()} == {
        "RuntimeError: deadlock at router 3 port 2 vc 0"
    }

    retry = Counting()
    outcome = _sweep(store, retry)
    assert len(retry.calls) == 2 and outcome.failures == []
    assert store.failures() == []
    assert len(store.done_hashes()) == 6


def test_dead_worker_fails_its_point_only_and_the_sweep_goes_on(tmp_path: Path) -> None:
    store = Store(tmp_path / "res")
    outcome = run_sweep(
        expand(BASE, SPEC), store, jobs=1, runner=die_at_half_load, executor_factory=process_pool
    )
    assert sorted(p.coords["load"] for p, _ in outcome.failures) == [0.5, 0.5]
    assert all("worker process died" in message for _, message in outcome.failures)
    assert len(store.done_hashes()) == 4


def test_atomic_write_never_leaves_a_partial_file(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "points.json"
    atomic_write(target, b"old")

    def crash(*args: Any) -> None:
        raise OSError("disk gone")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="disk gone"):
        atomic_write(target, b"new")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["points.json"]
    monkeypatch.undo()
    atomic_write(target, b"new")
    assert target.read_bytes() == b"new"


def test_unreadable_store_file_is_a_user_error(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.create()
    (store.points_dir / "0123456789abcdef.json").write_text("{not json")
    with pytest.raises(UserError, match="unreadable"):
        store.points()
