"""Buy now or wait (planner/answers/futures.py): the startup example across sampled futures, repeatability
whatever map evaluates them, the zero-spread case against `planner fleet`, and the sampled perturbations'
statistics against the stated assumptions."""

from __future__ import annotations

import math
import pickle
from dataclasses import replace

import numpy as np
import pytest

from planner.answers import fleet as fleet_answer
from planner.answers import futures as F
from planner.assumptions import uncertainty as A
from planner.base.resources import examples_dir
from planner.catalog.load import load_catalog
from planner.hardware.costing import price_uncertainty
from planner.inputs.fleet import load_fleet
from planner.model.calibration import load_calibration
from planner.tables import fleet as ft


@pytest.fixture(scope="module")
def startup():
    spec = load_fleet(examples_dir() / "fleet-startup.yaml")
    return load_catalog(spec.catalogs), spec, load_calibration(None)


@pytest.fixture(scope="module")
def twenty(startup):
    return F.buy_now_or_wait(*startup, futures=20, seed=0)


def reversed_map(fn, shared, items):
    """Evaluates last to first, the shared context, each item and result through pickle (as a process pool would
    send them)."""
    through = lambda x: pickle.loads(pickle.dumps(x))  # noqa: E731
    return list(reversed([through(fn(through(shared), through(x))) for x in reversed(items)]))


def test_startup_answer_over_twenty_futures(twenty):
    assert twenty.answer in F.POLICIES and twenty.answer in twenty.answer_text
    assert twenty.decision_period == "2026Q3" and not twenty.unevaluated
    now, wait = twenty.policy(F.BUY_NOW), twenty.policy(F.WAIT)
    assert len(now.costs_usd) == len(wait.costs_usd) == 20
    # ties count half to each policy, so the two shares always sum to one
    assert now.probability_cheaper + wait.probability_cheaper == pytest.approx(1.0)
    best = np.minimum(now.costs_usd, wait.costs_usd)
    for policy in (now, wait):
        assert np.all(np.array(policy.costs_usd) - best >= 0) and policy.expected_regret_usd >= 0
        assert policy.p10_usd <= policy.p50_usd <= policy.p90_usd <= policy.worst_usd
        assert policy.expected_usd == pytest.approx(np.mean(policy.costs_usd))
    # buy now fixes the point plan's first deliveries; wait fixes none
    assert now.purchases and all(b.period == "2026Q3" and b.units > 0 for b in now.purchases)
    assert wait.purchases == []
    # the answer is the lower expected cost, hence the lower expected regret (E regret = E cost - E best)
    chosen, other = (now, wait) if twenty.answer == F.BUY_NOW else (wait, now)
    assert chosen.expected_usd <= other.expected_usd
    assert chosen.expected_regret_usd <= other.expected_regret_usd
    assert chosen.expected_regret_usd == pytest.approx(chosen.expected_usd - best.mean())


def test_result_does_not_depend_on_the_map(startup, twenty):
    again = F.buy_now_or_wait(*startup, futures=20, seed=0, run=reversed_map)
    assert again.model_dump() == twenty.model_dump()


def test_same_seed_same_futures_other_seed_other_costs(startup, twenty):
    # a future depends on (seed, index) only: the first three of twenty are the three of three
    three = F.buy_now_or_wait(*startup, futures=3, seed=0, run=reversed_map)
    assert [o.model_dump() for o in three.outcomes] == [o.model_dump() for o in twenty.outcomes[:3]]
    other = F.buy_now_or_wait(*startup, futures=3, seed=1)
    assert other.policy(F.BUY_NOW).costs_usd != three.policy(F.BUY_NOW).costs_usd
    assert other.policy(F.WAIT).costs_usd != three.policy(F.WAIT).costs_usd


