"""The check table's logic (dflab.checks): values, ratios, ranks and tolerances against
made-up results, without an engine."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest
from pydantic import ValidationError

from dflab.checks import (
    FAIL,
    KNOWN,
    MISSING,
    PASS,
    SKIPPED,
    CheckSpec,
    Results,
    arithmetic,
    counts,
    evaluate,
    failed,
    select,
)


def _rows(routing: str, loads: list[float], accepted: list[float], **extra: Any) -> list[dict]:
    return [
        {"hash": f"{routing}{load}", "routing": routing, "traffic": "ur", "load": load, "seed": 1}
        | {"accepted_load": a, "latency_mean_ns": 1000.0 * (1 + load), "hops_mean": 3.0}
        | extra
        for load, a in zip(loads, accepted, strict=True)
    ]


def _results(series: pl.DataFrame | None = None) -> Results:
    short = pl.DataFrame(
        _rows("MIN", [0.5, 0.9], [0.5, 0.88])
        + _rows("VALn", [0.5, 0.9], [0.45, 0.46])
        + _rows("Q", [0.5, 0.9], [0.5, 0.80])
    )
    # A longer run of Q at 0.9 (another sweep) replaces the short one's point.
    long = pl.DataFrame(_rows("Q", [0.9], [0.86]))
    seeds = pl.DataFrame(
        [*_rows("S", [0.5], [0.40]), _rows("S", [0.5], [0.50])[0] | {"seed": 2, "hash": "s2"}]
    )
    saturation = pl.DataFrame(
        {"routing": ["MIN", "Q", "VALn"], "traffic": ["ur", "ur", "ur"], "seed": [1, 1, 1]}
        | {"saturation_load": [0.88, 0.84, None]}
    )
    return Results(
        ["short", "long", "seeds", "search"],
        {"short": short, "long": long, "seeds": seeds},
        {"search": saturation},
        lambda sweep, key: series if series is not None else pl.DataFrame(),
    )


def _check(**fields: Any) -> CheckSpec:
    base = {"name": "c", "metric": "accepted_load", "source": "s"}
    return CheckSpec.model_validate(base | fields)


MIN_MAX = {"where": {"routing": "MIN"}, "reduce": "max"}


def _one(check: CheckSpec, results: Results | None = None, size: str = "full") -> Any:
    (row,) = evaluate([check], results or _results(), size)
    return row


@pytest.mark.parametrize(
    ("fields", "status", "value"),
    [
        # max over loads: 0.88 against 0.9 -> -2.2 %, inside 3 %, outside 2 %
        ({**MIN_MAX, "paper": 0.9, "tolerance": "3%"}, PASS, "0.88"),
        ({**MIN_MAX, "paper": 0.9, "tolerance": "2%"}, FAIL, "0.88"),
        # absolute tolerance in the metric's unit
        ({**MIN_MAX, "paper": 0.9, "tolerance": 0.03}, PASS, "0.88"),
        ({**MIN_MAX, "paper": 0.9, "tolerance": 0.01}, FAIL, "0.88"),
        # the paper's value as arithmetic of its numbers
        ({**MIN_MAX, "paper": "0.968 / 1.1", "tolerance": "1%"},
         PASS, "0.88"),
        # min over loads
        ({"where": {"routing": "VALn"}, "reduce": "min", "paper": 0.45, "tolerance": 0.0}, PASS,
         "0.45"),
        # a later sweep's longer run replaces the point: 0.86, not 0.80
        ({"where": {"routing": "Q", "load": 0.9}, "paper": 0.86, "tolerance": 0.001}, PASS, "0.86"),
        ({"where": {"routing": "Q", "load": 0.9}, "sweeps": ["short"], "paper": 0.8,
          "tolerance": 0.001}, PASS, "0.8"),
        # seeds are averaged: (0.40 + 0.50) / 2
        ({"where": {"routing": "S"}, "paper": 0.45, "tolerance": 0.001}, PASS, "0.45"),
        # a failure listed as known is a known deviation
        ({**MIN_MAX, "paper": 1.0, "tolerance": "3%",
          "known": "a reason"}, KNOWN, "0.88"),
        # a ratio the paper states
        ({"where": {"routing": "MIN"}, "relative_to": {"routing": "VALn"}, "reduce": "max",
          "paper": "0.88 / 0.46", "tolerance": 0.001}, PASS, "1.913"),
        # µs from the ns column, names case-insensitive
        ({"metric": "latency_mean_us", "where": {"routing": "min", "load": 0.5},
          "paper": 1.5, "tolerance": "1%"}, PASS, "1.5"),
        # the saturation load of a search
        ({"metric": "saturation_load", "where": {"routing": "Q"}, "paper": 0.84,
          "tolerance": 0.005}, PASS, "0.84"),
        # a search whose lowest load was not sustained
        ({"metric": "saturation_load", "where": {"routing": "VALn"}, "paper": 0.5,
          "tolerance": 0.005}, FAIL, "below range"),
        # nothing selected, or too much without a reduction
        ({"where": {"routing": "UGALg"}, "paper": 0.5, "tolerance": "3%"}, MISSING, "—"),
        ({"where": {"routing": "MIN"}, "paper": 0.5, "tolerance": "3%"}, MISSING, "—"),
        # ranks
        ({"where": {"routing": "Q"}, "reduce": "max", "rank": "highest",
          "among": {"routing": ["Q", "VALn"]}}, PASS, "0.86"),
        ({"where": {"routing": "Q"}, "reduce": "max", "rank": "highest",
          "among": {"traffic": "ur"}}, FAIL, "0.86"),
        ({"metric": "latency_mean_us", "where": {"routing": "Q", "load": 0.5}, "rank": "lowest",
          "among": {"load": 0.5}}, PASS, "1.5"),
    ],
)  # fmt: skip
def test_check_rows(fields: dict[str, Any], status: str, value: str) -> None:
    row = _one(_check(**fields))
    assert (row.status, row.value) == (status, value), row


def test_the_row_shows_the_deviation_and_tolerance() -> None:
    row = _one(_check(where={"routing": "MIN"}, reduce="max", paper=0.9, tolerance="3%"))
    assert (row.paper, row.deviation, row.tolerance) == ("0.9", "-2.2%", "±3%")
    row = _one(_check(where={"routing": "MIN"}, reduce="max", paper=0.9, tolerance=0.05))
    assert (row.deviation, row.tolerance) == ("-0.020", "±0.05")
    row = _one(_check(where={"routing": "Q"}, reduce="max", rank="highest", among={}))
    assert row.deviation == "rank 2 of 4" and "MIN 0.88" in row.note  # of MIN, VALn, Q, S


def test_known_deviation_that_passes_says_so() -> None:
    row = _one(
        _check(where={"routing": "MIN"}, reduce="max", paper=0.88, tolerance="1%", known="why")
    )
    assert row.status == PASS and "listed as known (why) but passes" in row.note


def test_quick_size_skips_full_size_checks() -> None:
    check = _check(where={"routing": "MIN"}, reduce="max", paper=0.9, tolerance="3%", quick=False)
    assert _one(check, size="quick").status == SKIPPED
    assert _one(check, size="full").status == PASS


def test_a_check_over_a_window_of_the_series() -> None:
    series = pl.DataFrame(
        {
            "window_start_us": [0.0, 10.0, 20.0, 30.0],
            "window_end_us": [10.0, 20.0, 30.0, 40.0],
            "latency_mean_ns": [5000.0, 1000.0, 2000.0, 9000.0],
            "accepted_load": [0.1, 0.4, 0.5, 0.9],
            "packets_delivered": [1, 1, 3, 1],
        }
    )
    results = _results(series)
    # Latency weighted by the packets delivered: (1000 + 3 x 2000) / 4 over 10-30 µs.
    row = _one(
        _check(
            metric="latency_mean_us",
            where={"routing": "VALn", "load": 0.5},
            window_us=[10.0, 30.0],
            paper=1.75,
            tolerance=0.001,
        ),
        results,
    )
    assert (row.status, row.value) == (PASS, "1.75")
    row = _one(
        _check(where={"routing": "VALn", "load": 0.5}, window_us=[10, 30], paper=0.45, tolerance=0),
        results,
    )
    assert (row.status, row.value) == (PASS, "0.45")


def test_counts_and_what_fails() -> None:
    rows = evaluate(
        [
            _check(where={"routing": "MIN"}, reduce="max", paper=0.9, tolerance="3%"),
            _check(where={"routing": "MIN"}, reduce="max", paper=2, tolerance="3%"),
            _check(where={"routing": "MIN"}, reduce="max", paper=2, tolerance="3%", known="k"),
            _check(where={"routing": "XY"}, paper=2, tolerance="3%"),
        ],
        _results(),
        "full",
    )
    assert counts(rows) == "1 pass, 1 FAIL, 1 known deviations, 1 missing"
    assert [row.status for row in failed(rows)] == [FAIL, MISSING]


@pytest.mark.parametrize(
    ("text", "value"), [("1", 1.0), ("0.8825 / (1 - 0.0329)", 0.8825 / 0.9671), ("-2 * 3", -6.0)]
)
def test_arithmetic(text: str, value: float) -> None:
    assert arithmetic(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["x", "1 / 0", "2 ** 3", "abs(1)", "[1]", "1e400", ""])
def test_arithmetic_refuses_anything_else(text: str) -> None:
    with pytest.raises(ValueError):
        arithmetic(text)


def test_a_pattern_is_selected_by_its_name_too() -> None:
    frame = pl.DataFrame({"traffic": ["stencil:5x10x51", "ur", "adv+1"], "load": [0.5, 0.5, 0.5]})
    assert select(frame, {"traffic": "stencil"})["traffic"].to_list() == ["stencil:5x10x51"]
    assert select(frame, {"traffic": ["UR", "adv+1"]}).height == 2
    assert select(frame, {"traffic": "adv"}).is_empty()


def test_sweeps_over_different_keys_keep_every_point() -> None:
    """A later sweep replaces only points equal in every coordinate: two sweeps of one routing
    over different keys (and a third over one of them again) keep all their points, and a
    ratio between them reads the points it names (issue 21: 2.79 where the points gave 1.00)."""
    policy = pl.DataFrame(
        [
            r | {"routing.policy": p}
            for p in ("crg-gr", "crg-sw")
            for r in _rows("VAL", [0.5], [0.4])
        ]
    )
    sequence = pl.DataFrame(
        [
            r | {"routing.sequence": q}
            for q, a in (("2LB", 0.2), ("3L", 0.4))
            for r in _rows("ACOR", [0.5], [a])
        ]
    )
    again = pl.DataFrame([r | {"routing.sequence": "3L"} for r in _rows("ACOR", [0.5], [0.4])])
    results = Results(
        ["policy", "sequence", "again"],
        {"policy": policy, "sequence": sequence, "again": again},
        {},
        lambda sweep, key: pl.DataFrame(),
    )
    frame = results.frame(None)
    assert frame.height == 4
    assert frame.filter(pl.col("routing") == "ACOR")["routing.sequence"].sort().to_list() == [
        "2LB",
        "3L",
    ]
    assert frame.filter(pl.col("routing.sequence") == "3L")["sweep"].to_list() == ["again"]
    ratio = _check(
        where={"routing": "ACOR", "routing.sequence": "3L"},
        relative_to={"routing": "VAL", "routing.policy": "crg-sw"},
        paper=1.0,
        tolerance="1%",
    )
    assert _one(ratio, results).status == "pass"


def test_a_rank_compares_the_values_of_a_swept_key() -> None:
    """Each (routing, swept-key value) competes: ACOR 3L against ACOR 2LB and VAL's policies."""
    acor = pl.DataFrame(
        [
            r | {"routing.sequence": q}
            for q, a in (("2LB", 0.45), ("3L", 0.5))
            for r in _rows("ACOR", [0.5], [a])
        ]
    )
    val = pl.DataFrame(
        [
            r | {"routing.policy": p}
            for p, a in (("crg-gr", 0.3), ("crg-sw", 0.55))
            for r in _rows("VAL", [0.5], [a])
        ]
    )
    results = Results(
        ["acor", "val"], {"acor": acor, "val": val}, {}, lambda sweep, key: pl.DataFrame()
    )
    rank = _check(
        where={"routing": "ACOR", "routing.sequence": "3L"}, rank="highest", among={"traffic": "ur"}
    )
    row = _one(rank, results)
    assert (row.status, row.deviation) == ("FAIL", "rank 2 of 4")
    assert row.note == "VAL policy=crg-sw 0.55"
    best = _check(
        where={"routing": "VAL", "routing.policy": "crg-sw"},
        rank="highest",
        among={"traffic": "ur"},
    )
    assert _one(best, results).status == "pass"


