"""Buy now or wait: the fleet plan's first purchase, tried against sampled futures.

`planner fleet` plans one future: today's prices, the stated lead times, the stated demand. This module asks
whether its first purchase still looks right when those move. It is NOT a two-stage stochastic program (one
model over all futures that chooses the first purchase knowing only their distribution); it evaluates two
fixed first-stage decisions across futures:

  1. the point plan: the fleet MILP under the nominal future, solved as `planner fleet` solves it (create,
     solve, polish; one solver thread, so it repeats); when the nominal fleet cannot be met, the priced
     relaxation below (where `planner fleet` shows its cheapest single relaxation instead);
  2. its decision period t1: the first period in which the point plan buys (delivers) anything;
  3. two policies for deliveries up to and including t1: "buy now" fixes them to the point plan's (nothing
     before t1, its purchases in t1), "wait" fixes them to nothing (rent or defer); every later period is free;
  4. sampled futures (`sample_futures`), each a perturbation of the fleet's tables (see below);
  5. per future and policy, the fleet MILP re-solved under that future with the first stage fixed: its
     discounted cost (NPV, net of residual value, with late penalties) is the policy's cost in that future;
  6. per policy: the expected, p10/p50/p90 and worst cost, how often it is the cheaper one, and the expected
     regret (its cost minus the better policy's, future by future); the answer is the lower expected cost,
     with its p90 beside it.

Each re-solve sees its whole future (perfect foresight after t1), for both policies alike: the costs are a
lower bound on what a planner learning the future quarter by quarter would pay, and the comparison is of the
first decision only.

A future perturbs (each a named, stated assumption in planner/assumptions/uncertainty.py; none is measured):
  - purchase prices per offer: a mean-one lognormal factor exp(s z - s^2/2) with s the catalog row's price
    uncertainty by confidence (planner.hardware.costing.price_uncertainty) and z = sqrt(share) z_vendor +
    sqrt(1 - share) z_offer: a vendor's offers share `share` of the variance (sweep.price_family_share);
    volume tiers move with the list price; NICs, links and switches do not move;
  - cloud rates: one decline per quarter per future, uniform in [futures.rent_decline_min_per_period,
    futures.rent_decline_max_per_period], applied from the first quarter to every cloud bill (training runs
    and serving instances);
  - deliveries: each offer's lead time slips by k quarters with P(k >= j) = p^j (futures.slip_probability),
    k at most futures.max_slip_periods and never past the horizon; an order placed under "buy now" arrives k
    quarters late (paid on delivery, as the model pays);
  - demand: each training job's tokens, and each service's tokens/s and (apart) its growth rate, times a
    mean-one lognormal factor (futures.demand_sigma); the run options are rebuilt from the performance model.

A future (under a policy) that no plan meets is solved again with every limit relaxed and each unit of
violation priced (futures.shortfall_usd[...]); its cost includes that price. Offers that tables/fleet.py
drops as dominated at nominal prices stay dropped in every future (an approximation: a future in which a
dropped offer turns cheaper does not see it).

`buy_now_or_wait(..., run=...)` maps `evaluate_future` over the futures with one picklable `FutureContext`
shared by all (the catalog, the fleet and its nominal tables: a parallel map such as Dask's sends it to each
worker once, and each task is a Future alone); the result does not depend on the map or its order.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pulp
from pydantic import BaseModel, ConfigDict, Field

from planner.answers.fleet import DEFAULT_GAP, DEFAULT_SOLVER, polish
from planner.assumptions import uncertainty as A
from planner.base.errors import ScenarioError, SolverError
from planner.base.units import format_usd
from planner.catalog.load import Catalog
from planner.hardware.costing import price_uncertainty
from planner.inputs.fleet import Fleet
from planner.model.calibration import Calibration
from planner.optimize import fleet as milp
from planner.optimize.fleet import Solved, solve_model
from planner.optimize.solver import var_name
from planner.tables import fleet as ft
from planner.tables.fleet import FleetData

BUY_NOW, WAIT = "buy now", "wait"
POLICIES = (BUY_NOW, WAIT)
THREADS = 1  # one CBC thread: its parallel search is not repeatable (answers/fleet_readout.repeat_note)
SLACK_USED = 1e-6  # a slack or a late run above this counts as a shortfall
TIE_REL = 1e-9  # two costs this close (relative) are a tie: each policy gets half the future
GROWTH_RANGE = (-0.5, 2.0)  # inputs/fleet.InferenceService.growth_per_period's bounds

Run = Callable[[Callable, object, Sequence], list]  # run(fn, shared, items) -> [fn(shared, item), ...]


def serial(fn: Callable, shared, items: Sequence) -> list:
    """The default map, fn(shared, item) for each item: one after another, in order."""
    return [fn(shared, x) for x in items]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# ---------------------------------------------------------------- futures


@dataclass(frozen=True)
class Spread:
    """How far the futures move; the defaults are planner/assumptions/uncertainty.py's. `Spread.none()` moves
    nothing: every future is the nominal one."""

    price_sigma_scale: float = 1.0  # times price_uncertainty(confidence)
    vendor_share: float = A.PRICE_FAMILY_SHARE.value
    rent_decline_min_per_period: float = A.RENT_DECLINE_MIN.value
    rent_decline_max_per_period: float = A.RENT_DECLINE_MAX.value
    slip_probability: float = A.SLIP_PROBABILITY.value
    max_slip_periods: int = int(A.MAX_SLIP_PERIODS.value)
    demand_sigma: float = A.DEMAND_SIGMA.value

    @classmethod
    def none(cls) -> Spread:
        return cls(0.0, A.PRICE_FAMILY_SHARE.value, 0.0, 0.0, 0.0, 0, 0.0)

    def described(self) -> list[str]:
        return [
            f"purchase prices: mean-one lognormal, sigma = {self.price_sigma_scale:g} x the catalog row's price "
            f"uncertainty by confidence; {self.vendor_share:.0%} of the log-variance shared per vendor",
            f"cloud rates: fall {self.rent_decline_min_per_period:.1%}-{self.rent_decline_max_per_period:.1%} "
            "per quarter (uniform, one draw per future)",
            f"deliveries: each offer slips a quarter with probability {self.slip_probability:g}, again with the "
            f"same probability, at most {self.max_slip_periods} quarter(s)",
            f"demand: tokens, tokens/s and growth times mean-one lognormal factors, sigma {self.demand_sigma:g}",
        ]


class Future(_Frozen):
    """One sampled future: the factors and slips it applies, by server, job and service name."""

    index: int
    seed: int
    price_factors: dict[str, float] = Field(description="server -> factor on its price (and its tiers)")
    slip_periods: dict[str, int] = Field(description="server -> quarters its deliveries slip")
    rent_decline_per_period: float = Field(description="fraction every cloud rate falls per quarter")
    tokens_factors: dict[str, float] = Field(description="training job -> factor on its tokens")
    demand_factors: dict[str, float] = Field(description="service -> factor on its tokens/s (or requests/s)")
    growth_factors: dict[str, float] = Field(description="service -> factor on its growth per quarter")

    @property
    def moves_demand(self) -> bool:
        factors = [*self.tokens_factors.values(), *self.demand_factors.values(), *self.growth_factors.values()]
        return any(f != 1.0 for f in factors)


def nominal_future(data: FleetData, index: int = -1, seed: int = 0) -> Future:
    """The future the point plan is made for: nothing moves."""
    return _draw(data, seed, index, Spread.none())


def sample_futures(data: FleetData, count: int, seed: int, spread: Spread | None = None) -> list[Future]:
    """`count` futures of the fleet's tables (ft.build), reproducible from `seed`: future i draws from
    numpy's default_rng([seed, i]), so it is the same however many are drawn. Takes the built tables, not
    the fleet file: the price spread is the catalog row's confidence, which the file does not carry."""
    spread = spread or Spread()
    return [_draw(data, seed, i, spread) for i in range(count)]


