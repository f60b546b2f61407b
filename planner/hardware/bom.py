"""The bill of materials of a candidate at N nodes (docs/plan.md section 6): one line per orderable part and
section, with its catalog file:row; cables and fibres split by the orderable lengths their runs need (from
planner/hardware/layout.py at this N); the links as records planner/catalog/connectors.py can validate; and what is not
priced. Quantities are sizing.quantities at N, so the lines sum to the candidate's capex.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import Counter

from planner.assumptions import facility as F
from planner.assumptions import hardware as H
from planner.catalog import dates
from planner.catalog.load import Catalog
from planner.hardware import layout, leadtime
from planner.hardware.designs import note_columns
from planner.hardware.sizing import PRICED, SPARES
from planner.results import BomLine, DatedPrice, Delivery, LinkLine, PriceAge

SECTIONS = {
    "servers": "servers",
    "compute": "compute fabric",
    "storage": "storage network",
    "in-band": "in-band management",
    "out-of-band": "out-of-band management",
    "subnet manager": "subnet manager",
    "racks": "racks and power",
    "cooling": "cooling",
    "storage system": "storage system",
    "management": "management servers",
    "spares": "spares",
    "installation": "installation",
}
# priced quantity -> (section, segment whose runs its cut-to-length parts follow)
UNITS = {
    "endpoint": ("compute", "node"),
    "cage": ("compute", "node"),
    "uplink": ("compute", "uplink"),
    "storage_port": ("storage", "row"),
    "storage_cage": ("storage", "row"),
    "storage_uplink": ("storage", "storage uplink"),
    "inband_port": ("in-band", "row"),
    "inband_switch": ("in-band", None),
    "oob_switch": ("out-of-band", None),
    "ufm": ("subnet manager", None),
    "compute_rack": ("racks", None),
    "network_rack": ("racks", None),
    "cdu": ("cooling", None),
    "storage_block": ("storage system", None),
    "mgmt_server": ("management", None),
}
NOTE_COLUMNS = note_columns()
INFRA_CATEGORIES = {"rack": "racks", "pdu": "pdus", "subnet-manager": "appliances", "cdu": "cdus"}
INFRA_CATEGORIES |= {"storage": "storage", "management-server": "management"}
ALWAYS_EXCLUDED = (
    "the storage system's own fabric ports and their cables (its blocks are priced; its switch ports are not)",
    "uplinks from the in-band and out-of-band switches to the data-centre network",
    "software licences (UFM Enterprise per-node licences, NVIDIA AI Enterprise at about $4,500 per GPU-year, "
    "Base Command Manager / Mission Control)",
    "support contracts (enter quotes on the workbook's Quote sheet)",
    "facility: floor space, cooling, power distribution upstream of the rack PDUs; shipping and duties",
)


def quantity_of(q: dict, prefix: str) -> int:
    """The quantity a coefficient prefix multiplies (endpoint: NIC ports)."""
    if prefix == "endpoint":
        return int(q["endpoints"])
    name = next(n for n, p in PRICED.items() if p == prefix)
    return int(q[name])


class _Lines:
    """Accumulates BOM quantities per (section, catalog kind, key, orderable part, length, label)."""

    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self.counts: Counter = Counter()
        self.order: list = []

    def add(self, section, kind, key, qty, part=None, length=None, label="", included_in=None):
        entry = (section, kind, key, part or key, length, label, included_in)
        if entry not in self.counts:
            self.order.append(entry)
        self.counts[entry] += qty

    def lines(self) -> list[BomLine]:
        """In section order, then by kind (servers, NICs, switches, optics, infrastructure), then as added."""
        out = []
        sections, kinds = list(SECTIONS), ["servers", "nics", "switches", "optics", "infra"]
        order = sorted(self.order, key=lambda e: (sections.index(e[0]), kinds.index(e[1])))
        for entry in order:
            qty = self.counts[entry]
            if qty <= 0:
                continue
            if abs(qty - round(qty)) > 1e-6:
                raise ValueError(
                    f"{entry[2]}: a fractional quantity {qty:g} in the bill of materials; report this as a bug"
                )
            out.append(_line(self.catalog, *entry, int(round(qty))))
        return out


def _line(catalog, section, kind, key, part, length, label, included_in, quantity) -> BomLine:
    item = catalog.rows[kind][(key.lower(),)]
    unit = 0.0 if included_in else item.price_usd
    category = {
        "optics": "transceivers" if getattr(item, "kind", "") == "transceiver" else "cables",
        "infra": INFRA_CATEGORIES.get(getattr(item, "kind", ""), "infra"),
    }.get(kind, kind)
    description = item.name + (f" ({label})" if label else "") + (f", {length:g} m" if length else "")
    description += f" (included in the {included_in} price)" if included_in else ""
    weeks, basis = leadtime.lead_weeks(catalog, kind, item)
    return BomLine(
        category=category,
        sku=part,
        description=description,
        vendor=getattr(item, "vendor", "") or "",
        quantity=quantity,
        unit_usd=unit,
        extended_usd=unit * quantity,
        unit_w=item.power_w,
        source=catalog.cited(item),
        confidence=item.confidence,
        price_date=item.date,
        section=SECTIONS[section],
        catalog_sku=key if part != key else "",
        length_m=length,
        note=f"included in the {included_in} price" if included_in else "",
        lead_weeks=None if included_in else weeks,
        lead_basis="" if included_in else basis,
    )


def price_age(lines: list[BomLine], as_of: dt.date) -> tuple[list[BomLine], PriceAge]:
    """The lines with their stale flags, and how current the plan's prices are: its oldest decisive price (a
    line of at least DECISIVE_PRICE_SHARE of capex) and every priced line older than STALE_PRICE_MONTHS."""
    capex = sum(line.extended_usd for line in lines)
    limit, share = int(H.STALE_PRICE_MONTHS.value), H.DECISIVE_PRICE_SHARE.value

    def dated(line: BomLine) -> DatedPrice:
        return DatedPrice(
            sku=line.sku, price_date=line.price_date, months_old=dates.months_old(line.price_date, as_of),
            extended_usd=line.extended_usd, share_of_capex=line.extended_usd / capex if capex else 0.0,
            confidence=line.confidence, source=line.source,
        )  # fmt: skip

    priced = [line for line in lines if line.extended_usd > 0 and line.price_date]
    flagged = [line.model_copy(update={"stale": line in priced and dates.is_stale(line.price_date, as_of, limit)})
               for line in lines]  # fmt: skip
    decisive = [dated(line) for line in priced if capex and line.extended_usd >= share * capex]
    oldest = min(decisive, key=lambda d: (dates.period_start(d.price_date), -d.extended_usd), default=None)
    by_part: dict[tuple[str, str], BomLine] = {}  # one entry per part and catalog row, over its sections
    for line in (line for line in flagged if line.stale):
        key = (line.sku, line.source)
        kept = by_part.get(key)
        by_part[key] = (
            line if kept is None else kept.model_copy(update={"extended_usd": kept.extended_usd + line.extended_usd})
        )
    stale = sorted((dated(line) for line in by_part.values()), key=lambda d: -d.extended_usd)
    age = PriceAge(
        as_of=as_of.isoformat(), decisive_share=share, stale_months=limit, oldest_decisive=oldest, stale=stale,
        stale_share_of_capex=sum(d.extended_usd for d in stale) / capex if capex else 0.0,
    )  # fmt: skip
    return flagged, age


def delivery(lines: list[BomLine], as_of: dt.date, days: float | None) -> Delivery | None:
    """The last part to arrive: the longest lead time of the lines bought (a part included in another's price
    comes with it), the dearest of equals; and when `days` counted from its arrival end."""
    bought = [line for line in lines if line.lead_weeks is not None and line.quantity > 0]
    if not bought:
        return None
    last = max(bought, key=lambda line: (line.lead_weeks, line.extended_usd))
    arrives = as_of + dt.timedelta(weeks=last.lead_weeks)
    ends = (arrives + dt.timedelta(days=days)).isoformat() if days else None
    return Delivery(
        as_of=as_of.isoformat(), lead_weeks=last.lead_weeks, last_sku=last.sku, basis=last.lead_basis,
        delivered_by=arrives.isoformat(), deadline_ends=ends,
    )  # fmt: skip


# ---------------------------------------------------------------- runs at N


def node_runs(row: dict, nodes: int, geometry: layout.Geometry, placement: str | None = None) -> Counter:
    """Run length (m, to 0.1) -> NIC-port share, over the nodes as they fill racks and rows."""
    placement = placement or row["placement"] or "middle-of-row"
    npr, units, rpr = int(row["nodes_per_rack"]), int(row["server_units"]) or None, geometry.racks_per_row
    runs: Counter = Counter()
    for rack in range(-(-nodes // max(npr, 1))):
        in_rack = min(npr, nodes - rack * npr)
        away = layout.racks_away(rack % rpr, rpr, placement)
        for slot in range(in_rack):
            runs[round(layout.node_run_m(slot, away, placement, units, geometry), 1)] += 1
    return runs


def uplink_runs(rows: int, leaf_links: int, core_links: int, geometry: layout.Geometry) -> Counter:
    """Run length -> share of switch-to-switch links: leaf uplinks spread evenly over the rows, each from its
    row's network rack to the spine room (layout.row_uplink_runs_m); spine-to-core links within the room."""
    rows = max(rows, 1)
    runs: Counter = Counter()
    for run_m in layout.row_uplink_runs_m(rows, geometry.racks_per_row, geometry):
        runs[round(run_m, 1)] += leaf_links / rows
    if core_links > 0:
        runs[round(layout.spine_room_run_m(geometry.racks_per_row, geometry), 1)] += core_links
    return runs


