"""Test helpers: the CLI in a subprocess, tiny experiments, engine availability, executors,
the experiment scripts as modules."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from concurrent.futures import Executor, Future
from pathlib import Path
from typing import Any

import pytest

from dflab import engine

REPO = Path(__file__).resolve().parents[2]


def load_experiment(relative: str, name: str) -> Any:
    """The experiment script at `relative` (from the repository root) as a module `name`."""
    spec = importlib.util.spec_from_file_location(name, REPO / relative)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Tests that need the compiled engine are skipped only when `_core.simulate` is missing.
requires_engine = pytest.mark.skipif(
    not engine.has("simulate"), reason="dflab._core.simulate is not available (engine not built)"
)

# dfly(2,4,2,9): 36 nodes, a run takes milliseconds.
TINY_TOML = """\
name = "tiny"
seed = 3

[topology]
p = 2
a = 4
h = 2
g = 9

[traffic]
pattern = "ur"
load = 0.3

[run]
warmup_us = 2.0
measure_us = 5.0
"""


def run_cli(
    *args: str, cwd: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """`python -m dflab ARGS` in a fresh interpreter, as a user would run it."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "python"), env.get("PYTHONPATH")]))
    env["COLUMNS"] = "200"  # keep rich tables on one line per row
    return subprocess.run(
        [sys.executable, "-m", "dflab", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=timeout,
        check=False,
    )


def assert_user_error(proc: subprocess.CompletedProcess[str], *needles: str) -> str:
    """Exit 2, exactly one stderr line 'error: ...' containing every needle, no traceback."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: "), lines[0]
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    assert proc.stdout == ""
    return lines[0]


class InlineExecutor(Executor):
    """Runs each submission at once in this process: sweeps without process start-up, and a
    runner raising BaseException aborts the sweep the way a killed process would."""

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:
            future.set_exception(exc)
        return future


def inline_executor(jobs: int) -> Executor:
    return InlineExecutor()


# BookSim2's dragonfly in dflab's BookSim timing (validation/booksim/dfly_*.cfg): 1 cycle = 1 ns
# = one 64 B flit on every link, channels 1 / 10 / 100 cycles, 256-flit VC buffers, speedup 2,
# an output queue that never fills.
BOOKSIM_NETWORK = {
    "timing": "booksim", "flit_bytes": 64, "host_bw_gbps": 64, "local_bw_gbps": 64,
    "global_bw_gbps": 64, "xbar_bw_gbps": 128, "input_buffer_flits": 256,
    "output_buffer_flits": 1024, "host_latency_ns": 1, "local_latency_ns": 10,
    "global_latency_ns": 100, "input_latency_ns": 0, "output_latency_ns": 0,
}  # fmt: skip
