"""`dflab sweep` through the real CLI: interrupts, progress lines, store directories, versions.

The interrupt tests start a real sweep in its own session (process group), wait until some
points are saved while others run, signal it the way a terminal (Ctrl-C: SIGINT to the whole
foreground group) or a scheduler (`kill -TERM` of the parent) would, and check how fast it
stops, what it says, what it saved, that a rerun resumes, and that no process is left.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import polars as pl
import pytest

from helpers import REPO, TINY_TOML, assert_user_error, requires_engine, run_cli

# Two near-idle points that end in well under a second, then two saturated ones that would
# run for many seconds: an interrupt always finds the first saved and the others running.
INTERRUPT_TOML = """\
name = "interrupt"
seed = 1

[topology]
p = 2
a = 4
h = 2
g = 9

[run]
warmup_us = 1.0
measure_us = 20000.0

[sweep]
loads = [0.001, 0.002, 0.9, 0.95]
"""
STOP_WITHIN_S = 3.0


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "python"), env.get("PYTHONPATH")]))
    return env


def _start_sweep(tmp_path: Path, *args: str) -> tuple[subprocess.Popen[bytes], Path]:
    """`dflab sweep` in a new session (its pid is its process group), stderr to a file."""
    (tmp_path / "exp.toml").write_text(INTERRUPT_TOML)
    log = tmp_path / "stderr.txt"
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "dflab", "sweep", "exp.toml", "--jobs", "2", *args],
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=_env(),
            start_new_session=True,
        )
    return proc, log


@contextlib.contextmanager
def _sigint_deliverable() -> Iterator[None]:
    """A terminal's Ctrl-C reaches a sweep whose SIGINT is not ignored. A suite started in the
    background (`cmd &` in a script, nohup) ignores SIGINT, an ignored signal is inherited
    across exec, and dflab keeps an ignored SIGINT ignored (by design, `sweep._Signals`):
    whether the sweep saw Ctrl-C then depended on whether this process had a C-level SIGINT
    handler of its own (polars installs one on import), which a child does not inherit. So
    this process handles SIGINT while the sweep starts, and the sweep starts with the
    default."""
    previous = signal.getsignal(signal.SIGINT)
    if previous is not signal.SIG_IGN:
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.fixture
def start_sweep(tmp_path: Path) -> Iterator[Callable[[], tuple[subprocess.Popen[bytes], Path]]]:
    """Starts the interrupt sweep; whatever a failed test left of it is killed afterwards."""
    started: list[subprocess.Popen[bytes]] = []

    def start() -> tuple[subprocess.Popen[bytes], Path]:
        with _sigint_deliverable():
            proc, log = _start_sweep(tmp_path)
        started.append(proc)
        return proc, log

    yield start
    for proc in started:
        for pid in _group(proc.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        proc.wait(timeout=30)


def _group(pgid: int) -> list[int]:
    """Processes still in the process group `pgid` (from /proc)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rpartition(")")[2].split()[2]) == pgid:
            members.append(int(entry.name))
    return members