def test_a_paired_ratio_is_taken_per_pattern_then_reduced() -> None:
    """'Up to 28 % lower': the smallest of the per-pattern ratios, not a ratio of minima."""
    rows = []
    for traffic, acor, val in (("ur", 800.0, 1000.0), ("adv+1", 1400.0, 2000.0), ("advc", 0, 0)):
        for routing, latency in (("ACOR", acor), ("VAL", val)):
            if latency:
                row = _rows(routing, [0.1], [0.1])[0]
                rows.append(row | {"traffic": traffic, "latency_mean_ns": latency})
    rows.append(_rows("ACOR", [0.1], [0.1])[0] | {"traffic": "advc", "latency_mean_ns": 900.0})
    results = Results(["s"], {"s": pl.DataFrame(rows)}, {}, lambda sweep, key: pl.DataFrame())
    fields = {
        "metric": "latency_mean_ns",
        "where": {"routing": "ACOR", "load": 0.1},
        "relative_to": {"routing": "VAL", "load": 0.1},
        "paper": "1 - 0.28",
        "tolerance": "5%",
    }
    row = _one(_check(**fields, paired_by=["traffic"], reduce="min"), results)
    # ACOR/VAL is 0.8 under UR and 0.7 under ADV+1 (ADVc has no VAL point: no pair).
    assert (row.status, row.value) == ("pass", "0.7")
    assert row.note.startswith("at traffic=adv+1 (of traffic=ur: 0.8, traffic=adv+1: 0.7)")
    # Unpaired, min over min is 800 / 1000: another number, and a failure here.
    assert _one(_check(**fields, reduce="min"), results).status == "FAIL"
    # One ratio asked of two pairs is refused, as one value of two points is.
    assert _one(_check(**fields, paired_by=["traffic"]), results).status == "missing"
    with pytest.raises(ValidationError) as error:
        _check(metric="accepted_load", paired_by=["traffic"], paper=1.0, tolerance="1%")
    assert error.value.errors()[0]["ctx"]["field"] == "paired_by"
