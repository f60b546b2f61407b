"""Every quantity of a configuration at N nodes, in closed form (docs/plan.md section 3): the compute fabric
(fabric.size_arrays), racks and PDUs (layout.py's rules), the storage, in-band and out-of-band networks and
the subnet managers (networks.py's designs), the coolant distribution units of liquid-cooled nodes. The
candidate table prices each row with these at its smallest feasible N; the brute force enumerates N with
them; the MILP (optimize/buy.py) states the same rules as linear constraints. Every quantity is
non-decreasing in N.

`params` maps the candidate table's columns (numbers or arrays) to values; `nodes` is a number or an array.
"""

from __future__ import annotations

import numpy as np

from planner.assumptions import facility as F
from planner.assumptions import hardware as H
from planner.base import poisson
from planner.hardware import fabric

# The priced quantities and the coefficient prefix of each (costing.configuration_cost: capex = sum of
# coef[prefix_usd] x quantity); `endpoints` and `nodes` are priced by endpoint_usd and node_usd.
PRICED = {
    "down_ports": "port",
    "cages": "cage",
    "switches": "switch",
    "uplinks": "uplink",
    "compute_racks": "compute_rack",
    "network_racks": "network_rack",
    "storage_ports": "storage_port",
    "storage_cages": "storage_cage",
    "storage_switches": "storage_switch",
    "storage_uplinks": "storage_uplink",
    "inband_ports": "inband_port",
    "inband_switches": "inband_switch",
    "oob_switches": "oob_switch",
    "ufm": "ufm",
    "cdus": "cdu",
    "storage_blocks": "storage_block",
    "mgmt_servers": "mgmt_server",
    "install_hours": "install",
}


# Spares (docs/plan.md section 6): each spare quantity and the coefficient prefix its unit is priced at (a
# spare node: a node with its NICs; a spare link: the parts of one link of that kind; a spare switch: one of
# that model). Spares sit on the shelf: priced, drawing no power, in no rack. Shares and counts are the
# scenario's `spares` section (planner.assumptions.hardware's sourced defaults).
# spare links: the quantity each spares a share of; spare switches: the quantity whose model they spare
SPARED_LINKS = {
    "spare_endpoints": "endpoints",
    "spare_cages": "cages",
    "spare_uplinks": "uplinks",
    "spare_storage_ports": "storage_ports",
    "spare_storage_cages": "storage_cages",
    "spare_storage_uplinks": "storage_uplinks",
    "spare_inband_ports": "inband_ports",
}
SPARED_MODELS = {
    "spare_switches": "switches",
    "spare_storage_switches": "storage_switches",
    "spare_inband_switches": "inband_switches",
    "spare_oob_switches": "oob_switches",
}
# each spare and the prefix of what it spares (a NIC port's link is priced as an `endpoint`)
SPARES = {"spare_nodes": "node"} | {
    name: "endpoint" if base == "endpoints" else PRICED[base] for name, base in (SPARED_LINKS | SPARED_MODELS).items()
}


