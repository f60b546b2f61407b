"""`planner inference`: serving a model too big for GPU memory, where latency is bounded by bandwidth (MODEL.md s.7).

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
NCCL ring latency (2(n-1) steps) and bytes over the node's NICs. More machines divide the bytes but add
latency per layer; `machine_sweep` evaluates every m and the MILP picks the cheapest feasible one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from planner import assumptions as A
from planner import fabric
from planner.calibration import Calibration
from planner.catalog import Catalog
from planner.models import GpuRow, NicRow, NvmeRow, ServerRow

GB = 1e9
DRAM_USABLE_FRACTION = A._c(
    "dram_usable_fraction", 0.90, "fraction of DRAM for weights", "estimate: OS, framework and pinned buffers take ~10%"
)
ACTIVATION_BYTES = A._c("activation_bytes", 2.0, "bytes per activation element", "fp16/bf16 activations")


def lane_gb_per_s(gen: int) -> float:
    """PCIe GB/s per lane per direction (x16 Gbit/s / 16 / 8): gen 4 x16 = 31.5 GB/s."""
    gens = sorted(A.PCIE_X16_GBPS)
    return A.PCIE_X16_GBPS[min(max(gen, gens[0]), gens[-1])].value / 16 / 8


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
        return (
            (self.bytes_hbm + self.bytes_dram + self.bytes_nvme) * self.machines / stream / GB if stream else math.inf
        )


@dataclass(frozen=True)
class Serving:
    """What is served: weight bytes (params x bytes per weight), the architecture, the decode batch."""

    weights_bytes: float
    params: float
    layers: int
    hidden: int
    batch: int = 1


def forward_pass(job: Serving, machine: Machine, machines: int, calibration: Calibration) -> Pass:
    s, g = machine.server, machine.gpu
    G = s.gpus_per_node
    share = job.weights_bytes / machines
    hbm_cap = max(0.0, G * (A.USABLE_HBM_FRACTION.value * g.hbm_gib - A.FRAMEWORK_RESERVE_GIB.value) * 2**30)
    dram_cap = DRAM_USABLE_FRACTION.value * (s.dram_gib or 0) * 2**30
    nvme_cap = machine.drives * machine.drive.capacity_tb * 1e12 if machine.drive else 0.0
    resident = min(share, hbm_cap)
    in_dram = min(share - resident, dram_cap)
    on_nvme = share - resident - in_dram
    streamed = in_dram + on_nvme
    link = {
        "HBM": share / (G * g.hbm_gb_per_s * GB),
        "PCIe to GPUs": streamed / (G * s.pcie_lanes_per_gpu * lane_gb_per_s(s.pcie_gen) * GB),
        "platform PCIe": streamed / (platform_gb_per_s(s) * GB),
        "DRAM": (in_dram + 2 * on_nvme) / ((s.dram_gb_per_s or math.inf) * GB),
        "NVMe": on_nvme / (machine.drives * machine.drive.read_gb_per_s * GB)
        if on_nvme > 0 and machine.drive
        else (math.inf if on_nvme > 0 else 0.0),
        "compute": 2
        * job.params
        * job.batch
        / machines
        / (G * g.peak_bf16_tflops * 1e12 * calibration.eta_comp_for(g.name)),
    }
    network = _network_s(job, machine, machines, calibration)
    stream = max(link.values())
    bottleneck = "network latency" if network > stream else max(link, key=link.get)
    return Pass(
        machines,
        resident,
        in_dram,
        on_nvme,
        link,
        network,
        stream + network,
        bottleneck,
        fits=on_nvme <= nvme_cap + 1e-6,
    )


def _network_s(job: Serving, machine: Machine, machines: int, calibration: Calibration) -> float:
    """2 all-reduces per layer over all GPUs: NCCL ring latency (2(n-1) steps) plus, across machines, the
    activation bytes over the node's NICs; within one machine the NVLink latency alone (bytes are tiny)."""
    G = machine.server.gpus_per_node
    n = machines * G
    if n <= 1:
        return 0.0
    fabric_name = machine.nic.fabrics[0] if machine.nic else "ib"
    steps_us = (
        A.NCCL_BASE_LAT_US.value
        + 2 * (n - machines) * A.NCCL_INTRA_STEP_US.value
        + 2 * (machines - 1) * A.NCCL_NET_STEP_US[fabric_name].value
    )
    per_allreduce = steps_us * 1e-6
    if machines > 1:
        size = job.batch * job.hidden * ACTIVATION_BYTES.value
        node_bytes_per_s = machine.nics * machine.nic.speed_gbps * 1e9 / 8 * calibration.eta_net_for(fabric_name)
        per_allreduce += 2 * (machines - 1) / machines * size / node_bytes_per_s
    return job.layers * 2 * per_allreduce


