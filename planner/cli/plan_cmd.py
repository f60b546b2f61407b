"""`planner plan` (and --compare-cloud)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from planner.base.limits import MAX_ALTERNATIVES
from planner.cli.base import (
    QUESTION_FLAGS,
    FiniteRange,
    Quantity,
    calibration_option,
    catalog_option,
    check_names,
    command_inputs,
    confidence_option,
    echo,
    imports_done,
    main,
    micro_batches_option,
    need_question,
    parse_settings,
    question_options,
    question_overrides,
    set_option,
    solver_option,
    stderr_progress,
    write_report,
)


@main.command()
@click.argument("scenario", required=False, type=click.Path())
@click.option("--schema", is_flag=True, help="Print the scenario file's JSON schema and exit.")
@question_options
@click.option(
    "--save-scenario",
    type=click.Path(),
    help="Write the scenario this run implies (the file with every option applied) as YAML, e.g. q.yaml.",
)
@click.option("--target-tflops", type=Quantity("tflops"), help="Override target_tflops.")
@click.option("--budget", type=Quantity("usd"), help="Override constraints.budget_usd, e.g. 30M.")
@click.option("--power-kw", help="Override constraints.power_kw, e.g. 720 or 720kW or 0.72MW.")
@click.option("--max-nodes", type=click.IntRange(min=1), help="Override constraints.max_nodes.")
@click.option("--gpus", "fixed_gpus", type=click.IntRange(min=1), help="Require exactly this many GPUs.")
@click.option("--gpu", "allowed_gpus", multiple=True, help="Allowed GPU (repeatable); overrides constraints.gpus.")
@click.option(
    "--fabric",
    "fabrics",
    multiple=True,
    type=click.Choice(["ib", "roce", "spectrum-x"]),
    help="Allowed fabric (repeatable): ib, roce (lossless RoCE), spectrum-x.",
)
@micro_batches_option
@click.option("--global-batch", type=click.IntRange(min=1), help="Override workload.global_batch.")
@click.option(
    "--objective",
    type=click.Choice(["capex", "tco", "cost-per-token", "throughput", "days"]),
    help="Override objective.kind: capex, tco, cost-per-token (TCO per trained token), or within --budget or "
    "--power-kw the most tokens/s (throughput) or fewest days (days).",
)
@click.option("--zeropp", is_flag=True, default=None, help="Turn on all three ZeRO++ options.")
@solver_option
@click.option("--time-limit", type=Quantity("s"), help="Solver time limit per solve, e.g. 60s.")
@click.option("--gap", type=FiniteRange(min=0), help="Relative MIP gap at which to stop, e.g. 0.01.")
@click.option(
    "--alternatives",
    type=click.IntRange(min=0, max=MAX_ALTERNATIVES),
    default=3,
    show_default=True,
    help="Next-best distinct plans to list.",
)
@calibration_option
@confidence_option
@click.option(
    "-o",
    "--output",
    type=click.Path(),
    help="Write the plan: .xlsx (quote workbook), .json (whole plan) or .csv (bill of materials).",
)
@click.option("--csv", "csv_path", type=click.Path(), help="Also write the bill of materials as CSV.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole plan as JSON.")
@click.option("-q", "--quiet", is_flag=True, help="No progress messages on stderr.")
@click.option("--compare-cloud", is_flag=True, help="Put the purchase beside the best cloud option (break-even).")
@set_option
@catalog_option
def plan(scenario: str | None, schema: bool, **kw) -> None:
    """Choose the cheapest cluster (nodes, NICs, fabric, switches, optics, micro-batch) for a scenario.

    \b
    Examples:
      planner plan examples/bloom-176b-v100.yaml
      planner plan examples/llama-70b-h100.yaml --budget 60M --json
      planner plan examples/bloom-176b-v100.yaml --fabric roce -o bom.csv
      planner plan examples/bloom-176b-v100.yaml -o plan.xlsx
      planner plan examples/llama-70b-h100.yaml --compare-cloud
      planner plan --model Llama-3-70B --tokens 15T --days 90 --budget 250M --gpu H100 --gpu B200
      planner plan --schema > scenario.schema.json

    Without a SCENARIO file the options are the whole question: a model (--model or --params) and a
    requirement (--tokens with --days, or --gpus); --save-scenario keeps it as a file.
    """
    from planner.inputs.scenario import Scenario

    if schema:
        echo(json.dumps(Scenario.model_json_schema(), indent=2))
        return
    need_question(scenario, kw, "--tokens and --days (or --gpus); or --schema")
    _run_plan(scenario, kw)


# the option that sets each overridden field (an error in its value names the option, not the file)
PLAN_FLAGS = {
    "target_tflops": "--target-tflops",
    "confidence": "--confidence",
    "constraints.budget_usd": "--budget",
    "constraints.power_kw": "--power-kw",
    "constraints.max_nodes": "--max-nodes",
    "requirement": "--gpus",
    "constraints.gpus": "--gpu",
    "constraints.fabrics": "--fabric",
    "workload.micro_batches": "--micro-batch",
    "workload.global_batch": "--global-batch",
    "objective.kind": "--objective",
    **QUESTION_FLAGS,
}


def _overrides(kw: dict) -> dict:
    zeropp = kw.pop("zeropp")
    return {
        "target_tflops": kw.pop("target_tflops"),
        "confidence": kw.pop("confidence"),
        "constraints.budget_usd": kw.pop("budget"),
        "constraints.power_kw": kw.pop("power_kw"),
        "constraints.max_nodes": kw.pop("max_nodes"),
        **({"requirement": {"gpus": g}} if (g := kw.pop("fixed_gpus")) else {}),
        "constraints.gpus": list(kw.pop("allowed_gpus")) or None,
        "constraints.fabrics": list(kw.pop("fabrics")) or None,
        "workload.micro_batches": list(kw.pop("micro_batches")) or None,
        "workload.global_batch": kw.pop("global_batch"),
        "objective.kind": kw.pop("objective"),
        **question_overrides(kw),
        **({"workload.qwz": True, "workload.hpz": True, "workload.qgz": True} if zeropp else {}),
    }


def _run_plan(path: str | None, kw: dict) -> None:
    from planner.answers.buy import run_with_table
    from planner.base.fileio import Outputs
    from planner.catalog.load import load_catalog
    from planner.inputs.scenario import COMMAND_LINE, load_scenario, sources
    from planner.model.calibration import load_calibration
    from planner.report.plan_text import render
    from planner.report.writers import PlanReport, document, format_for

    imports_done()

    output, csv_path = kw.pop("output"), kw.pop("csv_path")
    targets = [("-o", output, format_for("plan", "-o", output))]
    targets.append(("--csv", csv_path, format_for("bill of materials", "--csv", csv_path)))
    saved = kw.pop("save_scenario")
    targets.append(("--save-scenario", saved, format_for("scenario", "--save-scenario", saved)))
    overrides, settings = _overrides(kw), parse_settings(kw.pop("settings"))
    loaded_scenario = load_scenario(path, overrides, settings, PLAN_FLAGS)
    catalogs, calibration_path = [*loaded_scenario.catalogs, *kw.pop("catalog_paths")], kw.pop("calibration")
    outputs = Outputs(command_inputs(path, catalogs, calibration_path))
    for option, target, _ in targets:  # before the solve: a bad target fails in a second, not after minutes
        outputs.check(option, target)
    loaded = load_catalog(catalogs)
    label = COMMAND_LINE if path is None else path
    check_names(loaded, loaded_scenario, label, sources(label, overrides, settings, PLAN_FLAGS))
    if saved:  # the question itself, kept even when no plan meets it
        question = _question(path, overrides, settings, catalogs)
        write_report(Outputs(command_inputs(path, catalogs, calibration_path)), question, targets[-1:], kw["quiet"])
        targets = targets[:-1]
    calibration = load_calibration(calibration_path)
    quiet, as_json, solver, compare = kw.pop("quiet"), kw.pop("as_json"), kw.pop("solver"), kw.pop("compare_cloud")
    progress = stderr_progress(quiet)
    result, planned = run_with_table(
        loaded,
        loaded_scenario,
        calibration,
        solver=solver,
        time_limit_s=kw.pop("time_limit"),
        gap=kw.pop("gap"),
        alternatives=kw.pop("alternatives"),
        progress=progress,
    )
    comparison = _compare_cloud(loaded, loaded_scenario, calibration, result, solver, progress) if compare else None

    def workbook_context():
        progress("sensitivity sweeps for the workbook")
        return _workbook_context(loaded, loaded_scenario, result, calibration, comparison, planned)

    report = PlanReport(result, comparison, compare, workbook_context)
    write_report(outputs, report, targets, quiet)
    echo(document(report) if as_json else render(result))
    if compare and not as_json:
        from planner.report.cloud_text import render_comparison

        echo("")
        echo(render_comparison(comparison) if comparison else "Buy vs rent: no cloud offering meets the scenario.")


def _question(path, overrides, settings, catalogs):
    """What --save-scenario writes: the scenario file's mapping with every option applied, its catalogs those
    the run read (the file's and --catalog's, as absolute paths, so the saved file reads the same ones)."""
    from planner.inputs.scenario import scenario_data
    from planner.report.writers import ScenarioReport

    data = scenario_data(path, overrides, settings)
    if catalogs:
        data["catalogs"] = [str(Path(c).resolve()) for c in catalogs]
    return ScenarioReport(data)


def _workbook_context(catalog, scenario, plan, calibration, comparison, planned=None):
    """Everything the quote workbook shows beyond the Plan: the bandwidth sweep at the chosen configuration
    and the cost-vs-target curve (from what the plan was chosen from, `planned`, when given)."""
    from planner.answers.buy import sensitivity
    from planner.report.excel import PlanContext

    moves = sensitivity(catalog, scenario, plan, calibration, planned)
    return PlanContext(
        scenario=scenario.model_dump(),
        calibration=calibration,
        catalog_files=dict(catalog.files),
        hidden_sheets=dict(catalog.hidden_sheets),
        bandwidth_sweep=moves.bandwidth_sweep,
        cost_curve=moves.cost_curve,
        cloud_comparison=comparison,
    )


def _compare_cloud(catalog, scenario, calibration, plan, solver, progress):
    from planner.answers.rent import (
        cheapest_per_token,
        committed_break_evens,
        compare,
        like_for_like,
        running_purchase_usd_per_h,
    )
    from planner.answers.rent import run as run_cloud

    progress("best cloud option for the same scenario (on-demand, reserved and capacity blocks; then commitments)")
    like = like_for_like(scenario)
    choice = run_cloud(catalog, like, calibration, solver).choice
    if choice is None:
        choice = cheapest_per_token(catalog, like, calibration, plan.metrics.tokens_per_s)
    if choice is None:
        return None
    running = running_purchase_usd_per_h(plan, scenario)
    return compare(plan, choice, like, committed_break_evens(catalog, plan, scenario, calibration, running))
