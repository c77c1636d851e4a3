"""experiments/ics24/curves.py: which stored sweep is which of the paper's figures, and the
paper's saturation loads it marks, read from the campaign files."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from helpers import load_experiment


def load_script():
    return load_experiment("experiments/ics24/curves.py", "ics24_curves")


def test_sweeps_map_to_the_papers_figures_with_their_saturation_loads() -> None:
    curves = load_script()
    sweeps, paper = curves.figure_map("ics24-perm")
    assert sweeps == {"p288": 16, "p288_dgb": 16, "p1056": 7, "p1056_dgb": 7}
    # §5.2 and Fig. 16 / §5.2.1 and Fig. 7 of the paper.
    assert paper[(16, "UGAL-L")] == 0.76
    assert paper[(16, "UGAL-G-path")] == 0.89
    assert paper[(7, "UGAL-LE")] == 0.53
    # Fig. 11 states no number: its checks are ratios to UGAL-L and mark no load.
    sweeps, paper = curves.figure_map("ics24-node-mix")
    assert sweeps["np25"] == 11 and sweeps["np50"] == 12 and sweeps["ns50_288"] == 15
    assert not [key for key in paper if key[0] == 11]
    assert paper[(12, "PAR")] == 0.64


def test_points_carry_their_figure_and_are_drawn(tmp_path: Path) -> None:
    curves = load_script()
    store = tmp_path / "ics24-perm"
    for sweep, routing in (("p288", "UGAL-L"), ("p288_dgb", "DGB"), ("p1056", "PAR")):
        (store / sweep).mkdir(parents=True)
        pl.DataFrame(
            {
                "routing": [routing] * 3,
                "offered_load": [0.5, 0.6, 0.7],
                "latency_mean_ns": [60.0, 110.0, 900.0],
                "accepted_load": [0.5, 0.6, 0.62],
            }
        ).write_parquet(store / sweep / "summary.parquet")
    frame, paper = curves.points(tmp_path)
    assert frame.height == 9
    by_figure = dict(frame.group_by("figure").len().iter_rows())
    assert by_figure == {16: 6, 7: 3}
    assert set(frame.filter(pl.col("figure") == 16)["routing"]) == {"UGAL-L", "DGB"}
    out = tmp_path / "curves.png"
    curves.draw(frame, paper, out)
    assert out.stat().st_size > 10_000
