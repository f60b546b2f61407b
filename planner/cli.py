"""Command-line interface: parse options, call the library, print. No modelling logic lives here."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

import click

from planner import __version__
from planner.catalog import Catalog, load_catalog
from planner.errors import CatalogError, PlannerError
from planner.models import KINDS, ROW_TYPES, SCHEMA_VERSION
from planner.report.terminal import format_table
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


@main.group()
def catalog() -> None:
    """Inspect and validate price catalogs.

    \b
    Example:
      planner catalog validate my-quote.xlsx
    """


@catalog.command("list")
@click.argument("kind", required=False, type=click.Choice(KINDS, case_sensitive=False))
@click.option("--all", "all_columns", is_flag=True, help="Show every column, not just the main ones.")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True)
@catalog_option
def catalog_list(kind: str | None, all_columns: bool, fmt: str, catalog_paths: Sequence[str]) -> None:
    """List catalog rows of KIND, or a summary of every kind.

    \b
    Examples:
      planner catalog list
      planner catalog list switches --all
      planner catalog list gpus --catalog my-gpus.csv --format csv
    """
    loaded = load_catalog(catalog_paths)
    if kind is None:
        _print_summary(loaded)
        return
    kind = kind.lower()
    frame = loaded.frame(kind)
    if not all_columns:
        frame = frame[list(ROW_TYPES[kind].display) + ["origin_file", "origin_row"]]
    if fmt == "csv":
        frame.to_csv(sys.stdout, index=False)
    elif fmt == "json":
        click.echo(frame.to_json(orient="records", indent=2))
    else:
        records = frame.drop(columns=["origin_file", "origin_row"]).to_dict("records")
        click.echo(format_table(records, [c for c in frame.columns if not c.startswith("origin_")]))


def _print_summary(loaded: Catalog) -> None:
    records = []
    for kind in KINDS:
        rows = loaded.items(kind)
        files = sorted({loaded.origin(r).file for r in rows})
        records.append({"kind": kind, "rows": len(rows), "from": ", ".join(files)})
    click.echo(format_table(records, ["kind", "rows", "from"], max_width=100))


@catalog.command("validate")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option(
    "--no-defaults",
    is_flag=True,
    help="Validate the files alone, without the shipped catalogs "
    "(references such as a server's GPU must then resolve within them).",
)
def catalog_validate(paths: Sequence[str], no_defaults: bool) -> None:
    """Check catalog files (CSV, folder, or .xlsx); report every problem, not just the first.

    Exit 0 with a one-line summary when valid, 1 with one line per problem when not.

    \b
    Examples:
      planner catalog validate catalogs/
      planner catalog validate vendor-quote.xlsx extra-nics.csv
    """
    loaded = load_catalog(paths, defaults=not no_defaults)
    mine = {Path(f).resolve() for f in loaded.files if any(_under(f, p) for p in paths)}
    counts = {}
    for kind in KINDS:
        n = sum(1 for r in loaded.items(kind) if any(_under(loaded.origin(r).file, p) for p in paths))
        if n:
            counts[kind] = n
    detail = ", ".join(f"{k} {n}" for k, n in counts.items()) or "no rows"
    click.echo(f"OK: {len(mine)} file(s), {sum(counts.values())} rows valid ({detail})")


def _under(file: str, path: str) -> bool:
    file_path, root = Path(file.split("[", 1)[0]).resolve(), Path(path).resolve()
    return file_path == root or root in file_path.parents


@catalog.command("schema")
@click.argument("kind", type=click.Choice(KINDS, case_sensitive=False))
def catalog_schema(kind: str) -> None:
    """Print the JSON schema of one catalog row of KIND (for editors and your own checks).

    \b
    Example:
      planner catalog schema nics > nics.schema.json
    """
    row_type = ROW_TYPES[kind.lower()]
    schema = row_type.model_json_schema()
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"planner catalog row: {kind.lower()} (schema {SCHEMA_VERSION})",
        **{k: v for k, v in schema.items() if k != "title"},
    }
    click.echo(json.dumps(schema, indent=2))


# ---------------------------------------------------------------- performance model commands


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


def workload_options(func):
    """Options that describe what is trained and on which GPUs (shared by predict and bandwidth)."""
    options = [
        click.option("--params", type=Quantity("count"), help="Model parameters, e.g. 176B."),
        click.option("--model", help="A model from models.csv (gives params and architecture), e.g. BLOOM-176B."),
        click.option("--gpu", required=True, help="GPU name or alias from gpus.csv, e.g. V100, H100."),
        click.option("--gpus", type=click.IntRange(min=1), required=True, help="Total GPUs (data-parallel ranks)."),
        click.option("--gpus-per-node", type=click.IntRange(min=1), required=True, help="GPUs per node."),
        click.option("--micro-batch", type=Quantity("count"), help="Sequences per GPU per micro-step."),
        click.option("--seq-len", type=click.IntRange(min=1), help="Tokens per sequence (default: the model's)."),
        click.option(
            "--tokens-per-gpu", type=Quantity("count"), help="Tokens per GPU per micro-step (instead of --micro-batch)."
        ),
        click.option("--zeropp", is_flag=True, help="All three ZeRO++ options (qwZ, hpZ, qgZ)."),
        click.option("--qwz", is_flag=True, help="ZeRO++ int8 weight all-gather."),
        click.option("--hpz", is_flag=True, help="ZeRO++ secondary weight partition inside each node."),
        click.option("--qgz", is_flag=True, help="ZeRO++ int4 gradient reduce-scatter."),
        click.option(
            "--grad-dtype",
            type=click.Choice(["bf16", "fp16", "fp32"]),
            default="bf16",
            show_default=True,
            help="Gradient communication dtype.",
        ),
        click.option("--hierarchical", is_flag=True, help="Hierarchical collectives: (N-1)/N instead of (n-1)/n."),
        click.option("--no-checkpointing", is_flag=True, help="Activation checkpointing off (F_hw = F_model)."),
        click.option("--no-flash-attention", is_flag=True, help="Count the s^2 attention scores in memory."),
        click.option("--calibration", type=click.Path(), help="Calibration file from `planner calibrate`."),
        click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text."),
        catalog_option,
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _workload(loaded: Catalog, kw: dict):
    from planner.api import workload

    zeropp = kw.pop("zeropp")
    return workload(
        loaded,
        params=kw.pop("params"),
        model=kw.pop("model"),
        micro_batch=kw.pop("micro_batch"),
        seq_len=kw.pop("seq_len"),
        tokens_per_gpu=kw.pop("tokens_per_gpu"),
        checkpointing=not kw.pop("no_checkpointing"),
        flash_attention=not kw.pop("no_flash_attention"),
        qwz=kw.pop("qwz") or zeropp,
        hpz=kw.pop("hpz") or zeropp,
        qgz=kw.pop("qgz") or zeropp,
        grad_bytes={"bf16": 2.0, "fp16": 2.0, "fp32": 4.0}[kw.pop("grad_dtype")],
        hierarchical=kw.pop("hierarchical"),
    )


@main.command()
@workload_options
@click.option("--node-gbps", type=Quantity("gbps"), help="Total inter-node bandwidth per node, e.g. 800Gbps.")
@click.option("--nic-gbps", type=Quantity("gbps"), help="Speed of one NIC (with --nics-per-node).")
@click.option("--nics-per-node", type=click.IntRange(min=1), help="NICs per node (with --nic-gbps).")
@click.option("--fabric", type=click.Choice(["ib", "roce"], case_sensitive=False), default="ib", show_default=True)
def predict(**kw) -> None:
    """Predict achieved TFLOPs/GPU, step time and memory for one ZeRO-3 configuration.

    \b
    Example (DeepSpeed issue #2928: 176B on 24 DGX-2 nodes at 100 Gbps):
      planner predict --params 176B --gpu V100 --gpus 384 --gpus-per-node 16 \
        --node-gbps 100 --fabric ib --tokens-per-gpu 2048
    """
    from planner.api import Cluster
    from planner.api import predict as run_predict
    from planner.calibration import load_calibration
    from planner.report.jsonout import dumps
    from planner.report.perf_text import explain

    node_gbps = _node_gbps(kw.pop("node_gbps"), kw.pop("nic_gbps"), kw.pop("nics_per_node"))
    loaded = load_catalog(kw.pop("catalog_paths"))
    calibration = load_calibration(kw.pop("calibration"))
    as_json = kw.pop("as_json")
    cluster = Cluster(kw.pop("gpu"), kw.pop("gpus"), kw.pop("gpus_per_node"), node_gbps, kw.pop("fabric").lower())
    work = _workload(loaded, kw)
    result = run_predict(loaded, work, cluster, calibration)
    result["model_name"] = work.model_name
    result["calibration"] = calibration.source
    click.echo(dumps(result) if as_json else explain(result, calibration.source))


def _node_gbps(node_gbps: float | None, nic_gbps: float | None, nics: int | None) -> float:
    from planner.errors import UsageError

    if node_gbps is not None:
        if nic_gbps is not None or nics is not None:
            raise UsageError("give --node-gbps, or --nic-gbps with --nics-per-node, not both")
        return node_gbps
    if nic_gbps is None or nics is None:
        raise UsageError("give --node-gbps (total per node), or --nic-gbps and --nics-per-node")
    return nic_gbps * nics


@main.command()
@workload_options
@click.option(
    "--target-tflops",
    type=Quantity("tflops"),
    required=True,
    help="Achieved TFLOPs per GPU to reach (hardware FLOPs, as DeepSpeed reports).",
)
@click.option("-o", "--output", type=click.Path(), help="Also write an .xlsx workbook with the table and a chart.")
def bandwidth(**kw) -> None:
    """The inter-node bandwidth ZeRO-3 needs to reach a TFLOPs/GPU target (DeepSpeed issue #2928).

    Prints the minimum node bandwidth for IB and RoCE, with and without ZeRO++, and the achieved
    TFLOPs/GPU at the standard node bandwidths 100 to 3200 Gbps.

    \b
    Example:
      planner bandwidth --params 176B --gpu V100 --gpus 384 --gpus-per-node 16 \
        --tokens-per-gpu 2048 --target-tflops 40 -o bandwidth.xlsx
    """
    from planner.api import bandwidth_table, node_gbps_needed
    from planner.calibration import load_calibration
    from planner.report.jsonout import dumps
    from planner.report.perf_text import sweep_table
    from planner.units import format_count

    loaded = load_catalog(kw.pop("catalog_paths"))
    calibration = load_calibration(kw.pop("calibration"))
    as_json, target, output = kw.pop("as_json"), kw.pop("target_tflops"), kw.pop("output")
    gpu, gpus, per_node = kw.pop("gpu"), kw.pop("gpus"), kw.pop("gpus_per_node")
    work = _workload(loaded, kw)
    table = node_gbps_needed(bandwidth_table(loaded, work, gpu, gpus, per_node, calibration), target)
    answers = table.drop_duplicates(["fabric", "zeropp"])
    if output:
        from planner.errors import UsageError
        from planner.report.excel import write_bandwidth

        if Path(output).suffix.lower() != ".xlsx":
            raise UsageError(f"-o {output}: the bandwidth report is an .xlsx workbook")
        heading = f"ZeRO-3 bandwidth for {target:g} TFLOPs/GPU on {gpus} x {table.iloc[0]['gpu']}"
        write_bandwidth(table, [_needed_record(r) for _, r in answers.iterrows()], heading, calibration, Path(output))
    if as_json:
        click.echo(
            dumps(
                {
                    "target_tflops_per_gpu": target,
                    "calibration": calibration.source,
                    "needed": [_needed_record(r) for _, r in answers.iterrows()],
                    "sweep": table[["fabric", "zeropp", "node_gbps", "achieved_tflops_per_gpu", "binding"]].to_dict(
                        "records"
                    ),
                }
            )
        )
        return
    first = table.iloc[0]
    click.echo(
        f"ZeRO-3 bandwidth for {target:g} TFLOPs/GPU: {work.model_name or format_count(work.params) + ' params'} on "
        f"{gpus} x {first['gpu']} ({gpus // per_node} nodes x {per_node}), "
        f"{first['tokens_per_gpu']:,.0f} tokens/GPU per micro-step\n"
    )
    for _, r in answers.iterrows():
        click.echo("  " + _needed_line(r, target))
    click.echo("\nAchieved TFLOPs/GPU by node bandwidth (Gbps):\n")
    click.echo(sweep_table(table))
    click.echo(f"\ncalibration: {calibration.source}")


def _needed_record(r) -> dict:
    return {
        "fabric": r["fabric"],
        "zeropp": bool(r["zeropp"]),
        "node_gbps_needed": r["node_gbps_needed"],
        "unreachable_because": r["unreachable_because"] or None,
        "ceiling_tflops_per_gpu": r["ceiling_tflops_per_gpu"],
    }


def _needed_line(r, target: float) -> str:
    from planner.report.perf_text import FABRIC_LABEL

    label = f"{FABRIC_LABEL[r['fabric']]:4} {'+ ZeRO++' if r['zeropp'] else '        '}"
    if r["node_gbps_needed"] == float("inf"):
        return (
            f"{label}  unreachable: the ceiling is {r['ceiling_tflops_per_gpu']:.1f} TFLOPs/GPU even with "
            f"unlimited bandwidth (limited by {r['unreachable_because']})"
        )
    if r["node_gbps_needed"] == 0:
        return f"{label}  {r['unreachable_because']}"
    return f"{label}  needs >= {r['node_gbps_needed']:,.0f} Gbps per node (ceiling {r['ceiling_tflops_per_gpu']:.1f})"


@main.command()
@click.argument("measurements", type=click.Path())
@click.option(
    "-o",
    "--output",
    type=click.Path(),
    default="calibration.json",
    show_default=True,
    help="Where to write the calibration file.",
)
@click.option(
    "--tokens-per-gpu", type=Quantity("count"), help="Tokens per GPU per micro-step for rows that do not say."
)
@click.option("--json", "as_json", is_flag=True, help="Print the fit as JSON.")
@catalog_option
def calibrate(
    measurements: str, output: str, tokens_per_gpu: float | None, as_json: bool, catalog_paths: Sequence[str]
) -> None:
    """Fit eta_comp, eta_net and overlap to your measured throughput; write a calibration file.

    MEASUREMENTS is a CSV, one run per row, with columns gpu, gpus, gpus_per_node, node_gbps, fabric,
    params (or model), tokens_per_gpu (or micro_batch and seq_len), and measured_tflops (or a band:
    tflops_per_gpu_low / tflops_per_gpu_high); optional checkpointing, qwz, hpz, qgz, grad_bytes, note.

    \b
    Example (refit the shipped default):
      planner calibrate measurements.csv --tokens-per-gpu 2048 -o my-cal.json
      planner predict ... --calibration my-cal.json
    """
    from planner.fitting import fit_file
    from planner.report.jsonout import dumps

    loaded = load_catalog(catalog_paths)
    calibration, report = fit_file(loaded, Path(measurements), tokens_per_gpu)
    calibration.write(Path(output))
    if as_json:
        click.echo(dumps({"calibration": calibration.model_dump(), "points": report.to_dict("records")}))
        return
    click.echo(format_table(report.round(2).to_dict("records"), list(report.columns)))
    fitted = ", ".join(
        [f"eta_comp[{g}] = {v:.3f}" for g, v in calibration.eta_comp.items()]
        + [f"eta_net[{f}] = {v:.3f}" for f, v in calibration.eta_net.items()]
        + [f"overlap = {calibration.overlap:.3f}"]
    )
    click.echo(f"\nfitted: {fitted}")
    click.echo(
        f"RMS miss: {calibration.fit['rms_miss_tflops']:.2f} TFLOPs/GPU over {len(report)} points "
        "(for a band: distance outside it)"
    )
    click.echo(f"wrote {output}")


# ---------------------------------------------------------------- plan


@main.command()
@click.argument("scenario", required=False, type=click.Path())
@click.option("--schema", is_flag=True, help="Print the scenario file's JSON schema and exit.")
@click.option("--target-tflops", type=Quantity("tflops"), help="Override target_tflops.")
@click.option("--budget", type=Quantity("usd"), help="Override constraints.budget_usd, e.g. 30M.")
@click.option("--power-kw", type=Quantity("count"), help="Override constraints.power_kw.")
@click.option("--max-nodes", type=click.IntRange(min=1), help="Override constraints.max_nodes.")
@click.option("--gpus", "fixed_gpus", type=click.IntRange(min=1), help="Require exactly this many GPUs.")
@click.option("--gpu", "allowed_gpus", multiple=True, help="Allowed GPU (repeatable); overrides constraints.gpus.")
@click.option(
    "--fabric", "fabrics", multiple=True, type=click.Choice(["ib", "roce"]), help="Allowed fabric (repeatable)."
)
@click.option(
    "--micro-batch",
    "micro_batches",
    multiple=True,
    type=click.IntRange(min=1),
    help="Allowed micro-batch (repeatable).",
)
@click.option("--global-batch", type=click.IntRange(min=1), help="Override workload.global_batch.")
@click.option("--objective", type=click.Choice(["capex", "tco"]), help="Override objective.kind.")
@click.option("--zeropp", is_flag=True, default=None, help="Turn on all three ZeRO++ options.")
@click.option("--solver", type=click.Choice(["cbc", "highs"]), default="cbc", show_default=True)
@click.option("--time-limit", type=Quantity("s"), help="Solver time limit per solve, e.g. 60s.")
@click.option("--gap", type=click.FloatRange(min=0), help="Relative MIP gap at which to stop, e.g. 0.01.")
@click.option(
    "--alternatives", type=click.IntRange(min=0), default=3, show_default=True, help="Next-best distinct plans to list."
)
@click.option("--calibration", type=click.Path(), help="Calibration file from `planner calibrate`.")
@click.option(
    "-o", "--output", type=click.Path(), help="Write the plan: .json (whole plan) or .csv (bill of materials)."
)
@click.option("--csv", "csv_path", type=click.Path(), help="Also write the bill of materials as CSV.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole plan as JSON.")
@click.option("-q", "--quiet", is_flag=True, help="No progress messages on stderr.")
@click.option("--compare-cloud", is_flag=True, help="Put the purchase beside the best cloud option (break-even).")
@catalog_option
def plan(scenario: str | None, schema: bool, **kw) -> None:
    """Choose the cheapest cluster (nodes, NICs, fabric, switches, optics, micro-batch) for a scenario.

    \b
    Examples:
      planner plan examples/bloom-176b-v100.yaml
      planner plan examples/llama-70b-h100.yaml --budget 60M --json
      planner plan examples/llama-70b-h100.yaml --fabric roce -o bom.csv
      planner plan examples/bloom-176b-v100.yaml -o plan.xlsx
      planner plan examples/llama-70b-h100.yaml --compare-cloud
      planner plan --schema > scenario.schema.json
    """
    from planner.scenario import Scenario

    if schema:
        click.echo(json.dumps(Scenario.model_json_schema(), indent=2))
        return
    if scenario is None:
        raise click.UsageError("give a SCENARIO file (see examples/), or --schema")
    _run_plan(scenario, kw)


def _overrides(kw: dict) -> dict:
    zeropp = kw.pop("zeropp")
    return {
        "target_tflops": kw.pop("target_tflops"),
        "constraints.budget_usd": kw.pop("budget"),
        "constraints.power_kw": kw.pop("power_kw"),
        "constraints.max_nodes": kw.pop("max_nodes"),
        **({"requirement": {"gpus": g}} if (g := kw.pop("fixed_gpus")) else {}),
        "constraints.gpus": list(kw.pop("allowed_gpus")) or None,
        "constraints.fabrics": list(kw.pop("fabrics")) or None,
        "workload.micro_batches": list(kw.pop("micro_batches")) or None,
        "workload.global_batch": kw.pop("global_batch"),
        "objective.kind": kw.pop("objective"),
        **({"workload.qwz": True, "workload.hpz": True, "workload.qgz": True} if zeropp else {}),
    }


def _run_plan(path: str, kw: dict) -> None:
    from planner.calibration import load_calibration
    from planner.errors import UsageError
    from planner.fileio import write_text_atomic
    from planner.planning import run
    from planner.report.jsonout import dumps
    from planner.report.plan_text import bom_csv, render
    from planner.scenario import load_scenario

    output, csv_path = kw.pop("output"), kw.pop("csv_path")
    if output and Path(output).suffix.lower() not in (".json", ".csv", ".xlsx"):
        raise UsageError(
            f"-o {output}: write .xlsx (quote workbook), .json (the whole plan) or .csv (bill of materials)"
        )
    loaded_scenario = load_scenario(path, _overrides(kw))
    loaded = load_catalog([*loaded_scenario.catalogs, *kw.pop("catalog_paths")])
    calibration = load_calibration(kw.pop("calibration"))
    quiet, as_json, solver, compare = kw.pop("quiet"), kw.pop("as_json"), kw.pop("solver"), kw.pop("compare_cloud")
    progress = (lambda _: None) if quiet else (lambda m: click.echo(f"... {m}", err=True))
    result = run(
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
    document = dumps({**result.model_dump(), **({"cloud_comparison": comparison} if compare else {})})
    for target in (output, csv_path):
        if not target:
            continue
        suffix = Path(target).suffix.lower()
        if suffix == ".xlsx":
            from planner.api import plan_workbook_context
            from planner.report.excel import write_plan

            progress("sensitivity sweeps for the workbook")
            context = plan_workbook_context(loaded, loaded_scenario, result, calibration, solver)
            context.cloud_comparison = comparison
            write_plan(result, context, Path(target))
        else:
            text = document if suffix == ".json" else bom_csv(result)
            write_text_atomic(Path(target), text if text.endswith("\n") else text + "\n")
    click.echo(document if as_json else render(result))
    if compare and not as_json:
        from planner.report.cloud_text import render_comparison

        click.echo("")
        click.echo(
            render_comparison(comparison) if comparison else "Buy vs rent: no cloud offering meets the scenario."
        )


def _compare_cloud(catalog, scenario, calibration, plan, solver, progress) -> dict | None:
    from planner.cloud import cheapest_per_token, compare
    from planner.cloud import run as run_cloud

    progress("best cloud option for the same scenario")
    choice = run_cloud(catalog, scenario, calibration, solver)["choice"]
    if choice is not None:
        choice["meets_requirement"] = True
    else:
        choice = cheapest_per_token(catalog, scenario, calibration, plan.metrics.tokens_per_s)
    if choice is None:
        return None
    return compare(plan.cost.model_dump(), plan.metrics.tokens_per_s, choice, scenario)


# ---------------------------------------------------------------- cloud


@main.command()
@click.argument("scenario", type=click.Path())
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
@click.option("--spot-share", type=click.FloatRange(0, 1), help="Override cloud.spot_share_max.")
@click.option(
    "--micro-batch",
    "micro_batches",
    multiple=True,
    type=click.IntRange(min=1),
    help="Allowed micro-batch (repeatable).",
)
@click.option("--solver", type=click.Choice(["cbc", "highs"]), default="cbc", show_default=True)
@click.option("--calibration", type=click.Path(), help="Calibration file from `planner calibrate`.")
@click.option("-o", "--output", type=click.Path(), help="Write an .xlsx (ranking, cost over time, charts) or .json.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@catalog_option
def cloud(scenario: str, **kw) -> None:
    """Compare cloud offerings for a training run: instance type, count, pricing, cost to train.

    \b
    Examples:
      planner cloud examples/cloud-70b.yaml
      planner cloud examples/cloud-70b.yaml --provider AWS --provider Azure --spot-share 0.5
      planner cloud examples/cloud-70b.yaml -o cloud.xlsx
    """
    from planner.cloud import run as run_cloud
    from planner.errors import UsageError
    from planner.fileio import write_text_atomic
    from planner.report.cloud_text import render
    from planner.report.jsonout import dumps
    from planner.scenario import load_scenario

    output = kw.pop("output")
    if output and Path(output).suffix.lower() not in (".xlsx", ".json"):
        raise UsageError(f"-o {output}: write .xlsx (workbook) or .json")
    overrides = {
        "constraints.budget_usd": kw.pop("budget"),
        "target_tflops": kw.pop("target_tflops"),
        "cloud.providers": list(kw.pop("providers")) or None,
        "cloud.regions": list(kw.pop("regions")) or None,
        "cloud.pricing": list(kw.pop("pricings")) or None,
        "cloud.spot_share_max": kw.pop("spot_share"),
        "workload.micro_batches": list(kw.pop("micro_batches")) or None,
    }
    loaded_scenario = load_scenario(scenario, overrides)
    from planner.calibration import load_calibration

    loaded = load_catalog([*loaded_scenario.catalogs, *kw.pop("catalog_paths")])
    result = run_cloud(loaded, loaded_scenario, load_calibration(kw.pop("calibration")), kw.pop("solver"))
    if output:
        if Path(output).suffix.lower() == ".xlsx":
            from planner.report.excel import write_cloud

            write_cloud(result, Path(output))
        else:
            write_text_atomic(Path(output), dumps(result) + "\n")
    click.echo(dumps(result) if kw.pop("as_json") else render(result))
    if result["choice"] is None:
        from planner.errors import InfeasibleError

        reasons = "; ".join(sorted({e["reason"].split(":")[0] for e in result["excluded"]})) or "budget"
        raise InfeasibleError(f"no cloud offering meets the scenario ({reasons}); see the exclusions above")


# ---------------------------------------------------------------- inference


@main.command()
@click.option("--params", type=Quantity("count"), help="Model parameters, e.g. 175B.")
@click.option("--model", help="A model from models.csv (gives params and architecture).")
@click.option("--latency", type=Quantity("s"), required=True, help="Latency target per forward pass, e.g. 1s.")
@click.option("--batch", type=click.IntRange(min=1), default=1, show_default=True, help="Sequences decoded together.")
@click.option(
    "--weight-bytes",
    type=click.FloatRange(min=0.25, max=4),
    default=2.0,
    show_default=True,
    help="Bytes per weight: 2 fp16/bf16, 1 int8, 0.5 int4.",
)
@click.option("--gpu", "gpus", multiple=True, help="Allowed GPU (repeatable).")
@click.option("--max-machines", type=click.IntRange(min=1, max=256), default=16, show_default=True)
@click.option("--budget", type=Quantity("usd"), help="Most the configuration may cost.")
@click.option("--alternatives", type=click.IntRange(min=0), default=3, show_default=True)
@click.option("--explain", is_flag=True, help="Print the bandwidth ladder and the latency by machine count.")
@click.option("--solver", type=click.Choice(["cbc", "highs"]), default="cbc", show_default=True)
@click.option("--calibration", type=click.Path(), help="Calibration file from `planner calibrate`.")
@click.option("-o", "--output", type=click.Path(), help="Write an .xlsx workbook (or .json).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@catalog_option
def inference(**kw) -> None:
    """The cheapest machines that serve a model too big for GPU memory within a latency target.

    Weights that do not fit in HBM stream from DRAM and NVMe over PCIe every forward pass, so latency is
    bounded by bandwidth; splitting each layer over m machines multiplies bandwidth but adds per-layer
    all-reduce latency. The machine count is optimised, not assumed.

    \b
    Examples:
      planner inference --params 175B --latency 1s
      planner inference --params 1T --latency 1s --gpu V100 --explain
      planner inference --model GPT-3-175B --latency 200ms --batch 8 -o inference.xlsx
    """
    from planner.calibration import load_calibration
    from planner.errors import UsageError
    from planner.fileio import write_text_atomic
    from planner.inference import Serving
    from planner.inference import plan as plan_inference
    from planner.perf import estimated_layers
    from planner.report.inference_text import render
    from planner.report.jsonout import dumps

    loaded = load_catalog(kw.pop("catalog_paths"))
    params, model = kw.pop("params"), kw.pop("model")
    if (params is None) == (model is None):
        raise UsageError("give exactly one of --params (e.g. 175B) or --model")
    if model:
        row = loaded.model(model)
        params, layers, hidden = row.params, row.layers, row.hidden
    else:
        layers = int(estimated_layers(params))
        hidden = int(layers * 128)
    output = kw.pop("output")
    if output and Path(output).suffix.lower() not in (".xlsx", ".json"):
        raise UsageError(f"-o {output}: write .xlsx (workbook) or .json")
    job = Serving(params * kw.pop("weight_bytes"), params, layers, hidden, kw.pop("batch"))
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
    )
    if output:
        if Path(output).suffix.lower() == ".xlsx":
            from planner.report.excel import write_inference

            write_inference(result, Path(output))
        else:
            write_text_atomic(Path(output), dumps(result) + "\n")
    click.echo(dumps(result) if kw.pop("as_json") else render(result, kw.pop("explain")))
