"""Interrupting one run (newcomer #1): SIGINT and SIGTERM stop `dflab run` within about a second
with one line naming where it stopped; the API's progress callback sees simulated time move
and can stop the run. Progress lines appear when stderr is not a terminal (newcomer #9)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from dflab import engine
from helpers import requires_engine

pytestmark = requires_engine

# Minutes of simulation if nobody stops it.
LONG_RUN = [
    "run",
    "--preset",
    "qadaptive-1056",
    "--routing",
    "Q-adaptive",
    "--traffic",
    "adv+1",
    "--load",
    "0.5",
    "--warmup-us",
    "20000",
    "--measure-us",
    "100",
    "--json",
]


def _start() -> subprocess.Popen[str]:
    env = {**os.environ, "DFLAB_PROGRESS_S": "0.3"}
    return subprocess.Popen(
        [sys.executable, "-m", "dflab", *LONG_RUN],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


@pytest.mark.parametrize(
    ("sig", "code", "word"),
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")],
)
def test_a_signal_stops_a_run_within_a_second(sig: signal.Signals, code: int, word: str) -> None:
    proc = _start()
    assert proc.stderr is not None
    first = proc.stderr.readline()  # the first progress line: the engine is running
    assert first.startswith("progress: "), first
    sent = time.monotonic()
    proc.send_signal(sig)
    out, rest = proc.communicate(timeout=30)
    took = time.monotonic() - sent
    assert proc.returncode == code, rest
    assert took < 1.5, f"stopped {took:.2f} s after the signal"
    lines = [line for line in rest.splitlines() if not line.startswith("progress: ")]
    assert len(lines) == 1 and lines[0].startswith(f"error: {word} at t = "), rest
    assert "Traceback" not in rest and out == ""


def test_the_progress_callback_sees_time_move_and_can_stop_the_run() -> None:
    config = json.dumps(
        {"traffic": {"load": 0.5}, "run": {"warmup_us": 5000.0, "measure_us": 10.0}}
    )
    seen: list[tuple[float, float, float]] = []

    class Enough(Exception):
        pass

    def progress(now_us: float, end_us: float, wall_s: float) -> None:
        seen.append((now_us, end_us, wall_s))
        if len(seen) == 3:
            raise Enough

    started = time.monotonic()
    with pytest.raises(Enough):
        engine.simulate(config, progress=progress)
    assert time.monotonic() - started < 5
    assert [s[1] for s in seen] == [5010.0] * 3
    assert seen[0][0] < seen[1][0] < seen[2][0] < 5010.0