def _draw(data: FleetData, seed: int, index: int, spread: Spread) -> Future:
    # the draws come in a fixed order (vendors, offers, rent, slips, jobs, services) so a future is a
    # function of (seed, index, spread) alone
    rng = np.random.default_rng([seed, index]) if index >= 0 else None
    offers, fleet = data.offers, data.fleet
    servers = list(offers["server"])
    return Future(
        index=index,
        seed=seed,
        price_factors=dict(zip(servers, _price_factors(rng, offers, spread), strict=True)),
        rent_decline_per_period=_rent_decline(rng, spread),
        slip_periods=dict(zip(servers, _slips(rng, len(servers), spread), strict=True)),
        tokens_factors=dict(
            zip([j.name for j in fleet.training], _lognormal(rng, len(fleet.training), spread), strict=True)
        ),
        **_service_factors(rng, [s.name for s in fleet.inference], spread),
    )


def _price_factors(rng, offers, spread: Spread) -> list[float]:
    """exp(s z - s^2/2) with z = sqrt(share) z_vendor + sqrt(1 - share) z_own: unit variance, so s stays the
    stated sigma, and corr(log f1, log f2) = share for two offers of one vendor."""
    if rng is None:
        return [1.0] * len(offers)
    vendors = [str(v) for v in offers["vendor"]]
    by_vendor = dict(zip(sorted(set(vendors)), rng.standard_normal(len(set(vendors))), strict=True))
    own = rng.standard_normal(len(offers))
    share = spread.vendor_share
    z = np.array([math.sqrt(share) * by_vendor[v] for v in vendors]) + math.sqrt(1 - share) * own
    sigma = np.array([price_uncertainty(c) for c in offers["confidence"]]) * spread.price_sigma_scale
    return [float(f) for f in np.exp(sigma * z - sigma**2 / 2)]


