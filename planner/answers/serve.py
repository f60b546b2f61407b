"""`planner inference`: serving a model too big for GPU memory, where latency is bounded by bandwidth
(docs/model.md section 7).

Per forward pass (one decode step at batch B) every weight byte reaches a GPU. Split width-wise (tensor
parallel) over m machines, each machine holds W/m bytes: what fits in HBM stays resident, the rest lives in
DRAM and then on NVMe, and streams over the links every pass. The links work as a pipeline, so the slowest
one sets the streaming time:

    HBM        W/m                      / (G x HBM GB/s)
    PCIe->GPU  (dram + nvme bytes)      / (G x x16 GB/s of the PCIe generation)
    platform   (dram + nvme bytes)      / min(root complex, lanes x GB/s per lane)
    DRAM       (dram + 2 x nvme bytes)  / DRAM GB/s            (NVMe data bounces through host memory)
    NVMe       nvme bytes               / (drives x read GB/s)
    compute    2 P B / m                / (G x peak x eta_comp)

plus, when m > 1, two all-reduces of the activations (B x h x 2 bytes) per layer across all m x G GPUs:
NCCL ring latency (perf.ring_latency_s, two passes) and bytes over the node's NICs. More machines divide the
bytes but add latency per layer. Every machine configuration is evaluated at every m at once (numpy), each
at its cheapest m meeting the target; the serve model (optimize/serve.py) picks the cheapest.

Latency here is per generated token (one decode step): prefill (time to first token) and the KV cache are
not modelled.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from planner.assumptions import model as A
from planner.base.errors import InfeasibleError
from planner.base.units import GIB
from planner.catalog import connectors
from planner.catalog.load import Catalog
from planner.catalog.rows import GpuRow, NicRow, NvmeRow, ServerRow
from planner.hardware import costing, fabric, pcie
from planner.model import performance as perf
from planner.model.calibration import Calibration
from planner.model.workload import Serving
from planner.optimize import ranking, serve
from planner.results import InferenceChoice, InferencePlan, LadderStep, SweepPoint

GB = 1e9
LINKS = ("HBM", "PCIe to GPUs", "platform PCIe", "DRAM", "NVMe", "compute")
DRIVE_COUNTS = (1, 2, 4, 8)
GROUP = ["server", "nvme", "nic"]  # a distinct configuration: counts of drives, NICs and machines vary within


def lane_gb_per_s(gen: int) -> float:
    return pcie.lane_gb_per_s(gen)


def platform_gb_per_s(server: ServerRow) -> float:
    """All PCIe traffic of the host: the root-complex limit where known, else every lane at full rate
    (a 128-lane PCIe 4.0 platform: ~252 GB/s)."""
    lanes = server.pcie_lanes * lane_gb_per_s(server.pcie_gen)
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


@dataclass(frozen=True)
class Pass:
    """One forward pass on m machines: where the bytes live, each link's time, the bottleneck."""

    machines: int
    bytes_hbm: float
    bytes_dram: float
    bytes_nvme: float
    link_s: dict[str, float]
    network_s: float
    latency_s: float
    bottleneck: str
    fits: bool

    @property
    def streaming_gb_per_s(self) -> float:
        """Aggregate rate at which weights reach the GPUs across all machines."""
        stream = max(self.link_s.values())
        total = (self.bytes_hbm + self.bytes_dram + self.bytes_nvme) * self.machines
        return total / stream / GB if stream else math.inf


# ---------------------------------------------------------------- the pass, over arrays of machines x counts


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
            "net_step_us": perf.net_step_latency_us(m.nic.fabrics[0] if m.nic else "ib"),
        }
        for m in machines
    ]
    return {k: np.array([r[k] for r in rows], dtype=float) for k in rows[0]} if rows else {}


def _server_figures(s: ServerRow, g: GpuRow, calibration: Calibration) -> dict[str, float]:
    return {
        "G": s.gpus_per_node,
        "hbm_gib": g.hbm_gib,
        "hbm_gb_per_s": g.hbm_gb_per_s,
        "gpu_pcie_gb_per_s": s.pcie_lanes_per_gpu * lane_gb_per_s(s.pcie_gen),
        "platform_gb_per_s": platform_gb_per_s(s),
        "dram_gib": s.dram_gib or 0.0,
        "dram_gb_per_s": s.dram_gb_per_s or math.inf,
        "peak_flops": g.peak_bf16_tflops * 1e12 * calibration.eta_comp_for(g.name),
    }