def _rows(q: dict, geometry: layout.Geometry) -> int:
    return max(int(q["rows"]), layout.rows_of(int(q["compute_racks"]), geometry.racks_per_row), 1)


def compute_uplink_runs(row: dict, q: dict, geometry: layout.Geometry) -> Counter:
    leaf_links = int(q["leaf_uplinks"]) if int(row["tier"]) > 1 else 0
    return uplink_runs(_rows(q, geometry), leaf_links, int(q["uplinks"]) - leaf_links, geometry)


def split(quantity: float, shares: Counter) -> dict[float, int]:
    """Split an integer quantity over lengths in proportion to shares (largest remainder; sums exactly)."""
    total = sum(shares.values())
    if not total or not quantity:
        return {}
    exact = {length: quantity * share / total for length, share in shares.items()}
    floors = {length: math.floor(x + 1e-9) for length, x in exact.items()}
    left = int(round(quantity)) - sum(floors.values())
    for length in sorted(exact, key=lambda x: (floors[x] - exact[x], -x))[:left]:
        floors[length] += 1
    return {length: n for length, n in floors.items() if n}


def _runs(segment: str | None, row: dict, q: dict, nodes: int, geometry: layout.Geometry, override) -> Counter:
    if segment == "node":
        return Counter({override[0]: 1}) if override[0] else node_runs(row, nodes, geometry)
    if segment == "row":
        return node_runs(row, nodes, geometry, "middle-of-row")
    if segment == "uplink":
        return Counter({override[1]: 1}) if override[1] else compute_uplink_runs(row, q, geometry)
    if segment == "storage uplink":
        return (
            Counter({override[1]: 1})
            if override[1]
            else uplink_runs(_rows(q, geometry), int(q["storage_uplinks"]), 0, geometry)
        )
    return Counter()


