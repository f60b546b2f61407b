"""`planner inference`."""

from __future__ import annotations

import click

from planner.base.limits import MAX_ALTERNATIVES, MAX_MICRO_BATCH, MAX_PARAMS
from planner.cli.base import (
    FiniteRange,
    Quantity,
    calibration_option,
    catalog_option,
    command_inputs,
    echo,
    imports_done,
    main,
    named,
    quiet_option,
    solver_option,
    stderr_progress,
    write_report,
)


@main.command()
@click.option("--params", type=Quantity("count", maximum=MAX_PARAMS), help="Model parameters, e.g. 175B.")
@click.option("--model", help="A model from models.csv (gives params and architecture).")
@click.option(
    "--latency",
    type=Quantity("s"),
    required=True,
    help="Latency target per generated token (one decode step; prefill and KV cache not modelled), e.g. 1s.",
)
@click.option(
    "--batch",
    type=click.IntRange(min=1, max=MAX_MICRO_BATCH),
    default=1,
    show_default=True,
    help="Sequences decoded together.",
)
@click.option(
    "--weight-bytes",
    type=FiniteRange(min=0.25, max=4),
    default=2.0,
    show_default=True,
    help="Bytes per weight: 2 fp16/bf16, 1 int8, 0.5 int4.",
)
@click.option("--gpu", "gpus", multiple=True, help="Allowed GPU (repeatable).")
@click.option("--max-machines", type=click.IntRange(min=1, max=256), default=16, show_default=True)
@click.option("--budget", type=Quantity("usd"), help="Most the configuration may cost.")
@click.option("--alternatives", type=click.IntRange(min=0, max=MAX_ALTERNATIVES), default=3, show_default=True)
@click.option("--explain", is_flag=True, help="Print the bandwidth ladder and the latency by machine count.")
@solver_option
@calibration_option
@click.option("-o", "--output", type=click.Path(), help="Write an .xlsx workbook (or .json).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@quiet_option
@catalog_option
def inference(**kw) -> None:
    """The cheapest machines that serve a model too big for GPU memory within a latency target per token.

    Weights that do not fit in HBM stream from DRAM and NVMe over PCIe every decode step, so the latency per
    generated token is bounded by bandwidth; splitting each layer over m machines multiplies bandwidth but
    adds per-layer all-reduce latency. The machine count is optimised, not assumed. Prefill (time to first
    token) and the KV cache's reads and memory are not modelled: for a request load with TTFT and TPOT targets,
    use `planner serve`.

    \b
    Examples:
      planner inference --params 175B --latency 1s
      planner inference --params 1T --latency 1s --gpu V100 --explain
      planner inference --model GPT-3-175B --latency 200ms --batch 8 -o inference.xlsx
    """
    from planner.answers.serve import plan as plan_inference
    from planner.base.errors import UsageError
    from planner.base.fileio import Outputs
    from planner.catalog.load import load_catalog
    from planner.model.calibration import load_calibration
    from planner.model.performance import estimated_layers
    from planner.model.workload import Serving
    from planner.report.inference_text import render
    from planner.report.writers import document, format_for

    imports_done()

    catalogs, output = kw.pop("catalog_paths"), kw.pop("output")
    targets = [("-o", output, format_for("inference", "-o", output))]
    outputs = Outputs(command_inputs(catalogs=catalogs, calibration=kw["calibration"]))
    outputs.check("-o", output)
    loaded = load_catalog(catalogs)
    params, model = kw.pop("params"), kw.pop("model")
    if (params is None) == (model is None):
        raise UsageError("give exactly one of --params (e.g. 175B) or --model")
    if model:
        row = named("--model", lambda: loaded.model(model))
        params, layers, hidden = row.params, row.layers, row.hidden
    else:
        layers = int(estimated_layers(params))
        hidden = int(layers * 128)
    job = Serving(params * kw.pop("weight_bytes"), params, layers, hidden, kw.pop("batch"))
    quiet = kw.pop("quiet")
    for gpu in kw["gpus"]:
        named("--gpu", lambda gpu=gpu: loaded.gpu(gpu))
    result = plan_inference(
        loaded,
        job,
        kw.pop("latency"),
        load_calibration(kw.pop("calibration")),
        max_machines=kw.pop("max_machines"),
        gpus=list(kw.pop("gpus")) or None,
        budget_usd=kw.pop("budget"),
        alternatives=kw.pop("alternatives"),
        solver=kw.pop("solver"),
        progress=stderr_progress(quiet),
    )
    write_report(outputs, result, targets, quiet)
    echo(document(result) if kw.pop("as_json") else render(result, kw.pop("explain")))
