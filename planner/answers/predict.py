"""`planner predict`: the performance model on one named configuration, with a warning where it extrapolates
beyond the runs it was fitted to. (The bandwidth sweep of `planner bandwidth` is planner/model/sweep.py.)"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from planner.base.errors import PlannerError, UsageError
from planner.catalog.load import Catalog
from planner.model import layout
from planner.model import performance as perf
from planner.model.calibration import Calibration
from planner.model.parallelism import LAYOUT, precision_problem
from planner.model.workload import Cluster, Training, cluster_frame


def predict(catalog: Catalog, work: Training, cluster: Cluster, calibration: Calibration, search=False) -> dict:
    """The evaluated configuration (perf.evaluate's figures) with its warnings; with `search` (no layout given,
    a framework that has layouts) the fastest legal layout that fits (best_layout). Raises UsageError when the
    GPU cannot run the precision or the layout does not split the GPUs, PlannerError when the configuration does
    not fit in GPU memory: a throughput for a run that cannot start would be a confident number for nothing."""
    gpu = catalog.gpu(cluster.gpu)
    problem = precision_problem(gpu, work.parallelism.precision)
    if problem:
        raise UsageError(f"--precision {work.parallelism.precision}: {problem}")
    group = work.parallelism.shard_gpus or cluster.domain
    if work.parallelism.sharding == "hybrid" and cluster.gpus % group:
        raise UsageError(f"--shard-gpus {group} must divide --gpus {cluster.gpus} (whole replicas of the shard group)")
    problem = layout.model_problem(work)
    if problem:
        raise UsageError(f"--{problem}")
    tp = work.parallelism.tp
    if tp > 1 and tp <= cluster.domain and cluster.domain % tp:
        raise UsageError(
            f"--tp {tp} does not divide the {cluster.domain}-GPU NVLink domain: a TP group would straddle two"
        )
    searchable = work.framework != "deepspeed" and work.offload == "none" and work.parallelism.sharding != "hybrid"
    if search and searchable:
        row = best_layout(catalog, work, cluster, calibration)
    else:
        work.parallelism.data_parallel(cluster.gpus)  # gpus = tp x pp x cp x dp, checked in one place
        row = _evaluate(catalog, _with_accum(work, cluster.gpus), [cluster], calibration)[0]
        if work.parallelism.pp > 1 and row["grad_accum"] < work.parallelism.pp:
            row["pipeline_note"] = (
                f"grad_accum {row['grad_accum']:g} < pp {work.parallelism.pp}: the pipeline never fills; give "
                "--grad-accum (micro-batches per step) or --global-batch"
            )
    if not row["fits_memory"]:
        raise PlannerError(does_not_fit(row))
    tokens, multi_node = row["seq_len"] * row["micro_batch"], cluster.gpus > cluster.domain
    row["extrapolation"] = calibration.extrapolation_note(work.framework, tokens, multi_node)
    row["unmeasured"] = calibration.unmeasured_note(gpu.architecture or "other", gpu.name)
    return row


def _evaluate(catalog, work: Training, clusters, calibration) -> list[dict]:
    return perf.evaluate(cluster_frame(catalog, work, clusters), calibration).to_dict("records")


def _with_accum(work: Training, gpus: int) -> Training:
    """The training with grad_accum from --global-batch for its layout (else --grad-accum as given)."""
    if work.global_batch is None:
        return work
    dims = layout.dims({**{k: getattr(work.parallelism, k) for k in LAYOUT}, "gpus": gpus})
    ok, m = layout.legal(dims, gpus, work.micro_batch, work.global_batch)
    if not ok:
        raise UsageError(
            f"--global-batch {work.global_batch} does not split into micro-batch {work.micro_batch:g} x dp "
            f"{gpus // (work.parallelism.tp * work.parallelism.pp * work.parallelism.cp)} x whole micro-batches "
            f"per step{' (at least pp)' if work.parallelism.pp > 1 else ''}: change it or the layout"
        )
    return dataclasses.replace(work, grad_accum=int(m))


def best_layout(catalog: Catalog, work: Training, cluster: Cluster, calibration: Calibration) -> dict:
    """The fastest layout of planner.model.layout.search_space that is legal on this cluster (whole ranks, a
    filled pipeline with --global-batch) and fits in memory; ties go to the simplest (fewest model-parallel
    GPUs). The row carries `layouts_tried`, `layouts_fitting` and the runner-up."""
    space = layout.search_space(work, cluster.domain, pipelines=work.global_batch is not None)
    space = [lay for lay in space if layout.tp_fits(lay["tp"], cluster.domain)]
    works = []
    for lay in space:
        candidate = work.with_parallelism(dataclasses.replace(work.parallelism, **lay))
        try:
            candidate.parallelism.data_parallel(cluster.gpus)
            works.append(_with_accum(candidate, cluster.gpus))
        except UsageError:
            continue
    if not works:
        raise UsageError(f"no parallel layout splits {cluster.gpus} GPUs (tp x pp x cp x dp); give --tp/--pp/--cp")
    frame = pd.concat([cluster_frame(catalog, w, [cluster]) for w in works], ignore_index=True)
    rows = perf.evaluate(frame, calibration).to_dict("records")
    fitting = [r for r in rows if r["fits_memory"]]
    if not fitting:  # none fits: report the one closest to fitting, which predict refuses with its numbers
        return min(rows, key=lambda r: r["memory_per_gpu_gib"] - r["usable_hbm_gib"]) | {"layouts_tried": len(rows)}
    tokens = [r["tokens_per_s"] for r in fitting]
    dims = {k: np.array([r[k] for r in fitting]) for k in LAYOUT}
    chosen = int(layout.choose(np.zeros(len(fitting)), tokens, np.ones(len(fitting), bool), dims)[0])
    best = fitting[chosen] | {"layouts_tried": len(rows), "layouts_fitting": len(fitting)}
    others = sorted((r for i, r in enumerate(fitting) if i != chosen), key=lambda r: -r["tokens_per_s"])
    if others:
        best["runner_up"] = layout.layout_name(others[0])
        best["runner_up_tokens_per_s"] = others[0]["tokens_per_s"]
    return best


def does_not_fit(row: dict) -> str:
    """The infeasible configuration in one line: how far over, and what frees memory."""
    over = row["memory_per_gpu_gib"] - row["usable_hbm_gib"]
    fixes = ["add GPUs", "lower --micro-batch"] if row["micro_batch"] > 1 else ["add GPUs"]
    fixes += ["--checkpointing full"] if row["checkpointing"] != "full" else []
    fixes += ["--offload cpu"] if row["offload"] == "none" else []
    return (
        f"does not fit: the model needs {row['memory_per_gpu_gib']:.1f} GiB per GPU of {row['usable_hbm_gib']:.1f} "
        f"usable on {row['gpu']} ({over:.1f} GiB over); {', '.join(fixes[:-1])} or {fixes[-1]}"
        if len(fixes) > 1
        else f"does not fit: the model needs {row['memory_per_gpu_gib']:.1f} GiB per GPU of "
        f"{row['usable_hbm_gib']:.1f} usable on {row['gpu']} ({over:.1f} GiB over); {fixes[0]}"
    )