# ---------------------------------------------------------------- the bill


def bill_of_materials(
    catalog: Catalog, row: dict, nodes: int, q: dict, geometry: layout.Geometry, override=(None, None)
):
    """One line per orderable part and section; unit prices and power straight from the catalog rows."""
    lines = _Lines(catalog)
    server = catalog.server(row["server"])
    lines.add("servers", "servers", server.name, nodes)
    _nic_lines(lines, catalog, row, server, nodes)
    _switch_lines(lines, row, q)
    segments = {segment for _, segment in UNITS.values()}
    runs_of = {segment: _runs(segment, row, q, nodes, geometry, override) for segment in segments}
    for prefix, (section, segment) in UNITS.items():
        count = quantity_of(q, prefix)
        if not count:
            continue
        runs = runs_of[segment]
        for kind, key, per_unit in row[f"{prefix}_skus"]:
            if kind == "switches" and prefix in ("switch", "storage_switch"):
                continue  # by tier, below
            _add_part(lines, catalog, section, kind, key, per_unit * count, runs, _label(prefix, kind, catalog, key))
    _spare_lines(lines, catalog, row, server, q, runs_of)
    return lines.lines() + _installation_lines(row, q)


def _installation_lines(row: dict, q: dict) -> list[BomLine]:
    """Installation and cabling labour: one line of the plan's technician-hours at the sourced rate (no
    catalog row: planner.assumptions.facility INSTALL_*)."""
    hours, rate = float(q.get("install_hours", 0.0)), float(row.get("install_usd", 0.0))
    if hours <= 0 or rate <= 0:
        return []
    h = F.INSTALL_HOURS
    return [
        BomLine(
            category="labour",
            sku="INSTALLATION",
            description=(
                f"Installation and cabling labour: {hours:,.0f} technician-hours at ${rate:,.0f}/h "
                f"({h['server'].value:g} h per server or {h['rack_scale'].value:g} per rack-scale system, "
                f"{h['cable'].value:g} h per link, {h['box'].value:g} h per switch or appliance, "
                f"+{F.INSTALL_OVERHEAD.value:.0%} testing and project management)"
            ),
            vendor="system integrator",
            quantity=1,
            unit_usd=hours * rate,
            extended_usd=hours * rate,
            source="planner/assumptions/facility.py (install.*)",
            confidence="estimate",
            price_date="2026-12",
            section=SECTIONS["installation"],
            note="a sourced default, not a quote",
        )
    ]


