"""`planner predict`: the performance model on one named configuration, with a warning where it extrapolates
beyond the runs it was fitted to. (The bandwidth sweep of `planner bandwidth` is planner/model/sweep.py.)"""

from __future__ import annotations

from planner.catalog.load import Catalog
from planner.model import performance as perf
from planner.model.calibration import Calibration
from planner.model.workload import Cluster, Training, cluster_frame


def predict(catalog: Catalog, work: Training, cluster: Cluster, calibration: Calibration) -> dict:
    row = perf.evaluate(cluster_frame(catalog, work, [cluster]), calibration).iloc[0].to_dict()
    tokens, multi_node = row["seq_len"] * row["micro_batch"], cluster.gpus > cluster.domain
    row["extrapolation"] = calibration.extrapolation_note(work.framework, tokens, multi_node)
    return row
