"""The docs match the code, and their references resolve (newcomer #32).

Checked: the README's Python version and preset list, the comments of the example experiments
(routing names, pattern families), and every reference in the README, docs/, examples/ and the
presets: no path into a directory outside the repository (`shared/...`, absolute paths), every
Markdown link and every cited `.md` file exists, every path under a top-level directory exists.
"""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import pytest

from dflab import presets
from dflab.config import PATTERN_KINDS, ROUTING_ALGORITHMS
from dflab.loading import load_experiment_file
from helpers import REPO


def _tracked() -> list[str]:
    proc = subprocess.run(
        ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        pytest.skip("not a git checkout")
    return proc.stdout.split()


def _documents() -> list[Path]:
    docs = [
        name
        for name in _tracked()
        if name == "README.md"
        or (name.startswith("docs/") and name.endswith(".md"))
        or name.startswith(("examples/", "python/dflab/presets/"))
    ]
    return [REPO / name for name in docs if name.endswith((".md", ".toml"))]


def _lines(path: Path) -> list[tuple[int, str]]:
    return list(enumerate(path.read_text("utf-8").splitlines(), 1))


# A path into a directory beside the repository, or an absolute path on the author's machine.
_OUTSIDE = re.compile(r"(?<![\w.-])(?:\.\./)*shared/|(?<![\w.])/(?:work|home|root|Users)/")
_LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")
_MD_NAME = re.compile(r"(?<![\w./-])([\w./-]+\.md)\b")
# A path ends where the path characters end: `crates/dflab-core/tests/q_*.rs` is a glob, not a
# path to `crates/dflab-core/tests/q_`.
_PATH = re.compile(
    r"(?<![\w./-])((?:docs|crates|python|examples|scripts|experiments)/[\w./+-]*\w)(?![\w./+*<-])"
)
# The notes that the engine's source comments cite by name: docs/references.md names them
# (and says what they stand for) without their being files of the repository.
_EXTERNAL_NOTES = {"qadaptive-reference.md", "baseline-algorithms.md", "sst-port-timing.md"}
# Files that dflab writes (`dflab reproduce`'s check and curve tables), named by the docs, not
# documents.
_OUTPUT_FILES = {"checks.md", "curves.md"}


def _resolves(document: Path, target: str, names: set[str]) -> bool:
    if (document.parent / target).exists() or (REPO / target).exists():
        return True
    return "/" not in target and target in names


def test_no_reference_points_outside_the_repository() -> None:
    found = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path in _documents()
        for number, line in _lines(path)
        if _OUTSIDE.search(line)
    ]
    assert found == []


def test_links_and_cited_documents_exist() -> None:
    # Documents being added are not tracked yet: their names count too.
    names = {Path(name).name for name in _tracked()} | {p.name for p in REPO.glob("docs/**/*.md")}
    broken = []
    for path in _documents():
        for number, line in _lines(path):
            targets = [t for t in _LINK.findall(line) if "://" not in t]
            targets += [
                t
                for t in _MD_NAME.findall(line)
                if t not in _EXTERNAL_NOTES and Path(t).name not in _OUTPUT_FILES
            ]
            broken += [
                f"{path.relative_to(REPO)}:{number}: {target}"
                for target in targets
                if not _resolves(path, target, names)
            ]
    assert broken == []


def test_paths_under_top_level_directories_exist() -> None:
    missing = []
    for path in _documents():
        for number, line in _lines(path):
            for target in _PATH.findall(line):
                if not (REPO / target).exists():
                    missing.append(f"{path.relative_to(REPO)}:{number}: {target}")
    assert missing == []


def test_readme_python_version_is_the_packages() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]
    required = project["requires-python"].removeprefix(">=")
    readme = (REPO / "README.md").read_text("utf-8")
    assert re.findall(r"Python ≥ ([\d.]+)", readme) == [required]


def test_readme_lists_every_preset() -> None:
    readme = (REPO / "README.md").read_text("utf-8")
    assert presets.names(), "no presets?"
    for name in presets.names():
        assert f"`{name}`" in readme, name


@pytest.mark.parametrize("example", sorted((REPO / "examples").glob("*.toml")), ids=str)
def test_examples_are_valid(example: Path) -> None:
    load_experiment_file(example)


def test_example_comments_list_the_schemas_routings_and_patterns() -> None:
    """The commented list of every key's values in the fully spelled-out example."""
    text = (REPO / "examples" / "qadaptive-1056-ur.toml").read_text("utf-8")
    routing = text[text.index("[routing]") : text.index("[traffic]")]
    traffic = text[text.index("[traffic]") : text.index("[run]")]
    for name in ROUTING_ALGORITHMS:
        assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", routing), name
    for kind in PATTERN_KINDS:
        assert re.search(rf"(?<![\w-]){re.escape(kind)}(?![\w-])", traffic), kind
    assert "ur only" not in traffic
