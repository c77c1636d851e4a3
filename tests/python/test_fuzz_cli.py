"""Fuzzing the CLI (issue 24, deliverable 6): `dflab run FILE [--set ...] --json` with valid and
mutated experiments, `--set` overrides and corrupted files (see fuzz_cases.py), each a tiny run.

Every case must end in exit 0 with one JSON object on stdout, or exit 2 with exactly one
`error:` line that names a field, an option or the file; never a traceback, a panic, a signal,
another exit code or a hang. The number of cases is fixed (CASES) and hypothesis is
derandomized, so every CI run tries the same cases; DFLAB_FUZZ_SEED=<n> explores others.
The count, the time and the excluded input classes are printed at the end of the module.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import shlex
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, seed, settings

from fuzz_cases import EXCLUDED, Case, byte_cases, mutated_cases, set_cases, valid_cases
from helpers import REPO, requires_engine

pytestmark = requires_engine

CASES = {"valid": 50, "mutated": 45, "set": 40, "bytes": 15}
TIMEOUT_S = 20.0  # a case runs in milliseconds; this is a hang
# Exploring beyond CI: DFLAB_FUZZ_SEED=7 DFLAB_FUZZ_CASES=2000 pytest tests/python/test_fuzz_cli.py
SEED = os.environ.get("DFLAB_FUZZ_SEED")
SCALE = int(os.environ.get("DFLAB_FUZZ_CASES", "0"))


def _settings(kind: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    configured = settings(
        max_examples=SCALE or CASES[kind],
        deadline=None,
        derandomize=SEED is None,
        database=None,
        # Not filter_too_much: if the excluded classes took most cases, the test should say so.
        suppress_health_check=[HealthCheck.too_slow],
    )
    return configured if SEED is None else lambda test: configured(seed(int(SEED))(test))


@dataclass
class Outcome:
    rc: int | None = None
    stdout: str = ""
    stderr: str = ""
    log: str = ""  # what native code wrote (a Rust panic message lands here)
    hung: bool = False
    died: int | None = None  # the server's exit status when the case killed it


class Server:
    """The fuzz_server.py process, restarted after a case that kills or hangs it."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.log_path = workdir / "server.log"
        self.proc: subprocess.Popen[str] | None = None
        self.log_offset = 0

    def _start(self) -> subprocess.Popen[str]:
        env = {k: v for k, v in os.environ.items() if k != "RUST_BACKTRACE"}
        env["PYTHONPATH"] = os.pathsep.join(
            filter(None, [str(REPO / "python"), env.get("PYTHONPATH")])
        )
        script = Path(__file__).with_name("fuzz_server.py")
        with open(self.log_path, "a", encoding="utf-8") as log:
            return subprocess.Popen(
                [sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=log, text=True, encoding="utf-8", cwd=self.workdir, env=env,
            )  # fmt: skip

    def _new_log(self) -> str:
        with open(self.log_path, "rb") as log:
            log.seek(self.log_offset)
            data = log.read()
        self.log_offset += len(data)
        return data.decode("utf-8", "replace")

    def ask(self, argv: list[str], timeout: float = TIMEOUT_S) -> Outcome:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = self._start()
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"argv": argv, "cwd": str(self.workdir)}) + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if ready else None
        if line:
            return Outcome(**json.loads(line), log=self._new_log())
        outcome = Outcome(hung=line is None)
        self.proc.kill()
        outcome.died = None if outcome.hung else self.proc.wait()
        self.proc.wait()
        self.proc = None
        outcome.log = self._new_log()
        return outcome

    def close(self) -> None:
        if self.proc is not None and self.proc.stdin is not None:
            self.proc.stdin.close()  # the server ends at the end of its input
            self.proc.wait(timeout=10)


# An error line names a config field (topology.p, traffic.phases.0.load, seed, ...), an option
# (--set, --load) or the experiment file.
_PART = r"\.(?:[\w\[\]]+|\"[^\"]*\")"
_FIELD = re.compile(
    rf"\b(?:topology|network|routing|traffic|run|sweep)(?:(?:{_PART})+|(?:{_PART})*:)"
    r"|\b(?:seed|name|preset)\b|--[a-z][\w-]*"
)


def verdict(outcome: Outcome, path: Path) -> str | None:
    """What is wrong with a case's outcome, or None."""
    if outcome.hung:
        return "hang (no answer in time)"
    if outcome.died is not None:
        return f"the process died (status {outcome.died})"
    if "panicked" in outcome.log or "PanicException" in outcome.stderr:
        return "panic"
    if outcome.rc is None or "Traceback" in outcome.stderr:
        return "traceback"
    if outcome.rc not in (0, 2):
        return f"exit {outcome.rc}"
    if outcome.rc == 0:
        try:
            summary = json.loads(outcome.stdout)
        except ValueError:
            return "exit 0 without a JSON object on stdout"
        return None if isinstance(summary, dict) and "accepted_load" in summary else "bad JSON"
    lines = outcome.stderr.strip().splitlines()
    if len(lines) != 1 or not lines[0].startswith("error: ") or outcome.stdout:
        return "exit 2 without exactly one 'error:' line (or with output)"
    if path.name not in lines[0] and not _FIELD.search(lines[0]):
        return "the error line names no field, option or file"
    return None


