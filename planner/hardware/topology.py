"""A system's topology as data: what one unit of a server or cloud row is made of, as the plan and the
performance model need it (docs/architecture.md, "Topology as data").

  node          the unit bought or rented: a server (HGX/DGX: 8 GPUs), or a whole rack-scale system
                (GB200/GB300 NVL72: 72 GPUs); a plan counts nodes, prices them and cables their NICs
  scale-up      GPUs whose collectives never reach the NICs (NVLink/NVSwitch, xGMI): 8 on HGX, 72 on NVL72;
  domain        a node holds whole domains
  host          one OS with its own CPUs, PCIe, DRAM and NICs: a server is one, an NVL72 has 18 trays
  rack          a server is mounted in the layout's racks; a rack-scale system is its own rack(s)

The performance model reads the scale-up and scale-out tiers (planner.model.network.tiers) from the columns
`columns()` gives; an 8-GPU HGX server is the case where node = domain = host, so its figures are those of
the one-tier-per-level model it always was.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Topology:
    gpus_per_node: int
    scale_up_gpus: int
    scale_up_gb_per_s: float  # per GPU per direction; NaN: unknown (never binding)
    hosts: int = 1
    racks: int = 0  # 0: mounted in the layout's racks; N: a rack-scale system of N whole racks

    @classmethod
    def of(cls, row, scale_up_gb_per_s: float | None = None) -> Topology:
        """A server row's (planner.catalog.rows.ServerRow) or a cloud row's: a cloud row's scale-up bandwidth
        is given by the caller when its row has none (a catalog server's of the same shape)."""
        per_gpu = getattr(row, "scale_up_gb_per_s", None) or scale_up_gb_per_s
        gpus = getattr(row, "gpus_per_node", None) or row.gpus
        racks = getattr(row, "racks", 0)
        return cls(gpus, row.scale_up_domain, np.nan if per_gpu is None else per_gpu, row.hosts, racks)

    @property
    def gpus_per_host(self) -> int:
        return self.gpus_per_node // self.hosts

    @property
    def domains_per_node(self) -> int:
        return self.gpus_per_node // self.scale_up_gpus

    def columns(self) -> dict:
        """The topology columns of the performance model's table, less the scale-out bandwidth, which depends
        on the NICs (domain_gbps)."""
        return {
            "gpus_per_node": self.gpus_per_node,
            "scale_up_gpus": self.scale_up_gpus,
            "scale_up_gb_per_s": self.scale_up_gb_per_s,
            "gpus_per_host": self.gpus_per_host,
        }


def domain_gbps(node_gbps, gpus_per_node, scale_up_gpus):
    """Scale-out Gbps of one scale-up domain from a node's: a node of whole domains shares its NICs among them
    (an HGX server is one domain: all of them); a domain of whole nodes (an NVL72 described as 4-GPU trays)
    has all of theirs. The ratio is a whole number either way, so a node that is one domain keeps its figure
    exactly."""
    node_gbps = np.asarray(node_gbps, dtype=float)
    per_node, domain = np.asarray(gpus_per_node, dtype=np.int64), np.asarray(scale_up_gpus, dtype=np.int64)
    shared = node_gbps / np.maximum(per_node // np.maximum(domain, 1), 1)
    joined = node_gbps * np.maximum(domain // np.maximum(per_node, 1), 1)
    return np.where(domain <= per_node, shared, joined)


def node_gbps(domain_gbps_, gpus_per_node, scale_up_gpus):
    """The inverse of domain_gbps: a node's scale-out Gbps from its domain's."""
    domain_gbps_ = np.asarray(domain_gbps_, dtype=float)
    per_node, domain = np.asarray(gpus_per_node, dtype=np.int64), np.asarray(scale_up_gpus, dtype=np.int64)
    shared = domain_gbps_ * np.maximum(per_node // np.maximum(domain, 1), 1)
    joined = domain_gbps_ / np.maximum(domain // np.maximum(per_node, 1), 1)
    return np.where(domain <= per_node, shared, joined)
