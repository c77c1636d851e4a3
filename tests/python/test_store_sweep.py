"""Result store and sweeps with fake runners: persistence, resume, crashes, failures."""

from __future__ import annotations

import importlib.metadata
import json
import os
import signal
import stat
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dflab
from dflab.api import Summary
from dflab.config import ENGINE_SEMANTICS, Experiment
from dflab.errors import UserError
from dflab.loading import SweepSpec, validate, with_overrides
from dflab.pool import default_jobs
from dflab.store import Store, atomic_write
from dflab.sweep import _Signals, expand, process_pool, run_sweep
from fakes import die_at_half_load, fail_at_half_load, fake_result
from helpers import REPO, inline_executor

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


def _write_point_like(store: Store, record: dict[str, Any]) -> None:
    """A point file as an older dflab (or a hand copy) would have left it, without a summary
    table rebuilt."""
    atomic_write(store.points_dir / f"{record['hash']}.json", json.dumps(record).encode())


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(min_value=2**63, max_value=2**64 - 1))
def test_seeds_beyond_int64_are_stored_and_read(seed: int) -> None:
    # newcomer #4: the summary's seed column was Int64; a seed >= 2^63 poisoned the store.
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "res")
        _sweep(store, Counting(), expand(BASE, SweepSpec(seeds=[seed, 1], loads=[0.5])))
        table = pl.read_parquet(store.root / "summary.parquet")
        assert table.schema["seed"] == pl.UInt64
        assert sorted(table["seed"].to_list()) == [1, seed]
        assert pl.read_csv(store.root / "summary.csv")["seed"].to_list() == [1, seed]


def test_a_store_already_holding_a_big_seed_point_works(tmp_path: Path) -> None:
    # The poisoned store of newcomer #4: the point JSON is on disk, no summary could be made.
    store = Store(tmp_path / "res")
    big = 2**64 - 1
    _sweep(store, Counting(), expand(BASE, SweepSpec(seeds=[big], loads=[0.5])))
    (store.root / "summary.parquet").unlink()
    (store.root / "summary.csv").unlink()
    outcome = _sweep(store, Counting(), expand(BASE, SweepSpec(seeds=[big, 2], loads=[0.5])))
    assert (outcome.skipped, outcome.ran) == (1, 1)
    assert dflab.load_results(store.root)["seed"].to_list() == [2, big]


def test_a_changed_configuration_is_refused_naming_the_keys(tmp_path: Path) -> None:
    # newcomer #5: a rerun with another warm-up landed in the same store and was averaged.
    store = Store(tmp_path / "res")
    _sweep(store, Counting())
    changed = with_overrides(BASE, {"run.warmup_us": 7.0, "network.input_buffer_flits": 40})
    runner = Counting()
    with pytest.raises(UserError) as error:
        _sweep(store, runner, expand(changed, SPEC))
    message = error.value.message
    assert message.startswith("network.input_buffer_flits: 40 differs from 20 ")
    assert "also differ: run.warmup_us" in message and "another --out" in message
    assert runner.calls == [] and len(store.done_hashes()) == 6
    # The coordinates may grow: more loads, seeds, routings and patterns join the store.
    more = SweepSpec(routings=["MIN", "UGALn"], traffics=["ur", "adv+1"], loads=[0.9], seeds=[4])
    assert _sweep(store, Counting(), expand(BASE, more)).ran == 4
    # Routing parameters are compared per algorithm.
    tuned = with_overrides(BASE, {"routing.adaptive_threshold": 1.5})
    with pytest.raises(UserError, match=r"^routing\.adaptive_threshold: 1\.5 differs from 2"):
        _sweep(store, Counting(), expand(tuned, more))
    # ... and leave the other algorithms alone: MIN has no such parameter.
    assert _sweep(store, Counting(), expand(tuned, SweepSpec(loads=[0.3]))).ran == 1


def test_a_store_that_mixes_configurations_is_refused_when_read(tmp_path: Path) -> None:
    store = Store(tmp_path / "res")
    _sweep(store, Counting(), expand(BASE, SweepSpec(loads=[0.5])))
    (record,) = store.points()
    # The same coordinates with another measurement window, as an older dflab let happen.
    other = {**record, "hash": "f" * 16}
    other["config"] = {**record["config"], "run": {**record["config"]["run"], "measure_us": 9.0}}
    _write_point_like(store, other)
    with pytest.raises(UserError, match=r"^run\.measure_us: result store .* mixes points"):
        store.summary_frame()
    with pytest.raises(UserError, match="mixes points"):
        dflab.load_results(store.root)


@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_store_files_follow_the_umask(tmp_path: Path, umask: int) -> None:
    # newcomer #22: mkstemp made every store file 0600, unreadable for colleagues.
    old = os.umask(umask)
    try:
        store = Store(tmp_path / "res")
        _sweep(store, Counting())
    finally:
        os.umask(old)
    files = [path for path in store.root.rglob("*") if path.is_file()]
    # points, series, store.json, the journal, two summaries and two aggregates
    assert len(files) == 6 + 6 + 1 + 1 + 4
    assert {stat.S_IMODE(path.stat().st_mode) for path in files} == {0o666 & ~umask}


