"""The `dflab` command line.

Every user error ends as one `error: ...` line on stderr and exit status 2 (see `main`); results
go to stdout, progress and notes to stderr, so `dflab run --json` prints exactly one JSON object.
Heavy modules (polars, matplotlib, the engine) are imported inside the commands that need them.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from dflab import help_format
from dflab import presets as preset_registry
from dflab._models import PATTERNS_HELP, ROUTING_ALGORITHMS
from dflab.errors import UserError
from dflab.loading import SweepSpec, load_experiment_file, parse_seeds, validate
from dflab.loads import parse_loads
from dflab.outputs import SERIES_SUFFIXES, check_output, write_series
from dflab.pool import default_jobs
from dflab.schema_gen import routing_aliases

app = typer.Typer(
    name="dflab",
    help="Dragonfly interconnect simulator and routing laboratory.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
help_format.install()

EXIT_USER_ERROR = 2
EXIT_FAILED = 1


def _print_version(value: bool) -> None:
    if value:
        from dflab.version import version_line

        print(version_line())
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_print_version,
            is_eager=True,
            help="Print the dflab version and the engine semantics version, and exit.",
        ),
    ] = False,
) -> None:
    pass


ExperimentArg = Annotated[
    Path | None,
    typer.Argument(help="Experiment TOML file (optional with --preset).", show_default=False),
]
# run and info: with neither a file nor --preset, the documented defaults (as an empty file).
OneExperimentArg = Annotated[
    Path | None,
    typer.Argument(
        help="Experiment TOML file (optional; without it or --preset: the defaults of "
        "docs/config-keys.md).",
        show_default=False,
    ),
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        metavar="KEY=VALUE",
        help="Override a config key, e.g. --set network.packet_flits=4 (repeatable).",
    ),
]
JobsOpt = Annotated[
    int | None,
    typer.Option(
        help="Points run in parallel (default: the CPUs this process may use, "
        f"{default_jobs()} here).",
        show_default=False,
    ),
]
OutOpt = Annotated[
    Path | None, typer.Option(help="Result directory (default: results/NAME or file stem).")
]
PresetOpt = Annotated[
    str | None, typer.Option("--preset", help="Start from a named preset (see 'dflab presets').")
]
# Help texts from the engine's schema (generated into dflab._models).
ROUTING_HELP = (
    f"routing.algorithm: {', '.join(ROUTING_ALGORITHMS)} (any case; also "
    f"{', '.join(routing_aliases())})."
)
RoutingOpt = Annotated[str | None, typer.Option("--routing", help=ROUTING_HELP)]
TRAFFIC_HELP = f"traffic.pattern: {PATTERNS_HELP} (docs/config-keys.md)."


def _out() -> Console:
    console = Console()
    # Piped or redirected output has no width; don't squeeze tables into 80 columns.
    return console if console.is_terminal else Console(width=160)


def _err() -> Console:
    return Console(stderr=True)


def _shortcuts(**values: Any) -> dict[str, Any]:
    """CLI shortcut flags -> dotted config keys; flags not given change nothing."""
    return {key: value for key, value in values.items() if value is not None}


def _split(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def _seeds(text: str) -> list[int]:
    """--seeds: a comma list or FIRST:LAST (both included)."""
    seeds = parse_seeds(text, "--seeds")
    if not seeds:
        raise UserError("--seeds: empty list; give at least one value, e.g. --seeds a,b")
    return seeds


def _axis_values(option: str, item: str, text: str) -> list[Any]:
    """The values of one `KEY=VALUES`: a TOML array, a numeric range START:END:STEP (end
    included), or a comma list, each value read as a TOML scalar (as --set does)."""
    from dflab.overrides import parse_value

    text = text.strip()
    if text.startswith("["):
        values = parse_value(text)
        if not isinstance(values, list):
            raise UserError(f"{option} {item!r}: {text!r} is not a TOML array")
    elif text.count(":") == 2 and all(_is_number(part) for part in text.split(":")):
        values = parse_loads(text, f"{option} {item!r}")
        if all(_is_number(part, integer=True) for part in text.split(":")):
            values = [round(v) for v in values]
    else:
        values = [parse_value(part) for part in _split(text)]
    if not values:
        raise UserError(f"{option} {item!r}: no values; e.g. {option} routing.q_thld1=0.1,0.2")
    return values


def _is_number(text: str, *, integer: bool = False) -> bool:
    try:
        int(text) if integer else float(text)
    except ValueError:
        return False
    return True


def _axis_items(option: str, item: str, separator: str | None) -> dict[str, list[Any]]:
    """`KEY=V1,V2` (or, for --zip, several joined by `separator`) as {key: values}."""
    parts = item.split(separator) if separator else [item]
    table: dict[str, list[Any]] = {}
    for part in parts:
        key, sep, values = part.partition("=")
        if not sep or not key.strip():
            raise UserError(
                f"{option} {item!r}: expected KEY=V1,V2,..., e.g. routing.q_thld1=0.1,0.2"
            )
        table[key.strip()] = _axis_values(option, item, values)
    return table


@app.command()
def run(
    experiment: OneExperimentArg = None,
    set_: SetOpt = None,
    preset: PresetOpt = None,
    routing: RoutingOpt = None,
    traffic: Annotated[str | None, typer.Option(help=TRAFFIC_HELP)] = None,
    load: Annotated[float | None, typer.Option(help="traffic.load")] = None,
    warmup_us: Annotated[float | None, typer.Option(help="run.warmup_us")] = None,
    measure_us: Annotated[float | None, typer.Option(help="run.measure_us")] = None,
    seed: Annotated[int | None, typer.Option(help="seed")] = None,
    check: Annotated[bool, typer.Option("--check", help="run.check = true")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    series_out: Annotated[
        Path | None, typer.Option(help="Write the per-window series (.csv or .parquet).")
    ] = None,
    workload_out: Annotated[
        Path | None,
        typer.Option(
            help="Write a workload run's per-job, per-iteration, throughput and per-port frames "
            "(Parquet) into this directory, for 'dflab plot DIR'."
        ),
    ] = None,
) -> None:
    """Run one experiment and print its summary."""
    if series_out is not None:
        # Checked before the run, which may take minutes: a typo must not cost them.
        check_output("--series-out", series_out, SERIES_SUFFIXES)
    if workload_out is not None:
        check_output("--workload-out", workload_out / "jobs.parquet", (".parquet",))
    fields = _shortcuts(
        **{
            "routing.algorithm": routing,
            "traffic.pattern": traffic,
            "traffic.load": load,
            "run.warmup_us": warmup_us,
            "run.measure_us": measure_us,
            "seed": seed,
            "run.check": True if check else None,
        }
    )
    exp, _ = load_experiment_file(experiment, set_ or [], preset, fields, defaults=True)
    if workload_out is not None and exp.workload is None:
        raise UserError("--workload-out: the experiment has no [workload] (application jobs)")

    from dflab.api import Result
    from dflab.progress import run_one
    from dflab.report import run_json, run_tables

    err = _err()
    raw = run_one(exp.to_engine_json(), exp.label(), err)
    result = Result.from_engine(raw)
    if series_out is not None:
        write_series(result.series, series_out)
        err.print(f"series written to {series_out}")
    if workload_out is not None:
        from dflab.workload_plots import write_workload

        write_workload(result, workload_out)
        err.print(f"workload frames written to {workload_out}")
    for warning in result.diagnostics.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if json_out:
        print(run_json(result))
    else:
        for table in run_tables(result, f"{exp.name + ': ' if exp.name else ''}{exp.label()}"):
            _out().print(table)


def _sweep_list(option: str, text: str) -> list[str]:
    """A comma list of a sweep option; an empty one is an error, not 'the experiment's own'."""
    items = _split(text)
    if not items:
        raise UserError(f"{option}: empty list; give at least one value, e.g. {option} a,b")
    return items