def required_gb_per_s(weights_bytes: float, latency_s: float) -> float:
    """Streaming bandwidth any configuration needs: all weights once per pass (1 TB at 1 s: 1 TB/s)."""
    return weights_bytes / latency_s / GB


def machine_sweep(job: Serving, machine: Machine, max_machines: int, calibration: Calibration) -> list[Pass]:
    return [forward_pass(job, machine, m, calibration) for m in range(1, max_machines + 1)]


# ---------------------------------------------------------------- hardware options per machine


DRIVE_COUNTS = (1, 2, 4, 8)
NIC_COUNTS = (1, 2, 4, 8)


def _distinct_nics(catalog: Catalog) -> list[NicRow]:
    """The cheapest NIC per (speed, ports, protocols): the others cannot make a cheaper plan."""
    best: dict[tuple, NicRow] = {}
    for nic in catalog.items("nics"):
        key = (nic.speed_gbps, nic.ports, nic.protocols)
        if key not in best or (nic.price_usd, nic.power_w) < (best[key].price_usd, best[key].power_w):
            best[key] = nic
    return list(best.values())


def machine_options(catalog: Catalog, gpus: list[str] | None, max_drives: int | None = None) -> list[Machine]:
    """Every server x (no drive | drive SKU x count within its NVMe slots) x (no NIC | NIC x count within its
    NIC slots). Multi-machine splits need a NIC; single machines use the NIC-less options. (GPUs, NICs and
    drives hang off PCIe switches on these platforms, so the CPU's lane count limits bandwidth, the
    'platform PCIe' link, not how many devices fit.)"""
    servers = catalog.items("servers")
    if gpus:
        names = {catalog.gpu(g).name for g in gpus}
        servers = [s for s in servers if s.gpu in names]
    out = []
    for server in servers:
        gpu = catalog.gpu(server.gpu)
        counts = [k for k in DRIVE_COUNTS if k <= min(server.nvme_slots, max_drives if max_drives is not None else 99)]
        drive_options = [(None, 0)] + [(d, k) for d in catalog.items("nvme") for k in counts]
        nic_options = [(None, 0)] + [
            (n, k) for n in _distinct_nics(catalog) for k in NIC_COUNTS if k <= server.max_nics_per_node
        ]
        for drive, drives in drive_options:
            for nic, nics in nic_options:
                out.append(Machine(server, gpu, drive, drives, nic, nics))
    return out


def machine_cost(machine: Machine) -> tuple[float, float]:
    """Price and nameplate power of one machine (NICs included in the server price are not charged)."""
    s = machine.server
    price, power = s.price_usd, s.power_w
    if machine.drive:
        price += machine.drives * machine.drive.price_usd
        power += machine.drives * machine.drive.power_w
    if machine.nic:
        extra = max(0, machine.nics - s.included_count(machine.nic.sku))
        price += extra * machine.nic.price_usd
        power += extra * machine.nic.power_w
    return price, power


def network_cost(catalog: Catalog, machine: Machine, machines: int, reach_m: float = 3.0) -> tuple[float, float, str]:
    """Cheapest single-switch fabric (with its cables) for m machines' NIC ports; (0, 0, '') for m = 1."""
    if machines <= 1 or machine.nic is None:
        return 0.0, 0.0, ""
    endpoints = machines * machine.nics * machine.nic.ports
    best = None
    fabric_name = machine.nic.fabrics[0]  # the fabric _network_s times the all-reduces on
    for switch in catalog.items("switches"):
        if switch.fabric != fabric_name:
            continue
        b = fabric.breakout(switch.port_gbps, machine.nic.port_gbps)
        if not b or b > switch.max_breakout or fabric.size(endpoints, 1, switch.ports, b, 1.0) is None:
            continue
        links = fabric.node_links(
            catalog.items("optics"), switch.fabric, machine.nic.port_gbps, switch.port_gbps, b, reach_m
        )
        if links is None:
            continue
        ports = math.ceil(endpoints / b)
        usd = switch.price_usd + endpoints * links[0].usd + ports * links[1].usd
        watts = switch.power_w + endpoints * links[0].watts + ports * links[1].watts
        if best is None or usd < best[0]:
            best = (usd, watts, f"1 x {switch.sku}, {links[2]}")
    return best if best else (math.inf, math.inf, "no switch for these NICs")


# ---------------------------------------------------------------- choosing: the MILP