def test_an_unreadable_point_is_set_aside_and_rerun(tmp_path: Path, capsys) -> None:
    # newcomer #28: a truncated point JSON counted as done and blocked the sweep and plot.
    store = Store(tmp_path / "res")
    _sweep(store, Counting())
    victim = sorted(store.points_dir.glob("*.json"))[2]
    victim.write_bytes(victim.read_bytes()[:40])
    with pytest.raises(UserError, match=r"unreadable.*rerunning the sweep sets it aside"):
        store.summary_frame()

    again = Counting()
    outcome = _sweep(store, again)
    assert again.calls == [victim.stem] and outcome.skipped == 5
    (note,) = capsys.readouterr().err.strip().splitlines()
    assert note.startswith(f"note: result store file '{victim}' is unreadable (")
    assert note.endswith(f"moved to '{store.corrupt_dir / victim.name}', its point will be rerun")
    assert (store.corrupt_dir / victim.name).read_bytes() != victim.read_bytes()
    assert json.loads(victim.read_text())["status"] == "ok"
    assert dflab.load_results(store.root).height == 6


def test_results_record_the_dflab_and_engine_semantics_versions(tmp_path: Path) -> None:
    # newcomer #30
    store = Store(tmp_path / "res")
    _sweep(store, Counting())
    version = importlib.metadata.version("dflab")
    assert dflab.__version__ == version
    for record in store.points():
        assert (record["dflab_version"], record["engine_semantics"]) == (version, ENGINE_SEMANTICS)
    for table in (pl.read_parquet(store.root / "summary.parquet"),
                  pl.read_csv(store.root / "summary.csv")):  # fmt: skip
        assert table.columns[-2:] == ["dflab_version", "engine_semantics"]
        assert set(table["dflab_version"]) == {version}
        assert set(table["engine_semantics"]) == {ENGINE_SEMANTICS}


def test_load_results_is_the_summary_as_a_frame(tmp_path: Path) -> None:
    # newcomer #35
    store = Store(tmp_path / "res")
    _sweep(store, Counting())
    frame = dflab.load_results(str(store.root))
    assert frame.equals(pl.read_parquet(store.root / "summary.parquet"))
    assert frame.height == 6 and "latency_p99_ns" in frame.columns
    with pytest.raises(UserError, match=r"result directory '.*nowhere' not found"):
        dflab.load_results(tmp_path / "nowhere")
    with pytest.raises(UserError, match="not a result store"):
        dflab.load_results(tmp_path)
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert [req.split("==")[0] for req in extras["pandas"]] == ["pandas"]
    assert "==" in extras["pandas"][0]  # pinned, like every dependency


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (SweepSpec(routings=[]), "sweep.routings: empty list"),
        (SweepSpec(traffics=[]), "sweep.traffics: empty list"),
        (SweepSpec(loads=[]), "sweep.loads: empty list"),
        (SweepSpec(seeds=[]), "sweep.seeds: empty list"),
        (SweepSpec(seeds=list(range(1001)), loads=[0.1] * 101), r"sweep: 101101 points .* at most"),
    ],
)
def test_sweep_lists_are_checked_before_expanding(spec: SweepSpec, message: str) -> None:
    # newcomer #20: an empty list fell back to the experiment's own value.
    with pytest.raises(UserError, match=message):
        expand(BASE, spec)


def test_default_jobs_follow_the_cpu_affinity(monkeypatch) -> None:
    # newcomer #25: os.cpu_count() ignores taskset and batch allocations.
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3}, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    assert default_jobs() == 1


def test_an_ignored_sigint_stays_ignored_during_a_sweep() -> None:
    # `dflab sweep ... &` in a script starts with SIGINT ignored: a Ctrl-C meant for the
    # foreground job must not stop it (the other signal is still noted).
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    term = signal.getsignal(signal.SIGTERM)
    try:
        with _Signals().installed() as signals:
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
            assert signals.signum is None
            assert signal.getsignal(signal.SIGTERM) == signals._note
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)
            assert signals.signum == signal.SIGTERM
        assert signal.getsignal(signal.SIGTERM) == term
    finally:
        signal.signal(signal.SIGINT, previous)


def test_series_probes_are_stored_as_series_columns(tmp_path: Path) -> None:
    # The engine's per-window probes (run.decision_probes) go to the point's series, one
    # `probe_<name>` column each; totals and per-router probes go to its record.
    def runner(config_json: str) -> dict[str, Any]:
        result = fake_result(config_json)
        result["probes"] = {
            "totals": {"blocked": 5},
            "per_router": {},
            "series": {"min_path_packets": [4, 6], "too_short": [1]},
        }
        return result

    store = Store(tmp_path / "s")
    points = expand(BASE, SweepSpec(routings=["UGAL-L"], loads=[0.3]))
    _sweep(store, runner, points)
    [record] = store.points()
    assert record["probes"] == {"totals": {"blocked": 5}}
    series = store.series(record["hash"])
    assert series["probe_min_path_packets"].to_list() == [4, 6]
    assert "probe_too_short" not in series.columns  # not one value per window: left out


def test_routing_parameters_are_compared_per_value_of_a_swept_routing_key() -> None:
    # PB's `reevaluate` has no effect with recomputation, and the canonical form writes it at
    # its older value there: a sweep of routing.recompute over PB (acor-fig5) holds points
    # whose `reevaluate` differs only for that reason, one configuration all the same.
    from dflab import store_config

    def pb(recompute: bool, **extra: Any) -> dict[str, Any]:
        routing = {"algorithm": "PB", "recompute": recompute, **extra}
        return validate(Experiment, {"preset": "acor-1056", "routing": routing}).canonical()

    points = [pb(True), pb(False)]
    assert store_config.first_conflict(points, axes=["routing.recompute"]) == []
    # Not swept, the recompute values themselves differ.
    assert store_config.first_conflict(points)[0][0] == "routing.recompute"
    # Among the points of one recompute value, reevaluate is still compared.
    mixed = [pb(True), pb(False), pb(False, reevaluate=False)]
    found = store_config.first_conflict(mixed, axes=["routing.recompute"])
    assert [key for key, _, _ in found] == ["routing.reevaluate"]
