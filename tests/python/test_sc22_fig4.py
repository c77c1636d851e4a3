"""experiments/sc22/fig4.py: which pairs of Fig. 4 are still to run and in which order, the
changes its tables compute against the target alone, and the figure; and pairs.py's placement
of a target that runs fewer ranks than its slice; traffic_split.py's reduction of a run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from helpers import REPO, load_experiment


@pytest.fixture
def fig4(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.syspath_prepend(str(REPO / "experiments" / "sc22"))
    module = load_experiment("experiments/sc22/fig4.py", "sc22_fig4")
    monkeypatch.setattr(module.pairs, "RESULTS", tmp_path / "pairs.csv")
    return module


def row(target: str, background: str, routing: str, comm: float, seed: int = 1) -> dict:
    return {
        "target": target,
        "background": background,
        "routing": routing,
        "seed": seed,
        "target_comm_mean_ms": comm,
        "target_comm_std_ms": comm / 10,
        "wall_s": 1.0,
    }


def test_missing_pairs_skip_recorded_rows_and_run_the_cheapest_first(fig4: Any) -> None:
    fig4.pairs.record(row("fft3d", "none", "PAR", 5.0))
    fig4.pairs.record(row("fft3d", "none", "PAR", 9.0))  # the same key: not recorded twice
    fig4.pairs.record(row("lu", "halo3d", "PAR", 20.0, seed=2))  # another seed
    assert len(fig4.pairs.read_rows()) == 2
    todo = fig4.missing(["lu", "fft3d"], ["halo3d", "none", "ur"], ["PAR"], seed=1)
    assert ("fft3d", "none", "PAR") not in todo
    assert todo == [
        ("lu", "none", "PAR"),
        ("fft3d", "ur", "PAR"),
        ("lu", "ur", "PAR"),
        ("fft3d", "halo3d", "PAR"),
        ("lu", "halo3d", "PAR"),
    ]


def test_tables_give_each_change_against_the_target_alone_under_its_routing(
    fig4: Any, tmp_path: Path
) -> None:
    for target, base in (("lu", 10.0), ("lqcd", 12.0), ("stencil5d", 8.0), ("lulesh", 16.0)):
        fig4.pairs.record(row(target, "none", "PAR", base))
        fig4.pairs.record(row(target, "none", "Q-adaptive", 0.75 * base))
    fig4.pairs.record(row("lu", "halo3d", "PAR", 17.5))
    fig4.pairs.record(row("lu", "halo3d", "Q-adaptive", 9.0))
    text = fig4.markdown(seed=1)
    lu = text.split("**LU**")[1].split("**LQCD**")[0]
    assert "| Halo3D | not run | not run | 17.50 (+75.0 %) | 9.00 (+20.0 %) | +75.77 %" in lu
    assert "| alone | not run | not run | 10.00 | 7.50 |" in lu
    assert "25.00 % less under Q-adaptive than under PAR on average (paper: 23.46 %)" in text
    fig4.plot(seed=1, path=tmp_path / "fig4.png")
    assert (tmp_path / "fig4.png").stat().st_size > 10_000


def test_a_smaller_target_leaves_the_rest_of_its_slice_idle(fig4: Any) -> None:
    jobs = fig4.pairs.experiment("lulesh", "halo3d", "PAR", 1)["workload"]["jobs"]
    assert [(j["motif"], j["ranks"]) for j in jobs] == [
        ("lulesh", 512),
        ("null", 16),
        ("halo3d", 528),
    ]
    alone = fig4.pairs.experiment("lulesh", "none", "PAR", 1)["workload"]["jobs"]
    assert [(j["motif"], j["ranks"]) for j in alone] == [("lulesh", 512)]
    jobs = fig4.pairs.experiment("fft3d", "dl", "PAR", 1)["workload"]["jobs"]
    assert [(j["motif"], j["ranks"]) for j in jobs] == [("fft3d", 528), ("dl", 528)]


def test_traffic_split_reduces_a_run_to_the_targets_share_of_each_port_class(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import polars as pl

    monkeypatch.syspath_prepend(str(REPO / "experiments" / "sc22"))
    split = load_experiment("experiments/sc22/traffic_split.py", "sc22_traffic_split")
    ports = pl.DataFrame(
        {
            "class": ["host", "local", "local", "global", "global"],
            "stall_us": [0.0, 2e6, 1e6, 4e6, 0.0],
            # Bytes per job: the target (job 0), then the background.
            "bytes": [
                [5, 0],
                [3_000_000_000, 1_000_000_000],
                [1_000_000_000, 0],
                [2_000_000_000, 2_000_000_000],
                [0, 7],
            ],
        },
        schema_overrides={"bytes": pl.List(pl.Int64)},
    )
    throughput = pl.DataFrame(
        {
            "job": [0, 0, 0, 1],
            "window_start_us": [0.0, 999.0, 1000.0, 0.0],
            "bytes": [1_000_000, 2_000_000, 4_000_000, 9],
        },
        schema_overrides={"bytes": pl.Int64},
    )
    job = {"comm_mean_us": 1500.0, "latency_mean_ns": 2000.0, "latency_p99_ns": 9000.0}
    row = split.reduce({"seed": 1}, {**job, "injection_rate_gbs": 7.0}, ports, throughput)
    assert (row["target_local_gb"], row["all_local_gb"]) == (4.0, 5.0)
    assert (row["target_global_gb"], row["all_global_gb"]) == (2.0, pytest.approx(4.0))
    # Stall seconds, in all and weighted by the target's share of each port's bytes.
    assert (row["stall_local_s"], row["stall_global_s"]) == (3.0, 4.0)
    assert row["target_stall_local_s"] == pytest.approx(2 * 0.75 + 1.0)
    assert row["target_stall_global_s"] == pytest.approx(2.0)
    # Of the target's 6 GB over network ports, 5 GB cross ports the background also uses.
    assert row["shared_share"] == pytest.approx(5 / 6)
    assert row["mb_per_ms"] == "3 4"
    assert (row["comm_mean_ms"], row["latency_p99_us"]) == (1.5, 9.0)


def test_the_mix_table_reads_one_seed_and_the_spread_every_seed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.syspath_prepend(str(REPO / "experiments" / "sc22"))
    mixed = load_experiment("experiments/sc22/mixed.py", "sc22_mixed")

    def mix_row(app: str, mix: str, seed: int, comm: float) -> dict[str, str]:
        return {
            "app": app,
            "mix": mix,
            "routing": "PAR",
            "seed": str(seed),
            "comm_mean_ms": str(comm),
            "latency_p99_us": "1.0",
        }

    rows = []
    for seed, slow in ((1, 1.5), (2, 2.0)):  # every app 50 % / 100 % slower in the mix
        for app, _ in mixed.JOBS:
            rows += [mix_row(app, "alone", seed, 10.0), mix_row(app, "mixed", seed, 10.0 * slow)]
    table = mixed.markdown(rows, ["PAR"], seed=2)
    assert "| FFT3D | 140 | PAR | 10.00 | 20.00 | +100.0 %" in table
    assert "+50.0 %" not in table  # seed 1's rows are not read
    spread = mixed.seed_spread(rows, ["PAR"])
    assert "| LQCD | PAR | +50.0 % | +100.0 % |" in spread
    assert (
        spread.splitlines()[-1] == "| mean of the five (not Stencil5D) | PAR | +50.0 % | +100.0 % |"
    )
