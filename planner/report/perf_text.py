"""Terminal explanations of one evaluated configuration (`planner predict`) and of a bandwidth sweep."""

from __future__ import annotations

import math

import pandas as pd

from planner.assumptions import COLLECTIVES_PER_LAYER
from planner.report.terminal import format_table
from planner.units import format_count, format_gbps

FABRIC_LABEL = {"ib": "IB", "roce": "RoCE", "spectrum-x": "Spectrum-X"}

BINDING_TEXT = {
    "compute": "compute: the GPUs are busy more than the network; more bandwidth buys little",
    "bandwidth": "network bandwidth: communication takes longer than compute; a faster node link helps",
    "latency": "collective latency: many small collectives; larger micro-batches or fewer nodes help",
    "nvlink": "NVLink: intra-node traffic takes longest",
    "memory": "memory: the configuration does not fit in GPU memory",
}


def _s(seconds: float) -> str:
    return f"{seconds:.3g} s" if seconds >= 0.01 else f"{seconds * 1e3:.3g} ms"


def _line(label: str, value: str = "", detail: str = "") -> str:
    return f"  {label:<16} {value:>10}   {detail}".rstrip()


def _headline(r: dict) -> str:
    model = r.get("model_name") or f"{format_count(r['params'])} params"
    zeropp = [k for k in ("qwz", "hpz", "qgz") if r[k]]
    return (
        f"ZeRO-3 micro-step: {model} on {int(r['gpus'])} x {r['gpu']} ({int(r['nodes'])} nodes x "
        f"{int(r['gpus_per_node'])}), {r['tokens_per_gpu']:,.0f} tokens/GPU, {FABRIC_LABEL[r['fabric']]} "
        f"{format_gbps(r['node_gbps'])} per node" + (f", ZeRO++ {'+'.join(zeropp)}" if zeropp else "")
    )


def explain(r: dict, calibration_source: str) -> str:
    """The step, explained: where the time goes, what is achieved, what fits, what binds."""
    if r["nodes"] > 1:
        network = (
            f"{r['bytes_per_node_per_step'] / 1e9:,.1f} GB per node at {format_gbps(r['node_gbps'])} "
            f"x eta_net {r['eta_net']:.3f}"
        )
    else:
        network = "single node: collectives stay on NVLink"
    nvlink = f"{r['bytes_per_gpu_nvlink_per_step'] / 1e9:,.1f} GB per GPU"
    if math.isnan(r["intra_node_gb_per_s"]):
        nvlink += " (NVLink bandwidth unknown: not counted)"
    compute = (
        f"{r['hw_flops_per_gpu'] / 1e15:.3g} PFLOP per GPU at {r['peak_tflops']:g} TFLOPs peak "
        f"x eta_comp {r['eta_comp']:.3f}" + ("" if r["checkpointing"] else " (no activation checkpointing)")
    )
    fits = "fits" if r["fits_memory"] else "DOES NOT FIT"
    collectives = r["layers"] * COLLECTIVES_PER_LAYER.value
    lines = [
        _headline(r),
        "",
        _line("compute", _s(r["t_compute_s"]), compute),
        _line(
            "communication",
            _s(r["t_comm_s"]),
            f"= bandwidth {_s(r['t_comm_bandwidth_s'])} + latency {_s(r['t_comm_latency_s'])}",
        ),
        _line("  network", _s(r["t_comm_network_s"]), network),
        _line("  NVLink", _s(r["t_comm_nvlink_s"]), nvlink),
        _line("  latency", _s(r["t_comm_latency_s"]), f"{collectives:.0f} collectives x NCCL ring latency"),
        _line("overlap", f"{r['overlap']:.2f}", "of the shorter phase hidden behind the longer"),
        _line("exposed comm", _s(r["t_comm_exposed_s"])),
        _line("step", _s(r["t_step_s"])),
        "",
        _line(
            "achieved", f"{r['achieved_tflops_per_gpu']:.1f}", "TFLOPs per GPU (hardware FLOPs, as DeepSpeed reports)"
        ),
        _line("MFU", f"{r['mfu'] * 100:.1f} %", f"{r['tokens_per_s']:,.0f} tokens/s across the cluster"),
        _line(
            "memory",
            f"{r['memory_per_gpu_gib']:.1f} GiB",
            f"per GPU of {r['usable_hbm_gib']:.1f} GiB usable ({r['hbm_gib']:g} GiB HBM): {fits}",
        ),
        _line("binding", "", BINDING_TEXT[r["binding"]]),
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
