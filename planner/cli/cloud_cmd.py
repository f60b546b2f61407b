"""`planner cloud`."""

from __future__ import annotations

import click

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
    quiet_option,
    set_option,
    solver_option,
    stderr_progress,
    write_report,
)


@main.command()
@click.argument("scenario", required=False, type=click.Path())
@question_options
@click.option("--budget", type=Quantity("usd"), help="Override constraints.budget_usd (the cost to train).")
@click.option("--target-tflops", type=Quantity("tflops"), help="Override target_tflops.")
@click.option("--provider", "providers", multiple=True, help="Allowed provider (repeatable).")
@click.option("--region", "regions", multiple=True, help="Allowed region (repeatable).")
@click.option(
    "--pricing",
    "pricings",
    multiple=True,
    type=click.Choice(["ondemand", "spot", "reserved"]),
    help="Allowed pricing model (repeatable).",
)
@click.option("--spot-share", type=FiniteRange(0, 1), help="Override cloud.spot_share_max.")
@micro_batches_option
@solver_option
@calibration_option
@confidence_option
@click.option("-o", "--output", type=click.Path(), help="Write an .xlsx (ranking, cost over time, charts) or .json.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@quiet_option
@set_option
@catalog_option
def cloud(scenario: str | None, **kw) -> None:
    """Compare cloud offerings for a training run: instance type, count, pricing, cost to train.

    \b
    Examples:
      planner cloud examples/cloud-70b.yaml
      planner cloud examples/cloud-70b.yaml --provider AWS --provider Azure --spot-share 0.5
      planner cloud examples/cloud-70b.yaml -o cloud.xlsx
      planner cloud --model Llama-3-70B --tokens 300B --days 30 --provider AWS

    Without a SCENARIO file the options are the whole question: a model (--model or --params) and a deadline
    (--tokens with --days).
    """
    need_question(scenario, kw, "--tokens and --days")
    from planner.answers.rent import run as run_cloud
    from planner.base.fileio import Outputs
    from planner.catalog.load import load_catalog
    from planner.inputs.scenario import COMMAND_LINE, load_scenario, sources
    from planner.report.cloud_text import render
    from planner.report.writers import document, format_for

    imports_done()

    output = kw.pop("output")
    targets = [("-o", output, format_for("cloud", "-o", output))]
    overrides = {
        "constraints.budget_usd": kw.pop("budget"),
        "target_tflops": kw.pop("target_tflops"),
        "confidence": kw.pop("confidence"),
        "cloud.providers": list(kw.pop("providers")) or None,
        "cloud.regions": list(kw.pop("regions")) or None,
        "cloud.pricing": list(kw.pop("pricings")) or None,
        "cloud.spot_share_max": kw.pop("spot_share"),
        "workload.micro_batches": list(kw.pop("micro_batches")) or None,
        **question_overrides(kw),
    }
    settings = parse_settings(kw.pop("settings"))
    flags = {"constraints.budget_usd": "--budget", "target_tflops": "--target-tflops", "confidence": "--confidence"}
    flags |= {"cloud.providers": "--provider", "cloud.regions": "--region", "cloud.pricing": "--pricing"}
    flags |= {"cloud.spot_share_max": "--spot-share", "workload.micro_batches": "--micro-batch", **QUESTION_FLAGS}
    loaded_scenario = load_scenario(scenario, overrides, settings, flags)
    from planner.model.calibration import load_calibration

    catalogs, calibration_path = [*loaded_scenario.catalogs, *kw.pop("catalog_paths")], kw.pop("calibration")
    outputs = Outputs(command_inputs(scenario, catalogs, calibration_path))
    outputs.check("-o", output)
    loaded = load_catalog(catalogs)
    label = COMMAND_LINE if scenario is None else scenario
    check_names(loaded, loaded_scenario, label, sources(label, overrides, settings, flags))
    quiet = kw.pop("quiet")
    stderr_progress(quiet)("predicting every offering at every instance count, then the rental MILP")
    result = run_cloud(loaded, loaded_scenario, load_calibration(calibration_path), kw.pop("solver"))
    write_report(outputs, result, targets, quiet)
    echo(document(result) if kw.pop("as_json") else render(result))
    if result.choice is None:
        from planner.base.errors import InfeasibleError

        if result.ranking:  # offerings qualify but the budget excludes them all
            cheapest = min(r.cost_usd for r in result.ranking)
            raise InfeasibleError(
                f"budget {loaded_scenario.constraints.budget_usd:,.0f} USD is too small: the "
                f"cheapest qualifying option costs {cheapest:,.0f} USD"
            )
        if not result.excluded:
            raise InfeasibleError(
                "no cloud offering matches the providers/regions/instances/gpus filters; see "
                "`planner catalog list cloud`"
            )
        reasons = "; ".join(sorted({e.reason.split(":")[0] for e in result.excluded}))
        raise InfeasibleError(f"no cloud offering meets the scenario ({reasons}); see the exclusions above")