def _jobs(jobs: int | None) -> int:
    """--jobs, the CPUs by default, checked."""
    jobs = default_jobs() if jobs is None else jobs
    if jobs < 1:
        raise UserError(f"--jobs: {jobs} is out of range; allowed: >= 1")
    return jobs


def _store_root(out: Path | None, base: Any, experiment: Path | None, suffix: str = "") -> Path:
    """--out, or results/ named after the experiment's name, file or preset (plus `suffix`)."""
    from dflab.outputs import check_output_dir
    from dflab.store import default_root

    if out is None:
        field = "name" if base.name else "experiment file" if experiment else "preset"
        label = base.name or (experiment.stem if experiment is not None else base.preset)
        out = default_root(f"{label}{suffix}", field=field)
    return check_output_dir("--out", out)


def _sweep_spec(
    spec: SweepSpec,
    axes: list[str] | None = None,
    zips: list[str] | None = None,
    seed_count: int | None = None,
    **options: str | None,
) -> SweepSpec:
    """The file's [sweep] table with the command line's lists and axes laid over it: a list or
    axis given replaces the file's of the same name (a zip is added)."""
    from dflab.loading import sweep_spec

    raw: dict[str, Any] = {}
    for item in axes or []:
        raw.update(_axis_items("--axis", item, None))
    if raw:
        # Through the [sweep] reader: aliases (traffic.load = loads) and checks alike.
        raw = sweep_spec(raw, "--axis").model_dump(exclude_none=True)
    given: dict[str, Any] = {k: v for k, v in raw.items() if k != "axes"}
    file = spec.model_dump(exclude_none=True)
    if raw.get("axes"):
        given["axes"] = {**file.get("axes", {}), **raw["axes"]}
    if zips:
        extra = [sweep_spec({"zip": _axis_items("--zip", z, ";")}, "--zip").zips for z in zips]
        given["zips"] = [
            *file.get("zips", []),
            *(group for groups in extra for group in groups or []),
        ]
    if options["loads"] is not None:
        given["loads"] = parse_loads(options["loads"])
    for name in ("routings", "traffics"):
        if options[name] is not None:
            given[name] = _sweep_list(f"--{name}", str(options[name]))
    if options["seeds"] is not None:
        _sweep_list("--seeds", options["seeds"])  # an empty list is an error
        given["seeds"] = _seeds(options["seeds"])
    if seed_count is not None:
        given["seed_count"] = seed_count
    if "seeds" in given or "seed_count" in given:
        if "seeds" in given and "seed_count" in given:
            raise UserError("--seeds and --seed-count: give one of them")
        file.pop("seeds", None)
        file.pop("seed_count", None)
    try:
        return validate(SweepSpec, {**file, **given})
    except UserError as exc:
        raise UserError(f"sweep.{exc.message}") from None


AxisOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--axis",
        metavar="KEY=VALUES",
        help="Sweep any config key: routing.q_thld1=0.1,0.2 (a comma list, a TOML array, or a "
        "range START:END:STEP); repeatable, axes are crossed.",
    ),
]
ZipOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--zip",
        metavar="KEY=VALUES;KEY=VALUES",
        help="Vary keys together (lists of one length), e.g. "
        "'network.local_latency_ns=10,20;network.global_latency_ns=100,200'; repeatable.",
    ),
]
BackendOpt = Annotated[
    str | None,
    typer.Option(
        help="Where the points run: local (processes, the default) or dask ([cluster] table).",
        show_default=False,
    ),
]
SchedulerOpt = Annotated[
    str | None,
    typer.Option(
        help="Dask: local, local:N (a LocalCluster of N workers), a scheduler address "
        "tcp://host:8786, slurm or pbs (dask-jobqueue, [cluster] table); implies --backend dask.",
        show_default=False,
    ),
]
RetriesOpt = Annotated[
    int | None,
    typer.Option(
        min=0,
        help="Attempts after the first for a point whose worker died or was lost, or that timed "
        "out (default 0 local, 2 dask).",
        show_default=False,
    ),
]
TimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--timeout-s", help="A point running longer fails (and is retried).", show_default=False
    ),
]