def test_zero_spread_is_the_nominal_future_and_the_point_plan(startup):
    catalog, spec, calibration = startup
    result = F.buy_now_or_wait(*startup, futures=2, seed=0, spread=F.Spread.none())
    for outcome in result.outcomes:
        assert set(outcome.future.price_factors.values()) == {1.0}
        assert set(outcome.future.slip_periods.values()) == {0}
        assert outcome.future.rent_decline_per_period == 0.0 and not outcome.future.moves_demand
    # the re-solve of the nominal future, policy by policy, by hand
    nominal = ft.build(catalog, spec, calibration)
    settings = F.Settings()
    point, solved = F.solve_policy(nominal, F.nominal_future(nominal), None, None, [], settings)
    t1, purchases = F.first_stage(solved)
    for policy in F.POLICIES:
        cost, _ = F.solve_policy(nominal, F.nominal_future(nominal), policy, t1, purchases, settings)
        assert result.policy(policy).costs_usd == [cost.cost_usd] * 2
    # buy now is the point plan's own first stage: its cost is the plan `planner fleet --threads 1` gives
    plan = fleet_answer.run(catalog, spec, calibration, threads=1)
    assert result.nominal_cost_usd == pytest.approx(plan.objective_usd, rel=1e-9)
    now = result.policy(F.BUY_NOW).costs_usd[0]
    assert abs(now - plan.objective_usd) <= fleet_answer.DEFAULT_GAP * plan.objective_usd
    assert [(b.server, b.units, b.period) for b in result.policy(F.BUY_NOW).purchases] == [
        (p.server, p.units, p.period) for p in plan.purchases if p.period == result.decision_period
    ]


def test_sampled_prices_are_mean_one_and_share_the_vendor(startup):
    catalog, spec, calibration = startup
    data = ft.build(catalog, spec, calibration)
    # two offers of one vendor and one of another
    data = replace(data, offers=data.offers.assign(vendor=["Same", "Same", "Other"]))
    futures = F.sample_futures(data, 4000, seed=7)
    servers = list(data.offers["server"])
    factors = np.array([[f.price_factors[s] for s in servers] for f in futures])
    for i, confidence in enumerate(data.offers["confidence"]):
        sigma = price_uncertainty(confidence)
        sd = math.sqrt(math.exp(sigma**2) - 1)  # a mean-one lognormal's standard deviation
        assert abs(factors[:, i].mean() - 1) < 4 * sd / math.sqrt(len(futures))
        assert np.std(np.log(factors[:, i])) == pytest.approx(sigma, rel=0.05)
    logs = np.log(factors)
    assert np.corrcoef(logs[:, 0], logs[:, 1])[0, 1] == pytest.approx(A.PRICE_FAMILY_SHARE.value, abs=0.05)
    assert abs(np.corrcoef(logs[:, 0], logs[:, 2])[0, 1]) < 0.05
    # a future does not depend on how many are drawn
    assert F.sample_futures(data, 5, seed=7)[:3] == futures[:3]


def test_sampled_slips_rents_and_demand_follow_the_assumptions(startup):
    catalog, spec, calibration = startup
    data = ft.build(catalog, spec, calibration)
    futures = F.sample_futures(data, 4000, seed=3)
    slips = np.array([s for f in futures for s in f.slip_periods.values()])
    p = A.SLIP_PROBABILITY.value
    assert slips.max() <= A.MAX_SLIP_PERIODS.value
    assert np.mean(slips >= 1) == pytest.approx(p, abs=0.02)
    assert np.mean(slips >= 2) == pytest.approx(p**2, abs=0.01)
    declines = np.array([f.rent_decline_per_period for f in futures])
    lo, hi = A.RENT_DECLINE_MIN.value, A.RENT_DECLINE_MAX.value
    assert lo <= declines.min() and declines.max() <= hi and declines.mean() == pytest.approx((lo + hi) / 2, abs=0.005)
    tokens = np.array([v for f in futures for v in f.tokens_factors.values()])
    assert tokens.mean() == pytest.approx(1.0, abs=0.02)
    assert np.std(np.log(tokens)) == pytest.approx(A.DEMAND_SIGMA.value, rel=0.05)
