"""The performance model applied to named configurations: predict one, sweep node bandwidth, and the
bandwidth a TFLOPs target needs. Used by `planner predict`, `planner bandwidth` and the plan workbook's
sensitivity sheet."""

from __future__ import annotations

import pandas as pd

from planner.catalog.load import Catalog
from planner.hardware.topology import node_gbps
from planner.model import performance as perf
from planner.model.calibration import Calibration
from planner.model.workload import Cluster, Training, cluster_frame

STANDARD_NODE_GBPS = (100, 200, 400, 800, 1600, 3200)
SWEEP_FABRICS = ("ib", "roce")


def predict(catalog: Catalog, work: Training, cluster: Cluster, calibration: Calibration) -> dict:
    row = perf.evaluate(cluster_frame(catalog, work, [cluster]), calibration).iloc[0].to_dict()
    tokens, multi_node = row["seq_len"] * row["micro_batch"], cluster.gpus > cluster.domain
    row["extrapolation"] = calibration.extrapolation_note(work.framework, tokens, multi_node)
    return row


def bandwidth_table(
    catalog: Catalog,
    work: Training,
    gpu: str,
    gpus: int,
    gpus_per_node: int,
    calibration: Calibration,
    node_gbps=STANDARD_NODE_GBPS,
    scale_up_gpus: int | None = None,
) -> pd.DataFrame:
    """Achieved TFLOPs/GPU at each node bandwidth, for IB and RoCE, without and (DeepSpeed only) with all of
    ZeRO++ (scale_up_gpus: the NVLink domain, default a node)."""
    rows = []
    for zeropp in (False, True) if work.framework == "deepspeed" else (False,):
        clusters = [
            Cluster(gpu, gpus, gpus_per_node, g, f, scale_up_gpus=scale_up_gpus)
            for f in SWEEP_FABRICS
            for g in node_gbps
        ]
        evaluated = perf.evaluate(
            cluster_frame(catalog, work.with_zeropp(zeropp) if zeropp else work, clusters), calibration
        )
        evaluated["zeropp"] = zeropp
        rows.append(evaluated)
    return pd.concat(rows, ignore_index=True)


def node_gbps_needed(evaluated: pd.DataFrame, target_tflops: float) -> pd.DataFrame:
    """Per evaluated row: the minimum node Gbps reaching the target, or inf with the limiting reason,
    and the ceiling (TFLOPs/GPU at unlimited bandwidth)."""
    needed = evaluated.apply(lambda r: perf.domain_gbps_for_target(r, target_tflops), axis=1, result_type="expand")
    out = evaluated.copy()
    out["node_gbps_needed"] = node_gbps(needed[0], evaluated["gpus_per_node"], evaluated["scale_up_gpus"])
    out["unreachable_because"] = needed[1]
    out["ceiling_tflops_per_gpu"] = evaluated.apply(perf.ceiling_tflops, axis=1)
    return out


def plan_sweep(catalog: Catalog, work: Training, choice, calibration: Calibration) -> pd.DataFrame | None:
    """The bandwidth sweep at a plan's chosen configuration (None for a single node: no network)."""
    if choice.nodes <= 1:
        return None
    return bandwidth_table(
        catalog, work.with_micro_batch(choice.micro_batch), choice.gpu, choice.gpus, choice.gpus_per_node, calibration
    )