def _ceil(a, b):
    return -(-np.asarray(a, dtype=np.int64) // np.maximum(np.asarray(b, dtype=np.int64), 1))


def topology(params) -> fabric.Topology:
    return fabric.Topology(
        rail=params["rail"],
        rails=params["rails"],
        rail_endpoints=params["rail_endpoints"],
        su=params["su_nodes"],
        tor=params["tor"],
        rack_leaves=params["rack_leaves"],
        rack_leaf_up=params["rack_leaf_up"],
        rail_leaf_up=params["rail_leaf_up"],
        nodes_per_rack=params["nodes_per_rack"],
        reserved_nodes=params["reserved_nodes"],
        node_endpoints=params["endpoints_per_node"],
        planes=params["planes"],
    )


def quantities(params, nodes) -> dict[str, np.ndarray]:
    """All quantities of each candidate at `nodes` nodes (see the module docstring)."""
    n = np.asarray(nodes, dtype=np.int64)
    t = np.asarray(params["tier"], dtype=np.int64)
    multi = t > 0
    size = fabric.size_arrays(
        np.asarray(params["endpoints_per_node"], dtype=np.int64) * n,
        t,
        params["switch_ports"],
        params["breakout"],
        params["oversubscription"],
        nodes=n,
        cage_endpoints=params["cage_endpoints"],
        ports_per_cage=params["ports_per_cage"],
        topology=topology(params),
    )
    q = dict(size)
    q["nodes"] = n * np.ones_like(t)
    q["endpoints"] = np.asarray(params["endpoints_per_node"], dtype=np.int64) * n
    # servers: as many racks as their packing needs; a rack-scale system: its own rack(s) per node
    q["compute_racks"] = _ceil(n, params["nodes_per_rack"]) * np.asarray(params["rack_span"], dtype=np.int64)
    q.update(_storage(params, n, multi))
    q["inband_ports"] = np.where(multi, np.asarray(params["inband_ports_per_node"], dtype=np.int64) * n, 0)
    q["inband_switches"] = _ceil(q["inband_ports"], params["inband_down"])
    q["ufm"] = np.where(multi, np.asarray(params["ufm_count"], dtype=np.int64), 0)
    q["storage_blocks"] = np.where(multi, storage_blocks(params, n), 0)
    q["mgmt_servers"] = np.where(multi, mgmt_servers(params, n), 0)
    in_rows = multi & np.asarray(params["row_network_rack"], dtype=bool)
    q["rows"] = np.where(in_rows, _ceil(q["compute_racks"], params["racks_per_row"]), 0)
    q["network_racks"] = _network_racks(params, q)
    pdus = q["compute_racks"] * np.asarray(params["pdus_compute"]) + q["network_racks"] * np.asarray(
        params["pdus_network"]
    )
    q["pdus"] = np.where(np.asarray(params["count_pdus"], dtype=bool), pdus, 0)
    oob = n + size["switches"] + q["storage_switches"] + q["inband_switches"] + q["ufm"] + q["pdus"]
    oob = oob + q["storage_blocks"] + q["mgmt_servers"]
    q["oob_ports"] = np.where(multi & (np.asarray(params["oob_ports_per_switch"]) > 0), oob, 0)
    q["oob_switches"] = _ceil(q["oob_ports"], params["oob_ports_per_switch"])
    q["cdus"] = cdus(params, n)
    q.update(spares(params, q))
    q["install_hours"] = install_hours(params, q)
    return q


# what the installation labour counts: the links plugged and the boxes mounted besides the nodes
CABLED = ("endpoints", "uplinks", "storage_ports", "storage_uplinks", "inband_ports", "oob_ports")
MOUNTED = ("switches", "storage_switches", "inband_switches", "oob_switches", "ufm", "storage_blocks", "mgmt_servers")


def install_hours(params, q) -> np.ndarray:
    """Technician-hours to install the plan: per node (a server, or a rack-scale system), per link, per
    switch or appliance, plus the overhead share (planner.assumptions.facility INSTALL_*); 0 where the
    scenario leaves installation out (install_per_node 0)."""
    per_node = np.asarray(params["install_per_node"], dtype=float)
    on = per_node > 0
    links = sum(np.asarray(q[name], dtype=float) for name in CABLED)
    boxes = sum(np.asarray(q[name], dtype=float) for name in MOUNTED)
    hours = per_node * q["nodes"] + F.INSTALL_HOURS["cable"].value * links + F.INSTALL_HOURS["box"].value * boxes
    return np.where(on, hours * (1 + F.INSTALL_OVERHEAD.value), 0.0)


def spares(params, q) -> dict[str, np.ndarray]:
    """Spare nodes: share x nodes to the nearest node; spare links: share x the links of that kind rounded up to whole
    parts (m x ceil(share x Q / m), m the links whose parts are whole); spare switches: so many of each
    model in use (a single node buys no spares)."""
    multi = np.asarray(params["tier"], dtype=np.int64) > 0
    link_share = np.asarray(params["spare_link_share"], dtype=float)
    per_model = np.asarray(params["spare_switches_per_model"], dtype=np.int64)
    out = {"spare_nodes": np.where(multi, spare_node_count(params, q["nodes"]), 0)}
    for name, base in SPARED_LINKS.items():  # in units of whole parts (designs: `<prefix>_spare_unit`)
        unit = np.maximum(np.asarray(params[f"{SPARES[name]}_spare_unit"], dtype=np.int64), 1)
        out[name] = unit * _ceil_share(link_share / unit, q[base])
    for name, base in SPARED_MODELS.items():  # a model once (designs: `<prefix>_spare_model`)
        first = np.asarray(params[f"{SPARES[name]}_spare_model"], dtype=bool)
        out[name] = np.where((np.asarray(q[base]) > 0) & first, per_model, 0)
    return out


def spare_nodes(share, nodes) -> np.ndarray:
    """Spare nodes for `nodes` at `share`, to the nearest (halves down): ceil(share x N - 1/2); a 4-node cluster
    at 2% buys none."""
    return np.maximum(_ceil_share(share, nodes, -0.5), 0)


def spare_node_count(params, nodes) -> np.ndarray:
    """The spare nodes bought: the share to the nearest, and at least the repairs' cover (repair_cover)."""
    return np.maximum(spare_nodes(params["spare_node_share"], nodes), repair_cover(params, nodes))


def node_failures_per_day(rates, gpus, hosts, nics) -> np.ndarray:
    """Failures a day that take one node out until repaired: its GPUs, hosts and NICs at the scenario's
    reliability.failure_rates (planner.model.reliability.NODE_KINDS); arrays or scalars."""
    return np.asarray(gpus, dtype=float) * rates.gpu + np.asarray(hosts) * rates.host + np.asarray(nics) * rates.nic


def repair_params(spares, reliability, node_failures, rack_scale) -> dict:
    """What spare_node_count reads, from the scenario's spares and reliability sections, nodes that fail
    `node_failures` times a day and whether each is a rack-scale system (its repair a tray swap); a given
    per-node rate says nothing of what fails, so the share alone."""
    given = reliability.interruptions_per_1000_node_days is not None
    return {
        "spare_node_share": spares.node_share,
        "spare_repair_cover": 0.0 if given else spares.repair_cover,
        "node_failures_per_day": node_failures,
        "repair_hours": repair_hours(reliability, rack_scale),
    }


def repair_hours(reliability, rack_scale) -> np.ndarray:
    """Hours a failed node is out (reliability: the scenario's section): a server's repair, or a rack-scale
    system's tray swap."""
    return np.where(np.asarray(rack_scale, dtype=bool), reliability.repair_hours_rack_scale, reliability.repair_hours)


def repair_cover(params, nodes) -> np.ndarray:
    """The fewest spare nodes that cover the nodes under repair at once at the scenario's quantile: Poisson with
    mean nodes x node failures a day x repair days (an M/G/infinity queue); per row of `params`."""
    mean = np.asarray(nodes) * np.asarray(params["node_failures_per_day"], dtype=float)
    mean = mean * np.asarray(params["repair_hours"], dtype=float) / 24.0
    cover = np.asarray(params["spare_repair_cover"], dtype=float)
    out = np.zeros(np.broadcast(mean, cover).shape, dtype=np.int64)
    mean, cover = np.broadcast_arrays(mean, cover)
    for q in np.unique(cover):  # one quantile per scenario, so one pass
        at = cover == q
        out[at] = poisson.quantile(mean[at], float(q))
    return out


def _ceil_share(share, quantity, offset: float = 0.0) -> np.ndarray:
    """ceil(share x quantity + offset), exact for shares given in hundredths (0.02 x 100 is 2, not 3)."""
    return _ceil_exact(np.asarray(share, dtype=float) * np.asarray(quantity) + offset)


def _ceil_exact(x) -> np.ndarray:
    """ceil of a quotient or product of decimals that float arithmetic leaves a hair above a whole number."""
    return np.ceil(np.round(np.asarray(x, dtype=float), 9) - 1e-9).astype(np.int64)


def storage_blocks(params, n) -> np.ndarray:
    """File-system blocks for the read rate (per GPU), the checkpoint write rate (every node at once) and the
    capacity, the largest of the three: max(ceil(r G / R), ceil(w N / W), ceil(T / C))."""
    gpus = n * np.asarray(params["gpus_per_node"], dtype=np.int64)
    read = np.asarray(params["storage_read_per_gpu"], dtype=float) * gpus / np.asarray(params["storage_block_read"])
    write = np.asarray(params["storage_write_per_node"], dtype=float) * n / np.asarray(params["storage_block_write"])
    room = np.asarray(params["storage_tb"], dtype=float) / np.asarray(params["storage_block_tb"], dtype=float)
    return _ceil_exact(np.maximum(np.maximum(read, write), room))


def mgmt_servers(params, n) -> np.ndarray:
    """Head, control-plane and login servers: the base set up to a step of GPUs, then more login nodes per
    step begun (planner.assumptions.hardware.MANAGEMENT_SERVERS*); none where the catalog or scenario has
    none."""
    gpus = n * np.asarray(params["gpus_per_node"], dtype=np.int64)
    base = np.asarray(params["mgmt_servers_base"], dtype=np.int64)
    step, more = int(H.MANAGEMENT_GPUS_PER_STEP.value), int(H.MANAGEMENT_SERVERS_PER_STEP.value)
    return np.where(base > 0, base + more * -(-np.maximum(gpus - step, 0) // step), 0)


def cdus(params, n) -> np.ndarray:
    """Coolant distribution units for the nodes' liquid heat (nameplate x liquid share), N+1: enough to carry
    it, plus the spares (planner.assumptions.facility.CDU_SPARES); none without liquid cooling."""
    liquid_w = np.asarray(params["liquid_w"], dtype=float) * n
    capacity_w = np.asarray(params["cdu_kw"], dtype=float) * 1e3
    cooled = (liquid_w > 0) & (capacity_w > 0)
    needed = np.ceil(liquid_w / np.where(cooled, capacity_w, 1.0) - 1e-9).astype(np.int64)
    return np.where(cooled, needed + int(F.CDU_SPARES.value), 0)


def _storage(params, n, multi) -> dict[str, np.ndarray]:
    """Storage leaves of d_s down-ports each; spines only when there is more than one leaf."""
    ports = np.where(multi, np.asarray(params["storage_ports_per_node"], dtype=np.int64) * n, 0)
    leaves = _ceil(ports, params["storage_down"])
    spread = leaves >= 2
    up = np.asarray(params["storage_up"], dtype=np.int64)
    spines = np.where(spread, _ceil(leaves * up, params["storage_switch_ports"]), 0)
    return {
        "storage_ports": ports,
        "storage_cages": _ceil(ports, params["storage_cage_endpoints"]),
        "storage_leaves": leaves,
        "storage_spines": spines,
        "storage_switches": leaves + spines,
        "storage_uplinks": np.where(spread, leaves * up, 0),
    }


def network_units_and_watts(params, q) -> tuple[np.ndarray, np.ndarray]:
    """Rack units and nameplate watts of the gear in network racks: compute leaves unless they sit on top of
    the compute racks, spines and cores, storage and in-band switches, subnet managers, the storage system and
    the management servers. (Out-of-band switches
    are 1U and go in the compute racks' reserved units.)"""
    in_rows = np.where(np.asarray(params["tor"], dtype=bool), q["switches"] - q["leaf"], q["switches"])
    parts = [
        (in_rows, params["switch_units"], params["switch_w"]),
        (q["storage_switches"], params["storage_switch_units"], params["storage_switch_w"]),
        (q["inband_switches"], params["inband_switch_units"], params["inband_switch_w"]),
        (q["ufm"], params["ufm_units"], params["ufm_w"]),
        (q["storage_blocks"], params["storage_block_units"], params["storage_block_w"]),
        (q["mgmt_servers"], params["mgmt_server_units"], params["mgmt_server_w"]),
    ]
    units = sum(np.asarray(count) * np.asarray(u) for count, u, _ in parts)
    watts = sum(np.asarray(count) * np.asarray(w) for count, _, w in parts)
    return units, watts


def _network_racks(params, q) -> np.ndarray:
    """One network rack per row, and enough for the network gear's space and power."""
    units, watts = network_units_and_watts(params, q)
    by_space = _ceil(units, params["usable_units"])
    by_power = np.ceil(np.asarray(watts, dtype=float) / np.asarray(params["rack_w"], dtype=float) - 1e-9).astype(
        np.int64
    )
    return np.maximum(q["rows"], np.maximum(by_space, by_power))
