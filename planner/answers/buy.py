"""`planner plan`: candidates -> MILP -> Plan, with the best plan per fabric and per NIC speed, the next-best
alternatives, the bill of materials, and an explanation instead of a bare "infeasible"."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from planner.assumptions import hardware as H
from planner.assumptions import model as A
from planner.base.errors import InfeasibleError, SolverError
from planner.base.units import HOURS_PER_YEAR, SECONDS_PER_HOUR, format_count, format_usd
from planner.catalog.load import Catalog
from planner.hardware import bom, costing, fabric, layout, pcie, sizing
from planner.hardware.designs import Designs
from planner.inputs.scenario import Scenario
from planner.model import binding, reliability
from planner.model.calibration import Calibration
from planner.model.layout import choose as choose_layout
from planner.model.layout import layout_name
from planner.model.parallelism import LAYOUT, LAYOUT_DEFAULTS, RECOMPUTE_SEARCH
from planner.model.sweep import bandwidth_table
from planner.model.workload import (
    TARGET_TOLERANCE,
    Requirements,
    Training,
    scenario_training,
    whole_grad_accum,
)
from planner.optimize import buy, ranking
from planner.results import BomLine, Choice, CostBreakdown, Metrics, Plan, Schedule, Summary
from planner.tables import buy as cand

Progress = Callable[[str], None]
FABRIC_NAMES = {"ib": "InfiniBand", "roce": "RoCE", "spectrum-x": "Spectrum-X"}
STANDARD_NIC_GBPS = 400  # the standard GPU NIC of HGX/DGX H100-class nodes: one 400G port per GPU


def run(
    catalog: Catalog,
    scenario: Scenario,
    calibration: Calibration,
    solver: str = "auto",
    time_limit_s: float | None = None,
    gap: float | None = None,
    alternatives: int = 3,
    progress: Progress = lambda _: None,
    parts: Designs | None = None,
) -> Plan:
    """The plan; `parts`: the scenario's designs, when the caller has built them already."""
    return run_with_table(catalog, scenario, calibration, solver, time_limit_s, gap, alternatives, progress, parts)[0]


@dataclass(frozen=True)
class Planned:
    """What a plan was chosen from: its designs and its candidate table (the workbook's cost curve reuses
    them: cost_curve)."""

    parts: Designs
    table: cand.Candidates


def run_with_table(
    catalog: Catalog,
    scenario: Scenario,
    calibration: Calibration,
    solver: str = "auto",
    time_limit_s: float | None = None,
    gap: float | None = None,
    alternatives: int = 3,
    progress: Progress = lambda _: None,
    parts: Designs | None = None,
) -> tuple[Plan, Planned]:
    """The plan (run) and what it was chosen from."""
    progress("building candidate configurations")
    parts = parts if parts is not None else cand.part_designs(catalog, scenario)

    def replan(other: Scenario) -> pd.DataFrame:  # the table of another scenario on these designs' hardware
        c = other.constraints
        narrowed = parts.narrowed(c.servers, c.fabrics, c.switches)
        return cand.build(catalog, other, calibration, narrowed).feasible

    sized, table = sized_candidates(catalog, scenario, calibration, parts)
    feasible = table.feasible
    if feasible.empty:
        raise InfeasibleError("\n".join(explain_infeasible(scenario, calibration, table, catalog, parts)))
    groups = ranking.best_per_group(feasible, cand.GROUP)
    # the alternatives' groups and every group tied with the last of them (a tie is broken by the layout rule
    # among the pool, _simplest_of_ties: the answer must not depend on how many alternatives are listed)
    cut = float(groups["score"].iloc[min(alternatives, len(groups) - 1)])
    groups = groups[groups["score"].to_numpy(float) <= cut + 1e-9 * max(1.0, abs(cut))]
    pool = feasible.merge(groups[cand.GROUP], on=cand.GROUP)
    # in objective order, so an output objective's MILP can rank equal scores by price (score_rank)
    pool = pool.sort_values(["score", "capex_usd", "power_w", "planes"], kind="stable", ignore_index=True)
    pool["score_rank"] = np.arange(len(pool), dtype=float)
    progress(f"solving the MILP over the {len(pool):,} of {len(table.frame):,} candidates that can win")
    sol = buy.optimize(pool, sized, solver, time_limit_s, gap)
    if sol is None:  # the pool holds only candidates within every limit, so this is a fault
        raise SolverError("the MILP found no plan although feasible candidates exist; report this as a bug")
    sol = _simplest_of_ties(pool, sol, scenario, table, calibration)
    row = cand.clean_row(pool.iloc[sol.k])
    _check_against_table(sol, pool, feasible.iloc[0], scenario.objective.kind)
    per_gpu = per_gpu_rows(feasible)
    listed = _listed(feasible, row, alternatives) | {"per_gpu": per_gpu}
    fewer = fewer_alternatives_note(table, alternatives, len(listed["alternatives"]))
    faster = _fastest_network(feasible, row, sol.nodes, table, calibration)
    extra = [(faster, sol.nodes)] if faster is not None else []
    rows = [(row, sol.nodes), *_listed_rows(listed), *extra]
    summarize = _Summaries(catalog, scenario, calibration, table.training, rows)
    head, head_lines = summarize(row, sol.nodes, "chosen")
    _check_cost(sol, head, scenario.objective.kind)
    described_as = {
        name: [
            compare(head, head_lines, *summarize(r, int(r["nodes"]), label, head), scenario.objective.kind)
            for label, r in rows
        ]
        for name, rows in listed.items()
    }
    detail = _detail(catalog, scenario, row, sol.nodes)
    lines, prices = bom.price_age(detail["bom"], scenario.as_of_date)
    plan = Plan(
        scenario=scenario.name,
        status=sol.result.status,
        solver=sol.result.solver,
        gap=sol.result.gap,
        solve_seconds=sol.result.seconds,
        objective=scenario.objective.kind,
        choice=head.choice,
        metrics=head.metrics,
        cost=head.cost,
        bom=lines,
        links=detail["links"],
        layout=detail["layout"],
        not_priced=detail["not_priced"],
        why=why(scenario, row, head, table.training, calibration, batch_note(scenario, table, head, replan))
        + nic_note(catalog, scenario, calibration, table, row, head)
        + tie_notes(head, described_as["per_fabric"])
        + radix_notes(catalog, head, described_as["per_fabric"])
        + network_notes(head, summarize(faster, sol.nodes, "faster network", head)[0] if faster else None)
        + gpu_notes(catalog, scenario, table, described_as["per_gpu"])
        + unmeasured_gpu_notes(catalog, calibration, row, listed["per_gpu"]),
        **described_as,
        alternatives_note=fewer,
        candidates=len(table.frame),
        calibration=calibration.source,
        schedule=plan_schedule(scenario, table.training, head, row),
        prices=prices,
        delivery=bom.delivery(lines, scenario.as_of_date, scenario.requirement.days),
    )
    return plan, Planned(parts, table)


def sized_candidates(
    catalog: Catalog, scenario: Scenario, calibration: Calibration, parts: Designs | None = None
) -> tuple[Scenario, cand.Candidates]:
    """The candidate table, each row sized for a deadline at its own goodput (planner.tables.buy), and the
    scenario it was built for. `parts`: the scenario's designs, when already built."""
    return scenario, cand.build(catalog, scenario, calibration, parts)


def _listed(feasible: pd.DataFrame, row: dict, alternatives: int) -> dict[str, list[tuple[str, dict]]]:
    """(label, row) of the best plan per fabric, per NIC speed, and the next-best distinct configurations;
    rows as cleaned dicts, read from the table in one go."""
    chosen_group = {c: row[c] for c in cand.GROUP}
    picks = {
        "per_fabric": [(FABRIC_NAMES.get(v, v), at) for v, at in ranking.best_per_value(feasible, "fabric", ("none",))],
        "per_nic_speed": [(f"{v:g}G NICs", at) for v, at in ranking.best_per_value(feasible, "nic_speed_gbps", (0.0,))],
        "alternatives": [
            (f"#{i + 2}", at)
            for i, at in enumerate(ranking.next_best(feasible, cand.GROUP, alternatives, chosen_group).index)
        ],
    }
    labels = list(dict.fromkeys(at for rows in picks.values() for _, at in rows))
    records = dict(zip(labels, feasible.loc[labels].to_dict("records"), strict=True))
    return {name: [(label, cand.clean_row(records[at])) for label, at in rows] for name, rows in picks.items()}


def fewer_alternatives_note(table: cand.Candidates, asked: int, listed: int) -> str:
    """Why fewer alternatives came back than were asked for: how many distinct configurations meet every
    requirement, and how many more the budget or power cap excludes."""
    if listed >= asked:
        return ""
    meet = len(ranking.best_per_group(table.feasible, cand.GROUP))
    everything = len(ranking.best_per_group(table.frame, cand.GROUP))
    capped = f"; {everything - meet:,} more exceed the budget or power cap" if everything > meet else ""
    plural = "s" if meet != 1 else ""
    return (
        f"{listed} of the {asked} alternatives asked for: only {meet:,} distinct configuration{plural} (server, "
        f"NIC and count, fabric, switch, planes, micro-batch, layout) of the {len(table.frame):,} candidates meet "
        f"every requirement, the plan's among them{capped}."
    )


def per_gpu_rows(feasible: pd.DataFrame) -> list[tuple[str, dict]]:
    """(GPU, its best row) for each GPU with a plan, cheapest first, when more than one has one (each row is
    sized at its own goodput, so each is that GPU's optimum, as if the scenario allowed it alone)."""
    best = {gpu: cand.clean_row(feasible.loc[at]) for gpu, at in ranking.best_per_value(feasible, "gpu")}
    return sorted(best.items(), key=lambda item: item[1]["score"]) if len(best) > 1 else []


def unmeasured_gpu_notes(catalog: Catalog, calibration: Calibration, row, per_gpu: list[tuple[str, dict]]) -> list[str]:
    """The compared GPUs (besides the chosen one, which why() names) whose architecture no measurement covers:
    their figures are the architecture's prior, their range the widest the validation gives."""
    names = [gpu for gpu, _ in per_gpu if gpu != row["gpu"]]
    unmeasured = [(g, catalog.gpu(g).architecture or "other") for g in names]
    unmeasured = [f"{g} ({a})" for g, a in unmeasured if calibration.unmeasured_note(a, g)]
    if not unmeasured:
        return []
    return [
        f"{', '.join(unmeasured)} in the per-GPU comparison: no training measurement of their architecture; their "
        "throughput rests on a related architecture's fit or on published matmul benchmarks, with the range of an "
        "unmeasured architecture."
    ]


