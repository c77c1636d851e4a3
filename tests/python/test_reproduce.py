"""`dflab reproduce` on a tiny campaign: runs every sweep into its own store through one pool,
resumes, draws, checks and writes its table; the CLI's exit status follows the checks."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from dflab.campaign import load_campaign
from dflab.config import Experiment
from dflab.errors import UserError
from dflab.loading import SweepSpec, validate
from dflab.reproduce import reproduce
from dflab.store import Store
from dflab.sweep import expand, run_sweeps
from fakes import fake_result
from helpers import inline_executor, requires_engine, run_cli
from test_campaign import TINY

# fake_result: MIN carries up to 0.6, the others 0.45.
CHECKS = """
[[checks]]
name = "VALn max throughput"
metric = "accepted_load"
where = { routing = "VALn" }
reduce = "max"
paper = 0.5
tolerance = "5%"
source = "made up"
known = "VALn saturates lower here"

[[checks]]
name = "MIN latency at 0.2, µs"
metric = "latency_mean_us"
where = { routing = "MIN", load = 0.2 }
sweeps = ["min"]
paper = 1.222
tolerance = "10%"
source = "made up"
quick = false
"""


def _campaign(tmp_path: Path, extra: str = CHECKS) -> Path:
    path = tmp_path / "tiny-study.toml"
    path.write_text(TINY + extra)
    return path


def test_reproduce_runs_draws_checks_and_resumes(tmp_path: Path) -> None:
    campaign = load_campaign(_campaign(tmp_path))
    out = tmp_path / "out"
    run = {"runner": fake_result, "executor_factory": inline_executor}
    result = reproduce(campaign, "full", out, **run)
    assert (result.points, result.ran) == (7, 7)
    assert {p.name for p in out.iterdir() if p.is_dir()} == {"min", "long"}
    assert (
        len(Store(out / "min").done_hashes()) == 6 and len(Store(out / "long").done_hashes()) == 1
    )
    assert (out / "curves.png").stat().st_size > 0
    # curves.md: the figure's numbers, MIN's latency at load 0.2 as the check below reads it
    assert "| MIN | 1222 |" in (out / "curves.md").read_text()
    statuses = [row.status for row in result.rows]
    # MIN max 0.6 against 0.6; VALn 0.45 against 0.5 (known); MIN 0.2 latency 1/(1-0.2/1.1)
    assert statuses == ["pass", "known", "pass"], result.rows
    assert result.ok
    rows = list(csv.DictReader((out / "checks.csv").open()))
    assert [row["status"] for row in rows] == statuses
    table = (out / "checks.md").read_text()
    assert "| 2 | VALn max throughput | 0.5 | 0.45 | -10.0% | ±5% | FAIL (known) |" in table
    assert "timing" not in table and (out / "timing.csv").is_file()
    # A second run finds every point in its store.
    again = reproduce(campaign, "full", out, **run)
    assert (again.points, again.ran) == (7, 0) and again.rows == result.rows
    quick = reproduce(campaign, "quick", tmp_path / "quick", **run)
    # The quick size runs load 0.2 only (the maxima fail) and skips the full-size check.
    assert quick.points == 2
    assert [row.status for row in quick.rows] == ["FAIL", "known", "not at this size"]


def test_an_unexpected_failure_fails_the_reproduction(tmp_path: Path) -> None:
    campaign = load_campaign(
        _campaign(tmp_path, CHECKS.replace('known = "VALn saturates lower here"\n', ""))
    )
    result = reproduce(
        campaign, "full", tmp_path / "out", runner=fake_result, executor_factory=inline_executor
    )
    assert [row.status for row in result.rows] == ["pass", "FAIL", "pass"] and not result.ok


def test_sweeps_share_one_pool_most_expensive_first(tmp_path: Path) -> None:
    base = validate(Experiment, {"name": "j", "topology": {"p": 2, "a": 4, "h": 2}})
    a = expand(base, SweepSpec(loads=[0.2, 0.8]))
    b = expand(base, SweepSpec(routings=["VALn"], loads=[0.5]))
    order: list[float] = []

    def runner(config_json: str) -> dict:
        result = fake_result(config_json)
        order.append(result["config"]["traffic"]["load"])
        return result

    stores = Store(tmp_path / "a"), Store(tmp_path / "b")
    outcomes = run_sweeps(
        [(a, stores[0]), (b, stores[1])],
        runner=runner,
        executor_factory=inline_executor,
        cost=lambda point: point.experiment.traffic.load,
    )
    assert order == [0.8, 0.5, 0.2]
    assert [o.ran for o in outcomes] == [2, 1]
    assert [len(s.done_hashes()) for s in stores] == [2, 1]
    assert (tmp_path / "b" / "summary.csv").is_file()


@requires_engine
def test_reproduce_command_on_a_tiny_campaign(tmp_path: Path) -> None:
    path = _campaign(tmp_path)
    proc = run_cli("reproduce", str(path), "--full", "--jobs", "2", "--out", "res", cwd=tmp_path)
    # The made-up paper values need not match the engine: the table is printed either way.
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr
    assert "VALn max throughput" in proc.stdout
    assert "wall time of the points per sweep" in proc.stdout
    assert (tmp_path / "res" / "checks.md").is_file()
    assert (tmp_path / "res" / "curves.png").is_file()
    assert "tiny-study (full):" in proc.stderr


def test_reproduce_list() -> None:
    proc = run_cli("reproduce", "--list")
    assert proc.returncode == 0, proc.stderr
    assert "qadaptive-fig5" in proc.stdout


@pytest.mark.parametrize("size", ["quick", "full"])
def test_planned_sizes_of_the_fig5_campaign(size: str) -> None:
    from dflab import studies

    campaign = load_campaign(studies.find("qadaptive-fig5")[1], "qadaptive-fig5")
    plan = {sweep.name: sweep for sweep in campaign.plan(size)}
    # The full size keeps the run lengths of docs/qadaptive-results.md.
    if size == "full":
        assert plan["q_adv_long"].experiment.run.warmup_us == 1200.0
        assert plan["base"].experiment.run.measure_us == 20.0
        assert plan["base"].experiment.traffic.source_queue_packets == 20


def test_more_seeds_run_only_the_new_ones(tmp_path: Path) -> None:
    campaign = load_campaign(_campaign(tmp_path))
    run = {"runner": fake_result, "executor_factory": inline_executor}
    out = tmp_path / "out"
    assert reproduce(campaign, "full", out, **run).ran == 7
    two = reproduce(campaign, "full", out, seeds=2, **run)
    assert (two.points, two.ran) == (14, 7)
    assert {
        p.experiment.seed for s in campaign.plan("full", 2) for p in expand(s.experiment, s.spec)
    } == {1, 2}


SEARCHES = """
[study]
title = "two searches"

