"""The click group, shared options and error handling of every command. Commands live beside it, one
module per family; none of them holds modelling logic."""

from __future__ import annotations

from collections.abc import Sequence

import click

from planner import __version__
from planner.errors import CatalogError, PlannerError
from planner.units import parse_quantity


class PlannerGroup(click.Group):
    """Turns PlannerError into a one-line message per problem and its exit code: never a traceback."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except PlannerError as exc:
            for line in str(exc).splitlines():
                click.echo(f"error: {line}", err=True)
            if isinstance(exc, CatalogError) and len(exc.problems) > 1:
                click.echo(f"error: {len(exc.problems)} problems found", err=True)
            ctx.exit(exc.exit_code)


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
def main() -> None:
    """Plan GPU clusters for DeepSpeed ZeRO-3 training: network, nodes and cost.

    \b
    Example:
      planner catalog list gpus
    """


class Quantity(click.ParamType):
    """A number with optional unit ("176B", "400Gbps"); must be > 0 unless allow_zero."""

    def __init__(self, dimension: str, allow_zero: bool = False):
        self.dimension, self.allow_zero = dimension, allow_zero
        self.name = dimension

    def convert(self, value, param, ctx):
        try:
            number = parse_quantity(value, self.dimension)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)
        if number < 0 or (number == 0 and not self.allow_zero):
            self.fail(f"must be positive, got {value!r}", param, ctx)
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
    """--set KEY=VALUE pairs as scenario overrides; errors are usage errors (exit 2)."""
    import yaml

    out: dict[str, object] = {}
    for item in settings:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise click.UsageError(f"--set {item!r}: write it as KEY=VALUE, e.g. constraints.max_nodes=64")
        try:
            out[key.strip()] = yaml.safe_load(value)
        except yaml.YAMLError:
            raise click.UsageError(f"--set {item!r}: the value is not valid YAML") from None
    return out


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
    type=click.FloatRange(0.5, 1, min_open=True, max_open=True),
    help="Plan for the pessimistic outcome reached with this probability, e.g. 0.9: the p10 of the model's "
    "out-of-source errors (overrides the scenario's confidence).",
)

quiet_option = click.option("-q", "--quiet", is_flag=True, help="No progress or 'wrote FILE' messages on stderr.")


def stderr_progress(quiet: bool):
    """Progress messages ("... step") on stderr, so stdout stays the result; silent with -q."""
    return (lambda _: None) if quiet else (lambda message: click.echo(f"... {message}", err=True))


def wrote(path, quiet: bool = False) -> None:
    """Confirm a written file on stderr (stdout stays the result)."""
    if not quiet:
        click.echo(f"wrote {path}", err=True)
