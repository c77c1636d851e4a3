"""Resource and range guards (newcomer #3, #14): a network that would not fit in memory and
times beyond the picosecond clock are refused before anything is allocated or simulated, with
one line naming the field, exit 2."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from helpers import requires_engine

pytestmark = requires_engine


def _dflab(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dflab", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def _one_error(proc: subprocess.CompletedProcess[str], field: str) -> str:
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {field}: "), proc.stderr
    return lines[0]


def test_deep_buffers_are_refused_before_allocating() -> None:
    proc = _dflab(
        "run",
        "--preset",
        "qadaptive-1056",
        "--set",
        "network.input_buffer_flits=1000000",
        "--set",
        "network.output_buffer_flits=1000000",
        "--measure-us",
        "1",
        env={"DFLAB_MEMORY_LIMIT_GB": "16"},
    )
    line = _one_error(proc, "network.input_buffer_flits")
    assert (
        "needs about 71.8 GB" in line
        and "limit of 16.0 GB" in line
        and "DFLAB_MEMORY_LIMIT_GB" in line
    )


def test_the_memory_limit_is_an_override() -> None:
    args = (
        "run",
        "--preset",
        "qadaptive-1056",
        "--warmup-us",
        "0.5",
        "--measure-us",
        "0.5",
        "--json",
    )
    _one_error(_dflab(*args, env={"DFLAB_MEMORY_LIMIT_GB": "0.001"}), "topology")
    assert _dflab(*args, env={"DFLAB_MEMORY_LIMIT_GB": "1"}).returncode == 0
    _one_error(_dflab(*args, env={"DFLAB_MEMORY_LIMIT_GB": "lots"}), "DFLAB_MEMORY_LIMIT_GB")


@pytest.mark.parametrize(
    ("setting", "field"),
    [
        ("network.global_latency_ns=1e30", "network.global_latency_ns"),
        ("run.warmup_us=1e15", "run.warmup_us"),
        ("network.global_bw_gbps=1e-300", "network.global_bw_gbps"),
        ("run.measure_us=1e-9", "run.measure_us"),
    ],
)
def test_times_beyond_the_clock_are_refused(setting: str, field: str) -> None:
    _one_error(_dflab("run", "--preset", "qadaptive-1056", "--set", setting, "--json"), field)


def test_an_unsettled_run_says_so() -> None:
    # Q-adaptive under ADV+1 with a 10 us warm-up is still learning (newcomer #15): the run
    # says it is not in steady state, and why; a settled MIN UR run says it is.
    base = (
        "run",
        "--preset",
        "qadaptive-1056",
        "--warmup-us",
        "10",
        "--measure-us",
        "20",
        "--json",
    )
    proc = _dflab(*base, "--routing", "Q-adaptive", "--traffic", "adv+1", "--load", "0.5")
    assert proc.returncode == 0, proc.stderr
    assert '"steady_state": false' in proc.stdout
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning: ")]
    assert any("accepts 0.0" in w for w in warnings), proc.stderr
    assert any("mean latency moves from" in w for w in warnings), proc.stderr
    settled = _dflab(*base, "--routing", "MIN", "--load", "0.5")
    assert '"steady_state": true' in settled.stdout and "warning:" not in settled.stderr
