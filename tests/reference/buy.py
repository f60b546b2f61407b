"""The buy question by enumeration: the reference the candidate table and the purchase MILP are checked against
(tests, bench).

It is fed what each configuration is made of (planner.hardware.designs: server, NICs, fabric, tier, links) and
nothing the candidate table derives from it: every design at every micro-batch and at every node count its
layout regime allows up to max_nodes is evaluated by the performance model and tested against the scenario
here (memory, target, throughput, GPU count, global batch, the fabric's capacity), so the table's node bounds
(bisection) and its performance keys are checked, not reused. Each configuration is sized with the closed form
(planner/hardware/sizing.py) and priced from the catalog rows themselves (the server, the compute and storage NICs
its price does not include, and each SKU of every quantity), not with planner.hardware.costing, so a wrong
coefficient anywhere shows up as a disagreement.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd

from planner.assumptions import facility as F
from planner.base.units import HOURS_PER_YEAR, SECONDS_PER_DAY
from planner.catalog.load import Catalog
from planner.hardware.designs import Designs
from planner.hardware.sizing import PRICED, quantities
from planner.inputs.scenario import Scenario
from planner.model import performance as perf
from planner.model.calibration import Calibration
from planner.model.workload import scenario_training

SHAPE = ["gpu", "peak_tflops", "hbm_gib", "hbm_gb_per_s", "gpus_per_node", "scale_up_gpus", "scale_up_gb_per_s"]
SHAPE += ["gpus_per_host", "host_gbps", "host_dram_gb_per_s"]


def _row_of(catalog: Catalog, kind: str, key: str):
    return catalog.rows[kind][(key.lower(),)]


def _node_parts(catalog: Catalog, row: dict) -> tuple[float, float]:
    """(USD, W) of one node: the server, the compute NICs it does not include, the storage NICs it buys."""
    server = catalog.server(row["server"])
    usd, watts = server.price_usd, server.power_w
    if isinstance(row["nic"], str):
        nic = catalog.nic(row["nic"])
        card = (nic.mode_of or nic.sku).lower()  # a port mode of the card the server includes is included too
        included = server.included_nics * server.hosts if (server.included_nic or "").lower() == card else 0
        extra = max(0, int(row["nics_per_node"]) - included)
        usd, watts = usd + extra * nic.price_usd, watts + extra * nic.power_w
    if row["storage_bought"]:
        nic = catalog.nic(server.storage_nic)
        usd, watts = usd + row["storage_bought"] * nic.price_usd, watts + row["storage_bought"] * nic.power_w
    return usd, watts


def _per_unit(catalog: Catalog, skus) -> tuple[float, float]:
    usd = watts = 0.0
    for kind, key, qty in skus:
        part = _row_of(catalog, kind, key)
        usd, watts = usd + part.price_usd * qty, watts + part.power_w * qty
    return usd, watts


def price(catalog: Catalog, row: dict, nodes: int, scenario: Scenario) -> dict:
    """capex, nameplate power and the objective of a configuration at this size, from catalog rows."""
    q = {k: np.asarray(v).item() for k, v in quantities(row, nodes).items()}
    node_usd, node_w = _node_parts(catalog, row)
    capex, servers_w = node_usd * nodes, node_w * nodes
    units = {"endpoint": q["endpoints"]} | {prefix: q[name] for name, prefix in PRICED.items() if prefix != "port"}
    network_w = 0.0
    for prefix, count in units.items():
        usd, watts = _per_unit(catalog, row[f"{prefix}_skus"])
        capex, network_w = capex + usd * count, network_w + watts * count
    capex += _spares_usd(catalog, row, nodes, q, node_usd, scenario) + _labour_usd(catalog, row, nodes, q, scenario)
    o = scenario.objective
    server = catalog.server(row["server"])  # its liquid share of heat at pue_liquid, the rest and the network at pue
    share = server.liquid_fraction if server.liquid_fraction is not None else float(server.cooling == "liquid")
    node_pue = o.pue + share * (o.pue_liquid - o.pue)
    kwh = (o.server_draw_fraction * servers_w * node_pue + network_w * o.pue) / 1e3 * HOURS_PER_YEAR * o.years
    months = 12 * o.years
    running = kwh * o.usd_per_kwh + (servers_w + network_w) / 1e3 * o.colocation_usd_per_kw_month * months
    running += capex * o.support_share_of_capex_per_year * o.years + o.staff_fte * o.staff_usd_per_fte_year * o.years
    objective = capex + (running if o.kind == "tco" else 0.0)
    return {"capex_usd": capex, "power_w": servers_w + network_w, "objective_usd": objective, "fits": q["fits"]}


SPARED_LINKS = {  # prefix of the link kind -> the quantity of links of that kind
    "endpoint": "endpoints",
    "cage": "cages",
    "uplink": "uplinks",
    "storage_port": "storage_ports",
    "storage_cage": "storage_cages",
    "storage_uplink": "storage_uplinks",
    "inband_port": "inband_ports",
}
MODELS = [("switch", "switches"), ("storage_switch", "storage_switches"), ("inband_switch", "inband_switches"),
          ("oob_switch", "oob_switches")]  # fmt: skip


def _spares_usd(catalog: Catalog, row: dict, nodes: int, q: dict, node_usd: float, scenario: Scenario) -> float:
    """The spares on the shelf, from the scenario's rule stated directly: share x nodes to the nearest; per link
    kind, share x its links rounded up to a count whose parts are all whole (twin-port modules in pairs);
    switches_per_model of every distinct switch model in use. A single node buys none."""
    if not int(row["tier"]):
        return 0.0
    sp = scenario.spares
    usd = spare_nodes(catalog, row, nodes, scenario) * node_usd
    for prefix, base in SPARED_LINKS.items():
        skus = row[f"{prefix}_skus"]
        whole = math.lcm(1, *(Fraction(qty).limit_denominator(64).denominator for _, _, qty in skus))
        count = whole * math.ceil(round(sp.link_share * q[base] / whole, 9) - 1e-9)
        usd += count * _per_unit(catalog, skus)[0]
    models = {key for prefix, base in MODELS if q[base] > 0 for kind, key, _ in row[f"{prefix}_skus"]}
    return usd + sum(sp.switches_per_model * _row_of(catalog, "switches", key).price_usd for key in models)


def spare_nodes(catalog: Catalog, row: dict, nodes: int, scenario: Scenario) -> int:
    """share x nodes to the nearest (halves down), and at least the fewest that leave the nodes under repair at
    once (Poisson: nodes x GPU, host and NIC failures a day x repair days) above them with a chance of at most
    1 - repair_cover. A single node buys none."""
    if not int(row["tier"]):
        return 0
    sp, rel = scenario.spares, scenario.reliability
    share = max(0, math.ceil(round(sp.node_share * nodes - 0.5, 9) - 1e-9))
    if rel.interruptions_per_1000_node_days is not None or not sp.repair_cover:
        return share
    server, r = catalog.server(row["server"]), rel.failure_rates
    failing = server.gpus_per_node * r.gpu + server.hosts * r.host + int(row["nics_per_node"]) * r.nic
    mean = nodes * failing * (rel.repair_hours_rack_scale if server.rack_scale else rel.repair_hours) / 24
    cover, mass = 0, math.exp(-mean)
    while 1 - mass > 1 - sp.repair_cover:
        cover += 1
        mass += math.exp(-mean) * mean**cover / math.factorial(cover)
    return max(share, cover)


def _labour_usd(catalog: Catalog, row: dict, nodes: int, q: dict, scenario: Scenario) -> float:
    """Installation as the quote states it: hours per server (a rack-scale system's per rack), per link
    plugged (NIC ports, uplinks, storage and in-band ports, out-of-band ports), per switch or appliance
    mounted, plus the overhead, at the hourly rate."""
    if not scenario.include.installation:
        return 0.0
    h, server = F.INSTALL_HOURS, catalog.server(row["server"])
    per_node = h["rack_scale"].value * server.racks if server.racks else h["server"].value
    links = q["endpoints"] + q["uplinks"] + q["storage_ports"] + q["storage_uplinks"] + q["inband_ports"]
    links += q["oob_ports"]
    boxes = q["switches"] + q["storage_switches"] + q["inband_switches"] + q["oob_switches"] + q["ufm"]
    boxes += q["storage_blocks"] + q["mgmt_servers"]
    hours = per_node * nodes + h["cable"].value * links + h["box"].value * boxes
    return hours * (1 + F.INSTALL_OVERHEAD.value) * F.INSTALL_USD_PER_HOUR.value


def _within(c: dict, scenario: Scenario) -> bool:
    budget, power = scenario.constraints.budget_usd, scenario.constraints.power_kw
    return (budget is None or c["capex_usd"] <= budget + 1e-6) and (power is None or c["power_w"] <= power * 1e3 + 1e-6)


def _grid(parts: Designs, scenario: Scenario) -> pd.DataFrame:
    """Every design (single nodes first) at every micro-batch and node count of its regime."""
    max_nodes = scenario.constraints.max_nodes
    single = parts.single.assign(single=True, cap_lo=1, cap_hi=1)
    designs = pd.concat([single, parts.multi.assign(single=False)], ignore_index=True)
    rows = []
    for d, row in enumerate(designs.to_dict("records")):
        lo = 1 if row["single"] else max(2, int(row["cap_lo"]))
        for n in range(lo, min(int(row["cap_hi"]), max_nodes) + 1):
            rows += [(d, mb, n) for mb in scenario.workload.micro_batches]
    grid = pd.DataFrame(rows, columns=["design", "micro_batch", "nodes"])
    return designs, grid


def _effective_gbps(row: dict, nodes: int) -> float:
    """A node's bandwidth as the job sees it: the NICs' usable rate, divided by the leaves' oversubscription
    unless a rail-optimised fabric keeps the job inside one scalable unit; none on one node."""
    if row["single"]:
        return 1.0  # nominal: nothing crosses a network
    local = row["rail"] and nodes <= row["su_nodes"]
    return row["node_gbps"] if local or row["oversubscription"] == 1 else row["node_gbps"] / row["oversubscription"]


def _need_tokens_per_s(scenario: Scenario) -> float | None:
    r = scenario.requirement
    if r.tokens is None:
        return r.min_tokens_per_s
    goodput = scenario.reliability.goodput or 1.0  # given, or each configuration's own (goodput below)
    return r.tokens / (r.days * (1 - r.schedule_margin) * SECONDS_PER_DAY * goodput)


def goodput(catalog: Catalog, row: dict, nodes: int, scenario: Scenario, params: float) -> float:
    """A configuration's goodput at this size, stated as docs/plan.md section 7 states it: its GPUs, hosts (and
    their storage clients), NICs, NIC links, fabric links, leaves, spines and cores at their failure rates, plus
    the software share; Young/Daly checkpoints; 5-minute-style restarts; and the share of the time more nodes are
    under repair (Poisson, mean failures x repair days) than the spares it buys."""
    rel, r = scenario.reliability, scenario.reliability.failure_rates
    if rel.goodput is not None:
        return rel.goodput
    server = catalog.server(row["server"])
    q = {k: np.asarray(v).item() for k, v in quantities(row, nodes).items()}
    networked = int(row["tier"]) > 0
    nics = nodes * int(row["nics_per_node"]) if networked else 0
    node_failures = nodes * (server.gpus_per_node * r.gpu + server.hosts * r.host) + nics * r.nic
    hardware = node_failures + nodes * server.hosts * r.storage_client
    if not (row["topology"] == "rail" and int(row["planes"]) > 1):  # a second plane carries on past these
        hardware += r.leaf * q["leaf"] + (q["endpoints"] if networked else 0) * r.node_link
        hardware += q["uplinks"] * r.fabric_link + (q["spine"] + q["core"]) * r.upper_switch
    per_day = hardware / (1 - r.software_share)
    if rel.interruptions_per_1000_node_days is not None:
        per_day, node_failures = nodes * rel.interruptions_per_1000_node_days / 1e3, 0.0
    if per_day == 0:
        return 1.0
    mtbf_s = SECONDS_PER_DAY / per_day
    write_s = (
        params * rel.checkpoint_bytes_per_param / (nodes * server.hosts * rel.checkpoint_write_gb_per_s_per_node * 1e9)
    )
    tau = (rel.checkpoint_interval_minutes or 0) * 60 or math.sqrt(2 * write_s * mtbf_s)
    spares = spare_nodes(catalog, row, nodes, scenario)
    hours = rel.repair_hours_rack_scale if server.rack_scale else rel.repair_hours
    mean = node_failures * hours / 24
    short = 1 - sum(math.exp(-mean) * mean**k / math.factorial(k) for k in range(spares + 1)) if mean else 0.0
    return 1 - write_s / tau - tau / 2 / mtbf_s - rel.restart_minutes * 60 / mtbf_s - short


def best(
    catalog: Catalog, parts: Designs, scenario: Scenario, calibration: Calibration
) -> tuple[float, dict, int] | None:
    """(objective USD, the design row with its micro-batch, nodes) of the cheapest feasible plan, or None."""
    designs, grid = _grid(parts, scenario)
    if grid.empty:
        return None
    records = designs.to_dict("records")
    shape = designs[SHAPE].iloc[grid["design"]].reset_index(drop=True)
    eff = [_effective_gbps(records[d], n) for d, n in zip(grid["design"], grid["nodes"], strict=True)]
    columns = {c: shape[c].to_numpy() for c in SHAPE}
    columns |= {"micro_batch": grid["micro_batch"].to_numpy(), "scale_out_gbps": np.asarray(eff, dtype=float)}
    columns["gpus"] = grid["nodes"].to_numpy() * shape["gpus_per_node"].to_numpy()
    columns["fabric"] = np.array(["ib" if records[d]["single"] else records[d]["fabric"] for d in grid["design"]])
    for name, value in scenario_training(catalog, scenario).perf_columns().items():
        columns.setdefault(name, value)
    figures = perf.evaluate_arrays(columns, calibration, len(grid), scenario.confidence)
    ok = np.asarray(figures["fits_memory"], dtype=bool)
    ok &= np.asarray(figures["achieved_tflops_per_gpu"]) >= (scenario.target_tflops or 0.0) - 1e-9
    need = _need_tokens_per_s(scenario)
    if need is not None:
        ok &= np.asarray(figures["tokens_per_s"]) >= need * (1 - 1e-12)
    if scenario.requirement.gpus is not None:
        ok &= columns["gpus"] == scenario.requirement.gpus
    if scenario.workload.global_batch is not None:
        per_step = columns["gpus"] * columns["micro_batch"]
        ok &= (per_step <= scenario.workload.global_batch) & (scenario.workload.global_batch % per_step == 0)
    ok &= np.array([bool(records[d]["rack_fits"]) for d in grid["design"]])
    found, params = None, scenario_training(catalog, scenario).params
    tokens_per_s = np.asarray(figures["tokens_per_s"])
    for i, (d, mb, n) in zip(np.flatnonzero(ok), grid[ok].itertuples(index=False), strict=True):
        own = scenario.requirement.tokens is not None and scenario.reliability.goodput is None
        if own and tokens_per_s[i] * goodput(catalog, records[d], int(n), scenario, params) < need * (1 - 1e-12):
            continue
        c = price(catalog, records[d], int(n), scenario)
        if c["fits"] and _within(c, scenario) and (found is None or c["objective_usd"] < found[0] - 1e-6):
            found = (c["objective_usd"], {**records[d], "micro_batch": int(mb)}, int(n))
    return found
