"""One schema, owned by the engine: the Python models, the docs' key tables and the CLI help are
generated from it, and Python accepts exactly what the engine accepts."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from dflab import engine, schema_gen
from dflab.config import PATTERN_KINDS, ROUTING_ALGORITHMS, Experiment
from dflab.errors import UserError
from dflab.loading import validate
from helpers import requires_engine, run_cli

pytestmark = requires_engine


def test_generated_files_are_fresh() -> None:
    # schema.json is the engine's schema; _models.py and docs/config-keys.md are generated from
    # it. After a change of the engine's config types: python -m dflab.schema_gen.
    assert schema_gen.main(["--check"]) == 0


def test_models_name_every_key_of_the_schema() -> None:
    schema = engine.schema()
    for section, model in [
        ("topology", "Topology"), ("network", "Network"), ("routing", "Routing"),
        ("traffic", "Traffic"), ("run", "Run"),
    ]:  # fmt: skip
        keys = set(schema["properties"][section]["properties"])
        assert (
            set(getattr(__import__("dflab._models").__dict__["_models"], model).model_fields)
            == keys
        )


def _accepted_by_python(pattern: object) -> bool:
    try:
        validate(Experiment, {"traffic": {"pattern": pattern}})
    except UserError:
        return False
    return True


def _accepted_by_engine(pattern: object) -> bool:
    try:
        engine.canonical(json.dumps({"traffic": {"pattern": pattern}}))
    except UserError:
        return False
    return True


_NUMBER = st.one_of(st.integers(-3, 140).map(str), st.floats(-5, 150).map(lambda x: f"{x:.3g}"))
_SHIFT = st.one_of(st.integers(-2, 40).map(str), st.just("h"), st.just("H"), st.just("x"))
_MIX = st.sampled_from(["router-mix", "node-mix"])
_RN = st.sampled_from(["rn", "rn-fixed"])
_GRID = st.tuples(*[st.integers(0, 40)] * 3).map(lambda d: "x".join(map(str, d)))
_PATTERN_TEXT = st.one_of(
    st.sampled_from(["ur", "uniform", "perm", "permutation", "advc", "advl", "hot", "stencil",
                     "m2m", "many-to-many", "rn", "rn-fixed", "random-neighbors",
                     "random-neighbors-fixed", "", " ", "adv", "adv+"]),
    _SHIFT.map(lambda s: f"adv+{s}"),
    st.tuples(_NUMBER, _NUMBER).map(lambda t: f"hot:{t[0]}:{t[1]}"),
    st.tuples(_NUMBER, _NUMBER).map(lambda t: f"hot:{t[0]}%:{t[1]}%"),
    st.tuples(_MIX, _SHIFT, _NUMBER).map(
        lambda t: f"{t[0]}:adv+{t[1]}:{t[2]}"
    ),
    st.tuples(_MIX, _NUMBER).map(lambda t: f"{t[0]}:perm:{t[1]}"),
    st.tuples(st.sampled_from(["stencil", "m2m"]), _GRID).map(lambda t: f"{t[0]}:{t[1]}"),
    st.tuples(_RN, st.integers(-1, 1100), st.integers(-1, 1100)).map(
        lambda t: f"{t[0]}:{t[1]}:{t[2]}"
    ),
    st.text(max_size=12),
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(pattern=_PATTERN_TEXT, upper=st.booleans(), pad=st.booleans())
def test_python_and_the_engine_accept_the_same_pattern_strings(
    pattern: str, upper: bool, pad: bool
) -> None:
    text = pattern.upper() if upper else pattern
    text = f" {text} " if pad else text
    assert _accepted_by_python(text) == _accepted_by_engine(text), repr(text)


@settings(max_examples=100, deadline=None)
@given(
    kind=st.sampled_from([*PATTERN_KINDS, "uniform", "zigzag", ""]),
    params=st.dictionaries(
        st.sampled_from(
            ["shift", "traffic", "nodes", "base", "percent", "grid", "min", "max", "x"]
        ),
        st.one_of(st.integers(-2, 60), st.sampled_from(["h", "adv+1", "perm", "4x8x33"])),
        max_size=3,
    ),
)
def test_python_and_the_engine_accept_the_same_pattern_tables(kind: str, params: dict) -> None:
    table = {"kind": kind, **params}
    assert _accepted_by_python(table) == _accepted_by_engine(table), table


def test_cli_help_lists_the_schemas_algorithms_and_patterns() -> None:
    proc = run_cli("run", "--help")
    text = " ".join(proc.stdout.split())
    for name in ROUTING_ALGORITHMS:
        assert name in text, name
    assert "router-mix:<base>:<percent>" in text
