"""`planner sweep`: a purchase across what we don't know.

The point plan (planner plan's) is one answer for one guess of prices, throughput, interruptions and lead times.
A sweep draws those N times (planner/model/draws.py), evaluates every choice (planner/tables/choices.py: the
point plan and the next configurations, each at a ladder of node counts) in every draw, and reports
  * the deadline risk: how often each choice trains its tokens within requirement.days (counted from delivery,
    as the plan's are), and what a miss costs (days late x late_usd_per_day); and when its parts arrive;
  * the probability each choice is the draw's cheapest purchase that meets the deadline;
  * each choice's regret: its total (cost + late cost) minus that cheapest one's cost, expected and over its
    worst decile (CVaR 90%); below zero where missing and paying the late cost was cheaper;
  * the choice of a robust objective among the purchases that meet the deadline with probability >= p_deadline:
    expected-cost (the least expected total) or regret (the least worst-decile regret).
The cheapest of a draw is over the choices compared (Sweep.compared says which), not every catalog purchase.

Draws run as tasks of DRAWS_PER_TASK on planner.base.distributed (Dask); a results file keeps finished tasks
so an interrupted sweep resumes where it stopped.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from planner.assumptions import uncertainty as U
from planner.base.errors import PlannerError, ScenarioError
from planner.base.fileio import InputFileError, read_bytes, write_atomic
from planner.base.units import format_usd
from planner.catalog.load import Catalog
from planner.inputs.scenario import Scenario
from planner.model.calibration import Calibration
from planner.model.draws import draw
from planner.results import Distribution, FuturePolicy, Sweep, SweepChoice
from planner.tables import buy as cand
from planner.tables import choices as choice_table
from planner.tables import rent as rent_table
from planner.tables.rent import hourly_rate

OBJECTIVES = ("point", "expected-cost", "regret")
SAVE_EVERY_S = 5.0  # a results file is rewritten at most this often (and at the end): an interrupt loses less
WORST_SHARE = 0.1  # the worst decile of a choice's regrets
BINS = 20
OUTCOMES = ("cost", "days", "delivery")  # Choices.outcome's arrays, in its order
# kept as float32 (7 significant digits: $10 in $100M, 1e-5 of a day in 100 days): 12 bytes per draw and
# purchase, so MAX_OUTCOMES is 240 MB of memory and of results file
OUTCOME_DTYPE = np.float32
MAX_OUTCOMES = 20_000_000
# the largest file _save writes, and its header room (a read allocates this much)
MAX_RESULTS_BYTES = MAX_OUTCOMES * len(OUTCOMES) * np.dtype(OUTCOME_DTYPE).itemsize + 2**20


def run(
    catalog: Catalog,
    scenario: Scenario,
    calibration: Calibration,
    draws: int = 1000,
    seed: int = 0,
    objective: str = "point",
    p_deadline: float = 0.9,
    late_usd_per_day: float | None = None,
    engine=None,
    results_path: str | Path | None = None,
    progress: Callable[[str], None] = lambda _: None,
    rent: bool = False,
) -> Sweep:
    """The sweep of a purchase (planner plan's question) or, with `rent`, of a rental (planner cloud's)."""
    from planner.base.distributed import Engine

    started = time.perf_counter()
    engine = engine or Engine()
    if objective not in OBJECTIVES:
        raise ScenarioError(f"sweep objective {objective!r}: use one of {', '.join(OBJECTIVES)}")
    if scenario.requirement.tokens is None or scenario.requirement.days is None:
        raise ScenarioError(
            "planner sweep needs a deadline: give requirement.tokens and requirement.days (or --tokens and --days)"
        )
    choices = (
        _rentals(catalog, scenario, calibration, progress)
        if rent
        else _purchases(catalog, scenario, calibration, progress)
    )
    outcomes = _outcomes(choices, draws, seed, engine, results_path, progress)
    late = (
        (late_usd_per_day, "given (--late-cost)")
        if late_usd_per_day is not None
        else late_cost(catalog, choices, scenario)
    )
    return _summary(scenario, choices, outcomes, late, objective, p_deadline).model_copy(
        update={
            "draws": draws,
            "seed": seed,
            "engine": engine.description,
            "calibration": calibration.source,
            "seconds": time.perf_counter() - started,
        }
    )


def fleet_futures(catalog: Catalog, spec, calibration: Calibration, futures: int, seed: int, engine, source: str,
                  progress: Callable[[str], None] = lambda _: None) -> Sweep:  # fmt: skip
    """A fleet file's sweep: its first purchase bought now or deferred, across `futures` sampled futures
    (planner/answers/futures.py), the futures solved as tasks on `engine`."""
    from planner.answers import futures as fut
    from planner.assumptions import uncertainty as U
    from planner.base.distributed import Engine

    started = time.perf_counter()
    engine = engine or Engine()
    progress(f"the point fleet plan, then {futures} futures x 2 policies ({engine.description})")
    answer = fut.buy_now_or_wait(catalog, spec, calibration, futures, seed, run=_mapped_on(engine, progress),
                                 source=source)  # fmt: skip
    policies = [
        FuturePolicy(
            policy=p.policy,
            purchases=[
                {"server": b.server, "units": b.units, "period": b.period, "ordered": b.ordered} for b in p.purchases
            ],  # fmt: skip
            expected_cost_usd=p.expected_usd,
            cost_p10_usd=p.p10_usd,
            cost_p50_usd=p.p50_usd,
            cost_p90_usd=p.p90_usd,
            worst_cost_usd=p.worst_usd,
            p_cheaper=p.probability_cheaper,
            expected_regret_usd=p.expected_regret_usd,
            costs_usd=p.costs_usd,
        )
        for p in answer.policies
    ]
    constants = [U.PRICE_FAMILY_SHARE, U.RENT_DECLINE_MIN, U.RENT_DECLINE_MAX, U.SLIP_PROBABILITY,
                 U.MAX_SLIP_PERIODS, U.DEMAND_SIGMA, *U.SHORTFALL_USD.values()]  # fmt: skip
    decided = f"the first period it buys in, {answer.decision_period}" if answer.decision_period else "none"
    return Sweep(
        scenario=spec.name,
        kind="fleet",
        draws=futures,
        seed=seed,
        engine=engine.description,
        objective="point",
        risk=[
            f"Buy now or wait ({decided}): {answer.answer_text}.",
            f"Point plan: {format_usd(answer.nominal_cost_usd or 0)} discounted ({answer.nominal_status}).",
            *answer.spread,
            *answer.unevaluated,
        ],
        policies=policies,
        compared=answer.method,
        assumptions=_rows(constants),
        calibration=calibration.source,
        seconds=time.perf_counter() - started,
    )


def _mapped_on(engine, progress):
    """A map(fn, shared, items) -> [fn(shared, item), ...] in order, over the engine's tasks (fn and shared sent to
    each worker once)."""

    def run(fn, shared, items) -> list:
        out: dict[int, object] = {}

        def keep(task, result) -> None:
            out[task[0]] = result
            if len(out) % max(1, len(items) // 5) == 0 or len(out) == len(items):  # five lines, not one a future
                progress(f"{len(out)} of {len(items)} futures")

        engine.map(_call, (fn, shared), list(enumerate(items)), keep)
        return [out[i] for i in range(len(items))]

    return run


def _call(pair, task):
    fn, shared = pair
    return fn(shared, task[1])


def _purchases(catalog, scenario, calibration, progress) -> choice_table.Choices:
    from planner.answers import buy

    progress("the point plan")
    parts = cand.part_designs(catalog, scenario)
    plan = buy.run(catalog, scenario, calibration, alternatives=0, parts=parts)
    table = cand.build(catalog, scenario, calibration, parts)
    progress("the purchases to compare, at their node counts")
    return choice_table.build(catalog, scenario, calibration, table, _point_row(table, plan))


def _rentals(catalog, scenario, calibration, progress) -> choice_table.Choices:
    from planner.answers import rent
    from planner.base.errors import InfeasibleError
    from planner.tables import rentals

    progress("the point rental (planner cloud's)")
    options, _ = rent_table.build_options(catalog, scenario, calibration)
    solution = rent.solve_cloud(options, scenario)
    if solution is None:
        raise InfeasibleError(f"no rental meets scenario {scenario.name!r}: planner cloud says why")
    point = rent.describe(solution.option, solution.count, solution.variant, solution.mix, scenario, "optimal")
    progress("the rentals to compare, at their instance counts")
    try:
        return rentals.build(catalog, scenario, calibration, options, point)
    except ValueError as exc:
        raise ScenarioError(str(exc)) from None


def _point_row(table: cand.Candidates, plan) -> tuple[dict, int]:
    """The candidate row the point plan bought (its hardware, micro-batch and layout) and its node count."""
    c, frame = plan.choice, table.feasible
    match = {
        "server": c.server,
        "nic": c.nic,
        "nics_per_node": c.nics_per_node,
        "fabric": c.fabric,
        "switch": c.switch,
        "tier": c.tier,
        "topology": c.topology,
        "oversubscription": c.oversubscription,
        "micro_batch": c.micro_batch,
        **{k: getattr(c, k) for k in ("tp", "pp", "vp", "cp", "ep", "checkpointing")},
    }
    ok = cand.matching(frame, match) & (frame["n_lo"].to_numpy() <= c.nodes)
    if not ok.any():
        raise PlannerError("the point plan's configuration is not in its candidate table; report this as a bug")
    return cand.clean_row(frame[ok].iloc[0].to_dict()), int(c.nodes)


# ---------------------------------------------------------------- the draws, as tasks


def evaluate_task(choices: choice_table.Choices, task: tuple[int, int, int]) -> tuple[np.ndarray, ...]:
    """One task: draws first..first+count-1 of seed (task = (seed, first, count)) and every choice's outcome."""
    seed, first, count = task
    return tuple(a.astype(OUTCOME_DTYPE) for a in choices.outcome(draw(choices.spread, seed, first, count)))


