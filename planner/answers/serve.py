"""`planner inference`: serving a model too big for GPU memory, where latency is bounded by bandwidth
(docs/model.md section 7). The pass is planner/model/streaming.py, the configurations and their cheapest
machine counts planner/tables/serve.py, the pick the serve model (planner/optimize/serve.py); here the
answer: the choice, its bandwidth ladder, the machine sweep, the alternatives, or why nothing serves.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable

from planner.assumptions import hardware as H
from planner.base.errors import InfeasibleError
from planner.catalog import dates
from planner.catalog.load import Catalog
from planner.hardware import costing, pcie
from planner.model.calibration import Calibration
from planner.model.streaming import Pass, pass_at, required_gb_per_s
from planner.model.workload import Serving
from planner.optimize import ranking, serve
from planner.results import CostLine, InferenceChoice, InferencePlan, LadderStep, SweepPoint
from planner.tables.serve import Machine, candidates, machine_sweep, platform_gb_per_s, usable_nic_gbps

GB = 1e9
GROUP = ["server", "nvme", "nic"]  # a distinct configuration: counts of drives, NICs and machines vary within


# ---------------------------------------------------------------- the pass, over arrays of machines x counts


# ---------------------------------------------------------------- hardware options per machine


# ---------------------------------------------------------------- candidates: each configuration at its cheapest m


# ---------------------------------------------------------------- the answer


def ladder(machine: Machine, p: Pass) -> list[LadderStep]:
    """The bandwidth ladder of one machine: each link's rate, the bytes it moves per pass, and its time."""
    s, g, G = machine.server, machine.gpu, machine.server.gpus_per_node
    streamed = p.bytes_dram + p.bytes_nvme
    per_gpu = pcie.host_link_gb_per_s(s)
    link = "NVLink-C2C" if s.host_link_gb_per_s else f"PCIe {s.pcie_gen}.0 x{s.pcie_lanes_per_gpu}"
    platform = (
        f"root complex {s.root_complex_gb_per_s:g} GB/s"
        if s.root_complex_gb_per_s
        else f"{s.pcie_lanes} lanes x {pcie.lane_gb_per_s(s.pcie_gen):.2f} GB/s (root-complex limit unknown)"
    )
    nvme = (machine.drives * machine.drive.read_gb_per_s) if machine.drive else 0.0
    network = f"{machine.nics} x {machine.nic.sku}" if machine.nic else "single machine: NVLink all-reduce latency only"
    rows = [
        ("HBM", G * g.hbm_gb_per_s, p.bytes_hbm + streamed, f"{G} x {g.hbm_gb_per_s:g} GB/s ({g.name})"),
        (
            "PCIe to GPUs",
            G * per_gpu,
            streamed,
            f"{G} x {link} = {G} x {per_gpu:.1f} GB/s",
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
        server_price_date=machine.server.date,
        server_price_stale=dates.is_stale(machine.server.date, dt.date.today(), int(H.STALE_PRICE_MONTHS.value)),
        lines=cost_lines(machine, int(row["machines"]), float(row["usd"]), str(row["network"])),
    )


def cost_lines(machine: Machine, machines: int, usd: float, network: str) -> list[CostLine]:
    """The configuration's price by line, as tables.serve prices it: the servers, the NICs their price does
    not include, the NVMe drives, and the switch and links (the rest of the total)."""
    server, nic = machine.server, machine.nic
    lines = [CostLine(item=server.name, quantity=machines, unit_usd=server.price_usd,
                      extended_usd=machines * server.price_usd)]  # fmt: skip
    extra = costing.extra_nics(server, nic, machine.nics)
    if extra:
        count = machines * extra
        lines.append(CostLine(item=nic.sku, quantity=count, unit_usd=nic.price_usd, extended_usd=count * nic.price_usd))
    if machine.drive is not None and machine.drives:
        count, unit = machines * machine.drives, machine.drive.price_usd
        lines.append(CostLine(item=machine.drive.sku, quantity=count, unit_usd=unit, extended_usd=count * unit))
    rest = usd - sum(line.extended_usd for line in lines)
    if abs(rest) > 0.005:
        lines.append(CostLine(item=f"network: {network}", quantity=1, unit_usd=rest, extended_usd=rest))
    return lines


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
        return describe(machines[row["machine"]], row, pass_at(p, row["position"], int(row["machines"])), delta)

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
        ladder=ladder(machines[best["machine"]], pass_at(p, best["position"], int(best["machines"]))),
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
