"""Draws per second of `planner sweep` on the shipped example, in this process and on local Dask clusters of 1
and 2 workers, and the projected time for 10,000 draws. Not a test: run it by hand.

    python bench/bench_sweep.py                  # 50 and 20,000 draws
    python bench/bench_sweep.py --draws 50 5000

Each figure is one sweep's wall and CPU seconds (this process's and its children's: Dask's workers), split into
the fixed part (the point plan, the purchases compared, the cluster's start) and the draws: the draw rate is
(draws_b - draws_a) / (seconds_b - seconds_a) between two sizes, so the fixed part cancels. The projection for
10,000 draws is fixed + 10,000 / rate. Then the fleet example's 20 futures (40 MILP solves) in this process and
on 2 workers, where the tasks are long enough for Dask's second worker to pay.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
EXAMPLE = ROOT / "examples" / "llama-70b-h100.yaml"
# the tight variant the tests use: free node counts, so every configuration is compared at 16 counts
TIGHT = {"workload__global_batch": None, "requirement__schedule_margin": 0}
FLEET, FUTURES = ROOT / "examples" / "fleet-startup.yaml", 20


def cpu_s() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(draws: int, workers: int, overrides: dict) -> tuple[float, float, int]:
    import planner

    wall, cpu = time.perf_counter(), cpu_s()
    result = planner.sweep(EXAMPLE, draws=draws, workers=workers, **overrides)
    return time.perf_counter() - wall, cpu_s() - cpu, len(result.choices)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, nargs=2, default=[50, 20000])
    args = parser.parse_args()
    small, large = args.draws
    import planner  # noqa: F401  (the import is not part of a sweep's time)

    print(f"planner sweep {EXAMPLE.relative_to(ROOT)}: {small:,} and {large:,} draws")
    print(f"{'scenario':<10} {'engine':<22} {'purchases':>9} {'draws/s':>9} {'fixed s':>8} {'10k draws s':>12}")
    for name, overrides in (("shipped", {}), ("tight", TIGHT)):
        for workers, label in ((0, "in this process"), (1, "Dask, 1 worker"), (2, "Dask, 2 workers")):
            wall_a, _, purchases = timed(small, workers, overrides)
            wall_b, _, _ = timed(large, workers, overrides)
            rate = (large - small) / max(wall_b - wall_a, 1e-9)
            fixed = wall_a - small / rate
            print(f"{name:<10} {label:<22} {purchases:>9,} {rate:>9,.0f} {fixed:>8.1f} {fixed + 10_000 / rate:>12.1f}")
    print(f"\nplanner sweep {FLEET.relative_to(ROOT)}: {FUTURES} futures x 2 policies (MILP solves)")
    for workers, label in ((0, "in this process"), (2, "Dask, 2 workers")):
        print(f"  {label:<22} {fleet_seconds(workers):6.1f} s wall")


def fleet_seconds(workers: int) -> float:
    from planner.answers.sweep import fleet_futures
    from planner.base.distributed import engine
    from planner.catalog.load import load_catalog
    from planner.inputs.fleet import load_fleet
    from planner.model.calibration import load_calibration

    spec = load_fleet(FLEET, {})
    catalog, calibration = load_catalog(list(spec.catalogs)), load_calibration(None)
    start = time.perf_counter()
    with engine(workers) as runner:
        fleet_futures(catalog, spec, calibration, FUTURES, 0, runner, str(FLEET))
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