def _rent_decline(rng, spread: Spread) -> float:
    if rng is None:
        return 0.0
    lo, hi = spread.rent_decline_min_per_period, spread.rent_decline_max_per_period
    return float(lo + (hi - lo) * rng.random())


def _slips(rng, count: int, spread: Spread) -> list[int]:
    """Quarters of slip per offer: one more with probability p each time, up to the maximum."""
    if rng is None:
        return [0] * count
    draws = rng.random((count, spread.max_slip_periods))
    return [int(np.argmin(np.append(row < spread.slip_probability, False))) for row in draws]


def _lognormal(rng, count: int, spread: Spread) -> list[float]:
    if rng is None:
        return [1.0] * count
    s = spread.demand_sigma
    return [float(f) for f in np.exp(s * rng.standard_normal(count) - s**2 / 2)]


def _service_factors(rng, names: list[str], spread: Spread) -> dict:
    level, growth = _lognormal(rng, len(names), spread), _lognormal(rng, len(names), spread)
    return {
        "demand_factors": dict(zip(names, level, strict=True)),
        "growth_factors": dict(zip(names, growth, strict=True)),
    }


# ---------------------------------------------------------------- a future's tables


def future_spec(spec: Fleet, future: Future) -> Fleet:
    """The fleet file with the future's demand: tokens, tokens/s (or requests/s) and growth scaled."""
    data = spec.model_dump(by_alias=True)
    for job in data["training"]:
        job["tokens"] *= future.tokens_factors[job["name"]]
    for svc in data["inference"]:
        key = "tokens_per_s" if svc["tokens_per_s"] is not None else "requests_per_s"
        svc[key] *= future.demand_factors[svc["name"]]
        grown = svc["growth_per_period"] * future.growth_factors[svc["name"]]
        svc["growth_per_period"] = min(max(grown, GROWTH_RANGE[0]), GROWTH_RANGE[1])
    return Fleet.model_validate(data)


def future_data(
    catalog: Catalog, spec: Fleet, calibration: Calibration, nominal: FleetData, future: Future, source: str
) -> FleetData:
    """The fleet's tables in this future: rebuilt when its demand moves (a job's run options depend on its
    tokens), then its prices and lead times. Raises ScenarioError when a job cannot finish in the horizon."""
    data = ft.build(catalog, future_spec(spec, future), calibration, source) if future.moves_demand else nominal
    return _priced_and_slipped(data, future)


def _priced_and_slipped(data: FleetData, future: Future) -> FleetData:
    offers = data.offers
    factor = offers["server"].map(future.price_factors).astype(float)
    slip = offers["server"].map(future.slip_periods).astype(int)
    # never past the horizon's last quarter (inputs/fleet.check: lead < periods)
    lead = np.minimum(offers["lead"] + slip, np.maximum(offers["lead"], data.horizon - 1))
    by_offer = dict(zip(offers["o"], factor, strict=True))
    tiers = data.tiers.assign(unit_usd=data.tiers["unit_usd"] * data.tiers["o"].map(by_offer))
    return replace(data, offers=offers.assign(price_usd=offers["price_usd"] * factor, lead=lead), tiers=tiers)


