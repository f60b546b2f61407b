"""The table of the serve question: every machine configuration (server x NVMe drives x NICs) and, for each,
its cheapest machine count meeting the latency target, priced with its switch and links
(planner/model/streaming.py times each pass)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from planner.base.errors import InfeasibleError
from planner.catalog import connectors
from planner.catalog.load import Catalog
from planner.catalog.rows import GpuRow, NicRow, NvmeRow, ServerRow
from planner.hardware import costing, fabric, pcie
from planner.model import network
from planner.model.calibration import Calibration
from planner.model.streaming import Pass, pass_at, passes
from planner.model.workload import Serving

DRIVE_COUNTS = (1, 2, 4, 8)


def platform_gb_per_s(server: ServerRow) -> float:
    """All PCIe traffic of the host: the root-complex limit where known, else every lane at full rate
    (a 128-lane PCIe 4.0 platform: ~252 GB/s)."""
    lanes = server.pcie_lanes * pcie.lane_gb_per_s(server.pcie_gen)
    return min(lanes, server.root_complex_gb_per_s) if server.root_complex_gb_per_s else lanes


@dataclass(frozen=True)
class Machine:
    """One machine's hardware: server, NVMe drives, NICs."""

    server: ServerRow
    gpu: GpuRow
    drive: NvmeRow | None
    drives: int
    nic: NicRow | None
    nics: int


def _attributes(machines: list[Machine], calibration: Calibration) -> dict[str, np.ndarray]:
    """The figures of each machine the pass reads, as arrays (one entry per machine). Server, drive and NIC
    figures are computed once per distinct part and gathered."""
    servers = {id(m.server): (m.server, m.gpu) for m in machines}
    server_figures = {key: _server_figures(s, g, calibration) for key, (s, g) in servers.items()}
    rows = [
        {
            **server_figures[id(m.server)],
            "nvme_bytes": m.drives * m.drive.capacity_tb * 1e12 if m.drive else 0.0,
            "nvme_gb_per_s": m.drives * m.drive.read_gb_per_s if m.drive else 0.0,
            "node_bytes_per_s": m.nics * usable_nic_gbps(m) * 1e9 / 8 * calibration.eta_net_for(m.nic.fabrics[0])
            if m.nic
            else 0.0,
            # the fabric the all-reduces run on
            "net_step_us": network.net_step_latency_us(m.nic.fabrics[0] if m.nic else "ib"),
        }
        for m in machines
    ]
    return {k: np.array([r[k] for r in rows], dtype=float) for k in rows[0]} if rows else {}


def _server_figures(s: ServerRow, g: GpuRow, calibration: Calibration) -> dict[str, float]:
    return {
        "G": s.gpus_per_node,
        "hbm_gib": g.hbm_gib,
        "hbm_gb_per_s": g.hbm_gb_per_s,
        "gpu_pcie_gb_per_s": pcie.host_link_gb_per_s(s),
        "platform_gb_per_s": platform_gb_per_s(s),
        "dram_gib": s.dram_gib or 0.0,
        "dram_gb_per_s": s.dram_gb_per_s or math.inf,
        "peak_flops": g.peak_bf16_tflops * 1e12 * calibration.gemm_efficiency_for(g.architecture or "other"),
    }


def forward_pass(job: Serving, machine: Machine, machines: int, calibration: Calibration) -> Pass:
    """One machine configuration at one machine count (the arrays of `passes`, one entry)."""
    p = passes(job, _attributes([machine], calibration), np.array([float(machines)]))
    return pass_at(p, 0, machines)


def machine_sweep(job: Serving, machine: Machine, max_machines: int, calibration: Calibration) -> list[Pass]:
    m = np.arange(1, max_machines + 1, dtype=float)
    a = {k: np.repeat(v, len(m)) for k, v in _attributes([machine], calibration).items()}
    p = passes(job, a, m)
    return [pass_at(p, i, int(n)) for i, n in enumerate(m)]


def _distinct_nics(catalog: Catalog) -> list[NicRow]:
    """The cheapest NIC per (speed, ports, protocols): the others cannot make a cheaper plan."""
    best: dict[tuple, NicRow] = {}
    for nic in catalog.items("nics"):
        key = (nic.speed_gbps, nic.ports, nic.protocols)
        if key not in best or (nic.price_usd, nic.power_w) < (best[key].price_usd, best[key].power_w):
            best[key] = nic
    return list(best.values())


