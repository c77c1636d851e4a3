"""`--set key=value` parsing and application, deep merge, keyword overrides."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from dflab.errors import UserError
from dflab.overrides import apply_overrides, deep_merge, nest, parse_override, parse_value

keys = st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True), min_size=1, max_size=3)
# Words a shell user types unquoted for names: not TOML, so they stay strings.
bare_words = st.from_regex(r"[A-Za-z][A-Za-z0-9+_-]{0,12}", fullmatch=True).filter(
    lambda word: word not in ("true", "false", "inf", "nan")
)
toml_scalars = st.one_of(
    st.integers(min_value=-(2**63), max_value=2**63 - 1).map(lambda n: (str(n), n)),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda x: (repr(x), x)),
    st.booleans().map(lambda b: ("true" if b else "false", b)),
    bare_words.map(lambda word: (word, word)),
)


@given(path=keys, scalar=toml_scalars, pad=st.sampled_from(["", " ", "  "]))
def test_set_round_trips_scalars(path: list[str], scalar: tuple[str, object], pad: str) -> None:
    text, value = scalar
    parsed_path, parsed = parse_override(f"{pad}{'.'.join(path)}{pad}={pad}{text}{pad}")
    assert parsed_path == tuple(path)
    assert parsed == value
    assert type(parsed) is type(value)


@given(text=st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=20))
def test_quoted_strings_are_strings(text: str) -> None:
    assume('"' not in text and "\\" not in text)
    assert parse_value(f'"{text}"') == text


def test_value_may_contain_equals_signs() -> None:
    assert parse_override("name=a=b") == (("name",), "a=b")


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ("network.packet_flits=4", 4),
        ("traffic.load=0.5", 0.5),
        ("run.check=true", True),
        ("routing.algorithm=VALn", "VALn"),
        ("traffic.pattern=adv+1", "adv+1"),
        ('name="two words"', "two words"),
    ],
)
def test_typical_overrides(item: str, expected: object) -> None:
    assert parse_override(item)[1] == expected


@pytest.mark.parametrize("item", ["traffic.load", "=3", "a..b=1", "a.=1"])
def test_malformed_overrides_are_user_errors(item: str) -> None:
    with pytest.raises(UserError, match=r"--set"):
        parse_override(item)


def test_apply_creates_tables_and_does_not_mutate_input() -> None:
    base = {"traffic": {"load": 0.5}}
    result = apply_overrides(base, ["traffic.pattern=perm", "run.seed=4", "traffic.load=0.1"])
    assert result == {"traffic": {"load": 0.1, "pattern": "perm"}, "run": {"seed": 4}}
    assert base == {"traffic": {"load": 0.5}}


def test_apply_through_a_value_is_an_error() -> None:
    with pytest.raises(UserError, match=r"^seed: is a value, not a table"):
        apply_overrides({"seed": 1}, ["seed.x=2"])


def test_deep_merge_keeps_untouched_keys() -> None:
    base = {"network": {"a": 1, "b": 2}, "name": "x"}
    assert deep_merge(base, {"network": {"b": 3}}) == {"network": {"a": 1, "b": 3}, "name": "x"}
    assert base["network"]["b"] == 2


def test_nest_accepts_dotted_and_nested_keys() -> None:
    assert nest({"traffic.load": 0.3, "traffic": {"pattern": "ur"}, "seed": 2}) == {
        "traffic": {"load": 0.3, "pattern": "ur"},
        "seed": 2,
    }
