"""Campaign files (docs/studies.md): what a valid one plans at each size, and one field-named
error line for each kind of bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from dflab import studies
from dflab.campaign import load_campaign
from dflab.errors import UserError
from helpers import assert_user_error, run_cli

# dfly(2,4,2,9), 36 nodes: runs take milliseconds.
TINY = """\
[study]
title = "a tiny study"
paper = "nobody (2026)"

[base]
seed = 1
topology = { p = 2, a = 4, h = 2, g = 9 }
run = { warmup_us = 2.0, measure_us = 5.0, window_us = 1.0 }

[[sweeps]]
name = "min"
routings = ["MIN", "VALn"]
traffics = ["ur"]
loads = [0.2, 0.4, 0.6]
quick = { loads = [0.2], run = { measure_us = 3.0 } }

[[sweeps]]
name = "long"
routings = ["MIN"]
loads = [0.4]
run = { warmup_us = 4.0 }
quick = { skip = true }

[[figures]]
kind = "load-curves"
file = "curves.png"

[[checks]]
name = "MIN max throughput"
metric = "accepted_load"
where = { routing = "MIN" }
sweeps = ["min"]
reduce = "max"
paper = "0.6 * 1"
tolerance = "10%"
source = "made up"
"""


def _write(tmp_path: Path, text: str, name: str = "study.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_the_sizes_of_a_campaign(tmp_path: Path) -> None:
    campaign = load_campaign(_write(tmp_path, TINY))
    assert campaign.name == "study"
    full = campaign.plan("full")
    assert [s.name for s in full] == ["min", "long"]
    assert full[0].spec.loads == [0.2, 0.4, 0.6]
    assert full[0].experiment.run.measure_us == 5.0
    assert full[1].experiment.run.warmup_us == 4.0 and full[1].experiment.run.measure_us == 5.0
    assert full[0].experiment.name == "study-min"
    quick = campaign.plan("quick")
    # The quick table replaces the loads and one run key; the other run keys stay the base's.
    assert [s.name for s in quick] == ["min"]
    assert quick[0].spec.loads == [0.2]
    assert quick[0].experiment.run.measure_us == 3.0
    assert quick[0].experiment.run.warmup_us == 2.0


def test_overrides_apply_over_every_sweep_and_name_a_bad_key(tmp_path: Path) -> None:
    # `dflab reproduce --set`: over [base] and over a sweep's own keys alike.
    campaign = load_campaign(_write(tmp_path, TINY))
    items = ("network.output_buffer_flits=7", "run.warmup_us=1.5")
    planned = campaign.with_overrides(items).plan("full")
    assert [s.experiment.network.output_buffer_flits for s in planned] == [7, 7]
    assert [s.experiment.run.warmup_us for s in planned] == [1.5, 1.5]
    assert campaign.plan("full")[1].experiment.run.warmup_us == 4.0
    with pytest.raises(UserError, match=r"^--set network\.output_queue"):
        campaign.with_overrides(["network.output_queue=fifo"]).plan("full")
    out = run_cli("reproduce", str(tmp_path / "study.toml"), "--set", "network.output_queue=fifo")
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert "error: --set network.output_queue: 'fifo' is not allowed" in out.stderr


def _replace(old: str, new: str) -> str:
    """TINY with `old` replaced by `new` (appended when `old` is empty)."""
    if not old:
        return TINY + new
    assert old in TINY, old
    return TINY.replace(old, new, 1)


BAD = [
    # (what is changed, the words the one error line must hold)
    (("loads = [0.2, 0.4, 0.6]", "lods = [0.2]"), ["sweeps.0.lods: unknown key", "loads"]),
    (("loads = [0.2, 0.4, 0.6]", "loads = [0.2, 1.4]"), ["sweeps.0.loads.1", "1.4"]),
    (("run = { warmup_us = 4.0 }", "run = { warmup_us = -4.0 }"), ["sweeps.1.run.warmup_us"]),
    (("topology = { p = 2,", "topology = { p = 'two',"), ["base.topology.p", "'two'"]),
    (('routings = ["MIN", "VALn"]', 'routings = ["MIN", "UGAL"]'), ["sweeps.0.routings.1"]),
    (("quick = { skip = true }", "quick = { skip = true, lods = 1 }"), ["sweeps.1.quick.lods"]),
    (("quick = { loads = [0.2],", "quick = { loads = [2.0],"), ["sweeps.0.quick.loads.0"]),
    (('name = "long"', 'name = "min"'), ["sweeps.1.name", "'min'", "sweeps.0"]),
    (('name = "long"', 'name = "a/b"'), ["sweeps.1.name", "'a/b'"]),
    (('sweeps = ["min"]', 'sweeps = ["mni"]'), ["checks.0.sweeps.0", "'mni'", "min, long"]),
    (('paper = "0.6 * 1"', 'paper = "0.6 * x"'), ["checks.0.paper", "'0.6 * x'", "arithmetic"]),
    (('paper = "0.6 * 1"', 'paper = "__import__(1)"'), ["checks.0.paper"]),
    (('tolerance = "10%"', 'tolerance = "ten"'), ["checks.0.tolerance", "'ten'"]),
    (('tolerance = "10%"\n', ""), ["checks.0.tolerance: required key is missing"]),
    (('metric = "accepted_load"', 'metric = "throughput"'), ["checks.0.metric", "'throughput'"]),
    (('reduce = "max"', 'reduce = "mean"'), ["checks.0.reduce", "'mean'", "one, max, min"]),
    (('reduce = "max"', 'reduce = "max"\nrank = "lowest"'), ["checks.0.among: required key"]),
    (('where = { routing = "MIN" }', 'where = { rooting = "MIN" }'), ["checks.0.where", "rooting"]),
    (('kind = "load-curves"', 'kind = "pie"'), ["figures.0.kind", "'pie'", "load-curves"]),
    (('file = "curves.png"', 'file = "../curves.png"'), ["figures.0.file"]),
    (('title = "a tiny study"\n', ""), ["study.title: required key is missing"]),
    (("", '\n[cluster]\nbackend = "slurm"\n'), ["cluster.backend", "'slurm'"]),
]


@pytest.mark.parametrize(("change", "needles"), BAD, ids=[" ".join(n[:1]) for _, n in BAD])
def test_bad_campaign_gives_one_field_named_error(
    tmp_path: Path, change: tuple[str, str], needles: list[str]
) -> None:
    path = _write(tmp_path, _replace(*change))
    with pytest.raises(UserError) as caught:
        load_campaign(path)
    message = caught.value.message
    assert message.startswith(f"{path}: "), message
    assert "\n" not in message
    for needle in needles:
        assert needle in message, (needle, message)


def test_no_sweeps_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path, '[study]\ntitle = "t"\n')
    with pytest.raises(UserError, match="sweeps: required key is missing"):
        load_campaign(path)


def test_bad_campaign_through_the_cli(tmp_path: Path) -> None:
    path = _write(tmp_path, _replace("loads = [0.2, 0.4, 0.6]", "loads = [0.2, 1.4]"))
    assert_user_error(run_cli("reproduce", str(path), cwd=tmp_path), "sweeps.0.loads.1", "1.4")


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["reproduce", "nope"], ["study 'nope'", "qadaptive-fig5", "--list"]),
        (["reproduce", "missing.toml"], ["campaign file 'missing.toml' not found"]),
        (["reproduce"], ["give a study"]),
        (["reproduce", "qadaptive-fig5", "--jobs", "0"], ["--jobs"]),
    ],
)
def test_bad_reproduce_command_lines(tmp_path: Path, args: list[str], needles: list[str]) -> None:
    assert_user_error(run_cli(*args, cwd=tmp_path), *needles)


@pytest.mark.parametrize("name", studies.names())
def test_every_packaged_study_loads(name: str) -> None:
    campaign = load_campaign(studies.find(name)[1], name)
    assert campaign.plan("full") and campaign.study.title
    # A study checks the paper's numbers, with the doc that discusses them.
    assert campaign.file.checks and campaign.study.doc.startswith("docs/")
    assert (Path(__file__).resolve().parents[2] / campaign.study.doc).is_file()