def machine_options(catalog: Catalog, gpus: list[str] | None, max_drives: int | None = None) -> list[Machine]:
    """Every server x (no drive | drive SKU x count within its NVMe slots) x (no NIC | NIC x one of the
    server's NIC counts; a DGX only its built-in NICs). Multi-machine splits need a NIC; single machines use
    the NIC-less options. (GPUs, NICs and drives hang off PCIe switches on these platforms, so the CPU's lane
    count limits bandwidth, the 'platform PCIe' link, not how many devices fit.)"""
    servers = catalog.items("servers")
    if gpus:
        names = {catalog.gpu(g).name for g in gpus}
        servers = [s for s in servers if s.gpu in names]
    one_host = [s for s in servers if s.hosts == 1]  # the pass streams through one host's PCIe, DRAM and NVMe
    if servers and not one_host:
        names = ", ".join(sorted(f"{s.name} ({s.hosts} hosts)" for s in servers))
        raise InfeasibleError(
            f"planner inference models a machine as one host, and every server of these GPUs has several: {names}; "
            "allow a one-host server (--gpu)"
        )
    out = []
    servers = one_host
    nics = _distinct_nics(catalog)
    for server in servers:
        gpu = catalog.gpu(server.gpu)
        slots = min(server.nvme_slots, max_drives if max_drives is not None else server.nvme_slots)
        drive_options = [(None, 0)] + [(d, k) for d in catalog.items("nvme") for k in DRIVE_COUNTS if k <= slots]
        # the server's real NIC configurations (a DGX: only its built-in NICs, as built)
        fitted = [n for n in nics if not server.nics_fixed or n.card.lower() == (server.included_nic or "").lower()]
        if server.nics_fixed and not fitted:
            fitted = [catalog.nic(server.included_nic)]
        nic_options = [(None, 0)] + [(n, k) for n in fitted for k in server.nic_configurations()]
        out += [Machine(server, gpu, d, dk, n, nk) for d, dk in drive_options for n, nk in nic_options]
    return out


def usable_nic_gbps(machine: Machine) -> float:
    """A NIC's usable rate in this server: min(line rate, its PCIe slot's effective rate; planner/hardware/pcie.py)."""
    nic, server = machine.nic, machine.server
    gen, lanes = pcie.link_gen_lanes(nic.pcie_gen, nic.pcie_lanes, server.slot_gen, server.nic_slot_lanes)
    return float(pcie.nic_usable_gbps(nic.speed_gbps, gen, lanes))


def machine_cost(machine: Machine) -> tuple[float, float]:
    """Price and nameplate power of one machine: the node (NICs its price includes are not charged) and
    its drives."""
    price, power = costing.node_cost(machine.server, machine.nic, machine.nics)
    if machine.drive:
        price += machine.drives * machine.drive.price_usd
        power += machine.drives * machine.drive.power_w
    return price, power


