"""Sweeps over any config key: axes, zips, point lists and seeds from TOML and the CLI; the
summary's per-point means and 95 % confidence intervals over seeds, in the table and the plot."""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl
import pytest

import dflab
from dflab.config import Experiment
from dflab.errors import UserError
from dflab.loading import SweepSpec, load_experiment_file, sweep_spec, validate, with_overrides
from dflab.plots import latency_throughput_figure, store_figure
from dflab.stats import ci_half_width, t_quantile
from dflab.store import Store
from dflab.sweep import expand, run_sweep
from fakes import fake_result
from helpers import TINY_TOML, assert_user_error, inline_executor, requires_engine, run_cli

BASE = validate(
    Experiment,
    {"name": "ax", "topology": {"p": 2, "a": 4, "h": 2}, "routing": {"algorithm": "UGALn"}},
)


def _spec(text: str) -> SweepSpec:
    import tomllib

    return sweep_spec(tomllib.loads(text)["sweep"])


def test_points_may_set_the_keys_of_the_four_lists() -> None:
    """A point's load, pattern or seed stays when the list of that key is not given (the
    experiment's own value is no axis that would override it)."""
    spec = _spec(
        """
        [sweep]
        routings = ["MIN"]
        points = [{ "traffic.pattern" = "ur", "traffic.load" = 0.7, seed = 4 },
                  { "traffic.pattern" = "adv+1", "traffic.load" = 0.45 }]
        """
    )
    coords = [(p.coords["traffic"], p.coords["load"], p.coords["seed"]) for p in expand(BASE, spec)]
    assert coords == [("ur", 0.7, 4), ("adv+1", 0.45, BASE.seed)]


def test_axes_zips_points_and_seeds_cross_in_order() -> None:
    spec = _spec(
        """
        [sweep]
        routing = { adaptive_threshold = [1.0, 2.0] }
        "network.global_latency_ns" = [100, 300]
        zip = [{ "network.local_latency_ns" = [10, 20], "network.host_latency_ns" = [5, 6] }]
        points = [{ "run.warmup_us" = 3.0 }, { run = { warmup_us = 4.0 } }]
        seeds = 3
        """
    )
    assert spec.seed_count == 3 and spec.axes is not None and spec.zips is not None
    points = expand(BASE, spec)
    assert len(points) == 2 * 2 * 2 * 2 * 3
    first = points[0].coords
    assert first == {
        "routing": "UGALn", "traffic": "ur", "load": BASE.traffic.load, "seed": 1,
        "routing.adaptive_threshold": 1.0, "network.global_latency_ns": 100.0,
        "network.local_latency_ns": 10.0, "network.host_latency_ns": 5.0, "run.warmup_us": 3.0,
    }  # fmt: skip
    # Seeds vary fastest, from the experiment's own; a zip's keys move together.
    assert [p.coords["seed"] for p in points[:3]] == [1, 2, 3]
    pairs = {
        (p.coords["network.local_latency_ns"], p.coords["network.host_latency_ns"]) for p in points
    }
    assert pairs == {(10.0, 5.0), (20.0, 6.0)}
    assert points[0].experiment.network.global_latency_ns == 100
    assert "routing.adaptive_threshold=1" in points[0].label()


