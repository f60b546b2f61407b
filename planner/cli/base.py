"""The click group, shared options and error handling of every command. Commands live beside it, one
module per family; none of them holds modelling logic."""

from __future__ import annotations

import errno
import gc
import math
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

import click

from planner import __version__
from planner.base import limits as L
from planner.base.errors import CatalogError, PlannerError
from planner.base.units import parse_quantity


class PlannerGroup(click.Group):
    """Turns PlannerError into a one-line message per problem and its exit code: never a traceback, and
    never a flood (see _echo_errors)."""

    def main(self, *args, **kwargs):
        """Ctrl-C, SIGTERM and SIGHUP stop the command with its clean-ups run (no temporary is left), one line
        and the shell's exit status for a signal (128 + its number: 130 for Ctrl-C, not click's "Aborted!"
        and 1)."""
        from planner.base.fileio import Stopped, stop_on_signals

        gc.set_threshold(IMPORT_GC_THRESHOLD, *DEFAULT_GC_THRESHOLD[1:])  # until imports_done
        try:
            with stop_on_signals():
                return super().main(*args, **kwargs)
        except Stopped as stop:
            name = signal.Signals(stop.signum).name
            click.echo(f"error: stopped by {name}; the outputs are all written or all as they were", err=True)
            sys.exit(128 + stop.signum)
        finally:  # a caller in the same process (the API, tests) collects as before
            gc.set_threshold(*DEFAULT_GC_THRESHOLD)

    def invoke(self, ctx: click.Context):
        from planner.base.fileio import Stopped

        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:  # (click's main would print "Aborted!" and exit 1)
            raise Stopped(signal.SIGINT) from None
        except PlannerError as exc:
            _echo_errors(str(exc).splitlines())
            if isinstance(exc, CatalogError) and len(exc.problems) > 1:
                echo(f"error: {len(exc.problems):,} problems found", err=True)
            ctx.exit(exc.exit_code)
        except OSError as exc:  # outside planner's own files (those are WriteErrors): the solver's temporaries
            _echo_errors([_os_error_line(exc)])
            ctx.exit(1)
        except (MemoryError, RecursionError) as exc:  # a last guard: the limits are meant to stop it first
            _echo_errors([f"the input is too large or too deeply nested for this machine ({type(exc).__name__})"])
            ctx.exit(1)


def _os_error_line(exc: OSError) -> str:
    from planner.base.fileio import CWD_GONE, cwd_gone

    if exc.errno == errno.ENOENT and cwd_gone():
        return CWD_GONE
    if exc.errno not in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
        return f"{exc.filename}: {exc.strerror or exc}" if exc.filename else str(exc.strerror or exc)
    import tempfile

    # the solver's model files go to the temporary folder (TMPDIR); planner's outputs are not touched
    where = exc.filename or f"a temporary file in {tempfile.gettempdir()}"
    return (
        f"{where}: cannot write ({exc.strerror}): a full disk or a file-size limit (ulimit -f); free space or "
        "set TMPDIR; no output file was changed"
    )


def echo(message: str = "", err: bool = False) -> None:
    """Print a line on stdout (err: stderr) as every planner command does: controls, invisible and
    direction-changing characters shown as escapes (planner.base.text.visible), never raw."""
    from planner.base.text import visible

    click.echo(visible(str(message), lines=True), err=err)


def _echo_errors(lines: list[str]) -> None:
    """The lines of an error, each cut to MAX_LINE_CHARS, as many as fit MAX_ERROR_LINES (+1: an error's
    own "... and N more" line) and MAX_ERROR_BYTES; then how many more there were."""
    shown, used = 0, 0
    for line in lines:
        text = f"error: {L.cut(line)}"
        size = len(text.encode()) + 1
        if shown > L.MAX_ERROR_LINES or (shown and used + size > L.MAX_ERROR_BYTES):
            break
        echo(text, err=True)
        shown, used = shown + 1, used + size
    if shown < len(lines):
        echo(f"error: ... and {len(lines) - shown:,} more lines", err=True)


catalog_option = click.option(
    "--catalog",
    "catalog_paths",
    multiple=True,
    type=click.Path(),
    metavar="PATH",
    help="Your catalog: a CSV, a folder of CSVs, or an .xlsx with one sheet per kind. Rows whose key "
    "matches a shipped row replace it. Repeatable; later files win.",
)


@click.group(cls=PlannerGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="planner")
@click.option(
    "--keep-invisible",
    is_flag=True,
    help="Accept invisible and direction-changing characters (U+200E/F, U+202A-E, U+2066-9, zero-width spaces) "
    "in input names, which are refused by default: right-to-left names may need them. Every output still "
    "shows them as escapes (\\u202e).",
)
def main(keep_invisible: bool) -> None:
    """Plan GPU clusters for DeepSpeed ZeRO-3 training: network, nodes and cost.

    \b
    Example:
      planner catalog list gpus
    """
    from planner.base.text import keep_invisible as keep

    keep(keep_invisible)


