"""The result store under load and abuse: O(1) work per finished point, an append-only journal,
concurrent writers, `kill -9` of the writer at any moment, and stores made before the journal."""

from __future__ import annotations

import itertools
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

import dflab
from dflab.config import Experiment
from dflab.loading import SweepSpec, validate
from dflab.store import Store
from dflab.sweep import expand, run_sweep
from fakes import fake_result
from helpers import REPO, inline_executor, requires_engine, run_cli

BASE = validate(Experiment, {"name": "j", "topology": {"p": 2, "a": 4, "h": 2}})
SPEC = SweepSpec(routings=["MIN", "VALn"], loads=[0.2, 0.5, 0.8], seeds=[1, 2])


def _env() -> dict[str, str]:
    env = dict(os.environ)
    paths = [str(REPO / "python"), str(REPO / "tests" / "python"), env.get("PYTHONPATH")]
    env["PYTHONPATH"] = os.pathsep.join(filter(None, paths))
    return env


def test_finishing_a_point_appends_and_rewrites_no_table(tmp_path: Path, monkeypatch) -> None:
    store = Store(tmp_path / "res")
    written: list[int] = []
    real = Store.write_summary

    def counting(self: Store) -> pl.DataFrame:
        written.append(len(self.done_hashes()))
        return real(self)

    monkeypatch.setattr(Store, "write_summary", counting)
    sizes: list[int] = []

    def runner(config_json: str) -> dict:
        sizes.append(store.journal.stat().st_size if store.journal.exists() else 0)
        return fake_result(config_json)

    points = expand(BASE, SPEC)
    run_sweep(points, store, jobs=1, runner=runner, executor_factory=inline_executor)
    # The tables once, at the end; meanwhile the journal grew by one line per point.
    assert written == [12]
    assert sizes[0] == 0 and all(b > a for a, b in itertools.pairwise(sizes))
    lines = store.journal.read_text().splitlines()
    assert len(lines) == 12
    assert {json.loads(line)["record"]["hash"] for line in lines} == {p.key for p in points}


def test_saving_a_point_reads_no_directory_and_no_other_point(tmp_path: Path, monkeypatch) -> None:
    """O(1) per point: once the store exists, saving lists no directory and opens no file but
    its own (the journal is appended to, never read)."""
    store = Store(tmp_path / "res")
    points = expand(BASE, SPEC)
    run_sweep(points[:6], store, jobs=1, runner=fake_result, executor_factory=inline_executor)
    records = store.points()
    fresh = Store(store.root)
    fresh.create()

    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"listed a directory: {args}")

    opened: list[str] = []
    real_open = os.open

    def tracking_open(path: object, *args: object, **kwargs: object) -> int:
        opened.append(os.path.basename(str(path)))
        return real_open(path, *args, **kwargs)

    for name in ("listdir", "scandir"):
        monkeypatch.setattr(os, name, forbidden)
    monkeypatch.setattr(Path, "glob", forbidden)
    monkeypatch.setattr(os, "open", tracking_open)
    record = {**records[0], "hash": "0" * 16}
    fresh.save_point(record, pl.DataFrame({"a": [1.0]}))
    monkeypatch.undo()
    assert all(
        name.endswith(".tmp") or name in ("points", "series", "journal.jsonl") for name in opened
    ), opened
    assert len(store.points()) == 7


def test_temporary_files_of_killed_writers_are_removed(tmp_path: Path) -> None:
    store = Store(tmp_path / "res")
    run_sweep(
        expand(BASE, SweepSpec()),
        store,
        jobs=1,
        runner=fake_result,
        executor_factory=inline_executor,
    )
    stale = store.points_dir / ".0123456789abcdef.json.a1b2c3.tmp"
    fresh = store.series_dir / ".0123456789abcdef.parquet.d4e5f6.tmp"
    for path in (stale, fresh):
        path.write_bytes(b"half")
    os.utime(stale, (time.time() - 7200, time.time() - 7200))
    run_sweep(
        expand(BASE, SweepSpec()),
        store,
        jobs=1,
        runner=fake_result,
        executor_factory=inline_executor,
    )
    assert not stale.exists() and fresh.exists()  # a live writer's may be younger than an hour


