"""The performance model over a bandwidth sweep of a named cluster (`planner bandwidth`, and the plan
workbook's sensitivity sheet): achieved TFLOPs/GPU at each node bandwidth, for IB and RoCE, with and without
ZeRO++, and the bandwidth a TFLOPs target needs."""

from __future__ import annotations

import pandas as pd

from planner.catalog.load import Catalog
from planner.hardware.topology import node_gbps
from planner.model import performance as perf
from planner.model.calibration import Calibration
from planner.model.workload import Cluster, Training, cluster_frame

STANDARD_NODE_GBPS = (100, 200, 400, 800, 1600, 3200)


SWEEP_FABRICS = ("ib", "roce")


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
