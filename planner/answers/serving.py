"""`planner serve`: the cheapest servers that serve a model at a request rate within TTFT and TPOT targets
(docs/model.md section 10). The engine and the queue are planner/model/engine.py and queueing.py, the
candidates planner/tables/replicas.py, the purchase the MILP in planner/optimize/replicas.py; here the
answer: the mix, each kind alone (the ranking), and why a server cannot serve."""

from __future__ import annotations

import numpy as np

from planner.assumptions import facility as F
from planner.assumptions import model as M
from planner.assumptions import serving as S
from planner.base.errors import InfeasibleError, UsageError
from planner.base.units import HOURS_PER_YEAR, SECONDS_PER_HOUR
from planner.catalog.load import Catalog
from planner.model.engine import Shape
from planner.model.queueing import Requests
from planner.model.workload import like_catalog
from planner.optimize import replicas as milp
from planner.results import ServingOption, ServingPlan, ServingPoint, ServingReplica
from planner.tables.replicas import Machine, Targets, best_per_server, candidates, curve

MAX_REASONS = 12  # why-not lines in an error: the rest are counted
# said when machines compute the model but none holds it: what would, today (no candidate at all: its GPUs compute
# none of the precisions allowed, which each reason says)
ONE_DOMAIN = (
    "\n  (a replica runs inside one machine's scale-up domain: replicas over several machines, pipeline parallel,"
    " are not modelled yet; a lower precision (--precision fp8, or fp4 where the GPU computes it) or GPUs with"
    " more memory hold more)"
)


def servers_to_buy(catalog: Catalog, gpus: list[str] | None, servers: list[str] | None) -> list[Machine]:
    """Available servers (announced ones are not sold yet), of the named GPUs or names when given."""
    rows = [s for s in catalog.items("servers") if s.orderable]
    if gpus:
        wanted = {catalog.gpu(g).name for g in gpus}
        rows = [s for s in rows if catalog.gpu(s.gpu).name in wanted]
    if servers:
        wanted = {catalog.server(s).name for s in servers}
        rows = [s for s in rows if s.name in wanted]
    if not rows:
        raise UsageError(
            "no available server in the catalog matches --gpu/--server: list them with `planner catalog list servers`"
        )
    return [
        Machine(
            s.name, catalog.gpu(s.gpu).name, s.gpus_per_node, s.scale_up_domain, float(s.scale_up_gb_per_s),
            float(s.price_usd), float(s.power_w), catalog.cited(s), str(s.date or ""), s.liquid_share,
        )
        for s in rows
    ]  # fmt: skip


def instances_to_rent(catalog: Catalog, gpus: list[str] | None, providers: list[str] | None) -> list[Machine]:
    """Cloud instances with an on-demand price, of the named GPUs and providers when given; an instance
    that does not state its scale-up bandwidth takes a purchased server's of its GPU and domain
    (planner.model.workload.like_catalog), as `planner cloud` does."""
    rows = [c for c in catalog.items("cloud") if c.ondemand_usd_per_h]
    if gpus:
        wanted = {catalog.gpu(g).name for g in gpus}
        rows = [c for c in rows if catalog.gpu(c.gpu).name in wanted]
    if providers:
        wanted = {p.lower() for p in providers}
        rows = [c for c in rows if c.provider.lower() in wanted]
    if not rows:
        raise UsageError("no cloud instance with an on-demand price matches --gpu/--provider")
    out = []
    for c in rows:
        gpu = catalog.gpu(c.gpu).name
        bandwidth = (
            c.scale_up_gb_per_s or like_catalog(catalog, gpu, c.scale_up_domain, c.gpus_per_host)["scale_up_gb_per_s"]
        )
        where = "" if c.region.startswith("(") else f" ({c.region})"  # "(not stated)" says nothing
        name = f"{c.provider} {c.instance}{where}"
        out.append(
            Machine(
                name, gpu, c.gpus, c.scale_up_domain, float(bandwidth), float(c.ondemand_usd_per_h), 0.0,
                catalog.cited(c), str(c.date or ""),
            )
        )  # fmt: skip
    return out