def test_aliases_and_dedupe_of_parameters_another_routing_lacks() -> None:
    spec = _spec(
        """
        [sweep]
        "routing.algorithm" = ["MIN", "UGALn"]
        "traffic.load" = [0.2]
        "routing.adaptive_threshold" = [1.0, 2.0]
        seed = [7]
        """
    )
    assert spec.routings == ["MIN", "UGALn"] and spec.loads == [0.2] and spec.seeds == [7]
    points = expand(BASE, spec)
    # MIN has no adaptive threshold: its two points are one, with no value for the key.
    assert [(p.coords["routing"], p.coords["routing.adaptive_threshold"]) for p in points] == [
        ("MIN", None), ("UGALn", 1.0), ("UGALn", 2.0),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("sweep", "message"),
    [
        (
            '"routing.bogus" = [1]',
            "sweep.routing.bogus.0: unknown key; allowed keys: active_threshold, ",
        ),
        (
            '"network.global_latency_ns" = [100, -5]',
            "sweep.network.global_latency_ns.1: -5 is out of range; allowed: 0 to",
        ),
        (
            '"network.timing" = ["sst", "fast"]',
            "sweep.network.timing.1: 'fast' is not allowed; allowed: link-busy, sst, booksim",
        ),
        ('"run.warmup_us" = 3.0', "sweep.run.warmup_us: expected a list of values"),
        ('"run.warmup_us" = []', "sweep.run.warmup_us: empty list"),
        ('name = ["a", "b"]', "sweep.name: cannot be swept"),
        ('loads = [0.1]\n"traffic.load" = [0.2]', "sweep.traffic.load: the same axis as loads"),
        (
            'zip = [{ "run.warmup_us" = [1.0, 2.0], "run.measure_us" = [3.0] }]',
            "sweep.zip.0: the lists of a zip need one length",
        ),
        ("seeds = 0", "sweep.seed_count: 0 is out of range"),
        ('seeds = "5:1"', "LAST is smaller than FIRST"),
    ],
)
def test_bad_axes_are_one_error_naming_the_key(sweep: str, message: str) -> None:
    with pytest.raises(UserError) as error:
        expand(BASE, _spec(f"[sweep]\n{sweep}\n"))
    assert message in error.value.message


def test_sweep_settings_stay_out_of_the_point_key(tmp_path: Path) -> None:
    path = tmp_path / "e.toml"
    path.write_text(
        TINY_TOML
        + '\n[sweep]\n"routing.adaptive_threshold" = [1.0]\nseeds = 2\n\n[cluster]\nretries = 1\n'
    )
    with_sweep, _ = load_experiment_file(path)
    plain = tmp_path / "p.toml"
    plain.write_text(TINY_TOML)
    assert with_sweep.content_hash() == load_experiment_file(plain)[0].content_hash()


def test_student_t_and_intervals_match_the_tables() -> None:
    for df, value in [
        (1, 12.7062047),
        (2, 4.3026527),
        (4, 2.7764451),
        (10, 2.2281389),
        (30, 2.0422725),
        (120, 1.9799304),
    ]:
        assert t_quantile(0.975, df) == pytest.approx(value, abs=1e-6)
    values = [10.0, 12.0, 11.0, 13.0]
    sd = math.sqrt(sum((v - 11.5) ** 2 for v in values) / 3)
    assert ci_half_width(values) == pytest.approx(3.1824463 * sd / 2, rel=1e-7)
    assert ci_half_width([4.0]) is None


def _seeded(config_json: str) -> dict:
    """fake_result whose latency depends on the seed and the global latency."""
    import json

    result = fake_result(config_json)
    config = json.loads(config_json)
    result["summary"]["latency_mean_ns"] = (
        config["network"]["global_latency_ns"] + 10 * config["seed"]
    )
    return result