def gpu_notes(catalog: Catalog, scenario: Scenario, table: cand.Candidates, listed: list[Summary]) -> list[str]:
    """Each GPU the scenario names that has no plan, and why: none within its limits, or none that meets the
    requirement at all."""
    if not scenario.constraints.gpus or len(scenario.constraints.gpus) < 2:
        return []
    planned = {s.choice.gpu for s in listed} | set(table.feasible["gpu"])
    frame, notes = table.frame, []
    for name in dict.fromkeys(catalog.gpu(g).name for g in scenario.constraints.gpus):
        if name in planned:
            continue
        rows = frame[frame["gpu"] == name] if not frame.empty else frame
        if not rows.empty:
            cheapest = rows.iloc[0]
            notes.append(
                f"{name}: meets the requirement only beyond the budget or power cap (its cheapest plan, "
                f"{int(cheapest['nodes'])} x {cheapest['server']}, costs {format_usd(cheapest['capex_usd'])} and "
                f"draws {cheapest['power_w'] / 1e3:,.0f} kW)."
            )
        else:
            notes.append(f"{name}: no configuration of its servers meets the requirement within the scenario's limits.")
    return notes


def _listed_rows(listed: dict) -> list[tuple[dict, int]]:
    return [(r, int(r["nodes"])) for rows in listed.values() for _, r in rows]


class _Summaries:
    """Summaries of candidate rows at their node counts, each distinct row once (the best InfiniBand plan is
    often the chosen one), the model evaluated for all of them in one call."""

    def __init__(self, catalog, scenario, calibration, work: Training, rows: list[tuple[dict, int]]):
        self.catalog, self.scenario, self.work = catalog, scenario, work
        distinct = {(_identity(r), n): (r, n) for r, n in rows}
        evaluated = performances(list(distinct.values()), work, calibration, scenario)
        self.figures = dict(zip(distinct, evaluated, strict=True))
        self.done: dict = {}

    def __call__(self, row, nodes: int, label: str, head: Summary | None = None) -> tuple[Summary, list[BomLine]]:
        key = (_identity(row), nodes)
        if key not in self.done:
            figures = self.figures[key]
            self.done[key] = _summary(self.catalog, self.scenario, self.work, row, nodes, label, figures, head)
        found, lines = self.done[key]
        return found.model_copy(update={"label": label}), lines


def plan_schedule(scenario: Scenario, work: Training, head: Summary, row: dict) -> Schedule | None:
    """The deadline in calendar days at the chosen plan's goodput (None without a deadline)."""
    if head.metrics.training_days is None or not reliability.applies(scenario):
        return None
    g = reliability.goodput(scenario.reliability, work.params, head.choice.nodes, cand.parts_at(row, head.choice.nodes))
    return reliability.schedule(scenario, g, head.metrics.training_days)


def _objective_note(scenario: Scenario, head: Summary) -> str:
    """What sets the node count under an output objective: the count with the lowest TCO per token, or the most
    the caps allow."""
    n, m, c = head.choice.nodes, head.metrics, scenario.constraints
    if scenario.objective.kind == "cost-per-token":
        return (
            f"objective cost-per-token: {n} nodes is this configuration's count with the lowest TCO per trained "
            f"token (${m.usd_per_million_tokens:,.3g} per million) among those meeting the requirement."
        )
    limits = [f"budget {format_usd(c.budget_usd)}" if c.budget_usd is not None else "",
              f"power cap {c.power_kw:g} kW" if c.power_kw is not None else "", f"max_nodes {c.max_nodes}"]  # fmt: skip
    days = m.effective_training_days or m.training_days
    trained = f", {days:.1f} days to train" if days is not None else ""
    return (
        f"objective {scenario.objective.kind}: the most tokens/s within the {', '.join(x for x in limits if x)}: "
        f"{n} nodes{trained} (capex {format_usd(head.cost.capex_usd)})."
    )


def _deadline_note(scenario: Scenario, m: Metrics) -> str:
    r = scenario.requirement
    allowed = f"{r.days:g} days" + (
        f" less a {r.schedule_margin:.0%} margin ({r.days * (1 - r.schedule_margin):.1f} days)"
        if r.schedule_margin
        else ""
    )
    if m.effective_training_days is None:
        return f"the deadline of {allowed} sets the node count ({m.training_days:.1f} days predicted)."
    return (
        f"the deadline of {allowed} sets the node count: {m.training_days:.1f} days of training at goodput "
        f"{m.goodput:.1%} take {m.effective_training_days:.1f} calendar days."
    )


# one hardware configuration: its alternatives group without the micro-batch and layout, and its fabric's shape
HARDWARE = [c for c in cand.GROUP if c not in ("micro_batch", *cand.SEARCHED)] + [
    "tier",
    "topology",
    "oversubscription",
]


# A plan whose step waits on communication for at least this share is told what the fastest network for the same
# servers would cost per token (a buyer's question the cheapest capex hides: starved GPUs).
NETWORK_WAIT_NOTE = 0.25


def _fastest_network(feasible: pd.DataFrame, row: dict, nodes: int, table, calibration) -> dict | None:
    """The candidate of the same servers at the same node count whose objective (capex or TCO) per token is the
    lowest there, when the chosen plan's step waits on the network for NETWORK_WAIT_NOTE of its time or more and
    that candidate trains at least 5% faster; None otherwise."""
    same = feasible[(feasible["server"] == row["server"]) & (feasible["n_lo"] <= nodes) & (feasible["n_hi"] >= nodes)]
    if same.empty:
        return None
    work, req = table.training, table.requirements
    ev = cand.evaluate_at(same, np.full(len(same), nodes), work, calibration, req.confidence)
    own = cand.evaluate_at(pd.DataFrame([row]), [nodes], work, calibration, req.confidence)
    if float(own["t_comm_exposed_s"][0]) < NETWORK_WAIT_NOTE * float(own["t_step_s"][0]):
        return None
    tokens = np.asarray(ev["tokens_per_s"], dtype=float)
    faster = tokens > 1.05 * float(own["tokens_per_s"][0])
    if not faster.any():
        return None
    per_token = np.where(faster, same["objective_usd"].to_numpy(float) / np.maximum(tokens, 1e-9), np.inf)
    return cand.clean_row(same.iloc[int(np.argmin(per_token))])


def network_notes(head: Summary, faster: Summary | None) -> list[str]:
    """The chosen plan waits on its network: what the fastest network for the same servers buys, per token."""
    if faster is None:
        return []
    m, f = head.metrics, faster.metrics
    wait = m.t_comm_exposed_s / m.t_step_s if m.t_step_s else 0.0
    per_token = ""
    if m.usd_per_million_tokens is not None and f.usd_per_million_tokens is not None:
        cheaper = f.usd_per_million_tokens < m.usd_per_million_tokens
        per_token = (
            f"; TCO per million tokens ${f.usd_per_million_tokens:,.3g} against ${m.usd_per_million_tokens:,.3g}"
            + (f" (cheaper per token: target_tflops {f.achieved_tflops_per_gpu:.0f} buys it)" if cheaper else "")
        )
    return [
        f"network: {wait:.0%} of the step waits on communication; the network with the lowest cost per token for "
        "these servers "
        f"({faster.choice.nics_per_node} x {faster.choice.nic}, {faster.choice.fabric_text}) trains "
        f"{f.tokens_per_s / m.tokens_per_s - 1:+.0%} faster ({f.achieved_tflops_per_gpu:.0f} against "
        f"{m.achieved_tflops_per_gpu:.0f} TFLOPs/GPU) for {format_usd(faster.cost.capex_usd - head.cost.capex_usd)} "
        f"more capex{per_token}."
    ]


def _simplest_of_ties(pool: pd.DataFrame, sol: buy.Solution, scenario: Scenario, table, calibration) -> buy.Solution:
    """The MILP's pick among candidates of the same hardware at the same node count and price (they differ in
    micro-batch, parallel layout or fabric planes only, and the solver breaks such ties at random): the fewest
    planes (a second plane is chosen only where it is cheaper), then the one the layout rule takes, the simplest
    within LAYOUT_SIMPLICITY_MARGIN of the fastest (planner.model.layout.choose)."""
    picked, nodes = pool.iloc[sol.k], sol.nodes
    hardware = [c for c in HARDWARE if c != "planes"]
    same = (pool[hardware] == picked[hardware]).all(axis=1).to_numpy()
    same = same & (pool["n_lo"].to_numpy() <= nodes) & (pool["n_hi"].to_numpy() >= nodes)
    index = [int(i) for i in np.flatnonzero(same)]
    index = [i for i in index if (allowed := cand.allowed_nodes(pool.iloc[i], table.requirements)) is None
             or nodes in allowed]  # fmt: skip
    if len(index) < 2:
        return sol
    rows = pool.iloc[index].reset_index(drop=True)
    if scenario.objective.kind in costing.OUTPUT_KINDS:  # each row is scored at its one count: at `nodes`
        price = rows["score"].to_numpy(float)
    else:
        cost = costing.configuration_cost(rows, nodes, **costing.priced_quantities(cand.quantities_at(rows, nodes)))
        price = np.asarray(costing.objective_usd(cost, scenario.objective), dtype=float)
    tied = np.abs(price - price.min()) <= 1e-9 * max(abs(price.min()), 1.0)
    planes = rows["planes"].to_numpy(np.int64)
    tied &= planes == planes[tied].min()
    figures = cand.evaluate_at(
        rows, np.full(len(rows), nodes), table.training, calibration, table.requirements.confidence
    )
    dims = {k: rows[k].to_numpy() for k in LAYOUT}
    chosen = choose_layout(np.zeros(len(rows)), np.asarray(figures["tokens_per_s"], float), tied, dims)[0]
    return sol if chosen < 0 or index[chosen] == sol.k else dataclasses.replace(sol, k=index[chosen])


def _check_against_table(sol: buy.Solution, pool: pd.DataFrame, cheapest: pd.Series, kind: str) -> None:
    """The MILP and the priced table must agree on the optimum (both are exact at gap 0); an output objective's
    MILP ranks the pool, so its pick's score is compared."""
    exact = sol.result.status == "optimal" and sol.result.gap == 0
    got = float(pool.iloc[sol.k]["score"]) if kind in costing.OUTPUT_KINDS else sol.result.objective
    if exact and got > cheapest["score"] + 1e-9 * max(1.0, abs(cheapest["score"])):
        raise SolverError(
            f"the MILP's optimum ({got:,.6g}) is worse than the priced table's "
            f"({cheapest['score']:,.6g}); report this as a bug"
        )


