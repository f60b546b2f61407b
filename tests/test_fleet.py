"""planner fleet: the fleet file's one-line errors, hand-worked costs, the MILP against an independent brute
force on tiny fleets, what binds, relaxations when infeasible, the CLI, JSON and the workbook."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import zipfile

import numpy as np
import openpyxl
import pandas as pd
import pulp
import pytest
from reference.fleet import brute_force
from support import GPU, NICS, OPTICS, SERVER, SWITCHES, make_catalog

from planner.answers.fleet import run
from planner.answers.fleet_readout import REPEAT_THREADS, REPEAT_TIME, repeat_note
from planner.base.errors import ScenarioError
from planner.base.resources import examples_dir
from planner.inputs.fleet import SECONDS_PER_PERIOD, Fleet, check
from planner.model.calibration import Calibration
from planner.optimize import fleet as milp
from planner.optimize.fleet import solve_model
from planner.optimize.solver import SolveResult
from planner.tables import fleet as ft

CAL = Calibration(gemm_efficiency={"other": 0.5}, eta_net={"ib": 0.9, "roce": 0.8}, overlap=0.0)
GPU2 = dict(GPU, name="T2", peak_bf16_tflops=200, hbm_gb_per_s=3000, tdp_w=700)
SERVER2 = dict(SERVER, name="S8B", gpu="T2", price_usd=180000, power_w=7000)
CLOUD = dict(provider="Cl", instance="c8", region="r1", gpu="T1", gpus=8, ondemand_usd_per_h=30, fabric="none")


@pytest.fixture(scope="module")
def catalog():
    return make_catalog(
        gpus=[GPU, GPU2], servers=[SERVER, SERVER2], nics=NICS, switches=SWITCHES, optics=OPTICS, cloud=[CLOUD]
    )


def job(name="a", tokens=4e11, start=1, deadline=None, **extra) -> dict:
    out = {"name": name, "workload": {"params": "1B", "seq_len": 1024, "micro_batches": [8]}, "tokens": tokens}
    out.update(start=start, **({"deadline": deadline} if deadline else {}), **extra)
    return out


def fleet(**over) -> Fleet:
    """A tiny fleet over the test catalog: S8 (T1) and S8B (T2) for sale, one network per shape, pools of at
    most 4 nodes, no energy, colocation, discounting or residual value unless asked."""
    data = {
        "horizon": {"periods": 1},
        "training": [job()],
        "buy": {"servers": ["S8", "S8B"], "standalone_pools": False, "max_nodes_per_pool": 4, "residual": "none"},
        "costs": {"discount_rate": 0, "usd_per_kwh": 0, "colocation_usd_per_kw_month": 0},
        "cloud": {"allowed": False},
    }
    for key, value in over.items():
        section, _, leaf = key.partition("__")
        if leaf:
            data.setdefault(section, {})[leaf] = value
        else:
            data[section] = value
    spec = Fleet.model_validate(data)
    check(spec)
    return spec


def solve(catalog, spec: Fleet):
    data = ft.build(catalog, spec, CAL)
    solved = solve_model(milp.create_model(data), "cbc", None, 0.0, threads=1)
    return data, solved


# ---------------------------------------------------------------- hand-worked


def test_hand_worked_two_nodes_on_one_switch(catalog):
    """The job needs 2 nodes of S8 for its one quarter. Its pool is the fastest NIC configuration the designer
    (planner/hardware/designs.py) connects: 2 x N100 per node on the 4-port 100G RoCE switch SW-B (2 x N200 connects to
    nothing). With leaves in the rows the runs are longer than a 3 m DAC, so links are optics. By hand:
      nodes    2 x (S8 $100,000 + 2 x N100 $1,000 + 2 x (T100 $100 + F100 $10))   = $204,440
      fabric   4 NIC ports -> 4 down-ports in 4 cages: one SW-B                     =   $2,000
      cages    one T100 per switch cage, 4 x $100                                   =     $400
    total $206,840 (no energy, colocation, discounting or residual value in this fleet)."""
    one_node = _tokens_per_quarter(catalog, nodes=1)
    spec = fleet(training=[job(tokens=1.2 * one_node)], buy__servers=["S8"])
    data, solved = solve(catalog, spec)
    pool = data.pools.iloc[0]
    assert (pool["nic"], pool["nics_per_node"], pool["switch"]) == ("N100", 2, "SW-B")
    assert solved.result.status == "optimal"
    assert solved.result.objective == pytest.approx(206_840.0)
    m = solved.model
    assert [round(x.value()) for x in m.buy.values()] == [2]
    assert {k: round(v.value()) for k, v in m.fabric[(0, 1)].items()} == {"D": 4, "K": 4, "L": 1, "S": 0, "U": 0}


def test_hand_worked_energy_colocation_and_residual(catalog):
    """The same purchase with energy at $0.10/kWh (PUE 1), colocation at $184.06/kW-month and straight-line
    residual value over 5 years (20 quarters): after one quarter 19/20 of the capex is credited back.
    A node is 5,000 W + 2 NICs x 10 W + 2 NIC-side T100 x 2 W = 5,024 W; the network 50 W + 4 cages x 2 W.
      capex     $206,840 x (1 - 19/20)                                          = $10,342.00
      energy    (0.75 x 2 x 5,024 W + 58 W) x 2,190 h x $0.10/kWh              =  $1,663.09
      colo      (2 x 5,024 + 58) W = 10.106 kW x $184.06 x 3 months            =  $5,580.33
    """
    one_node = _tokens_per_quarter(catalog, nodes=1)
    spec = fleet(
        training=[job(tokens=1.2 * one_node)],
        buy__servers=["S8"],
        buy__residual="straight_line",
        costs={"discount_rate": 0, "usd_per_kwh": 0.1, "pue": 1.0, "colocation_usd_per_kw_month": 184.06},
    )
    _, solved = solve(catalog, spec)
    capex = 206_840 * (1 - 19 / 20)
    energy = (0.75 * 2 * 5024 + 58) * 2190 * 0.1 / 1e3
    colo = (2 * 5024 + 58) / 1e3 * 184.06 * 3
    assert solved.result.objective == pytest.approx(capex + energy + colo, rel=1e-9)
    assert energy == pytest.approx(1663.086) and colo == pytest.approx(5580.3311, rel=1e-6)


def _tokens_per_quarter(catalog, nodes: int) -> float:
    """What `nodes` S8 nodes train in a quarter: the performance model's rate, read from the options table
    (probed with a job just too big for one node fewer)."""
    tokens = 1e9 if nodes == 1 else 1.01 * _tokens_per_quarter(catalog, nodes - 1)
    options = ft.build(catalog, fleet(training=[job(tokens=tokens)], buy__servers=["S8"]), CAL).options
    smallest = options.sort_values("n").iloc[0]
    assert int(smallest["n"]) == nodes
    return float(smallest["tokens_per_s"] * SECONDS_PER_PERIOD)


def test_options_are_the_smallest_node_count_per_number_of_quarters(catalog):
    spec = fleet(training=[job(tokens=3 * _tokens_per_quarter(catalog, 1))], horizon={"periods": 4})
    options = ft.build(catalog, spec, CAL).options
    s8 = options[options["resource"] == 0].sort_values("n")
    assert list(s8["n"]) == sorted(set(s8["n"])) and list(s8["periods"]) == sorted(s8["periods"], reverse=True)
    assert int(s8["n"].iloc[0]) == 1 and int(s8["periods"].iloc[0]) == 3


# ---------------------------------------------------------------- the MILP equals a brute force


def random_fleet(seed: int) -> Fleet:
    """2 jobs, 2 SKUs, 2 quarters, and a random mix of tiers, stock, lead time, site power, late penalties,
    discounting, residual value, energy, an installed node, cloud burst and a small inference service."""
    rng = np.random.default_rng(seed)
    quarter = 3.9e11  # about one S8 node-quarter of the 1B model
    jobs = []
    for i in range(2):
        start = int(rng.integers(1, 3))
        deadline = int(rng.integers(start, 3))
        extra = {}
        if rng.random() < 0.35:  # a soft deadline in the first quarter: slipping into the second may pay
            start = deadline = 1
            extra = {"late_penalty_usd": float(rng.choice([5e3, 5e4, 3e5]))}
        jobs.append(
            job(f"job{i}", tokens=float(rng.uniform(0.3, 3.5)) * quarter, start=start, deadline=deadline, **extra)
        )
    terms = []
    if rng.random() < 0.5:
        kind = str(rng.choice(["all_units", "incremental"]))
        terms.append(
            {"server": "S8", "tier_kind": kind, "tiers": [{"units": int(rng.integers(2, 4)), "discount": 0.1}]}
        )
    if rng.random() < 0.5:
        terms.append({"server": "S8B", "stock": int(rng.integers(1, 4)), "lead_time_periods": int(rng.integers(0, 2))})
    data = {
        "training": jobs,
        "horizon": {"periods": 2},
        "buy__terms": terms,
        "buy__residual": str(rng.choice(["none", "straight_line"])),
        "costs": {
            "discount_rate": float(rng.choice([0.0, 0.1])),
            "usd_per_kwh": float(rng.choice([0.0, 0.1])),
            "colocation_usd_per_kw_month": float(rng.choice([0.0, 150.0])),
        },
    }
    if rng.random() < 0.4:
        data["site"] = {"power": [{"from": 1, "kw": float(rng.choice([12, 25, 40]))}]}
    if rng.random() < 0.4:
        data["installed"] = [{"server": "S8", "count": int(rng.integers(1, 3)), "nic": "N100", "nics_per_node": 2,
                              "switch": "SW-B", "fabric": "roce"}]  # fmt: skip
    if rng.random() < 0.5:
        data["cloud"] = {"allowed": True, "quota": {"c8": int(rng.integers(1, 3))}}
        if rng.random() < 0.5:
            data["inference"] = [{"name": "svc", "params": "1B", "tokens_per_s": float(rng.uniform(1e3, 4e4)),
                                  "start": 2, "tokens_per_s_per_gpu": 2000}]  # fmt: skip
    if rng.random() < 0.3:
        data["buy__life_years"] = 0.25  # bought servers retire after one quarter
    return fleet(**data)


def _compare(catalog, seed: int) -> str:
    """The MILP against the brute force on one random fleet: 'compared' (both found the optimum),
    'infeasible' (both found none) or 'unbuildable' (a job no configuration can finish: its one-line error is
    tested elsewhere)."""
    spec = random_fleet(seed)
    try:
        data = ft.build(catalog, spec, CAL)
    except ScenarioError:
        return "unbuildable"
    solved = solve_model(milp.create_model(data), "cbc", None, 0.0, threads=1)
    reference = brute_force(data)
    if reference is None:
        assert solved.result.status == "infeasible", f"seed {seed}"
        return "infeasible"
    assert solved.result.solved, f"seed {seed}: brute force found {reference:,.2f}"
    assert solved.result.objective == pytest.approx(reference, rel=1e-7, abs=1e-4), f"seed {seed}"
    return "compared"


# The seeds are fixed, and so is how many of their fleets have a plan to compare (7 of the first 10, 42 of the
# next 50; the rest infeasible, which the MILP must agree with): a generator or model that drifts to infeasible
# or unbuildable fleets fails the floor instead of comparing nothing.
FLOOR_FIRST_10, FLOOR_NEXT_50 = 6, 38


def test_milp_equals_brute_force_on_tiny_fleets(catalog):
    outcomes = [_compare(catalog, seed) for seed in range(10)]
    assert outcomes.count("compared") >= FLOOR_FIRST_10, outcomes


@pytest.mark.slow
def test_milp_equals_brute_force_on_more_tiny_fleets(catalog):
    outcomes = [_compare(catalog, seed) for seed in range(10, 60)]
    assert outcomes.count("compared") >= FLOOR_NEXT_50, outcomes


def test_brute_force_sees_what_the_milp_sees(catalog):
    """The reference is not vacuous: on a fleet whose answer is known it finds the hand-worked $206,840."""
    spec = fleet(training=[job(tokens=1.2 * _tokens_per_quarter(catalog, 1))], buy__servers=["S8"])
    assert brute_force(ft.build(catalog, spec, CAL)) == pytest.approx(206_840.0)


def _optimum(catalog, seed: int):
    """The data of random fleet `seed` and its brute-force optimum (None: unbuildable or no plan)."""
    try:
        data = ft.build(catalog, random_fleet(seed), CAL)
    except ScenarioError:
        return None, None
    return data, brute_force(data)


def test_a_plan_at_a_gap_is_within_its_proven_gap_of_the_optimum(catalog):
    """At 20% asked, the LP-guided start's plan is taken as soon as it is within 20% of the LP bound: every
    plan costs at least the brute-force optimum and at most its proven gap above it (the gap is a proof)."""
    checked = 0
    for seed in range(12):
        data, best = _optimum(catalog, seed)
        if best is None:
            continue
        solved = solve_model(milp.create_model(data), "cbc", None, 0.2, threads=1)
        cost = solved.result.objective
        assert cost >= best - 1e-4, f"seed {seed}"
        assert (cost - best) / cost <= solved.gap_proven + 1e-9 <= 0.2 + 1e-9, f"seed {seed}"
        checked += 1
    assert checked >= FLOOR_FIRST_10


def test_the_lp_guided_start_bounds_every_plan_and_leaves_the_model_as_it_was(catalog):
    """The LP bound is below the optimum; a start's plan (there is one when the LP runs a job whole) is a
    plan, above it; and the runs it fixed are free again after."""
    plans = 0
    for seed in range(10):
        data, best = _optimum(catalog, seed)
        if best is None:
            continue
        model = milp.create_model(data)
        bounds = {v.name: (v.lowBound, v.upBound) for v in model.problem.variables()}
        start = milp.lp_guided_start(model, "cbc", None, 0.01, threads=1)
        assert start.lp_bound <= best + 1e-4, f"seed {seed}"
        assert {v.name: (v.lowBound, v.upBound) for v in model.problem.variables()} == bounds
        if start.plan is not None:
            plan, plans = start.plan.result.objective, plans + 1
            assert plan >= best - 1e-4 and start.plan.gap_proven == pytest.approx((plan - start.lp_bound) / plan)
    assert plans >= 3


def test_when_the_lp_runs_leave_no_plan_in_time_the_start_rounds_the_lp_purchases(catalog, monkeypatch):
    """Where the site's power binds, CBC may find no plan with the LP's whole runs fixed in its share of the
    time: the start then searches with every purchase also between the floor and the ceiling of the LP's.
    Its plan keeps to those bounds (the LP's values from a separate LP solve), costs at least the brute-force
    optimum, and the model's own bounds come back."""
    from planner.optimize.solver import solve as solve_problem

    real, plans = milp._restricted, 0
    for seed in range(10):
        data, best = _optimum(catalog, seed)
        if best is None:
            continue
        lp_model = milp.create_model(data)
        solve_problem(lp_model.problem, "cbc", None, threads=1, lp=True)
        lp_buys = {key: x.varValue or 0.0 for key, x in lp_model.buy.items()}
        searched = []

        def runs_find_nothing(model, solver, bounds, time_limit_s, gap, threads, searched=searched):
            searched.append(bounds)
            return None if len(searched) == 1 else real(model, solver, bounds, time_limit_s, gap, threads)

        monkeypatch.setattr(milp, "_restricted", runs_find_nothing)
        model = milp.create_model(data)
        own = {v.name: (v.lowBound, v.upBound) for v in model.problem.variables()}
        start = milp.lp_guided_start(model, "cbc", None, 0.01, threads=1)
        assert {v.name: (v.lowBound, v.upBound) for v in model.problem.variables()} == own, f"seed {seed}"
        if start.plan is None:
            continue
        assert len(searched) == 2 and not any(x in searched[0] for x in model.buy.values())
        for key, x in model.buy.items():
            low, up = math.floor(lp_buys[key] + 1e-6), math.ceil(lp_buys[key] - 1e-6)
            assert searched[1][x] == (low, up) and low <= round(start.values[x]) <= up, f"seed {seed} {key}"
        assert start.plan.result.objective >= best - 1e-4, f"seed {seed}"
        assert milp._start_note(start, len(data.jobs)).endswith(" jobs fixed and its purchases rounded")
        plans += 1
    assert plans >= 3
    monkeypatch.setattr(milp, "_restricted", lambda *args: None)  # neither search finds a plan: it says so
    start = milp.lp_guided_start(milp.create_model(data), "cbc", None, 0.01, threads=1)
    assert start.plan is None and milp._start_note(start, len(data.jobs)) == (
        f"LP bound ${start.lp_bound:,.0f}; no plan in its share of the time with the {start.jobs_fixed} jobs it "
        "runs whole fixed and its purchases rounded"
    )


def _one_job_two_servers(catalog):
    """A job of 1.7 node-quarters, S8 or S8B: the LP buys a fraction of a node, so its bound is below the plans."""
    spec = fleet(training=[job(tokens=1.7 * _tokens_per_quarter(catalog, 1))], buy__servers=["S8", "S8B"])
    return ft.build(catalog, spec, CAL)


def test_when_the_full_search_finds_nothing_the_start_plan_stands(catalog, monkeypatch):
    """A start outside the gap asked goes on to the full search; if that stops without a plan (time), the
    start's plan is the answer, with its own variable values back (the search had overwritten them)."""
    data = _one_job_two_servers(catalog)
    start = milp.lp_guided_start(milp.create_model(data), "cbc", None, 1e-9, threads=1)
    assert start.plan.gap_proven > 1e-9  # the LP relaxation buys a fraction of a node: the full search runs
    real = milp._solve_logged

    def no_plan(model, solver, time_limit_s, gap, threads, warm_start=False):
        if not warm_start:
            return real(model, solver, time_limit_s, gap, threads)
        for var in model.problem.variables():
            var.varValue = 0.0
        raise milp.SolverError("no plan in the time left")

    monkeypatch.setattr(milp, "_solve_logged", no_plan)
    model = milp.create_model(data)
    solved = solve_model(model, "cbc", None, 1e-9, threads=1)
    assert solved.result.objective == pytest.approx(start.plan.result.objective)
    assert pulp.value(model.problem.objective) == pytest.approx(solved.result.objective)
    assert solved.gap_proven == pytest.approx(start.plan.gap_proven)


def test_no_plan_in_time_says_where_the_lp_uses_the_whole_site(catalog, monkeypatch):
    """When the search ends without a plan, the error says which quarters' site power the LP relaxation uses
    whole (why whole nodes are hard to fit there), and says nothing of it when the site has room."""
    from planner.optimize.solver import solve as solve_problem

    spec = fleet(training=[job(tokens=1.7 * _tokens_per_quarter(catalog, 1))], buy__servers=["S8", "S8B"])
    unbounded = milp.create_model(ft.build(catalog, spec, CAL))
    solve_problem(unbounded.problem, "cbc", None, threads=1, lp=True)
    lp_kw = pulp.value(unbounded.power_w[1]) / 1e3

    def nothing_found(*args, **kwargs):
        raise milp.SolverError("no plan in the time")

    monkeypatch.setattr(milp, "_solve_logged", nothing_found)
    for kw, says in ((lp_kw, True), (2 * lp_kw, False)):
        site = fleet(
            training=[job(tokens=1.7 * _tokens_per_quarter(catalog, 1))], buy__servers=["S8", "S8B"],
            site={"power": [{"from": 1, "kw": kw}]},
        )  # fmt: skip
        with pytest.raises(milp.SolverError) as err:
            solve_model(milp.create_model(ft.build(catalog, site, CAL)), "cbc", 10.0, 0.01, threads=1)
        assert str(err.value).startswith("no plan in the time")
        assert ("the LP relaxation uses all of the site's power in P1," in str(err.value)) is says


def test_where_the_lp_uses_the_whole_site_the_start_rounds_at_once(catalog, monkeypatch):
    """With the site full in the LP, the runs alone rarely give CBC a plan in time (bench_fleet 50x20x30 seed 3,
    docs/fleet.md section 9): the start searches the rounded neighbourhood only, in both searches' time."""
    from planner.optimize.solver import solve as solve_problem

    spec = fleet(training=[job(tokens=1.7 * _tokens_per_quarter(catalog, 1))], buy__servers=["S8", "S8B"])
    unbounded = milp.create_model(ft.build(catalog, spec, CAL))
    solve_problem(unbounded.problem, "cbc", None, threads=1, lp=True)
    full = fleet(
        training=[job(tokens=1.7 * _tokens_per_quarter(catalog, 1))], buy__servers=["S8", "S8B"],
        site={"power": [{"from": 1, "kw": pulp.value(unbounded.power_w[1]) / 1e3}]},
    )  # fmt: skip
    real, searched = milp._restricted, []

    def recorded(model, solver, bounds, time_limit_s, gap, threads):
        searched.append((bounds, time_limit_s))
        return real(model, solver, bounds, time_limit_s, gap, threads)

    monkeypatch.setattr(milp, "_restricted", recorded)
    model = milp.create_model(ft.build(catalog, full, CAL))
    start = milp.lp_guided_start(model, "cbc", 10.0, 0.01, threads=1)
    assert start.power_full == (1,) and start.rounded and len(searched) == 1
    bounds, limit = searched[0]
    assert all(x in bounds for x in model.buy.values())  # every purchase kept near the LP's
    share = milp.START_SHARE + milp.ROUND_SHARE * (1 - milp.START_SHARE)
    assert 0.9 * share * 10.0 < limit <= share * 10.0


def test_consecutive_periods_are_named_as_spans():
    assert milp._runs_of((3, 4, 5, 9, 11, 12)) == [(3, 5), (9, 9), (11, 12)]
    assert milp._runs_of(()) == []


def test_the_start_says_what_it_found(catalog):
    """One progress line: the LP bound, and the plan from the jobs the LP runs whole, or why there is none."""
    data = _one_job_two_servers(catalog)
    start = milp.lp_guided_start(milp.create_model(data), "cbc", None, 1e-9, threads=1)
    lines = []
    solve_model(milp.create_model(data), "cbc", None, 1e-9, threads=1, progress=lines.append)
    plan = start.plan
    assert lines == [
        f"LP bound ${start.lp_bound:,.0f}; a plan at ${plan.result.objective:,.0f} ({plan.gap_proven:.2%} above it) "
        "with 1 of 1 jobs fixed"
    ]
    lines.clear()
    solve_model(milp.create_model(data), "cbc", None, 0.0, threads=1, progress=lines.append)
    assert lines == []  # the optimum asked: no start


def test_cbc_takes_the_start_plan_as_its_mip_start(catalog, tmp_path):
    """The full search after an unproven start begins from the start's plan: CBC reads it and says so."""
    from planner.optimize.solver import solve as solve_problem

    model = milp.create_model(_one_job_two_servers(catalog))
    start = milp.lp_guided_start(model, "cbc", None, 1e-9, threads=1)
    log = tmp_path / "cbc.log"
    solve_problem(model.problem, "cbc", None, 0.0, log_path=str(log), threads=1, warm_start=True)
    cost = re.search(r"MIPStart provided solution with cost ([-+0-9.eE]+)", log.read_text())
    constant = model.problem.objective.constant  # CBC reads the model without the objective's constant term
    assert cost and float(cost.group(1)) + constant == pytest.approx(start.plan.result.objective, rel=1e-6)


def _bench_fleet():
    """bench/bench_fleet.py's generator (fleets of the shipped catalog's servers, jobs and services)."""
    import importlib.util

    path = os.path.join(os.path.dirname(__file__), os.pardir, "bench", "bench_fleet.py")
    spec = importlib.util.spec_from_file_location("bench_fleet", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_feasible_fleet_cut_short_by_the_time_limit_is_no_plan_not_infeasible():
    """CBC 2.10 prints "Pre-processing says infeasible or unbounded" when the time limit stops its cut
    generators: bench_fleet's 6x8x6 (a plan at 5 s) was "infeasible" at 0.01 s, and planner fleet then
    diagnosed a relaxation. At every short limit it is now a plan or no plan (SolverError), never infeasible."""
    from planner.catalog.load import load_catalog
    from planner.optimize.solver import SolverError
    from planner.optimize.solver import solve as solve_problem

    bench = _bench_fleet()
    model = milp.create_model(ft.build(load_catalog(), bench.synthetic(6, 8, 6, 0), Calibration.default()))
    said = []
    for limit_s in (0.005, 0.01, 0.015, 0.02, 0.03):
        try:
            said.append(solve_problem(model.problem, "cbc", limit_s, 0.01, threads=1).status)
        except SolverError as error:
            said.append("no plan")
            assert "raise --time-limit" in str(error)
    assert "infeasible" not in said, said
    assert solve_problem(model.problem, "cbc", 30, 0.01, threads=1).solved


def test_pre_processing_that_proves_infeasibility_within_the_limit_is_believed():
    """2x + 2y = 3 in integers: CBC's pre-processing proves it at once, inside the limit: infeasible."""
    from planner.optimize.solver import new_var
    from planner.optimize.solver import solve as solve_problem

    problem = pulp.LpProblem("odd", pulp.LpMinimize)
    x, y = (new_var(problem, n, 0, 10) for n in "xy")
    problem += x + y
    problem += 2 * x + 2 * y == 3
    assert solve_problem(problem, "cbc", 10, 0.0, threads=1).status == "infeasible"
    assert solve_problem(problem, "cbc", None, 0.0, threads=1).status == "infeasible"


# ---------------------------------------------------------------- serving capacity (the serving engine)

H100_LIKE = {"gpu": "H100-SXM", "hbm_gib": 80.0, "hbm_gb_per_s": 3350.0, "peak_tflops": 989.0, "gpus_per_node": 8}


def _served(name: str, *, batch: int, context: int, slo_ms: float | None):
    from planner.catalog.load import load_catalog
    from planner.inputs.fleet import InferenceService
    from planner.model.serving import served_model

    service = InferenceService(name="s", model=name, tokens_per_s=1e4, batch=batch, context_tokens=context,
                               max_ms_per_token=slo_ms)  # fmt: skip
    return load_catalog().model(name), served_model(load_catalog(), service)


def _kv_cap(row, gpus: int, context: int, batch: int) -> int:
    """Sequences at the full context that fit beside 1/g of the bf16 weights, by hand: (0.92 x 80 GiB - 1.5 GiB)
    per GPU, K and V of every layer for the GPU's share of the KV heads at 2 bytes."""
    free = (0.92 * 80 - 1.5) * 2**30 - row.params * 2 / gpus
    head = row.head_dim or row.hidden / row.heads
    per_token = row.layers * 2 * head * max(row.kv_heads / gpus, 1) * 2
    return min(batch, int(free // (context * per_token)))


def test_fleet_serving_is_the_engines_decode_step_worked_by_hand():
    """Llama-3-8B on one H100 (no scale-up bandwidth given: one-GPU replicas), 16 sequences at 4,096 tokens, no
    SLO: by hand, the step reads the bf16 weights at 0.75 x 3,350 GB/s (or 2 x params x 16 FLOPs at 0.45 x 989
    TFLOPs), then the 16 sequences' KV cache at the mean context 2,048 (32 layers x 8 KV heads x 128 x 2 (K, V)
    x 2 bytes per token), plus 2 ms of engine overhead; tokens/s = 16 / step."""
    from planner.model.serving import capacity

    row, model = _served("Llama-3-8B", batch=16, context=4096, slo_ms=None)
    hbm, flops = 3350e9 * 0.75, 989e12 * 0.45
    gemm = max(row.params * 2 / hbm, 2 * row.params * 16 / flops)
    kv_bytes = 16 * 2048 * (32 * 8 * 128 * 2 * 2)
    attention = max(kv_bytes / hbm, 32 * 4 * 32 * 128 * 2048 * 16 / flops)
    step_s = gemm + attention + 0.002
    machines = pd.DataFrame([H100_LIKE | {"scale_up_gpus": 8, "scale_up_gb_per_s": float("nan")}])
    got = capacity(model, machines).iloc[0]
    assert (got["layout"], got["replica_gpus"], got["batch"]) == ("tp", 1, 16)
    assert got["ms_per_token"] == pytest.approx(step_s * 1e3, rel=1e-9)
    assert got["tokens_per_s"] == pytest.approx(16 / step_s, rel=1e-9)


def test_fleet_serving_takes_the_best_replica_and_batch_of_every_one():
    """Llama-3-70B on an 8-GPU H100 domain at 8,192 tokens of context: against an enumeration of every
    tensor-parallel size and every batch from 1 to the memory cap (worked by hand, _kv_cap), the replica with
    the most tokens/s per GPU within the SLO, at each of three SLOs; below the fastest single step, none."""
    from planner.model import engine
    from planner.model.serving import capacity

    machines = pd.DataFrame([H100_LIKE | {"scale_up_gpus": 8, "scale_up_gb_per_s": 450.0}])
    for slo_ms in (20.0, 30.0, 60.0):
        row, model = _served("Llama-3-70B", batch=256, context=8192, slo_ms=slo_ms)
        best = (-1.0, None)
        for g in (1, 2, 4, 8):
            replica = engine.Replicas(*(np.array([v]) for v in (g, False, 2.0, 2.0, 80.0, 3350.0, 989.0, 450.0)))
            for b in range(1, _kv_cap(row, g, 8192, 256) + 1):
                step_s = float(engine.decode_step_s(model.shape, replica, np.array([b]), 4096)["step_s"][0])
                if step_s * 1e3 <= slo_ms and b / step_s / g > best[0] + 1e-12:
                    best = (b / step_s / g, (g, b))
        got = capacity(model, machines).iloc[0]
        assert best[1] is not None, slo_ms
        assert (got["replica_gpus"], got["batch"]) == best[1], slo_ms
        assert got["tokens_per_s"] / got["replica_gpus"] == pytest.approx(best[0], rel=1e-9)
    _, model = _served("Llama-3-70B", batch=256, context=8192, slo_ms=5.0)
    got = capacity(model, machines).iloc[0]
    assert got["tokens_per_s"] == 0 and got["reason"] == "no replica meets the latency SLO"


def test_a_moe_service_on_a_rack_scale_domain_takes_its_best_layout_of_every_one():
    """DeepSeek-V3 in fp8 on a 72-GPU NVLink domain (GB200 figures), at most 64 sequences per engine (a tp
    replica is one; an ep replica has one per GPU), 50 ms per token: against an enumeration of every
    tensor-parallel size that splits its 128 heads and every expert-parallel size of the domain, at every batch
    the KV cache holds (engine.max_sequences at the full context), the layout with the most tokens/s per GPU
    within the SLO."""
    from planner.model import engine
    from planner.model.serving import capacity

    row, model = _served("DeepSeek-V3", batch=64, context=4096, slo_ms=50.0)
    model = dataclasses.replace(model, weight_bytes=1.0)
    gpu = {"gpu": "GB200", "hbm_gib": 186.0, "hbm_gb_per_s": 8000.0, "peak_tflops": 2500.0}
    machines = pd.DataFrame([gpu | {"gpus_per_node": 72, "scale_up_gpus": 72, "scale_up_gb_per_s": 900.0}])
    best = (-1.0, None)
    for layout, g in engine.layouts(model.shape, 72):
        figures = (g, layout == "ep", 1.0, 2.0, 186.0, 8000.0, 2500.0, 900.0)
        replica = engine.Replicas(*(np.array([v]) for v in figures))
        cap = int(engine.max_sequences(model.shape, replica, 4096, cap=64 * (g if layout == "ep" else 1))[0])
        batches = np.arange(1, cap + 1, dtype=float)
        many = engine.Replicas(*(np.full(len(batches), v) for v in figures))
        step_s = engine.decode_step_s(model.shape, many, batches, 2048)["step_s"]
        ok = step_s * 1e3 <= 50.0
        if ok.any():
            k = np.flatnonzero(ok)[np.argmax((batches / step_s)[ok])]
            if batches[k] / step_s[k] / g > best[0] + 1e-12:
                best = (batches[k] / step_s[k] / g, (layout, g, int(batches[k])))
    got = capacity(model, machines).iloc[0]
    assert (got["layout"], got["replica_gpus"], got["batch"]) == best[1]
    assert got["tokens_per_s"] / got["replica_gpus"] == pytest.approx(best[0], rel=1e-9)


def test_a_service_with_prompts_is_served_as_planner_serve_serves_it():
    """With input_tokens a service's requests are prefilled and decoded on the replica: its capacity is planner
    serve's (tables/replicas.candidates: the most requests/s within the TPOT target at the p90) times its output
    tokens, at the layout with the most per GPU; and 2,000-token prompts leave less of a replica for output than
    20-token ones."""
    from planner.assumptions import serving as S
    from planner.catalog.load import load_catalog
    from planner.inputs.fleet import InferenceService
    from planner.model.engine import Shape
    from planner.model.queueing import Requests
    from planner.model.serving import capacity, served_model
    from planner.model.workload import gpu_columns
    from planner.tables.replicas import Machine, Targets, candidates

    catalog = load_catalog()
    gpu = gpu_columns(catalog, "H100-SXM")
    machines = pd.DataFrame(
        [{k: gpu[k] for k in ("gpu", "hbm_gib", "hbm_gb_per_s", "peak_tflops")}
         | {"gpus_per_node": 8, "scale_up_gpus": 8, "scale_up_gb_per_s": 450.0}]
    )  # fmt: skip
    per_gpu = {}
    for prompt in (20, 2000):
        shape = {"input_tokens": prompt, "output_tokens": 256, "max_ms_per_token": 40}
        service = InferenceService(
            name="s", model="Llama-3-70B", tokens_per_s=1e5, batch=int(S.MAX_SEQUENCES.value), **shape
        )
        got = capacity(served_model(catalog, service), machines).iloc[0]
        machine = Machine("H100", "H100-SXM", 8, 8, 450.0, 1.0, 1.0, "test", "2026")
        serve = candidates(catalog, Shape.of(catalog.model("Llama-3-70B")), Requests(prompt, 256),
                           Targets(1.0, None, 0.040), [machine], ["bf16"])  # fmt: skip
        serve = serve[(serve["mode"] == "aggregated") & serve["serves"]]
        best = (serve["rate"] * 256 / serve["replica_gpus"]).max()
        assert got["tokens_per_s"] / got["replica_gpus"] == pytest.approx(best, rel=1e-9), prompt
        assert got["ms_per_token"] <= 40 + 1e-9
        per_gpu[prompt] = best
    assert per_gpu[2000] < per_gpu[20]


def test_a_service_known_by_its_size_has_gpt3_proportions():
    """params alone (Shape.estimated): 175B gives GPT-3's own shape (96 layers of 12,288 with 96 heads of 128,
    Brown et al. 2020 table 2.1), dense, with a full multi-head KV cache; and the default context 4,096."""
    from planner.inputs.fleet import InferenceService
    from planner.model.engine import Shape
    from planner.model.serving import served_model

    shape = Shape.estimated(175e9)
    assert (shape.layers, shape.hidden, shape.heads, shape.kv_heads) == (96, 12288, 96, 96)
    assert shape.kv_width == 2 * 12288 and not shape.moe and shape.active_params == 175e9
    served = served_model(None, InferenceService(name="s", params="175B", tokens_per_s=1e4))
    assert served.shape == shape and served.context_tokens == 4096


def test_a_model_that_fits_no_scale_up_domain_is_refused_with_why():
    """Llama-3-70B in bf16 needs 141 GB of weights: on one 80 GB GPU without scale-up bandwidth (one-GPU
    replicas) it fits nowhere, and replicas never span domains (as planner serve)."""
    from planner.model.serving import capacity

    _, model = _served("Llama-3-70B", batch=64, context=8192, slo_ms=None)
    machines = pd.DataFrame([H100_LIKE | {"scale_up_gpus": 8, "scale_up_gb_per_s": float("nan")}])
    got = capacity(model, machines).iloc[0]
    assert got["tokens_per_s"] == 0 and "do not fit one scale-up domain" in got["reason"]


# ---------------------------------------------------------------- structure of the answer


def test_fabric_in_the_model_is_the_closed_form(catalog):
    """Three nodes do not fit one 4-port switch (6 NIC ports): leaf-spine, as fabric.size_arrays sizes it."""
    two = _tokens_per_quarter(catalog, 2)
    spec = fleet(training=[job(tokens=1.2 * two)], buy__servers=["S8"])
    data, solved = solve(catalog, spec)
    nodes = round(sum(x.value() for x in solved.model.buy.values()))
    size = ft.fabric_size(data.pools.iloc[[0]], nodes, 2)
    got = {k: round(v.value()) for k, v in solved.model.fabric[(0, 1)].items()}
    assert nodes == 3
    expected = {
        "D": size["down_ports"],
        "K": size["cages"],
        "L": size["leaf"],
        "S": size["spine"],
        "U": size["uplinks"],
    }
    assert got == {k: int(np.asarray(v).item()) for k, v in expected.items()}


def test_all_units_tier_buys_more_when_the_order_is_cheaper(catalog):
    """Two nodes at list price cost more than three at the 3+ tier (40% off): the plan buys three."""
    spec = fleet(
        training=[job(tokens=1.2 * _tokens_per_quarter(catalog, 1))],
        buy__servers=["S8"],
        buy__terms=[{"server": "S8", "tiers": [{"units": 3, "discount": 0.4}]}],
    )
    plan = run(catalog, spec, CAL, solver="cbc", gap=0.0, threads=1)
    assert [(p.units, p.tier) for p in plan.purchases] == [(3, "3+ units (40% off)")]
    assert any("tier's threshold" in line for line in plan.binding)


def test_a_plan_says_whether_a_rerun_repeats_it(catalog):
    """CBC's parallel tree search is opportunistic (coin-or/Cbc#315: only "-threads 100+n" repeats, and that
    mode crashes the bundled CBC 2.10.3 on fleet models), so a plan solved on several CBC threads says a rerun
    may differ within the gap; one thread repeats exactly."""
    from planner.report.fleet_text import render

    spec = random_fleet(3)
    one, again = (run(catalog, spec, CAL, solver="cbc", threads=1) for _ in range(2))
    timing = {"solve_seconds", "build_seconds"}
    assert one.repeatable and one.model_dump(exclude=timing) == again.model_dump(exclude=timing)
    assert REPEAT_THREADS not in render(one)
    parallel = run(catalog, spec, CAL, solver="cbc", threads=2)
    assert (parallel.repeatable, parallel.solver_threads) == (False, 2)
    assert "(CBC, 2 threads, proven gap" in render(parallel) and REPEAT_THREADS in render(parallel)
    # a solve the time limit stopped depends on the machine's speed, whatever the solver
    assert repeat_note(SolveResult("feasible", "highs", 0.01, 60.0, 1.0, None)) == REPEAT_TIME
    assert repeat_note(SolveResult("optimal", "highs", 0.01, 6.0, 1.0, 2)) == ""


def test_attribution_sums_to_the_objective_and_periods_add_up(catalog):
    spec = random_fleet(3)
    plan = run(catalog, spec, CAL, solver="cbc", gap=0.0, threads=1)
    assert sum(a.total_usd for a in plan.attribution) == pytest.approx(plan.objective_usd, rel=1e-9)
    present = sum(c.present_value_usd for c in plan.cash_flow)
    assert present - plan.residual_usd + plan.penalties_usd == pytest.approx(plan.objective_usd, rel=1e-9)


def test_stock_cap_and_lead_time(catalog):
    """S8B (the faster node) arrives a quarter after the order and 1 per quarter: the first quarter's job runs
    on S8, and the plan says the stock binds."""
    quarter = _tokens_per_quarter(catalog, 1)
    spec = fleet(
        horizon={"periods": 2},
        training=[job("early", tokens=1.5 * quarter, start=1, deadline=1), job("late", tokens=0.5 * quarter, start=2)],
        buy__terms=[{"server": "S8B", "stock": 1, "lead_time_periods": 1}],
    )
    plan = run(catalog, spec, CAL, solver="cbc", gap=0.0, threads=1)
    first = [p for p in plan.purchases if p.period == "P1"]
    assert first and all(p.server == "S8" for p in first)
    assert all(p.units <= 1 for p in plan.purchases if p.server == "S8B")


def test_infeasible_fleet_names_what_fails_and_the_cheapest_relaxation(catalog):
    """Two nodes' work in one quarter, but the site has power for one node: the deadline or the power must
    give; both relaxations are reported, the plan shown is the cheaper."""
    spec = fleet(
        training=[job(tokens=1.2 * _tokens_per_quarter(catalog, 1), start=1, deadline=1)],
        horizon={"periods": 2},
        buy__servers=["S8"],
        site={"power": [{"from": 1, "kw": 6}]},
    )
    plan = run(catalog, spec, CAL, solver="cbc", gap=0.0, threads=1)
    assert plan.status == "infeasible"
    relaxed = {r.relaxed for r in plan.relaxations}
    assert relaxed == {"deadlines", "power"}
    assert any(
        line.startswith("deadline: a finishes P2, 1 period(s) after its deadline P1") for line in plan.infeasible
    )
    assert any(line.startswith("power: P1 needs") for line in plan.infeasible)
    costs = [r.objective_usd for r in plan.relaxations]
    assert costs == sorted(costs) and plan.shown.endswith(plan.relaxations[0].relaxed)


def test_a_deadline_no_run_can_meet_is_infeasible_not_dropped(catalog):
    """Two pool nodes at most: three node-quarters cannot end in the first quarter. The job is not silently
    left out: the plan is infeasible, and relaxing the deadline shows it one quarter late on 2 nodes."""
    spec = fleet(
        training=[job(tokens=3 * _tokens_per_quarter(catalog, 1), start=1, deadline=1)],
        horizon={"periods": 3},
        buy__servers=["S8"],
        buy__max_nodes_per_pool=2,
    )
    data = ft.build(catalog, spec, CAL)
    assert data.columns["hard_late"].all() and brute_force(data) is None
    plan = run(catalog, spec, CAL, solver="cbc", gap=0.0, threads=1)
    assert plan.status == "infeasible" and [r.relaxed for r in plan.relaxations] == ["deadlines"]
    assert plan.infeasible == ["deadline: a finishes P2, 1 period(s) after its deadline P1"]
    assert [(r.nodes, r.periods) for r in plan.jobs] == [(2, ["P1", "P2"])]


def test_installed_nodes_cost_no_capex(catalog):
    spec = fleet(
        training=[job(tokens=1.2 * _tokens_per_quarter(catalog, 1))],
        buy__servers=["S8"],
        installed=[{"server": "S8", "count": 2, "nic": "N100", "nics_per_node": 2, "switch": "SW-B", "fabric": "roce"}],
    )
    plan = run(catalog, spec, CAL, solver="cbc", gap=0.0, threads=1)
    assert plan.purchases == [] and plan.network == [] and plan.objective_usd == pytest.approx(0.0, abs=1e-6)
    assert plan.pools[0].installed == [2]


# ---------------------------------------------------------------- the fleet file: one-line errors


def _cli_error(run_cli, write, text: str) -> str:
    path = write("fleet.yaml", text)
    result = run_cli("fleet", path, "-q")
    assert result.exit_code in (1, 2), result.output
    assert "Traceback" not in result.output
    assert all(line.startswith("error: ") for line in result.stderr.strip().splitlines()), result.stderr
    assert str(path) in result.stderr
    return result.stderr


BASE = """
horizon: {periods: 4}
training:
  - name: a
    workload: {model: Llama-3-8B}
    tokens: 100B
"""


def test_unknown_server_names_the_field_and_suggests(run, write):
    err = _cli_error(run, write, BASE + "buy: {servers: [HGX H100 8-GPU system (street 2025-04)]}\n")
    assert "buy.servers[0]: unknown server" in err and "did you mean" in err


def test_negative_stock(run, write):
    b200 = "DGX B200 (Delta list EU 2024-12)"
    text = BASE + f"buy:\n  servers: [{b200}]\n  terms:\n    - {{server: {b200}, stock: -3}}\n"
    err = _cli_error(run, write, text)
    assert "buy.terms[0].stock = -3" in err and "must be at least 0" in err


def test_overlapping_periods(run, write):
    text = BASE + "site:\n  power:\n    - {from: 1, to: 3, kw: 1000}\n    - {from: 2, kw: 2000}\n"
    err = _cli_error(run, write, text)
    assert "site.power[1]" in err and "overlaps another step" in err


def test_period_outside_the_horizon_and_labels(run, write):
    err = _cli_error(run, write, BASE.replace("tokens: 100B", "tokens: 100B\n    deadline: 9"))
    assert "training[0].deadline = 9: outside the horizon of 4 periods; use 1..4" in err
    text = BASE.replace("{periods: 4}", "{periods: 4, start: 2026Q1}").replace(
        "tokens: 100B", "tokens: 100B\n    start: 2027Q3"
    )
    err = _cli_error(run, write, text)
    assert "training[0].start = '2027Q3': not a period of the horizon; write one of 2026Q1..2026Q4" in err


def test_a_job_no_server_can_fit(run, write):
    text = BASE.replace("model: Llama-3-8B", "params: 5T, seq_len: 2048") + (
        "buy: {servers: [NVIDIA DGX-1 with V100 (estimate)], max_nodes_per_pool: 4}\ncloud: {allowed: false}\n"
    )
    err = _cli_error(run, write, text)
    assert "training[0] (a): the model does not fit in memory on any allowed server or cloud offering" in err


def test_unknown_key_and_empty_fleet(run, write):
    err = _cli_error(run, write, BASE + "sight: {}\n")
    assert "sight" in err and "planner fleet --schema" in err
    err = _cli_error(run, write, "horizon: {periods: 4}\n")
    assert "give at least one training job or inference service" in err


def test_deadline_before_start_and_tiers_out_of_order(run, write):
    err = _cli_error(run, write, BASE.replace("tokens: 100B", "tokens: 100B\n    start: 3\n    deadline: 2"))
    assert "training[0].deadline = 2: before its start (3)" in err
    b200 = "DGX B200 (Delta list EU 2024-12)"
    text = BASE + (
        f"buy:\n  servers: [{b200}]\n  terms:\n    - server: {b200}\n"
        "      tiers: [{units: 64, discount: 10%}, {units: 16, discount: 5%}]\n"
    )
    assert "give tiers in increasing units" in _cli_error(run, write, text)


# ---------------------------------------------------------------- CLI, JSON, workbook


def test_schema(run):
    result = run("fleet", "--schema")
    schema = json.loads(result.output)
    sections = {"horizon", "training", "inference", "installed", "buy", "site", "costs", "cloud"}
    assert sections <= set(schema["properties"])


def test_a_full_hall_is_named_as_binding(run):
    """The startup's owned nodes draw 275 kW in 2027: in a 280 kW hall no further 14.3 kW DGX B200 (its catalog
    power) fits, and the answer says so."""
    result = run("fleet", "examples/fleet-startup.yaml", "-q", "--set", "site.power[1].kw=280")
    assert result.exit_code == 0, result.output
    assert "site power: 2027Q1 uses 275 of 280 kW (no room for one more 14.3 kW node" in result.output


def test_startup_example_end_to_end(run, tmp_path):
    xlsx, out = tmp_path / "fleet.xlsx", tmp_path / "fleet.json"
    result = run("fleet", "examples/fleet-startup.yaml", "-q", "-o", xlsx)
    assert result.exit_code == 0, result.output
    for heading in ("Purchase schedule", "Training timetable", "Inference capacity", "Cash flow", "What binds"):
        assert heading in result.output
    assert "deadline: pretrain-70b finishes in its deadline period 2026Q4" in result.output
    assert f"(CBC, {os.cpu_count()} thread" in result.output  # every core by default
    book = openpyxl.load_workbook(xlsx)
    assert book.sheetnames == ["Summary", "Purchases", "Timetable", "Capacity", "Inference", "Cash flow",
                               "Cost by workload", "Assumptions"]  # fmt: skip
    with zipfile.ZipFile(xlsx) as z:
        assert sum(name.startswith("xl/charts/chart") for name in z.namelist()) == 3  # Gantt, power, cash flow
    cash = book["Cash flow"]
    assert cash["G5"].value == "=SUM(B5:F5)" and cash["J6"].value == "=J5+G6"
    summary = {row[0]: row[1] for row in book["Summary"].iter_rows(values_only=True) if row[0]}
    assert summary["Solver"] == f"CBC, {os.cpu_count()} thread(s)"
    assert summary["Repeatable"] == ("yes" if os.cpu_count() == 1 else f"no: {REPEAT_THREADS}")
    result = run("fleet", "examples/fleet-startup.yaml", "-q", "--json", "-o", out)
    plan = json.loads(result.output)
    assert plan["status"] == "optimal" and json.loads(out.read_text())["objective_usd"] == plan["objective_usd"]
    assert {j["job"] for j in plan["jobs"]} == {"pretrain-70b", "pretrain-8b"}


def test_workbook_text_is_never_a_formula(catalog, tmp_path):
    from planner.report.fleet_xlsx import write_fleet

    spec = fleet(training=[job(name='=HYPERLINK("http://x","y")', tokens=1e11)], buy__servers=["S8"])
    plan = run(catalog, spec, CAL, solver="cbc", threads=1)
    path = tmp_path / "f.xlsx"
    write_fleet(plan, path)
    cell = openpyxl.load_workbook(path)["Timetable"]["A5"]
    assert cell.value.startswith("=HYPERLINK") and cell.data_type == "s"


def test_output_suffix_and_set_with_list_items(run, tmp_path):
    result = run("fleet", "examples/fleet-startup.yaml", "-o", tmp_path / "x.csv")
    assert result.exit_code == 2 and "write .xlsx" in result.stderr
    result = run("fleet", "examples/fleet-startup.yaml", "-q", "--set", "training[0].tokens=30T")
    assert (
        result.exit_code == 1 and "relax deadlines" in result.output
    )  # 30T cannot be trained in 2026 in 1 MW and the allowed cloud
    assert "the fleet cannot be met as written" in result.stderr


def test_enumeration_space_is_astronomical(catalog):
    data = ft.build(catalog, random_fleet(0), CAL)
    assert ft.enumeration_log10(data) > 3 and math.isfinite(ft.enumeration_log10(data))


# ---------------------------------------------------------------- shapes the schema allows (review findings)


def test_a_fleet_of_inference_services_only(catalog):
    """No training job at all: the plan serves the demand (8,000 tokens/s at a measured 2,000 per GPU needs 4
    GPUs, half of one 8-GPU node) and its cost lines still add up to the objective."""
    service = {"name": "svc", "params": "1B", "tokens_per_s": 8000.0, "tokens_per_s_per_gpu": 2000}
    spec = fleet(training=[], inference=[service], buy__standalone_pools=True)
    plan = run(catalog, spec, CAL, solver="cbc", gap=0.0, threads=1)
    assert plan.status == "optimal" and not plan.jobs
    assert sum(p.tokens_per_s for p in plan.placements) >= 8000.0 - 1e-6
    assert sum(p.replicas * p.gpus_per_replica for p in plan.placements) == pytest.approx(4.0)
    assert sum(a.total_usd for a in plan.attribution) == pytest.approx(plan.objective_usd, rel=1e-9)


def test_nothing_to_buy_is_one_line(run, write):
    err = _cli_error(run, write, BASE + "buy: {servers: []}\n")
    assert "buy.servers is empty" in err
    err = _cli_error(run, write, BASE + "buy: {standalone_pools: false, network_options: 0}\n")
    assert "leaves no pool to buy into" in err


def test_a_service_life_under_a_quarter_is_refused(run, write):
    """Servers serve whole quarters: a life shorter than one would serve none."""
    err = _cli_error(run, write, BASE + "buy: {life_years: 0.1}\n")
    assert "buy.life_years = 0.1: must be at least 0.25" in err


def test_bought_servers_retire_at_their_life(catalog):
    """Two one-quarter jobs, one in each quarter, on the hand-worked pool ($206,840 for the first: 2 nodes at
    $204,440 with their NICs and optics, the switch and its cages). With a 5-year life the same 2 nodes run
    both jobs; with a one-quarter life they retire after the first and 2 more are bought for the second
    ($204,440 more: the switch and cages are owned, never sold back): $411,280 by hand."""
    one_node = _tokens_per_quarter(catalog, nodes=1)
    jobs = [job("a", tokens=1.2 * one_node, start=1, deadline=1), job("b", tokens=1.2 * one_node, start=2, deadline=2)]
    for life, expected, bought in ((5.0, 206_840.0, [2, 0]), (0.25, 411_280.0, [2, 2])):
        spec = fleet(horizon={"periods": 2}, training=jobs, buy__servers=["S8"], buy__life_years=life)
        data, solved = solve(catalog, spec)
        assert solved.result.status == "optimal", life
        assert solved.result.objective == pytest.approx(expected), life
        assert [round(x.value()) for _, x in sorted(solved.model.buy.items())] == bought, life
        assert brute_force(data) == pytest.approx(expected), life


def test_a_scenario_given_to_the_wrong_command_says_which_to_run(run):
    fleet_file, scenario = examples_dir() / "fleet-startup.yaml", examples_dir() / "llama-70b-h100.yaml"
    for command, path, advice in (("plan", fleet_file, "planner fleet"), ("fleet", scenario, "planner plan")):
        result = run(command, path, "-q")
        assert result.exit_code == 1 and result.stderr.count("\n") == 1, result.stderr
        assert advice in result.stderr