def test_a_store_takes_points_that_differ_in_swept_keys(tmp_path: Path) -> None:
    store = Store(tmp_path / "res")
    spec = SweepSpec(loads=[0.3], seed_count=3, axes={"network.global_latency_ns": [100, 300]})
    points = expand(BASE, spec)
    run_sweep(points, store, jobs=1, runner=_seeded, executor_factory=inline_executor)
    summary = pl.read_parquet(store.root / "summary.parquet")
    assert summary.columns[:7] == [
        "hash",
        "name",
        "routing",
        "traffic",
        "load",
        "seed",
        "network.global_latency_ns",
    ]
    assert summary["network.global_latency_ns"].to_list() == [100.0] * 3 + [300.0] * 3
    means = pl.read_csv(store.root / "aggregate.csv")
    assert means["seeds"].to_list() == [3, 3]
    assert means["latency_mean_ns_mean"].to_list() == [120.0, 320.0]
    # Seeds 1, 2, 3: latencies x + 10, x + 20, x + 30: s = 10, half-width t(0.975, 2) 10 / sqrt 3.
    assert means["latency_mean_ns_ci95"].to_list() == pytest.approx(
        [4.3026527 * 10 / math.sqrt(3)] * 2
    )
    assert dflab.load_results(store.root).equals(summary)
    # Another value of the swept key joins the store; a key not swept is still compared.
    more = expand(
        BASE, SweepSpec(loads=[0.3], seeds=[1], axes={"network.global_latency_ns": [200]})
    )
    assert run_sweep(more, store, jobs=1, runner=_seeded, executor_factory=inline_executor).ran == 1
    other = with_overrides(BASE, {"network.local_latency_ns": 50})
    spec = SweepSpec(loads=[0.3], axes={"network.global_latency_ns": [500]})
    with pytest.raises(UserError, match=r"^network\.local_latency_ns: 50\.0 differs from 30\.0"):
        run_sweep(expand(other, spec), store, runner=_seeded, executor_factory=inline_executor)


def test_the_plot_draws_the_swept_key_with_interval_bars(tmp_path: Path) -> None:
    store = Store(tmp_path / "res")
    spec = SweepSpec(
        routings=["MIN", "UGALn"],
        loads=[0.3],
        seed_count=3,
        axes={"network.global_latency_ns": [100, 200, 400]},
    )
    run_sweep(expand(BASE, spec), store, jobs=1, runner=_seeded, executor_factory=inline_executor)
    figure = store_figure(store)
    latency = figure.get_axes()[0]
    assert (
        latency.get_xlabel() == ""
        and figure.get_axes()[1].get_xlabel() == "network.global_latency_ns"
    )
    assert "offered load 0.3" in figure._suptitle.get_text()
    lines = {str(line.get_label()): line for line in latency.get_lines()}
    assert list(lines["MIN"].get_xdata()) == [100.0, 200.0, 400.0]
    assert list(lines["MIN"].get_ydata()) == pytest.approx([0.12, 0.22, 0.42])
    # One bar container per curve: mean ± t(0.975, 2) s / sqrt 3 with s = 10 ns.
    half = 4.3026527 * 10 / math.sqrt(3) / 1000
    for bars in latency.containers:
        spans = [(b[1] - a[1]) / 2 for a, b in bars.lines[2][0].get_segments()]
        assert spans == pytest.approx([half] * 3)
    # Loads as the x axis, the other swept key in the curve's name.
    two = Store(tmp_path / "two")
    spec = SweepSpec(loads=[0.2, 0.4], axes={"network.global_latency_ns": [100, 200]})
    run_sweep(expand(BASE, spec), two, jobs=1, runner=_seeded, executor_factory=inline_executor)
    names = {
        str(line.get_label())
        for line in latency_throughput_figure(two.summary_frame()).get_axes()[0].get_lines()
    }
    assert {"UGALn global_latency_ns=100.0", "UGALn global_latency_ns=200.0"} <= names


