"""`planner sweep`: a plan's (or a fleet's first purchase's) outcome across draws of what we don't know."""

from __future__ import annotations

from pathlib import Path

import click

from planner.cli.base import (
    FiniteRange,
    Quantity,
    calibration_option,
    catalog_option,
    check_names,
    command_inputs,
    echo,
    imports_done,
    main,
    parse_settings,
    set_option,
    stderr_progress,
    write_report,
)

DEFAULT_DRAWS = 1000  # a purchase: each draw is array arithmetic (~1 ms)
DEFAULT_FUTURES = 20  # a fleet: each future is two MILP solves


@main.command()
@click.argument("scenario", type=click.Path())
@click.option(
    "--draws",
    type=click.IntRange(min=1, max=1_000_000),
    help=f"Draws (a scenario; default {DEFAULT_DRAWS}) or sampled futures (a fleet file; default {DEFAULT_FUTURES}).",
)
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="The draws' random seed.")
@click.option(
    "--objective",
    type=click.Choice(["point", "expected-cost", "regret"]),
    default="point",
    show_default=True,
    help="Which purchase to recommend: the point plan's; or, among those that meet the deadline with "
    "probability --p-deadline, the least expected cost or the least worst-decile regret.",
)
@click.option(
    "--p-deadline",
    type=FiniteRange(0, 1, min_open=True, max_open=False),
    default=0.9,
    show_default=True,
    help="With --objective expected-cost or regret: the least probability of meeting the deadline a purchase "
    "must have to be recommended.",
)
@click.option(
    "--late-cost",
    type=Quantity("usd"),
    help="What a day late costs, e.g. 250k (default: a day of the point plan's capex over its life).",
)
@click.option(
    "--rent",
    is_flag=True,
    help="Sweep the rental planner cloud chooses (cloud rates by confidence, billed by the hour the job runs) "
    "instead of the purchase planner plan chooses.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=0, max=4096),
    help="Worker processes of the local Dask cluster (default: this machine's cores; 0: no Dask, in this process).",
)
@click.option("--scheduler", metavar="ADDRESS", help="Run on an existing Dask cluster, e.g. tcp://10.0.0.5:8786.")
@click.option(
    "--results",
    type=click.Path(),
    help="Keep finished draws in this .npz file as they finish; run again with it to resume an interrupted sweep.",
)
@calibration_option
@click.option("-o", "--output", type=click.Path(), help="Write a workbook (.xlsx, with charts) or the sweep (.json).")
@click.option("--json", "as_json", is_flag=True, help="Print the whole sweep as JSON.")
@click.option("-q", "--quiet", is_flag=True, help="No progress messages on stderr.")
@set_option
@catalog_option
def sweep(scenario: str, **kw) -> None:
    """Draw prices (by catalog confidence), throughput (by the model's validated errors), interruption rates
    and lead times; evaluate the point plan and the next purchases in every draw; report the deadline risk,
    the probability each purchase is the cheapest and each one's regret. A fleet file (see
    examples/fleet-*.yaml) answers "buy now or wait" across sampled futures instead.

    \b
    Examples:
      planner sweep examples/llama-70b-h100.yaml
      planner sweep examples/llama-70b-h100.yaml --draws 1000 --objective expected-cost --p-deadline 0.9
      planner sweep examples/llama-70b-h100.yaml --workers 2 --results sweep.npz -o sweep.xlsx
      planner sweep examples/cloud-70b.yaml --rent
      planner sweep examples/fleet-startup.yaml --draws 20
    """
    from planner.base.distributed import engine
    from planner.base.fileio import Outputs, read_text
    from planner.base.limits import MAX_SCENARIO_BYTES
    from planner.base.safeyaml import YamlProblem, load_yaml
    from planner.report.writers import format_for

    imports_done()
    output, results = kw.pop("output"), kw.pop("results")
    targets = [("-o", output, format_for("sweep", "-o", output))]
    if results is not None and not results.lower().endswith(".npz"):
        raise click.UsageError(f"--results {results}: give a .npz file (the draws are kept as numpy arrays)")
    fleet = False  # a fleet file is told by its horizon; a pipe is read once, as a scenario
    if Path(scenario).is_file():
        try:
            data = load_yaml(read_text(scenario, MAX_SCENARIO_BYTES, "scenario"))
            fleet = isinstance(data, dict) and "horizon" in data
        except YamlProblem:
            pass  # the scenario loader names the problem
    if fleet:  # the purchase sweep's own options mean nothing to a fleet's futures: say so, not ignore them
        given = {"--results": results, "--late-cost": kw["late_cost"], "--rent": kw["rent"] or None}
        given["--objective"] = kw["objective"] if kw["objective"] != "point" else None
        for option, value in given.items():
            if value is not None:
                raise click.UsageError(f"{option} applies to a scenario's draws, not to a fleet file's futures")
    settings = parse_settings(kw.pop("settings"))
    loaded, catalog_paths = _load(scenario, fleet, settings, kw.pop("catalog_paths"))
    calibration_path = kw.pop("calibration")
    outputs = Outputs(command_inputs(scenario, catalog_paths, calibration_path))
    outputs.check("-o", output)
    outputs.check("--results", results)
    from planner.catalog.load import load_catalog
    from planner.model.calibration import load_calibration

    catalog, calibration = load_catalog(catalog_paths), load_calibration(calibration_path)
    if not fleet:
        check_names(catalog, loaded, scenario)
    quiet = kw.pop("quiet")
    progress = stderr_progress(quiet)
    draws = kw.pop("draws") or (DEFAULT_FUTURES if fleet else DEFAULT_DRAWS)
    progress("starting the Dask cluster" if kw["workers"] != 0 or kw["scheduler"] else "draws in this process")
    with engine(kw.pop("workers"), kw.pop("scheduler")) as runner:
        if fleet:
            from planner.answers.sweep import fleet_futures

            result = fleet_futures(catalog, loaded, calibration, draws, kw["seed"], runner, scenario, progress)
        else:
            from planner.answers.sweep import run

            result = run(
                catalog,
                loaded,
                calibration,
                draws=draws,
                seed=kw["seed"],
                objective=kw["objective"],
                p_deadline=kw["p_deadline"],
                late_usd_per_day=kw["late_cost"],
                engine=runner,
                results_path=results,
                progress=progress,
                rent=kw["rent"],
            )
    from planner.report.sweep_text import render
    from planner.report.writers import document

    write_report(outputs, result, targets, quiet)
    echo(document(result) if kw["as_json"] else render(result).rstrip("\n"))


def _load(path: str, fleet: bool, settings: dict, extra_catalogs) -> tuple[object, list]:
    if fleet:
        from planner.inputs.fleet import load_fleet

        spec = load_fleet(path, settings)
        return spec, [*spec.catalogs, *extra_catalogs]
    from planner.inputs.scenario import load_scenario

    scenario = load_scenario(path, {}, settings, {})
    return scenario, [*scenario.catalogs, *extra_catalogs]
