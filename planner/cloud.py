"""`planner cloud`: rent instead of buy. Which instance type, how many, which pricing, and the cost to train.

Offerings come from cloud.csv (one row per provider x instance x region, with on-demand, spot and reserved
$/h). The same performance model as the purchase planner predicts each offering's throughput with its own
fabric constants (EFA, GPUDirect-TCPX, TCP: planner/assumptions.py). An offering without an inter-node fabric,
or whose bandwidth the catalog does not give, can only run on one instance.

The choice is a MILP over offering x micro-batch x instance count x pricing: binaries y_{k,n} pick the
offering k and its count n; integers x_{k,n,p} split the n instances over pricing models p, with
x_{k,n,spot} <= spot_share_max * n. Cost = sum T_k(n) * rate_{k,p} * x_{k,n,p}, where T_k(n) is the training
time in hours (1 hour when no token count is given: then the objective is the hourly cost).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pulp

from planner import perf
from planner.api import intra_node_bandwidth
from planner.calibration import Calibration
from planner.candidates import required_tokens_per_s, scenario_workload
from planner.catalog import Catalog
from planner.formulation import new_var, var_name
from planner.models import CloudRow
from planner.scenario import Scenario
from planner.solve import make_solver

PRICINGS = {"ondemand": "ondemand_usd_per_h", "spot": "spot_usd_per_h", "reserved": "reserved_usd_per_h"}
SECONDS_PER_HOUR = 3600.0


def offerings(catalog: Catalog, scenario: Scenario) -> list[CloudRow]:
    o = scenario.cloud
    rows = catalog.items("cloud")
    if o.providers:
        rows = [r for r in rows if r.provider.lower() in {p.lower() for p in o.providers}]
    if o.regions:
        rows = [r for r in rows if r.region.lower() in {p.lower() for p in o.regions}]
    if o.instances:
        rows = [r for r in rows if r.instance.lower() in {p.lower() for p in o.instances}]
    if scenario.constraints.gpus:
        names = {catalog.gpu(g).name for g in scenario.constraints.gpus}
        rows = [r for r in rows if r.gpu in names]
    return rows


def quota(scenario: Scenario, row: CloudRow) -> int:
    o = scenario.cloud
    for key in (f"{row.provider}/{row.instance}", row.instance):
        for name, value in o.quota.items():
            if name.lower() == key.lower():
                return min(value, o.max_instances)
    return o.max_instances


def multi_node_fabric(row: CloudRow) -> str | None:
    """The fabric a multi-instance job uses, or None when the offering cannot span instances."""
    return None if row.fabric == "none" or row.internode_gbps is None else row.fabric


@dataclass(frozen=True)
class Option:
    """One offering at one micro-batch, with its allowed instance counts and their figures."""

    row: CloudRow
    micro_batch: int
    counts: list[int]
    hours: dict[int, float]  # training hours (or 1) per count
    figures: dict[int, dict]  # perf figures per count


def _frame(catalog, scenario, work, row, mb, counts) -> pd.DataFrame:
    gpu = catalog.gpu(row.gpu)
    fabric = multi_node_fabric(row) or "ib"  # single instance: no network term
    frame = pd.DataFrame(
        {
            "gpu": gpu.name,
            "peak_tflops": gpu.peak_bf16_tflops,
            "hbm_gib": gpu.hbm_gib,
            "gpus_per_node": row.gpus,
            # NVLink as in a purchased server of the same GPU and size, so buy and rent are modelled alike
            "intra_node_gb_per_s": intra_node_bandwidth(catalog, gpu.name, row.gpus),
            "micro_batch": mb,
            "node_gbps": row.internode_gbps or 1.0,
            "fabric": fabric,
            "gpus": np.asarray(counts) * row.gpus,
        }
    )
    for name, value in work.__dict__.items():
        if name not in ("micro_batch", "model_name"):
            frame[name] = value
    return frame


def build_options(catalog: Catalog, scenario: Scenario, calibration: Calibration) -> tuple[list[Option], list[dict]]:
    """Feasible options, and one record per excluded offering with the reason."""
    work = scenario_workload(catalog, scenario)
    need = required_tokens_per_s(scenario)
    options, excluded = [], []
    for row in offerings(catalog, scenario):
        prices = [p for p in scenario.cloud.pricing if getattr(row, PRICINGS[p]) is not None]
        reasons = []
        if not prices:
            excluded.append(_excluded(row, "no price for the allowed pricing models"))
            continue
        if prices == ["spot"] and scenario.cloud.spot_share_max < 1:
            excluded.append(_excluded(row, "spot pricing only, but spot_share_max < 1 keeps some instances off spot"))
            continue
        cap = quota(scenario, row) if multi_node_fabric(row) else min(1, quota(scenario, row))
        counts = list(range(1, cap + 1))
        if scenario.requirement.gpus is not None:
            fixed = scenario.requirement.gpus / row.gpus
            counts = [int(fixed)] if fixed.is_integer() and 1 <= fixed <= cap else []
        for mb in scenario.workload.micro_batches:
            if not counts:
                reasons.append("GPU count not reachable in whole instances within quota")
                break
            ev = perf.evaluate(_frame(catalog, scenario, work, row, mb, counts), calibration)
            ok = ev["fits_memory"] & (ev["achieved_tflops_per_gpu"] >= (scenario.target_tflops or 0.0) - 1e-9)
            if need is not None:
                ok &= ev["tokens_per_s"] >= need * (1 - 1e-12)
            if scenario.workload.global_batch:
                gb = scenario.workload.global_batch
                ok &= pd.Series([gb % (c * row.gpus * mb) == 0 for c in counts], index=ev.index)
            good = [c for c, keep in zip(counts, ok, strict=True) if keep]
            if not good:
                reasons.append(_why_not(ev, scenario, row, need, mb))
                continue
            figures = {c: ev.iloc[counts.index(c)].to_dict() for c in good}
            tokens = scenario.requirement.tokens
            hours = {c: (tokens / figures[c]["tokens_per_s"] / SECONDS_PER_HOUR if tokens else 1.0) for c in good}
            options.append(Option(row, mb, good, hours, figures))
        if not any(o.row is row for o in options):
            excluded.append(_excluded(row, _one_reason_per_kind(reasons)))
    return options, excluded


def _one_reason_per_kind(reasons: list[str]) -> str:
    """Micro-batches fail for the same kind of reason: keep one per kind, the most telling: the largest
    micro-batch for bandwidth and memory (the best it gets), the smallest for a global batch (most instances)."""
    by_kind: dict[str, str] = {}
    for reason in reasons:
        kind = reason.split(":")[0]
        if not (kind.startswith("global batch") and kind in by_kind):
            by_kind[kind] = reason
    return "; ".join(by_kind.values()) or "no feasible configuration"


def _excluded(row: CloudRow, reason: str) -> dict:
    return {"provider": row.provider, "instance": row.instance, "region": row.region, "gpu": row.gpu, "reason": reason}


def _why_not(ev: pd.DataFrame, scenario: Scenario, row: CloudRow, need: float | None, mb: int) -> str:
    fits = ev["fits_memory"]
    fast = ev["achieved_tflops_per_gpu"] >= (scenario.target_tflops or 0.0) - 1e-9
    if not fits.any():
        if multi_node_fabric(row) is None:
            what = "no inter-node fabric" if row.fabric == "none" else "inter-node bandwidth not in the catalog"
            return f"{what}: single instance only, and the model does not fit on its {row.gpus} GPUs"
        return f"memory: does not fit on {int(ev['gpus'].max())} GPUs (the most the quota allows)"
    if not (fits & fast).any():
        best = ev.loc[fits, "achieved_tflops_per_gpu"].max()
        return (
            f"bandwidth: where the model fits, at most {best:.0f} TFLOPs/GPU < target "
            f"{scenario.target_tflops:g} ({row.fabric}, {row.internode_gbps or 0:g} Gbps)"
        )
    if need is not None and not (fits & fast & (ev["tokens_per_s"] >= need)).any():
        if multi_node_fabric(row) is None:
            what = "no inter-node fabric" if row.fabric == "none" else "inter-node bandwidth not in the catalog"
            return f"{what}: single instance only, too slow for the deadline"
        return f"deadline: at most {ev['tokens_per_s'].max():,.0f} tokens/s within quota < {need:,.0f} needed"
    gb = scenario.workload.global_batch
    ok = fits & fast & (ev["tokens_per_s"] >= need if need is not None else True)
    smallest = int(ev.loc[ok, "gpus"].min()) // row.gpus
    return (
        f"global batch {gb}: no instance count from {smallest} up gives a whole grad_accum at micro-batch {mb} "
        f"(at most {gb // (row.gpus * mb)} instances)"
    )


# ---------------------------------------------------------------- choice


def _price(row: CloudRow, pricing: str) -> float | None:
    return getattr(row, PRICINGS[pricing])


def best_mix(row: CloudRow, n: int, pricings: list[str], spot_share: float) -> tuple[float, dict[str, int]]:
    """Cheapest hourly cost of n instances: fill the cheapest pricing first, spot up to its share."""
    rates = sorted((_price(row, p), p) for p in pricings if _price(row, p) is not None)
    left, mix, cost = n, {}, 0.0
    for rate, p in rates:
        take = min(left, math.floor(spot_share * n + 1e-9)) if p == "spot" else left
        if take:
            mix[p], cost, left = take, cost + take * rate, left - take
    return (cost, mix) if left == 0 else (math.inf, {})


def brute_force(options: list[Option], scenario: Scenario) -> tuple[float, int, int] | None:
    """(cost, option index, count) by enumeration: the reference for the MILP."""
    found = None
    for i, o in enumerate(options):
        for n in o.counts:
            hourly, _ = best_mix(o.row, n, scenario.cloud.pricing, scenario.cloud.spot_share_max)
            cost = hourly * o.hours[n]
            if not math.isfinite(cost):
                continue
            if scenario.constraints.budget_usd is not None and cost > scenario.constraints.budget_usd + 1e-6:
                continue
            if found is None or cost < found[0] - 1e-6:
                found = (cost, i, n)
    return found


@dataclass(frozen=True)
class CloudChoice:
    option: Option
    count: int
    mix: dict[str, int]
    cost_usd: float
    status: str


def solve_cloud(options: list[Option], scenario: Scenario, solver: str = "cbc") -> CloudChoice | None:
    """The MILP of the module docstring; None when infeasible (budget)."""
    if not options:
        return None
    problem = pulp.LpProblem("cloud_plan", pulp.LpMinimize)
    pricings, share = scenario.cloud.pricing, scenario.cloud.spot_share_max
    picks, splits, cost_terms = {}, {}, []
    for i, o in enumerate(options):
        for n in _useful_counts(o, scenario):
            y = new_var(problem, var_name("y", i, n), 0, 1, "Binary")
            picks[(i, n)] = y
            x = {p: new_var(problem, var_name("x", i, n, p), 0, n) for p in pricings if _price(o.row, p) is not None}
            problem += pulp.lpSum(x.values()) == n * y, var_name("count", i, n)
            if "spot" in x:
                problem += x["spot"] <= math.floor(share * n + 1e-9) * y, var_name("spot", i, n)
            splits[(i, n)] = x
            cost_terms += [o.hours[n] * _price(o.row, p) * v for p, v in x.items()]
    problem += pulp.lpSum(picks.values()) == 1, "one_offering"
    total = pulp.lpSum(cost_terms)
    problem += total
    if scenario.constraints.budget_usd is not None:
        problem += total <= scenario.constraints.budget_usd, "budget"
    status = problem.solve(make_solver(solver, None, None))
    if pulp.LpStatus[status] == "Infeasible":
        return None
    if problem.sol_status not in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible):
        from planner.errors import SolverError

        raise SolverError(f"solver {solver} ended with status {pulp.LpStatus[status]!r}; try --solver highs")
    ((i, n),) = [key for key, y in picks.items() if round(pulp.value(y) or 0) == 1]
    mix = {p: int(round(pulp.value(v))) for p, v in splits[(i, n)].items() if round(pulp.value(v) or 0)}
    return CloudChoice(options[i], n, mix, float(pulp.value(total)), "optimal")


def _useful_counts(o: Option, scenario: Scenario) -> list[int]:
    """Counts that can beat the smallest one. Instance-hours n*T(n) never fall as n grows (per-instance
    throughput never rises), so once n*T(n) times the cheapest possible blended rate exceeds the best
    integer mix at the smallest count, no larger count can win: an exact bound, not a heuristic."""
    pricings, share = scenario.cloud.pricing, scenario.cloud.spot_share_max
    first = o.counts[0]
    best = best_mix(o.row, first, pricings, share)[0] * o.hours[first]
    rates = {p: _price(o.row, p) for p in pricings if _price(o.row, p) is not None}
    spot = rates.pop("spot", None)
    other = min(rates.values(), default=math.inf)
    if spot is None:
        blended = other
    elif other == math.inf:
        blended = spot if share >= 1 else math.inf
    else:
        blended = min(other, share * spot + (1 - share) * other)
    if best == math.inf:
        return o.counts
    return [n for n in o.counts if n * o.hours[n] * blended <= best + 1e-6]


# ---------------------------------------------------------------- ranking


def ranking(options: list[Option], scenario: Scenario) -> pd.DataFrame:
    """Per offering and pure pricing model, its cheapest micro-batch and count: cost, days, $/PFLOP-day."""
    records = []
    for o in options:
        for p in scenario.cloud.pricing:
            rate = _price(o.row, p)
            if rate is None or (p == "spot" and scenario.cloud.spot_share_max < 1):
                continue
            n = o.counts[0]
            f = o.figures[n]
            cost = rate * n * o.hours[n]
            model_pflops = f["model_flops_per_gpu"] / f["t_step_s"] * f["gpus"] / 1e15
            records.append(
                {
                    "provider": o.row.provider,
                    "instance": o.row.instance,
                    "region": o.row.region,
                    "gpu": o.row.gpu,
                    "pricing": p,
                    "instances": n,
                    "gpus": int(f["gpus"]),
                    "micro_batch": o.micro_batch,
                    "fabric": o.row.fabric,
                    "tflops_per_gpu": f["achieved_tflops_per_gpu"],
                    "days": o.hours[n] / 24 if scenario.requirement.tokens else None,
                    "usd_per_h": rate * n,
                    "cost_usd": cost,
                    "usd_per_pflop_day": rate * n * 24 / model_pflops,
                }
            )
    frame = pd.DataFrame(records)
    if frame.empty:
        return frame
    frame = frame.sort_values("cost_usd").drop_duplicates(["provider", "instance", "region", "pricing"])
    return frame.reset_index(drop=True)


# ---------------------------------------------------------------- the whole answer


def run(catalog: Catalog, scenario: Scenario, calibration: Calibration, solver: str = "cbc") -> dict:
    """Ranking, exclusions and the MILP's choice, as plain data (JSON-ready)."""
    options, excluded = build_options(catalog, scenario, calibration)
    table = ranking(options, scenario)
    choice = solve_cloud(options, scenario, solver)
    return {
        "scenario": scenario.name,
        "cost_basis": "cost to train" if scenario.requirement.tokens else "cost per hour",
        "choice": describe(choice, scenario) if choice else None,
        "ranking": table.to_dict("records"),
        "excluded": excluded,
        "calibration": calibration.source,
    }


