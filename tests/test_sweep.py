"""planner sweep (issue #32): the draws (their distributions, independent of how they are split), the outcome
arithmetic checked by hand, the cheapest-per-draw and regret checked by brute force, the robust objective where
the deadline is tight and where it is not, identical results on 1 and 2 Dask workers, resuming, and the CLI's
errors and files."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from openpyxl import load_workbook
from support import refused

import planner
from planner.answers import sweep as sweep_answer
from planner.base.distributed import Engine
from planner.catalog.load import load_catalog
from planner.inputs.scenario import load_scenario
from planner.model.calibration import Calibration, load_calibration
from planner.model.draws import PROBABILITIES, Spread, draw, residual
from planner.tables import buy as cand
from planner.tables import choices as choice_table

EXAMPLE = "examples/llama-70b-h100.yaml"
# the deadline binds and node counts are free (no global batch): a 40-day run sized with no margin
TIGHT = {"workload__global_batch": None, "requirement__schedule_margin": 0}
# memory, not the deadline, sizes the cluster: 20B tokens need two nodes for weeks, not forty days
LOOSE = {"workload__global_batch": None, "requirement__tokens": "20B"}


def _spread(**over) -> Spread:
    base = dict(
        price_sigma=np.array([0.3, 0.3, 0.3]),
        price_family=np.array([0, 0, 1]),
        families=2,
        family_share=0.5,
        residuals=np.array([[-0.2, -0.1, -0.05, 0.0, 0.05, 0.1, 0.2]]),
        rate_sigma=0.4,
        lead_sigma=0.33,
        lead_families=2,
    )
    return Spread(**{**base, **over})


def test_price_draws_have_mean_one_and_the_stated_family_correlation():
    d = draw(_spread(), seed=7, first=0, count=4000)
    assert d.price.mean(axis=0) == pytest.approx([1, 1, 1], abs=0.03)  # mean-one: exp(s z - s^2/2)
    logs = np.log(d.price)
    assert logs.std(axis=0) == pytest.approx([0.3, 0.3, 0.3], rel=0.05)
    same, other = np.corrcoef(logs[:, 0], logs[:, 1])[0, 1], np.corrcoef(logs[:, 0], logs[:, 2])[0, 1]
    assert same == pytest.approx(0.5, abs=0.05)  # family_share of the log-variance is common to the family
    assert abs(other) < 0.05
    assert d.rate.mean() == pytest.approx(1.0, abs=0.03)
    assert np.median(d.lead, axis=0) == pytest.approx([1, 1], abs=0.03)  # lead times: median at the stated weeks


def test_a_draw_depends_on_its_index_only():
    spread = _spread()
    whole, part = draw(spread, 3, 0, 10), draw(spread, 3, 4, 3)
    for name in ("price", "throughput", "rate", "lead"):
        assert np.array_equal(getattr(whole, name)[4:7], getattr(part, name))
    assert not np.array_equal(draw(spread, 4, 0, 10).price, whole.price)


def test_residuals_follow_the_group_quantiles():
    q = np.array([[-0.2, -0.1, -0.05, 0.0, 0.05, 0.1, 0.2]])
    for p, expected in zip(PROBABILITIES, q[0], strict=True):
        assert residual(q, np.array([p]))[0] == pytest.approx(expected)
    # beyond p95, the last segment's slope: (0.2 - 0.1) / (0.95 - 0.9) = 2 per unit of probability
    assert residual(q, np.array([0.99]))[0] == pytest.approx(0.2 + 0.04 * 2)
    assert residual(q, np.array([0.01]))[0] == pytest.approx(-0.2 - 0.04 * 2)
    # throughput factor: measured = predicted x exp(-r); the median draw is the p50 residual's
    u = draw(_spread(), 0, 0, 4000).throughput[:, 0]
    assert np.median(u) == pytest.approx(1.0, abs=0.01)


def _hand_choices() -> choice_table.Choices:
    spread = _spread(price_sigma=np.array([0.1, 0.2]), price_family=np.array([0, 1]), lead_families=2)
    import pandas as pd

    return choice_table.Choices(
        frame=pd.DataFrame({"label": ["a", "b"], "configuration": [0, 1]}),
        part_usd=np.array([[100.0, 50.0], [0.0, 300.0]]),
        parts=pd.DataFrame(),
        other_usd=np.array([10.0, 0.0]),
        tokens_per_s=np.array([1e6, 2e6]),
        group=np.array([0, 0]),
        groups=["g"],
        goodput=np.array([np.full(17, 0.9), np.linspace(0.5, 0.98, 17)]),
        lead_weeks=np.array([[10.0, 20.0], [30.0, 0.0]]),
        lead_families=["x", "y"],
        point=0,
        tokens=86400e6,  # 1e6 tokens/s for a day = 86,400e6 tokens
        deadline_days=1.0,
        spread=spread,
    )


def test_outcome_arithmetic_by_hand():
    c = _hand_choices()
    d = draw(c.spread, 1, 0, 3)
    cost, days, delivery = c.outcome(d)
    for k in range(3):
        assert cost[k, 0] == pytest.approx(100 * d.price[k, 0] + 50 * d.price[k, 1] + 10)
        assert cost[k, 1] == pytest.approx(300 * d.price[k, 1])
        # a: 1e6 tokens/s x throughput factor x goodput 0.9 -> 1 / (factor x 0.9) days
        assert days[k, 0] == pytest.approx(1 / (d.throughput[k, 0] * 0.9))
        g = np.interp(np.log(d.rate[k]), choice_table.LOG_RATE_GRID, c.goodput[1])  # b's: linear on the grid
        assert days[k, 1] == pytest.approx(1 / (2 * d.throughput[k, 0] * g))
        assert delivery[k, 0] == pytest.approx(max(10 * d.lead[k, 0], 20 * d.lead[k, 1]))
        assert delivery[k, 1] == pytest.approx(30 * d.lead[k, 0])


@pytest.fixture(scope="module")
def tight():
    scenario = load_scenario(EXAMPLE, {"requirement.schedule_margin": 0}, {"workload.global_batch": None}, {})
    catalog, calibration = load_catalog(list(scenario.catalogs)), load_calibration(None)
    return catalog, scenario, calibration


def test_cheapest_and_regret_match_brute_force(tight):
    catalog, scenario, calibration = tight
    from planner.answers import buy

    plan = buy.run(catalog, scenario, calibration, alternatives=0)
    table = cand.build(catalog, scenario, calibration)
    choices = choice_table.build(catalog, scenario, calibration, table, sweep_answer._point_row(table, plan))
    assert len(choices.frame) > 100  # every configuration at a ladder of counts
    assert choices.frame["label"].iloc[choices.point].startswith(f"{plan.choice.nodes} x {plan.choice.server}")
    assert choices.frame["capex_usd"].iloc[choices.point] == pytest.approx(plan.cost.capex_usd, rel=1e-9)
    assert choices.tokens_per_s[choices.point] == pytest.approx(plan.metrics.tokens_per_s_point, rel=1e-9)
    outcomes = sweep_answer._outcomes(choices, 60, 5, Engine(), None, lambda _: None)
    late = 1000.0
    result = sweep_answer._summary(scenario, choices, outcomes, (late, "test"), "point", 0.9)
    cost, days = outcomes["cost"], outcomes["days"]
    wins = np.zeros(cost.shape[1])
    regrets = np.zeros_like(cost)
    for k in range(len(cost)):  # the cheapest purchase meeting the deadline, by a plain loop
        best = None
        for c in range(cost.shape[1]):
            if days[k, c] <= choices.deadline_days and (best is None or cost[k, c] < cost[k, best]):
                best = c
        assert best is not None
        wins[best] += 1
        totals = cost[k] + late * np.maximum(days[k] - choices.deadline_days, 0)
        regrets[k] = totals - cost[k, best]
    by_label = {c.label: c for c in result.choices}
    for c, label in enumerate(choices.frame["label"]):
        assert by_label[label].p_optimal == pytest.approx(wins[c] / len(cost))
        assert by_label[label].expected_regret_usd == pytest.approx(regrets[:, c].mean(), rel=1e-9, abs=1e-6)
        worst = np.sort(regrets[:, c])[-6:]  # the worst 10% of 60 draws
        assert by_label[label].worst_decile_regret_usd == pytest.approx(worst.mean(), rel=1e-9, abs=1e-6)
        assert by_label[label].p_deadline_met == pytest.approx(np.mean(days[:, c] <= choices.deadline_days))
    assert sum(c.p_optimal for c in result.choices) == pytest.approx(1.0)


def test_robust_objective_buys_safety_where_the_deadline_is_tight():
    point = planner.sweep(EXAMPLE, draws=300, **TIGHT)
    robust = planner.sweep(EXAMPLE, draws=300, objective="expected-cost", p_deadline=0.9, **TIGHT)
    assert point.chosen == point.point
    assert point.point.p_deadline_met < 0.9  # sized for the point prediction, it misses often
    assert robust.chosen.label != robust.point.label
    assert robust.chosen.p_deadline_met >= 0.9
    assert robust.chosen.gpus > robust.point.gpus  # safer: more GPUs
    assert robust.chosen.expected_cost_usd > robust.point.expected_cost_usd
    assert any("meets the deadline in" in line for line in robust.risk)


def test_robust_objective_keeps_the_point_plan_where_the_deadline_is_loose():
    result = planner.sweep(EXAMPLE, draws=300, objective="expected-cost", **LOOSE)
    assert result.point.p_deadline_met >= 0.9
    assert result.chosen == result.point
    assert "the point plan stands" in result.risk[-1]
    # regret weighs price risk too: it may choose another purchase, but only one whose worst decile is lower
    regret = planner.sweep(EXAMPLE, draws=300, objective="regret", **LOOSE)
    assert regret.chosen.worst_decile_regret_usd <= regret.point.worst_decile_regret_usd
    assert regret.chosen.p_deadline_met >= 0.9
    assert min(c.worst_decile_regret_usd for c in regret.choices if c.p_deadline_met >= 0.9) == pytest.approx(
        regret.chosen.worst_decile_regret_usd
    )


def test_one_and_two_dask_workers_give_the_same_sweep():
    """The done-when: 1,000 draws of the shipped example, identical for the same seed on a 1-worker and a
    2-worker Dask cluster (and in this process)."""
    runs = [planner.sweep(EXAMPLE, draws=1000, seed=11, workers=w).model_dump() for w in (1, 2, 0)]
    for r in runs:
        r.pop("seconds")
        assert r.pop("engine")
    assert runs[0] == runs[1] == runs[2]
    assert runs[0]["draws"] == 1000 and len(runs[0]["choices"]) >= 2


class _Interrupt(Engine):
    """An engine that stops after `after` tasks, as Ctrl-C would."""

    def __init__(self, after: int):
        super().__init__()
        self.after = after

    def map(self, fn, shared, tasks, on_result):
        for i, task in enumerate(tasks):
            if i == self.after:
                raise KeyboardInterrupt
            on_result(task, fn(shared, task))


def test_an_interrupted_sweep_resumes_from_its_results_file(tight, tmp_path):
    catalog, scenario, calibration = tight
    path = tmp_path / "sweep.npz"
    whole = sweep_answer.run(catalog, scenario, calibration, draws=150, seed=2)
    with pytest.raises(KeyboardInterrupt):
        sweep_answer.run(catalog, scenario, calibration, draws=150, seed=2, engine=_Interrupt(2), results_path=path)
    said = []
    resumed = sweep_answer.run(
        catalog, scenario, calibration, draws=150, seed=2, results_path=path, progress=said.append
    )
    assert any("resumed 100 draws" in s for s in said)  # two tasks of 50 were kept
    a, b = whole.model_dump(), resumed.model_dump()
    for r in (a, b):
        r.pop("seconds")
    assert a == b
    with pytest.raises(planner.base.errors.PlannerError, match="another sweep"):
        sweep_answer.run(catalog, scenario, calibration, draws=150, seed=3, results_path=path)


def test_cli_sweep_writes_json_and_a_workbook(run, tmp_path):
    out = tmp_path / "sweep.xlsx"
    result = run("sweep", EXAMPLE, "--draws", "200", "--workers", "0", "-q", "-o", out, "--objective", "regret")
    assert result.exit_code == 0, result.stderr
    assert "trains its tokens within 40 days" in result.stdout
    assert "Purchases by how often each is the cheapest" in result.stdout
    wb = load_workbook(out)
    assert wb.sheetnames == ["Summary", "Purchases", "Regret", "Distributions", "Assumptions"]
    purchases = wb["Purchases"]
    assert purchases._charts and wb["Distributions"]._charts and wb["Regret"]._charts
    last = purchases.cell(row=5, column=8).value
    assert isinstance(last, str) and last.startswith("=E5-$E$")  # live: expected total over the point plan's
    for ws in wb.worksheets:  # no text cell became a formula
        for row in ws.iter_rows():
            for cell in row:
                if isinstance(cell.value, str) and cell.value.startswith("="):
                    assert ws.title in ("Purchases", "Regret", "Distributions"), (ws.title, cell.value)
    as_json = run("sweep", EXAMPLE, "--draws", "100", "--workers", "0", "-q", "--json")
    data = json.loads(as_json.stdout)
    assert data["kind"] == "plan" and data["draws"] == 100
    assert {d["name"] for d in data["distributions"]} == {"cost", "days", "cost per million tokens", "delivery"}


def test_cli_sweep_errors_are_one_line(run, write, tmp_path):
    no_deadline = write("s.yaml", "workload: {model: Llama-2-70B}\nrequirement: {gpus: 64}\n")
    refused(run("sweep", no_deadline, "--workers", "0"), 1, "needs a deadline")
    refused(run("sweep", EXAMPLE, "--results", tmp_path / "r.txt"), 2, ".npz")
    junk = write("junk.npz", "not numpy")
    refused(run("sweep", EXAMPLE, "--workers", "0", "--draws", "50", "--results", junk), 1, "not a planner sweep")
    packed = tmp_path / "packed.npz"  # the right names, compressed: what a zip bomb would be; refused unread
    np.savez_compressed(packed, **{k: np.zeros(3) for k in ("signature", "done", "cost", "days", "delivery")})
    refused(run("sweep", EXAMPLE, "--workers", "0", "--draws", "50", "--results", packed), 1, "not a planner sweep")


def test_the_late_cost_default_rents_the_shortfall(tight):
    catalog, scenario, calibration = tight
    result = sweep_answer.run(catalog, scenario, calibration, draws=50)
    rates = [
        r.ondemand_usd_per_h / r.gpus
        for r in catalog.items("cloud")
        if r.gpu.lower() == result.point.gpu.lower() and r.ondemand_usd_per_h
    ]
    assert result.late_usd_per_day == pytest.approx(result.point.gpus * 24 * min(rates))
    assert "renting the point plan's" in result.late_basis


def test_no_model_error_means_no_throughput_spread(tight):
    catalog, scenario, _ = tight
    flat = Calibration.default().model_copy(update={"uncertainty": {}})
    result = sweep_answer.run(catalog, scenario, flat, draws=100)
    assert result.point.days_p90 == pytest.approx(result.point.days_p50, rel=0.05)  # interruptions only


def test_cli_sweep_on_a_fleet_file_answers_buy_now_or_wait(run, tmp_path):
    out = tmp_path / "fleet-sweep.xlsx"
    result = run("sweep", "examples/fleet-startup.yaml", "--draws", "3", "--workers", "0", "-q", "--json", "-o", out)
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["kind"] == "fleet" and data["draws"] == 3
    assert [p["policy"] for p in data["policies"]] == ["buy now", "wait"]
    assert all(len(p["costs_usd"]) == 3 for p in data["policies"])
    assert sum(p["p_cheaper"] for p in data["policies"]) == pytest.approx(1.0)
    assert data["risk"][0].startswith("Buy now or wait")
    assert load_workbook(out).sheetnames == ["Summary", "Futures", "Assumptions"]


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_a_stopped_dask_sweep_is_quiet_keeps_its_draws_and_resumes(tmp_path, stop):
    """Ctrl-C signals the whole process group (workers included), SIGTERM planner alone: either way the
    stop is a line or two without a traceback, no worker is left, and the draws finished are kept."""
    results = tmp_path / "sweep.npz"
    command = [sys.executable, "-m", "planner", "sweep", EXAMPLE, "--draws", "33000", "--workers", "2"]
    command += ["--results", str(results), "--set", "workload.global_batch=null"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    lines = []
    while not (line := process.stderr.readline()).startswith(b"... ") or b" of 33,000 draws" not in line:
        lines.append(line)
        assert line, b"".join(lines)  # ended before any draw finished
    os.killpg(process.pid, stop) if stop == signal.SIGINT else process.send_signal(stop)
    rest = process.stderr.read()
    process.wait(timeout=120)
    answer = process.stdout.read()  # (a few lines: the sweep's answer, if it ran to the end)
    assert process.returncode != 0 and b"Traceback" not in rest, (process.returncode, rest, answer[-600:])
    assert len(rest.decode().strip().splitlines()) <= 3, rest
    assert results.exists()
    for _ in range(40):  # no process of its session is left (multiprocessing's resource tracker takes a moment)
        left = subprocess.run(["pgrep", "-s", str(process.pid)], capture_output=True).stdout
        if not left:
            break
        time.sleep(0.25)
    assert not left
    catalog, scenario = load_catalog([]), load_scenario(EXAMPLE, {}, {"workload.global_batch": None}, {})
    said = []
    sweep_answer.run(catalog, scenario, load_calibration(None), draws=33000, results_path=results, progress=said.append)
    assert any(s.startswith("resumed ") for s in said), said


def test_rental_billing_by_hand():
    """On demand bills every hour the job runs; a Capacity Block its whole block up front and the hours beyond
    it at the on-demand rate; both times the draw's price factor of the cloud row."""
    base = _hand_choices()
    rent = choice_table.Rent(
        part=np.array([0, 1]),
        fixed_usd=np.array([0.0, 5000.0]),
        prepaid_h=np.array([0.0, 30.0]),
        usd_per_h=np.array([100.0, 400.0]),
    )
    c = dataclasses.replace(base, part_usd=np.zeros((2, 2)), other_usd=np.zeros(2), rent=rent)
    d = draw(c.spread, 9, 0, 4)
    cost, days, _ = c.outcome(d)
    for k in range(4):
        hours = days[k] * 24
        assert cost[k, 0] == pytest.approx(d.price[k, 0] * 100 * hours[0])
        assert cost[k, 1] == pytest.approx(d.price[k, 1] * (5000 + 400 * max(hours[1] - 30, 0)))