def _cluster(
    experiment: Path | None,
    backend: str | None,
    scheduler: str | None,
    retries: int | None,
    timeout_s: float | None,
) -> Any:
    """The file's [cluster] table with the options laid over it, checked."""
    from dflab.backends import cluster_spec
    from dflab.loading import load_cluster

    table = load_cluster(experiment)
    try:
        return cluster_spec(
            table, backend=backend, scheduler=scheduler, retries=retries, timeout_s=timeout_s
        )
    except UserError as exc:
        given = {"backend": backend, "scheduler": scheduler, "retries": retries}
        given["timeout_s"] = timeout_s
        for name, value in given.items():
            if value is not None and exc.message.startswith(f"cluster.{name}:"):
                option = f"--{name.replace('_', '-')}"
                raise UserError(exc.message.replace(f"cluster.{name}", option, 1)) from None
        raise


@app.command()
def sweep(
    experiment: ExperimentArg = None,
    loads: Annotated[
        str | None,
        typer.Option(help="Offered loads: a range 0.1:0.9:0.1 (end included) or a list 0.2,0.5."),
    ] = None,
    routings: Annotated[str | None, typer.Option(help="Comma list, e.g. MIN,VALn.")] = None,
    traffics: Annotated[str | None, typer.Option(help="Comma list, e.g. ur,adv+1.")] = None,
    seeds: Annotated[
        str | None, typer.Option(help="Seeds: a comma list 1,2,3 or a range 1:5 (both included).")
    ] = None,
    seed_count: Annotated[
        int | None,
        typer.Option(min=1, help="N seeds from the experiment's seed (as seeds = N in [sweep])."),
    ] = None,
    axis: AxisOpt = None,
    zip_: ZipOpt = None,
    jobs: JobsOpt = None,
    out: OutOpt = None,
    set_: SetOpt = None,
    preset: PresetOpt = None,
    backend: BackendOpt = None,
    scheduler: SchedulerOpt = None,
    retries: RetriesOpt = None,
    timeout_s: TimeoutOpt = None,
) -> None:
    """Run routings x traffics x axes x loads x seeds, resuming from what the result store holds."""
    if jobs is not None:
        _jobs(jobs)
    base, spec = load_experiment_file(experiment, set_ or [], preset)
    spec = _sweep_spec(
        spec,
        axis,
        zip_,
        seed_count,
        loads=loads,
        routings=routings,
        traffics=traffics,
        seeds=seeds,
    )
    cluster = _cluster(experiment, backend, scheduler, retries, timeout_s)

    from dflab.backends import backend as make_backend
    from dflab.report import sweep_tables
    from dflab.store import Store
    from dflab.sweep import Interrupted, expand, prepare_store, run_sweep
    from dflab.sweep_progress import sweep_progress

    store = Store(_store_root(out, base, experiment))
    points = expand(base, spec)
    err = _err()
    prepare_store(points, store, sweep_progress(err))  # refusals before any output
    with make_backend(cluster) as runner:
        jobs = jobs if jobs is not None else runner.default_jobs()
        plural = "s" if jobs > 1 else ""
        where = f" ({runner.describe()})" if cluster.dask else ""
        err.print(
            f"sweep: {len(points)} points, {jobs} job{plural}{where}, results in {store.root}"
        )
        try:
            outcome = run_sweep(
                points,
                store,
                jobs=jobs,
                console=err,
                executor_factory=runner.factory,
                policy=cluster.policy(),
            )
        except Interrupted as exc:
            print(f"error: {exc.message()}", file=sys.stderr)
            raise typer.Exit(exc.exit_code) from None
    if outcome.skipped:
        err.print(f"{outcome.skipped} points were already done (resumed)")

    wanted = {point.key for point in points}
    records = [record for record in store.points() if record["hash"] in wanted]
    if records:
        for table in sweep_tables(store.summary_frame(records)):
            _out().print(table)
    print(f"summary: {store.root / 'summary.csv'}", file=sys.stderr)
    if outcome.failures:
        for point, message in outcome.failures:
            print(f"failed: {point.label()}: {message}", file=sys.stderr)
        print(
            f"error: {len(outcome.failures)} of {len(points)} points failed "
            "(rerun the same command to retry them)",
            file=sys.stderr,
        )
        raise typer.Exit(EXIT_FAILED)