def _wait_for(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def _progress_lines(log: Path) -> list[str]:
    return [line for line in log.read_text().splitlines() if line.startswith("point ")]


def _no_group_left(pgid: int) -> list[int]:
    # The multiprocessing resource tracker leaves when the parent's pipe closes: allow a moment.
    _wait_for(lambda: not _group(pgid), 3.0)
    return _group(pgid)


@requires_engine
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
@pytest.mark.parametrize(
    ("signum", "to_group"),
    [(signal.SIGINT, True), (signal.SIGTERM, False), (signal.SIGTERM, True)],
    ids=["ctrl-c-to-the-group", "sigterm-to-the-parent", "sigterm-to-the-group"],
)
def test_interrupted_sweep_ends_its_workers_and_keeps_finished_points(
    tmp_path: Path, start_sweep, signum: int, to_group: bool
) -> None:
    # newcomer #10 (SIGTERM orphaned the workers, results lost) and #16 (Ctrl-C: no message,
    # worker tracebacks).
    proc, log = start_sweep()
    points = tmp_path / "results" / "interrupt" / "points"
    saved = lambda: len(list(points.glob("*.json"))) if points.is_dir() else 0  # noqa: E731
    assert _wait_for(lambda: saved() == 2, 60), log.read_text()
    # Each point's progress line comes right after its point is saved.
    _wait_for(lambda: len(_progress_lines(log)) == 2, 5)
    progress_before = _progress_lines(log)
    workers = [pid for pid in _group(proc.pid) if pid != proc.pid]
    assert len(workers) >= 2  # the two long points (and the resource tracker)

    started = time.monotonic()
    (os.killpg if to_group else os.kill)(proc.pid, signum)
    code = proc.wait(timeout=30)
    took = time.monotonic() - started
    print(f"\n{signal.Signals(signum).name}: stopped in {took:.2f} s, exit {code}")
    assert took < STOP_WITHIN_S
    assert code == 128 + signum
    assert _no_group_left(proc.pid) == []
    # Per-point progress lines reached a non-terminal stderr while the sweep ran (#9).
    assert len(progress_before) == 2
    assert all(" done (MIN ur load 0.00" in line for line in progress_before)
    err = log.read_text()
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    last = err.strip().splitlines()[-1]
    name = signal.Signals(signum).name
    print(last)
    assert last == (
        f"error: interrupted ({name}); 2 of 4 points saved; rerun the same command to resume"
    )

    store = tmp_path / "results" / "interrupt"
    assert saved() == 2 and not list(store.rglob("*.tmp"))
    for path in points.glob("*.json"):
        assert json.loads(path.read_text())["status"] == "ok"
    assert pl.read_parquet(store / "summary.parquet")["load"].to_list() == [0.001, 0.002]
    # Resumable: the rerun keeps the saved points and runs only what is missing.
    rerun = run_cli("sweep", "exp.toml", "--loads", "0.001,0.002,0.003", cwd=tmp_path)
    assert rerun.returncode == 0, rerun.stderr
    assert "2 points were already done (resumed)" in rerun.stderr
    assert pl.read_parquet(store / "summary.parquet").height == 3


@requires_engine
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_workers_do_not_outlive_a_parent_killed_outright(tmp_path: Path, start_sweep) -> None:
    # SIGKILL cannot be handled: the kernel ends the workers (PR_SET_PDEATHSIG), which would
    # otherwise compute their points for minutes with nobody to read them.
    proc, _ = start_sweep()
    points = tmp_path / "results" / "interrupt" / "points"
    assert _wait_for(lambda: points.is_dir() and len(list(points.glob("*.json"))) == 2, 60)
    assert len(_group(proc.pid)) >= 3
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait(timeout=30) == -signal.SIGKILL
    assert _no_group_left(proc.pid) == []


@requires_engine
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_ctrl_c_while_workers_start_prints_one_line_and_no_traceback(start_sweep) -> None:
    proc, log = start_sweep()
    assert _wait_for(lambda: log.read_text().startswith("sweep: "), 60)
    assert _wait_for(lambda: len(_group(proc.pid)) >= 3, 10)  # workers are being spawned
    os.killpg(proc.pid, signal.SIGINT)
    assert proc.wait(timeout=30) == 130
    assert _no_group_left(proc.pid) == []
    lines = log.read_text().strip().splitlines()
    assert lines[-1].startswith("error: interrupted (SIGINT); ")
    assert not [line for line in lines if "Traceback" in line or "KeyboardInterrupt" in line]


@requires_engine
def test_progress_lines_per_point_when_stderr_is_not_a_terminal(tmp_path: Path) -> None:
    # newcomer #9: in a batch log the sweep printed its progress only once, at the end.
    (tmp_path / "tiny.toml").write_text(TINY_TOML)
    proc = run_cli("sweep", "tiny.toml", "--loads", "0.2,0.3", "--jobs", "1", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("point ")]
    assert len(lines) == 2
    assert lines[0].startswith("point 1/2 done (MIN ur load 0.2 seed 3) in ")
    assert lines[0].endswith(" s") and "; ETA " in lines[0]
    assert lines[1].startswith("point 2/2 done (MIN ur load 0.3 seed 3) in ")
    assert "ETA" not in lines[1]
    assert "sweep: 2 points, 1 job, results in results/tiny" in proc.stderr


@requires_engine
def test_a_rerun_with_another_configuration_is_refused(tmp_path: Path) -> None:
    # newcomer #5, the "tweak and rerun" workflow into the default --out.
    (tmp_path / "tiny.toml").write_text(TINY_TOML)
    assert run_cli("sweep", "tiny.toml", cwd=tmp_path).returncode == 0
    proc = run_cli("sweep", "tiny.toml", "--set", "run.warmup_us=1", cwd=tmp_path)
    assert_user_error(proc, "run.warmup_us: 1.0 differs from 2.0", "results/tiny", "another --out")
    proc = run_cli(
        "sweep", "tiny.toml", "--set", "run.warmup_us=1", "--out", "results/w1", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr


@requires_engine
@pytest.mark.parametrize(
    ("name", "directory"),
    [("../../x", "results/.._.._x"), ("/abs/dir", "results/_abs_dir"),
     ("UR/ADV comparison", "results/UR_ADV comparison")],
)  # fmt: skip
def test_experiment_names_become_one_directory(tmp_path: Path, name: str, directory: str) -> None:
    # newcomer #21: the name was used as a path (parent, absolute and nested directories).
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    (work / "tiny.toml").write_text(TINY_TOML.replace('name = "tiny"', f"name = {name!r}"))
    proc = run_cli("sweep", "tiny.toml", cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert [p.name for p in (work / "results").iterdir()] == [Path(directory).name]
    assert (work / directory / "summary.csv").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]


@pytest.mark.parametrize("name", ["..", " . ", "..."])
def test_a_name_that_cannot_be_a_directory_is_refused(tmp_path: Path, name: str) -> None:
    (tmp_path / "tiny.toml").write_text(TINY_TOML.replace('name = "tiny"', f"name = {name!r}"))
    assert_user_error(run_cli("sweep", "tiny.toml", cwd=tmp_path), "name: ", "--out")


def test_an_out_directory_under_a_file_is_refused(tmp_path: Path) -> None:
    # newcomer #7 (sweep part): a NotADirectoryError traceback.
    (tmp_path / "notes.md").write_text("x")
    (tmp_path / "tiny.toml").write_text(TINY_TOML)
    proc = run_cli("sweep", "tiny.toml", "--out", "notes.md/x", cwd=tmp_path)
    line = assert_user_error(proc)
    assert line == "error: --out 'notes.md/x': not a directory ('notes.md' is a file)"


@requires_engine
def test_a_bad_pattern_in_a_sweep_list_names_its_entry(tmp_path: Path) -> None:
    # newcomer #20: the error named traffic.pattern, not the sweep list's entry.
    proc = run_cli("sweep", "--preset", "qadaptive-1056", "--traffics", "ur,adv+99", cwd=tmp_path)
    assert_user_error(proc, "sweep.traffics.1: ", "adv+99")


@requires_engine
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs CPU affinity")
def test_jobs_default_to_the_cpus_this_process_may_use(tmp_path: Path) -> None:
    # newcomer #25: `taskset -c 0 dflab sweep` ran os.cpu_count() jobs.
    (tmp_path / "tiny.toml").write_text(TINY_TOML)
    one_cpu = sorted(os.sched_getaffinity(0))[:1]
    proc = subprocess.run(
        [sys.executable, "-m", "dflab", "sweep", "tiny.toml"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: os.sched_setaffinity(0, one_cpu),
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "sweep: 1 points, 1 job, results in" in proc.stderr


def test_version_flag_names_dflab_and_the_engine_semantics() -> None:
    # newcomer #30
    import importlib.metadata

    from dflab.config import ENGINE_SEMANTICS

    proc = run_cli("--version")
    assert proc.returncode == 0, proc.stderr
    line = proc.stdout.strip()
    assert line.startswith(f"dflab {importlib.metadata.version('dflab')}, ")
    assert line.endswith(f"engine semantics {ENGINE_SEMANTICS}") or "engine not built" in line