def test_the_journal_is_an_index_the_point_files_are_the_truth(tmp_path: Path) -> None:
    store = Store(tmp_path / "res")
    points = expand(BASE, SPEC)
    run_sweep(points, store, jobs=1, runner=fake_result, executor_factory=inline_executor)
    reference = dflab.load_results(store.root)
    # A journal cut in the middle of a line, then appended to: only that line is lost, and
    # its point is read from its file.
    data = store.journal.read_bytes()
    store.journal.write_bytes(data[: len(data) - 100])
    assert dflab.load_results(store.root).equals(reference)
    # A point file replaced since its journal line (another writer, a hand edit): the file wins.
    victim = store.points_dir / f"{points[0].key}.json"
    record = json.loads(victim.read_text())
    record["summary"]["hops_mean"] = 9.5
    victim.write_text(json.dumps(record))
    frame = dflab.load_results(store.root)
    assert frame.filter(pl.col("hash") == points[0].key)["hops_mean"].to_list() == [9.5]
    # No journal at all (a store made before it): the same table, from the files.
    store.journal.unlink()
    assert dflab.load_results(store.root).equals(frame)
    # ... and the next sweep appends to a new journal, ending a cut line first.
    store.journal.write_bytes(b'{"cut short')
    more = expand(BASE, SweepSpec(loads=[0.3]))
    run_sweep(more, store, jobs=1, runner=fake_result, executor_factory=inline_executor)
    lines = store.journal.read_bytes().split(b"\n")
    assert lines[0] == b'{"cut short' and json.loads(lines[1])["record"]["hash"] == more[0].key
    assert dflab.load_results(store.root).height == 13


def test_a_store_of_an_older_dflab_still_loads(tmp_path: Path) -> None:
    """A store as dflab wrote it before the journal: points/, series/, summary tables."""
    store = Store(tmp_path / "res")
    points = expand(BASE, SPEC)
    run_sweep(points, store, jobs=1, runner=fake_result, executor_factory=inline_executor)
    for name in ("journal.jsonl", "aggregate.csv", "aggregate.parquet"):
        (store.root / name).unlink()
    old = pl.read_parquet(store.root / "summary.parquet")
    assert dflab.load_results(store.root).equals(old)
    outcome = run_sweep(points, store, jobs=1, runner=fake_result, executor_factory=inline_executor)
    assert (outcome.skipped, outcome.ran) == (12, 0)
    assert pl.read_parquet(store.root / "summary.parquet").equals(old)


_WRITER = """
import sys
from dflab.config import Experiment
from dflab.loading import SweepSpec, validate
from dflab.store import Store
from dflab.sweep import expand, run_sweep
from fakes import fake_result
from helpers import inline_executor

base = validate(Experiment, {"name": "j", "topology": {"p": 2, "a": 4, "h": 2}})
loads = [round(0.05 * k, 2) for k in range(1, 21)]
points = expand(base, SweepSpec(routings=["MIN", "VALn"], loads=loads, seeds=[1, 2, 3]))
order = sys.argv[2]
if order == "reversed":
    points.reverse()
run_sweep(points, Store(sys.argv[1]), jobs=1, runner=fake_result, executor_factory=inline_executor)
"""


def _writer(root: Path, order: str = "forward") -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(root), order],
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def test_two_processes_writing_one_store_lose_and_duplicate_nothing(tmp_path: Path) -> None:
    root = tmp_path / "res"
    writers = [_writer(root, "forward"), _writer(root, "reversed")]
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err.decode()
    frame = dflab.load_results(root)
    assert frame.height == 120 and frame["hash"].n_unique() == 120
    # Every journal line is whole (a point both finished has two lines, one row). A writer that
    # saw the other's line half written ends it with a newline of its own: a blank line.
    lines = [line for line in (root / "journal.jsonl").read_text().splitlines() if line]
    assert {json.loads(line)["record"]["hash"] for line in lines} == set(frame["hash"])
    assert 120 <= len(lines) <= 240


