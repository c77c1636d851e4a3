"""Plots from a synthetic result store (fake runner, no engine)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from dflab.config import Experiment
from dflab.errors import UserError
from dflab.loading import SweepSpec, validate
from dflab.plot_style import routing_styles
from dflab.plots import _curve_labels, latency_throughput_figure, plot_store, store_figure
from dflab.store import Store
from dflab.sweep import expand, run_sweep
from fakes import fake_result
from helpers import inline_executor, requires_engine, run_cli


@pytest.fixture
def store(tmp_path: Path) -> Store:
    base = validate(Experiment, {"topology": {"p": 2, "a": 4, "h": 2}})
    spec = SweepSpec(
        routings=["MIN", "VALn"], traffics=["ur", "adv+1"], loads=[0.1, 0.5, 0.9], seeds=[1, 2]
    )
    result = Store(tmp_path / "res")
    run_sweep(
        expand(base, spec), result, runner=fake_result, executor_factory=inline_executor, jobs=1
    )
    return result


def test_png_and_pdf_are_written(store: Store, tmp_path: Path) -> None:
    written = plot_store(store.root, tmp_path / "out" / "fig.png", pdf=True)
    assert [p.name for p in written] == ["fig.png", "fig.pdf"]
    png, pdf = (p.read_bytes() for p in written)
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 10_000
    assert pdf.startswith(b"%PDF")


def _lines(ax: Any, label: str) -> list[Any]:
    """The lines labelled `label` ('MIN'), or whose label ends in `label` ('saturated')."""
    return [line for line in ax.get_lines() if str(line.get_label()).endswith(label)]


def test_one_column_per_traffic_rows_per_metric(store: Store) -> None:
    figure = latency_throughput_figure(store.summary_frame(), p99=True)
    axes = figure.get_axes()
    assert len(axes) == 6  # mean latency, p99 latency, accepted x 2 traffics
    assert [ax.get_title() for ax in axes[:2]] == ["UR", "ADV+1"]
    assert [ax.get_ylabel() for ax in axes[::2]] == [
        "mean packet latency (µs)", "p99 packet latency (µs)", "accepted load",
    ]  # fmt: skip
    # Seeds are averaged: one x per load on each curve; VALn accepts at most 0.45.
    (min_line,) = _lines(axes[4], "MIN")
    (valn_line,) = _lines(axes[4], "VALn")
    assert list(min_line.get_xdata()) == [0.1, 0.5, 0.9]
    assert list(valn_line.get_ydata()) == [0.1, 0.45, 0.45]


def test_routings_differ_in_marker_and_line_style(store: Store) -> None:
    figure = latency_throughput_figure(store.summary_frame())
    ax = figure.get_axes()[0]
    curves = _lines(ax, "MIN") + _lines(ax, "VALn")
    points = _lines(ax, "points") + _lines(ax, "saturated")
    assert len({line.get_linestyle() for line in curves}) == 2
    assert {line.get_marker() for line in points} == {"o", "s"}
    style = routing_styles(["MIN", "VALn", "UGALn", "PAR", "Q-adaptive", "Q-routing", "X"])
    assert len({(s.marker, str(s.linestyle)) for s in style.values()}) == 7


def test_saturated_points_are_hollow(store: Store) -> None:
    """fake_result: MIN carries up to 0.6, VALn 0.45: saturated are MIN 0.9, VALn 0.5 and 0.9."""
    figure = latency_throughput_figure(store.summary_frame())
    accepted_ax = figure.get_axes()[2]
    hollow = sorted(
        (float(x), line.get_color())
        for line in _lines(accepted_ax, "saturated")
        if line.get_markerfacecolor() == "white"
        for x in line.get_xdata()
    )
    assert hollow == [(0.5, "C1"), (0.9, "C0"), (0.9, "C1")]
    labels = [text.get_text() for text in figure.legends[0].get_texts()]
    assert labels == ["MIN", "VALn", "saturated: accepted < 95% of offered"]


def _seeded(config_json: str) -> dict[str, Any]:
    """fake_result with a latency that grows with the seed (seeds 1, 2: +10 %, +20 %)."""
    result = fake_result(config_json)
    result["summary"]["latency_mean_ns"] *= 1 + json.loads(config_json)["seed"] / 10
    return result


def _sweep(root: Path, seeds: list[int]) -> Store:
    base = validate(Experiment, {"topology": {"p": 2, "a": 4, "h": 2}})
    spec = SweepSpec(routings=["MIN"], traffics=["ur"], loads=[0.1, 0.5], seeds=seeds)
    store = Store(root)
    run_sweep(expand(base, spec), store, runner=_seeded, executor_factory=inline_executor, jobs=1)
    return store


def test_several_seeds_get_confidence_interval_bars(tmp_path: Path) -> None:
    one = latency_throughput_figure(_sweep(tmp_path / "one", [1]).summary_frame())
    assert one.get_axes()[0].containers == []
    two = latency_throughput_figure(_sweep(tmp_path / "two", [1, 2]).summary_frame())
    (bars,) = two.get_axes()[0].containers
    spans = [(a[1], b[1]) for a, b in bars.lines[2][0].get_segments()]
    # MIN's fake latency: 1000 ns / (1 - load / 1.1), x 1.1 (seed 1) and x 1.2 (seed 2), in µs.
    # Two seeds a, b: mean ± t(0.975, 1) |a - b| / 2, t(0.975, 1) = 12.7062047 (tables).
    # A lower end at or below 0 would be cut at a tenth of the mean (log axis).
    pairs = [(1.21, 1.32), (1.1 / (1 - 0.5 / 1.1), 1.2 / (1 - 0.5 / 1.1))]
    for span, (a, b) in zip(spans, pairs, strict=True):
        mean, half = (a + b) / 2, 12.7062047 * (b - a) / 2
        assert span == pytest.approx((max(mean / 10, mean - half), mean + half), rel=1e-6)


def test_title_names_network_windows_and_seeds(store: Store) -> None:
    title = store_figure(store)._suptitle.get_text()
    assert "dfly(2,4,2,9) absolute, 72 nodes" in title
    assert "warm-up 20 µs, measured 50 µs" in title
    assert "2 seeds per point (mean; bars: 95 % CI)" in title


@requires_engine
def test_title_names_the_preset(tmp_path: Path) -> None:
    base = validate(Experiment, {"preset": "qadaptive-1056", "name": "demo"})
    spec = SweepSpec(routings=["MIN"], traffics=["ur"], loads=[0.3], seeds=[1])
    result = Store(tmp_path / "res")
    run_sweep(
        expand(base, spec), result, runner=fake_result, executor_factory=inline_executor, jobs=1
    )
    title = store_figure(result)._suptitle.get_text()
    assert title.startswith("demo: dfly(4,8,4,33) absolute, 1056 nodes (preset qadaptive-1056)")
    assert title.endswith("· 1 seed")


def test_legend_is_outside_the_panels_with_p99(store: Store) -> None:
    figure = latency_throughput_figure(store.summary_frame(), p99=True, caption="x")
    figure.canvas.draw()
    assert all(ax.get_legend() is None for ax in figure.get_axes())
    (legend,) = figure.legends
    box = legend.get_window_extent()
    for ax in figure.get_axes():
        assert not box.overlaps(ax.get_window_extent()), ax.get_title()


def test_plot_cli_default_output(store: Store) -> None:
    proc = run_cli("plot", str(store.root))
    assert proc.returncode == 0, proc.stderr
    path = store.root / "latency_throughput.png"
    assert proc.stdout.strip() == f"plot: {path}"
    assert path.stat().st_size > 10_000


def test_empty_store_is_a_user_error(tmp_path: Path) -> None:
    Store(tmp_path / "empty").create()
    with pytest.raises(UserError, match="has no finished points"):
        plot_store(tmp_path / "empty")


# --- dflab.figures (paper-style figures), synthetic data only ---


def _png_ok(path: Path) -> None:
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 5_000


def test_load_curves_png(store: Store, tmp_path: Path) -> None:
    from dflab.figures import plot_load_curves

    out = tmp_path / "curves.png"
    figure = plot_load_curves(store, out, metrics=("latency_mean_ns", "accepted_load", "hops_mean"))
    _png_ok(out)
    assert len(figure.axes) == 3 * 2  # 3 metrics x 2 traffics


def test_series_png(tmp_path: Path) -> None:
    import polars as pl

    from dflab.figures import plot_series

    start = [10.0 * i for i in range(20)]
    frame = pl.DataFrame(
        {
            "window_start_us": start,
            "window_end_us": [s + 10 for s in start],
            "latency_mean_ns": [600.0 + 50 * i for i in range(20)],
            "minimal_fraction": [1.0 - i / 20 for i in range(20)],
        }
    )
    out = tmp_path / "series.png"
    figure = plot_series(
        {"a": frame, "b": frame}, ("latency_mean_ns", "minimal_fraction"), out, marks_us=[100.0]
    )
    _png_ok(out)
    assert len(figure.axes) == 2


def test_latency_distribution_png(tmp_path: Path) -> None:
    from dflab.figures import plot_latency_distribution

    rows = [
        {
            "routing": routing,
            "traffic": traffic,
            "latency_mean_ns": 700.0 + i,
            "latency_p50_ns": 600.0,
            "latency_p95_ns": 1100.0,
            "latency_p99_ns": 1500.0 + 100 * i,
            "latency_max_ns": 4000.0,
        }
        for traffic in ("ur", "adv+1")
        for i, routing in enumerate(["Q-adaptive", "MIN", "PAR"])
    ]
    out = tmp_path / "dist.png"
    figure = plot_latency_distribution(rows, out)
    _png_ok(out)
    assert [ax.get_title() for ax in figure.axes] == ["UR", "ADV+1"]
    assert [t.get_text() for t in figure.axes[0].get_xticklabels()] == ["MIN", "PAR", "Q-adaptive"]


def test_latency_distribution_wraps_panels(tmp_path: Path) -> None:
    from dflab.figures import plot_latency_distribution

    rows = [
        {
            "routing": "MIN",
            "traffic": traffic,
            **{
                f"latency_{k}_ns": v
                for k, v in zip(
                    ("mean", "p50", "p95", "p99", "max"), (7, 6, 9, 12, 30), strict=True
                )
            },
        }
        for traffic in ("ur", "adv+1", "rn")
    ]
    out = tmp_path / "wrapped.png"
    figure = plot_latency_distribution(rows, out, columns=2)
    _png_ok(out)
    visible = [ax for ax in figure.axes if ax.get_visible()]
    assert len(figure.axes) == 4 and len(visible) == 3


def test_curves_of_sweeps_over_different_keys_are_labelled_by_their_own_keys() -> None:
    """One curve per (routing, value of its own swept key), and no label part for a key a
    point's sweep does not have (ACOR swept `routing.sequence`, VAL `routing.policy`)."""
    rows = [
        {"routing": "VAL", "load": 0.5, "routing.policy": p, "routing.sequence": None}
        for p in ("crg-gr", "crg-sw")
    ] + [
        {"routing": "ACOR", "load": 0.5, "routing.policy": None, "routing.sequence": q}
        for q in ("2LB", "3L")
    ]
    curves = _curve_labels(pl.DataFrame(rows), "load")["curve"].to_list()
    assert curves == [
        "VAL policy=crg-gr",
        "VAL policy=crg-sw",
        "ACOR sequence=2LB",
        "ACOR sequence=3L",
    ]