def _spare_lines(lines: _Lines, catalog: Catalog, row: dict, server, q: dict, runs_of: dict) -> None:
    """The spares section (sizing.spares): spare nodes as a server with the NICs its node price adds; a
    spare link as the parts of one link of its kind, cut-to-length parts at the kind's longest run; spare
    switches of each model."""
    spare_nodes = int(q.get("spare_nodes", 0))
    if spare_nodes:
        lines.add("spares", "servers", server.name, spare_nodes, label="spare node")
        if isinstance(row["nic"], str):
            bought, _ = _nics_bought_included(catalog, row, server)
            if bought > 0:
                lines.add("spares", "nics", row["nic"], spare_nodes * bought, label="spare node")
        if int(row.get("storage_bought") or 0):
            lines.add(
                "spares", "nics", server.storage_nic, spare_nodes * int(row["storage_bought"]), label="spare node"
            )
    for name, prefix in SPARES.items():
        count = int(q.get(name, 0))
        if name == "spare_nodes" or not count:
            continue
        runs = runs_of.get(UNITS.get(prefix, (None, None))[1], Counter())
        longest = Counter({max(runs): 1}) if runs else Counter()
        for kind, key, per_unit in row[f"{prefix}_skus"]:
            label = " ".join(filter(None, ("spare", _label(prefix, kind, catalog, key))))
            _add_part(lines, catalog, "spares", kind, key, per_unit * count, longest, label)


def _label(prefix: str, kind: str, catalog: Catalog, key: str) -> str:
    if kind == "infra" and prefix in ("compute_rack", "network_rack"):
        return ""
    return {"inband_switch": "in-band", "oob_switch": "out-of-band"}.get(prefix, "")


def _add_part(lines: _Lines, catalog: Catalog, section, kind, key, quantity, runs: Counter, label: str) -> None:
    row = catalog.rows[kind][(key.lower(),)]
    if kind != "optics" or not getattr(row, "lengths", None) or not runs:
        lines.add(section, kind, key, quantity, label=label)
        return
    for length, count in split(quantity, runs).items():
        metres, part = row.length_for(length) or (row.lengths[-1][0], row.lengths[-1][1])
        lines.add(section, kind, key, count, part=part, length=metres, label=label)


def _nics_bought_included(catalog: Catalog, row: dict, server) -> tuple[int, int]:
    """A node's compute NICs: (bought beside the server, included in its price)."""
    included = min(server.included_count(catalog.nic(row["nic"])), int(row["nics_per_node"]))
    return int(row["nics_per_node"]) - included, included


def _nic_lines(lines: _Lines, catalog: Catalog, row: dict, server, nodes: int) -> None:
    if isinstance(row["nic"], str):
        nic = catalog.nic(row["nic"])
        bought, included = _nics_bought_included(catalog, row, server)
        cabled = f"{int(row['nic_ports'])} of {nic.ports} ports cabled" if int(row["nic_ports"]) < nic.ports else ""
        if bought > 0:
            lines.add("servers", "nics", nic.sku, nodes * bought, label=cabled)
        if included:
            lines.add("servers", "nics", nic.sku, nodes * included, label=cabled, included_in=server.name)
    if not server.storage_nic or not server.storage_nics or int(row["tier"]) == 0:
        return
    if not (row["storage_ports_per_node"] or row["inband_ports_per_node"]):
        return
    section = "storage" if row["storage_ports_per_node"] else "in-band"
    included = server.name if server.storage_nics_included else None
    lines.add(
        section,
        "nics",
        server.storage_nic,
        nodes * server.storage_nics_per_node,
        label="storage and in-band",
        included_in=included,
    )