@dataclass(frozen=True)
class Candidate:
    machine: Machine
    machines: int
    passes: Pass
    usd: float
    watts: float
    network: str


def candidates(
    catalog: Catalog,
    job: Serving,
    latency_s: float,
    max_machines: int,
    calibration: Calibration,
    gpus: list[str] | None = None,
    budget_usd: float | None = None,
) -> tuple[list[Candidate], list[Pass]]:
    """Per machine option, its cheapest machine count meeting the latency (cost never falls with m, so the
    smallest feasible m is that option's optimum); also the fastest pass seen, for explanations."""
    out, fastest = [], []
    for machine in machine_options(catalog, gpus):
        counts = [1] if machine.nic is None else range(2, max_machines + 1)
        for m in counts:
            p = forward_pass(job, machine, m, calibration)
            if not p.fits:
                continue
            fastest.append(p)
            if p.latency_s <= latency_s * (1 + 1e-12):
                price, power = machine_cost(machine)
                net_usd, net_w, net_text = network_cost(catalog, machine, m)
                usd = m * price + net_usd
                if math.isfinite(usd) and (budget_usd is None or usd <= budget_usd + 1e-6):
                    out.append(Candidate(machine, m, p, usd, m * power + net_w, net_text))
                    break
    return _pareto(out), fastest


def _pareto(pool: list[Candidate]) -> list[Candidate]:
    """Drop a candidate when another on the same server costs no more and is no slower (e.g. the same
    machines with drives or NICs they do not need)."""
    keep = []
    for c in pool:
        if not any(
            o is not c
            and o.machine.server is c.machine.server
            and o.usd <= c.usd
            and o.passes.latency_s <= c.passes.latency_s
            and (o.usd, o.passes.latency_s) != (c.usd, c.passes.latency_s)
            for o in pool
        ):
            keep.append(c)
    return keep


def choose(pool: list[Candidate], solver: str = "cbc", exclude: list[int] | None = None) -> int | None:
    """min sum_k usd_k z_k  s.t. sum_k z_k = 1 (z_k = 0 for excluded k): the index of the cheapest."""
    import pulp

    from planner.formulation import new_var, var_name
    from planner.solve import make_solver

    problem = pulp.LpProblem("inference", pulp.LpMinimize)
    z = {k: new_var(problem, var_name("z", k), 0, 1, "Binary") for k in range(len(pool))}
    problem += pulp.lpSum(c.usd * z[k] for k, c in enumerate(pool))
    problem += pulp.lpSum(z.values()) == 1, "one_configuration"
    for k in exclude or []:
        problem += z[k] == 0, var_name("nogood", k)
    status = problem.solve(make_solver(solver, None, None))
    if pulp.LpStatus[status] != "Optimal":
        return None
    return next(k for k, v in z.items() if round(pulp.value(v) or 0) == 1)


# ---------------------------------------------------------------- the answer


def ladder(machine: Machine, p: Pass) -> list[dict]:
    """The bandwidth ladder of one machine: each link's rate, the bytes it moves per pass, and its time."""
    s, g, G = machine.server, machine.gpu, machine.server.gpus_per_node
    streamed = p.bytes_dram + p.bytes_nvme
    rows = [
        ("HBM", G * g.hbm_gb_per_s, p.bytes_hbm + streamed, f"{G} x {g.hbm_gb_per_s:g} GB/s ({g.name})"),
        (
            "PCIe to GPUs",
            G * s.pcie_lanes_per_gpu * lane_gb_per_s(s.pcie_gen),
            streamed,
            f"{G} x PCIe {s.pcie_gen}.0 x{s.pcie_lanes_per_gpu} = {G} x "
            f"{s.pcie_lanes_per_gpu * lane_gb_per_s(s.pcie_gen):.1f} GB/s",
        ),
        (
            "platform PCIe",
            platform_gb_per_s(s),
            streamed,
            f"root complex {s.root_complex_gb_per_s:g} GB/s"
            if s.root_complex_gb_per_s
            else f"{s.pcie_lanes} lanes x {lane_gb_per_s(s.pcie_gen):.2f} GB/s (root-complex limit unknown)",
        ),
        ("DRAM", s.dram_gb_per_s or math.inf, p.bytes_dram + 2 * p.bytes_nvme, f"{s.dram_gib or 0:g} GiB"),
        (
            "NVMe",
            (machine.drives * machine.drive.read_gb_per_s) if machine.drive else 0.0,
            p.bytes_nvme,
            f"{machine.drives} x {machine.drive.sku}" if machine.drive else "no drives",
        ),
        (
            "network",
            machine.nics * machine.nic.speed_gbps / 8 if machine.nic else 0.0,
            None,
            f"{machine.nics} x {machine.nic.sku}" if machine.nic else "single machine: NVLink all-reduce latency only",
        ),
    ]
    out = []
    for name, gb_per_s, moved, detail in rows:
        seconds = p.network_s if name == "network" else p.link_s.get(name, 0.0)
        out.append(
            {
                "link": name,
                "gb_per_s": gb_per_s,
                "gb_per_pass": None if moved is None else moved / GB,
                "seconds": seconds,
                "detail": detail,
                "bottleneck": name == p.bottleneck or (name == "network" and p.bottleneck == "network latency"),
            }
        )
    out.append(
        {
            "link": "compute",
            "gb_per_s": None,
            "gb_per_pass": None,
            "seconds": p.link_s["compute"],
            "detail": f"2 x params x batch / {G} GPUs",
            "bottleneck": p.bottleneck == "compute",
        }
    )
    return out


