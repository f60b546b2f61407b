"""PCIe throughput per generation: what a NIC, GPU or drive can move through its slot (one home for the
formulas; the raw per-generation x16 rates are constants in planner.assumptions.model).

A NIC's *usable* rate is the lesser of its line rate and its slot's effective PCIe rate:

    effective = raw x16 rate (GT/s x 16 lanes x line encoding) x lanes/16 x MPS / (MPS + TLP overhead)

with the link running at the lower generation and width of card and slot. The TLP term follows Intel AN 855
("for a 256-byte maximum payload size ... the maximum possible throughput is 256/(256+20)"), taken with a
6-dword (24 B) header for 64-bit addressing: 256/280 = 0.914. It is an upper bound: DLLPs, read requests and
descriptor traffic cost more (not quantified; Neugebauer et al., SIGCOMM 2018). Per x16 slot:

    Gen3  8 GT/s, 128b/130b:  126.0 Gbps raw, ~115 usable     (a 100G EDR NIC: 100)
    Gen4 16 GT/s, 128b/130b:  252.1 Gbps raw, ~230 usable     (a 2x200G card: ~230)
    Gen5 32 GT/s, 128b/130b:  504.1 Gbps raw, ~461 usable     (a 400G ConnectX-7: 400; 2x400G: ~461)
    Gen6 64 GT/s, FLIT 242/256: 968 Gbps raw, ~885 usable     (FLIT-mode TLP overhead not found; assumed as Gen5)

Sources: PCI-SIG base specifications (rates, encodings); Intel AN 708 "Understanding PCI Express
Throughput" and AN 855 (TLP overhead); derivation in research/fabric FINDINGS section 5. NVIDIA: ConnectX-8
needs Gen6 x16 (or 2x Gen5 x16 Socket Direct) for 800G line rate (DOCA 2.9.0 CX8 release notes).
"""

from __future__ import annotations

import numpy as np

from planner.assumptions import hardware as H
from planner.assumptions import model as A

_GENERATIONS = sorted(A.PCIE_X16_GBPS)
_X16_GBPS = np.array([A.PCIE_X16_GBPS[g].value for g in _GENERATIONS])
# payload share of each transaction-layer packet (planner.assumptions.hardware: 256 B payload, 24 B overhead)
TLP_EFFICIENCY = H.PCIE_MAX_PAYLOAD_BYTES.value / (H.PCIE_MAX_PAYLOAD_BYTES.value + H.PCIE_TLP_OVERHEAD_BYTES.value)


def x16_gbps(gen):
    """Raw Gbit/s per direction of an x16 slot of this generation (scalar or array). Generations outside
    the table take the nearest known one (PCIe 1-2 as 3, 7 as 6)."""
    position = np.clip(np.asarray(gen, dtype=np.int64), _GENERATIONS[0], _GENERATIONS[-1]) - _GENERATIONS[0]
    values = _X16_GBPS[position]
    return float(values) if np.ndim(values) == 0 else values


def host_link_gb_per_s(server) -> float:
    """A server's GPU-to-host bandwidth per GPU per direction, GB/s raw: its NVLink-C2C figure, or its GPU's
    PCIe lanes."""
    return server.host_link_gb_per_s or server.pcie_lanes_per_gpu * lane_gb_per_s(server.pcie_gen)


def lane_gb_per_s(gen):
    """GB/s per lane per direction: the x16 rate / 16 lanes / 8 bits (PCIe 4.0: 31.5 GB/s per x16)."""
    return x16_gbps(gen) / 16 / 8


def effective_gbps(gen, lanes=16):
    """Usable Gbit/s per direction of a link of this generation and width: raw rate after line encoding,
    scaled to the lanes, times the TLP efficiency (vectorised)."""
    return x16_gbps(gen) * np.asarray(lanes) / 16 * TLP_EFFICIENCY


def nic_usable_gbps(nic_gbps, gen, lanes=16):
    """A NIC's usable rate: the lesser of its line rate and the effective rate of its PCIe link (vectorised)."""
    return np.minimum(nic_gbps, effective_gbps(gen, lanes))


def link_gen_lanes(card_gen, card_lanes, slot_gen, slot_lanes):
    """A card and a slot train to the lower generation and the narrower width of the two (None: unknown,
    the other side decides)."""
    gen = min(g for g in (card_gen, slot_gen) if g) if (card_gen or slot_gen) else 3
    lanes = min(n for n in (card_lanes, slot_lanes) if n) if (card_lanes or slot_lanes) else 16
    return gen, lanes
