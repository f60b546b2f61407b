"""`planner predict`, `planner bandwidth`, `planner calibrate`: the performance model."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click

from planner.catalog import Catalog, load_catalog
from planner.cli.base import Quantity, calibration_option, catalog_option, command_inputs, main
from planner.report.terminal import format_table


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
        calibration_option,
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
    from planner.fileio import Outputs
    from planner.report.jsonout import dumps
    from planner.report.perf_text import sweep_table
    from planner.units import format_count

    catalogs, calibration_path = kw.pop("catalog_paths"), kw.pop("calibration")
    as_json, target, output = kw.pop("as_json"), kw.pop("target_tflops"), kw.pop("output")
    outputs = Outputs(command_inputs(catalogs=catalogs, calibration=calibration_path))
    outputs.check("-o", output)
    loaded = load_catalog(catalogs)
    calibration = load_calibration(calibration_path)
    gpu, gpus, per_node = kw.pop("gpu"), kw.pop("gpus"), kw.pop("gpus_per_node")
    work = _workload(loaded, kw)
    table = node_gbps_needed(bandwidth_table(loaded, work, gpu, gpus, per_node, calibration), target)
    answers = table.drop_duplicates(["fabric", "zeropp"])
    if output:
        from planner.errors import UsageError
        from planner.report.workbooks import write_bandwidth

        if Path(output).suffix.lower() != ".xlsx":
            raise UsageError(f"-o {output}: the bandwidth report is an .xlsx workbook")
        heading = f"ZeRO-3 bandwidth for {target:g} TFLOPs/GPU on {gpus} x {table.iloc[0]['gpu']}"
        needed = [_needed_record(r) for _, r in answers.iterrows()]
        outputs.add("-o", output, lambda tmp: write_bandwidth(table, needed, heading, calibration, tmp))
        outputs.commit()
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
    for _, r in answers.drop_duplicates("zeropp").iterrows():
        if not r["fits_memory"]:
            label = "with ZeRO++" if r["zeropp"] else "without ZeRO++"
            click.echo(
                f"  warning: {label} the model needs {r['memory_per_gpu_gib']:.1f} GiB per GPU of "
                f"{r['usable_hbm_gib']:.1f} usable: it does not fit on {gpus} GPUs; add GPUs"
            )
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
        "fits_memory": bool(r["fits_memory"]),
        "memory_per_gpu_gib": r["memory_per_gpu_gib"],
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
    from planner.fileio import Outputs
    from planner.fitting import fit_file
    from planner.report.jsonout import dumps

    outputs = Outputs(command_inputs(catalogs=catalog_paths, measurements=measurements))
    outputs.check("-o", output)
    loaded = load_catalog(catalog_paths)
    calibration, report = fit_file(loaded, Path(measurements), tokens_per_gpu)
    outputs.add_text("-o", output, calibration.model_dump_json(indent=2))
    outputs.commit()
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