def describe(choice: CloudChoice, scenario: Scenario) -> dict:
    o, n = choice.option, choice.count
    f = o.figures[n]
    hourly = sum(_price(o.row, p) * k for p, k in choice.mix.items())
    return {
        "provider": o.row.provider,
        "instance": o.row.instance,
        "region": o.row.region,
        "gpu": o.row.gpu,
        "instances": n,
        "gpus": int(f["gpus"]),
        "micro_batch": o.micro_batch,
        "pricing_mix": choice.mix,
        "fabric": o.row.fabric,
        "internode_gbps": o.row.internode_gbps,
        "usd_per_h": hourly,
        "hours": o.hours[n] if scenario.requirement.tokens else None,
        "days": o.hours[n] / 24 if scenario.requirement.tokens else None,
        "cost_usd": choice.cost_usd,
        "tflops_per_gpu": f["achieved_tflops_per_gpu"],
        "mfu": f["mfu"],
        "tokens_per_s": f["tokens_per_s"],
        "memory_per_gpu_gib": f["memory_per_gpu_gib"],
        "binding": f["binding"],
        "status": choice.status,
    }


HOURS_PER_MONTH = 730.0


def compare(plan_cost: dict, plan_tokens_per_s: float, cloud_choice: dict, scenario: Scenario) -> dict:
    """Buying vs renting the same throughput: months of full use after which buying is cheaper."""
    o = scenario.objective
    energy_per_h = plan_cost["draw_kw"] * o.pue * o.usd_per_kwh
    rent_per_h = cloud_choice["usd_per_h"] * plan_tokens_per_s / cloud_choice["tokens_per_s"]
    saving_per_month = (rent_per_h - energy_per_h) * HOURS_PER_MONTH
    months = plan_cost["capex_usd"] / saving_per_month if saving_per_month > 0 else None
    return {
        "purchase_capex_usd": plan_cost["capex_usd"],
        "purchase_energy_usd_per_h": energy_per_h,
        "purchase_tco_usd": plan_cost["tco_usd"],
        "rent_same_throughput_usd_per_h": rent_per_h,
        "break_even_months": months,
        "cloud": cloud_choice,
        "note": (
            f"buying pays off after {months:.1f} months of full use"
            if months is not None
            else "renting costs less per hour than the purchase's energy: buying never pays off"
        ),
    }