def network_costs(catalog: Catalog, nic: NicRow, nics: int, machines: np.ndarray, reach_m: float = 3.0):
    """(USD, W, text) arrays over machine counts: the cheapest single switch, with its links (valid per
    planner/catalog/connectors.py over an in-rack run of reach_m), for the machines' NIC ports (inf where no switch
    holds them)."""
    usd = np.full(len(machines), np.inf)
    watts, text = np.full(len(machines), np.inf), np.full(len(machines), "no switch for these NICs", dtype=object)
    fabric_name = nic.fabrics[0]  # the fabric _network_s times the all-reduces on
    book = connectors.LinkBook(catalog.items("optics"))
    for switch in (s for s in catalog.items("switches") if fabric_name in s.fabrics and "compute" in s.uses):
        ends = connectors.nic_end(nic), connectors.switch_end(switch)
        link = connectors.cheapest(book.node_links(*ends, fabric_name, reach_m))
        if link is None:
            continue
        endpoints = machines * nics * nic.ports
        size = fabric.size_arrays(endpoints, np.ones(len(machines), int), switch.ports, link.breakout, 1.0)
        cages = -(-endpoints.astype(np.int64) // link.endpoints_per_cage)
        coef = {"endpoints_per_node": nics * nic.ports, "node_usd": 0.0, "node_w": 0.0, "switch_usd": switch.price_usd}
        coef |= {"switch_w": switch.power_w, "endpoint_usd": link.usd("endpoint"), "endpoint_w": link.watts("endpoint")}
        coef |= {"cage_usd": link.usd("cage"), "cage_w": link.watts("cage")}
        cost = costing.configuration_cost(coef, machines, switches=1, cages=cages)
        better = size["fits"] & (cost.capex_usd < usd)
        usd, watts = np.where(better, cost.capex_usd, usd), np.where(better, cost.power_w, watts)
        text = np.where(better, f"1 x {switch.sku}, {link.text}", text)
    return usd, watts, text


@dataclass(frozen=True)
class Pool:
    """Configurations meeting the target (`frame`: one row each, at its cheapest m, cheapest first), the
    machines they index, the passes they point into (`position`), and the fastest pass seen."""

    frame: pd.DataFrame
    machines: list[Machine]
    passes: dict
    fastest: Pass | None


def candidates(
    catalog: Catalog,
    job: Serving,
    latency_s: float,
    max_machines: int,
    calibration: Calibration,
    gpus: list[str] | None = None,
    budget_usd: float | None = None,
) -> Pool:
    """Per machine configuration, its cheapest machine count meeting the latency (cost never falls with m,
    so the smallest feasible m is that configuration's optimum), Pareto-filtered per server; and the fastest
    pass seen (for explanations)."""
    machines = machine_options(catalog, gpus)
    counts = np.arange(2, max_machines + 1, dtype=float)
    index, m = [], []
    for i, machine in enumerate(machines):  # NIC-less machines serve alone; with NICs, 2 or more machines
        grid = counts if machine.nic else np.array([1.0])
        index += [i] * len(grid)
        m.append(grid)
    index, m = np.array(index), np.concatenate(m)
    attributes = _attributes(machines, calibration)
    p = passes(job, {k: v[index] for k, v in attributes.items()}, m)
    fits = p["fits"]
    fastest = int(np.argmin(np.where(fits, p["latency_s"], np.inf))) if fits.any() else None
    fastest_pass = pass_at(p, fastest, int(m[fastest])) if fastest is not None else None
    ok = fits & (p["latency_s"] <= latency_s * (1 + 1e-12))  # priced only where the target is met
    usd, watts, text = np.full(len(m), np.inf), np.full(len(m), np.inf), np.full(len(m), "", dtype=object)
    usd[ok], watts[ok], text[ok] = _prices(catalog, machines, index[ok], m[ok])
    ok &= np.isfinite(usd)
    if budget_usd is not None:
        ok &= usd <= budget_usd + 1e-6
    frame = pd.DataFrame({"machine": index, "machines": m.astype(int), "usd": usd, "watts": watts, "network": text})
    frame["latency_s"], frame["position"] = p["latency_s"], np.arange(len(m))
    frame = frame[ok].drop_duplicates("machine", keep="first")  # the smallest feasible m of each machine
    frame["server"] = [machines[i].server.name for i in frame["machine"]]
    frame["nvme"] = [machines[i].drive.sku if machines[i].drive else None for i in frame["machine"]]
    frame["nic"] = [machines[i].nic.sku if machines[i].nic else None for i in frame["machine"]]
    frame = pareto(frame).sort_values(["usd", "latency_s"], kind="stable", ignore_index=True)
    return Pool(frame, machines, p, fastest_pass)


def _prices(catalog, machines: list[Machine], index: np.ndarray, m: np.ndarray):
    """(USD, W, network text) of each (machine, m) pair: m machines plus their switch and links."""
    per_machine = np.array([machine_cost(x) for x in machines]).reshape(-1, 2)
    usd, watts = m * per_machine[index, 0], m * per_machine[index, 1]
    nic_keys = [(x.nic.sku, x.nics) if x.nic else None for x in machines]
    distinct = sorted({k for k in nic_keys if k is not None})
    code = np.array([distinct.index(k) if k is not None else -1 for k in nic_keys])[index]
    text = np.full(len(m), "", dtype=object)
    for c, (sku, nics) in enumerate(distinct):
        at = (code == c) & (m > 1)
        if at.any():
            n_usd, n_w, text[at] = network_costs(catalog, catalog.nic(sku), nics, m[at])
            usd[at], watts[at] = usd[at] + n_usd, watts[at] + n_w
    return usd, watts, text


def pareto(frame: pd.DataFrame) -> pd.DataFrame:
    """Drop a configuration when another on the same server costs no more and is no slower (e.g. the same
    machines with drives or NICs they do not need). Sort and sweep per server, O(n log n): sorted by
    (cost, latency), a row is dominated when an earlier row with a different (cost, latency) is no slower."""
    frame = frame.sort_values(["server", "usd", "latency_s"], kind="stable")
    keep = np.ones(len(frame), dtype=bool)
    server, usd, latency = frame["server"].to_numpy(), frame["usd"].to_numpy(), frame["latency_s"].to_numpy()
    best_before, group_best, current = math.inf, math.inf, None
    for i in range(len(frame)):
        if current is None or server[i] != server[current]:
            best_before, group_best, current = math.inf, math.inf, i
        elif (usd[i], latency[i]) != (usd[current], latency[current]):  # a new (cost, latency) pair starts
            best_before, current = min(best_before, group_best), i
            group_best = math.inf
        group_best = min(group_best, latency[i])
        keep[i] = latency[i] < best_before
    return frame[keep]