# ---------------------------------------------------------------- the first stage


class FixedPurchase(_Frozen):
    """A purchase the first stage fixes: units of a server into a pool, delivered in a period."""

    server: str
    pool: str
    pool_key: str = Field(description="tables/fleet pools.key: the pool in every future's tables")
    units: int
    period: str = Field(description="delivered in (nominal lead time)")
    ordered: str = Field(description="ordered in: the delivery period less the lead time")
    lead_periods: int


def first_stage(solved: Solved) -> tuple[int | None, list[FixedPurchase]]:
    """The first period the solved plan delivers anything in, and what it delivers then (None: it buys
    nothing)."""
    m, d = solved.model, solved.model.data
    bought = {key: round(x.value() or 0) for key, x in m.buy.items()}
    periods = [t for (_, _, t), units in bought.items() if units > 0]
    if not periods:
        return None, []
    t1 = min(periods)
    pools, offers = d.pools.set_index("p"), d.offers.set_index("o")
    out = []
    for (o, p, t), units in sorted(bought.items()):
        if t == t1 and units > 0:
            lead = int(offers.at[o, "lead"])
            ordered = d.labels[t - lead - 1] if t - lead >= 1 else "before the horizon"
            out.append(FixedPurchase(server=offers.at[o, "server"], pool=pools.at[p, "name"],
                                     pool_key=pools.at[p, "key"], units=units, period=d.labels[t - 1],
                                     ordered=ordered, lead_periods=lead))  # fmt: skip
    return t1, out


def fix_first_stage(m: milp.Model, policy: str, t1: int, purchases: list[FixedPurchase]) -> None:
    """Deliveries up to t1 as the policy says: "buy now" the point plan's (an order whose offer slips in
    this future arrives that many quarters after t1, at least its units then), "wait" none. Constraints on
    the purchase variables x[o,p,t], added to the model."""
    d = m.data
    o_of = dict(zip(d.offers["server"], d.offers["o"], strict=True))
    p_of = dict(zip(d.pools["key"], d.pools["p"], strict=True))
    lead = dict(zip(d.offers["o"], d.offers["lead"], strict=True))
    due: dict[tuple[int, int, int], int] = {}
    for buy in purchases if policy == BUY_NOW else []:
        o, p = o_of[buy.server], p_of[buy.pool_key]
        at = min(t1 + int(lead[o]) - buy.lead_periods, d.horizon)
        due[(o, p, at)] = due.get((o, p, at), 0) + buy.units
    for (o, p, t), x in m.buy.items():
        if t <= t1:
            m.problem += x == due.get((o, p, t), 0), var_name("first_stage", o, p, t)
    for (o, p, t), units in due.items():
        if t > t1:
            m.problem += m.buy[(o, p, t)] >= units, var_name("slipped_order", o, p, t)
        elif (o, p, t) not in m.buy:
            raise ValueError(f"no purchase variable for {units} units of offer {o} into pool {p} in period {t}")


def discount_rents(m: milp.Model, decline_per_period: float) -> None:
    """Cloud bills of period t times (1 - decline)^(t-1): the objective gains discount_t x (factor - 1) x the
    period's cloud cash (define_objective weighs cloud cash by discount_t)."""
    if not decline_per_period:
        return
    discount = m.data.periods.set_index("t")["discount"]
    terms = [
        float(discount[t]) * ((1 - decline_per_period) ** (t - 1) - 1) * m.cash["cloud"][t]
        for t in range(1, m.data.horizon + 1)
    ]
    m.problem.setObjective(m.problem.objective + pulp.lpSum(terms))


def shortfall_cost(m: milp.Model) -> pulp.LpAffineExpression:
    """The price of a relaxed model's violations: late quarters of runs past a hard deadline (soft ones pay
    their own penalty already) and every slack, at futures.shortfall_usd."""
    columns = m.data.columns.set_index("col")
    price = {family: c.value for family, c in A.SHORTFALL_USD.items()}
    terms = [(run, float(columns.at[c, "late"]) * price["deadlines"])
             for c, run in m.run.items() if columns.at[c, "hard_late"]]  # fmt: skip
    for family, slacks in m.slack.items():
        terms += [(s, price[family]) for s in slacks.values()]
    return pulp.LpAffineExpression(terms)


