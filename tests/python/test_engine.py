"""End to end with the compiled engine, on tiny experiments (dfly(2,4,2,9), 7 µs)."""

from __future__ import annotations

import dataclasses
import json
import tomllib
from pathlib import Path

import polars as pl
import pytest

from dflab import engine
from dflab.api import SERIES_COLUMNS, Execution, Probes, Result, Summary, simulate
from dflab.bench import FIELDS, median_row
from dflab.config import Experiment
from dflab.loading import validate
from helpers import TINY_TOML, requires_engine, run_cli

pytestmark = requires_engine

TINY = validate(Experiment, tomllib.loads(TINY_TOML))


def _run_json(*args: str) -> dict:
    proc = run_cli("run", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 1, proc.stdout  # exactly one JSON object, nothing else on stdout
    return json.loads(lines[0])


def test_run_json_has_the_documented_fields(tiny_file: Path) -> None:
    summary = _run_json(str(tiny_file))
    execution = summary.pop("execution")
    assert summary.pop("steady_state") in (True, False, None)
    assert set(summary) == set(Summary.field_names())
    # How the run went, apart from the results.
    assert set(execution) == {f.name for f in dataclasses.fields(Execution)}
    assert execution["events"] > 0 and execution["wall_s"] > 0 and execution["partitions"] == 1
    assert summary["packets_delivered"] > 0
    assert summary["offered_load"] == pytest.approx(0.3, abs=0.1)
    assert 0 < summary["accepted_load"] <= summary["offered_load"] * 1.2
    p = [summary[f"latency_{q}_ns"] for q in ("p50", "p95", "p99", "max")]
    assert p == sorted(p)
    assert summary["network_latency_mean_ns"] <= summary["latency_mean_ns"]
    assert summary["minimal_fraction"] == 1.0  # MIN routing
    assert 1.0 <= summary["hops_mean"] <= 3.0  # local-global-local at most
    assert summary["sim_time_us"] >= 7.0


def test_run_json_has_the_routings_probe_totals() -> None:
    # ACOR-Switch counts its delivered inter-group packets per level: at UR 0.05 nearly all go at
    # level 1 (CRG-Gr). MIN declares no probes, so its JSON has none (the test above).
    summary = _run_json(
        "--preset", "acor-1056", "--routing", "ACOR", "--load", "0.05",
        "--warmup-us", "0.5", "--measure-us", "1",
    )  # fmt: skip
    levels = [summary["probes"]["totals"][f"paths_level_{n}"] for n in (1, 2, 3)]
    assert sum(levels) > 0 and levels[0] > 0.95 * sum(levels)


def test_statistics_of_an_empty_sample_are_null() -> None:
    # 0.1 us at load 0.01: packets are generated, none is delivered (newcomer #11).
    summary = _run_json(
        "--preset", "qadaptive-1056", "--load", "0.01", "--warmup-us", "0", "--measure-us", "0.1"
    )
    assert summary["packets_generated"] > 0 and summary["packets_delivered"] == 0
    for name in (
        "latency_mean_ns",
        "latency_p99_ns",
        "latency_max_ns",
        "hops_mean",
        "minimal_fraction",
    ):
        assert summary[name] is None, name
    assert summary["accepted_load"] == 0.0


def test_shortcut_flags_reach_the_engine(tiny_file: Path) -> None:
    summary = _run_json(str(tiny_file), "--routing", "valn", "--traffic", "ADV+1", "--load", "0.2")
    assert summary["offered_load"] == pytest.approx(0.2, abs=0.1)
    assert summary["minimal_fraction"] < 0.5  # Valiant sends almost everything non-minimally


def test_api_result_series_and_histogram() -> None:
    result = simulate(TINY)
    assert isinstance(result, Result)
    assert list(result.series.columns[: len(SERIES_COLUMNS)]) == list(SERIES_COLUMNS)
    assert result.series.height == pytest.approx(7, abs=1)  # 7 µs of 1 µs windows
    assert result.series["in_measurement"].sum() == pytest.approx(5, abs=1)
    assert sum(result.hops_histogram) == result.summary.packets_delivered
    assert result.config["topology"]["g"] == 9
    # MIN declares no probes; the engine's probe section still arrives, empty.
    assert result.probes == Probes(totals={}, per_router={}, series={})


def test_probes_are_read_by_kind() -> None:
    raw = {"totals": {"a": 3}, "per_router": {"b": [1, 2]}, "series": {"c": [0, 5]}}
    assert Probes.from_dict(raw) == Probes(
        totals={"a": 3}, per_router={"b": [1, 2]}, series={"c": [0, 5]}
    )


def test_same_seed_same_result_other_seed_other_result() -> None:
    first, again = simulate(TINY).summary, simulate(TINY).summary
    other = simulate(TINY, seed=TINY.seed + 1).summary
    assert first.packets_generated == again.packets_generated
    assert first.latency_mean_ns == again.latency_mean_ns
    assert (other.packets_generated, other.latency_mean_ns) != (
        first.packets_generated,
        first.latency_mean_ns,
    )


def test_series_out_csv(tiny_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "s.csv"
    proc = run_cli("run", str(tiny_file), "--series-out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "accepted load" in proc.stdout  # the summary table
    frame = pl.read_csv(out)
    assert set(SERIES_COLUMNS) <= set(frame.columns)
    assert frame.height >= 6


def test_engine_config_error_is_a_user_error(tiny_file: Path) -> None:
    # Only the engine knows this limit (more than 10^6 windows).
    proc = run_cli("run", str(tiny_file), "--set", "run.window_us=0.000001")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: ") and "run.window_us" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_sweep_cli_runs_then_resumes(tiny_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "res"
    args = ["sweep", str(tiny_file), "--loads", "0.1:0.3:0.2", "--routings", "MIN,valn"]
    proc = run_cli(*args, "--jobs", "2", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    table = pl.read_csv(out / "summary.csv")
    assert table.height == 4
    assert sorted(set(table["routing"])) == ["MIN", "VALn"]
    assert "VALn" in proc.stdout and "latency mean" in proc.stdout

    again = run_cli(*args, "--jobs", "2", "--out", str(out))
    assert again.returncode == 0, again.stderr
    assert "4 points were already done" in again.stderr
    assert pl.read_csv(out / "summary.csv").height == 4


def test_sweep_summary_flags_points_not_in_steady_state(tiny_file: Path, tmp_path: Path) -> None:
    # MIN under ADV+1 at 0.8 on dfly(2,4,2,9) saturates (it carries at most 1/(a p) = 0.125):
    # its row says not steady; at 0.1 under UR the network settles (newcomer #15).
    out = tmp_path / "res"
    for traffic, load in (("ur", "0.1"), ("adv+1", "0.8")):
        args = ("--loads", load, "--traffics", traffic, "--jobs", "1", "--out", str(out))
        proc = run_cli("sweep", str(tiny_file), *args)
        assert proc.returncode == 0, proc.stderr
    table = pl.read_parquet(out / "summary.parquet").sort("load")
    assert table["steady_state"].to_list() == [True, False]
    point = json.loads(next((out / "points").glob("*.json")).read_text())
    assert set(point["diagnostics"]) == {"steady_state", "warnings"}


def test_info_reports_the_topology(tiny_file: Path) -> None:
    proc = run_cli("info", str(tiny_file), "--json")
    assert proc.returncode == 0, proc.stderr
    facts = json.loads(proc.stdout)
    assert (facts["routers"], facts["nodes"], facts["groups"]) == (36, 72, 9)


def test_bench_quick_one_scenario() -> None:
    proc = run_cli("bench", "--quick", "--scenario", "qadaptive-1056-ur0.5-MIN", "--json")
    assert proc.returncode == 0, proc.stderr
    (row,) = json.loads(proc.stdout)
    assert tuple(row) == FIELDS
    assert row["scenario"] == "qadaptive-1056-ur0.5-MIN"
    assert row["router_traversals"] > 0 and row["events"] > 0
    assert row["peak_rss_mb"] > 10
    assert row["sim_us"] >= 2.0
    assert row["cpu_s"] > 0
    per_traversal = row["cpu_s"] * 1e9 / row["router_traversals"]
    assert row["cpu_ns_per_router_traversal"] == pytest.approx(per_traversal)
    steal = row["host_steal_pct"]
    assert steal is None or 0.0 <= steal <= 100.0
    clocks = (row["host_ghz_before"], row["host_ghz_after"])
    if None not in clocks:
        assert all(0.2 < ghz < 8.0 for ghz in clocks), clocks
        mean = sum(clocks) / 2
        cpu_ns = row["cpu_ns_per_router_traversal"]
        # The row's clocks are rounded to 0.01 GHz but the cycles come from the unrounded
        # readings: their mean may differ by 0.005 GHz, i.e. by cpu_ns * 0.005 cycles, plus 0.5
        # from rounding the cycles to a whole number.
        slack = cpu_ns * 0.005 + 0.5
        assert row["cycles_per_router_traversal"] == pytest.approx(cpu_ns * mean, abs=slack)
    # scripts/setup.sh builds with PGO where llvm-profdata exists (DFLAB_PGO=0 opts out).
    assert row["engine_build"] in ("release", "release+pgo")


def test_bench_repeat_reports_the_median_run_and_the_spread() -> None:
    name = "qadaptive-1056-ur0.5-MIN"
    proc = run_cli("bench", "--quick", "--scenario", name, "--repeat", "3", "--json")
    assert proc.returncode == 0, proc.stderr
    (row,) = json.loads(proc.stdout)
    assert tuple(row) == FIELDS
    assert row["repeats"] == 3
    low, mid, high = (row[f"ns_per_router_traversal{k}"] for k in ("_min", "", "_max"))
    assert 0 < low <= mid <= high


def test_median_row_picks_the_middle_run() -> None:
    runs = [{"ns_per_router_traversal": ns, "tag": tag} for ns, tag in ((300, "a"), (100, "b"))]
    runs.append({"ns_per_router_traversal": 200, "tag": "c"})
    row = median_row(runs)
    assert (row["tag"], row["repeats"]) == ("c", 3)
    assert (row["ns_per_router_traversal_min"], row["ns_per_router_traversal_max"]) == (100, 300)
    # An even count takes the lower middle run (never a mean: the row is one real run).
    assert median_row(runs[:2])["tag"] == "b"
    assert median_row(runs[:1])["repeats"] == 1


def test_bench_table_names_every_scenario_in_full() -> None:
    # The scenarios share a long prefix: a name cut short would make the rows indistinguishable.
    names = ("qadaptive-1056-ur0.5-MIN", "qadaptive-1056-ur0.5-VALn")
    args = [arg for name in names for arg in ("--scenario", name)]
    proc = run_cli("bench", "--quick", *args)
    assert proc.returncode == 0, proc.stderr
    for name in names:
        assert name in proc.stdout, proc.stdout
    assert "engine release" in proc.stdout


def _flat(data: dict, prefix: str = "") -> dict[str, object]:
    flat: dict[str, object] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            flat.update(_flat(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


@pytest.mark.parametrize("name", [None, "qadaptive-1056", "qadaptive-2550", "sc22-1056"])
def test_engine_accepts_python_config_unchanged(name: str | None) -> None:
    experiment = validate(Experiment, {"preset": name} if name else {})
    ours = _flat(experiment.engine_dict())
    normalised = _flat(engine.validate(experiment.to_engine_json()))
    assert {key: normalised.get(key) for key in ours} == ours


def test_python_models_are_generated_from_the_engines_schema() -> None:
    from dflab import schema_gen

    # The committed schema is the engine's, and the models and docs are generated from it:
    # the keys, types, defaults and ranges Python checks cannot drift from the engine's.
    assert schema_gen.main(["--check"]) == 0
    engine_defaults = _flat(engine.validate("{}"))
    python_defaults = _flat(Experiment().engine_dict())
    assert {key: engine_defaults[key] for key in python_defaults} == python_defaults


# One VC for Valiant routing under adversarial full load: the deadlock study the `vcs` key is for.
DEADLOCK_ARGS = [
    "--set", "routing.vcs=1", "--set", "run.watchdog_us=5", "--set", "run.warmup_us=2",
    "--set", "run.measure_us=100", "--set", "traffic.pattern=adv+1", "--set", "traffic.load=1.0",
]  # fmt: skip


def test_deadlock_in_run_is_one_error_line_exit_1(tiny_file: Path) -> None:
    proc = run_cli("run", str(tiny_file), "--routing", "VALn", *DEADLOCK_ARGS)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith("error: deadlock")
    assert proc.stdout == ""


def test_deadlocked_sweep_point_is_reported_and_exit_1(tiny_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "res"
    proc = run_cli("sweep", str(tiny_file), "--routings", "VALn", *DEADLOCK_ARGS, "--out", str(out))
    assert proc.returncode == 1, proc.stderr
    assert "failed: VALn adv+1 load 1 seed 3: DeadlockError" in proc.stderr
    assert "error: 1 of 1 points failed" in proc.stderr
    assert len(list((out / "failed").glob("*.json"))) == 1


def test_python_knows_every_routing_the_engine_implements() -> None:
    from dflab import _core
    from dflab.config import ROUTING_ALGORITHMS

    # The Python list serves validation without a compiled engine; it must not drift.
    assert tuple(_core.routing_names()) == ROUTING_ALGORITHMS


@pytest.mark.parametrize(
    "topology",
    [{}, {"g": 9}, {"g": 10}, {"g": 2}, {"a": 4, "h": 2, "g": 4}, {"g": 9, "links_per_pair": 1}],
)
def test_the_canonical_form_has_the_links_the_engine_builds(topology: dict) -> None:
    experiment = validate(Experiment, {"topology": topology})
    canonical = experiment.canonical()["topology"]
    facts = engine.topology_info(experiment.to_engine_json())
    assert (facts["groups"], facts["links_per_pair"]) == (
        canonical["g"],
        canonical["links_per_pair"],
    )
    # The canonical form is itself a valid experiment with the same canonical form.
    assert validate(Experiment, experiment.canonical()).canonical() == experiment.canonical()


def test_steady_warmup_and_saturation_stop_reach_the_summary() -> None:
    """`run.steady_warmup` reports where the measurement started; `run.stop_when_saturated`
    stops a saturated run and says so (tests/steady_state.rs checks the rules)."""
    steady = simulate(
        TINY.model_copy(
            update={
                "run": TINY.run.model_copy(
                    update={"warmup_us": 40.0, "measure_us": 3.0, "steady_warmup": True}
                )
            }
        )
    ).summary
    assert steady.measure_start_us is not None and 10.0 <= steady.measure_start_us < 40.0
    assert steady.sim_time_us == pytest.approx(steady.measure_start_us + 3.0)
    assert steady.stopped is None
    saturated = simulate(
        TINY.model_copy(
            update={
                "traffic": TINY.traffic.model_copy(update={"pattern": "adv+1", "load": 0.6}),
                "run": TINY.run.model_copy(
                    update={"warmup_us": 2.0, "measure_us": 100.0, "stop_when_saturated": True}
                ),
            }
        )
    ).summary
    assert saturated.stopped == "saturated" and saturated.sim_time_us < 30.0
    assert TINY.run.steady_warmup is False and simulate(TINY).summary.measure_start_us is None