def _switch_lines(lines: _Lines, row: dict, q: dict) -> None:
    if isinstance(row["switch"], str):
        tiers = {"leaf": q["leaf"], "spine": q["spine"], "core": q["core"]}
        for tier, count in tiers.items():
            if count:
                label = "one switch" if int(row["tier"]) == 1 else tier
                lines.add("compute", "switches", row["switch"], count, label=label)
    if isinstance(row.get("storage_switch"), str):
        for tier, count in (("storage leaf", q["storage_leaves"]), ("storage spine", q["storage_spines"])):
            if count:
                lines.add("storage", "switches", row["storage_switch"], count, label=tier)


# ---------------------------------------------------------------- links


def link_lines(catalog: Catalog, row: dict, nodes: int, q: dict, geometry: layout.Geometry, override=(None, None)):
    """The plan's links, one record per segment: ends, parts, and how many links at each run length."""
    out = []
    server = catalog.server(row["server"])
    storage, inband, nic, switch = row.get("storage_switch"), row.get("inband_switch"), row["nic"], row["switch"]
    sn = ("nics", server.storage_nic)  # the storage NIC: port 1 storage, port 2 in-band
    segments = [
        # section, segment, link, (a kind, a sku), b sku, links, runs they follow, full rate
        ("compute", "node-leaf", row.get("link"), ("nics", nic), switch, q["endpoints"], "node", True),
        ("compute", "switch-switch", row.get("uplink"), ("switches", switch), switch, q["uplinks"], "uplink", True),
        ("storage", "storage node-leaf", row.get("storage_link"), sn, storage, q["storage_ports"], "row", True),
        ("storage", "storage switch-switch", row.get("storage_uplink"), ("switches", storage), storage,
         q["storage_uplinks"], "storage uplink", True),
        ("in-band", "in-band node-switch", row.get("inband_link"), sn, inband, q["inband_ports"], "row", False),
    ]  # fmt: skip
    for section, segment, link, (a_kind, a_sku), b_sku, count, runs_of, full_rate in segments:
        if link is None or not count or not isinstance(a_sku, str) or not isinstance(b_sku, str):
            continue
        runs = _runs(runs_of, row, q, nodes, geometry, override)
        lengths = {f"{length:g}": n for length, n in sorted(split(count, runs).items())}
        on_server = server.name if (segment == "node-leaf" and server.nic_cage) else None
        out.append(
            LinkLine(
                section=SECTIONS[section],
                segment=segment,
                fabric=row["fabric"]
                if section == "compute"
                else ("roce" if section == "in-band" else _wire(row["fabric"])),
                a_kind=a_kind,
                a_sku=a_sku,
                a_server=on_server,
                b_sku=b_sku,
                parts=[r.sku for r in link.rows],
                medium=link.medium,
                full_rate=full_rate,
                count=int(count),
                lengths=lengths,
            )
        )
    return out


def _wire(fabric: str) -> str:
    return "ib" if fabric == "ib" else "roce"


# ---------------------------------------------------------------- not priced


def not_priced(row: dict, q: dict) -> list[str]:
    """What the plan's capex leaves out: sections the scenario or the catalog leave out, and the standing
    exclusions."""
    notes = [row[c] for c in NOTE_COLUMNS if row.get(c)]
    if int(row["tier"]) == 0:
        notes.append("a single node: storage, in-band and out-of-band networks not sized (connect it to existing ones)")
    if q.get("oob_ports"):
        notes.append(f"{int(q['oob_ports'])} Cat6 patch cords for the out-of-band ports (no sourced price)")
    if not float(row.get("install_per_node") or 0):
        notes.append("installation and cabling labour excluded by the scenario (include.installation: false)")
    if q.get("ufm") or int(row.get("reserved_nodes") or 0):
        held = " (their leaf ports are held: one node's slot)" if int(row.get("reserved_nodes") or 0) else ""
        notes.append(f"the UFM appliances' own fabric links{held}")
    if row.get("cooling", "air") != "air":
        notes.append(
            f"facility water for the {row['cooling']}-cooled {row['server']} nodes: supply and return piping to "
            "the CDUs and the heat rejection (dry coolers or towers) - a liquid-ready hall's, in the colocation rate"
        )
    if row.get("rack_scale"):
        notes.append(
            f"power to the {row['server']} racks: busbar or whips from the facility to their power shelves (the "
            "racks, their power shelves and NVLink switch trays come with the system)"
        )
    return list(dict.fromkeys(notes)) + list(ALWAYS_EXCLUDED)