def plan(
    catalog: Catalog,
    model: str,
    req: Requests,
    targets: Targets,
    machines: list[Machine],
    rent: bool = False,
    precisions: tuple[str, ...] = ("bf16", "fp8"),
    budget_usd: float | None = None,
    max_power_w: float | None = None,
    single_kind: bool = False,
    solver: str = "auto",
    objective: str = "capex",
) -> ServingPlan:
    """The cheapest machines (servers to buy, or instances to rent by the hour: `rent`) that serve `model`;
    `objective` (buying): "capex", or "tco" (machine_tco_usd: as planner plan counts a TCO)."""
    row = catalog.model(model)
    shape = Shape.of(row)
    frame = candidates(catalog, shape, req, targets, machines, list(precisions))
    best = best_per_server(frame) if not frame.empty else frame
    not_serving = _not_serving(frame, machines, precisions, req.mean_context)
    if best.empty:
        raise InfeasibleError(
            f"no allowed {'instance' if rent else 'server'} serves {row.name} within the targets:\n"
            + "\n".join(f"  - {t}" for t in not_serving[:MAX_REASONS])
            + (f"\n  ... and {len(not_serving) - MAX_REASONS} more" if len(not_serving) > MAX_REASONS else "")
            + (ONE_DOMAIN if not frame.empty and not frame["fits"].any() else "")
        )
    # each machine's TCO once (buying): the MILP's cost under objective tco, the mix's and the ranking's figure
    tcos = [None if rent else machine_tco_usd(m.price, m.power_w, m.liquid_share) for m in machines]
    offers = [
        milp.Offer(
            r.server,
            float(r.price_usd),
            float(r.power_w),
            float(r.rate_per_server),
            tcos[int(r.server_index)] if objective == "tco" else None,
        )
        for r in best.itertuples(index=False)
    ]
    result, counts = milp.cheapest(offers, targets.rate_per_s, budget_usd, max_power_w, single_kind, solver)
    ranking = _ranking(best, tcos, targets.rate_per_s, objective)
    if not result.solved:
        unit, digits = ("/h", 2) if rent else ("", 0)
        limits = [f"budget ${budget_usd:,.{digits}f}{unit}" if budget_usd else ""]
        limits.append(f"power {max_power_w / 1e3:,.0f} kW" if max_power_w else "")
        cheapest = min(ranking, key=lambda o: o.capex_usd)
        raise InfeasibleError(
            f"no {'rental' if rent else 'purchase'} serves {targets.rate_per_s:g} requests/s within "
            f"{' and '.join(x for x in limits if x)}: the cheapest, {cheapest.servers} x {cheapest.server}, costs "
            f"${cheapest.capex_usd:,.{digits}f}{unit}"
        )
    mix = [
        _replica(machines[int(r.server_index)], tcos[int(r.server_index)], r, n, req)
        for r, n in zip(best.itertuples(index=False), counts, strict=True)
        if n > 0
    ]
    largest = int(np.argmax(np.asarray(counts) * best["rate_per_server"].to_numpy(float)))
    points = curve(shape, req, best.iloc[largest], frame)
    drawn = [ServingPoint(**p) for p in points.to_dict("records")]
    drawn = (best.iloc[largest]["server"], drawn)
    return _plan(row.name, req, targets, result, mix, ranking, not_serving, rent, drawn, objective)


def _replica(machine: Machine, tco_usd: float | None, r, servers: int, req: Requests) -> ServingReplica:
    replicas = servers * int(r.replicas_per_server)
    return ServingReplica(
        server=machine.name,
        gpu=r.gpu,
        source=machine.source,
        price_date=machine.date,
        servers=servers,
        gpus_per_server=machine.gpus,
        unit_usd=machine.price,
        tco_usd=tco_usd,
        power_w=machine.power_w,
        precision=r.precision,
        mode=r.mode,
        layout=r.layout,
        replica_gpus=int(r.replica_gpus),
        replicas_per_server=int(r.replicas_per_server),
        replicas=replicas,
        prefill_layout=r.prefill_layout,
        prefill_replica_gpus=int(r.prefill_gpus),
        prefill_replicas=servers * int(r.prefill_replicas),
        rate_per_replica=float(r.rate),
        batch=float(r.batch),
        max_sequences=float(r.max_sequences),
        ttft_s=float(r.ttft_p_s),
        tpot_s=float(r.tpot_p_s),
        weights_gib_per_gpu=float(r.weights_gib_per_gpu),
        output_tokens_per_s_per_gpu=float(r.rate_per_server) * req.output_tokens / _server_gpus(r),
        binds=str(r.binds),
    )


def machine_tco_usd(price_usd: float, power_w: float, liquid_share: float) -> float:
    """A bought machine's total cost of ownership as `planner plan` counts it (planner.hardware.costing, the
    scenario defaults of planner.assumptions.facility): price, energy at the training-draw share of nameplate
    and the PUE of its cooling, colocation per nameplate kW, and support, over the horizon."""
    from planner.hardware import costing, designs
    from planner.inputs.scenario import Objective

    objective = Objective()  # the scenario's defaults: one definition of the TCO's terms
    node_w = power_w * designs.pue_of(objective, liquid_share)
    return float(costing.tco_usd(costing.Cost(price_usd, power_w, power_w, node_w), objective))