def passes(job: Serving, a: dict[str, np.ndarray], m: np.ndarray) -> dict[str, np.ndarray]:
    """The forward pass of each machine (entries of `a`) split over m machines (same shape)."""
    G = a["G"]
    share = job.weights_bytes / m
    usable_hbm = A.USABLE_HBM_FRACTION.value * a["hbm_gib"] - A.FRAMEWORK_RESERVE_GIB.value
    resident = np.minimum(share, np.maximum(0.0, G * usable_hbm * GIB))
    in_dram = np.minimum(share - resident, A.DRAM_USABLE_FRACTION.value * a["dram_gib"] * GIB)
    on_nvme = share - resident - in_dram
    streamed = in_dram + on_nvme
    with np.errstate(divide="ignore", invalid="ignore"):
        nvme = np.where(on_nvme > 0, np.where(a["nvme_gb_per_s"] > 0, on_nvme / (a["nvme_gb_per_s"] * GB), np.inf), 0.0)
        link = {
            "HBM": share / (G * a["hbm_gb_per_s"] * GB),
            "PCIe to GPUs": streamed / (G * a["gpu_pcie_gb_per_s"] * GB),
            "platform PCIe": streamed / (a["platform_gb_per_s"] * GB),
            "DRAM": (in_dram + 2 * on_nvme) / (a["dram_gb_per_s"] * GB),
            "NVMe": nvme,
            "compute": 2 * job.params * job.batch / m / (G * a["peak_flops"]),
        }
        network = _network_s(job, a, m)
    times = np.vstack([link[k] for k in LINKS])
    stream = times.max(axis=0)
    worst = np.array(LINKS, dtype=object)[times.argmax(axis=0)]
    return {
        "bytes_hbm": resident,
        "bytes_dram": in_dram,
        "bytes_nvme": on_nvme,
        "link_s": link,
        "network_s": network,
        "latency_s": stream + network,
        "bottleneck": np.where(network > stream, "network latency", worst),
        "fits": on_nvme <= a["nvme_bytes"] + 1e-6,
    }


def _network_s(job: Serving, a: dict, m: np.ndarray) -> np.ndarray:
    """2 all-reduces per layer over all GPUs: NCCL ring latency (two passes of the ring) plus, across
    machines, the activation bytes over the node's NICs; within one machine the NVLink latency alone."""
    gpus = m * a["G"]
    latency = perf.ring_latency_s(gpus, m, a["net_step_us"], passes=2)
    size = job.batch * job.hidden * A.ACTIVATION_BYTES.value
    with np.errstate(divide="ignore", invalid="ignore"):
        transfer = np.where(m > 1, 2 * (m - 1) / m * size / a["node_bytes_per_s"], 0.0)
    return job.layers * 2 * (latency + transfer)


def forward_pass(job: Serving, machine: Machine, machines: int, calibration: Calibration) -> Pass:
    """One machine configuration at one machine count (the arrays of `passes`, one entry)."""
    p = passes(job, _attributes([machine], calibration), np.array([float(machines)]))
    return _pass_at(p, 0, machines)


def _pass_at(p: dict, i, machines: int) -> Pass:
    return Pass(
        machines=machines,
        bytes_hbm=float(p["bytes_hbm"][i]),
        bytes_dram=float(p["bytes_dram"][i]),
        bytes_nvme=float(p["bytes_nvme"][i]),
        link_s={k: float(v[i]) for k, v in p["link_s"].items()},
        network_s=float(p["network_s"][i]),
        latency_s=float(p["latency_s"][i]),
        bottleneck=str(p["bottleneck"][i]),
        fits=bool(p["fits"][i]),
    )


def required_gb_per_s(weights_bytes: float, latency_s: float) -> float:
    """Streaming bandwidth any configuration needs: all weights once per pass (1 TB at 1 s: 1 TB/s)."""
    return weights_bytes / latency_s / GB


