"""`planner fleet`: the multi-year purchase plan for a portfolio of workloads."""

from __future__ import annotations

import json

import click

from planner.base.limits import MAX_SOLVER_THREADS
from planner.cli.base import (
    FiniteRange,
    Quantity,
    calibration_option,
    catalog_option,
    command_inputs,
    echo,
    imports_done,
    main,
    parse_settings,
    set_option,
    stderr_progress,
    write_report,
)


@main.command()
@click.argument("fleet_file", metavar="FLEET", required=False, type=click.Path())
@click.option("--schema", is_flag=True, help="Print the fleet file's JSON schema and exit.")
@click.option(
    "--solver",
    type=click.Choice(["cbc", "highs", "auto"]),
    default="cbc",
    show_default=True,
    help="MILP solver. CBC on every core proves the fleet's gap fastest (docs/fleet.md); auto is HiGHS.",
)
@click.option("--time-limit", type=Quantity("s"), default="120s", show_default=True, help="Solver time limit.")
@click.option(
    "--gap",
    type=FiniteRange(min=0),
    default=0.01,
    show_default=True,
    help="Relative gap at which to stop (0.01 = within 1% of the optimum; 0 = the optimum).",
)
@click.option(
    "--threads",
    type=click.IntRange(min=1, max=MAX_SOLVER_THREADS),
    help="Solver threads (default: every core); CBC repeats a plan exactly only on one.",
)
@calibration_option
@click.option("-o", "--output", type=click.Path(), help="Write a workbook (.xlsx, with charts) or the plan (.json).")
@click.option("--json", "as_json", is_flag=True, help="Print the whole plan as JSON.")
@click.option("-q", "--quiet", is_flag=True, help="No progress messages on stderr.")
@set_option
@catalog_option
def fleet(fleet_file: str | None, schema: bool, **kw) -> None:
    """Plan a fleet over quarters: what to buy when and from whom, where each training run and inference
    service runs, what to rent, at least discounted cost (capex net of residual value, energy,
    colocation, cloud, lateness penalties), within the site's power and racks and vendors' stock.

    \b
    Examples:
      planner fleet examples/fleet-startup.yaml
      planner fleet examples/fleet-brownfield.yaml -o fleet.xlsx
      planner fleet examples/fleet-startup.yaml --json --gap 0
      planner fleet examples/fleet-startup.yaml --set site.power[1].kw=1500
      planner fleet --schema > fleet.schema.json
    """
    if schema:
        from planner.inputs.fleet import Fleet

        echo(json.dumps(Fleet.model_json_schema(by_alias=True), indent=2))
        return
    if fleet_file is None:
        raise click.UsageError("give a FLEET file (see examples/fleet-*.yaml), or --schema")
    _run(fleet_file, kw)


def _run(path: str, kw: dict) -> None:
    from planner.answers.fleet import run
    from planner.base.errors import InfeasibleError
    from planner.base.fileio import Outputs
    from planner.catalog.load import load_catalog
    from planner.inputs.fleet import load_fleet
    from planner.model.calibration import load_calibration
    from planner.report.fleet_text import render
    from planner.report.writers import document, format_for

    imports_done()

    output = kw.pop("output")
    targets = [("-o", output, format_for("fleet", "-o", output))]
    spec = load_fleet(path, parse_settings(kw.pop("settings")))
    catalogs, calibration_path = [*spec.catalogs, *kw.pop("catalog_paths")], kw.pop("calibration")
    outputs = Outputs([("fleet file", path), *command_inputs(None, catalogs, calibration_path)])
    outputs.check("-o", output)  # before the solve: a bad target fails in a second, not after minutes
    catalog = load_catalog(catalogs)
    calibration = load_calibration(calibration_path)
    quiet = kw.pop("quiet")
    progress = stderr_progress(quiet)
    plan = run(
        catalog,
        spec,
        calibration,
        solver=kw.pop("solver"),
        time_limit_s=kw.pop("time_limit"),
        gap=kw.pop("gap"),
        progress=progress,
        source=path,
        threads=kw.pop("threads"),
    )
    write_report(outputs, plan, targets, quiet)
    echo(document(plan) if kw.pop("as_json") else render(plan).rstrip("\n"))
    if plan.status == "infeasible":
        raise InfeasibleError(f"{path}: the fleet cannot be met as written; the relaxations above say what would")