def _outcomes(choices, draws: int, seed: int, engine, results_path, progress) -> dict[str, np.ndarray]:
    """[draws x choices] cost, days and delivery (OUTCOMES), from the results file's finished tasks and the
    engine for the rest."""
    n = len(choices.frame)
    if draws * n > MAX_OUTCOMES:
        raise ScenarioError(
            f"--draws {draws:,} x {n:,} purchases is {draws * n / 1e6:,.0f}M outcomes, more than the "
            f"{MAX_OUTCOMES / 1e6:,.0f}M a sweep keeps in memory; use at most {MAX_OUTCOMES // n:,} draws"
        )
    signature = _signature(choices, seed)
    out = {name: np.full((draws, n), np.nan, dtype=OUTCOME_DTYPE) for name in OUTCOMES}
    done = np.zeros(draws, dtype=bool)
    if results_path is not None and Path(results_path).exists():
        _resume(Path(results_path), signature, out, done)
    size = U.DRAWS_PER_TASK
    tasks = [(seed, f, min(size, draws - f)) for f in range(0, draws, size) if not done[f : f + size].all()]
    if done.any():
        progress(f"resumed {int(done.sum()):,} draws from {results_path}")
    progress(f"{draws - int(done.sum()):,} draws x {n:,} purchases ({engine.description})")
    last, saved = [time.monotonic()], [time.monotonic()]

    def keep(task, result) -> None:
        _, first, count = task
        for name, values in zip(OUTCOMES, result, strict=True):
            out[name][first : first + count] = values
        done[first : first + count] = True
        if results_path is not None and (time.monotonic() - saved[0] > SAVE_EVERY_S or done.all()):
            _save(Path(results_path), signature, out, done)  # (not after every task: the file may be 100s of MB)
            saved[0] = time.monotonic()
        if time.monotonic() - last[0] > 2 or done.all():
            last[0] = time.monotonic()
            progress(f"{int(done.sum()):,} of {draws:,} draws")

    try:
        engine.map(evaluate_task, choices.lean(), tasks, keep)
    finally:  # stopped (Ctrl-C, SIGTERM, a lost cluster): keep what finished since the last save
        if results_path is not None and done.any() and not done.all():
            _save(Path(results_path), signature, out, done)
    return out


