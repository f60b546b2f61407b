"""Serving a model too big for GPU memory, where latency is bounded by bandwidth (docs/model.md section 7).

Per forward pass (one decode step at batch B) every weight byte reaches a GPU. Split width-wise (tensor
parallel) over m machines, each machine holds W/m bytes: what fits in HBM stays resident, the rest lives in
DRAM and then on NVMe, and streams over the links every pass. The links work as a pipeline, so the slowest
one sets the streaming time:

    HBM        W/m                      / (G x HBM GB/s)
    PCIe->GPU  (dram + nvme bytes)      / (G x x16 GB/s of the PCIe generation)
    platform   (dram + nvme bytes)      / min(root complex, lanes x GB/s per lane)
    DRAM       (dram + 2 x nvme bytes)  / DRAM GB/s            (NVMe data bounces through host memory)
    NVMe       nvme bytes               / (drives x read GB/s)
    compute    2 P B / m                / (G x peak x decode efficiency)

plus, when m > 1, two all-reduces of the activations (B x h x 2 bytes) per layer across all m x G GPUs:
NCCL ring latency (two passes) and bytes over the node's NICs. More machines divide the bytes but add latency
per layer. The functions take arrays (one entry per machine configuration and count; planner/tables/serve.py
builds them) and evaluate every configuration at every m at once.

Latency here is per generated token (one decode step): prefill (time to first token) and the KV cache are
not modelled.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from planner.assumptions import model as A
from planner.base.units import GB, GIB
from planner.model import network
from planner.model.workload import Serving

LINKS = ("HBM", "PCIe to GPUs", "platform PCIe", "DRAM", "NVMe", "compute")


@dataclass(frozen=True)
class Pass:
    """One forward pass on m machines: where the bytes live, each link's time, the bottleneck."""

    machines: int
    bytes_hbm: float
    bytes_dram: float
    bytes_nvme: float
    link_s: dict[str, float]
    network_s: float
    latency_s: float
    bottleneck: str
    fits: bool

    @property
    def streaming_gb_per_s(self) -> float:
        """Aggregate rate at which weights reach the GPUs across all machines."""
        stream = max(self.link_s.values())
        total = (self.bytes_hbm + self.bytes_dram + self.bytes_nvme) * self.machines
        return total / stream / GB if stream else math.inf


def passes(job: Serving, a: dict[str, np.ndarray], m: np.ndarray) -> dict[str, np.ndarray]:
    """The forward pass of each machine (entries of `a`) split over m machines (same shape)."""
    G = a["G"]
    share = job.weights_bytes / m
    usable_hbm = A.USABLE_HBM_FRACTION.value * a["hbm_gib"] - A.FRAMEWORK_RESERVE_GIB.value
    resident = np.minimum(share, np.maximum(0.0, G * usable_hbm * GIB))
    in_dram = np.minimum(share - resident, A.DRAM_USABLE_FRACTION.value * a["dram_gib"] * GIB)
    on_nvme = share - resident - in_dram
    streamed = in_dram + on_nvme
    with np.errstate(divide="ignore", invalid="ignore"):
        nvme = np.where(on_nvme > 0, np.where(a["nvme_gb_per_s"] > 0, on_nvme / (a["nvme_gb_per_s"] * GB), np.inf), 0.0)
        link = {
            "HBM": share / (G * a["hbm_gb_per_s"] * GB),
            "PCIe to GPUs": streamed / (G * a["gpu_pcie_gb_per_s"] * GB),
            "platform PCIe": streamed / (a["platform_gb_per_s"] * GB),
            "DRAM": (in_dram + 2 * on_nvme) / (a["dram_gb_per_s"] * GB),
            "NVMe": nvme,
            "compute": 2 * job.params * job.batch / m / (G * a["peak_flops"]),
        }
        network = _network_s(job, a, m)
    times = np.vstack([link[k] for k in LINKS])
    stream = times.max(axis=0)
    worst = np.array(LINKS, dtype=object)[times.argmax(axis=0)]
    return {
        "bytes_hbm": resident,
        "bytes_dram": in_dram,
        "bytes_nvme": on_nvme,
        "link_s": link,
        "network_s": network,
        "latency_s": stream + network,
        "bottleneck": np.where(network > stream, "network latency", worst),
        "fits": on_nvme <= a["nvme_bytes"] + 1e-6,
    }


def _network_s(job: Serving, a: dict, m: np.ndarray) -> np.ndarray:
    """2 all-reduces per layer over all GPUs: NCCL ring latency (two passes of the ring) plus, across
    machines, the activation bytes over each machine's NICs ((m-1)/m of each all-reduce's two passes); within
    one machine the NVLink latency alone."""
    gpus = m * a["G"]
    latency = network.ring_latency_s(gpus, m, a["net_step_us"], passes=2)
    size = job.batch * job.hidden * A.ACTIVATION_BYTES.value
    moved = 2 * network.ring_factor(gpus, m, hierarchical=True) * size
    return job.layers * 2 * (latency + network.transfer_s(moved, a["node_bytes_per_s"]))


def pass_at(p: dict, i, machines: int) -> Pass:
    return Pass(
        machines=machines,
        bytes_hbm=float(p["bytes_hbm"][i]),
        bytes_dram=float(p["bytes_dram"][i]),
        bytes_nvme=float(p["bytes_nvme"][i]),
        link_s={k: float(v[i]) for k, v in p["link_s"].items()},
        network_s=float(p["network_s"][i]),
        latency_s=float(p["latency_s"][i]),
        bottleneck=str(p["bottleneck"][i]),
        fits=bool(p["fits"][i]),
    )


def required_gb_per_s(weights_bytes: float, latency_s: float) -> float:
    """Streaming bandwidth any configuration needs: all weights once per pass (1 TB at 1 s: 1 TB/s)."""
    return weights_bytes / latency_s / GB
