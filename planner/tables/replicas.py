"""Serving candidates: every allowed server x precision x replica layout, with the most requests/s a replica
serves within the latency targets (planner/model/queueing.py), and per server the layout that serves the
most per server (the only one a cost-minimising plan uses: every layout of a server costs the same)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from planner.assumptions import serving as S
from planner.catalog.load import Catalog
from planner.catalog.rows import ServerRow
from planner.model import engine, queueing
from planner.model.engine import Replicas, Shape
from planner.model.queueing import Requests


@dataclass(frozen=True)
class Targets:
    """The load and the latency targets (seconds, at the requests' percentile; None: no target)."""

    rate_per_s: float
    ttft_s: float | None
    tpot_s: float | None


def layouts(shape: Shape, domain: int) -> list[tuple[str, int]]:
    """(layout, GPUs per replica) inside a scale-up domain of `domain` GPUs: tp over a divisor of the domain
    that splits the attention heads evenly; for a MoE model also ep over any divisor of 2 or more."""
    divisors = [g for g in range(1, domain + 1) if domain % g == 0]
    out = [("tp", g) for g in divisors if shape.heads % g == 0]
    if shape.moe:
        out += [("ep", g) for g in divisors if g >= 2]
    return out


def candidates(
    catalog: Catalog,
    shape: Shape,
    req: Requests,
    targets: Targets,
    servers: list[ServerRow],
    precisions: list[str],
) -> pd.DataFrame:
    """One row per server x precision x layout the server's GPU supports, with its rate per replica at the
    targets and the operating point there."""
    rows = []
    for i, server in enumerate(servers):
        gpu = catalog.gpu(server.gpu)
        for precision in precisions:
            weight_bytes, kv_bytes, peak_column = S.PRECISIONS[precision]
            peak = getattr(gpu, peak_column)
            if peak is None:
                continue
            for layout, g in layouts(shape, server.scale_up_gpus or server.gpus_per_node):
                rows.append(
                    {
                        "server_index": i,
                        "server": server.name,
                        "gpu": gpu.name,
                        "precision": precision,
                        "layout": layout,
                        "replica_gpus": g,
                        "replicas_per_server": server.gpus_per_node // g,
                        "weight_bytes": weight_bytes,
                        "kv_bytes": kv_bytes,
                        "hbm_gib": gpu.hbm_gib,
                        "hbm_gb_per_s": gpu.hbm_gb_per_s,
                        "peak_tflops": peak,
                        "scale_up_gb_per_s": server.scale_up_gb_per_s,
                        "price_usd": server.price_usd,
                        "power_w": server.power_w,
                    }
                )
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    r = replicas(frame)
    at = queueing.max_rate(shape, r, req, targets.ttft_s, targets.tpot_s)
    for key in ("rate", "batch", "ttft_p_s", "tpot_p_s", "ttft_s", "tpot_s", "prefill_share", "max_sequences"):
        frame[key] = at[key]
    frame["serves"] = at["serves"]
    frame["weights_gib_per_gpu"] = engine.weights_per_gpu(shape, r) / 2**30
    frame["fits"] = frame["max_sequences"] >= 1
    frame["rate_per_server"] = frame["rate"] * frame["replicas_per_server"]
    frame["binds"] = _binds(frame, req, targets)
    return frame


def replicas(frame: pd.DataFrame) -> Replicas:
    col = lambda c: frame[c].to_numpy(float)  # noqa: E731
    return Replicas(
        gpus=col("replica_gpus"),
        ep=(frame["layout"] == "ep").to_numpy(),
        weight_bytes=col("weight_bytes"),
        kv_bytes=col("kv_bytes"),
        hbm_gib=col("hbm_gib"),
        hbm_gb_per_s=col("hbm_gb_per_s"),
        peak_tflops=col("peak_tflops"),
        scale_up_gb_per_s=col("scale_up_gb_per_s"),
    )


def _binds(frame: pd.DataFrame, req: Requests, targets: Targets) -> list[str]:
    """What stops a replica from serving more: the TTFT or TPOT target (within 2% of it at the rate), else
    the KV cache (the batch at its limit) or the prefill (the replica saturated)."""
    out = []
    for row in frame.itertuples(index=False):
        if not row.fits:
            out.append("weights do not fit")
        elif not row.serves:
            alone = []
            if targets.ttft_s is not None and row.ttft_p_s > targets.ttft_s:
                alone.append(f"TTFT alone {row.ttft_p_s * 1e3:.0f} ms")
            if targets.tpot_s is not None and row.tpot_p_s > targets.tpot_s:
                alone.append(f"TPOT alone {row.tpot_p_s * 1e3:.1f} ms")
            out.append(" and ".join(alone) + " over the target" if alone else "no rate meets the targets")
        elif targets.tpot_s is not None and row.tpot_p_s >= 0.98 * targets.tpot_s:
            out.append("TPOT")
        elif targets.ttft_s is not None and row.ttft_p_s >= 0.98 * targets.ttft_s:
            out.append("TTFT")
        elif row.batch >= 0.98 * row.max_sequences:
            out.append("KV cache")
        else:
            out.append("throughput")
    return out


def best_per_server(frame: pd.DataFrame) -> pd.DataFrame:
    """Per server, the serving row with the most requests/s per server (ties: fewer GPUs per replica, then
    the wider precision)."""
    ok = frame[frame["serves"]].copy()
    if ok.empty:
        return ok
    ok["_width"] = -ok["weight_bytes"]
    ok = ok.sort_values(["server_index", "rate_per_server", "replica_gpus", "_width"], ascending=[1, 0, 1, 1])
    return ok.drop_duplicates("server_index").drop(columns="_width").reset_index(drop=True)