def _signature(choices, seed: int) -> str:
    """What a results file must match to be resumed: the seed and every number the draws act on."""
    h = hashlib.sha256(f"seed={seed};task={U.DRAWS_PER_TASK}".encode())
    for array in (
        choices.part_usd,
        choices.other_usd,
        choices.tokens_per_s,
        choices.goodput,
        choices.lead_weeks,
        choices.spread.price_sigma,
        choices.spread.residuals,
    ):
        h.update(np.ascontiguousarray(array, dtype=float).tobytes())
    if choices.rent is not None:
        for array in (choices.rent.fixed_usd, choices.rent.prepaid_h, choices.rent.usd_per_h):
            h.update(np.ascontiguousarray(array, dtype=float).tobytes())
    h.update("|".join(choices.frame["label"]).encode())
    return h.hexdigest()


def _save(path: Path, signature: str, out: dict, done) -> None:
    buffer = io.BytesIO()
    np.savez(buffer, signature=np.array(signature), done=done, **out)
    write_atomic(path, lambda tmp: tmp.write_bytes(buffer.getvalue()))


def _check_members(data: bytes) -> None:
    """A results file is what _save writes: np.savez's stored (uncompressed) arrays of these names, so one that
    would inflate beyond its own size (a zip bomb) or hold anything else is refused before it is read."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        members = z.infolist()
        names = {m.filename for m in members}
        if names != {f"{name}.npy" for name in ("signature", "done", *OUTCOMES)}:
            raise ValueError("unexpected members")
        if any(m.compress_type != zipfile.ZIP_STORED or m.file_size > len(data) for m in members):
            raise ValueError("compressed members")


def _resume(path: Path, signature: str, out: dict, done) -> None:
    """Fill the finished draws from a results file of the same sweep (a file of another one is refused)."""
    data = read_bytes(path, MAX_RESULTS_BYTES, "sweep results file")
    try:
        _check_members(data)
        with np.load(io.BytesIO(data), allow_pickle=False) as saved:
            theirs = str(saved["signature"])
            arrays = {name: saved[name] for name in (*OUTCOMES, "done")}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        raise InputFileError(
            path,
            f"not a planner sweep results file ({type(exc).__name__}); give another --results file or delete this one",
        ) from None
    if theirs != signature:
        raise InputFileError(
            path,
            "holds the draws of another sweep (another scenario, catalog, calibration or --seed); give another "
            "--results file, or delete this one to start again",
        )
    rows = min(len(arrays["done"]), len(done))
    if any(arrays[name].shape != (len(arrays["done"]), out[name].shape[1]) for name in OUTCOMES):
        raise InputFileError(path, "its draws have another shape; delete it to start again")
    for name in OUTCOMES:
        out[name][:rows] = arrays[name][:rows]
    done[:rows] = arrays["done"][:rows].astype(bool)


# ---------------------------------------------------------------- summary


def late_cost(catalog: Catalog, choices, scenario: Scenario) -> tuple[float, str]:
    """What a day late costs by default, and what it rests on: renting the point plan's GPUs for a day at the
    catalog's cheapest on-demand rate for that GPU (a miss made good in the cloud: the shortfall is GPUs x days
    late of GPU time); with no such rental, a day of the point plan's capex over its service life."""
    point = choices.frame.iloc[choices.point]
    gpu, gpus = str(point["gpu"]).lower(), int(point["gpus"])
    rates = [
        (hourly_rate(row, "ondemand") / row.gpus, row)
        for row in catalog.items("cloud")
        if row.gpu.lower() == gpu and hourly_rate(row, "ondemand")
    ]
    if rates:
        per_gpu_h, row = min(rates, key=lambda r: r[0])
        return gpus * 24 * per_gpu_h, (
            f"renting the point plan's {gpus:,} {point['gpu']} for a day at ${per_gpu_h:.2f}/GPU-h on demand "
            f"({row.provider} {row.instance} {row.region}, {row.date}, {catalog.cited(row)}): "
            "a miss made good in the cloud; set --late-cost to what a late day costs you"
        )
    years = scenario.objective.years
    return float(point["capex_usd"]) / (years * 365.25), (
        f"the point plan's capex over its {years:g}-year life (objective.years), a day of its cluster (no cloud "
        f"row rents {point['gpu']}); set --late-cost to what a late day costs you"
    )