# ---------------------------------------------------------------- one future


@dataclass(frozen=True)
class Settings:
    solver: str = DEFAULT_SOLVER
    gap: float | None = DEFAULT_GAP
    time_limit_s: float | None = None  # per solve


class PolicyCost(_Frozen):
    """One policy in one future."""

    cost_usd: float | None = Field(description="discounted cost with penalties and priced shortfalls; None: unsolved")
    penalty_usd: float = Field(description="late penalties plus priced shortfalls, inside cost_usd")
    shortfalls: list[str] = Field(description="limits the future could not meet (relaxed and priced)")
    status: str = Field(description="optimal (to the gap), feasible (time limit), or unsolved")
    solved_to_gap: bool
    gap_proven: float | None


class FutureOutcome(_Frozen):
    index: int
    future: Future
    buy_now: PolicyCost | None
    wait: PolicyCost | None
    error: str = Field("", description="why the future could not be evaluated ('' when it was)")

    def cost(self, policy: str) -> float | None:
        outcome = self.buy_now if policy == BUY_NOW else self.wait
        return None if outcome is None else outcome.cost_usd


@dataclass(frozen=True)
class FutureContext:
    """What every future's evaluation reads besides the future (picklable: sent to each worker once)."""

    catalog: Catalog
    spec: Fleet
    calibration: Calibration
    nominal: FleetData
    t1: int
    purchases: tuple[FixedPurchase, ...]
    settings: Settings
    source: str = "fleet file"


def evaluate_future(context: FutureContext, future: Future) -> FutureOutcome:
    """Both policies in one future (top level, for a parallel map)."""
    c = context
    try:
        data = future_data(c.catalog, c.spec, c.calibration, c.nominal, future, c.source)
    except ScenarioError as exc:  # a job no configuration finishes within the horizon: neither policy helps
        return FutureOutcome(index=future.index, future=future, buy_now=None, wait=None, error=str(exc))
    costs = {policy: solve_policy(data, future, policy, c.t1, list(c.purchases), c.settings)[0]
             for policy in POLICIES}  # fmt: skip
    return FutureOutcome(index=future.index, future=future, buy_now=costs[BUY_NOW], wait=costs[WAIT])


def solve_policy(data: FleetData, future: Future, policy: str | None, t1, purchases, settings: Settings):
    """(PolicyCost, Solved or None): the fleet MILP in this future with the first stage fixed (policy None:
    nothing fixed). As the limits stand first; when no plan meets them, relaxed with shortfalls priced."""
    solved, short = _solve(data, future, policy, t1, purchases, settings, frozenset())
    if solved is None:
        solved, short = _solve(data, future, policy, t1, purchases, settings, frozenset(milp.RELAXATIONS))
    if solved is None:
        unsolved = PolicyCost(cost_usd=None, penalty_usd=0.0, shortfalls=[], status="unsolved", solved_to_gap=False,
                              gap_proven=None)  # fmt: skip
        return unsolved, None
    return _cost(solved, short), solved


def _solve(data, future: Future, policy, t1, purchases, settings: Settings, relax: frozenset):
    m = milp.create_model(data, relax)
    if policy is not None:
        fix_first_stage(m, policy, t1, purchases)
    discount_rents(m, future.rent_decline_per_period)
    short = shortfall_cost(m) if relax else None
    if short is not None:
        m.problem.setObjective(m.problem.objective + short)
    try:
        solved = solve_model(m, settings.solver, settings.time_limit_s, settings.gap, THREADS)
    except SolverError:  # no solution within the time limit
        return None, None
    if not solved.result.solved:
        return None, None
    return polish(solved, settings.time_limit_s, THREADS), short


def _cost(solved: Solved, short) -> PolicyCost:
    m = solved.model
    shortfalls = sorted(
        f for f, slacks in m.slack.items() if any((s.value() or 0) > SLACK_USED for s in slacks.values())
    )
    columns = m.data.columns.set_index("col")
    if any(columns.at[c, "hard_late"] and (r.value() or 0) > 0.5 for c, r in m.run.items()):
        shortfalls = sorted([*shortfalls, "deadlines"])
    penalty = float(pulp.value(milp.penalties(m)) or 0.0) + (float(pulp.value(short) or 0.0) if short else 0.0)
    result = solved.result
    return PolicyCost(cost_usd=float(result.objective), penalty_usd=penalty, shortfalls=shortfalls,
                      status=result.status, solved_to_gap=result.status == "optimal",
                      gap_proven=solved.gap_proven)  # fmt: skip


