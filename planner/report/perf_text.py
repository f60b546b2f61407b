"""Terminal explanations of one evaluated configuration (`planner predict`) and of a bandwidth sweep."""

from __future__ import annotations

import math

import pandas as pd

from planner.report.terminal import format_table
from planner.units import format_count, format_gbps

FABRIC_LABEL = {"ib": "IB", "roce": "RoCE"}

BINDING_TEXT = {
    "compute": "compute: the GPUs are busy more than the network; more bandwidth buys little",
    "bandwidth": "network bandwidth: communication takes longer than compute; a faster node link helps",
    "latency": "collective latency: many small collectives; larger micro-batches or fewer nodes help",
    "nvlink": "NVLink: intra-node traffic takes longest",
    "memory": "memory: the configuration does not fit in GPU memory",
}


def _s(seconds: float) -> str:
    return f"{seconds:.3g} s" if seconds >= 0.01 else f"{seconds * 1e3:.3g} ms"


def explain(r: dict, calibration_source: str) -> str:
    nodes = int(r["nodes"])
    model = r.get("model_name") or f"{format_count(r['params'])} params"
    lines = [
        f"ZeRO-3 micro-step: {model} on {int(r['gpus'])} x {r['gpu']} ({nodes} nodes x {int(r['gpus_per_node'])}), "
        f"{r['tokens_per_gpu']:,.0f} tokens/GPU, {FABRIC_LABEL[r['fabric']]} {format_gbps(r['node_gbps'])} per node"
        + (f", ZeRO++ {'+'.join(k for k in ('qwz', 'hpz', 'qgz') if r[k])}" if any(r[k] for k in ('qwz', 'hpz', 'qgz')) else ""),
        "",
        f"  compute          {_s(r['t_compute_s']):>10}   {r['hw_flops_per_gpu'] / 1e15:.3g} PFLOP per GPU at "
        f"{r['peak_tflops']:g} TFLOPs peak x eta_comp {r['eta_comp']:.3f}"
        + ("" if r["checkpointing"] else " (no activation checkpointing)"),
        f"  communication    {_s(r['t_comm_s']):>10}   = bandwidth {_s(r['t_comm_bandwidth_s'])} + latency "
        f"{_s(r['t_comm_latency_s'])}",
        f"    network        {_s(r['t_comm_network_s']):>10}   {r['bytes_per_node_per_step'] / 1e9:,.1f} GB per node at "
        f"{format_gbps(r['node_gbps'])} x eta_net {r['eta_net']:.3f}" if nodes > 1 else
        "    network              none   single node: collectives stay on NVLink",
        f"    NVLink         {_s(r['t_comm_nvlink_s']):>10}   {r['bytes_per_gpu_nvlink_per_step'] / 1e9:,.1f} GB per GPU"
        + ("" if not math.isnan(r["intra_node_gb_per_s"]) else " (NVLink bandwidth unknown: not counted)"),
        f"    latency        {_s(r['t_comm_latency_s']):>10}   {r['layers'] * 3:.0f} collectives x NCCL ring latency",
        f"  overlap                     {r['overlap']:.2f} of the shorter phase hidden",
        f"  exposed comm     {_s(r['t_comm_exposed_s']):>10}",
        f"  step             {_s(r['t_step_s']):>10}",
        "",
        f"  achieved         {r['achieved_tflops_per_gpu']:.1f} TFLOPs per GPU (hardware FLOPs, as DeepSpeed reports)",
        f"  MFU              {r['mfu'] * 100:.1f} %   ({r['tokens_per_s']:,.0f} tokens/s across the cluster)",
        f"  memory           {r['memory_per_gpu_gib']:.1f} GiB per GPU of {r['usable_hbm_gib']:.1f} GiB usable "
        f"({r['hbm_gib']:g} GiB HBM): {'fits' if r['fits_memory'] else 'DOES NOT FIT'}",
        f"  binding          {BINDING_TEXT[r['binding']]}",
        "",
        f"  calibration: {calibration_source}",
    ]
    return "\n".join(lines)


def sweep_table(table: pd.DataFrame) -> str:
    """Rows: node Gbps; columns: IB, RoCE, and each with ZeRO++."""
    records = []
    for gbps, group in table.groupby("node_gbps", sort=True):
        record = {"node_gbps": gbps}
        for _, r in group.iterrows():
            label = FABRIC_LABEL[r["fabric"]] + (" +ZeRO++" if r["zeropp"] else "")
            record[label] = f"{r['achieved_tflops_per_gpu']:.1f}"
        records.append(record)
    columns = ["node_gbps", "IB", "RoCE", "IB +ZeRO++", "RoCE +ZeRO++"]
    return format_table(records, columns)