def _summary(scenario, choices, outcomes: dict, late_and_basis, objective, p_deadline) -> Sweep:
    cost, days = outcomes["cost"], outcomes["days"]
    late, basis = late_and_basis
    deadline = choices.deadline_days
    total = cost + late * np.maximum(days - deadline, 0.0)
    winner = _cheapest(cost, total, days <= deadline)
    regret = total - total[np.arange(len(total)), winner][:, None]
    stats = [
        _choice(choices, c, {k: v[:, c] for k, v in outcomes.items()}, total[:, c], regret[:, c], winner, deadline)
        for c in range(cost.shape[1])
    ]
    point = stats[choices.point]
    chosen_at = _robust(stats, choices.point, objective, p_deadline)
    chosen = stats[chosen_at]
    ranked = sorted(stats, key=lambda s: (-s.p_optimal, s.expected_regret_usd))
    return Sweep(
        scenario=scenario.name,
        kind="plan" if choices.rent is None else "rent",
        draws=len(cost),
        seed=0,
        engine="",
        objective=objective,
        p_deadline=p_deadline if objective != "point" else None,
        deadline_days=deadline,
        late_usd_per_day=late,
        late_basis=basis,
        point=point,
        chosen=chosen,
        choices=ranked,
        compared=_compared(choices),
        distributions=_distributions(choices, {k: v[:, chosen_at] for k, v in outcomes.items()}, total[:, chosen_at]),
        point_distributions=_distributions(
            choices, {k: v[:, choices.point] for k, v in outcomes.items()}, total[:, choices.point]
        ),
        risk=_risk(choices, point, chosen, outcomes, deadline, late, objective, p_deadline),
        assumptions=_assumptions(),
    )


