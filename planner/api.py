"""The Python API: the questions the commands answer, as functions returning the typed results.

    import planner
    plan = planner.plan("examples/llama-70b-h100.yaml", budget_usd=60e6)
    plan.metrics.usd_per_million_tokens, plan.to_frame()      # the bill of materials as a DataFrame

Each function reads the same inputs as its command (a scenario file, a scenario mapping as in the YAML, or a
validated Scenario; the shipped catalogs plus `catalogs`; the shipped calibration or a file) and calls the same
answer (planner.answers); the command-line interface is a layer over the same calls that adds rendering and
files. Problems raise the command's errors (planner.base.errors: ScenarioError, InfeasibleError, ...), each
message a line naming the file or key and the fix. docs/api.md has a worked example, run by the tests.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from planner.results import CloudPlan, FleetPlan, Plan, Prediction, ServingPlan, Sweep

ScenarioLike = str | Path | Mapping[str, Any] | Any  # a file, the YAML's mapping, or an inputs.scenario.Scenario


def plan(
    scenario: ScenarioLike,
    *,
    catalogs: Sequence[str | Path] = (),
    calibration: str | Path | None = None,
    solver: str = "auto",
    alternatives: int = 3,
    time_limit_s: float | None = None,
    gap: float | None = None,
    **overrides: Any,
) -> Plan:
    """The cheapest cluster for the scenario (planner plan). `overrides` set fields by their dotted path with
    "__" for the dot, as --set does: budget_usd=... is shorthand for constraints__budget_usd=..., and
    objective__kind="cost-per-token", workload__global_batch=1536 and so on work alike."""
    from planner.answers import buy

    loaded, catalog, cal = _inputs(scenario, catalogs, calibration, overrides)
    return buy.run(catalog, loaded, cal, solver, time_limit_s, gap, alternatives)


def cloud(
    scenario: ScenarioLike,
    *,
    catalogs: Sequence[str | Path] = (),
    calibration: str | Path | None = None,
    solver: str = "auto",
    **overrides: Any,
) -> CloudPlan:
    """The cheapest rental for the scenario (planner cloud); `overrides` as for plan()."""
    from planner.answers import rent

    loaded, catalog, cal = _inputs(scenario, catalogs, calibration, overrides)
    return rent.run(catalog, loaded, cal, solver)


def fleet(
    path: str | Path,
    *,
    catalogs: Sequence[str | Path] = (),
    calibration: str | Path | None = None,
    solver: str | None = None,
    time_limit_s: float | None = None,
    gap: float | None = None,
    **settings: Any,
) -> FleetPlan:
    """The multi-period purchase plan of a fleet file (planner fleet); `settings` by dotted path with "__"
    for the dot, as --set does (e.g. costs__discount_rate=0.1)."""
    from planner.answers import fleet as fleet_answer
    from planner.catalog.load import load_catalog
    from planner.inputs.fleet import load_fleet
    from planner.model.calibration import load_calibration

    spec = load_fleet(path, {k.replace("__", "."): v for k, v in settings.items()})
    options = {"time_limit_s": time_limit_s, "source": str(path)}
    if solver is not None:
        options["solver"] = solver
    if gap is not None:
        options["gap"] = gap
    catalog = load_catalog([*spec.catalogs, *catalogs])
    return fleet_answer.run(catalog, spec, load_calibration(calibration), **options)


def sweep(
    scenario: ScenarioLike,
    *,
    draws: int = 1000,
    seed: int = 0,
    objective: str = "point",
    p_deadline: float = 0.9,
    late_usd_per_day: float | None = None,
    workers: int | None = 0,
    scheduler: str | None = None,
    results: str | Path | None = None,
    rent: bool = False,
    catalogs: Sequence[str | Path] = (),
    calibration: str | Path | None = None,
    **overrides: Any,
) -> Sweep:
    """The point plan and the next purchases across `draws` draws of prices, throughput, interruptions and lead
    times (planner sweep): deadline risk, the probability each purchase is the cheapest, regret, and the
    purchase `objective` recommends (point, expected-cost with p_deadline, regret). workers=0 (the default
    here) evaluates the draws in this process; None or a number starts a local Dask cluster of that many
    processes (None: the machine's cores); `scheduler` uses an existing Dask cluster. The result is the same
    whichever runs it. rent=True sweeps the rental planner cloud chooses instead. `overrides` as for plan()."""
    from planner.answers import sweep as sweep_answer
    from planner.base.distributed import engine

    loaded, catalog, cal = _inputs(scenario, catalogs, calibration, overrides)
    with engine(workers, scheduler) as runner:
        return sweep_answer.run(
            catalog, loaded, cal, draws, seed, objective, p_deadline, late_usd_per_day, runner, results, rent=rent
        )


def predict(
    workload: Mapping[str, Any],
    *,
    gpu: str,
    gpus: int,
    gpus_per_node: int,
    node_gbps: float,
    fabric: str = "ib",
    micro_batch: int = 1,
    scale_up_gpus: int | None = None,
    scale_up_gb_per_s: float | None = None,
    catalogs: Sequence[str | Path] = (),
    calibration: str | Path | None = None,
) -> Prediction:
    """Tokens/s, TFLOPs/GPU, step time and memory of one configuration (planner predict). `workload` is a
    scenario's workload section ({"model": "Llama-3-70B", "framework": "fsdp", "seq_len": 8192}); with no
    tp/pp/cp/ep given the layout is searched, as predict does."""
    from pydantic import ValidationError

    from planner.answers.predict import predict as run_predict
    from planner.base.errors import ScenarioError
    from planner.catalog.load import load_catalog
    from planner.inputs.scenario import Scenario, validation_messages
    from planner.model.calibration import load_calibration
    from planner.model.workload import Cluster, scenario_training

    catalog, cal = load_catalog(list(catalogs)), load_calibration(calibration)
    catalog.gpu(gpu)  # an unknown GPU: a CatalogError with the close names
    data = {"workload": {**workload, "micro_batches": [micro_batch]}, "requirement": {"gpus": gpus}}
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        raise ScenarioError("\n".join(validation_messages("predict", exc))) from None
    work = dataclasses.replace(scenario_training(catalog, scenario), micro_batch=micro_batch)
    cluster = Cluster(
        gpu, gpus, gpus_per_node, node_gbps, fabric.lower(), scale_up_gb_per_s=scale_up_gb_per_s,
        scale_up_gpus=scale_up_gpus,
    )  # fmt: skip
    result = run_predict(catalog, work, cluster, cal, search=not scenario.workload.fixed_layout)
    return Prediction.model_validate({**result, "model_name": work.model_name, "calibration": cal.source})


def serve(
    model: str,
    *,
    rate_per_s: float,
    input_tokens: int,
    output_tokens: int,
    ttft_s: float | None = None,
    tpot_s: float | None = None,
    percentile: float = 0.9,
    input_cv: float = 0.0,
    output_cv: float = 0.0,
    precisions: Sequence[str] = ("bf16", "fp8"),
    gpus: Sequence[str] = (),
    servers: Sequence[str] = (),
    rent: bool = False,
    providers: Sequence[str] = (),
    budget_usd: float | None = None,
    max_power_w: float | None = None,
    single_kind: bool = False,
    catalogs: Sequence[str | Path] = (),
    solver: str = "auto",
) -> ServingPlan:
    """The cheapest servers (or with rent=True, cloud instances by the hour) serving `model` at `rate_per_s`
    requests/s within the TTFT and TPOT targets (seconds, at `percentile`), as planner serve does."""
    from planner.answers.serving import instances_to_rent, servers_to_buy
    from planner.answers.serving import plan as serving_plan
    from planner.base.errors import UsageError
    from planner.catalog.load import load_catalog
    from planner.model.queueing import Requests
    from planner.tables.replicas import Targets

    if ttft_s is None and tpot_s is None:
        raise UsageError("give a latency target: ttft_s, tpot_s or both")
    catalog = load_catalog(list(catalogs))
    name = catalog.model(model).name
    if rent:
        machines = instances_to_rent(catalog, list(gpus) or None, list(providers) or None)
    else:
        machines = servers_to_buy(catalog, list(gpus) or None, list(servers) or None)
    return serving_plan(
        catalog,
        name,
        Requests(input_tokens, output_tokens, percentile, input_cv, output_cv),
        Targets(rate_per_s, ttft_s, tpot_s),
        machines,
        rent=rent,
        precisions=tuple(precisions),
        budget_usd=budget_usd,
        max_power_w=max_power_w,
        single_kind=single_kind,
        solver=solver,
    )


# shorthands for the constraints a buyer varies most (the rest by dotted path with "__")
_SHORT = {
    "budget_usd": "constraints.budget_usd",
    "power_kw": "constraints.power_kw",
    "max_nodes": "constraints.max_nodes",
}


def _inputs(scenario: ScenarioLike, catalogs, calibration, overrides: dict):
    """The validated scenario (with `overrides`), the catalog it reads and the calibration."""
    from planner.base.errors import ScenarioError
    from planner.catalog.load import load_catalog
    from planner.inputs.scenario import Scenario, apply_overrides, load_scenario, validated
    from planner.model.calibration import load_calibration

    dotted = {_SHORT.get(k, k.replace("__", ".")): v for k, v in overrides.items()}
    named = {_SHORT.get(k, k.replace("__", ".")): f"keyword {k}" for k in overrides}  # an error names the keyword
    if isinstance(scenario, str | Path):
        values = {k: v for k, v in dotted.items() if v is not None}
        nulls = {k: v for k, v in dotted.items() if v is None}  # (set to null: what --set KEY=null does)
        loaded = load_scenario(scenario, values, nulls, named)
    elif isinstance(scenario, Mapping | Scenario):
        data = scenario.model_dump() if isinstance(scenario, Scenario) else dict(scenario)
        data = apply_overrides(copy.deepcopy(data), dotted, keep_none=True)
        loaded = validated(data, "scenario", Path.cwd(), named)
    else:
        raise ScenarioError(f"scenario: give a file path, a mapping or a Scenario, not {type(scenario).__name__}")
    return loaded, load_catalog([*loaded.catalogs, *catalogs]), load_calibration(calibration)
