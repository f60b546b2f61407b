"""PCIe throughput per generation: what a NIC, GPU or drive can move through its slot (one home for the
formulas; the per-generation rates are constants in planner.assumptions)."""

from __future__ import annotations

import numpy as np

from planner import assumptions as A

_GENERATIONS = sorted(A.PCIE_X16_GBPS)
_X16_GBPS = np.array([A.PCIE_X16_GBPS[g].value for g in _GENERATIONS])


def x16_gbps(gen):
    """Raw Gbit/s per direction of an x16 slot of this generation (scalar or array). Generations outside
    the table take the nearest known one (PCIe 1-2 as 3, 7 as 6)."""
    position = np.clip(np.asarray(gen, dtype=np.int64), _GENERATIONS[0], _GENERATIONS[-1]) - _GENERATIONS[0]
    values = _X16_GBPS[position]
    return float(values) if np.ndim(values) == 0 else values


def lane_gb_per_s(gen):
    """GB/s per lane per direction: the x16 rate / 16 lanes / 8 bits (PCIe 4.0: 31.5 GB/s per x16)."""
    return x16_gbps(gen) / 16 / 8


def nic_usable_gbps(nic_gbps, gen):
    """A NIC's usable rate in an x16 slot of this generation: the lesser of its line rate and the slot's."""
    return np.minimum(nic_gbps, x16_gbps(gen))