@app.command()
def saturation(
    experiment: ExperimentArg = None,
    routings: Annotated[str | None, typer.Option(help="Comma list, e.g. UGAL-L,UGAL-LE.")] = None,
    traffics: Annotated[str | None, typer.Option(help="Comma list, e.g. ur,adv+1.")] = None,
    seeds: Annotated[str | None, typer.Option(help="Comma list of seeds.")] = None,
    range_: Annotated[
        str, typer.Option("--range", help="Loads searched, LO:HI (both included).")
    ] = "0.05:1.0",
    step: Annotated[float, typer.Option(help="Spacing of the loads searched.")] = 0.01,
    accept: Annotated[
        float, typer.Option(help="Sustained: accepted >= ACCEPT x offered load.")
    ] = 0.99,
    max_latency_ns: Annotated[
        float | None, typer.Option(help="Sustained also needs mean latency <= this (ns).")
    ] = None,
    jobs: JobsOpt = None,
    out: OutOpt = None,
    set_: SetOpt = None,
    preset: PresetOpt = None,
    backend: BackendOpt = None,
    scheduler: SchedulerOpt = None,
    retries: RetriesOpt = None,
    timeout_s: TimeoutOpt = None,
) -> None:
    """Find each routing's saturation load per pattern by bisection (docs/config.md)."""
    if jobs is not None:
        _jobs(jobs)
    lo_hi = range_.split(":")
    try:
        lo, hi = (float(x) for x in lo_hi)
    except ValueError:
        raise UserError(f"--range: '{range_}' is not LO:HI, e.g. 0.05:1.0") from None
    base, spec = load_experiment_file(experiment, set_ or [], preset)
    spec = _sweep_spec(spec, loads=None, routings=routings, traffics=traffics, seeds=seeds)
    cluster = _cluster(experiment, backend, scheduler, retries, timeout_s)

    from dflab.backends import backend as make_backend
    from dflab.saturation import Criterion, grid, rows, search
    from dflab.store import Store
    from dflab.sweep import Interrupted

    criterion = Criterion(accept=accept, max_latency_ns=max_latency_ns)
    loads = grid(lo, hi, step)
    store = Store(_store_root(out, base, experiment, "-saturation"))
    err = _err()
    err.print(
        f"saturation: {len(loads)} loads, {loads[0]:g} to {loads[-1]:g}; results in {store.root}"
    )
    with make_backend(cluster) as runner:
        try:
            results = search(
                base,
                spec,
                store,
                loads=loads,
                criterion=criterion,
                jobs=jobs if jobs is not None else runner.default_jobs(),
                console=err,
                executor_factory=runner.factory,
                policy=cluster.policy(),
            )
        except Interrupted as exc:
            print(f"error: {exc.message()}", file=sys.stderr)
            raise typer.Exit(exc.exit_code) from None
    from rich.table import Table

    table = Table(title="saturation load (highest sustained offered load)")
    for column in (
        "routing",
        "traffic",
        "seeds",
        "saturation",
        "per seed",
        "first not sustained",
        "runs",
    ):
        table.add_column(column)
    for row in rows(results):
        load = "below range" if row["saturation_load"] is None else f"{row['saturation_load']:g}"
        table.add_row(
            row["routing"],
            row["traffic"],
            row["seeds"],
            load,
            row["per_seed"],
            row["first_unsustained"],
            str(row["runs"]),
        )
    _out().print(table)
    print(f"table: {store.root / 'saturation.csv'}", file=sys.stderr)


