"""The networks beside the compute fabric, as DGX SuperPOD builds them (RA-11333-001; docs/plan.md section 2),
each a switchable section of the bill of materials (scenario `include:`):

  * storage: port 1 of each storage NIC to a separate storage fabric of the compute fabric's kind (IB or
    Ethernet), leaves at ~4:3 (the RA: "slightly oversubscribed with a ratio near 4:3"), spines when there
    is more than one leaf; the storage system itself and its switch ports are not priced;
  * in-band management: port 2 of each storage NIC to an in-band Ethernet switch (SN4600C class), one
    eighth of its ports kept for uplinks to the data centre (those uplinks are not priced);
  * out-of-band management: one 1G RJ45 port per node BMC, switch, appliance and PDU (SN2201 class);
  * subnet manager: an InfiniBand fabric of unmanaged switches needs one; a high-availability pair of UFM
    appliances per such fabric.
Each design is fixed per candidate (it does not depend on the node count), so its cost is linear in
integer quantities the MILP sizes (optimize/buy.py) and sizing.py computes in closed form.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.assumptions import hardware as H
from planner.catalog import connectors
from planner.catalog.connectors import Link
from planner.catalog.load import Catalog
from planner.catalog.rows import InfraRow, NicRow, ServerRow, SwitchRow
from planner.hardware.fabric import leaf_split


@dataclass(frozen=True)
class StorageDesign:
    nic: NicRow
    switch: SwitchRow
    link: Link  # storage NIC port to storage leaf
    uplink: Link | None  # storage leaf to storage spine
    ports_per_node: int

    @property
    def split(self) -> tuple[int, int]:
        return leaf_split(self.switch.ports, H.STORAGE_OVERSUBSCRIPTION.value, self.switch.ports_per_cage)


@dataclass(frozen=True)
class InbandDesign:
    switch: SwitchRow
    link: Link
    ports_per_node: int

    @property
    def down(self) -> int:
        return self.switch.ports - max(1, round(self.switch.ports * H.INBAND_UPLINK_SHARE.value))


def storage_nic(catalog: Catalog, server: ServerRow) -> NicRow | None:
    return catalog.nic(server.storage_nic) if server.storage_nic and server.storage_nics else None


def storage_design(
    book: connectors.LinkBook,
    catalog: Catalog,
    server: ServerRow,
    fabric: str,
    compute: SwitchRow,
    node_m: float,
    uplink_m: float,
    usd_per_w: float,
) -> StorageDesign | str:
    """The storage fabric for this server on this compute fabric (the compute switch model when it connects
    the storage ports, as SuperPOD does; else the cheapest per port), or why there is none."""
    nic = storage_nic(catalog, server)
    if nic is None:
        return f"{server.name}: no storage NIC in its catalog row, so no storage network is sized"
    wire = "ib" if fabric == "ib" else "roce"
    others = (s for s in catalog.items("switches") if s.fabric == wire and "storage" in s.uses and s.sku != compute.sku)
    options = [compute] + sorted(others, key=lambda s: (s.price_usd / s.ports, s.sku))
    end = connectors.nic_end(nic)
    for switch in (s for s in options if "storage" in s.uses):
        switch_end = connectors.switch_end(switch)
        link = connectors.cheapest(book.node_links(end, switch_end, wire, node_m), usd_per_w)
        if link is not None:
            uplink = connectors.cheapest(book.switch_links(switch_end, wire, uplink_m), usd_per_w, "uplink")
            return StorageDesign(nic, switch, link, uplink, server.storage_nics_per_node)
    return f"no {wire} storage switch in the catalog connects {nic.sku} ports at {node_m:.0f} m"


def inband_design(
    book: connectors.LinkBook, catalog: Catalog, server: ServerRow, node_m: float, usd_per_w: float
) -> InbandDesign | str:
    """In-band Ethernet on port 2 of each storage NIC (SuperPOD: bonded pair per node), at the management
    cable's rate (100GbE on a 200G port: no full-rate requirement)."""
    nic = storage_nic(catalog, server)
    if nic is None or nic.ports < 2:
        return f"{server.name}: no second storage-NIC port for in-band management, so no in-band network is sized"
    switches = sorted((s for s in catalog.items("switches") if "inband" in s.uses), key=lambda s: (s.price_usd, s.sku))
    for switch in switches:
        links = book.node_links(connectors.nic_end(nic), connectors.switch_end(switch), "roce", node_m, full_rate=False)
        link = connectors.cheapest(links, usd_per_w)
        if link is not None:
            return InbandDesign(switch, link, server.storage_nics_per_node)
    return f"no in-band switch and cable in the catalog reach {nic.sku} at {node_m:.0f} m"


def oob_switch(catalog: Catalog) -> SwitchRow | None:
    return min(
        (s for s in catalog.items("switches") if "oob" in s.uses),
        key=lambda s: (s.price_usd / s.ports, s.sku),
        default=None,
    )


def subnet_manager(catalog: Catalog) -> InfraRow | None:
    return min(
        (r for r in catalog.items("infra") if r.kind == "subnet-manager"),
        key=lambda r: (r.price_usd, r.sku),
        default=None,
    )


def needs_subnet_manager(fabric: str, switch: SwitchRow) -> bool:
    """An InfiniBand fabric needs a subnet manager; a managed switch runs one, else UFM (unknown: assume not)."""
    return fabric == "ib" and switch.fabric == "ib" and not switch.managed
