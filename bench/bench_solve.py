"""Solve time against the number of candidate configurations: the purchase MILP over the whole table (CBC, and
HiGHS when installed) against the exact priced table (every candidate at its smallest feasible node count,
numpy, as `planner plan` prices them). Not a test: run it by hand and quote the table.

    python bench/bench_solve.py                      # 100 .. 100,000 candidates
    python bench/bench_solve.py --sizes 100 1000     # a quick look

Candidates are drawn at random with the shape `planner.tables.buy.build` produces (node ranges, tiers,
breakout, catalog-like prices), so the MILP is the one `planner plan` solves, without its bounding presolve.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from planner.base.errors import SolverError
from planner.hardware import costing, fabric, sizing
from planner.inputs.scenario import Scenario
from planner.optimize import buy
from planner.tables.buy import PARAMS


def synthetic(count: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    ports = rng.choice([32, 36, 40, 64], count)
    tier = rng.choice([1, 2, 3], count, p=[0.3, 0.5, 0.2])
    over = np.where(tier > 1, rng.choice([1.0, 2.0], count), 1.0)
    n_lo = rng.integers(2, 64, count)
    frame = pd.DataFrame(
        {
            "server": rng.integers(0, 20, count).astype(str),
            "nic": rng.integers(0, 12, count).astype(str),
            "nics_per_node": rng.integers(1, 9, count),
            "fabric": rng.choice(["ib", "roce"], count),
            "switch": rng.integers(0, 10, count).astype(str),
            "micro_batch": rng.choice([1, 2, 4, 8], count),
            "tier": tier,
            "oversubscription": over,
            "switch_ports": ports,
            "breakout": rng.choice([1, 2], count),
            "endpoints_per_node": rng.integers(1, 9, count),
            "n_lo": n_lo,
            "n_hi": n_lo + rng.integers(0, 64, count),
            "node_usd": rng.uniform(150e3, 400e3, count).round(),
            "node_w": rng.uniform(6e3, 14e3, count).round(),
            "switch_usd": rng.uniform(15e3, 60e3, count).round(),
            "switch_w": rng.uniform(400, 3000, count).round(),
            "endpoint_usd": rng.uniform(0, 800, count).round(),
            "endpoint_w": rng.uniform(0, 10, count).round(),
            "port_usd": rng.uniform(0, 800, count).round(),
            "port_w": rng.uniform(0, 10, count).round(),
            "uplink_usd": rng.uniform(500, 2500, count).round(),
            "uplink_w": rng.uniform(0, 20, count).round(),
        }
    )
    cap = [
        fabric.max_down_ports(t, p, o) * b // e
        for t, p, o, b, e in zip(
            frame["tier"],
            frame["switch_ports"],
            frame["oversubscription"],
            frame["breakout"],
            frame["endpoints_per_node"],
            strict=True,
        )
    ]
    frame["n_hi"] = np.minimum(frame["n_hi"], cap)
    frame = frame.assign(**NEUTRAL, cage_endpoints=frame["breakout"])
    return frame[frame["n_lo"] <= frame["n_hi"]].reset_index(drop=True)


# Plain leaf-spine in rows, no racks, storage or management networks: the compute-fabric MILP alone.
NEUTRAL = dict(
    ports_per_cage=1, rail=False, rails=1, rail_endpoints=1, su_nodes=1, tor=False, rack_leaves=1,
    nodes_per_rack=4, racks_per_row=8, row_network_rack=False, usable_units=44, rack_w=40_800.0,
    pdus_compute=0, pdus_network=0, count_pdus=False, switch_units=1, storage_ports_per_node=0, storage_down=1,
    storage_up=0, storage_switch_ports=1, storage_cage_endpoints=1, storage_switch_units=0, storage_switch_w=0.0,
    inband_ports_per_node=0, inband_down=1, inband_switch_units=0, inband_switch_w=0.0, oob_ports_per_switch=0,
    ufm_count=0, ufm_units=0, ufm_w=0.0,
)  # fmt: skip


SCENARIO = Scenario.model_validate({"workload": {"params": "70B"}, "requirement": {"gpus": 8}, "target_tflops": 1})


def priced_minimum(frame: pd.DataFrame) -> float:
    """The cheapest candidate at its smallest node count, vectorised (what candidates._price computes)."""
    nodes = frame["n_lo"].to_numpy()
    q = sizing.quantities({c: frame[c].to_numpy() for c in PARAMS}, nodes)
    coef = {
        c: frame[c].to_numpy(float) for c in frame.columns if c.endswith(("_usd", "_w")) or c == "endpoints_per_node"
    }
    cost = costing.configuration_cost(coef, nodes, **costing.priced_quantities(q))
    return float(cost.capex_usd.min())


def timed(func):
    start = time.perf_counter()
    result = func()
    return result, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1_000, 10_000, 100_000])
    parser.add_argument("--time-limit", type=float, default=600.0, help="per MILP solve, seconds")
    args = parser.parse_args()
    solvers = ["cbc"] + (["highs"] if _highs() else [])
    print(
        f"{'candidates':>10}  {'priced table s':>14}  " + "  ".join(f"{s + ' MILP s':>12}" for s in solvers) + "  agree"
    )
    for size in args.sizes:
        frame = synthetic(size)
        reference, t_table = timed(lambda f=frame: priced_minimum(f))
        cells, agree = [], True
        for name in solvers:
            try:
                sol, t = timed(lambda f=frame, n=name: buy.optimize(f, SCENARIO, n, args.time_limit))
            except SolverError:  # no incumbent within the time limit (building the model counts too)
                cells.append(f"{'> limit':>12}")
                agree = False
                continue
            cells.append(f"{t:12.2f}")
            agree &= sol is not None and abs(sol.result.objective - reference) <= 1e-6 * reference
        verdict = "yes" if agree else ("n/a" if "> limit" in "".join(cells) else "NO")
        print(f"{len(frame):>10,}  {t_table:14.3f}  " + "  ".join(cells) + f"  {verdict}", flush=True)


def _highs() -> bool:
    from planner.optimize.solver import highs_available

    return highs_available()


if __name__ == "__main__":
    main()