# ---------------------------------------------------------------- the answer


class PolicySummary(_Frozen):
    policy: str
    fixes: str = Field(description="what the policy fixes, in words")
    purchases: list[FixedPurchase] = Field(description="the first-stage purchases it fixes")
    costs_usd: list[float] = Field(description="its cost in each evaluated future, in future order")
    expected_usd: float
    p10_usd: float
    p50_usd: float
    p90_usd: float
    worst_usd: float
    probability_cheaper: float = Field(description="share of futures it is the cheaper in (ties: half each)")
    expected_regret_usd: float = Field(description="mean of its cost minus the better policy's, per future")
    futures_short: int = Field(description="futures in which it could not meet every limit (priced)")
    futures_not_to_gap: int = Field(description="futures whose solve stopped before the gap (time limit)")


class BuyNowOrWait(_Frozen):
    name: str
    decision_period: str | None = Field(description="the first period the point plan buys in (None: it buys nothing)")
    futures: int
    seed: int
    solver: str
    gap: float | None
    nominal_cost_usd: float | None = Field(description="the point plan's discounted cost (nominal future)")
    nominal_status: str
    policies: list[PolicySummary]
    answer: str = Field(description='"buy now", "wait", or "nothing to buy"')
    answer_text: str
    ties: int
    futures_within_gap: int = Field(description="futures whose two costs differ by less than the solver gap")
    unevaluated: list[str] = Field(description="futures not evaluated, and why")
    outcomes: list[FutureOutcome]
    spread: list[str]
    method: str

    def policy(self, name: str) -> PolicySummary:
        return next(p for p in self.policies if p.policy == name)


METHOD = (
    "the point plan's first-period purchases fixed ('buy now') or forbidden ('wait') and the fleet MILP "
    "re-solved in each sampled future with perfect foresight after that period: an evaluation of two "
    "first-stage decisions, not a two-stage stochastic program"
)


def buy_now_or_wait(
    catalog: Catalog,
    spec: Fleet,
    calibration: Calibration,
    futures: int = 20,
    seed: int = 0,
    run: Run | None = None,
    solver: str | None = None,
    time_limit_s: float | None = None,
    *,
    gap: float | None = DEFAULT_GAP,
    spread: Spread | None = None,
    source: str = "fleet file",
) -> BuyNowOrWait:
    """Buy the point plan's first purchases now, or wait: each re-solved in `futures` sampled futures.
    `run(fn, shared, items) -> list` maps evaluate_future(shared, item) over the futures (default: in order,
    here); `time_limit_s` bounds each solve (a solve it stops makes the result depend on the machine)."""
    settings = Settings(solver or DEFAULT_SOLVER, gap, time_limit_s)
    nominal = ft.build(catalog, spec, calibration, source)
    point, solved = solve_policy(nominal, nominal_future(nominal), None, None, [], settings)
    t1, purchases = first_stage(solved) if solved is not None else (None, [])
    common = dict(name=spec.name, futures=futures, seed=seed, solver=settings.solver, gap=gap,
                  nominal_cost_usd=point.cost_usd, nominal_status=point.status, spread=(spread or Spread()).described(),
                  method=METHOD)  # fmt: skip
    if t1 is None:
        why = "the point plan buys nothing (it rents or cannot be solved): there is no purchase to time"
        return BuyNowOrWait(decision_period=None, policies=[], answer="nothing to buy", answer_text=why, ties=0,
                            futures_within_gap=0, unevaluated=[], outcomes=[], **common)  # fmt: skip
    context = FutureContext(catalog, spec, calibration, nominal, t1, tuple(purchases), settings, source)
    sampled = sample_futures(nominal, futures, seed, spread)
    outcomes = sorted((run or serial)(evaluate_future, context, sampled), key=lambda o: o.index)
    label = nominal.labels[t1 - 1]
    return _answer(outcomes, purchases, label, gap, common)


