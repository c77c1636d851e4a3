"""Output paths of `dflab run --series-out` and `dflab plot --out` (newcomer #7, #23).

A bad output path is one `error:` line naming the option, exit 2, found before any work: a path
under a file, an unsupported suffix, a directory, a directory no file can be made in. A figure
named without a suffix is written as .png and reported under the name written.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dflab.config import Experiment
from dflab.loading import SweepSpec, validate
from dflab.store import Store
from dflab.sweep import expand, run_sweep
from fakes import fake_result
from helpers import assert_user_error, inline_executor, requires_engine, run_cli

# A run of minutes: a path problem found after it would time the test out.
LONG_RUN = ("run", "--preset", "qadaptive-1056", "--warmup-us", "0", "--measure-us", "2000")


@pytest.fixture
def a_file(tmp_path: Path) -> Path:
    path = tmp_path / "notes.md"
    path.write_text("not a directory\n")
    return path


@pytest.fixture
def unwritable_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory in which no file can be made."""
    if os.geteuid() != 0:
        directory = tmp_path / "read-only"
        directory.mkdir()
        directory.chmod(0o555)
        yield directory
        directory.chmod(0o755)
        return
    # root ignores permission bits; sysfs refuses new files even to root.
    try:
        (Path("/sys") / "dflab-test-probe").touch()
    except OSError:
        yield Path("/sys")
        return
    pytest.skip("no directory here refuses new files to this user")


@pytest.fixture
def store(tmp_path: Path) -> Store:
    base = validate(Experiment, {"topology": {"p": 2, "a": 4, "h": 2}})
    spec = SweepSpec(routings=["MIN"], traffics=["ur"], loads=[0.1, 0.5], seeds=[1])
    result = Store(tmp_path / "res")
    run_sweep(
        expand(base, spec), result, runner=fake_result, executor_factory=inline_executor, jobs=1
    )
    return result


def _run_fails_fast(tmp_path: Path, series_out: str, *needles: str) -> None:
    start = time.monotonic()
    proc = run_cli(*LONG_RUN, "--series-out", series_out, cwd=tmp_path, timeout=60)
    assert_user_error(proc, f"--series-out '{series_out}'", *needles)
    assert time.monotonic() - start < 30, "the path must be checked before the run"


def test_series_out_under_a_file(tmp_path: Path, a_file: Path) -> None:
    _run_fails_fast(tmp_path, "notes.md/x.csv", "not a directory", "'notes.md' is a file")
    _run_fails_fast(tmp_path, "notes.md/a/b/x.csv", "not a directory")


def test_series_out_in_an_unwritable_directory(tmp_path: Path, unwritable_dir: Path) -> None:
    _run_fails_fast(tmp_path, str(unwritable_dir / "x.csv"), f"cannot write in '{unwritable_dir}'")


def test_series_out_that_is_a_directory(tmp_path: Path) -> None:
    (tmp_path / "series.csv").mkdir()
    _run_fails_fast(tmp_path, "series.csv", "is a directory")


def test_series_out_suffix(tmp_path: Path) -> None:
    _run_fails_fast(tmp_path, "x.txt", "unsupported file type ('.txt')", ".csv, .parquet")


@requires_engine
def test_series_out_that_cannot_be_written_after_the_run(tmp_path: Path) -> None:
    """A full disk after the run: still one line naming the option (no traceback)."""
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    (tmp_path / "full.parquet").symlink_to("/dev/full")
    args = ("run", "--preset", "qadaptive-1056", "--warmup-us", "0", "--measure-us", "0.5")
    proc = run_cli(*args, "--series-out", "full.parquet", "--json", cwd=tmp_path)
    assert_user_error(proc, "--series-out 'full.parquet'", "could not be written")


@requires_engine
def test_series_out_makes_missing_directories(tmp_path: Path) -> None:
    args = ("run", "--preset", "qadaptive-1056", "--warmup-us", "0", "--measure-us", "1")
    proc = run_cli(*args, "--series-out", "new/dir/s.CSV", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "new/dir/s.CSV").read_text().startswith("window_start_us")


@pytest.mark.parametrize(
    ("out", "needles"),
    [
        ("notes.md/fig.png", ["not a directory", "'notes.md' is a file"]),
        ("x.txt", ["unsupported file type ('.txt')", ".pdf", ".png", ".svg"]),
    ],
)
def test_plot_out_refused(
    tmp_path: Path, a_file: Path, store: Store, out: str, needles: list[str]
) -> None:
    proc = run_cli("plot", str(store.root), "--out", out, cwd=tmp_path)
    assert_user_error(proc, f"--out '{out}'", *needles)
    assert not (tmp_path / out).exists()


def test_plot_out_in_an_unwritable_directory(
    tmp_path: Path, store: Store, unwritable_dir: Path
) -> None:
    out = str(unwritable_dir / "fig.png")
    assert_user_error(run_cli("plot", str(store.root), "--out", out), "--out", "cannot write in")


def test_plot_pdf_is_checked_too(tmp_path: Path, store: Store) -> None:
    """--pdf's file is checked like the figure's, before anything is written."""
    (tmp_path / "fig.pdf").mkdir()
    proc = run_cli("plot", str(store.root), "--out", "fig.png", "--pdf", cwd=tmp_path)
    assert_user_error(proc, "--out 'fig.pdf': is a directory")
    assert not (tmp_path / "fig.png").exists()


def test_plot_out_without_suffix_is_the_png_written(tmp_path: Path, store: Store) -> None:
    proc = run_cli("plot", str(store.root), "--out", "figs/fig", "--pdf", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["plot:", "figs/fig.png", "plot:", "figs/fig.pdf"]
    assert (tmp_path / "figs/fig.png").read_bytes().startswith(b"\x89PNG")
    assert (tmp_path / "figs/fig.pdf").read_bytes().startswith(b"%PDF")
    assert not (tmp_path / "figs/fig").exists()


def test_plot_pdf_out_with_pdf_flag_is_written_once(tmp_path: Path, store: Store) -> None:
    proc = run_cli("plot", str(store.root), "--out", "fig.pdf", "--pdf", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["plot:", "fig.pdf"]


def test_output_directory_check(tmp_path: Path, a_file: Path, unwritable_dir: Path) -> None:
    """For a result store's directory (dflab sweep --out): the same problems, one message."""
    from dflab.errors import UserError
    from dflab.outputs import check_output_dir

    assert check_output_dir("--out", tmp_path / "new" / "store") == tmp_path / "new" / "store"
    cases = {
        a_file / "x": f"--out '{a_file / 'x'}': not a directory ('{a_file}' is a file)",
        a_file: f"--out '{a_file}': not a directory",
        unwritable_dir / "store": f"--out '{unwritable_dir / 'store'}': cannot write in",
    }
    for path, message in cases.items():
        with pytest.raises(UserError) as caught:
            check_output_dir("--out", path)
        assert caught.value.message.startswith(message), caught.value.message
