"""experiments/acor/transients.py (JPDC'19 Figs. 9-10): when the switches change level after the
step and when the latency settles, on constructed traces and series."""

from __future__ import annotations

import pytest

from helpers import load_experiment


def load_script():
    return load_experiment("experiments/acor/transients.py", "acor_transients")


def trace(changes: list[tuple[float, int, int]]) -> dict:
    """A run whose `acor_level` trace holds (ns after the step, router, level) changes."""
    step_ns = 10_000.0  # WARMUP_US
    return {"traces": {"acor_level": [[step_ns + t, r, v] for t, r, v in changes]}}


def test_switch_changes_counts_the_level_at_the_step() -> None:
    t = load_script()
    assert t.WARMUP_US == 10.0
    run = trace(
        [
            (-3000.0, 0, 2),  # router 0: up before the step, down 400 ns after it
            (400.0, 0, 1),
            (-2000.0, 1, 2),  # router 1: up before, down, up again, down for good at 900
            (100.0, 1, 1),
            (300.0, 1, 2),
            (900.0, 1, 1),
            (250.0, 2, 2),  # router 2: at level 1 at the step, up 250 ns after it, stays up
            (50.0, 5, 3),  # router 5 is not in group 0 (a = 3)
        ]
    )
    ups, downs = t.switch_changes(run, 3)
    # Routers 0 and 1 were already up at the step (0 ns), router 2 went up at 250 ns.
    assert sorted(ups) == pytest.approx([0.0, 0.0, 250.0])
    # Routers 0 and 1 are back at level 1 for good at 400 and 900 ns; router 2 is not.
    assert sorted(downs) == pytest.approx([400.0, 900.0])
    # A switch with no change at all sits at level 1: back at the step, never up.
    assert t.switch_changes(trace([]), 2) == ([], [0.0, 0.0])


def test_settles_at_is_the_first_window_that_stays_within_ten_percent() -> None:
    t = load_script()
    # 100 ns windows from the step: a peak of 3,000 ns for 1 µs, then 1,000 ns for 5 µs.
    curve = [(float(w * 100), 3000.0 if w < 10 else 1000.0) for w in range(60)]
    # The 3-window average first sits wholly after the peak at the window of 1,100 ns.
    assert t.settles_at(curve) == pytest.approx(1100.0)
    # A steady curve settles at once (the first moving-average window), a short one never.
    assert t.settles_at([(float(w * 100), 500.0) for w in range(60)]) == pytest.approx(100.0)
    assert t.settles_at([(float(w * 100), 500.0) for w in range(10)]) is None


def test_within_counts_seeds_and_switches_inside_the_papers_bound() -> None:
    t = load_script()
    # Three seeds of a = 2 switches: both within 500 ns; one at 600 ns; one switch that never
    # changed (left out of its seed's list).
    per_seed = [[0.0, 500.0], [100.0, 600.0], [200.0]]
    assert t.within(per_seed, 2, 500.0) == (1, 4)
    assert t.within(per_seed, 2, 1000.0) == (2, 5)