def machine_sweep(job: Serving, machine: Machine, max_machines: int, calibration: Calibration) -> list[Pass]:
    m = np.arange(1, max_machines + 1, dtype=float)
    a = {k: np.repeat(v, len(m)) for k, v in _attributes([machine], calibration).items()}
    p = passes(job, a, m)
    return [_pass_at(p, i, int(n)) for i, n in enumerate(m)]


# ---------------------------------------------------------------- hardware options per machine


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
    out = []
    nics = _distinct_nics(catalog)
    for server in servers:
        gpu = catalog.gpu(server.gpu)
        slots = min(server.nvme_slots, max_drives if max_drives is not None else server.nvme_slots)
        drive_options = [(None, 0)] + [(d, k) for d in catalog.items("nvme") for k in DRIVE_COUNTS if k <= slots]
        # the server's real NIC configurations (a DGX: only its built-in NICs, as built)
        fitted = [n for n in nics if not server.nics_fixed or n.sku.lower() == (server.included_nic or "").lower()]
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


# ---------------------------------------------------------------- candidates: each configuration at its cheapest m


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
    fastest_pass = _pass_at(p, fastest, int(m[fastest])) if fastest is not None else None
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


# ---------------------------------------------------------------- the answer


def ladder(machine: Machine, p: Pass) -> list[LadderStep]:
    """The bandwidth ladder of one machine: each link's rate, the bytes it moves per pass, and its time."""
    s, g, G = machine.server, machine.gpu, machine.server.gpus_per_node
    streamed = p.bytes_dram + p.bytes_nvme
    per_gpu = s.pcie_lanes_per_gpu * lane_gb_per_s(s.pcie_gen)
    platform = (
        f"root complex {s.root_complex_gb_per_s:g} GB/s"
        if s.root_complex_gb_per_s
        else f"{s.pcie_lanes} lanes x {lane_gb_per_s(s.pcie_gen):.2f} GB/s (root-complex limit unknown)"
    )
    nvme = (machine.drives * machine.drive.read_gb_per_s) if machine.drive else 0.0
    network = f"{machine.nics} x {machine.nic.sku}" if machine.nic else "single machine: NVLink all-reduce latency only"
    rows = [
        ("HBM", G * g.hbm_gb_per_s, p.bytes_hbm + streamed, f"{G} x {g.hbm_gb_per_s:g} GB/s ({g.name})"),
        (
            "PCIe to GPUs",
            G * per_gpu,
            streamed,
            f"{G} x PCIe {s.pcie_gen}.0 x{s.pcie_lanes_per_gpu} = {G} x {per_gpu:.1f} GB/s",
        ),
        ("platform PCIe", platform_gb_per_s(s), streamed, platform),
        ("DRAM", s.dram_gb_per_s or math.inf, p.bytes_dram + 2 * p.bytes_nvme, f"{s.dram_gib or 0:g} GiB"),
        ("NVMe", nvme, p.bytes_nvme, f"{machine.drives} x {machine.drive.sku}" if machine.drive else "no drives"),
        ("network", machine.nics * usable_nic_gbps(machine) / 8 if machine.nic else 0.0, None, network),
    ]
    steps = [
        LadderStep(
            link=name,
            gb_per_s=rate,
            gb_per_pass=None if moved is None else moved / GB,
            seconds=p.network_s if name == "network" else p.link_s.get(name, 0.0),
            detail=detail,
            bottleneck=name == p.bottleneck or (name == "network" and p.bottleneck == "network latency"),
        )
        for name, rate, moved, detail in rows
    ]
    compute = LadderStep(
        link="compute",
        gb_per_s=None,
        gb_per_pass=None,
        seconds=p.link_s["compute"],
        detail=f"2 x params x batch / {G} GPUs",
        bottleneck=p.bottleneck == "compute",
    )
    return steps + [compute]