def _server_gpus(r) -> int:
    """GPUs a server's replicas use (prefill and decode when disaggregated)."""
    return int(r.replicas_per_server) * int(r.replica_gpus) + int(r.prefill_replicas) * int(r.prefill_gpus)


def _plan(model, req, targets, result, mix, ranking, not_serving, rent: bool, drawn, objective) -> ServingPlan:
    price = sum(m.servers * m.unit_usd for m in mix)
    power = sum(m.servers * m.power_w for m in mix)
    gpus = sum(m.servers * m.gpus_per_server for m in mix)
    tokens_per_s = targets.rate_per_s * req.output_tokens
    capacity = sum(m.replicas * m.rate_per_replica for m in mix)
    tco = None if rent else sum(m.servers * m.tco_usd for m in mix)
    usd_per_s = price / SECONDS_PER_HOUR if rent else tco / (F.YEARS.value * HOURS_PER_YEAR * SECONDS_PER_HOUR)
    return ServingPlan(
        purchase="rent on demand" if rent else "buy",
        objective="usd per hour" if rent else objective,  # (a rental's hourly price includes its energy)
        model=model,
        rate_per_s=targets.rate_per_s,
        input_tokens=req.input_tokens,
        output_tokens=req.output_tokens,
        input_cv=req.input_cv,
        output_cv=req.output_cv,
        percentile=req.percentile,
        ttft_target_s=targets.ttft_s,
        tpot_target_s=targets.tpot_s,
        status=result.status,
        solver=result.solver,
        mix=mix,
        capex_usd=0.0 if rent else price,
        tco_usd=tco,
        usd_per_hour=price if rent else None,
        power_w=power,
        capacity_per_s=capacity,
        utilisation=targets.rate_per_s / capacity,
        gpus=gpus,
        output_tokens_per_s_per_gpu=tokens_per_s / gpus,
        usd_per_million_output_tokens=usd_per_s / tokens_per_s * 1e6,
        years=F.YEARS.value,
        ranking=ranking,
        curve_server=drawn[0],
        curve=drawn[1],
        not_serving=not_serving,
        assumptions=[
            {"name": c.name, "value": c.value, "unit": c.unit, "source": c.source}
            for c in [*S.listed(), M.USABLE_HBM_FRACTION, M.FRAMEWORK_RESERVE_GIB, F.YEARS, F.PUE, F.USD_PER_KWH]
        ],
    )


def _ranking(best, tcos: list[float | None], rate_per_s: float, objective: str) -> list[ServingOption]:
    """Each server kind alone: the servers it needs for the whole rate, their price and TCO, cheapest first
    (by the objective)."""
    out = []
    for r in best.itertuples(index=False):
        n, tco = milp.servers_alone(rate_per_s, float(r.rate_per_server)), tcos[int(r.server_index)]
        out.append(
            ServingOption(
                server=r.server,
                gpu=r.gpu,
                servers=n,
                capex_usd=n * float(r.price_usd),
                tco_usd=None if tco is None else n * tco,
                precision=r.precision,
                mode=r.mode,
                layout=r.layout,
                replica_gpus=int(r.replica_gpus),
                prefill_layout=r.prefill_layout,
                prefill_replica_gpus=int(r.prefill_gpus),
                rate_per_server=float(r.rate_per_server),
                binds=str(r.binds),
            )
        )
    by_tco = objective == "tco" and all(t is not None for t in tcos)  # (renting: the hourly price)
    return sorted(out, key=lambda o: (o.tco_usd if by_tco else o.capex_usd, o.server))


def _not_serving(frame, rows: list[Machine], precisions, context: float) -> list[str]:
    """Why each server without a serving layout has none: its weights do not fit at any allowed precision, its
    GPU computes none of them, or the targets are missed even by one request alone (the closest layout)."""
    out = []
    for i, server in enumerate(rows):
        mine = frame[frame["server_index"] == i] if not frame.empty else frame
        if len(mine) and mine["serves"].any():
            continue
        if mine.empty:
            out.append(f"{server.name}: its GPU ({server.gpu}) computes none of {', '.join(precisions)}")
        elif not mine["fits"].any():
            least = mine["weights_gib_per_gpu"].min()
            tried = ", ".join(dict.fromkeys(mine["precision"]))  # the allowed precisions its GPU computes
            out.append(
                f"{server.name}: the weights and one request's KV cache ({context:,.0f} tokens) do not fit in its "
                f"{server.gpus} GPUs at {tried} (least {least:.0f} GiB of weights per GPU)"
            )
        else:
            closest = mine[mine["fits"]].sort_values(["tpot_p_s", "ttft_p_s"]).iloc[0]
            out.append(f"{server.name}: {closest['binds']} (best layout {closest['layout']} {closest['replica_gpus']})")
    return out