def _answer(outcomes: list[FutureOutcome], purchases, label: str, gap, common: dict) -> BuyNowOrWait:
    done = [o for o in outcomes if o.cost(BUY_NOW) is not None and o.cost(WAIT) is not None]
    unevaluated = [f"future {o.index}: {o.error or 'a policy has no solution within the time limit'}"
                   for o in outcomes if o not in done]  # fmt: skip
    costs = {p: np.array([o.cost(p) for o in done], dtype=float) for p in POLICIES}
    best = np.minimum(costs[BUY_NOW], costs[WAIT])
    tie = np.isclose(costs[BUY_NOW], costs[WAIT], rtol=TIE_REL, atol=0.0)
    fixes = {
        BUY_NOW: f"the point plan's deliveries up to {label}: " + "; ".join(
            f"{b.units} x {b.server} into {b.pool} (ordered {b.ordered})" for b in purchases),
        WAIT: f"no deliveries up to {label}: rent or defer; later periods free",
    }  # fmt: skip
    summaries = [
        _summary(p, fixes[p], purchases if p == BUY_NOW else [], costs[p], best, tie, done, costs) for p in POLICIES
    ]
    spread_usd = abs(costs[BUY_NOW] - costs[WAIT])
    within = int(np.sum(spread_usd < (gap or 0.0) * best)) if len(done) else 0
    answer, text = _verdict(summaries, len(done), gap)
    return BuyNowOrWait(decision_period=label, policies=summaries, answer=answer, answer_text=text,
                        ties=int(tie.sum()), futures_within_gap=within, unevaluated=unevaluated, outcomes=outcomes,
                        **common)  # fmt: skip


def _summary(policy, fixes, purchases, mine: np.ndarray, best, tie, done, costs) -> PolicySummary:
    other = costs[WAIT if policy == BUY_NOW else BUY_NOW]
    wins = np.where(tie, 0.5, (mine < other).astype(float))
    outcome = [o.buy_now if policy == BUY_NOW else o.wait for o in done]
    if not len(mine):
        nan = float("nan")
        stats = dict(expected_usd=nan, p10_usd=nan, p50_usd=nan, p90_usd=nan, worst_usd=nan,
                     probability_cheaper=nan, expected_regret_usd=nan)  # fmt: skip
    else:
        p10, p50, p90 = (float(q) for q in np.percentile(mine, [10, 50, 90]))
        stats = dict(expected_usd=float(mine.mean()), p10_usd=p10, p50_usd=p50, p90_usd=p90,
                     worst_usd=float(mine.max()), probability_cheaper=float(wins.mean()),
                     expected_regret_usd=float((mine - best).mean()))  # fmt: skip
    return PolicySummary(policy=policy, fixes=fixes, purchases=purchases, costs_usd=[float(c) for c in mine],
                         futures_short=sum(bool(c.shortfalls) for c in outcome),
                         futures_not_to_gap=sum(not c.solved_to_gap for c in outcome), **stats)  # fmt: skip


def _verdict(summaries: list[PolicySummary], n: int, gap) -> tuple[str, str]:
    """The lower expected cost (an exact tie: wait, which keeps the option), with the risk beside it."""
    now, wait = summaries
    if not n:
        return "nothing to buy", "no future could be evaluated"
    answer = BUY_NOW if now.expected_usd < wait.expected_usd else WAIT
    win, lose = (now, wait) if answer == BUY_NOW else (wait, now)
    text = (
        f"{answer}: expected {format_usd(win.expected_usd)} against {format_usd(lose.expected_usd)} "
        f"({format_usd(lose.expected_usd - win.expected_usd)} less); p90 {format_usd(win.p90_usd)} against "
        f"{format_usd(lose.p90_usd)}; worst {format_usd(win.worst_usd)} against {format_usd(lose.worst_usd)}; "
        f"cheaper in {win.probability_cheaper:.0%} of {n} futures"
    )
    if win.p90_usd > lose.p90_usd:
        text += f"; but its p90 is the higher: {answer} trades a lower mean for a worse tail"
    if gap and lose.expected_usd - win.expected_usd < gap * win.expected_usd:
        text += f"; the difference is within the solver gap ({gap:.0%}): a tie at this precision"
    return answer, text
