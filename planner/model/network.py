"""The network a collective crosses, as tiers, and the one formula that prices a ring collective on them
(docs/model.md section 2).

Two tiers, in the style of Calculon's systems (a list of tiers, each a size, a bandwidth and a latency):

  scale-up   the GPUs of one scale-up domain (NVLink/NVSwitch, xGMI, or a PCIe-card server's switches):
             `size` GPUs per domain, each moving `bytes_per_s` over the domain's links;
  scale-out  the domains of the job over the fabric: `size` domains, each moving `bytes_per_s` over its
             NICs (a domain's NICs are those of its hosts; an 8-GPU HGX server is one domain, a GB200 NVL72
             rack one domain of 18 hosts).

`tiers(columns)` is the one accessor the performance models read topology through (the columns
scale_up_gpus, scale_up_gb_per_s, scale_out_gbps per domain, gpus and fabric of a table of configurations).
A flat ring over n GPUs in N domains makes (n - N) scale-up steps and (N - 1) scale-out steps per pass, and
each domain's NICs carry (n - 1)/n of every collective's bytes; a hierarchical algorithm (intra-domain
first) carries (N - 1)/N. Arrays broadcast: every function works on one configuration or a million.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from planner.assumptions import model as A


@dataclass(frozen=True)
class Tier:
    """One tier, over an array of configurations: members per group, the line rate of each member in bytes/s
    (NaN: unknown, never binding), and NCCL's latency of one ring step across it."""

    name: str
    size: np.ndarray
    bytes_per_s: np.ndarray
    step_latency_us: np.ndarray


@dataclass(frozen=True)
class Tiers:
    scale_up: Tier
    scale_out: Tier


def tiers(columns: dict) -> Tiers:
    """The tiers of each configuration of a table (arrays by column name): the one place the performance
    model learns the topology."""
    gpus = np.asarray(columns["gpus"])
    domain = np.asarray(columns["scale_up_gpus"])
    fabric = np.asarray(columns["fabric"]).astype(str, copy=False)
    scale_up = Tier(
        "scale-up",
        domain,
        np.asarray(columns["scale_up_gb_per_s"], dtype=float) * 1e9,
        np.full(domain.shape, A.NCCL_INTRA_STEP_US.value),
    )
    scale_out = Tier(
        "scale-out",
        gpus // domain,
        np.asarray(columns["scale_out_gbps"], dtype=float) * 1e9 / 8,
        _per_value(fabric, net_step_latency_us),
    )
    return Tiers(scale_up, scale_out)


def net_step_latency_us(fabric: str) -> float:
    """NCCL's latency of one scale-out ring step on this fabric (0 for an unknown one: no network)."""
    ratio = A.FABRIC_LATENCY_RATIO.get(fabric)
    return A.NCCL_NET_STEP_US_BASE.value * ratio.value if ratio else 0.0


def ring_factor(gpus, domains, hierarchical=False):
    """Share of each collective's bytes that crosses a domain's NICs: (n-1)/n for NCCL's flat ring over n
    GPUs; (N-1)/N for a hierarchical (intra-domain first) algorithm, the lower bound. 0 within one domain."""
    gpus, domains = np.asarray(gpus, float), np.asarray(domains, float)
    flat = (gpus - 1) / gpus
    hier = (domains - 1) / np.maximum(domains, 1)
    return np.where(domains <= 1, 0.0, np.where(hierarchical, hier, flat))


def ring_latency_s(gpus, domains, net_step_us, passes=1):
    """NCCL ring/Simple latency of one collective (the only latency formula in planner): a base plus, per
    pass over the ring, (n-N) scale-up steps and (N-1) scale-out steps. All-gather and reduce-scatter make
    one pass; all-reduce (reduce-scatter then all-gather) two. One GPU runs no collectives."""
    gpus, domains = np.asarray(gpus, float), np.asarray(domains, float)
    steps_us = A.NCCL_INTRA_STEP_US.value * (gpus - domains) + net_step_us * (domains - 1)
    us = A.NCCL_BASE_LAT_US.value + passes * steps_us
    return np.where(gpus > 1, us * 1e-6, 0.0)


def transfer_s(bytes_, bytes_per_s):
    """Seconds to move `bytes_` at `bytes_per_s` (the only bandwidth-time formula): 0 where nothing moves;
    an unknown rate (NaN) counts as never binding (0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        seconds = np.asarray(bytes_, float) / np.asarray(bytes_per_s, float)
    return np.where(np.asarray(bytes_, float) > 0, np.nan_to_num(seconds, nan=0.0, posinf=np.inf), 0.0)


def _per_value(keys: np.ndarray, lookup) -> np.ndarray:
    """lookup(key) once per distinct key (fabrics), spread over the entries."""
    unique, codes = np.unique(keys, return_inverse=True)
    return np.array([lookup(str(k)) for k in unique], dtype=float)[codes.reshape(keys.shape)]