def _cheapest(cost, total, met) -> np.ndarray:
    """Each draw's cheapest purchase: the least cost among those that meet the deadline in it (the deadline is
    the scenario's requirement), or the least total (late cost counted) where none does. The first of equals:
    the point plan's configuration comes first."""
    meeting = np.where(met, cost, np.inf).argmin(axis=1)
    return np.where(met.any(axis=1), meeting, total.argmin(axis=1))


def _choice(choices, c: int, outcome: dict, total, regret, winner, deadline) -> SweepChoice:
    row, cost, days = choices.frame.iloc[c], outcome["cost"], outcome["days"]
    worst = np.sort(regret)[-max(1, int(round(len(regret) * WORST_SHARE))) :]
    return SweepChoice(
        label=str(row["label"]),
        configuration=int(row["configuration"]),
        server=str(row["server"]),
        gpu=str(row["gpu"]),
        nic=row["nic"] if isinstance(row["nic"], str) else None,
        fabric=str(row["fabric"]),
        switch=row["switch"] if isinstance(row["switch"], str) else None,
        tier=int(row["tier"]),
        nodes=int(row["nodes"]),
        gpus=int(row["gpus"]),
        point_cost_usd=float(row["objective_usd"]),
        tokens_per_s=float(row["tokens_per_s"]),
        p_optimal=float(np.mean(winner == c)),
        p_deadline_met=float(np.mean(days <= deadline)),
        # a purchase's is exact: the price factors have mean 1 and are independent of the days, so E[cost] is
        # the point cost and only the late cost is a sample mean (no noise between purchases of equal price);
        # a rental's cost grows with its hours, a sample mean
        expected_cost_usd=float(row["objective_usd"]) if choices.cost_is_fixed else float(cost.mean()),
        expected_total_usd=(float(row["objective_usd"]) if choices.cost_is_fixed else float(cost.mean()))
        + float((total - cost).mean()),
        cost_p10_usd=float(np.quantile(cost, 0.1)),
        cost_p90_usd=float(np.quantile(cost, 0.9)),
        days_p50=float(np.quantile(days, 0.5)),
        days_p90=float(np.quantile(days, 0.9)),
        delivery_weeks=float(choices.delivery_weeks[c]),
        delivery_weeks_p90=float(np.quantile(outcome["delivery"], 0.9)),
        expected_regret_usd=float(regret.mean()),
        worst_decile_regret_usd=float(worst.mean()),
    )


def _robust(stats: list[SweepChoice], point: int, objective: str, p_deadline: float) -> int:
    """The index the objective chooses among the purchases that meet the deadline in at least p_deadline of
    the draws (the safest where none does); a tie keeps the point plan."""
    if objective == "point":
        return point
    met = np.array([s.p_deadline_met for s in stats])
    if not (met >= p_deadline).any():  # nothing is that safe: the safest
        return int(np.argmax(met))
    key = "worst_decile_regret_usd" if objective == "regret" else "expected_total_usd"
    value = np.where(met >= p_deadline, [getattr(s, key) for s in stats], np.inf)
    best = float(value.min())
    if value[point] <= best + 1e-9 * max(1.0, abs(best)):
        return point
    return int(np.argmin(value))


def _distributions(choices, outcome: dict, total) -> list[Distribution]:
    per_million = total / choices.tokens * 1e6
    return [
        _distribution("cost", "USD", outcome["cost"]),
        _distribution("days", "training days from delivery to the last token", outcome["days"]),
        _distribution("cost per million tokens", "USD (lateness counted)", per_million),
    ] + (
        [_distribution("delivery", "weeks from the order to the last part", outcome["delivery"])]
        if choices.lead_families
        else []
    )


def _distribution(name: str, unit: str, values: np.ndarray) -> Distribution:
    counts, edges = np.histogram(values, bins=BINS)
    q = np.quantile(values, [0.05, 0.1, 0.5, 0.9, 0.95])
    return Distribution(
        name=name,
        unit=unit,
        mean=float(values.mean()),
        p5=float(q[0]),
        p10=float(q[1]),
        p50=float(q[2]),
        p90=float(q[3]),
        p95=float(q[4]),
        edges=[float(e) for e in edges],
        counts=[int(c) for c in counts],
    )