def _check_cost(sol: buy.Solution, head: Summary, kind: str) -> None:
    """At an exact optimum the MILP's objective is the closed-form cost of the plan it picked (every quantity
    at its closed form). A gap or time limit may leave quantities above it; the plan is priced in closed form,
    which is never dearer."""
    if sol.result.status != "optimal" or sol.result.gap or kind in costing.OUTPUT_KINDS:
        return
    if abs(sol.result.objective - head.cost.objective_usd) > 1e-6 * max(1.0, abs(head.cost.objective_usd)):
        raise SolverError(
            f"the MILP's objective ({sol.result.objective:,.2f}) differs from the plan's bill of materials "
            f"({head.cost.objective_usd:,.2f}); report this as a bug"
        )


# ---------------------------------------------------------------- describing a plan


# what tells candidate rows apart: the configuration, its fabric's variant, and the node range of its regime
IDENTITY = [
    *cand.GROUP, "tier", "topology", "oversubscription", "placement", "n_lo", "n_hi", "su_local", "uplink_run_m"
]  # fmt: skip


def _identity(row) -> tuple:
    """A candidate row as a key (a row of the table and the same row cleaned are one)."""
    return tuple(str(row[c]) if isinstance(row[c], str) or not pd.isna(row[c]) else "" for c in IDENTITY)


def _detail(catalog: Catalog, scenario: Scenario, row: dict, nodes: int) -> dict:
    q = cand.quantities_at(row, nodes)
    g, over = cand.geometry(scenario), cand.cabling_override(scenario)
    links = bom.link_lines(catalog, row, nodes, q, g, over)
    return {
        "bom": bom.bill_of_materials(catalog, row, nodes, q, g, over),
        "links": links,
        "not_priced": bom.not_priced(row, q),
        "layout": {
            "nodes_per_rack": int(row["nodes_per_rack"]),
            "compute_racks": int(q["compute_racks"]),
            "network_racks": int(q["network_racks"]),
            "rows": int(q["rows"]),
            "pdus": int(q["pdus"]),
            "leaf_placement": row["placement"] or "",
            "longest_node_run_m": _longest(links, "node-leaf"),
            "longest_switch_run_m": _longest(links, "switch-switch"),
            "storage_switches": int(q["storage_switches"]),
            "inband_switches": int(q["inband_switches"]),
            "oob_switches": int(q["oob_switches"]),
            "ufm_appliances": int(q["ufm"]),
            "cooling": row["cooling"],
            "cdus": int(q["cdus"]),
            **_system(row),
        },
    }


def _system(row: dict) -> dict:
    """What a node is made of, where it is more than one server (a rack-scale system or a multi-host node):
    its scale-up domain, hosts, racks and cooling. (An HGX/DGX server adds nothing: node = domain = host.)"""
    domain, hosts = int(row["scale_up_gpus"]), int(row["hosts"])
    if not row["rack_scale"] and hosts == 1 and domain == int(row["gpus_per_node"]):
        return {}
    racks = int(row["rack_span"]) if row["rack_scale"] else 0  # 0: servers mounted in the layout's racks
    return {"scale_up_gpus": domain, "hosts_per_node": hosts, "racks_per_node": racks, "cooling": row["cooling"]}


def _longest(links, segment: str) -> float:
    """The plan's longest run of a compute-fabric segment (metres; 0 when it has none)."""
    runs = [float(x) for line in links if line.segment == segment for x in line.lengths]
    return max(runs, default=0.0)


def _summary(
    catalog, scenario, work, row, nodes: int, label, figures: dict, head=None
) -> tuple[Summary, list[BomLine]]:
    """A plan's summary from the model's `figures` at its node count, and its bill of materials (kept beside
    it for the tie check, not in the JSON)."""
    row = cand.clean_row(row)
    q = cand.quantities_at(row, nodes)
    lines = bom.bill_of_materials(catalog, row, nodes, q, cand.geometry(scenario), cand.cabling_override(scenario))
    cost = _cost(row, nodes, q, scenario.objective, lines)
    choice, metrics = _choice_and_metrics(scenario, work, row, nodes, q, figures)
    metrics = metrics.model_copy(update=_per_token(cost, metrics, scenario))
    delta = cost.objective_usd - head.cost.objective_usd if head else 0.0
    return Summary(label=label, choice=choice, metrics=metrics, cost=cost, delta_usd=delta), lines


def _per_token(cost: CostBreakdown, metrics: Metrics, scenario: Scenario) -> dict:
    """What a trained token costs: the TCO over the horizon over the tokens the cluster trains in it, at the
    plan's throughput and goodput (the whole horizon training); and the run's tokens at that price."""
    rate = metrics.trained_tokens_per_s
    if rate <= 0 or cost.years <= 0:
        return {}
    per_million = cost.tco_usd / (rate * cost.years * HOURS_PER_YEAR * SECONDS_PER_HOUR) * 1e6
    tokens = scenario.requirement.tokens
    return {"usd_per_million_tokens": per_million, "cost_to_train_usd": per_million * tokens / 1e6 if tokens else None}


# Under an output objective two plans tie only when what it ranks by (tokens/s at goodput, or TCO per token) is
# within this share, besides their price difference being within its uncertainty.
OUTPUT_TIE_SHARE = 0.01


def compare(
    head: Summary, head_lines: list[BomLine], other: Summary, lines: list[BomLine], kind: str = "capex"
) -> Summary:
    """`other` against the chosen plan: the price uncertainty of the parts they do not share (by their rows'
    confidence, planner.assumptions.hardware.PRICE_UNCERTAINTY), whether the difference is within it (a tie;
    under an output objective also what it ranks by, OUTPUT_TIE_SHARE), and what decides it."""
    uncertainty = costing.difference_uncertainty_usd(lines, head_lines)
    same = other.choice == head.choice
    tie = not same and abs(other.delta_usd) <= uncertainty
    if kind in costing.OUTPUT_KINDS:
        tie = tie and abs(_ranked_by(other, kind) / max(_ranked_by(head, kind), 1e-12) - 1) <= OUTPUT_TIE_SHARE
    decides = _decides(head, other, head_lines, lines) if tie else ""
    return other.model_copy(update={"uncertainty_usd": uncertainty, "tie": tie, "decides": decides})


def _ranked_by(s: Summary, kind: str) -> float:
    """What an output objective ranks a plan by: its TCO per million tokens, or its tokens/s at goodput."""
    if kind == "cost-per-token":
        return s.metrics.usd_per_million_tokens or 0.0
    return s.metrics.trained_tokens_per_s


def _decides(head: Summary, other: Summary, a: list[BomLine], b: list[BomLine]) -> str:
    """What settles a tie: quotes for the least certain parts the two differ in, then performance, power and
    the fabric's operating needs."""
    diff: dict[str, list] = {}
    for sign, lines in ((1.0, b), (-1.0, a)):
        for line in lines:
            entry = diff.setdefault(line.sku, [0.0, line.confidence])
            entry[0] += sign * line.extended_usd
    weight = lambda item: abs(item[1][0]) * costing.price_uncertainty(item[1][1])  # noqa: E731
    parts = [f"{sku} ({conf})" for sku, (value, conf) in sorted(diff.items(), key=weight, reverse=True)[:3] if value]
    out = [f"firm quotes for {', '.join(parts)}"] if parts else []
    dt = other.metrics.achieved_tflops_per_gpu - head.metrics.achieved_tflops_per_gpu
    if abs(dt) > 0.05:
        out.append(f"{'+' if dt > 0 else ''}{dt:.1f} TFLOPs/GPU")
    dp = other.cost.power_kw - head.cost.power_kw
    if abs(dp) > 0.05:
        out.append(f"{'+' if dp > 0 else ''}{dp:,.1f} kW")
    fabrics = {head.choice.fabric, other.choice.fabric}
    if fabrics & {"roce", "spectrum-x"} and len(fabrics) > 1:
        out.append(
            "operations: RoCE needs PFC and ECN configured end to end (lossless); InfiniBand is lossless by "
            "credit flow control"
        )
    return "; ".join(out)


def _cost(row: dict, nodes: int, q: dict, objective, lines: list[BomLine]) -> CostBreakdown:
    cost = costing.configuration_cost(row, nodes, **costing.priced_quantities(q))
    tco = costing.tco_lines(cost, objective)
    by_category: dict[str, float] = {}
    by_section: dict[str, float] = {}
    for line in lines:
        by_category[line.category] = by_category.get(line.category, 0.0) + line.extended_usd
        by_section[line.section] = by_section.get(line.section, 0.0) + line.extended_usd
    return CostBreakdown(
        capex_usd=float(cost.capex_usd),
        by_category=by_category,
        by_section=by_section,
        power_kw=float(cost.power_w) / 1e3,
        draw_kw=float(costing.draw_w(cost.node_w, cost.network_w, objective)) / 1e3,
        energy_usd=float(tco["energy"]),
        pue=costing.plan_pue(cost, objective),
        tco_usd=float(costing.tco_usd(cost, objective)),
        objective_usd=float(costing.objective_usd(cost, objective)),
        years=objective.years,
        colocation_usd=float(tco["colocation"]),
        support_usd=float(tco["support"]),
        staff_usd=float(tco["staff"]),
    )


def performance(row: dict, nodes: int, work: Training, calibration: Calibration, confidence=None) -> dict:
    """The model's figures for a candidate at this node count (as scalars)."""
    return _figures([(row, nodes)], work, calibration, confidence)[0]


def performances(rows: list[tuple[dict, int]], work: Training, calibration: Calibration, scenario) -> list[dict]:
    """performance() of each (candidate, node count), at the scenario's confidence, in one evaluation."""
    return _figures(rows, work, calibration, Requirements.of(scenario).confidence)


def _figures(rows: list[tuple[dict, int]], work: Training, calibration: Calibration, confidence) -> list[dict]:
    keys = pd.DataFrame([row for row, _ in rows])
    keys["node_gbps_eff"], keys["fabric"] = cand.network_key(keys["tier"] == 0, keys["node_gbps_eff"], keys["fabric"])
    nodes = np.array([n for _, n in rows], dtype=np.int64)
    figures = cand.evaluate_at(keys, nodes, work, calibration, confidence)
    return [{k: np.broadcast_to(v, len(rows))[i] for k, v in figures.items()} for i in range(len(rows))]


