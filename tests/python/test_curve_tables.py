"""curves.md's tables (dflab.curve_tables): one row per curve, one column per load, the mean
latency over the seeds in ns and the accepted load of saturated points."""

from __future__ import annotations

import polars as pl

from dflab.curve_tables import curve_tables


def _row(routing: str, traffic: str, load: float, seed: int, latency: float, accepted: float,
         policy: str | None = None) -> dict[str, object]:  # fmt: skip
    return {
        "routing": routing, "traffic": traffic, "load": load, "seed": seed,
        "routing.policy": policy, "latency_mean_ns": latency, "latency_p99_ns": 2 * latency,
        "accepted_load": accepted,
    }  # fmt: skip


def test_cells_are_seed_means_with_the_accepted_load_of_saturated_points() -> None:
    rows = [
        # two seeds at UR 0.1: 500 and 520 ns -> 510
        _row("MIN", "ur", 0.1, 1, 500.0, 0.1),
        _row("MIN", "ur", 0.1, 2, 520.0, 0.1),
        # 0.5 offered, 0.476 accepted: 95.2 % of it, not saturated
        _row("MIN", "ur", 0.5, 1, 700.0, 0.476),
        # 0.5 offered, 0.3 accepted: saturated
        _row("VAL", "ur", 0.5, 1, 4321.4, 0.3, "crg-gr"),
        _row("VAL", "ur", 0.5, 1, 900.0, 0.5, "rrg-sw"),
        _row("VAL", "adv+1", 0.3, 1, 1000.0, 0.3, "rrg-sw"),
    ]
    text = curve_tables(pl.DataFrame(rows))
    ur, adv = text.strip().split("\n\n")
    assert ur.splitlines() == [
        "| UR | 0.1 | 0.5 |",
        "|---|---|---|",
        "| MIN | 510 | 700 |",
        "| VAL policy=crg-gr |  | 4321 (0.300) |",
        "| VAL policy=rrg-sw |  | 900 |",
    ]
    assert adv.splitlines() == ["| ADV+1 | 0.3 |", "|---|---|", "| VAL policy=rrg-sw | 1000 |"]


def test_no_points_no_tables() -> None:
    assert curve_tables(pl.DataFrame()) == ""