class Quantity(click.ParamType):
    """A number with optional unit ("176B", "400Gbps"); must be > 0 unless allow_zero, and at most
    maximum (by default the dimension's ceiling in planner.base.limits)."""

    def __init__(self, dimension: str, allow_zero: bool = False, maximum: float | None = None):
        self.dimension, self.allow_zero = dimension, allow_zero
        self.maximum = L.MAX_QUANTITY[dimension] if maximum is None else maximum
        self.name = dimension

    def convert(self, value, param, ctx):
        try:
            number = parse_quantity(value, self.dimension)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)
        if number < 0 or (number == 0 and not self.allow_zero):
            self.fail(f"must be positive, got {L.short(value)}", param, ctx)
        if number > self.maximum:
            self.fail(f"{L.short(value)} is out of range: at most {self.maximum:,.0f}", param, ctx)
        return number


class FiniteRange(click.FloatRange):
    """click.FloatRange that also refuses nan and inf (nan passes every comparison of a range check)."""

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{L.short(value)} is not a finite number", param, ctx)
        return number


set_option = click.option(
    "--set",
    "settings",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override any scenario field by its dotted path; the value is read as YAML. Repeatable. "
    "Example: --set constraints.max_nodes=64 --set cabling.switch_reach_m=50",
)


def parse_settings(settings: Sequence[str]) -> dict[str, object]:
    """--set KEY=VALUE pairs as scenario overrides; errors are usage errors (exit 2). Values are read by
    the same counting YAML loader as scenario files."""
    from planner.base.safeyaml import YamlProblem, load_yaml

    out: dict[str, object] = {}
    for item in settings:
        key, sep, value = item.partition("=")
        shown = L.short(item)
        if not sep or not key.strip():
            raise click.UsageError(f"--set {shown}: write it as KEY=VALUE, e.g. constraints.max_nodes=64")
        if key.count(".") >= L.MAX_NESTING_DEPTH:
            raise click.UsageError(f"--set {shown}: the KEY has more than {L.MAX_NESTING_DEPTH} dotted parts")
        try:
            out[key.strip()] = load_yaml(value)
        except YamlProblem as exc:
            raise click.UsageError(f"--set {shown}: the value is not valid YAML ({exc})") from None
    return out


def command_inputs(
    scenario: str | Path | None = None,
    catalogs: Sequence[str | Path] = (),
    calibration: str | Path | None = None,
    measurements: Sequence[str | Path] = (),
) -> list[tuple[str, str | Path | None]]:
    """What a command reads, for planner.base.fileio.Outputs: an output may not overwrite any of them."""
    from planner.base.resources import catalogs_dir

    return [
        ("scenario", scenario),
        ("shipped catalog folder", catalogs_dir()),
        *(("catalog", c) for c in catalogs),
        ("calibration file", calibration),
        *(("measurements file", m) for m in measurements),
    ]


solver_option = click.option(
    "--solver",
    type=click.Choice(["auto", "highs", "cbc"]),
    default="auto",
    show_default=True,
    help="MILP solver: auto is HiGHS (in-process, through highspy) when installed, else CBC.",
)
calibration_option = click.option("--calibration", type=click.Path(), help="Calibration file from `planner calibrate`.")
micro_batches_option = click.option(
    "--micro-batch",
    "micro_batches",
    multiple=True,
    type=click.IntRange(min=1),
    help="Allowed micro-batch (repeatable).",
)

confidence_option = click.option(
    "--confidence",
    type=FiniteRange(0.5, 1, min_open=True, max_open=True),
    help="Plan for the pessimistic outcome reached with this probability, e.g. 0.9: the p10 of the model's "
    "out-of-publication errors (overrides the scenario's confidence).",
)

quiet_option = click.option("-q", "--quiet", is_flag=True, help="No progress or 'wrote FILE' messages on stderr.")

# The question itself as options (plan and cloud): with no scenario file they are the whole scenario.
QUESTION_FLAGS = {
    "workload.model": "--model",
    "workload.params": "--params",
    "workload.seq_len": "--seq-len",
    "workload.framework": "--framework",
    "requirement.tokens": "--tokens",
    "requirement.days": "--days",
    "name": "--name",
}
_QUESTION_OPTIONS = [
    click.option("--model", help="Override workload.model (a name from models.csv), e.g. Llama-3-70B."),
    click.option("--params", help="Override workload.params (no model named), e.g. 176B."),
    click.option("--seq-len", type=click.IntRange(min=1), help="Override workload.seq_len."),
    click.option(
        "--framework", type=click.Choice(["deepspeed", "fsdp", "megatron"]), help="Override workload.framework."
    ),
    click.option("--tokens", help="Override requirement.tokens (with --days: a deadline), e.g. 15T."),
    click.option("--days", help="Override requirement.days, e.g. 90."),
    click.option("--name", "scenario_name", help="Override name (the scenario's title in reports)."),
]


def question_options(func):
    """The options of QUESTION_FLAGS."""
    for option in reversed(_QUESTION_OPTIONS):
        func = option(func)
    return func