def test_sweep_of_a_rental():
    rented = planner.cloud("examples/cloud-70b.yaml")
    result = planner.sweep("examples/cloud-70b.yaml", rent=True, draws=300, objective="expected-cost")
    c = rented.choice
    assert result.kind == "rent" and result.noun == "rental"
    assert result.point.label.startswith(f"{c.instances} x {c.provider} {c.instance} ({c.region})")
    assert result.point.point_cost_usd == pytest.approx(c.cost_usd, rel=1e-9)
    assert sum(x.p_optimal for x in result.choices) == pytest.approx(1.0)
    assert [d.name for d in result.distributions] == ["cost", "days", "cost per million tokens"]  # no delivery
    assert "of its start" in result.risk[0] and "cheapest rental" in result.risk[1]
    if result.chosen.label != result.point.label:
        assert result.chosen.p_deadline_met >= 0.9


@pytest.mark.parametrize("given_goodput", [None, 0.9])
def test_a_rental_with_nothing_uncertain_takes_planner_clouds_days_and_cost(given_goodput):
    from planner.answers import rent
    from planner.tables import rent as rent_table
    from planner.tables import rentals

    settings = {} if given_goodput is None else {"reliability.goodput": given_goodput}
    scenario = load_scenario("examples/cloud-70b.yaml", settings, {}, {})
    catalog, calibration = load_catalog(list(scenario.catalogs)), load_calibration(None)
    point = rent.run(catalog, scenario, calibration).choice
    options, _ = rent_table.build_options(catalog, scenario, calibration)
    choices = rentals.build(catalog, scenario, calibration, options, point)
    cost, days, _ = choices.outcome(draw(_flat(choices.spread), 0, 0, 3))
    assert days[:, choices.point] == pytest.approx(point.days, rel=1e-9)
    assert cost[:, choices.point] == pytest.approx(point.cost_usd, rel=1e-9)


