"""Public Python entry points: predict(), bandwidth_table(), node_gbps_needed(). The CLI is a thin shell
over these; they take validated values and return plain data (dicts and DataFrames)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from planner import assumptions as A
from planner import perf
from planner.calibration import Calibration
from planner.catalog import Catalog
from planner.errors import UsageError

STANDARD_NODE_GBPS = (100, 200, 400, 800, 1600, 3200)


@dataclass(frozen=True)
class Workload:
    """What is trained: the model (params, and architecture when known) and the per-GPU batch."""

    params: float
    micro_batch: float
    seq_len: int
    layers: float = np.nan
    hidden: float = np.nan
    heads: float = np.nan
    vocab: float = np.nan
    checkpointing: bool = True
    flash_attention: bool = True
    qwz: bool = False
    hpz: bool = False
    qgz: bool = False
    grad_bytes: float = 2.0
    hierarchical: bool = False
    model_name: str | None = None


def workload(
    catalog: Catalog,
    *,
    params: float | None = None,
    model: str | None = None,
    micro_batch: float | None = None,
    seq_len: int | None = None,
    tokens_per_gpu: float | None = None,
    **options,
) -> Workload:
    """Resolve --model/--params and --micro-batch/--seq-len/--tokens-per-gpu into a Workload."""
    if (params is None) == (model is None):
        raise UsageError("give exactly one of --params (e.g. 176B) or --model (a name from models.csv)")
    arch: dict = {}
    if model is not None:
        row = catalog.model(model)
        params = row.params
        arch = {
            "layers": row.layers,
            "hidden": row.hidden,
            "heads": row.heads,
            "vocab": row.vocab,
            "model_name": row.name,
        }
        seq_len = seq_len or row.seq_len
    if params <= 0:
        raise UsageError(f"--params must be positive, got {params:g}")
    if tokens_per_gpu is not None:
        if micro_batch is not None:
            raise UsageError("give --tokens-per-gpu or --micro-batch, not both")
        if tokens_per_gpu <= 0:
            raise UsageError(f"--tokens-per-gpu must be positive, got {tokens_per_gpu:g}")
        seq_len = min(seq_len or tokens_per_gpu, tokens_per_gpu)
        micro_batch = tokens_per_gpu / seq_len
    if micro_batch is None or seq_len is None:
        raise UsageError("give --micro-batch and --seq-len (or --tokens-per-gpu, or --model for its seq_len)")
    if micro_batch <= 0 or seq_len <= 0:
        raise UsageError("--micro-batch and --seq-len must be positive")
    return Workload(params=params, micro_batch=micro_batch, seq_len=int(seq_len), **arch, **options)


@dataclass(frozen=True)
class Cluster:
    gpu: str
    gpus: int
    gpus_per_node: int
    node_gbps: float
    fabric: str
    intra_node_gb_per_s: float | None = None


def check_cluster(cluster: Cluster) -> None:
    if cluster.gpus < 1 or cluster.gpus_per_node < 1:
        raise UsageError("--gpus and --gpus-per-node must be at least 1")
    if cluster.gpus % cluster.gpus_per_node:
        raise UsageError(
            f"--gpus {cluster.gpus} is not a multiple of --gpus-per-node {cluster.gpus_per_node}: give whole nodes"
        )
    if not cluster.node_gbps > 0:
        raise UsageError(f"node bandwidth must be positive, got {cluster.node_gbps:g} Gbps")
    if cluster.fabric not in A.NCCL_NET_STEP_US:
        raise UsageError(f"fabric must be one of {', '.join(A.NCCL_NET_STEP_US)}, got {cluster.fabric!r}")


def intra_node_bandwidth(catalog: Catalog, gpu: str, gpus_per_node: int) -> float:
    """NVLink GB/s per GPU from a catalog server with this GPU and node size (NaN when none)."""
    values = [
        s.intra_node_gb_per_s for s in catalog.items("servers") if s.gpu == gpu and s.gpus_per_node == gpus_per_node
    ]
    return max(values) if values else np.nan


def configuration_frame(catalog: Catalog, work: Workload, clusters: list[Cluster]) -> pd.DataFrame:
    """One row per cluster, with every column perf.evaluate() reads."""
    records = []
    for cluster in clusters:
        check_cluster(cluster)
        gpu = catalog.gpu(cluster.gpu)
        nvlink = cluster.intra_node_gb_per_s
        if nvlink is None:
            nvlink = intra_node_bandwidth(catalog, gpu.name, cluster.gpus_per_node)
        records.append(
            {
                **{k: v for k, v in work.__dict__.items() if k != "model_name"},
                "gpu": gpu.name,
                "peak_tflops": gpu.peak_bf16_tflops,
                "hbm_gib": gpu.hbm_gib,
                "gpus": cluster.gpus,
                "gpus_per_node": cluster.gpus_per_node,
                "node_gbps": cluster.node_gbps,
                "fabric": cluster.fabric,
                "intra_node_gb_per_s": nvlink,
            }
        )
    frame = pd.DataFrame.from_records(records)
    if np.isnan(work.layers):
        frame["layers"] = np.nan  # keep "architecture unknown" visible to evaluate()
    return frame


def predict(catalog: Catalog, work: Workload, cluster: Cluster, calibration: Calibration) -> dict:
    row = perf.evaluate(configuration_frame(catalog, work, [cluster]), calibration).iloc[0]
    return row.to_dict()


def bandwidth_table(
    catalog: Catalog,
    work: Workload,
    gpu: str,
    gpus: int,
    gpus_per_node: int,
    calibration: Calibration,
    node_gbps=STANDARD_NODE_GBPS,
) -> pd.DataFrame:
    """Achieved TFLOPs/GPU at each node bandwidth, for IB and RoCE, without and with all of ZeRO++."""
    import dataclasses

    rows = []
    for zeropp in (False, True):
        w = dataclasses.replace(work, qwz=zeropp, hpz=zeropp, qgz=zeropp) if zeropp else work
        clusters = [Cluster(gpu, gpus, gpus_per_node, g, f) for f in ("ib", "roce") for g in node_gbps]
        evaluated = perf.evaluate(configuration_frame(catalog, w, clusters), calibration)
        evaluated["zeropp"] = zeropp
        rows.append(evaluated)
    return pd.concat(rows, ignore_index=True)


def node_gbps_needed(evaluated: pd.DataFrame, target_tflops: float) -> pd.DataFrame:
    """Per evaluated row: the minimum node Gbps reaching the target, or inf with the limiting reason,
    and the ceiling (TFLOPs/GPU at unlimited bandwidth)."""
    needed = evaluated.apply(lambda r: perf.node_gbps_for_target(r, target_tflops), axis=1, result_type="expand")
    out = evaluated.copy()
    out["node_gbps_needed"] = needed[0]
    out["unreachable_because"] = needed[1]
    out["ceiling_tflops_per_gpu"] = evaluated.apply(perf.ceiling_tflops, axis=1)
    return out


def plan_workbook_context(catalog: Catalog, scenario, plan, calibration: Calibration, solver: str = "cbc"):
    """Everything the Excel workbook shows beyond the Plan: the bandwidth sweep at the chosen configuration
    and the cost-vs-target curve."""
    import dataclasses

    from planner.candidates import scenario_workload
    from planner.planning import cost_curve
    from planner.report.excel import PlanContext

    c = plan.choice
    work = dataclasses.replace(scenario_workload(catalog, scenario), micro_batch=c.micro_batch)
    sweep = bandwidth_table(catalog, work, c.gpu, c.gpus, c.gpus_per_node, calibration) if c.nodes > 1 else None
    return PlanContext(
        scenario=scenario.model_dump(),
        calibration=calibration,
        catalog_files=dict(catalog.files),
        bandwidth_sweep=sweep,
        cost_curve=cost_curve(catalog, scenario, calibration, solver),
    )