@app.command()
def reproduce(
    study: Annotated[
        str | None,
        typer.Argument(
            help="A study (see --list), or a campaign file (.toml, docs/studies.md).",
            show_default=False,
        ),
    ] = None,
    full: Annotated[
        bool, typer.Option("--full", help="Full size: the paper's run lengths (default: quick).")
    ] = False,
    list_: Annotated[bool, typer.Option("--list", help="List the studies and exit.")] = False,
    seeds: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Run every point with N seeds from its own (checks and figures average them; "
            "a rerun with more seeds runs only the new ones).",
            show_default=False,
        ),
    ] = None,
    loads: Annotated[
        str | None,
        typer.Option(
            help="Run only these loads of each sweep's load list (e.g. the loads the checks "
            "read; searches run whole): a list 0.1,0.7 or a range 0.1:0.5:0.1. A later run "
            "into the same --out reuses these points.",
            show_default=False,
        ),
    ] = None,
    jobs: JobsOpt = None,
    out: Annotated[
        Path | None,
        typer.Option(help="Output directory (default: results/reproduce/STUDY/SIZE)."),
    ] = None,
    backend: BackendOpt = None,
    scheduler: SchedulerOpt = None,
    retries: RetriesOpt = None,
    timeout_s: TimeoutOpt = None,
    set_: SetOpt = None,
) -> None:
    """Run a paper's figure from its campaign, draw it and check it against the paper's numbers.
    --set runs every sweep with a config key changed (a variant of the model: give it its own
    --out)."""
    from dflab import studies

    if list_:
        from dflab.reproduce import study_list

        _out().print(study_list(studies.names()))
        return
    if study is None:
        raise UserError("give a study (dflab reproduce --list shows them) or a campaign file")
    if jobs is not None:
        _jobs(jobs)
    from dflab.campaign import load_campaign

    name, path = studies.find(study)
    campaign = load_campaign(path, name).with_overrides(set_ or [])
    cluster = _cluster(path, backend, scheduler, retries, timeout_s)
    size = "full" if full else "quick"
    only = parse_loads(loads) if loads is not None else None
    campaign.plan(size, seeds, only)  # a --loads that matches nothing fails before any run

    from dflab.backends import backend as make_backend
    from dflab.outputs import check_output_dir
    from dflab.reproduce import default_out, print_result
    from dflab.reproduce import reproduce as run_study
    from dflab.sweep import Interrupted

    root = check_output_dir("--out", out if out is not None else default_out(name, size))
    err = _err()
    with make_backend(cluster) as runner:
        jobs = jobs if jobs is not None else runner.default_jobs()
        err.print(f"reproduce: {name}, {size} size, {jobs} jobs, results in {root}")
        try:
            result = run_study(
                campaign,
                size,
                root,
                jobs=jobs,
                console=err,
                executor_factory=runner.factory,
                policy=cluster.policy(),
                seeds=seeds,
                loads=only,
            )
        except Interrupted as exc:
            print(f"error: {exc.message()}", file=sys.stderr)
            raise typer.Exit(exc.exit_code) from None
    print_result(result, _out(), sys.stderr)
    if not result.ok:
        raise typer.Exit(EXIT_FAILED)


