"""Serving candidates: every allowed machine (a server to buy or a cloud instance to rent) x precision x
replica layout, with the most requests/s a replica serves within the latency targets
(planner/model/queueing.py), and per machine the layout that serves the most per machine (the only one a
cost-minimising plan uses: every layout of a machine costs the same)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from planner.assumptions import serving as S
from planner.catalog.load import Catalog
from planner.model import engine, queueing
from planner.model.engine import Replicas, Shape, layouts
from planner.model.queueing import Requests


@dataclass(frozen=True)
class Targets:
    """The load and the latency targets (seconds, at the requests' percentile; None: no target)."""

    rate_per_s: float
    ttft_s: float | None
    tpot_s: float | None


@dataclass(frozen=True)
class Machine:
    """What a serving plan buys or rents: a server (price in USD) or a cloud instance (USD per hour)."""

    name: str
    gpu: str
    gpus: int
    domain: int  # GPUs in its scale-up (NVLink) domain
    scale_up_gb_per_s: float  # per GPU, one direction; NaN: unknown, so replicas of one GPU only
    price: float
    power_w: float  # nameplate (0 for an instance: energy is in its price)
    source: str  # catalog file:row
    date: str
    liquid_share: float = 0.0  # of its heat, removed by liquid (the PUE of its energy)


def candidates(
    catalog: Catalog,
    shape: Shape,
    req: Requests,
    targets: Targets,
    machines: list[Machine],
    precisions: list[str],
) -> pd.DataFrame:
    """One row per machine x precision x layout the machine's GPU supports, with its rate per replica at the
    targets and the operating point there."""
    rows = []
    for i, machine in enumerate(machines):
        gpu = catalog.gpu(machine.gpu)
        for precision in precisions:
            weight_bytes, kv_bytes, peak_column = S.PRECISIONS[precision]
            peak = getattr(gpu, peak_column)
            if peak is None:
                continue
            domain = machine.domain if np.isfinite(machine.scale_up_gb_per_s) else 1
            for layout, g in layouts(shape, domain):
                rows.append(
                    {
                        "server_index": i,
                        "server": machine.name,
                        "gpu": gpu.name,
                        "precision": precision,
                        "layout": layout,
                        "replica_gpus": g,
                        "replicas_per_server": machine.gpus // g,
                        "weight_bytes": weight_bytes,
                        "kv_bytes": kv_bytes,
                        "hbm_gib": gpu.hbm_gib,
                        "hbm_gb_per_s": gpu.hbm_gb_per_s,
                        "peak_tflops": peak,
                        "scale_up_gb_per_s": machine.scale_up_gb_per_s,  # NaN: one GPU per replica
                        "price_usd": machine.price,
                        "power_w": machine.power_w,
                    }
                )
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    r = Replicas.of(frame)
    at = queueing.max_rate(shape, r, req, targets.ttft_s, targets.tpot_s)
    for key in ("rate", "batch", "ttft_p_s", "tpot_p_s", "ttft_s", "tpot_s", "prefill_share", "max_sequences"):
        frame[key] = at[key]
    frame["serves"] = at["serves"]
    frame["weights_gib_per_gpu"] = engine.weights_per_gpu(shape, r) / 2**30
    frame["fits"] = frame["max_sequences"] >= 1
    frame["rate_per_server"] = frame["rate"] * frame["replicas_per_server"]
    frame["binds"] = _binds(frame, req, targets)
    frame["mode"] = "aggregated"
    frame[["prefill_layout", "prefill_gpus", "prefill_replicas"]] = pd.DataFrame(
        {"prefill_layout": "", "prefill_gpus": 0, "prefill_replicas": 0}, index=frame.index
    )
    return pd.concat([frame, disaggregated(shape, req, targets, frame)], ignore_index=True)


def kv_transfer_s(shape: Shape, r: Replicas, req: Requests) -> np.ndarray:
    """A request's KV cache, prefilled on one replica, moved to a decode replica in the same scale-up domain:
    every layer's cache of its input tokens, each prefill GPU holding a share sending it over its scale-up link."""
    cache = np.asarray(req.input_tokens, float) * shape.layers * shape.kv_width * r.kv_bytes
    senders = np.where(r.ep, 1.0, r.gpus)  # ep: the prompt's attention rank holds its whole cache
    return cache / (senders * r.scale_up_gb_per_s * 1e9)


def disaggregated(shape: Shape, req: Requests, targets: Targets, frame: pd.DataFrame) -> pd.DataFrame:
    """Per server and precision, the best split of its GPUs into prefill-only and decode-only replicas
    (disaggregated serving, as NVIDIA Dynamo and SGLang run it inside one NVLink domain): prefill replicas
    meet the TTFT target less the KV transfer, decode replicas the TPOT target without prefill interfering;
    the server serves min(prefill replicas x their rate, decode replicas x theirs). The split with the most
    requests/s per server; every (prefill layout, decode layout) pair is tried."""
    r = Replicas.of(frame)
    transfer = kv_transfer_s(shape, r, req)
    ttft = None if targets.ttft_s is None else targets.ttft_s - transfer
    pre = queueing.max_rate(shape, r, req, ttft, None, role="prefill")["rate"]
    dec_at = queueing.max_rate(shape, r, req, None, targets.tpot_s, role="decode")
    dec = dec_at["rate"]
    best: dict[tuple, tuple] = {}
    gpus = (frame["replica_gpus"] * frame["replicas_per_server"]).to_numpy(int)  # the server's GPUs
    fits = engine.kv_tokens(shape, r) >= float(req.input_tokens)  # the weights and one prompt's cache
    groups = frame.groupby(["server_index", "precision"], sort=False).indices
    for key, idx in groups.items():
        for p in idx[(pre[idx] > 0) & fits[idx]]:  # a prefill replica holds the weights and a prompt's cache
            counts = np.arange(1, gpus[p] // int(frame["replica_gpus"].iat[p]) + 1)
            left = gpus[p] - counts * int(frame["replica_gpus"].iat[p])
            for d in idx[dec[idx] > 0]:
                n_dec = left // int(frame["replica_gpus"].iat[d])
                served = np.minimum(counts * pre[p], n_dec * dec[d])
                k = int(np.argmax(served))
                if served[k] > 0 and (key not in best or served[k] > best[key][0] + 1e-12):
                    best[key] = (float(served[k]), p, d, int(counts[k]), int(n_dec[k]))
    rows = []
    for served, p, d, n_pre, n_dec in best.values():
        row = frame.iloc[d].to_dict()
        pre_row = frame.iloc[p]
        row.update(
            mode="disaggregated",
            prefill_layout=pre_row["layout"],
            prefill_gpus=int(pre_row["replica_gpus"]),
            prefill_replicas=n_pre,
            replicas_per_server=n_dec,
            rate=served / n_dec,
            rate_per_server=served,
            serves=True,
            fits=True,
        )
        rows.append((row, p, served / n_pre))
    if not rows:
        return frame.iloc[:0]
    out = pd.DataFrame([row for row, _, _ in rows])
    dec_r = Replicas.of(out)
    at = queueing.operate(shape, dec_r, req, out["rate"].to_numpy(float), prefill=False)
    pre_r = Replicas.of(frame.iloc[[p for _, p, _ in rows]].reset_index(drop=True))
    pre_at = queueing.prefill_pool(shape, pre_r, req, np.array([rate for _, _, rate in rows]))
    out["batch"], out["max_sequences"] = at["batch"], at["max_sequences"]
    out["tpot_p_s"], out["tpot_s"] = at["tpot_p_s"], at["tpot_s"]
    moved = kv_transfer_s(shape, pre_r, req)
    out["ttft_p_s"], out["ttft_s"] = pre_at["ttft_p_s"] + moved, pre_at["ttft_s"] + moved
    out["prefill_share"] = 0.0
    out["binds"] = _binds(out, req, targets)
    return out


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
    """Per server, the serving row with the most requests/s per server: every row of a server costs the same,
    so a disaggregated split is kept only where it serves more than every aggregated layout (ties: aggregated,
    fewer GPUs per replica, then the wider precision)."""
    ok = frame[frame["serves"]].copy()
    if ok.empty:
        return ok
    ok["_width"], ok["_split"] = -ok["weight_bytes"], ok["mode"] == "disaggregated"
    order = ["server_index", "rate_per_server", "_split", "replica_gpus", "_width"]
    ok = ok.sort_values(order, ascending=[1, 0, 1, 1, 1], kind="stable")
    return ok.drop_duplicates("server_index").drop(columns=["_width", "_split"]).reset_index(drop=True)


CURVE_FRACTIONS = tuple(round(0.1 * k, 1) for k in range(1, 11))  # of a machine's rate within the targets


def curve(shape: Shape, req: Requests, row: pd.Series, frame: pd.DataFrame) -> pd.DataFrame:
    """The latency/throughput curve of one machine kind's chosen layout (`row`, a best_per_server row): TTFT
    and TPOT at the percentile, the batch and output tokens/s per GPU, at CURVE_FRACTIONS of its rate."""
    rates = np.array(CURVE_FRACTIONS) * float(row["rate_per_server"])
    one = pd.DataFrame([row] * len(rates)).reset_index(drop=True)
    decode = Replicas.of(one)
    if row["mode"] == "aggregated":
        at = queueing.operate(shape, decode, req, rates / row["replicas_per_server"])
        ttft = at["ttft_p_s"]
        gpus = row["replicas_per_server"] * row["replica_gpus"]
    else:
        at = queueing.operate(shape, decode, req, rates / row["replicas_per_server"], prefill=False)
        mine = frame[(frame["server_index"] == row["server_index"]) & (frame["precision"] == row["precision"])]
        pre_row = mine[(mine["mode"] == "aggregated") & (mine["layout"] == row["prefill_layout"])]
        pre_row = pre_row[pre_row["replica_gpus"] == row["prefill_gpus"]].iloc[0]
        pre = Replicas.of(pd.DataFrame([pre_row] * len(rates)).reset_index(drop=True))
        pool = queueing.prefill_pool(shape, pre, req, rates / row["prefill_replicas"])
        ttft = pool["ttft_p_s"] + kv_transfer_s(shape, pre, req)
        gpus = row["replicas_per_server"] * row["replica_gpus"] + row["prefill_replicas"] * row["prefill_gpus"]
    return pd.DataFrame(
        {
            "rate_per_server": rates,
            "ttft_s": ttft,
            "tpot_s": at["tpot_p_s"],
            "batch": at["batch"],
            "output_tokens_per_s_per_gpu": rates * req.output_tokens / gpus,
        }
    )