def _flat(spread: Spread) -> Spread:
    """Every spread zero: each draw is the point figures."""
    return dataclasses.replace(
        spread,
        price_sigma=np.zeros_like(spread.price_sigma),
        residuals=np.zeros_like(spread.residuals),
        rate_sigma=0.0,
        lead_sigma=0.0,
    )


@pytest.mark.parametrize("given_goodput", [None, 0.9])
def test_with_nothing_uncertain_the_sweep_agrees_with_the_plan(tight, given_goodput):
    """All spreads zero: every draw is the point figures, so the point plan (the cheapest purchase in the whole
    catalog that meets the deadline, with no margin) must be the cheapest compared in every draw, at the plan's
    own capex and calendar days (a goodput the scenario gives counted as the plan counts it)."""
    catalog, scenario, calibration = tight
    from planner.answers import buy

    if given_goodput is not None:
        scenario = scenario.model_copy(
            update={"reliability": scenario.reliability.model_copy(update={"goodput": given_goodput})}
        )

    plan = buy.run(catalog, scenario, calibration, alternatives=0)
    table = cand.build(catalog, scenario, calibration)
    choices = choice_table.build(catalog, scenario, calibration, table, sweep_answer._point_row(table, plan))
    cost, days, delivery = choices.outcome(draw(_flat(choices.spread), 0, 0, 5))
    p = choices.point
    assert cost[:, p] == pytest.approx(plan.cost.capex_usd, rel=1e-9)
    assert days[:, p] == pytest.approx(plan.metrics.effective_training_days, rel=1e-9)
    assert delivery[:, p] == pytest.approx(plan.delivery.lead_weeks)
    met = days <= choices.deadline_days
    assert met[:, p].all()
    winners = sweep_answer._cheapest(cost, cost, met)
    assert (cost[np.arange(5), winners] >= cost[:, p] * (1 - 1e-12)).all()  # nothing compared is cheaper