@dataclass
class Stats:
    started: float
    cases: Counter[str]
    outcomes: Counter[str]
    excluded: Counter[str]


@pytest.fixture(scope="module")
def fuzz(
    tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config
) -> Iterator[tuple[Server, Stats]]:
    workdir = tmp_path_factory.mktemp("fuzz")
    server = Server(workdir)
    stats = Stats(time.monotonic(), Counter(), Counter(), Counter())
    yield server, stats
    server.close()
    _report(stats, pytestconfig)


def _report(stats: Stats, config: pytest.Config) -> None:
    seconds = time.monotonic() - stats.started
    total = sum(stats.cases.values())
    lines = [
        f"CLI fuzz: {total} cases in {seconds:.1f} s ({dict(stats.cases)}); "
        f"outcomes {dict(stats.outcomes)}",
        f"CLI fuzz: left out (known classes, not run): {dict(stats.excluded) or 'none drawn'}",
    ]
    # Shown without -s too: written with pytest's capture suspended.
    capture = config.pluginmanager.get_plugin("capturemanager")
    with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
        print("\n" + "\n".join(lines), file=sys.stderr, flush=True)


def _check(fuzz: tuple[Server, Stats], case: Case) -> None:
    server, stats = fuzz
    klass = case.excluded()
    if klass is not None:
        stats.excluded[klass] += 1
        assume(False)
    path = server.workdir / f"{case.kind}-{sum(stats.cases.values()):04d}.toml"
    path.write_bytes(case.toml if isinstance(case.toml, bytes) else case.toml.encode())
    argv = ["run", path.name, *case.args, "--json"]
    outcome = server.ask(argv)
    stats.cases[case.kind] += 1
    stats.outcomes[f"exit {outcome.rc}" if outcome.rc in (0, 2) else "other"] += 1
    problem = verdict(outcome, path)
    assert problem is None, (
        f"{problem}\n  command: cd {server.workdir} && dflab {shlex.join(argv)}\n"
        f"  file:\n{path.read_text('utf-8', 'replace')}\n  stdout: {outcome.stdout[-400:]}\n"
        f"  stderr: {outcome.stderr[-1500:]}\n  log: {outcome.log[-1500:]}"
    )


@_settings("valid")
@given(case=valid_cases())
def test_valid_experiments(fuzz: tuple[Server, Stats], case: Case) -> None:
    _check(fuzz, case)


@_settings("mutated")
@given(case=mutated_cases())
def test_mutated_experiments(fuzz: tuple[Server, Stats], case: Case) -> None:
    _check(fuzz, case)


@_settings("set")
@given(case=set_cases())
def test_set_overrides_and_flags(fuzz: tuple[Server, Stats], case: Case) -> None:
    _check(fuzz, case)


@_settings("bytes")
@given(case=byte_cases())
def test_corrupted_files(fuzz: tuple[Server, Stats], case: Case) -> None:
    _check(fuzz, case)


def test_excluded_classes_are_named() -> None:
    """Every class the fuzz test leaves out says why (the defect it waits for)."""
    assert all(re.match(r"(#\d+|budget|by design)", why) for why in EXCLUDED.values())


# ---- The harness itself ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("outcome", "problem"),
    [
        (Outcome(rc=0, stdout='{"accepted_load": 0.5}'), None),
        (Outcome(rc=2, stderr="error: topology.p: 0 is out of range\n"), None),
        (Outcome(rc=2, stderr="error: x.toml: invalid TOML\n"), None),
        (Outcome(rc=2, stderr='error: topology."": unknown key\n'), None),
        (Outcome(rc=None, stderr="Traceback (most recent call last):\n"), "traceback"),
        (Outcome(rc=2, stderr="error: a\nerror: b\n"), "exit 2 without exactly one"),
        (Outcome(rc=2, stderr="error: something failed\n"), "names no field"),
        (Outcome(rc=1, stderr="error: deadlock\n"), "exit 1"),
        (Outcome(rc=0, stdout="not json"), "without a JSON object"),
        (Outcome(rc=None, log="thread 'main' panicked at src/x.rs"), "panic"),
        (Outcome(died=-6), "died"),
        (Outcome(hung=True), "hang"),
    ],
)
def test_verdict(outcome: Outcome, problem: str | None) -> None:
    found = verdict(outcome, Path("x.toml"))
    assert found == problem if problem is None else problem in (found or "")


def test_a_hung_case_is_reported_and_the_server_replaced(tmp_path: Path) -> None:
    server = Server(tmp_path)
    try:
        long_run = ["run", "--preset", "qadaptive-1056", "--measure-us", "100000", "--json"]
        assert (
            verdict(server.ask(long_run, timeout=2.0), Path("x.toml")) == "hang (no answer in time)"
        )
        again = server.ask(["run", "--set", "topology.p=0"])
        assert again.rc == 2 and "topology.p" in again.stderr
    finally:
        server.close()


def test_error_names_a_key_that_is_not_bare_quoted(tmp_path: Path) -> None:
    """Found by the fuzz test: an empty key showed as 'topology.: unknown key'."""
    server = Server(tmp_path)
    try:
        (tmp_path / "e.toml").write_text('[topology]\n"" = 0\n"load " = 1\n')
        outcome = server.ask(["run", "e.toml"])
        assert outcome.stderr.startswith('error: topology."": unknown key'), outcome.stderr
    finally:
        server.close()