def test_cli_axes_zips_and_seed_ranges(tmp_path: Path) -> None:
    from dflab.cli import _sweep_spec

    spec = _sweep_spec(
        SweepSpec(axes={"run.warmup_us": [1.0], "network.global_latency_ns": [100]}),
        [
            "network.global_latency_ns=100:300:100",
            'network.timing=["sst", "booksim"]',
            "traffic.load=0.1,0.2",
        ],
        ["network.local_latency_ns=10,20;network.host_latency_ns=5,6"],
        None,
        loads=None, routings=None, traffics=None, seeds="3:5",
    )  # fmt: skip
    assert spec.axes == {
        "run.warmup_us": [1.0],
        "network.global_latency_ns": [100, 200, 300],
        "network.timing": ["sst", "booksim"],
    }
    assert spec.zips == [{"network.local_latency_ns": [10, 20], "network.host_latency_ns": [5, 6]}]
    assert spec.loads == [0.1, 0.2] and spec.seeds == [3, 4, 5]


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (
            ["--axis", "routing.bogus=1,2"],
            ["sweep.routing.bogus.0: unknown key; allowed keys: active_threshold, "],
        ),
        (
            ["--axis", "network.timing=sst,fast"],
            ["sweep.network.timing.1: 'fast' is not allowed; allowed: link-busy, sst, booksim"],
        ),
        (["--axis", "network.timing"], ["--axis 'network.timing': expected KEY=V1,V2"]),
        (
            ["--zip", "run.warmup_us=1,2;run.measure_us=3"],
            ["--zip.zip.0: the lists of a zip need one length"],
        ),
        (["--seeds", "1:x"], ["--seeds '1:x': expected integers"]),
        (["--seeds", "1,2", "--seed-count", "3"], ["--seeds and --seed-count: give one of them"]),
        (["--backend", "spark"], ["--backend: 'spark' is not allowed; allowed: local, dask"]),
    ],
)
def test_cli_errors_name_the_key_and_the_allowed_values(
    tmp_path: Path, args: list[str], needles: list[str]
) -> None:
    (tmp_path / "tiny.toml").write_text(TINY_TOML)
    assert_user_error(run_cli("sweep", "tiny.toml", *args, cwd=tmp_path), *needles)


SWEEP_TOML = (
    TINY_TOML.replace('name = "tiny"', 'name = "latency-study"')
    + """
[sweep]
routings = ["MIN", "UGALn"]
"network.global_latency_ns" = [100, 400]
seeds = 3
"""
)


@requires_engine
def test_a_sweep_over_a_non_load_key_and_seeds_from_toml_has_intervals_in_table_and_plot(
    tmp_path: Path,
) -> None:
    (tmp_path / "study.toml").write_text(SWEEP_TOML)
    proc = run_cli("sweep", "study.toml", "--jobs", "2", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "sweep: 12 points" in proc.stderr
    assert "mean ± 95 % confidence interval over seeds" in proc.stdout
    rows = [line for line in proc.stdout.splitlines() if line.startswith("│ ")]
    assert len(rows) == 4 and all(line.count("±") == 5 for line in rows), proc.stdout
    print(proc.stdout)
    root = tmp_path / "results" / "latency-study"
    summary = pl.read_csv(root / "summary.csv")
    assert summary.height == 12 and sorted(set(summary["seed"])) == [3, 4, 5]
    means = pl.read_csv(root / "aggregate.csv")
    print(
        means.select(
            "routing",
            "network.global_latency_ns",
            "seeds",
            "latency_mean_ns_mean",
            "latency_mean_ns_ci95",
            "accepted_load_mean",
            "accepted_load_ci95",
        )
    )
    assert means["seeds"].to_list() == [3] * 4
    assert means["network.global_latency_ns"].to_list() == [100.0, 400.0] * 2
    for row in means.iter_rows(named=True):
        values = summary.filter(
            (pl.col("routing") == row["routing"])
            & (pl.col("network.global_latency_ns") == row["network.global_latency_ns"])
        )["latency_mean_ns"].to_list()
        assert row["latency_mean_ns_ci95"] == pytest.approx(ci_half_width(values))
        assert row["latency_mean_ns_ci95"] > 0
    # Longer global links, longer latency: the means are 300 ns apart, far beyond the intervals.
    mins = means.filter(pl.col("routing") == "MIN")["latency_mean_ns_mean"].to_list()
    assert mins[1] - mins[0] > 250
    plot = run_cli("plot", str(root), cwd=tmp_path)
    assert plot.returncode == 0, plot.stderr
    figure = store_figure(Store(root))
    latency = figure.get_axes()[0]
    assert figure.get_axes()[-1].get_xlabel() == "network.global_latency_ns"
    assert len(latency.containers) == 2  # one set of interval bars per routing
    assert "3 seeds per point (mean; bars: 95 % CI)" in figure._suptitle.get_text()