def question_overrides(kw: dict) -> dict:
    """The dotted overrides of the question options (popped from the command's keywords)."""
    keys = {"workload.model": "model", "workload.params": "params", "workload.seq_len": "seq_len"}
    keys |= {"workload.framework": "framework", "requirement.tokens": "tokens", "requirement.days": "days"}
    return {dotted: kw.pop(name) for dotted, name in keys.items()} | {"name": kw.pop("scenario_name")}


def need_question(scenario, kw: dict, what: str) -> None:
    """Without a scenario file the model must be given as an option (the requirement is checked with it)."""
    if scenario is None and not (kw.get("model") or kw.get("params")):
        raise click.UsageError(
            f"give a SCENARIO file (see examples/), or the question in options: --model (or --params) with {what}"
        )


# Importing pandas, scipy, pulp and planner's pydantic types allocates millions of objects that all live until
# exit: at CPython's default threshold (a young collection every 700 net allocations, and a full one every 100 of
# those) the imports of a plan ran ~300 collections, one a full scan, ~0.1 s of CPU for nothing. Until a command's
# imports are done (imports_done) young collections run this many allocations apart instead; a command that
# never calls it keeps collecting, only less often.
DEFAULT_GC_THRESHOLD = gc.get_threshold()
IMPORT_GC_THRESHOLD = 300_000


def imports_done() -> None:
    """Called by each long-running command once its modules are imported. Importing pandas, scipy, pulp and
    building pydantic's validators leaves ~1M long-lived objects that every garbage collection during the run
    would scan again; gc.freeze moves them out of the collector's reach (they live until exit anyway), which
    takes 0.2-0.4 s of CPU off a plan (README, speed). Objects made afterwards are collected as usual: the
    imports ran with young collections IMPORT_GC_THRESHOLD allocations apart (main), and the default comes back."""
    gc.freeze()
    gc.set_threshold(*DEFAULT_GC_THRESHOLD)


def stderr_progress(quiet: bool):
    """Progress messages ("... step") on stderr, so stdout stays the result; silent with -q."""
    return (lambda _: None) if quiet else (lambda message: echo(f"... {message}", err=True))


def wrote(path, quiet: bool = False) -> None:
    """Confirm a written file on stderr (stdout stays the result)."""
    if not quiet:
        echo(f"wrote {path}", err=True)


def write_report(outputs, report, targets, quiet: bool = False) -> None:
    """Write `report` to each (option, path, format) of `targets` that has a path (planner.report.writers
    chose the format), all files or none (planner.base.fileio.Outputs), and confirm each on stderr."""
    chosen = [(option, path, fmt) for option, path, fmt in targets if fmt is not None]
    for option, path, fmt in chosen:
        fmt.prepare(report)
        outputs.add(option, path, lambda tmp, fmt=fmt: fmt.write(report, tmp))
    outputs.commit()
    for _, path, _ in chosen:
        wrote(path, quiet)


def check_names(catalog, scenario, path, given: dict[str, str] | None = None) -> None:
    """The names a scenario gives against the catalog, before any work: its workload (the model named, the
    architecture complete), the GPUs, servers and switches its constraints allow and the cloud providers,
    regions and instances it rents from, so a typo names the file and field: "s.yaml:
    constraints.switches[0]: unknown switch 'QM9999': did you mean QM9700?" (given: the fields the command line
    set and their options, inputs.scenario.sources, named instead of the file)."""
    from planner.base.errors import in_field
    from planner.inputs.scenario import source_of
    from planner.model.workload import scenario_training

    c = scenario.constraints
    named_model = "workload.model" if scenario.workload.model else "workload"  # a typo in --model names it
    lookups = [(named_model, lambda: scenario_training(catalog, scenario))]
    for field, find in (("gpus", catalog.gpu), ("servers", catalog.server), ("switches", catalog.switch)):
        names = getattr(c, field) or []
        lookups += [(f"constraints.{field}[{i}]", lambda f=find, n=n: f(n)) for i, n in enumerate(names)]
    rows = catalog.items("cloud")
    for field, attribute in (("providers", "provider"), ("regions", "region"), ("instances", "instance")):
        known = sorted({getattr(r, attribute) for r in rows})
        names = getattr(scenario.cloud, field) or []
        lookups += [
            (f"cloud.{field}[{i}]", lambda n=n, k=known, a=attribute: _known(n, k, a)) for i, n in enumerate(names)
        ]
    for where, lookup in lookups:
        in_field(source_of(where, path, given or {}), where, lookup)


def named(option: str, lookup):
    """lookup(), or a UsageError (exit 2) that names the option: "--gpu: unknown GPU 'H1000': did you mean"."""
    from planner.base.errors import PlannerError, UsageError

    try:
        return lookup()
    except PlannerError as exc:
        raise UsageError(f"{option}: {exc}") from None


def _known(name: str, known: list[str], what: str) -> None:
    """A cloud provider, region or instance the catalog has, or a PlannerError suggesting close ones."""
    from planner.base.errors import PlannerError
    from planner.catalog.load import unknown_name_message

    if name.strip().lower() not in {k.lower() for k in known}:
        raise PlannerError(unknown_name_message(f"cloud {what}", name, known, "cloud"))
