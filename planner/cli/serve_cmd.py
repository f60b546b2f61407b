"""`planner serve`."""

from __future__ import annotations

import click

from planner.base import limits as L
from planner.cli.base import (
    FiniteRange,
    Quantity,
    catalog_option,
    command_inputs,
    echo,
    imports_done,
    main,
    named,
    quiet_option,
    solver_option,
    write_report,
)

# each option's field of the serving scenario (planner/inputs/serving.py): given with a file, it overrides it
FIELDS = {
    "model": "model",
    "rate": "load.rate_per_s",
    "input_tokens": "load.input_tokens",
    "output_tokens": "load.output_tokens",
    "input_cv": "load.input_cv",
    "output_cv": "load.output_cv",
    "trace": "load.trace",
    "ttft": "targets.ttft",
    "tpot": "targets.tpot",
    "percentile": "targets.percentile",
    "precisions": "hardware.precisions",
    "gpus": "hardware.gpus",
    "servers": "hardware.servers",
    "rent": "hardware.rent",
    "providers": "hardware.providers",
    "budget": "constraints.budget_usd",
    "max_power": "constraints.max_power_w",
    "objective": "objective",
    "single_kind": "single_kind",
}
REQUIRED = {"model": "--model", "rate": "--rate"}


@main.command()
@click.argument("scenario", required=False, type=click.Path())
@click.option("--model", help="A model from models.csv (its architecture sets the KV cache).")
@click.option("--rate", type=Quantity("count", maximum=L.MAX_REQUESTS_PER_S), help="Requests per second, e.g. 20.")
@click.option("--input-tokens", type=click.IntRange(min=1, max=L.MAX_SEQ_LEN), help="Mean tokens in.")
@click.option("--output-tokens", type=click.IntRange(min=1, max=L.MAX_SEQ_LEN), help="Mean tokens out.")
@click.option(
    "--input-cv",
    type=FiniteRange(min=0, max=L.MAX_LENGTH_CV),
    help="Spread of the input lengths: standard deviation / mean (default 0: every request alike; ~1 for chat).",
)
@click.option(
    "--output-cv", type=FiniteRange(min=0, max=L.MAX_LENGTH_CV), help="Spread of the output lengths (default 0)."
)
@click.option(
    "--trace",
    type=click.Path(),
    help="A CSV of requests (input_tokens, output_tokens per row): their mean lengths and spread.",
)
@click.option("--ttft", type=Quantity("s"), help="Time to first token at the percentile, e.g. 1s.")
@click.option("--tpot", type=Quantity("s"), help="Time per output token at the percentile, e.g. 50ms.")
@click.option(
    "--percentile",
    type=FiniteRange(min=0.5, max=0.999),
    help="The latency targets' percentile over requests (default 0.9: p90; 0.99: p99).",
)
@click.option(
    "--precision",
    "precisions",
    multiple=True,
    type=click.Choice(["bf16", "fp8", "fp4"]),
    help="Allowed weight precision (repeatable; default bf16 and fp8: fp4 changes the model's outputs more, so "
    "it is opt-in).",
)
@click.option("--gpu", "gpus", multiple=True, help="Allowed GPU (repeatable).")
@click.option("--server", "servers", multiple=True, help="Allowed server (repeatable).")
@click.option("--budget", type=Quantity("usd"), help="Most the servers may cost (renting: per hour).")
@click.option("--max-power", type=Quantity("w"), help="Most power the servers may draw (nameplate), e.g. 500kW.")
@click.option(
    "--objective",
    type=click.Choice(["capex", "tco"]),
    help="Buying: minimise the price (default), or the total cost of ownership over 5 years (energy, "
    "colocation and support with it, as planner plan counts them).",
)
@click.option("--single-kind", is_flag=True, help="Buy one kind of server only (default: the cheapest mix).")
@click.option("--rent", is_flag=True, help="Rent cloud instances on demand instead (cost per hour).")
@click.option("--provider", "providers", multiple=True, help="With --rent: allowed cloud provider (repeatable).")
@click.option("--schema", is_flag=True, help="Print the serving scenario file's JSON schema and exit.")
@solver_option
@click.option("-o", "--output", type=click.Path(), help="Write an .xlsx workbook (or .json).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@quiet_option
@catalog_option
def serve(**kw) -> None:
    """The cheapest servers that serve a model at a request rate within time-to-first-token (TTFT) and
    time-per-output-token (TPOT) targets: from a serving scenario file, or the question in options (an option
    given with a file overrides its field).

    Each server's replicas (tensor parallel, or for a MoE model data-parallel attention with expert
    parallelism, inside its NVLink domain; bf16, fp8 or fp4 weights) are modelled step by step: prefill is
    compute-bound, decode reads the weights and the KV cache from HBM; continuous batching with chunked prefill
    under Poisson arrivals gives TTFT and TPOT at the percentile (docs/model.md section 10). A MILP then buys
    the cheapest servers whose replicas serve the rate, a mix of kinds where that is cheaper.

    \b
    Examples:
      planner serve examples/serve-llama-70b.yaml
      planner serve --model Llama-3.1-70B --rate 20 --input-tokens 2000 --output-tokens 256 --ttft 1s --tpot 50ms
      planner serve --model DeepSeek-V3 --rate 50 --input-tokens 2000 --output-tokens 500 --ttft 2s --tpot 50ms
      planner serve examples/serve-llama-70b.yaml --rent --provider AWS
      planner serve --schema > serve.schema.json
    """
    from planner.answers.serving import instances_to_rent, plan, servers_to_buy
    from planner.base.errors import UsageError
    from planner.base.fileio import Outputs
    from planner.catalog.load import load_catalog
    from planner.inputs.serving import load_serving
    from planner.model.queueing import Requests
    from planner.report.serving_text import render
    from planner.report.writers import document, format_for
    from planner.tables.replicas import Targets

    if kw.pop("schema"):
        import json

        from planner.inputs.serving import ServeScenario

        echo(json.dumps(ServeScenario.model_json_schema(), indent=2))
        return
    imports_done()
    path, catalogs, output = kw.pop("scenario"), kw.pop("catalog_paths"), kw.pop("output")
    targets = [("-o", output, format_for("serving", "-o", output))]
    if path is None:
        missing = [flag for name, flag in REQUIRED.items() if kw[name] is None]
        if kw["trace"] is None:
            missing += [f for f, name in (("--input-tokens", "input_tokens"), ("--output-tokens", "output_tokens"))
                        if kw[name] is None]  # fmt: skip
        if missing:
            raise UsageError(f"give a serving scenario file, or the question in options: {', '.join(missing)}")
    overrides = {FIELDS[name]: _value(kw[name]) for name in FIELDS if kw[name] not in (None, (), False)}
    scenario = load_serving(path, overrides)
    read = command_inputs(scenario=path, catalogs=[*scenario.catalogs, *catalogs])
    outputs = Outputs([*read, ("trace", scenario.load.trace)] if scenario.load.trace else read)
    outputs.check("-o", output)
    loaded = load_catalog([*scenario.catalogs, *catalogs])
    model = named("--model", lambda: loaded.model(scenario.model)).name
    hw, load, latency = scenario.hardware, scenario.load, scenario.targets
    for gpu in hw.gpus:
        named("--gpu", lambda gpu=gpu: loaded.gpu(gpu))
    for server in hw.servers:
        named("--server", lambda server=server: loaded.server(server))
    if hw.rent:
        machines = instances_to_rent(loaded, hw.gpus or None, hw.providers or None)
    else:
        machines = servers_to_buy(loaded, hw.gpus or None, hw.servers or None)
    result = plan(
        loaded,
        model,
        Requests(load.input_tokens, load.output_tokens, latency.percentile, load.input_cv, load.output_cv),
        Targets(load.rate_per_s, latency.ttft, latency.tpot),
        machines,
        rent=hw.rent,
        precisions=tuple(hw.precisions),
        budget_usd=scenario.constraints.budget_usd,
        max_power_w=scenario.constraints.max_power_w,
        single_kind=scenario.single_kind,
        solver=kw["solver"],
        objective=scenario.objective,
    )
    write_report(outputs, result, targets, kw["quiet"])
    echo(document(result) if kw["as_json"] else render(result))


def _value(value):
    """An option's value as the scenario field takes it (a repeated option's tuple as a list)."""
    return list(value) if isinstance(value, tuple) else value