def test_a_writer_killed_at_any_moment_leaves_a_readable_store(tmp_path: Path) -> None:
    """`kill -9` of a writing process at random moments, again and again: whatever it saved is
    whole, and the next run completes the store without duplicates."""
    root = tmp_path / "res"
    rng = random.Random(20)
    for _ in range(6):
        writer = _writer(root)
        time.sleep(rng.uniform(0.6, 2.0))
        writer.send_signal(signal.SIGKILL)
        writer.communicate(timeout=30)
        if (root / "points").is_dir():
            dflab.load_results(root)  # readable, whatever the moment
    final = _writer(root)
    _, err = final.communicate(timeout=120)
    assert final.returncode == 0, err.decode()
    frame = dflab.load_results(root)
    assert frame.height == 120 and frame["hash"].n_unique() == 120
    assert pl.read_parquet(root / "summary.parquet").equals(frame)


SWEEP_TOML = """\
name = "killed"
seed = 1

[topology]
p = 2
a = 4
h = 2
g = 9

[routing]
algorithm = "UGALn"

[run]
warmup_us = 2.0
measure_us = 10.0

[sweep]
routings = ["MIN", "UGALn"]
loads = [0.1, 0.3, 0.5]
"network.global_latency_ns" = [100, 300]
seeds = 2
"""


@requires_engine
@pytest.mark.parametrize("kills", [1, 3])
def test_kill_9_of_the_sweep_then_resume_equals_a_clean_run(tmp_path: Path, kills: int) -> None:
    """`dflab sweep` SIGKILLed mid-sweep (`kills` times, after more and more points), then
    rerun: the store ends with the clean run's points, hashes and summary bytes."""
    (tmp_path / "exp.toml").write_text(SWEEP_TOML)
    clean = run_cli("sweep", "exp.toml", "--jobs", "2", "--out", "clean", cwd=tmp_path)
    assert clean.returncode == 0, clean.stderr
    killed = tmp_path / "killed"
    for kill in range(kills):
        proc = subprocess.Popen(
            [sys.executable, "-m", "dflab", "sweep", "exp.toml", "--jobs", "2", "--out", "killed"],
            cwd=tmp_path,
            env=_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wanted = 3 * (kill + 1)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            done = len(list((killed / "points").glob("*.json"))) if killed.exists() else 0
            if done >= wanted:
                break
            time.sleep(0.02)
        assert proc.poll() is None, "the sweep ended before it could be killed"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        saved = len(list((killed / "points").glob("*.json")))
        assert wanted <= saved < 24
    resumed = run_cli("sweep", "exp.toml", "--jobs", "2", "--out", "killed", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert "points were already done (resumed)" in resumed.stderr
    clean_dir = tmp_path / "clean"
    for name in ("summary.csv", "summary.parquet", "aggregate.csv", "aggregate.parquet"):
        assert (killed / name).read_bytes() == (clean_dir / name).read_bytes(), name
    hashes = sorted(path.stem for path in (clean_dir / "points").glob("*.json"))
    assert sorted(path.stem for path in (killed / "points").glob("*.json")) == hashes
    assert sorted(path.stem for path in (killed / "series").glob("*.parquet")) == hashes
    assert len(hashes) == 24
    for key in hashes:
        series = pl.read_parquet(killed / "series" / f"{key}.parquet")
        assert series.equals(pl.read_parquet(clean_dir / "series" / f"{key}.parquet"))
    # No point twice in the journal (a point saved just before a kill may lack its line, or
    # have it cut short: it is then read from its file).
    keys, cut = [], 0
    for line in (killed / "journal.jsonl").read_text().splitlines():
        if not line:
            continue
        try:
            keys.append(json.loads(line)["record"]["hash"])
        except ValueError:
            cut += 1
    assert len(keys) == len(set(keys)) and set(keys) <= set(hashes) and cut <= kills
