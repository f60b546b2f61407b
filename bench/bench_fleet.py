"""Build and solve time of the fleet MILP as the fleet grows (workloads x quarters x server SKUs), for CBC and
HiGHS, beside the size of the space a brute force would have to list. Not a test: run it by hand and quote
the table (docs/fleet.md section 7).

    python bench/bench_fleet.py                              # the default ladder, both solvers
    python bench/bench_fleet.py --sizes 10x12x10 --solvers highs
    python bench/bench_fleet.py --time-limit 60 --gap 0.01 --threads 2

Fleets are generated from the shipped catalog with a fixed seed: about 70% training jobs (Llama and GPT-3
sizes, 1-4 quarter windows, some with late penalties) and 30% inference services (growing demand), the
first S catalog servers for sale (some with volume tiers, stock caps and lead times), an installed A100
cluster, a site whose power steps up halfway (10 to 20 MW per 50 workloads), and cloud burst with quotas.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from planner.base.errors import SolverError
from planner.catalog.load import load_catalog
from planner.inputs.fleet import Fleet, check
from planner.model.calibration import Calibration
from planner.optimize import fleet as milp
from planner.optimize.fleet import solve_model
from planner.optimize.solver import highs_available
from planner.tables import fleet as ft

SIZES = ["2x2x2", "4x4x4", "6x8x6", "8x12x8", "10x12x10", "12x16x12"]
# newest first, so small fleets still get current hardware
SERVERS = [
    "Supermicro AS-8125GS-TNHR HGX H100 (street 2024-03)",
    "HGX H200 8-GPU system (street 2025-01)",
    "DGX B200 (Delta list EU 2024-12)",
    "HGX A100 8-GPU 640GB server (street 2023-09)",
    "DGX H100 (Delta list EU 2023-12)",
    "HGX H100 node incl. 8x400G IB (Thinkmate quote 2024-08)",
    "DGX A100 640GB (list 2021-06)",
    "DGX H100 (reseller 2025-03)",
    "DGX A100 320GB (list 2020-05)",
    "NVIDIA DGX-1 with V100 (estimate)",
    "NVIDIA DGX-2 (list 2018-03)",
]
# each model at about the tokens it was published with (x 0.5-1.5), so runs take tens to hundreds of nodes
TRAINING = [("Llama-3-8B", 15e12), ("Llama-2-13B", 2e12), ("Llama-3-70B", 15e12), ("Llama-2-70B", 2e12)]
SERVING = [("Llama-3-70B", 150e3), ("Llama-3-8B", 600e3), ("Llama-2-13B", 300e3)]
# demand grows 10% a quarter over 20 quarters (6.7x); a longer horizon grows about as much in all (40: 5% a
# quarter, 7.0x), not 1.1^40 = 45x: no site and quota would serve that
GROWTH_PER_QUARTER, GROWTH_QUARTERS = 0.1, 20
# the site: 10 MW, 20 MW from halfway, for up to 50 workloads and in proportion beyond; 100 workloads on the
# 50's site is a feasibility puzzle, not a fleet (its LP uses all 20 MW in the last 7 of 40 quarters, and
# CBC finds no plan in 120 s: docs/fleet.md section 9)
SITE_KW, SITE_WORKLOADS = 10_000, 50


def synthetic(workloads: int, periods: int, skus: int, seed: int = 0) -> Fleet:
    rng = np.random.default_rng(seed)
    services = max(1, round(0.3 * workloads)) if workloads > 1 else 0
    training = []
    for i in range(workloads - services):
        model, tokens = TRAINING[i % len(TRAINING)]
        start = int(rng.integers(1, max(2, periods - 1)))
        deadline = min(periods, start + int(rng.integers(1, 4)))
        job = {
            "name": f"train-{i}-{model}",
            "workload": {"model": model, "micro_batches": [1, 2]},
            "tokens": tokens * float(rng.uniform(0.5, 1.5)),
            "start": start,
            "deadline": deadline,
            "target_tflops": 150,
        }
        if i % 3 == 2:
            job["late_penalty_usd"] = 2e6
        training.append(job)
    inference = [
        {
            "name": f"serve-{i}-{SERVING[i % len(SERVING)][0]}",
            "model": SERVING[i % len(SERVING)][0],
            "tokens_per_s": SERVING[i % len(SERVING)][1] * float(rng.uniform(0.5, 1.5)),
            "growth_per_period": GROWTH_PER_QUARTER * min(1.0, GROWTH_QUARTERS / periods),
            "start": int(rng.integers(1, max(2, periods // 2 + 1))),
            "max_ms_per_token": 50,
        }
        for i in range(services)
    ]
    servers = SERVERS[:skus]
    terms = []
    for i, name in enumerate(servers):
        t = {"server": name}
        if i % 3 == 0:
            t["tiers"] = [{"units": 16, "discount": 0.05}, {"units": 64, "discount": 0.10}]
        if i % 3 == 1:
            t["stock"] = 64
            t["lead_time_periods"] = 1 if periods > 2 else 0
        terms.append(t)
    half = max(1, periods // 2)
    kw = SITE_KW * max(1.0, workloads / SITE_WORKLOADS)
    power = [{"from": 1, "kw": kw}] + ([{"from": half + 1, "kw": 2 * kw}] if periods > 1 else [])
    data = {
        "name": f"synthetic {workloads} workloads x {periods} quarters x {skus} SKUs",
        "horizon": {"periods": periods, "start": "2026Q1"},
        "training": training,
        "inference": inference,
        "installed": [{"server": "DGX A100 640GB (list 2021-06)", "count": 64, "age_years": 2}],
        "buy": {"servers": servers, "terms": terms},
        "site": {"power": power},
        "cloud": {"providers": ["AWS", "Nebius"], "quota": {"p5.48xlarge": 64}},
    }
    fleet = Fleet.model_validate(data)
    check(fleet)
    return fleet


def measure(fleet: Fleet, catalog, solver: str, time_limit: float, gap: float, threads: int | None) -> dict:
    start = time.perf_counter()
    data = ft.build(catalog, fleet, Calibration.default())
    tables_s = time.perf_counter() - start
    model = milp.create_model(data)
    build_s = time.perf_counter() - start
    row = {
        "tables_s": tables_s,
        "build_s": build_s,
        "log10_space": ft.enumeration_log10(data),
        "variables": len(model.problem.variables()),
        "constraints": model.problem.numConstraints(),
        "columns": len(model.run),
        "pools": len(data.pools),
    }
    try:
        solved = solve_model(model, solver, time_limit, gap, threads or os.cpu_count())
    except SolverError:  # stopped at the time limit without a plan: a row of the table, not a traceback
        return {**row, "solve_s": time_limit, "status": "no plan", "gap": None, "objective": None}
    result = solved.result
    return {**row, "solve_s": result.seconds, "status": result.status, "gap": solved.gap_proven,
            "objective": result.objective}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", nargs="+", default=SIZES, help="WORKLOADSxQUARTERSxSKUS, e.g. 10x12x10")
    parser.add_argument("--solvers", nargs="+", default=["cbc", "highs"])
    parser.add_argument("--time-limit", type=float, default=120.0)
    parser.add_argument("--gap", type=float, default=0.01)
    parser.add_argument("--threads", type=int, default=None, help="solver threads (default: every core)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    solvers = [s for s in args.solvers if s != "highs" or highs_available()]
    catalog = load_catalog()
    header = (
        f"{'fleet':>10} {'solver':>6} {'vars':>7} {'cons':>7} {'runs':>6} {'pools':>5} {'build s':>8} "
        f"{'solve s':>8} {'status':>9} {'gap':>7} {'objective $':>14} {'enum. space':>12}"
    )
    print(header)
    for size in args.sizes:
        workloads, periods, skus = (int(x) for x in size.lower().split("x"))
        fleet = synthetic(workloads, periods, skus, args.seed)
        for solver in solvers:
            r = measure(fleet, catalog, solver, args.time_limit, args.gap, args.threads)
            gap = "n/a" if r["gap"] is None else f"{r['gap']:.2%}"
            objective = f"{r['objective']:,.0f}" if r["objective"] is not None else "-"
            print(
                f"{size:>10} {solver:>6} {r['variables']:>7,} {r['constraints']:>7,} {r['columns']:>6,} "
                f"{r['pools']:>5} {r['build_s']:>8.2f} {r['solve_s']:>8.2f} {r['status']:>9} {gap:>7} "
                f"{objective:>14} {'1e' + format(r['log10_space'], '.0f'):>12}",
                flush=True,
            )


if __name__ == "__main__":
    main()