def _choice_and_metrics(scenario, work, row, nodes: int, q: dict, r: dict) -> tuple[Choice, Metrics]:
    req = Requirements.of(scenario)
    gpus = nodes * int(row["gpus_per_node"])
    lay = {k: int(row.get(k, LAYOUT_DEFAULTS[k])) for k in LAYOUT}
    dp = gpus // (lay["tp"] * lay["pp"] * lay["cp"])
    accum = req.global_batch // (dp * int(row["micro_batch"])) if req.global_batch else None
    tiers = {1: ("leaf",), 2: ("leaf", "spine"), 3: ("leaf", "spine", "core")}.get(int(row["tier"]), ())
    choice = Choice(
        server=row["server"],
        gpu=row["gpu"],
        nodes=nodes,
        gpus=gpus,
        gpus_per_node=int(row["gpus_per_node"]),
        nic=row["nic"],
        nics_per_node=int(row["nics_per_node"]),
        nic_speed_gbps=row["nic_speed_gbps"],
        nic_usable_gbps=float(row["nic_usable_gbps"]),
        nic_pcie=row["nic_pcie"] or "",
        gpus_per_nic=int(row["gpus_per_node"]) / int(row["nics_per_node"]) if row["nics_per_node"] else 0.0,
        node_gbps=row["node_gbps"],
        fabric=row["fabric"],
        switch=row["switch"],
        tier=int(row["tier"]),
        topology=row["topology"],
        placement=row["placement"] or "",
        oversubscription=row["oversubscription"],
        switches_by_tier={t: int(q[t]) for t in tiers},
        links=row["links"],
        micro_batch=int(row["micro_batch"]),
        grad_accum=accum,
        fabric_text=cand.fabric_text(row),
        **lay,
        checkpointing=str(row.get("checkpointing", work.parallelism.checkpointing)),
        dp=dp,
        sharding=work.parallelism.sharding,
        layout=layout_name({**lay, "dp": dp}),
        su_local=bool(row.get("su_local", False)),
    )
    days = req.training_days(r["tokens_per_s"])
    parts = cand.parts_at(row, nodes, q)
    g = reliability.goodput(scenario.reliability, work.params, nodes, parts) if reliability.applies(scenario) else None
    metrics = Metrics(
        achieved_tflops_per_gpu=r["achieved_tflops_per_gpu"],
        mfu=r["mfu"],
        t_compute_s=r["t_compute_s"],
        t_comm_s=r["t_comm_s"],
        t_step_s=r["t_step_s"],
        t_optimizer_step_s=r["t_step_s"] * accum if accum else None,
        tokens_per_s=r["tokens_per_s"],
        tokens_per_s_point=r["tokens_per_s_point"],
        tokens_per_s_p10=r["tokens_per_s_p10"],
        tokens_per_s_p90=r["tokens_per_s_p90"],
        range_group=r["range_group"],
        confidence=req.confidence,
        training_days=days,
        memory_per_gpu_gib=r["memory_per_gpu_gib"],
        usable_hbm_gib=r["usable_hbm_gib"],
        bytes_per_node_per_step=r["bytes_per_domain_per_step"]
        * (int(row["gpus_per_node"]) // int(row["scale_up_gpus"])),
        binding=str(r["binding"]),
        t_comm_exposed_s=r["t_comm_exposed_s"],
        binding_label=binding.label(str(r["binding"]), r["t_comm_exposed_s"], r["t_step_s"]),
        goodput=g.fraction if g else None,
        effective_training_days=g.wall_days(days) if g and days is not None else None,
        t_bubble_s=r["t_bubble_s"],
        t_comm_tp_s=r["t_comm_tp_s"],
        bubble=r["bubble"],
        tp_bytes_per_domain_per_step=r["tp_bytes_per_domain_per_step"],
        bytes_per_gpu_scale_up_per_step=r["bytes_per_gpu_nvlink_per_step"] + r["tp_bytes_per_gpu_nvlink_per_step"],
    )
    return choice, metrics


def why(
    scenario: Scenario, row, head: Summary, work: Training, calibration: Calibration, batch_cause: str = ""
) -> list[str]:
    """What binds the chosen plan, in words (`batch_cause`: batch_note's, which replaces the deadline's
    claim to set the node count)."""
    notes = []
    m = head.metrics
    if row.get("status", "available") != "available":
        notes.append(
            f"{row['server']} is an announced roadmap system, not orderable: its price, power and performance are "
            "preliminary (see its catalog row); planned because constraints.servers names it."
        )
    if scenario.requirement.gpus is not None:
        what = (
            "network, parallel layout and micro-batch"
            if scenario.workload.searches_layout
            else "network and micro-batch"
        )
        notes.append(f"GPU count fixed at {scenario.requirement.gpus}: the choice is about {what}.")
    if scenario.target_tflops and m.achieved_tflops_per_gpu < scenario.target_tflops * 1.05:
        notes.append(
            f"the target of {scenario.target_tflops:g} TFLOPs/GPU binds: this plan reaches "
            f"{m.achieved_tflops_per_gpu:.1f}; cheaper networks or scales fall short of it "
            f"(bound by {binding.label(m.binding, m.t_comm_exposed_s, m.t_step_s)})."
        )
    if scenario.objective.kind in costing.OUTPUT_KINDS:
        notes.append(_objective_note(scenario, head))
    elif batch_cause:
        notes.append(batch_cause)
    elif scenario.requirement.tokens is not None:
        notes.append(_deadline_note(scenario, m))
    if scenario.workload.global_batch:
        notes.append(
            f"global batch {scenario.workload.global_batch}: micro-batch {int(row['micro_batch'])} x "
            + (
                f"{head.choice.gpus} GPUs"
                if head.choice.dp in (0, head.choice.gpus)
                else f"{head.choice.dp} data-parallel ranks ({head.choice.layout})"
            )
            + f" x grad_accum {head.choice.grad_accum}."
        )
    elif not work.is_moe:
        ranks, published = head.choice.dp or head.choice.gpus, A.DENSE_BATCH_TOKENS_PUBLISHED.value
        step_tokens = int(row["micro_batch"]) * ranks * work.seq_len
        if step_tokens > published:
            notes.append(
                f"no global batch given: each step trains micro-batch {int(row['micro_batch'])} x {ranks} ranks x "
                f"{work.seq_len} tokens = {step_tokens / 1e6:.1f}M tokens, above the largest published dense "
                f"pre-training batch ({published / 1e6:.1f}M, Llama 3 405B): whether it converges is not known; set "
                "workload.global_batch to plan the batch you would train with."
            )
    notes += _fabric_notes(row, head.choice.nodes, scenario.constraints.topologies or ())
    notes += _failure_domains(row, head.choice.nodes, head.choice.switches_by_tier)
    notes += _storage_notes(row, head.choice.nodes, scenario)
    req = Requirements.of(scenario)
    if scenario.workload.searches_layout:
        notes.append(_layout_note(row, head, work, calibration, req))
    if work.searches_recompute:
        notes.append(_recompute_note(row, head, work, calibration, req))
    tokens = int(row["micro_batch"]) * work.seq_len
    extrapolated = calibration.extrapolation_note(work.framework, tokens, head.choice.nodes > 1)
    if extrapolated:
        notes.append(extrapolated + ".")
    unmeasured = calibration.unmeasured_note(str(row.get("architecture") or "other"), str(row["gpu"]))
    if unmeasured:
        notes.append(unmeasured + ".")
    if head.metrics.memory_per_gpu_gib > 0.9 * head.metrics.usable_hbm_gib:
        notes.append("memory is nearly full: a larger micro-batch or fewer GPUs would not fit.")
    budget, power = scenario.constraints.budget_usd, scenario.constraints.power_kw
    if budget:
        notes.append(f"budget {format_usd(budget)}: {format_usd(budget - head.cost.capex_usd)} left.")
    if power:
        notes.append(f"power cap {power:g} kW: {power - head.cost.power_kw:.1f} kW left.")
    return notes


def _storage_notes(row, nodes: int, scenario: Scenario) -> list[str]:
    """What sizes the storage system (the largest of read rate, checkpoint write rate, capacity) and the
    spares bought."""
    if int(row["tier"]) == 0:
        return []
    out = []
    if row["storage_block_skus"]:
        gpus = nodes * int(row["gpus_per_node"])
        read, write = float(row["storage_read_per_gpu"]) * gpus, float(row["storage_write_per_node"]) * nodes
        needs = {
            f"{read:,.0f} GB/s of reads (storage.read_gb_per_s_per_gpu {float(row['storage_read_per_gpu']):.3g})": read
            / float(row["storage_block_read"]),
            f"{write:,.0f} GB/s of checkpoint writes (reliability.checkpoint_write_gb_per_s_per_node "
            f"{scenario.reliability.checkpoint_write_gb_per_s_per_node:g} on every host)": write
            / float(row["storage_block_write"]),
            f"{float(row['storage_tb']):,.0f} TB ({scenario.storage.checkpoints_kept} checkpoints and the training "
            "data)": float(row["storage_tb"]) / float(row["storage_block_tb"]),
        }
        binding = max(needs, key=needs.get)
        sku = row["storage_block_skus"][0][1]
        out.append(
            f"storage system: {math.ceil(round(needs[binding], 9) - 1e-9)} x {sku}, set by {binding}; the plan's "
            "checkpoint time assumes that write rate."
        )
    sp, q = scenario.spares, cand.quantities_at(row, nodes)
    share = int(sizing.spare_nodes(sp.node_share, nodes))
    cover = int(sizing.repair_cover(row, nodes))
    bought = int(q["spare_nodes"])
    why_nodes = (
        f"{bought} spare node{'s' if bought != 1 else ''}, to cover the nodes under repair at once "
        f"{sp.repair_cover:.0%} of the time ({sp.node_share:.0%} of the nodes would be {share})"
        if cover > share
        else f"{sp.node_share:.0%} of the nodes (to the nearest)"
    )
    out.append(
        f"spares: {why_nodes}, {sp.link_share:.0%} of each link kind, {sp.switches_per_model} switch per model "
        "(the spares section of the bill of materials)."
    )
    return out


def _fabric_notes(row, nodes: int, asked) -> list[str]:
    """The fabric's shape in words: the switch radix and the tiers it needs at this size, how leaves are
    sized, the subnet manager's held slot; and a topology asked for that one switch makes moot."""
    tier, planes = int(row["tier"]), max(int(row.get("planes", 1) or 1), 1)
    if row["topology"] == "rail-only":
        return [
            f"fabric: rail-only (Wang et al., arXiv 2307.12169): each of the {planes} rails is its own fabric of "
            f"{row['switch']} and no switch joins two rails; traffic between rails crosses the NVLink domain, so the "
            "layout keeps tensor, context and expert parallelism inside one domain and only data and pipeline "
            "parallel traffic crosses, rank to same rank."
        ]
    if tier < 2:
        if asked and tier == 1:
            return [
                f"topology: constraints.topologies asks for {', '.join(asked)}, but one switch holds all {nodes} "
                "nodes' NIC ports, so there is no leaf layer to arrange (rail-optimised designs need two tiers)."
            ]
        return []
    p, o, ppc = int(row["switch_ports"]), float(row["oversubscription"]), int(row["ports_per_cage"])
    per_node = int(row["endpoints_per_node"]) / planes / max(int(row["breakout"]), 1)
    if row["topology"] == "rail":  # whole SUs: a plane's two tiers reach p leaves, rails of them per SU
        most = int(fabric.max_leaves(2, p)) // max(int(row["rails"]), 1) * int(row["su_nodes"])
    else:
        most = int(fabric.max_down_ports(2, p, o, ppc) // per_node)
    two_tier = most - int(row["reserved_nodes"])
    radix = (
        f"{row['switch']} has {p} ports: two tiers hold up to {two_tier:,} of these nodes"
        + (f", so {nodes:,} need three" if tier == 3 and nodes > two_tier else "")
        + (f" at {o:g}:1" if o != 1 else "")
    )
    if row["topology"] == "rail":
        used, up = int(row["rail_leaf_up"]), cand.leaf_split_columns(row)[1]
        sizing_rule = (
            "rail leaves carry the uplinks a full SU uses"
            + (f" ({used} of {up})" if used < up else "")
            + ": the fabric is designed for the full SU (RA-11333-001)"
        )
    else:
        sizing_rule = "each leaf's uplinks follow the down-ports it uses"
    notes = [f"fabric: {radix}; {sizing_rule}."]
    if planes > 1:
        notes.append(
            f"planes: port p of every NIC goes to plane p, {planes} independent fabrics (the DGX SuperPOD B300's "
            "twin-plane Spectrum-X): a plane's leaf serves one port of each NIC of its rail, so an SU is "
            f"{int(row['su_nodes'])} nodes and two tiers hold {planes} times the nodes of one plane; a failed link or "
            f"switch leaves the job running on the other plane{'s' if planes > 2 else ''} at reduced bandwidth (not an "
            "interruption)."
        )
    if int(row["reserved_nodes"]):
        held = "one node's leaf ports are held for the UFM subnet manager's links (RA-11333-001 Table 7: 127 nodes"
        held += " in 4 SUs)"
        su = int(row["su_nodes"])
        if row["topology"] == "rail" and nodes % su == 0:
            held += (
                f"; {nodes} nodes fill whole {su}-node SUs, so they start one more SU ({nodes - 1} would not); "
                "include.subnet_manager_slot: false sizes full SUs"
            )
        notes.append(held + ".")
    return notes


def _failure_domains(row, nodes: int, by_tier: dict[str, int]) -> list[str]:
    """What one failed switch takes away, by tier: a leaf's nodes (all of a node's ports on a top-of-rack or
    in-order leaf; one rail of an SU on a rail leaf), a spine's or core's share of the bandwidth above."""
    tier = int(row["tier"])
    if tier == 0:
        return []
    planes = max(int(row.get("planes", 1) or 1), 1)
    if row["topology"] == "rail-only":
        what = "switch" if tier == 1 else "leaf or spine"
        return [
            f"failure domains: a rail's {what}: every node it serves loses that rail, one of {planes}, and nothing "
            "reroutes between rails (the job stops)."
        ]
    if tier == 1:
        return [f"failure domains: the one switch carries every node link: its failure stops all {nodes} nodes."]
    e, b = int(row["endpoints_per_node"]), max(int(row["breakout"]), 1)
    if row["topology"] == "rail" and planes > 1:
        rails, su = int(row["rails"]), int(row["su_nodes"])
        leaf = (
            f"a leaf: one plane of one of {rails} rails of {min(su, nodes)} nodes, which run on at "
            f"{planes - 1}/{planes} of that rail's bandwidth through the other plane{'s' if planes > 2 else ''}"
        )
    elif row["topology"] == "rail":
        rails, su = int(row["rails"]), int(row["su_nodes"])
        leaf = f"a leaf: one of {rails} rails of {min(su, nodes)} nodes (a job on them stops unless it reroutes)"
    elif row["tor"]:
        leaf = f"a leaf: the {int(row['nodes_per_rack'])} nodes of its rack lose their links"
    else:
        leaf = f"a leaf: the ~{max(int(row['leaf_down']) * b // max(e, 1), 1)} nodes whose ports it holds"
    parts = [leaf]
    if by_tier.get("spine"):
        parts.append(f"a spine: 1/{by_tier['spine']} of the leaf uplink bandwidth")
    if by_tier.get("core"):
        parts.append(f"a core: 1/{by_tier['core']} of the bandwidth between pods")
    return [f"failure domains: {'; '.join(parts)}."]


def _layout_note(row, head: Summary, work: Training, calibration: Calibration, req: Requirements) -> str:
    """Why the chosen layout and not plain data parallelism, at the chosen size: data parallelism does not fit
    (how far over), is not legal (the batch), or is slower (by how much); and where TP runs."""
    c, m = head.choice, head.metrics
    if c.tp * c.pp * c.cp * c.ep == 1:
        return f"layout: data parallelism over all {c.gpus} GPUs, the simplest that fits within 3% of the fastest."
    ev = _figures([({**row, **LAYOUT_DEFAULTS}, c.nodes)], work, calibration, req.confidence)[0]
    if not ev["fits_memory"]:
        reason = (
            f"data parallelism alone does not fit ({ev['memory_per_gpu_gib']:.0f} GiB per GPU of "
            f"{ev['usable_hbm_gib']:.0f} usable)"
        )
    elif not whole_grad_accum(ev["gpus"], ev["micro_batch"], req, ev):
        reason = f"data parallelism alone cannot split the global batch over {c.gpus} ranks"
    else:
        slower = 1 - ev["tokens_per_s"] / m.tokens_per_s
        reason = f"data parallelism alone is {slower:.0%} slower at this size"
    where = f"; TP {c.tp} inside the {int(row['scale_up_gpus'])}-GPU NVLink domain" if c.tp > 1 else ""
    bubble = f"; pipeline bubble {m.bubble:.1%}" if c.pp > 1 else ""
    return f"layout {c.layout}: {reason}{where}{bubble}."


def _recompute_note(row, head: Summary, work: Training, calibration: Calibration, req: Requirements) -> str:
    """Why the chosen activation-recompute mode (checkpointing search): none fits (at what memory), or how much
    memory the next lighter mode would need at the chosen layout and size."""
    c = head.choice
    modes = RECOMPUTE_SEARCH[work.framework]
    lighter = modes[: modes.index(c.checkpointing)] if c.checkpointing in modes else ()
    if not lighter:
        return f"recompute: none; the activations fit ({head.metrics.memory_per_gpu_gib:.0f} GiB per GPU)."
    ev = _figures([({**row, "checkpointing": lighter[-1]}, c.nodes)], work, calibration, req.confidence)[0]
    why_not = (
        f"{lighter[-1]} would need {ev['memory_per_gpu_gib']:.0f} GiB per GPU of {ev['usable_hbm_gib']:.0f} usable"
        if not ev["fits_memory"]
        else f"{lighter[-1]} fits but is not faster here"
    )
    return f"recompute: {c.checkpointing}, the least of {', '.join(modes)} that fits; {why_not}."


def nic_note(
    catalog: Catalog, scenario: Scenario, calibration, table: cand.Candidates, row, head: Summary
) -> list[str]:
    """The NICs in words: GPUs per NIC, the usable rate per NIC (line rate vs the PCIe slot), and, when the
    plan does not use one 400G NIC per GPU (the HGX/DGX standard), why not."""
    c = head.choice
    if not c.tier:
        return []
    notes = [
        f"NICs: {c.nics_per_node} x {c.nic} per node, one per "
        + ("GPU" if c.gpus_per_nic == 1 else f"{c.gpus_per_nic:g} GPUs")
        + "; each moves "
        f"{c.nic_usable_gbps:,.0f} Gbps usable = min({c.nic_speed_gbps:,.0f} Gbps line rate, its {c.nic_pcie} "
        f"slot's {float(pcie.effective_gbps(*_gen_lanes(c.nic_pcie))):,.0f} Gbps effective)."
    ]
    standard = _standard(table.frame, row)
    if _is_standard(row) or standard is None:
        return notes
    if not standard.empty and bool(standard.iloc[0]["within_limits"]):
        best = standard.iloc[0]
        extra = best["objective_usd"] - head.cost.objective_usd
        return notes + [
            f"one 400G NIC per GPU ({int(best['nics_per_node'])} x {best['nic']}, {best['node_gbps']:,.0f} Gbps per "
            f"node) also meets the requirement, at {format_usd(extra)} more ({int(best['nodes'])} nodes)."
        ]
    return notes + [_standard_misses(catalog, scenario, calibration, table, row)]


def _gen_lanes(text: str) -> tuple[int, int]:
    gen, lanes = text.removeprefix("PCIe Gen").split(" x")
    return int(gen), int(lanes)


def _is_standard(row: dict) -> bool:
    return (
        int(row["nics_per_node"]) == int(row["gpus_per_node"])
        and row["nic_port_gbps"] == STANDARD_NIC_GBPS
        and row["nic_ports"] == 1
    )


def _standard(frame: pd.DataFrame, row: dict) -> pd.DataFrame | None:
    """Priced rows with one single-port 400G NIC per GPU on the same GPU (cheapest first)."""
    mask = (frame["nics_per_node"] == frame["gpus_per_node"]) & (frame["nic_port_gbps"] == STANDARD_NIC_GBPS)
    mask &= (frame["nic_ports"] == 1) & (frame["gpu"] == row["gpu"])
    return frame[mask]


def _standard_misses(catalog: Catalog, scenario: Scenario, calibration, table: cand.Candidates, row: dict) -> str:
    """Why no plan with one 400G NIC per GPU qualifies: its figures at this plan's size."""
    server = catalog.server(row["server"])
    nic = next((n for n in catalog.items("nics") if n.port_gbps == STANDARD_NIC_GBPS and n.ports == 1), None)
    if nic is None or server.nics_fixed:
        return "one 400G NIC per GPU: not available for this server in the catalog."
    gen, lanes = pcie.link_gen_lanes(nic.pcie_gen, nic.pcie_lanes, server.slot_gen, server.nic_slot_lanes)
    node_gbps = server.gpus_per_node * float(pcie.nic_usable_gbps(nic.speed_gbps, gen, lanes))
    standard = {**row, "node_gbps_eff": node_gbps / row["oversubscription"]}
    figures = performance(standard, int(row["nodes"]), table.training, calibration)
    req = Requirements.of(scenario)
    days = req.training_days(figures["tokens_per_s"])
    what = (
        f"predicts {days:.1f} days"
        if days is not None
        else f"reaches {figures['achieved_tflops_per_gpu']:.1f} TFLOPs/GPU"
    )
    return (
        f"not one 400G NIC per GPU: {server.gpus_per_node} x {nic.sku} ({node_gbps:,.0f} Gbps per node) {what} "
        f"at {int(row['nodes'])} nodes, short of the requirement, and no other node count the scenario allows "
        "meets it within its limits; this plan needs more usable bandwidth per node."
    )


def tie_notes(head: Summary, per_fabric: list[Summary]) -> list[str]:
    """Fabrics whose best plans are a tie with the chosen one, and what decides between them (the price
    uncertainty by catalog confidence stated once)."""
    notes = []
    for other in per_fabric:
        if other.tie and other.choice.fabric != head.choice.fabric:
            notes.append(
                f"{FABRIC_NAMES.get(head.choice.fabric, head.choice.fabric)} and {other.label} are a tie: "
                f"{format_usd(abs(other.delta_usd))} apart, within the {format_usd(other.uncertainty_usd)} price "
                f"uncertainty of the parts they do not share. What decides it: {other.decides}."
            )
    if notes:
        shares = ", ".join(f"{k} {v.value:.0%}" for k, v in H.PRICE_UNCERTAINTY.items())
        notes.append(f"price uncertainty by catalog confidence: {shares}.")
    return notes


def radix_notes(catalog: Catalog, head: Summary, per_fabric: list[Summary]) -> list[str]:
    """Where another fabric's best plan needs a different number of switch tiers at its size, say so with
    the switches' port counts: at scale the InfiniBand-or-Ethernet choice is often one of radix."""

    def ports(choice) -> int:
        return int(catalog.rows["switches"][(choice.switch.lower(),)].ports) if choice.switch else 0

    c, notes = head.choice, []
    for other in per_fabric:
        o = other.choice
        if o.fabric == c.fabric or min(o.tier, c.tier) < 2 or o.tier == c.tier:
            continue
        fewer, more = (c, o) if c.tier < o.tier else (o, c)
        notes.append(
            f"tiers: {fewer.switch} ({ports(fewer)} ports) builds {fewer.nodes:,} nodes in {fewer.tier} tiers, "
            f"{more.switch} ({ports(more)} ports) needs {more.tier} for {more.nodes:,}: the extra tier's switches and "
            f"links are much of the {format_usd(abs(other.delta_usd))} between the "
            f"{FABRIC_NAMES.get(c.fabric, c.fabric)} plan and the best {other.label} one."
        )
    return notes


# ---------------------------------------------------------------- infeasible: say why and what would work


def explain_infeasible(
    scenario: Scenario, calibration: Calibration, table: cand.Candidates, catalog: Catalog | None = None,
    parts: Designs | None = None,
) -> list[str]:  # fmt: skip
    lines = [f"no plan meets scenario '{scenario.name}':"] + _deadline_context(scenario, table.requirements)
    misfits = _rack_misfits(scenario, table.designs)
    if misfits:
        return lines + misfits
    unnetworked = _no_network_reasons(scenario, catalog, parts, table.requirements)
    if unnetworked:
        return lines + unnetworked
    if table.frame.empty:
        return lines + _performance_reasons(scenario, calibration, table)
    return lines + _limit_reasons(scenario, table.frame)


def _no_network_reasons(scenario: Scenario, catalog: Catalog | None, parts, req: Requirements) -> list[str]:
    """When the GPUs asked for need more than one node but no server gets a network of an allowed fabric:
    which NICs each server takes (a DGX only its built-in ones) and the fabrics they run, and which NICs of
    the catalog run the fabrics asked for (Spectrum-X: the SuperNICs)."""
    if catalog is None or parts is None or not parts.multi.empty or parts.configs.empty:
        return []
    most = int(parts.single["gpus_per_node"].max()) if len(parts.single) else 0
    if req.gpus is not None and req.gpus <= most:
        return []
    allowed = set(scenario.constraints.fabrics)
    out = []
    for server, rows in parts.configs.groupby("server", sort=True):
        runs = sorted({f for fabrics in rows["nic_fabrics"] for f in fabrics})
        if allowed & set(runs):
            return []  # a NIC runs an allowed fabric: the cause is elsewhere (switches, links), said below
        which = "built-in NICs" if catalog.server(server).nics_fixed else "NICs"
        nics = ", ".join(sorted(set(rows["nic"])))
        wanted = ", ".join(sorted(allowed))
        out.append(f"{server}'s {which} ({nics}) run {', '.join(runs) or 'no fabric'}, not {wanted}")
    able = sorted(n.sku for n in catalog.items("nics") if allowed & set(n.fabrics))
    which = f"NICs in the catalog that run it: {', '.join(able)}" if able else "no NIC in the catalog runs it"
    hint = " (Spectrum-X needs a SuperNIC)" if "spectrum-x" in allowed else ""
    return out + [
        f"no node can join a {'/'.join(sorted(allowed))} network{hint}; {which}: allow a server that takes them, "
        "or another fabric (constraints.fabrics)"
    ]


def _rack_misfits(scenario: Scenario, designs: pd.DataFrame | None) -> list[str]:
    """When no allowed server fits a rack position (its power alone is above the layout's), say which, by how
    much, and which limit to raise."""
    if designs is None or designs.empty or designs["rack_fits"].any():
        return []
    lay, out = scenario.layout, []
    for _, row in designs.drop_duplicates("server").iterrows():
        liquid = row["cooling"] != "air"
        limit, name = (lay.liquid_rack_kw, "layout.liquid_rack_kw") if liquid else (lay.rack_kw, "layout.rack_kw")
        kw = row["server_w"] / 1e3 / max(int(row["rack_span"]), 1)
        what = "per rack" if row["rack_scale"] else "for one server"
        out.append(
            f"{row['server']} needs {kw:,.1f} kW {what}, above {name} {limit:g} kW ({row['cooling']} cooled): raise "
            f"{name} if your hall supplies it (--set {name}={math.ceil(kw)})"
        )
    return out


def _deadline_context(scenario: Scenario, req: Requirements) -> list[str]:
    """What a deadline asks once its margin and goodput are counted (the need every reason refers to)."""
    r = scenario.requirement
    if r.tokens is None or req.tokens_per_s is None:
        return []
    allowed = r.days * (1 - r.schedule_margin)
    rel = scenario.reliability
    if rel.goodput is not None and rel.goodput < 1:
        counted = f" at the given goodput {rel.goodput:.1%}"
    elif rel.goodput is None and rel.interruptions_per_1000_node_days != 0:
        counted = " before interruptions, restarts and checkpoints, which each configuration's goodput adds"
        no_spares = scenario.spares.node_share == 0 and scenario.spares.repair_cover == 0
        if no_spares and rel.repair_hours > 0 and rel.interruptions_per_1000_node_days is None:
            counted += (
                " (with no spare nodes, spares.node_share 0, every GPU, host or NIC failure stalls the job until its "
                f"node is repaired, reliability.repair_hours {rel.repair_hours:g}: buy spares)"
            )
    elif not r.schedule_margin:
        return []
    else:
        counted = ""
    margin = f" less its {r.schedule_margin:.0%} margin ({allowed:.1f} days)" if r.schedule_margin else ""
    return [f"the deadline of {r.days:g} days{margin} needs {format_count(req.tokens_per_s)} tokens/s{counted}"]


def _limit_reasons(scenario: Scenario, priced: pd.DataFrame) -> list[str]:
    """Candidates exist, but the budget or the power cap excludes them all (each at its cheapest size)."""
    lines = []
    cheapest, lowest_kw = priced["capex_usd"].min(), priced["power_w"].min() / 1e3
    budget, power = scenario.constraints.budget_usd, scenario.constraints.power_kw
    if budget is not None and cheapest > budget:
        lines.append(
            f"budget {format_usd(budget)} is too small: the cheapest plan meeting every other "
            f"requirement costs {format_usd(cheapest)}; a budget of {format_usd(cheapest)} would suffice"
            + _budget_per_gpu(priced)
        )
    if power is not None and lowest_kw > power:
        lines.append(f"power cap {power:g} kW is too low: the least power-hungry plan needs {lowest_kw:.1f} kW")
    if not lines:  # each cap alone can be met, both together cannot
        under_power = priced[priced["power_w"] <= power * 1e3 + 1e-6]["capex_usd"].min()
        under_budget = priced[priced["capex_usd"] <= budget + 1e-6]["power_w"].min() / 1e3
        lines.append(
            f"budget {format_usd(budget)} and power cap {power:g} kW cannot both hold: within the "
            f"power cap the cheapest plan costs {format_usd(under_power)}; within the budget the "
            f"least power-hungry plan needs {under_budget:.1f} kW"
        )
    return lines


def _budget_per_gpu(priced: pd.DataFrame) -> str:
    """When several GPUs are allowed, the budget each one needs (its cheapest candidate), cheapest first, so a
    buyer choosing between them sees both in one run."""
    by_gpu = priced.groupby("gpu")["capex_usd"].min().sort_values()
    if len(by_gpu) < 2:
        return ""
    return " (by GPU: " + ", ".join(f"{gpu} {format_usd(usd)}" for gpu, usd in by_gpu.items()) + ")"


def _performance_reasons(scenario: Scenario, calibration: Calibration, table: cand.Candidates) -> list[str]:
    """Why no candidate exists: the first requirement that fails for every configuration, with the nearest
    thing that works."""
    keys, work, req = table.bounds, table.training, table.requirements
    open_ = keys["range_lo"] <= keys["range_hi"]
    if req.gpus is not None and not open_.any():
        sizes = sorted({int(g) for g in keys["gpus_per_node"]})
        return [
            f"{req.gpus} GPUs is not a whole number of nodes of {sizes} GPUs within max_nodes "
            f"{scenario.constraints.max_nodes}"
        ]
    keys = keys[open_]
    fits_somewhere = keys["n_memory_min"] <= keys["range_hi"]
    if not fits_somewhere.any():
        return [_memory_reason(keys, work, calibration)]
    keys = keys[fits_somewhere]
    # the first node count each key's layout and batch allow from where it fits (a pipeline's figures at a count
    # it cannot run at would promise too much)
    lo = np.maximum(keys["n_memory_min"].to_numpy(np.int64), keys["range_lo"].to_numpy(np.int64))
    first, last = cand.legal_within(keys, req, lo, keys["range_hi"].to_numpy(np.int64))
    runnable = first <= last
    if not runnable.any() and req.shard_group:
        reason = _shard_group_reason(keys, req, lo)
        if reason:
            return [reason]
    if not runnable.any() and req.global_batch:
        return [
            f"global batch {req.global_batch} leaves no node count with a whole grad_accum (and, for a pipeline, at "
            "least pp micro-batches) where the model fits; allow more micro_batches or change global_batch"
        ]
    keys, first = (keys[runnable], first[runnable]) if runnable.any() else (keys, lo)
    at = pd.DataFrame(cand.evaluate_at(keys, first, work, calibration, req.confidence))
    at["node_gbps_eff"] = keys["node_gbps_eff"].to_numpy()
    at["fabric"], at["gpu"] = keys["fabric"].to_numpy(), keys["gpu"].to_numpy()
    best = at.loc[at["achieved_tflops_per_gpu"].idxmax()]
    if req.target_tflops and best["achieved_tflops_per_gpu"] < req.target_tflops:
        where = (
            "1 node, NVLink only"
            if best["nodes"] == 1
            else f"{int(best['nodes'])} nodes at {best['node_gbps_eff']:,.0f} Gbps/node {best['fabric']}"
        )
        return [
            f"target {req.target_tflops:g} TFLOPs/GPU is unreachable with this catalog: the highest where the model "
            f"fits is {best['achieved_tflops_per_gpu']:.1f} ({best['gpu']}, {where}, micro-batch "
            f"{int(best['micro_batch'])}), limited by {best['binding']}; lower target_tflops, or allow larger "
            f"micro_batches or {binding.remedy(work.framework)}"
        ]
    if req.tokens_per_s is not None and (keys["n_speed_min"] > keys["range_hi"]).all():
        top = cand.evaluate_at(keys, keys["range_hi"].to_numpy(), work, calibration, req.confidence)
        tokens = np.asarray(top["tokens_per_s"], dtype=float)
        goodput = cand.goodput_at(top, req, work)
        at = int(np.argmax(tokens if goodput is None else tokens * goodput))
        fastest = float(tokens[at] if goodput is None else tokens[at] * goodput[at])
        days = f" ({req.training_days(fastest):.1f} calendar days)" if req.tokens and fastest > 0 else ""
        counted = f" at its goodput {goodput[at]:.1%}" if goodput is not None else ""
        remedy = "raise max_nodes or the deadline, or lower the target"
        if goodput is not None and tokens.max() >= req.tokens_per_s and fastest < req.tokens_per_s:
            remedy = (
                f"before interruptions it would reach {format_count(float(tokens.max()))}: lower "
                "reliability.failure_rates, restart_minutes or repair_hours, buy spares, or raise the deadline"
            )
        return [
            f"the throughput requirement ({format_count(req.tokens_per_s)} tokens/s) is out of reach: the fastest "
            f"configuration within max_nodes {scenario.constraints.max_nodes} reaches "
            f"{format_count(fastest)} tokens/s{counted}{days}; {remedy}"
        ]
    if (keys["n_lo"] <= keys["n_hi"]).any():
        if req.global_batch:
            return [_batch_reason(keys[keys["n_lo"] <= keys["n_hi"]], req, scenario, work)]
        reasons = _reach_reasons(scenario, table.designs, int(keys.loc[keys["n_lo"] <= keys["n_hi"], "n_lo"].min()))
        if reasons:
            return reasons
        reach = scenario.cabling
        runs = (
            f" at node_leaf_reach_m {reach.node_leaf_reach_m:g} m"
            if reach.node_leaf_reach_m
            else " at the layout's runs"
        ) + (f" / switch_reach_m {reach.switch_reach_m:g} m" if reach.switch_reach_m else "")
        return [
            f"no switch, optic or cable in the catalog connects these NICs{runs} (or the fabric's capacity is too "
            "small, or a server alone exceeds layout.rack_kw); add optics with that reach, matching switches or "
            "cables of that length"
        ]
    return [
        "the node range that meets the target holds too few GPUs for memory or the deadline in every "
        f"configuration; lower target_tflops, or allow {binding.remedy(work.framework)}"
    ]


def _reach_reasons(scenario: Scenario, designs: pd.DataFrame | None, nodes: int) -> list[str]:
    """Where the switch-to-switch links stop short: per compute switch, the run `nodes` nodes need from the
    farthest row to the spine room, beside the longest run its catalogued links reach (the design rows' last
    reach regime), when every fabric of leaves that switch builds stops below `nodes`."""
    if designs is None or designs.empty or scenario.cabling.switch_reach_m:
        return []
    multi = designs[designs["tier"] >= 2]
    if multi.empty or (multi["cap_hi"] >= nodes).any():
        return []
    g, out = layout.Geometry.of(scenario.layout), []
    for (switch, npr), rows in multi.groupby(["switch", "nodes_per_rack"], sort=True):
        last = rows.loc[rows["cap_hi"].idxmax()]
        floor_rows = layout.rows_of(layout.rows_of(nodes, int(npr)), g.racks_per_row)
        need_m = layout.longest_uplink_run_m(floor_rows, g.racks_per_row, g)
        out.append(
            f"{switch}: the leaf-to-spine run of {nodes:,} nodes is {need_m:,.0f} m ({floor_rows:,} rows of "
            f"{g.racks_per_row} racks in halls of {g.rows_per_hall} rows, the spine room at the floor's centre), "
            f"but its longest switch-to-switch link ({last['uplink'].text}) serves runs up to "
            f"{last['uplink_run_m']:,.0f} m, enough for {int(last['cap_hi']):,} nodes"
        )
    return out + [
        "add a longer-reach optic and fibre for these switches (single-mode FR4 to 2 km), or a denser floor "
        "(layout.racks_per_row, rows_per_hall, row_pitch_m), or set cabling.switch_reach_m to the run you will build"
    ]


def _batch_that_runs(batch: int, keys, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per key at `nodes`: the smallest global batch from `batch` up that splits into whole micro-batches per
    data-parallel rank (a pipeline: at least pp of them, a multiple of pp when interleaved), the micro-batches
    per rank per step it takes, and the sequences one micro-batch on every rank holds (0: the count does not
    tile the layout; its batch is then the largest integer)."""
    ranks = nodes * np.asarray(keys["gpus_per_node"], dtype=np.int64)
    split = (np.asarray(keys["tp"]) * np.asarray(keys["pp"]) * np.asarray(keys["cp"])).astype(np.int64)
    pp, vp = np.asarray(keys["pp"], dtype=np.int64), np.asarray(keys["vp"], dtype=np.int64)
    per_step = np.where(ranks % split == 0, ranks // split, 0) * np.asarray(keys["micro_batch"], dtype=np.int64)
    k = -(-batch // np.maximum(per_step, 1))  # micro-batches per rank per step holding at least the batch
    k = np.where(pp > 1, np.maximum(k, pp), k)
    k = np.where((pp > 1) & (vp > 1), -(-k // pp) * pp, k)
    return np.where(per_step > 0, k * per_step, np.iinfo(np.int64).max), k, per_step


# The global batch is named as what sets the node count when, without it, a configuration would meet every
# other requirement for at least this share less (the plan's objective).
BATCH_CAUSE_SHARE = 0.01


def batch_note(scenario: Scenario, table: cand.Candidates, head: Summary, replan) -> str:
    """When the global batch, not the deadline or memory, sets the node count: each candidate at the first
    count its performance key needs (memory, target and deadline at the key's goodput bound, whatever the batch
    allows: table.bounds) is priced there; when the cheapest is cheaper than the plan by BATCH_CAUSE_SHARE, it is
    named with the batch nearest the given one that would run at that count (the batch sets the count, and
    another batch would save the difference), once `replan` (the priced table's feasible rows, cheapest first)
    of that configuration at that batch (_trial) confirms it saves at least that share, with what it saves."""
    req, frame = table.requirements, table.feasible
    if not req.global_batch or scenario.objective.kind in costing.OUTPUT_KINDS or frame.empty:
        return ""
    key = [*cand.KEY, "single"]
    need = frame[key].merge(table.bounds[[*key, "n_lo"]].drop_duplicates(key), on=key, how="left")["n_lo"]
    free = np.maximum(need.fillna(frame["n_lo"]).to_numpy(np.int64), np.where(frame["single"], 1, 2))
    lower = free < frame["n_lo"].to_numpy(np.int64)
    if not lower.any():
        return ""
    repriced = cand.reprice_at(frame[lower], free[lower], scenario)
    repriced = repriced[repriced["within_limits"]]
    if repriced.empty:
        return ""
    best = cand.clean_row(repriced.loc[repriced["objective_usd"].idxmin()])
    saved = head.cost.objective_usd - float(best["objective_usd"])
    if saved < BATCH_CAUSE_SHARE * head.cost.objective_usd:
        return ""
    nodes, batch = int(best["nodes"]), int(req.global_batch)
    proposal = _nearest_batch(batch, best, nodes)
    legal = cand.legal_nodes(best, req, 2 * nodes)
    legal = [] if legal is None else legal
    around = [int(n) for n in legal if n < nodes][-1:] + [int(n) for n in legal if n > nodes][:1]
    allows = " and ".join(str(n) for n in around) or "no"
    money = costing.money_kind(scenario.objective.kind)
    layout = f", TP {best['tp']} x PP {best['pp']}" if int(best["tp"]) * int(best["pp"]) > 1 else ""
    checked = replan(_trial(scenario, best, proposal))
    if checked.empty or head.cost.objective_usd - float(checked["objective_usd"].iloc[0]) < (
        BATCH_CAUSE_SHARE * head.cost.objective_usd
    ):
        return ""  # the estimate does not hold once that batch is planned: nothing is promised
    found = checked.iloc[0]
    sets = " ".join(f"--set workload.{k}={v}" for k, v in _trial_settings(best, proposal).items())
    return (
        f"global batch {batch} sets the node count, not the deadline: without it {nodes} x {best['server']} "
        f"({best['nics_per_node']} x {best['nic']}, micro-batch {int(best['micro_batch'])}{layout}) would meet every "
        f"other requirement for about {format_usd(saved)} less {money}, but the batch splits into whole micro-batches "
        f"per data-parallel rank there only at {allows} nodes; planned with a global batch of {proposal} and that "
        f"configuration's micro-batch and layout ({sets}), {int(found['nodes'])} x {found['server']} meet it for "
        f"{format_usd(head.cost.objective_usd - float(found['objective_usd']))} less."
    )


def _trial_settings(row: dict, batch: int) -> dict:
    """The workload settings that plan the configuration the batch note names: the batch, its micro-batch and,
    when it is not plain data parallelism, its layout (what a user sets to get what the note promises)."""
    settings = {"global_batch": batch, "micro_batches": f"[{int(row['micro_batch'])}]"}
    fixed = {k: int(row[k]) for k in ("tp", "pp", "vp", "cp", "ep")}
    return settings | (fixed if any(v > 1 for v in fixed.values()) else {})


def _trial(scenario: Scenario, row: dict, batch: int) -> Scenario:
    """The scenario with _trial_settings, on that configuration's server, fabric and switch alone (a small table
    confirms it)."""
    workload = _trial_settings(row, batch) | {"micro_batches": [int(row["micro_batch"])]}
    return scenario.model_copy(
        update={
            "workload": scenario.workload.model_copy(update=workload),
            "constraints": scenario.constraints.model_copy(update=_same_hardware(row)),
        }
    )


def _same_hardware(row: dict) -> dict:
    """Constraints that keep a row's server, fabric and switch (what the trial table needs, and no more)."""
    same: dict = {"servers": [row["server"]]}
    if row.get("fabric") and row["fabric"] != "none":
        same["fabrics"] = [row["fabric"]]
    if row.get("switch"):
        same["switches"] = [row["switch"]]
    return same


def _nearest_batch(batch: int, row: dict, nodes: int) -> int:
    """The global batch nearest `batch` that splits into whole micro-batches per data-parallel rank of `row` at
    `nodes` (_batch_that_runs: the smallest from `batch` up, or the largest below it; below preferred on a tie:
    the smaller batch converges as published)."""
    one = {c: [row[c]] for c in ("gpus_per_node", "tp", "pp", "cp", "vp", "micro_batch")}
    up, k, per_step = (int(a[0]) for a in _batch_that_runs(batch, one, np.array([nodes])))
    pp, vp = int(row["pp"]), int(row["vp"])
    step = pp if pp > 1 and vp > 1 else 1
    k_down = (batch // max(per_step, 1)) // step * step
    if pp > 1 and k_down < pp:
        k_down = 0
    down = k_down * per_step
    return down if down and batch - down <= up - batch else up


def _shard_group_reason(keys: pd.DataFrame, req: Requirements, lo: np.ndarray) -> str:
    """The hybrid shard group as the cause, when the GPU counts the rest allows (memory, range, batch) hold no
    whole replicas of it ("" when they would not run without it either): named with a group that divides the
    first of them."""
    free = dataclasses.replace(req, shard_group=0)
    first, last = cand.legal_within(keys, free, lo, keys["range_hi"].to_numpy(np.int64))
    ok = first <= last
    if not ok.any():
        return ""
    group = req.shard_group
    gpus = int((first[ok] * keys["gpus_per_node"].to_numpy(np.int64)[ok]).min())
    rules = "memory, the node range and global batch " + str(req.global_batch) if req.global_batch else ""
    return (
        f"workload.shard_gpus {group} is the cause: hybrid sharding runs whole replicas of the shard group, so a "
        f"GPU count must be a multiple of {group}, and none that {rules or 'memory and the node range'} allow is "
        f"(the first they allow is {gpus:,} GPUs); use a shard_gpus that divides the GPU counts, such as "
        f"{math.gcd(group, gpus)}, or workload.sharding full"
    )


def _capex_at(row: dict, nodes: int) -> float:
    cost = costing.configuration_cost(row, nodes, **costing.priced_quantities(cand.quantities_at(row, nodes)))
    return float(cost.capex_usd)


def _batch_reason(keys: pd.DataFrame, req: Requirements, scenario: Scenario, work: Training) -> str:
    """The global batch as the cause: memory, target and deadline leave a node range, but no count in it splits the
    batch into whole micro-batches per data-parallel rank (a pipeline: at least pp, a multiple of pp when
    interleaved). Named with the smallest global batch that would run at some configuration's first count (with
    a deadline, at that count's goodput), and the counts the given batch allows beside that configuration's
    range."""
    batch = int(req.global_batch)
    lo = keys["n_lo"].to_numpy(np.int64)
    needed, k, per_step = _batch_that_runs(batch, keys, lo)
    i = int(np.lexsort((lo, needed))[0])
    row = keys.iloc[i].to_dict()
    first, last = int(lo[i]), int(row["n_hi"])
    legal = cand.legal_nodes(row, req, max(last * 4, last + 64))
    legal = [int(n) for n in legal] if legal is not None else []
    beside = [n for n in legal if n < first][-1:] + [n for n in legal if n > last][:1]
    allowed = " and ".join(f"{n} nodes" for n in beside) or "no node count"
    micro = int(row["micro_batch"])
    steps = f"{int(k[i])} micro-batch{'es' if k[i] > 1 else ''} of {micro}"
    return (
        f"global batch {batch} is the cause: memory, target and deadline (at its goodput) allow {first}-{last} "
        f"nodes of {int(row['gpus_per_node'])} {row['gpu']} at micro-batch {micro}, but the batch splits into whole "
        f"micro-batches per data-parallel rank only at {allowed}; a global batch of {int(needed[i])} ({steps} on "
        f"each of {int(per_step[i]) // micro} ranks) would run at {first} nodes"
    )


def _memory_reason(keys: pd.DataFrame, work: Training, calibration: Calibration) -> str:
    for nodes in (2**i for i in range(0, 21)):
        ev = cand.evaluate_at(keys, np.full(len(keys), nodes), work, calibration)
        fits = np.asarray(ev["fits_memory"], dtype=bool)
        if fits.any():
            need = int(np.asarray(ev["gpus"])[fits].min())
            return (
                f"the model does not fit in GPU memory within the allowed node counts: it needs at least "
                f"{need} GPUs; raise max_nodes or the GPU count, or use GPUs with more HBM"
            )
    if work.parallelism.sharding == "hybrid":  # more GPUs add replicas, not shards: the states never shrink
        group = f"{work.parallelism.shard_gpus} GPUs" if work.parallelism.shard_gpus else "one scale-up domain"
        return (
            f"the model does not fit at any GPU count: with hybrid sharding its states are sharded over each group "
            f"of {group} only (16 bytes per parameter over the group), and more GPUs add replicas; raise "
            "workload.shard_gpus, or use workload.sharding full"
        )
    return (
        "the model does not fit at any GPU count: the activations of one micro-batch alone exceed usable HBM; "
        "use smaller micro_batches, activation checkpointing or a shorter seq_len"
    )


# ---------------------------------------------------------------- sensitivity (for reports)

COST_CURVE_FACTORS = (0.75, 0.9, 1.0, 1.1, 1.25)


def cheapest_capex(
    catalog: Catalog, scenario: Scenario, calibration: Calibration, parts: Designs | None = None
) -> float | None:
    """Capex of the cheapest plan (by the scenario's objective), or None when there is none. Exact: the
    priced table holds every candidate at its optimum. `parts`: the scenario's designs, when already built."""
    feasible = sized_candidates(catalog, scenario, calibration, parts)[1].feasible
    return None if feasible.empty else float(feasible.iloc[0]["capex_usd"])


@dataclass(frozen=True)
class Sensitivity:
    """How the plan's answer moves: achieved TFLOPs/GPU against node bandwidth at the chosen configuration
    (None for a single node) and the cheapest plan's capex as the target moves."""

    bandwidth_sweep: pd.DataFrame | None
    cost_curve: list[dict]


def sensitivity(
    catalog: Catalog, scenario: Scenario, plan: Plan, calibration: Calibration, planned: Planned | None = None
) -> Sensitivity:
    """`planned`: what the plan was chosen from (run_with_table), when at hand."""
    sweep = plan_sweep(catalog, scenario_training(catalog, scenario), plan.choice, calibration)
    return Sensitivity(sweep, cost_curve(catalog, scenario, calibration, planned=planned))


def cost_curve(
    catalog: Catalog,
    scenario: Scenario,
    calibration: Calibration,
    factors: tuple[float, ...] = COST_CURVE_FACTORS,
    parts: Designs | None = None,
    planned: Planned | None = None,
) -> list[dict]:
    """Capex of the cheapest plan as the target TFLOPs/GPU moves around the scenario's. `planned`: the
    scenario's plan's designs and table (its bounds hold at every target but for the target's own)."""
    if not scenario.target_tflops:
        return []
    targets = [scenario.target_tflops * f for f in factors]
    if planned is not None:
        parts = planned.parts
    parts = parts if parts is not None else cand.part_designs(catalog, scenario)  # (hardware only: built once)
    if _filterable(catalog, scenario, parts):
        prior = planned.table if planned is not None else None
        capex = _capex_by_target(catalog, scenario, calibration, targets, parts, prior)
    else:
        at = lambda t: scenario.model_copy(update={"target_tflops": t})  # noqa: E731
        capex = [cheapest_capex(catalog, at(t), calibration, parts) for t in targets]
    return [
        {"target_tflops": t, "capex_usd": c, "note": "" if c is not None else "no plan"}
        for t, c in zip(targets, capex, strict=True)
    ]


def _filterable(catalog: Catalog, scenario: Scenario, parts: Designs) -> bool:
    """Whether one table at the lowest target answers every target by filtering: the target TFLOPs/GPU only
    bounds a row's node count from above (TFLOPs/GPU never rises with N), so a row of the lowest target's table
    (every layout kept) is feasible at a higher one iff its TFLOPs/GPU at its own count reach it; its count and
    price do not move. Not so for an output objective, which moves rows to other counts."""
    return scenario.objective.kind not in costing.OUTPUT_KINDS


def _capex_by_target(
    catalog, scenario: Scenario, calibration, targets: list[float], parts, prior=None
) -> list[float | None]:
    """The cheapest plan's capex at each target from one table at the lowest (see _filterable); `prior`: the
    scenario's own table (cand.build's)."""
    low = scenario.model_copy(update={"target_tflops": min(targets)})
    table = cand.build(catalog, low, calibration, parts, every_layout=True, prior=prior)
    feasible = table.feasible
    if feasible.empty:
        return [None] * len(targets)
    nodes = feasible["nodes"].to_numpy(np.int64)
    ev = cand.evaluate_at(cand.key_arrays(feasible), nodes, table.training, calibration, table.requirements.confidence)
    tflops, capex = np.asarray(ev["achieved_tflops_per_gpu"], dtype=float), feasible["capex_usd"].to_numpy(float)
    out = []
    for target in targets:
        ok = np.flatnonzero(tflops >= target - TARGET_TOLERANCE)  # meets_target's test
        out.append(float(capex[ok[0]]) if len(ok) else None)  # the first: the table is in objective order
    return out


def plan_sweep(catalog: Catalog, work: Training, choice, calibration: Calibration) -> pd.DataFrame | None:
    """The bandwidth sweep at a plan's chosen configuration (None for a single node: no network)."""
    if choice.nodes <= 1:
        return None
    return bandwidth_table(
        catalog, work.with_micro_batch(choice.micro_batch), choice.gpu, choice.gpus, choice.gpus_per_node, calibration
    )