def test_campaign_load_curves_separate_the_values_of_a_swept_key() -> None:
    """A campaign's `load-curves` figure draws one line per routing and value of its swept
    key (VAL's policies, ACOR's sequences, MIN without one), not their average."""
    from dflab.figures import load_curves_figure

    rows = [
        {"routing": routing, "traffic": "ur", "load": load, "seed": 1, "routing.policy": policy,
         "routing.sequence": sequence, "latency_mean_ns": latency, "accepted_load": load}
        for routing, policy, sequence, latency in [
            ("MIN", None, None, 500.0), ("VAL", "crg-gr", None, 700.0),
            ("VAL", "rrg-sw", None, 900.0), ("ACOR", None, "3L", 750.0),
            ("ACOR", None, "2LB", 850.0),
        ]
        for load in (0.1, 0.3)
    ]  # fmt: skip
    figure = load_curves_figure(pl.DataFrame(rows), ["latency_mean_ns", "accepted_load"])
    latency = {
        str(line.get_label()): float(line.get_ydata()[-1])
        for line in figure.axes[0].get_lines()
        if not str(line.get_label()).startswith("_")
    }
    # µs: one line per routing and value, each at its own latency
    assert latency == pytest.approx(
        {
            "MIN": 0.5,
            "VAL policy=crg-gr": 0.7,
            "VAL policy=rrg-sw": 0.9,
            "ACOR sequence=3L": 0.75,
            "ACOR sequence=2LB": 0.85,
        }
    )