@app.command()
def plot(
    directory: Annotated[
        Path,
        typer.Argument(help="Result directory of a sweep, or of 'dflab run --workload-out'."),
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            help="Output figure: .png, .pdf, .svg, ... (a name without a suffix gets .png; "
            "default: DIR/latency_throughput.png)."
        ),
    ] = None,
    p99: Annotated[bool, typer.Option("--p99", help="Add a row of p99 latency panels.")] = False,
    pdf: Annotated[
        bool, typer.Option("--pdf", help="Also write a PDF next to the figure.")
    ] = False,
) -> None:
    """Plot latency and accepted load vs offered load from a sweep's result directory, or the
    per-job panels of a workload run (communication time, throughput over time, latency, stall
    time, congestion index)."""
    from dflab.plots import plot_store
    from dflab.workload_plots import is_workload_dir, plot_workload

    if is_workload_dir(directory):
        for path in plot_workload(directory, out, pdf=pdf):
            print(f"plot: {path}")
        return
    for path in plot_store(directory, out, p99=p99, pdf=pdf):
        print(f"plot: {path}")


@app.command()
def info(
    experiment: OneExperimentArg = None,
    preset: PresetOpt = None,
    set_: SetOpt = None,
    routing: RoutingOpt = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """Topology facts of an experiment: routers, nodes, radix, links, diameter, VCs."""
    from dflab import engine
    from dflab.report import key_value_table, to_json

    fields = _shortcuts(**{"routing.algorithm": routing})
    exp, _ = load_experiment_file(experiment, set_ or [], preset, fields, defaults=True)
    facts = engine.topology_info(exp.to_engine_json())
    if json_out:
        print(to_json(facts))
    else:
        title = f"{exp.topology_label()} {exp.topology.arrangement}, {exp.routing.algorithm}"
        _out().print(key_value_table(facts, title))


@app.command()
def bench(
    scenario: Annotated[
        list[str] | None,
        typer.Option(metavar="NAME", help="Scenario to run (repeatable; default: all)."),
    ] = None,
    quick: Annotated[bool, typer.Option("--quick", help="Much shorter windows.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON list.")] = False,
    repeat: Annotated[
        int,
        typer.Option(
            min=1,
            help="Runs per scenario; the row is the median run, with the fastest and slowest.",
        ),
    ] = 1,
) -> None:
    """Fixed performance scenarios, each in a fresh process (peak RSS per scenario)."""
    from dflab.bench import LABELS, REPEAT_TABLE_FIELDS, TABLE_FIELDS, run_bench
    from dflab.report import rows_table, to_json

    rows = run_bench(scenario or None, quick=quick, repeat=repeat)
    if json_out:
        print(to_json(rows))
    else:
        builds = sorted({str(row["engine_build"]) for row in rows})
        title = f"dflab bench{' (quick)' if quick else ''}, engine {', '.join(builds)}"
        fields = TABLE_FIELDS + (REPEAT_TABLE_FIELDS if repeat > 1 else ())
        if repeat > 1:
            title += f", median of {repeat} runs"
        _out().print(rows_table(rows, fields, title, LABELS))


@app.command()
def presets() -> None:
    """List the named presets."""
    from dflab.config import Experiment

    for name in preset_registry.names():
        exp = validate(Experiment, {"preset": name})
        print(f"{name}\t{exp.topology_label()}\t{exp.nodes()} nodes\t{exp.topology.arrangement}")


def main(argv: list[str] | None = None) -> int:
    """Entry point: user errors and usage errors -> one stderr line, exit 2, no traceback."""
    try:
        result = app(args=argv, prog_name="dflab", standalone_mode=False)
    except UserError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return EXIT_USER_ERROR
    except typer.TyperException as exc:
        # Usage errors (unknown option, bad option value, missing argument).
        message = " ".join(exc.format_message().split())
        if message:  # empty when the help was shown for a bare `dflab`
            print(f"error: {message}", file=sys.stderr)
        return getattr(exc, "exit_code", EXIT_USER_ERROR) or EXIT_USER_ERROR
    except typer.Abort:
        print("error: aborted", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    return result if isinstance(result, int) else 0


if __name__ == "__main__":
    raise SystemExit(main())
