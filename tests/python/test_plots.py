"""Plots from a synthetic result store (fake runner, no engine)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dflab.config import Experiment
from dflab.errors import UserError
from dflab.loading import SweepSpec, validate
from dflab.plots import latency_throughput_figure, plot_store
from dflab.store import Store
from dflab.sweep import expand, run_sweep
from fakes import fake_result
from helpers import inline_executor, run_cli


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


def test_one_column_per_traffic_one_line_per_routing(store: Store) -> None:
    figure = latency_throughput_figure(store.summary_frame(), p99=True)
    axes = figure.get_axes()
    assert len(axes) == 4
    assert [ax.get_title() for ax in axes[:2]] == ["UR", "ADV+1"]
    latency_labels = [line.get_label() for line in axes[0].get_lines()]
    assert latency_labels == ["MIN", "MIN p99", "VALn", "VALn p99"]
    dashed = [line.get_linestyle() for line in axes[0].get_lines()]
    assert dashed == ["-", "--", "-", "--"]
    # Seeds are averaged: one x per load on each curve.
    assert list(axes[2].get_lines()[0].get_xdata()) == [0.1, 0.5, 0.9]
    assert list(axes[2].get_lines()[1].get_ydata()) == [0.1, 0.45, 0.45]  # VALn accepted


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
