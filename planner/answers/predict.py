"""`planner predict`: the performance model on one named configuration, with a warning where it extrapolates
beyond the runs it was fitted to. (The bandwidth sweep of `planner bandwidth` is planner/model/sweep.py.)"""

from __future__ import annotations

from planner.base.errors import PlannerError, UsageError
from planner.catalog.load import Catalog
from planner.model import performance as perf
from planner.model.calibration import Calibration
from planner.model.parallelism import precision_problem
from planner.model.workload import Cluster, Training, cluster_frame


def predict(catalog: Catalog, work: Training, cluster: Cluster, calibration: Calibration) -> dict:
    """The evaluated configuration (perf.evaluate's figures) with its warnings. Raises UsageError when the GPU
    cannot run the precision, PlannerError when the configuration does not fit in GPU memory: a throughput for
    a run that cannot start would be a confident number for nothing."""
    gpu = catalog.gpu(cluster.gpu)
    problem = precision_problem(gpu, work.parallelism.precision)
    if problem:
        raise UsageError(f"--precision {work.parallelism.precision}: {problem}")
    group = work.parallelism.shard_gpus or cluster.domain
    if work.parallelism.sharding == "hybrid" and cluster.gpus % group:
        raise UsageError(f"--shard-gpus {group} must divide --gpus {cluster.gpus} (whole replicas of the shard group)")
    row = perf.evaluate(cluster_frame(catalog, work, [cluster]), calibration).iloc[0].to_dict()
    if not row["fits_memory"]:
        raise PlannerError(does_not_fit(row))
    tokens, multi_node = row["seq_len"] * row["micro_batch"], cluster.gpus > cluster.domain
    row["extrapolation"] = calibration.extrapolation_note(work.framework, tokens, multi_node)
    row["unmeasured"] = calibration.unmeasured_note(gpu.architecture or "other", gpu.name)
    return row


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
