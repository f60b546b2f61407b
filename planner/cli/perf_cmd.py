"""`planner predict`, `planner bandwidth`, `planner calibrate`: the performance model."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click

from planner.base import limits as L
from planner.cli.base import (
    Quantity,
    calibration_option,
    catalog_option,
    command_inputs,
    echo,
    main,
    named,
    stderr_progress,
    write_report,
    wrote,
)

# planner.assumptions.model.FABRICS and planner.model.parallelism's choices, without importing the model
FABRICS = ("ib", "roce", "spectrum-x", "efa", "tcpx", "tcp")
STACKS = ("eager", "compile")
PRECISIONS = ("bf16", "fp16", "fp8", "fp8-rowwise", "mxfp8", "fp4")
SHARDINGS = ("full", "hybrid", "zero2", "zero1", "none")


def workload_options(func):
    """Options that describe what is trained and on which GPUs (shared by predict and bandwidth)."""
    options = [
        click.option("--params", type=Quantity("count", maximum=L.MAX_PARAMS), help="Model parameters, e.g. 176B."),
        click.option("--model", help="A model from models.csv (gives params and architecture), e.g. BLOOM-176B."),
        click.option("--gpu", required=True, help="GPU name or alias from gpus.csv, e.g. V100, H100."),
        click.option(
            "--gpus",
            type=click.IntRange(min=1, max=L.MAX_GPUS),
            required=True,
            help="Total GPUs (data-parallel ranks).",
        ),
        click.option(
            "--gpus-per-node", type=click.IntRange(min=1, max=L.MAX_GPUS_PER_NODE), required=True, help="GPUs per node."
        ),
        click.option(
            "--scale-up-gpus",
            type=click.IntRange(min=1, max=L.MAX_GPUS_PER_NODE),
            help="GPUs per NVLink (scale-up) domain, default: a node. 72 with --gpus-per-node 4 describes a GB200 "
            "NVL72 as its 4-GPU trays; the domain's scale-out bandwidth is that of all its nodes.",
        ),
        click.option(
            "--scale-up-gb-per-s",
            type=click.FloatRange(min=0.001, max=1e6),
            help="NVLink (scale-up) GB/s per GPU and direction, default: a catalog server's with this GPU and domain "
            "(unknown, and so not counted, when none has it).",
        ),
        click.option(
            "--micro-batch",
            type=Quantity("count", maximum=L.MAX_MICRO_BATCH),
            help="Sequences per GPU per micro-step.",
        ),
        click.option(
            "--seq-len",
            type=click.IntRange(min=1, max=L.MAX_SEQ_LEN),
            help="Tokens per sequence (default: the model's).",
        ),
        click.option(
            "--tokens-per-gpu",
            type=Quantity("count", maximum=L.MAX_TOKENS_PER_GPU),
            help="Tokens per GPU per micro-step (instead of --micro-batch).",
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
        click.option(
            "--framework",
            type=click.Choice(["deepspeed", "fsdp", "megatron"], case_sensitive=False),
            default="deepspeed",
            show_default=True,
            help="DeepSpeed ZeRO-3, 0.6 or later (the ZeRO++ options need it; data parallel only), PyTorch FSDP "
            "(with torchtitan's TP/PP/CP/EP) or Megatron-LM / NeMo: each has its own overlap and collectives. "
            "DeepSpeed before 0.6 (March 2022) serialised its parameter gathers and is not modelled.",
        ),
        click.option("--tp", type=click.IntRange(min=1, max=L.MAX_GPUS), help="Tensor-parallel ranks."),
        click.option("--pp", type=click.IntRange(min=1, max=L.MAX_GPUS), help="Pipeline stages."),
        click.option("--vp", type=click.IntRange(min=1, max=L.MAX_GPUS), help="Virtual stages per pipeline rank."),
        click.option("--cp", type=click.IntRange(min=1, max=L.MAX_GPUS), help="Context-parallel ranks."),
        click.option("--ep", type=click.IntRange(min=1, max=L.MAX_GPUS), help="Expert-parallel ranks (MoE)."),
        click.option("--tp-overlap", is_flag=True, help="TP communication overlapped (TE userbuffers, AsyncTP)."),
        click.option(
            "--pp-balanced",
            is_flag=True,
            default=None,
            help="With --pp: the embedding and the loss each take a layer's place in the pipeline split "
            "(Megatron-Core account_for_embedding/loss_in_pipeline_split, Llama 3's); layers + 2 must divide "
            "by pp x vp.",
        ),
        click.option(
            "--global-batch",
            type=click.IntRange(min=1, max=L.MAX_GRAD_ACCUM * L.MAX_GPUS),
            help="Sequences per optimizer step: sets grad_accum per layout (a pipeline needs it to be searched).",
        ),
        click.option(
            "--offload",
            type=click.Choice(["none", "cpu", "nvme"], case_sensitive=False),
            default="none",
            show_default=True,
            help="Optimizer states and step on the host (cpu) or NVMe: frees HBM, adds PCIe and CPU-Adam time.",
        ),
        click.option(
            "--checkpointing",
            type=click.Choice(["full", "selective", "op", "none"], case_sensitive=False),
            default="full",
            show_default=True,
            help="Activation checkpointing: full re-runs the forward, selective only the attention core, op "
            "(torchtitan's per-op policy) every second matmul.",
        ),
        click.option("--no-checkpointing", is_flag=True, help="Same as --checkpointing none."),
        click.option(
            "--grad-accum",
            type=click.IntRange(min=1, max=L.MAX_GRAD_ACCUM),
            default=1,
            show_default=True,
            help="Micro-steps per optimizer step.",
        ),
        click.option("--no-flash-attention", is_flag=True, help="Count the s^2 attention scores in memory."),
        click.option(
            "--stack",
            type=click.Choice(STACKS, case_sensitive=False),
            default="eager",
            show_default=True,
            help="eager PyTorch, or torch.compile (fused element-wise kernels, fewer launches).",
        ),
        click.option(
            "--precision",
            type=click.Choice(PRECISIONS, case_sensitive=False),
            default="bf16",
            show_default=True,
            help="The linear layers' GEMMs: bf16/fp16, fp8 (tensorwise: Transformer Engine, torchao float8), "
            "fp8-rowwise, mxfp8 or fp4 (NVFP4) at the GPU's peak for it; attention and the logits stay bf16.",
        ),
        click.option(
            "--fp8-allgather", is_flag=True, help="With --precision fp8 and FSDP: all-gather the weights in fp8."
        ),
        click.option(
            "--sharding",
            type=click.Choice(SHARDINGS, case_sensitive=False),
            help="full (default; zero1 with megatron): parameters sharded over the data-parallel ranks; hybrid "
            "(HSDP, FSDP): within shard groups, replicated across them; zero2: ZeRO-2 (fsdp, megatron: weights kept "
            "whole, gradients and optimizer states sharded); zero1: Megatron's distributed optimizer; "
            "none: DDP.",
        ),
        click.option(
            "--shard-gpus",
            type=click.IntRange(min=1, max=L.MAX_GPUS),
            help="GPUs per shard group with --sharding hybrid (default: the scale-up domain).",
        ),
        calibration_option,
        click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text."),
        catalog_option,
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _workload(loaded, kw: dict):
    from types import SimpleNamespace

    from planner.model.parallelism import GRAD_BYTES, LAYOUT, LAYOUT_DEFAULTS, Parallelism, default_sharding
    from planner.model.workload import training

    framework = kw["framework"].lower()
    fixed = any(kw.get(k) is not None for k in LAYOUT)
    zeropp = kw.pop("zeropp")
    model = kw.pop("model")
    if model is not None:
        named("--model", lambda: loaded.model(model))
    parallelism = Parallelism(
        checkpointing="none" if kw.pop("no_checkpointing") else kw.pop("checkpointing").lower(),
        flash_attention=not kw.pop("no_flash_attention"),
        qwz=kw.pop("qwz") or zeropp,
        hpz=kw.pop("hpz") or zeropp,
        qgz=kw.pop("qgz") or zeropp,
        grad_bytes=GRAD_BYTES[kw.pop("grad_dtype")],
        hierarchical=kw.pop("hierarchical"),
        framework=kw.pop("framework").lower(),
        offload=kw.pop("offload").lower(),
        stack=kw.pop("stack").lower(),
        precision=kw.pop("precision").lower(),
        fp8_allgather=kw.pop("fp8_allgather"),
        sharding=(kw.pop("sharding") or default_sharding(SimpleNamespace(framework=framework))).lower(),
        shard_gpus=kw.pop("shard_gpus") or 0,
        tp_overlap=kw.pop("tp_overlap"),
        **{k: kw.pop(k) or LAYOUT_DEFAULTS[k] for k in LAYOUT},
    )
    return training(
        loaded,
        params=kw.pop("params"),
        model=model,
        micro_batch=kw.pop("micro_batch"),
        seq_len=kw.pop("seq_len"),
        tokens_per_gpu=kw.pop("tokens_per_gpu"),
        parallelism=parallelism,
        grad_accum=kw.pop("grad_accum"),
        global_batch=kw.pop("global_batch"),
    ), fixed


@main.command()
@workload_options
@click.option("--node-gbps", type=Quantity("gbps"), help="Total inter-node bandwidth per node, e.g. 800Gbps.")
@click.option("--nic-gbps", type=Quantity("gbps"), help="Speed of one NIC (with --nics-per-node).")
@click.option(
    "--nics-per-node", type=click.IntRange(min=1, max=L.MAX_NICS_PER_NODE), help="NICs per node (with --nic-gbps)."
)
@click.option(
    "--fabric",
    type=click.Choice(FABRICS, case_sensitive=False),
    default="ib",
    show_default=True,
    help="Inter-node fabric: its efficiency and latency (efa, tcpx, tcp: the cloud ones).",
)
def predict(**kw) -> None:
    """Predict tokens/s, achieved TFLOPs/GPU, step time and memory for one configuration, with the range
    (p10-p90) leave-one-source-out validation gives for its GPU, framework and fabric.

    \b
    Examples (DeepSpeed issue #2928: 176B on 24 DGX-2 nodes at 100 Gbps; FSDP on AWS p5):
      planner predict --params 176B --gpu V100 --gpus 384 --gpus-per-node 16 \
        --node-gbps 100 --fabric ib --tokens-per-gpu 2048
      planner predict --model Llama-2-70B --gpu H100 --gpus 256 --gpus-per-node 8 \
        --node-gbps 3200 --fabric efa --framework fsdp --micro-batch 2 --offload cpu
    """
    from planner.answers.predict import predict as run_predict
    from planner.catalog.load import load_catalog
    from planner.model.calibration import load_calibration
    from planner.model.workload import Cluster
    from planner.report.jsonout import dumps
    from planner.report.perf_text import explain

    node_gbps = _node_gbps(kw.pop("node_gbps"), kw.pop("nic_gbps"), kw.pop("nics_per_node"))
    loaded = load_catalog(kw.pop("catalog_paths"))
    calibration = load_calibration(kw.pop("calibration"))
    as_json = kw.pop("as_json")
    gpu = kw.pop("gpu")
    named("--gpu", lambda: loaded.gpu(gpu))
    cluster = Cluster(
        gpu, kw.pop("gpus"), kw.pop("gpus_per_node"), node_gbps, kw.pop("fabric").lower(),
        scale_up_gpus=kw.pop("scale_up_gpus"),
        scale_up_gb_per_s=kw.pop("scale_up_gb_per_s"),
    )  # fmt: skip
    work, fixed = _workload(loaded, kw)
    result = run_predict(loaded, work, cluster, calibration, search=not fixed)
    result["model_name"] = work.model_name
    result["calibration"] = calibration.source
    echo(dumps(result) if as_json else explain(result, calibration.source))


def _node_gbps(node_gbps: float | None, nic_gbps: float | None, nics: int | None) -> float:
    from planner.base.errors import UsageError

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
    from planner.base.fileio import Outputs
    from planner.base.units import format_count
    from planner.catalog.load import load_catalog
    from planner.model.calibration import load_calibration
    from planner.model.sweep import bandwidth_table, node_gbps_needed
    from planner.report.jsonout import dumps
    from planner.report.perf_text import sweep_table
    from planner.report.writers import BandwidthReport, format_for

    catalogs, calibration_path = kw.pop("catalog_paths"), kw.pop("calibration")
    as_json, target, output = kw.pop("as_json"), kw.pop("target_tflops"), kw.pop("output")
    outputs = Outputs(command_inputs(catalogs=catalogs, calibration=calibration_path))
    outputs.check("-o", output)
    targets = [("-o", output, format_for("bandwidth", "-o", output))]
    loaded = load_catalog(catalogs)
    calibration = load_calibration(calibration_path)
    gpu, gpus, per_node, domain = kw.pop("gpu"), kw.pop("gpus"), kw.pop("gpus_per_node"), kw.pop("scale_up_gpus")
    if kw.pop("scale_up_gb_per_s") is not None:
        raise click.UsageError("--scale-up-gb-per-s is a predict option (bandwidth sweeps the network, not NVLink)")
    named("--gpu", lambda: loaded.gpu(gpu))
    work, _ = _workload(loaded, kw)
    table = node_gbps_needed(
        bandwidth_table(loaded, work, gpu, gpus, per_node, calibration, scale_up_gpus=domain), target
    )
    answers = table.drop_duplicates(["fabric", "zeropp"])
    heading = f"ZeRO-3 bandwidth for {target:g} TFLOPs/GPU on {gpus} x {table.iloc[0]['gpu']}"
    needed = [_needed_record(r) for _, r in answers.iterrows()]
    write_report(outputs, BandwidthReport(table, needed, heading, calibration), targets)
    if as_json:
        echo(
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
    echo(
        f"ZeRO-3 bandwidth for {target:g} TFLOPs/GPU: {work.model_name or format_count(work.params) + ' params'} on "
        f"{gpus} x {first['gpu']} ({gpus // per_node} nodes x {per_node}), "
        f"{first['tokens_per_gpu']:,.0f} tokens/GPU per micro-step\n"
    )
    for _, r in answers.iterrows():
        echo("  " + _needed_line(r, target))
    for _, r in answers.drop_duplicates("zeropp").iterrows():
        if not r["fits_memory"]:
            label = "with ZeRO++" if r["zeropp"] else "without ZeRO++"
            echo(
                f"  warning: {label} the model needs {r['memory_per_gpu_gib']:.1f} GiB per GPU of "
                f"{r['usable_hbm_gib']:.1f} usable: it does not fit on {gpus} GPUs; add GPUs"
            )
    echo("\nAchieved TFLOPs/GPU by node bandwidth (Gbps):\n")
    echo(sweep_table(table))
    echo(f"\ncalibration: {calibration.source}")


def _needed_record(r) -> dict:
    return {
        "fabric": r["fabric"],
        "zeropp": bool(r["zeropp"]),
        "node_gbps_needed": r["node_gbps_needed"],
        "unreachable_because": r["unreachable_because"] or None,
        "ceiling_tflops_per_gpu": r["ceiling_tflops_per_gpu"],
        "fits_memory": bool(r["fits_memory"]),
        "memory_per_gpu_gib": r["memory_per_gpu_gib"],
        "usable_hbm_gib": r["usable_hbm_gib"],
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
@click.argument("measurements", nargs=-1, type=click.Path())
@click.option(
    "-o",
    "--output",
    type=click.Path(),
    default="calibration.json",
    show_default=True,
    help="Where to write the calibration file.",
)
@click.option("--no-database", is_flag=True, help="Fit your measurements alone, without planner's database.")
@click.option("--no-cross-validation", is_flag=True, help="Skip leave-one-source-out validation (and so the ranges).")
@click.option(
    "--tokens-per-gpu",
    type=Quantity("count", maximum=L.MAX_TOKENS_PER_GPU),
    help="Tokens per GPU per micro-step for rows that do not say.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the fit as JSON.")
@click.option("-q", "--quiet", is_flag=True, help="No progress or 'wrote FILE' messages on stderr.")
@catalog_option
def calibrate(measurements: Sequence[str], output: str, **kw) -> None:
    """Fit the model to measured training throughput (planner's database and your runs); write a calibration.

    MEASUREMENTS are CSV files, one run per row, in the columns of planner/data/measurements.csv: gpu,
    gpus, gpus_per_node, node_gbps, fabric (ib, roce, efa, tcpx, tcp; none on one node), params (or model;
    layers, hidden, heads, vocab when known), seq_len and micro_batch (or tokens_per_gpu), framework
    (deepspeed, fsdp), checkpointing (full, selective, op, none), offload (none, cpu, nvme), qwz, hpz, qgz,
    grad_bytes, grad_accum, and tokens_per_s_per_gpu (or a band tokens_per_s_low / _high; or, as planner
    0.1 files, measured_tflops or tflops_per_gpu_low / _high); optional source_group, source, note.
    Your rows are one more source: the fit weights each source alike, and validation leaves each out.

    \b
    Examples:
      planner calibrate my-runs.csv -o my-cal.json
      planner predict ... --calibration my-cal.json
      planner calibrate -o planner/data/calibration_default.json     # refit the shipped default
    """
    from planner.base.fileio import Outputs

    outputs = Outputs(_fit_inputs(measurements, kw))
    outputs.check("-o", output)  # before the fit: a bad target fails at once, not after minutes
    quiet = kw["quiet"]
    result = _fit(measurements, kw, validate=not kw.pop("no_cross_validation"))
    calibration, report, cv = result
    outputs.add_text("-o", output, calibration.model_dump_json(indent=2))
    outputs.commit()
    if kw["as_json"]:
        from planner.report.jsonout import dumps

        points = report.to_dict("records")
        echo(dumps({"calibration": calibration.model_dump(), "points": points}))
        return
    from planner.report.perf_text import calibration_text

    echo(calibration_text(calibration, report, cv))
    wrote(output, quiet)


@main.command()
@click.argument("measurements", nargs=-1, type=click.Path())
@click.option("--no-database", is_flag=True, help="Validate on your measurements alone.")
@click.option(
    "--tokens-per-gpu",
    type=Quantity("count", maximum=L.MAX_TOKENS_PER_GPU),
    help="Tokens per GPU per micro-step for rows that do not say.",
)
@click.option("--points", is_flag=True, help="List every point's out-of-source error.")
@click.option(
    "--serving",
    is_flag=True,
    help="Judge the serving model (planner serve) on the serving measurements instead (no MEASUREMENTS).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the validation as JSON.")
@click.option("-q", "--quiet", is_flag=True, help="No progress messages on stderr.")
@catalog_option
def validate(measurements: Sequence[str], **kw) -> None:
    """Judge the model: per-source error of the fit; leave-one-source-out and leave-one-publication-out
    cross-validation (fit without a source or a whole document, predict it), per GPU architecture and with each
    architecture left out; the coverage of the p10-p90 ranges; and the memory model against published peaks,
    over planner's measurement database and your CSVs.

    \b
    Examples:
      planner validate
      planner validate my-runs.csv --points
      planner validate --serving
    """
    if kw.pop("serving"):
        _validate_serving(measurements, kw)
        return
    show_points = kw.pop("points")
    calibration, report, cv = _fit(measurements, kw, validate=True)
    if cv is None:
        from planner.base.errors import UsageError

        raise UsageError("cross-validation needs measurements from at least two sources")
    if kw["as_json"]:
        from planner.model.fitting import summary
        from planner.report.jsonout import dumps

        fit = calibration.fit
        echo(
            dumps(
                {
                    "in_sample": summary(report),
                    "leave_one_source_out": summary(cv),
                    "leave_one_publication_out": fit.get("leave_one_publication_out"),
                    "leave_one_architecture_out": fit.get("leave_one_architecture_out"),
                    "memory": fit.get("memory"),
                }
            )
        )
        return
    from planner.report.perf_text import validation_text

    echo(validation_text(report, cv, show_points, calibration.fit))


def _validate_serving(measurements: Sequence[str], kw: dict) -> None:
    """`validate --serving`: the serving model with its stated efficiencies, and fitted out of publication."""
    from planner.base.errors import UsageError
    from planner.catalog.load import load_catalog
    from planner.model import serving_validation as sv
    from planner.report.jsonout import dumps

    if measurements or kw["no_database"] or kw["tokens_per_gpu"]:
        raise UsageError(
            "--serving validates planner's serving measurements: give no MEASUREMENTS, --no-database "
            "or --tokens-per-gpu with it"
        )
    loaded = load_catalog(kw["catalog_paths"])
    stderr_progress(kw["quiet"])("predicting the serving measurements, then fitting out of publication")
    report = sv.report(loaded, sv.load())
    echo(dumps(report) if kw["as_json"] else sv.report_text(report, kw["points"]))


def _fit_inputs(measurements: Sequence[str], kw: dict) -> list:
    """What calibrate reads (planner.base.fileio.Outputs: its -o may overwrite none of it)."""
    from planner.base.resources import data_dir

    database = [] if kw["no_database"] else [("measurement database", data_dir() / "measurements.csv")]
    return command_inputs(catalogs=kw["catalog_paths"], measurements=measurements) + database


def _fit(measurements: Sequence[str], kw: dict, validate: bool):
    from planner.catalog.load import load_catalog
    from planner.model.fitting import calibrate as run_calibration

    quiet = kw.pop("quiet")
    progress = stderr_progress(quiet)
    loaded = load_catalog(kw.pop("catalog_paths"))
    paths = [Path(m) for m in measurements]
    return run_calibration(loaded, paths, not kw.pop("no_database"), kw.pop("tokens_per_gpu"), validate, progress)
