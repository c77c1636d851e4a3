"""Offered-load lists for sweeps: ranges include their end, comma lists are taken as is."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dflab.errors import UserError
from dflab.loads import MAX_LOADS, parse_loads

hundredths = st.integers(min_value=1, max_value=100)


def test_documented_example() -> None:
    assert parse_loads("0.1:0.9:0.1") == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]


@given(start=hundredths, step=st.integers(min_value=1, max_value=30), count=st.integers(0, 30))
def test_range_includes_its_end_and_steps_evenly(start: int, step: int, count: int) -> None:
    end = start + count * step
    loads = parse_loads(f"{start / 100}:{end / 100}:{step / 100}")
    assert len(loads) == count + 1
    assert loads[0] == start / 100
    assert loads[-1] == end / 100  # exactly, so hashes match hand-typed loads
    assert all(b - a == pytest.approx(step / 100) for a, b in itertools.pairwise(loads))


@given(start=hundredths, step=st.integers(min_value=2, max_value=30), count=st.integers(0, 20))
def test_end_off_the_grid_is_not_exceeded(start: int, step: int, count: int) -> None:
    end = start + count * step + step // 2
    loads = parse_loads(f"{start / 100}:{end / 100}:{step / 100}")
    assert len(loads) == count + 1
    assert loads[-1] <= end / 100


@given(st.lists(st.floats(0.001, 1.0), min_size=1, max_size=10))
def test_comma_list_round_trips(values: list[float]) -> None:
    assert parse_loads(",".join(repr(v) for v in values)) == values


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "empty"),
        ("0.1:0.9", "start:end:step"),
        ("0.1:0.9:0", "step must be > 0"),
        ("0.9:0.1:0.1", "end is smaller than start"),
        ("0.1,abc", "'abc' is not a number"),
        ("0.1,nan", "not a finite number"),
    ],
)
def test_bad_specs(spec: str, message: str) -> None:
    with pytest.raises(UserError, match=message):
        parse_loads(spec)


@given(step=st.floats(min_value=1e-300, max_value=0.8 / (MAX_LOADS + 1)))
def test_too_many_loads_are_refused_before_the_list_is_built(step: float) -> None:
    # newcomer #8: 0.1:0.9:1e-12 built an 8*10^11-element list (hang, then out of memory).
    with pytest.raises(UserError, match=rf"^sweep\.loads '.*': .* loads; at most {MAX_LOADS}$"):
        parse_loads(f"0.1:0.9:{step!r}", "sweep.loads")


def test_the_limit_itself_is_allowed() -> None:
    assert len(parse_loads(f"0:{MAX_LOADS - 1}:1")) == MAX_LOADS
    with pytest.raises(UserError, match=f"{MAX_LOADS + 1} loads"):
        parse_loads(f"0:{MAX_LOADS}:1")
