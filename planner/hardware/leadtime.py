"""Delivery lead times of the parts of a plan (planner.assumptions.hardware.LEAD_WEEKS by part family; a
catalog row's own `lead_weeks` overrides it) and the plan's delivery: the last part to arrive."""

from __future__ import annotations

from planner.assumptions import hardware as H
from planner.catalog.load import Catalog

OLDER = {"ampere", "volta", "turing"}


def family(catalog: Catalog, kind: str, item) -> str:
    """The LEAD_WEEKS family of a catalog row of `kind`."""
    if kind == "servers":
        if item.status != "available":
            return "announced"
        if item.rack_scale:  # an NVL72: its own rack
            return "rack-scale"
        arch = (catalog.gpu(item.gpu).architecture or "").lower()
        if arch.startswith("blackwell"):
            return "blackwell"
        if arch == "hopper":
            return "hopper"
        if arch == "cdna4":
            return "amd-cdna4"
        if arch == "cdna3":
            return "amd-cdna3"
        return "older-gpu" if arch in OLDER else "blackwell"  # another current GPU: as Blackwell
    if kind == "switches":
        return "ib-switch" if "ib" in item.fabrics else "ethernet-switch"
    if kind == "nics":
        return "nic"
    if kind == "optics":
        if item.kind != "transceiver":
            return "cable"
        module_gbps = (item.gbps or 0) * max(item.ports or 1, 1)
        return (
            "transceiver-1.6t" if module_gbps >= 1600 else "transceiver-800g" if module_gbps >= 800 else "transceiver"
        )
    return item.kind  # infra: rack, pdu, cdu, subnet-manager, storage, management-server


def lead_weeks(catalog: Catalog, kind: str, item) -> tuple[float, str]:
    """(weeks, what it rests on): the row's own lead time, else its family's assumption."""
    own = getattr(item, "lead_weeks", None)
    if own is not None:
        return float(own), catalog.cited(item)
    constant = H.LEAD_WEEKS[family(catalog, kind, item)]
    return constant.value, f"{constant.name}, {constant.source.split(':')[0]}"