def describe(c: Candidate) -> dict:
    m = c.machine
    return {
        "server": m.server.name,
        "gpu": m.gpu.name,
        "gpus_per_machine": m.server.gpus_per_node,
        "machines": c.machines,
        "gpus": c.machines * m.server.gpus_per_node,
        "dram_gib_per_machine": m.server.dram_gib,
        "nvme": m.drive.sku if m.drive else None,
        "nvme_per_machine": m.drives,
        "nic": m.nic.sku if m.nic and c.machines > 1 else None,
        "nics_per_machine": m.nics if c.machines > 1 else 0,
        "network": c.network,
        "usd": c.usd,
        "power_kw": c.watts / 1e3,
        "latency_s": c.passes.latency_s,
        "bottleneck": c.passes.bottleneck,
        "streaming_gb_per_s": c.passes.streaming_gb_per_s,
        "weights_gb_per_machine": {
            "hbm": c.passes.bytes_hbm / GB,
            "dram": c.passes.bytes_dram / GB,
            "nvme": c.passes.bytes_nvme / GB,
        },
    }


def plan(
    catalog: Catalog,
    job: Serving,
    latency_s: float,
    calibration: Calibration,
    max_machines: int = 16,
    gpus: list[str] | None = None,
    budget_usd: float | None = None,
    alternatives: int = 3,
    solver: str = "cbc",
) -> dict:
    from planner.errors import InfeasibleError

    pool, seen = candidates(catalog, job, latency_s, max_machines, calibration, gpus, budget_usd)
    need = required_gb_per_s(job.weights_bytes, latency_s)
    if not pool:
        raise InfeasibleError(_explain(seen, job.weights_bytes, latency_s, need, budget_usd, max_machines))
    pool.sort(key=lambda c: c.usd)
    pool = pool[: max(50, 10 * (alternatives + 1))]  # exact: the cheapest are first, the MILP needs no others
    chosen, cuts, picks = choose(pool, solver), [], []
    while chosen is not None and len(picks) <= alternatives:
        picks.append(pool[chosen])
        same = _kind(pool[chosen])  # no-good cut: every count variant of this server, drive and NIC
        cuts += [k for k, c in enumerate(pool) if _kind(c) == same]
        chosen = choose(pool, solver, exclude=cuts) if len(set(cuts)) < len(pool) else None
    best = picks[0]
    sweep = [
        {"machines": p.machines, "latency_s": p.latency_s, "bottleneck": p.bottleneck, "fits": p.fits}
        for p in machine_sweep(job, best.machine, max_machines if best.machine.nic else 1, calibration)
    ]
    return {
        "weights_gb": job.weights_bytes / GB,
        "latency_target_s": latency_s,
        "batch": job.batch,
        "required_gb_per_s": need,
        "choice": describe(best),
        "ladder": ladder(best.machine, best.passes),
        "machine_sweep": sweep,
        "alternatives": [{**describe(c), "delta_usd": c.usd - best.usd} for c in picks[1:]],
        "calibration": calibration.source,
    }


def _kind(c: Candidate) -> tuple:
    m = c.machine
    return (m.server.name, m.drive.sku if m.drive else None, m.nic.sku if m.nic else None)


def _explain(seen: list[Pass], weights_bytes, latency_s, need, budget_usd, max_machines) -> str:
    lines = [
        f"no configuration serves {weights_bytes / GB:,.0f} GB of weights within {latency_s:g} s "
        f"(that needs {need:,.0f} GB/s of streaming bandwidth):"
    ]
    if not seen:
        return "\n".join(lines + ["no server in the catalog can hold the weights (add NVMe drives or servers)"])
    fastest = min(seen, key=lambda p: p.latency_s)
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