def describe(machine: Machine, row, p: Pass, delta_usd: float = 0.0) -> InferenceChoice:
    multi = row["machines"] > 1
    return InferenceChoice(
        server=machine.server.name,
        gpu=machine.gpu.name,
        gpus_per_machine=machine.server.gpus_per_node,
        machines=int(row["machines"]),
        gpus=int(row["machines"]) * machine.server.gpus_per_node,
        dram_gib_per_machine=machine.server.dram_gib,
        nvme=machine.drive.sku if machine.drive else None,
        nvme_per_machine=machine.drives,
        nic=machine.nic.sku if machine.nic and multi else None,
        nics_per_machine=machine.nics if multi else 0,
        network=str(row["network"]),
        usd=float(row["usd"]),
        power_kw=float(row["watts"]) / 1e3,
        latency_s=p.latency_s,
        bottleneck=p.bottleneck,
        streaming_gb_per_s=p.streaming_gb_per_s,
        weights_gb_per_machine={"hbm": p.bytes_hbm / GB, "dram": p.bytes_dram / GB, "nvme": p.bytes_nvme / GB},
        delta_usd=delta_usd,
    )


def plan(
    catalog: Catalog,
    job: Serving,
    latency_s: float,
    calibration: Calibration,
    max_machines: int = 16,
    gpus: list[str] | None = None,
    budget_usd: float | None = None,
    alternatives: int = 3,
    solver: str = "auto",
    progress: Callable[[str], None] = lambda _: None,
) -> InferencePlan:
    progress(f"evaluating every machine option at 1 to {max_machines} machines")
    pool = candidates(catalog, job, latency_s, max_machines, calibration, gpus, budget_usd)
    need = required_gb_per_s(job.weights_bytes, latency_s)
    if pool.frame.empty:
        raise InfeasibleError(_explain(pool.fastest, job.weights_bytes, latency_s, need, budget_usd, max_machines))
    machines, p = pool.machines, pool.passes
    heads = ranking.best_per_group(pool.frame, GROUP)
    progress(f"choosing among {len(heads):,} configurations that meet {latency_s:g} s per token")
    k = serve.optimize(heads["usd"].tolist(), solver)
    best = heads.iloc[k]

    def choice(row, delta=0.0):
        return describe(machines[row["machine"]], row, _pass_at(p, row["position"], int(row["machines"])), delta)

    head = choice(best)
    others = ranking.next_best(heads, GROUP, alternatives, {c: best[c] for c in GROUP})
    sweep = machine_sweep(
        job, machines[best["machine"]], max_machines if machines[best["machine"]].nic else 1, calibration
    )
    return InferencePlan(
        weights_gb=job.weights_bytes / GB,
        latency_target_s=latency_s,
        batch=job.batch,
        required_gb_per_s=need,
        choice=head,
        ladder=ladder(machines[best["machine"]], _pass_at(p, best["position"], int(best["machines"]))),
        machine_sweep=[
            SweepPoint(machines=s.machines, latency_s=s.latency_s, bottleneck=s.bottleneck, fits=s.fits) for s in sweep
        ],
        alternatives=[choice(r, r["usd"] - best["usd"]) for _, r in others.iterrows()],
        calibration=calibration.source,
    )


def _explain(fastest: Pass | None, weights_bytes, latency_s, need, budget_usd, max_machines) -> str:
    lines = [
        f"no configuration serves {weights_bytes / GB:,.0f} GB of weights within {latency_s:g} s "
        f"(that needs {need:,.0f} GB/s of streaming bandwidth):"
    ]
    if fastest is None:
        return "\n".join(lines + ["no server in the catalog can hold the weights (add NVMe drives or servers)"])
    lines.append(
        f"the fastest reachable with this catalog and up to {max_machines} machines is "
        f"{fastest.latency_s:.3g} s on {fastest.machines} machine(s), limited by {fastest.bottleneck}"
        + (
            "; more machines add per-layer all-reduce latency faster than they add bandwidth"
            if fastest.bottleneck == "network latency"
            else "; allow more machines (--max-machines)"
        )
    )
    if fastest.latency_s <= latency_s and budget_usd is not None:  # speed is reachable: the budget blocks it
        return "\n".join(
            lines[:1]
            + [
                f"the budget {budget_usd:,.0f} USD is too small: configurations reaching "
                f"{latency_s:g} s exist (down to {fastest.latency_s:.3g} s) but cost more"
            ]
        )
    return "\n".join(lines)
