"""`planner serve`."""

from __future__ import annotations

import click

from planner.base.limits import MAX_COUNT
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

MAX_TOKENS_PER_REQUEST = 10_000_000  # a 10M-token context: beyond any model's


@main.command()
@click.option("--model", required=True, help="A model from models.csv (its architecture sets the KV cache).")
@click.option("--rate", type=Quantity("count", maximum=1e7), required=True, help="Requests per second, e.g. 20.")
@click.option(
    "--input-tokens", type=click.IntRange(min=1, max=MAX_TOKENS_PER_REQUEST), required=True, help="Mean tokens in."
)
@click.option(
    "--output-tokens", type=click.IntRange(min=1, max=MAX_TOKENS_PER_REQUEST), required=True, help="Mean tokens out."
)
@click.option(
    "--input-cv",
    type=FiniteRange(min=0, max=4),
    default=0.0,
    show_default=True,
    help="Spread of the input lengths: standard deviation / mean (0: every request alike; ~1 for chat traffic).",
)
@click.option(
    "--output-cv",
    type=FiniteRange(min=0, max=4),
    default=0.0,
    show_default=True,
    help="Spread of the output lengths: standard deviation / mean.",
)
@click.option("--ttft", type=Quantity("s"), help="Time to first token at the percentile, e.g. 1s.")
@click.option("--tpot", type=Quantity("s"), help="Time per output token at the percentile, e.g. 50ms.")
@click.option(
    "--percentile",
    type=FiniteRange(min=0.5, max=0.999),
    default=0.9,
    show_default=True,
    help="The latency targets' percentile over requests (0.9: p90, 0.99: p99).",
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
@click.option("--budget", type=Quantity("usd"), help="Most the servers may cost.")
@click.option("--max-power", type=Quantity("w"), help="Most power the servers may draw (nameplate), e.g. 500kW.")
@click.option(
    "--objective",
    type=click.Choice(["capex", "tco"]),
    default="capex",
    show_default=True,
    help="Buying: minimise the price, or the total cost of ownership over 5 years (energy, colocation and "
    "support with it, as planner plan counts them).",
)
@click.option("--single-kind", is_flag=True, help="Buy one kind of server only (default: the cheapest mix).")
@click.option("--rent", is_flag=True, help="Rent cloud instances on demand instead (cost per hour; --budget per hour).")
@click.option("--provider", "providers", multiple=True, help="With --rent: allowed cloud provider (repeatable).")
@solver_option
@click.option("-o", "--output", type=click.Path(), help="Write an .xlsx workbook (or .json).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@quiet_option
@catalog_option
def serve(**kw) -> None:
    """The cheapest servers that serve a model at a request rate within time-to-first-token (TTFT) and
    time-per-output-token (TPOT) targets.

    Each server's replicas (tensor parallel, or for a MoE model data-parallel attention with expert
    parallelism, inside its NVLink domain; bf16, fp8 or fp4 weights) are modelled step by step: prefill is
    compute-bound, decode reads the weights and the KV cache from HBM; continuous batching with chunked prefill
    under Poisson arrivals gives TTFT and TPOT at the percentile (docs/model.md section 10). A MILP then buys
    the cheapest servers whose replicas serve the rate, a mix of kinds where that is cheaper.

    \b
    Examples:
      planner serve --model Llama-3-70B --rate 20 --input-tokens 2000 --output-tokens 256 --ttft 1s --tpot 50ms
      planner serve --model DeepSeek-V3 --rate 50 --input-tokens 2000 --output-tokens 500 --ttft 2s --tpot 50ms
      planner serve --model Llama-3.1-70B --rate 20 --input-tokens 2000 --output-tokens 256 --tpot 50ms --rent
    """
    from planner.answers.serving import instances_to_rent, plan, servers_to_buy
    from planner.base.errors import UsageError
    from planner.base.fileio import Outputs
    from planner.catalog.load import load_catalog
    from planner.model.queueing import Requests
    from planner.report.serving_text import render
    from planner.report.writers import document, format_for
    from planner.tables.replicas import Targets

    imports_done()
    catalogs, output = kw.pop("catalog_paths"), kw.pop("output")
    targets = [("-o", output, format_for("serving", "-o", output))]
    outputs = Outputs(command_inputs(catalogs=catalogs))
    outputs.check("-o", output)
    if kw["ttft"] is None and kw["tpot"] is None:
        raise UsageError("give a latency target: --ttft (e.g. 1s), --tpot (e.g. 50ms) or both")
    if kw["rate"] > MAX_COUNT:
        raise UsageError("--rate: at most 10,000,000 requests per second")
    loaded = load_catalog(catalogs)
    model = named("--model", lambda: loaded.model(kw["model"])).name
    for gpu in kw["gpus"]:
        named("--gpu", lambda gpu=gpu: loaded.gpu(gpu))
    for server in kw["servers"]:
        named("--server", lambda server=server: loaded.server(server))
    if kw["rent"] and (kw["servers"] or kw["max_power"]):
        raise UsageError("--rent rents instances: --server and --max-power are for buying (use --gpu, --provider)")
    if kw["rent"] and kw["objective"] != "capex":
        raise UsageError("--objective tco is for buying: a rental's hourly price already includes its energy")
    if kw["providers"] and not kw["rent"]:
        raise UsageError("--provider chooses cloud instances: give it with --rent")
    gpus = list(kw["gpus"]) or None
    if kw["rent"]:
        machines = instances_to_rent(loaded, gpus, list(kw["providers"]) or None)
    else:
        machines = servers_to_buy(loaded, gpus, list(kw["servers"]) or None)
    result = plan(
        loaded,
        model,
        Requests(kw["input_tokens"], kw["output_tokens"], kw["percentile"], kw["input_cv"], kw["output_cv"]),
        Targets(kw["rate"], kw["ttft"], kw["tpot"]),
        machines,
        rent=kw["rent"],
        precisions=tuple(kw["precisions"]) or ("bf16", "fp8"),
        budget_usd=kw["budget"],
        max_power_w=kw["max_power"],
        single_kind=kw["single_kind"],
        solver=kw["solver"],
        objective=kw["objective"],
    )
    write_report(outputs, result, targets, kw["quiet"])
    echo(document(result) if kw["as_json"] else render(result))
