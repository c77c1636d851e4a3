"""Generate what Python and the docs know of the experiment schema from the engine's schema.

The engine owns the schema (`dflab._core.schema()`: every key, type, default, range and
description, the routing algorithms with their parameters, the pattern families). From it:

* `python/dflab/schema.json` — the schema itself, so that Python works without the engine;
* `python/dflab/_models.py` — the pydantic models of every config table;
* `docs/config-keys.md` — the key tables of the docs (keys, algorithms, patterns).

    python -m dflab.schema_gen            # regenerate the three files
    python -m dflab.schema_gen --check    # exit 1 and name the stale file if one differs

The test suite runs the check, so a change of the engine's config that is not regenerated
fails CI.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

PACKAGE = Path(__file__).resolve().parent
ROOT = PACKAGE.parent.parent
SCHEMA = PACKAGE / "schema.json"
MODELS = PACKAGE / "_models.py"
DOCS = ROOT / "docs" / "config-keys.md"

# Table name -> model class name.
SECTIONS = {
    "topology": "Topology",
    "network": "Network",
    "routing": "Routing",
    "traffic": "Traffic",
    "run": "Run",
}
PHASE = "Phase"
# The optional `[workload]` table and the models of its nested tables (key -> class).
WORKLOAD = "Workload"
NESTED = {"jobs": "Job", "mpi": "Mpi"}


def committed_schema() -> dict[str, Any]:
    """The schema as committed with the package (what the models were generated from)."""
    return json.loads(SCHEMA.read_text("utf-8"))


def routing_aliases() -> dict[str, str]:
    """Other spellings of the algorithms, with the name each stands for."""
    return dict(
        committed_schema()["properties"]["routing"]["properties"]["algorithm"].get("x-aliases", {})
    )


def engine_schema() -> dict[str, Any]:
    from dflab import _core

    return _core.schema()


def dump_schema(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


# ---- Models ------------------------------------------------------------------------------------


def _bounds(prop: dict[str, Any]) -> list[str]:
    """Field constraints from the JSON Schema bounds (and an integer's format)."""
    out = []
    fmt_max = {
        "uint8": 255,
        "uint16": 65535,
        "uint32": 4294967295,
        "uint64": 2**64 - 1,
        "uint": 2**64 - 1,
    }
    if "exclusiveMinimum" in prop:
        out.append(f"gt={prop['exclusiveMinimum']!r}")
    elif "minimum" in prop:
        out.append(f"ge={prop['minimum']!r}")
    elif prop.get("format") in fmt_max:
        out.append("ge=0")
    if "exclusiveMaximum" in prop:
        out.append(f"lt={prop['exclusiveMaximum']!r}")
    elif "maximum" in prop:
        out.append(f"le={prop['maximum']!r}")
    elif prop.get("format") in fmt_max:
        out.append(f"le={fmt_max[prop['format']]}")
    return out


# Field constraints of a list and the JSON Schema keys they come from.
LENGTHS = (("min_length", "minItems"), ("max_length", "maxItems"))


def _types(prop: dict[str, Any]) -> set[str]:
    kind = prop.get("type")
    return set(kind) if isinstance(kind, list) else {kind} if kind else set()


def _choices(prop: dict[str, Any]) -> list[str] | None:
    if "enum" in prop:
        return list(prop["enum"])
    if "oneOf" in prop and all("const" in option for option in prop["oneOf"]):
        return [option["const"] for option in prop["oneOf"]]
    return None


def _annotation(name: str, prop: dict[str, Any]) -> tuple[str, list[str]]:
    """The Python annotation of one property, and its constraints (for its `Field`: on the
    field itself, so that an error can name the whole range, also of an optional value)."""
    if name == "pattern":
        return (
            "Pattern | None" if "default" in prop and prop["default"] is None else "Pattern"
        ), []
    nullable = "null" in _types(prop) or any(o.get("type") == "null" for o in prop.get("anyOf", []))
    options = [o for o in prop.get("anyOf", []) if o.get("type") != "null"]
    base = options[0] if len(options) == 1 else prop
    choices = _choices(base)
    kinds = _types(base) - {"null"}
    bounds: list[str] = []
    if choices is not None:
        aliases = base.get("x-aliases")
        validator = f"choice({tuple(choices)!r}{', ' + repr(aliases) if aliases else ''})"
        ann = f"Annotated[str, AfterValidator({validator})]"
    elif kinds == {"array"} and _types(base.get("items", {})) in ({"number"}, {"integer"}):
        # A fixed-size list of numbers (IMB's bias schedule).
        ann = "list[int]" if _types(base["items"]) == {"integer"} else "list[Number]"
        bounds = [f"{key}={base[json]}" for key, json in LENGTHS if json in base]
    elif kinds == {"array"}:
        ann = f"list[{NESTED.get(name, PHASE)}]"
    elif kinds == {"object"} and name in NESTED:
        ann = NESTED[name]
    elif kinds == {"object"} and base.get("additionalProperties") is True:
        ann = "dict[str, Any]"
    elif kinds == {"integer"}:
        ann, bounds = "int", _bounds(base)
    elif kinds == {"number"}:
        ann, bounds = "Number", _bounds(base)
    elif kinds == {"boolean"}:
        ann = "bool"
    elif kinds == {"string"}:
        ann = "str"
    else:
        raise ValueError(f"cannot map the schema of {name!r}: {prop}")
    return (f"{ann} | None" if nullable else ann), bounds


def _description(prop: dict[str, Any]) -> str:
    text = " ".join(str(prop.get("description", "")).split())
    algorithms = prop.get("x-algorithms")
    if algorithms:
        text += f" (Applies to {', '.join(algorithms)}.)"
    return text


def _class(name: str, schema: dict[str, Any], *, params_optional: bool = False) -> list[str]:
    doc = " ".join(str(schema.get("description", name)).split())
    lines = [f"class {name}(Section):", f'    """{doc}"""', ""]
    props = schema.get("properties", {})
    required = set(schema.get("required", []))
    for key, prop in props.items():
        ann, bounds = _annotation(key, prop)
        # Algorithm parameters are optional: only the chosen algorithm's apply, the engine fills
        # its defaults.
        optional = params_optional and "x-algorithms" in prop
        if optional and not ann.endswith("| None"):
            ann += " | None"
        desc = _description(prop)
        if key in required:
            default = "..."
        elif optional:
            default = "None"
        elif ann.startswith("list["):
            default = "default_factory=list"
        elif ann.startswith("dict["):
            default = "default_factory=dict"
        elif ann in NESTED.values():
            default = f"default_factory={ann}"
        else:
            default = repr(prop.get("default"))
        args = ", ".join([default, *bounds, f"description={desc!r}"])
        lines.append(f"    {key}: {ann} = Field({args})")
    return lines


def render_models(schema: dict[str, Any]) -> str:
    props = schema["properties"]
    meta = schema["x-dflab"]
    names = tuple(a["name"] for a in meta["algorithms"])
    phase = props["traffic"]["properties"]["phases"]["items"]
    out = [
        '"""The config models, generated by `python -m dflab.schema_gen` from the engine\'s schema',
        '(`schema.json`): do not edit; change the engine\'s config types and regenerate."""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Annotated, Any",
        "",
        "from pydantic import AfterValidator, Field",
        "",
        "from dflab.config_types import Number, Pattern, Section, choice",
        "",
        f"ENGINE_SEMANTICS = {meta['engine_semantics']}",
        f"ROUTING_ALGORITHMS: tuple[str, ...] = {names!r}",
        "ROUTING_PARAMS: dict[str, tuple[str, ...]] = {",
    ]
    for a in meta["algorithms"]:
        out.append(f"    {a['name']!r}: {tuple(a['params'])!r},")
    kinds = tuple(p["kind"] for p in meta["patterns"])
    out.extend(["}", f"PATTERN_KINDS: tuple[str, ...] = {kinds!r}"])
    forms = [form for p in meta["patterns"] for form in p["forms"]]
    out.extend([f"PATTERNS_HELP = {', '.join(forms)!r}", "", ""])
    out.extend([*_class(PHASE, phase), "", ""])
    for key, cls in SECTIONS.items():
        out.extend([*_class(cls, props[key], params_optional=key == "routing"), "", ""])
    workload = props["workload"]
    for key, cls in NESTED.items():
        nested = workload["properties"][key]
        out.extend([*_class(cls, nested.get("items", nested)), "", ""])
    out.extend([*_class(WORKLOAD, workload), "", ""])
    top = {k: v for k, v in schema.items() if k != "properties"}
    top["properties"] = {k: v for k, v in props.items() if k not in SECTIONS and k != "workload"}
    lines = _class("ExperimentModel", top)
    for key, cls in SECTIONS.items():
        lines.append(f"    {key}: {cls} = Field(default_factory={cls})")
    desc = _description(workload)
    lines.append(f"    workload: {WORKLOAD} | None = Field(None, description={desc!r})")
    out += lines
    return "\n".join(out).rstrip() + "\n"


# ---- Docs --------------------------------------------------------------------------------------


def _type_text(prop: dict[str, Any]) -> str:
    choices = _choices(prop) or _choices(next(iter(prop.get("anyOf", [])), {}) or {})
    if choices:
        return " \\| ".join(f"`{c}`" for c in choices)
    if "anyOf" in prop:
        kinds = [o.get("type") for o in prop["anyOf"] if "type" in o]
        return " or ".join(str(k) for k in kinds if k != "null") or "pattern"
    kinds = sorted(_types(prop) - {"null"})
    return "/".join(kinds)


def _range_text(prop: dict[str, Any]) -> str:
    parts = []
    if "exclusiveMinimum" in prop:
        parts.append(f"> {prop['exclusiveMinimum']:g}")
    elif "minimum" in prop:
        parts.append(f">= {prop['minimum']:g}")
    if "exclusiveMaximum" in prop:
        parts.append(f"< {prop['exclusiveMaximum']:g}")
    elif "maximum" in prop:
        parts.append(f"<= {prop['maximum']:g}")
    return ", ".join(parts)


def _default_text(prop: dict[str, Any]) -> str:
    if "default" not in prop:
        return "required"
    value = prop["default"]
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[]"
    return f"`{value}`"


def _cells(prop: dict[str, Any]) -> str:
    """The type, default and range cells of a key's row."""
    return f"{_type_text(prop)} | {_default_text(prop)} | {_range_text(prop)}"


def _table(section: str, schema: dict[str, Any]) -> list[str]:
    lines = ["| key | type | default | range | description |", "|---|---|---|---|---|"]
    for key, prop in schema.get("properties", {}).items():
        if section == "routing" and "x-algorithms" in prop:
            continue
        desc = _description(prop).replace("|", "\\|")
        name = f"`{section}.{key}`" if section else f"`{key}`"
        lines.append(f"| {name} | {_cells(prop)} | {desc} |")
    return lines


def render_docs(schema: dict[str, Any]) -> str:
    props = schema["properties"]
    meta = schema["x-dflab"]
    out = [
        "# Experiment keys",
        "",
        "Generated by `python -m dflab.schema_gen` from the engine's schema (engine "
        f"{meta['version']}, semantics {meta['engine_semantics']}): do not edit. Every key has a "
        "default; a key not listed is an error. The meaning of the model is in "
        "[model.md](model.md); how experiments, presets, sweeps and results work is in "
        "[config.md](config.md).",
        "",
        "## Top level",
        "",
    ]
    top = {"properties": {k: v for k, v in props.items() if k not in SECTIONS and k != "workload"}}
    out.extend([*_table("", top), ""])
    for key in SECTIONS:
        out += [f"## [{key}]", "", " ".join(str(props[key].get("description", "")).split()), ""]
        out.extend([*_table(key, props[key]), ""])
        if key == "traffic":
            phase = props["traffic"]["properties"]["phases"]["items"]
            out.extend(
                ["Each entry of `traffic.phases`:", "", *_table("traffic.phases[i]", phase), ""]
            )
    workload = props["workload"]
    out += [
        "## [workload]",
        "",
        f"{_description(workload)} Absent: the synthetic traffic of `[traffic]` runs.",
        "",
        *_table("workload", workload),
        "",
        "Each entry of `workload.jobs` (`[[workload.jobs]]`):",
        "",
        *_table("workload.jobs[i]", workload["properties"]["jobs"]["items"]),
        "",
        "`[workload.mpi]`:",
        "",
        *_table("workload.mpi", workload["properties"]["mpi"]),
        "",
    ]
    out += _motif_tables(meta.get("motifs", []))
    out += ["## Routing algorithms and their parameters", ""]
    out += [
        "Only the chosen algorithm's parameters apply. A parameter of another algorithm is "
        "accepted (its value is checked) and ignored: it changes neither the simulation nor the "
        "result store key.",
        "",
        "| algorithm | also accepted | parameters |",
        "|---|---|---|",
    ]
    for a in meta["algorithms"]:
        params = ", ".join(f"`{p}`" for p in a["params"]) or "—"
        aliases = ", ".join(f"`{x}`" for x in a["aliases"]) or "—"
        out.append(f"| `{a['name']}` | {aliases} | {params} |")
    out += ["", "| parameter | type | default | range | description |", "|---|---|---|---|---|"]
    for key, prop in props["routing"]["properties"].items():
        if "x-algorithms" not in prop:
            continue
        desc = _description(prop).replace("|", "\\|")
        out.append(f"| `{key}` | {_cells(prop)} | {desc} |")
    out += [
        "",
        "## Traffic patterns",
        "",
        "`traffic.pattern` takes the short form or a table with `kind` and the parameters, e.g. "
        '`pattern = "router-mix:adv+1:25"` or `pattern = {kind = "router-mix", base = "adv+1", '
        "percent = 25}`. Names are case-insensitive.",
        "",
        "| kind | also accepted | short forms | parameters | what it does |",
        "|---|---|---|---|---|",
    ]
    for p in meta["patterns"]:
        forms = ", ".join(f"`{f}`" for f in p["forms"])
        aliases = ", ".join(f"`{x}`" for x in p["aliases"]) or "—"
        params = "; ".join(f"`{x['name']}`: {x['help']}" for x in p["params"]) or "—"
        out.append(f"| `{p['kind']}` | {aliases} | {forms} | {params} | {p['help']} |")
    return "\n".join(out) + "\n"


def _motif_tables(motifs: list[dict[str, Any]]) -> list[str]:
    """The parameters of each motif of `workload.jobs[i].motif` (its `params` table)."""
    out = [
        "## Motifs",
        "",
        "The `params` table of a job takes its motif's parameters; a missing one has the "
        "reference run's value (docs/workloads.md).",
        "",
    ]
    for motif in motifs:
        props = motif["params"].get("properties", {})
        desc = " ".join(str(motif["params"].get("description", "")).split())
        out += [f"### `{motif['name']}`", "", desc, ""]
        if not props:
            out += ["No parameters.", ""]
            continue
        out += ["| parameter | type | default | range | description |", "|---|---|---|---|---|"]
        for key, prop in props.items():
            text = _description(prop).replace("|", "\\|")
            out.append(f"| `{key}` | {_cells(prop)} | {text} |")
        out.append("")
    return out


# ---- Main --------------------------------------------------------------------------------------


def outputs(schema: dict[str, Any]) -> dict[Path, str]:
    return {SCHEMA: dump_schema(schema), MODELS: render_models(schema), DOCS: render_docs(schema)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a generated file is stale")
    args = parser.parse_args(argv)
    schema = engine_schema()
    stale = [
        path
        for path, text in outputs(schema).items()
        if not path.exists() or path.read_text("utf-8") != text
    ]
    if args.check:
        for path in stale:
            print(
                f"stale: {path.relative_to(ROOT)} (run: python -m dflab.schema_gen)",
                file=sys.stderr,
            )
        return 1 if stale else 0
    for path, text in outputs(schema).items():
        path.write_text(text, "utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