def cheapest_per_token(
    catalog: Catalog, scenario: Scenario, calibration: Calibration, tokens_per_s: float
) -> dict | None:
    """The offering, count and pricing with the lowest cost per token among those reaching `tokens_per_s`
    (else among all), whatever the deadline: what renting the purchase's throughput would cost when no
    offering meets the scenario itself."""
    relaxed = scenario.model_copy(
        update={
            "requirement": scenario.requirement.model_copy(
                update={"tokens": None, "days": None, "gpus": None, "min_tokens_per_s": 1.0}
            )
        }
    )
    options, _ = build_options(catalog, relaxed, calibration)
    rows = []
    for o in options:
        for n in o.counts:
            hourly, mix = best_mix(o.row, n, relaxed.cloud.pricing, relaxed.cloud.spot_share_max)
            if hourly < math.inf:
                rows.append((o.figures[n]["tokens_per_s"], hourly, CloudChoice(o, n, mix, hourly, "closest")))
    if not rows:
        return None
    reaching = [r for r in rows if r[0] >= tokens_per_s * (1 - 1e-9)]
    # reaching the purchase's throughput: cheapest per token; else the fastest (least extrapolation)
    _, _, closest = min(reaching, key=lambda r: r[1] / r[0]) if reaching else max(rows, key=lambda r: (r[0], -r[1]))
    described = describe(closest, relaxed)
    tokens = scenario.requirement.tokens
    if tokens:
        hours = tokens / described["tokens_per_s"] / SECONDS_PER_HOUR
        described.update(hours=hours, days=hours / 24, cost_usd=described["usd_per_h"] * hours)
    described["meets_requirement"] = False
    return described