[base]
topology = { p = 2, a = 4, h = 2, g = 9 }

[[sweeps]]
name = "min"
routings = ["MIN"]
search = { range = "0.1:0.9", step = 0.05 }

[[sweeps]]
name = "valn"
routings = ["VALn"]
search = { range = "0.1:0.9", step = 0.05 }

[[checks]]
name = "MIN saturation"
metric = "saturation_load"
where = { routing = "MIN" }
paper = 0.6
tolerance = 0.0

[[checks]]
name = "VALn saturation"
metric = "saturation_load"
where = { routing = "VALn" }
sweeps = ["valn"]
paper = 0.45
tolerance = 0.0
"""


def test_searches_run_side_by_side_into_their_stores(tmp_path: Path) -> None:
    path = tmp_path / "searches.toml"
    path.write_text(SEARCHES)
    result = reproduce(
        load_campaign(path), "full", tmp_path / "out", runner=fake_result,
        executor_factory=inline_executor,
    )  # fmt: skip
    # fake_result: MIN carries up to 0.6, VALn 0.45.
    assert [(row.value, row.status) for row in result.rows] == [("0.6", "pass"), ("0.45", "pass")]
    assert result.points == result.ran > 0
    for name in ("min", "valn"):
        assert (tmp_path / "out" / name / "saturation.csv").is_file()
        assert 3 <= len(Store(tmp_path / "out" / name).done_hashes()) <= 5  # bisection of 17


def test_a_part_of_the_loads_runs_first_and_the_whole_campaign_reuses_it(tmp_path: Path) -> None:
    campaign = load_campaign(_campaign(tmp_path))
    run = {"runner": fake_result, "executor_factory": inline_executor}
    out = tmp_path / "out"
    part = reproduce(campaign, "full", out, loads=[0.4], **run)
    # "min" keeps 0.4 of its 0.2/0.4/0.6 (MIN and VALn), "long" runs at its 0.4.
    assert (part.points, part.ran) == (3, 3)
    assert [p.experiment.traffic.load for p in expand(*_plan(campaign, "min", [0.4]))] == [0.4] * 2
    # A check that reads a load not run says so instead of failing the run.
    assert any(row.status == "not in --loads" for row in part.rows), [r.status for r in part.rows]
    # A maximum over the loads says it read a part of them.
    best = next(row for row in part.rows if row.name == "MIN max throughput")
    assert best.value == "0.4" and "over the loads run (--loads) only" in best.note, best
    whole = reproduce(campaign, "full", out, **run)
    assert (whole.points, whole.ran) == (7, 4)
    with pytest.raises(
        UserError, match=r"--loads: no sweep of this campaign has 0.33; its loads: 0.2, 0.4, 0.6"
    ):
        campaign.plan("full", loads=[0.33])


def _plan(campaign: Any, name: str, loads: list[float]) -> tuple[Any, Any]:
    sweep = next(s for s in campaign.plan("full", loads=loads) if s.name == name)
    return sweep.experiment, sweep.spec


@requires_engine
def test_reproduce_loads_that_match_nothing_fail_before_running(tmp_path: Path) -> None:
    path = _campaign(tmp_path)
    proc = run_cli("reproduce", str(path), "--full", "--loads", "0.9", "--out", "r", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "--loads: no sweep of this campaign has 0.9" in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "r").exists()


def test_a_reason_known_at_one_size_does_not_excuse_the_other(tmp_path: Path) -> None:
    known_quick = CHECKS.replace(
        'known = "VALn saturates lower here"',
        'known = "VALn saturates lower here"\nknown_at = "quick"',
    )
    campaign = load_campaign(_campaign(tmp_path, known_quick))
    run = {"runner": fake_result, "executor_factory": inline_executor}
    rows = {r.name: r for r in reproduce(campaign, "full", tmp_path / "full", **run).rows}
    assert rows["VALn max throughput"].status == "FAIL"
    assert "VALn saturates lower here" in rows["VALn max throughput"].note
    quick = {r.name: r for r in reproduce(campaign, "quick", tmp_path / "quick", **run).rows}
    assert quick["VALn max throughput"].status == "known"