def _risk(choices, point, chosen, outcomes, deadline, late, objective, p_deadline) -> list[str]:
    point_days = outcomes["days"][:, choices.point]
    noun, start = ("purchase", "delivery") if choices.rent is None else ("rental", "its start")
    late_days = point_days[point_days > deadline] - deadline
    miss = 1.0 - point.p_deadline_met
    lines = [
        f"The point plan ({point.label}) trains its tokens within {deadline:g} days of {start} in "
        f"{point.p_deadline_met:.0%} of draws"
        + (
            f"; when it misses ({miss:.0%}), it is {late_days.mean():.1f} days late on average (p90 "
            f"{np.quantile(late_days, 0.9):.1f}), costing {format_usd(late * late_days.mean())} at "
            f"{format_usd(late)} a day."
            if len(late_days)
            else "."
        ),
        f"It is the cheapest {noun} in {point.p_optimal:.0%} of draws; its expected regret is "
        f"{format_usd(point.expected_regret_usd)}, {format_usd(point.worst_decile_regret_usd)} over its worst decile.",
    ]
    if choices.lead_families:  # a purchase (a rental starts when it is booked)
        lines.append(
            f"Its last part arrives {point.delivery_weeks:g} weeks after the order at the stated lead times, by "
            f"{point.delivery_weeks_p90:.0f} weeks in 90% of draws (the deadline's days count from delivery)."
        )
    if objective == "point":
        return lines
    least = "expected cost" if objective == "expected-cost" else "worst-decile regret"
    rule = f"the least {least} that meets the deadline in at least {p_deadline:.0%} of draws"
    safest = chosen.p_deadline_met < p_deadline
    if chosen.label == point.label:
        lines.append(
            f"By {rule} the point plan stands."
            if not safest
            else f"No {noun} compared meets the deadline in {p_deadline:.0%} of draws; the point plan is the safest."
        )
    elif safest:
        lines.append(
            f"No {noun} compared meets the deadline in {p_deadline:.0%} of draws; the safest is {chosen.label} "
            f"({chosen.p_deadline_met:.0%}, expected total {format_usd(chosen.expected_total_usd)})."
        )
    else:
        lines.append(
            f"By {rule}: {chosen.label} (meets the deadline in {chosen.p_deadline_met:.0%}, expected total "
            f"{format_usd(chosen.expected_total_usd)} against the point plan's {format_usd(point.expected_total_usd)})."
        )
    return lines


def _compared(choices) -> str:
    configs = int(choices.frame["configuration"].nunique())
    low, high = U.COUNT_RANGE
    if choices.rent is not None:
        return (
            f"{len(choices.frame)} rentals: the point rental's offering and pricing and the next "
            f"{configs - 1} (offering x micro-batch x pricing) by cost, each at up to {int(U.COUNTS.value)} "
            f"instance counts from its cheapest to {high:g}x it that meet the deadline at the point figures"
        )
    return (
        f"{len(choices.frame)} purchases: the point plan's configuration and the next {configs - 1} distinct ones by "
        f"the point objective (of {int(U.CONFIGURATIONS.value)} at most), each at up to {int(U.COUNTS.value)} node "
        f"counts from {low:g}x to {high:g}x its point-plan count within the scenario's limits"
    )


def _rows(constants) -> list[dict]:
    """Constants as the report lists them: name, value, unit, source."""
    return [dataclasses.asdict(c) for c in constants]


def _assumptions() -> list[dict]:
    from planner.assumptions import hardware as H

    constants = [U.PRICE_FAMILY_SHARE, U.FAILURE_RATE_SPREAD, U.LEAD_TIME_SPREAD, U.CONFIGURATIONS, U.COUNTS]
    constants += list(H.PRICE_UNCERTAINTY.values())
    out = _rows(constants)
    out.append(
        {
            "name": "throughput draws",
            "value": None,
            "unit": "measured / predicted",
            "source": "the calibration's leave-one-publication-out log residuals per validation group "
            "(planner/data/calibration_default.json uncertainty); one draw per group",
        }
    )
    out.append(
        {
            "name": "running costs",
            "value": None,
            "unit": "",
            "source": "energy, colocation, support and staff of a TCO objective at their point values",
        }
    )
    return out
