"""The purchases a sweep compares (planner/answers/sweep.py) and their outcome under each draw.

A choice is one configuration bought at one node count: the CONFIGURATIONS cheapest distinct purchases of the
candidate table (server, NICs, fabric, switch, tier, oversubscription, rails; the micro-batch and layout are
software, so each configuration keeps its best row's), each at COUNTS node counts between COUNT_RANGE times its
point-plan count (the legal counts of its layout and batch, within the budget and power caps, meeting the target
TFLOPs and fitting in memory). For each choice the table holds what a draw moves:
  * its bill of materials as dollars per part (capex = sum of part dollars x the draw's price factors; running
    costs of a TCO objective at their point values);
  * its predicted tokens/s (the point prediction, before any --confidence) and validation group;
  * its goodput at interruption-rate multipliers on a log grid (interpolated at the draw's multiplier);
  * the weeks of the longest lead time in each part family it buys (delivery = the latest family's weeks x
    the draw's factor; reported beside the deadline, whose days count from delivery as the plan's do).
`outcome(draws)` is then pure array arithmetic: cost, training days and delivery of every choice in every draw.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from planner.assumptions import uncertainty as U
from planner.base.units import SECONDS_PER_DAY
from planner.catalog.load import Catalog
from planner.hardware import costing
from planner.inputs.scenario import Scenario
from planner.model.calibration import Calibration
from planner.model.draws import PROBABILITIES, Draws, Spread
from planner.model.workload import Requirements, fits_memory, meets_target
from planner.tables import buy as cand

# what one purchase is: the hardware of a candidate row (the micro-batch and layout are chosen after it arrives)
HARDWARE = [c for c in cand.GROUP if c not in ("micro_batch", *cand.SEARCHED)] + ["tier", "oversubscription"]
# the log interruption-rate multipliers at which goodput is tabulated: +-4 sigma of FAILURE_RATE_SPREAD
LOG_RATE_GRID = np.linspace(-4.0, 4.0, 17) * U.FAILURE_RATE_SPREAD.value


def rate_multipliers() -> np.ndarray:
    """The interruption-rate multipliers of LOG_RATE_GRID."""
    return np.exp(LOG_RATE_GRID)


@dataclass(frozen=True)
class Rent:
    """The cost terms of rentals (planner/tables/rentals.py), per choice: its cloud row's price factor (`part`)
    times fixed_usd (what a Capacity Block or commitment bills up front, covering prepaid_h hours) plus usd_per_h
    for every hour the job runs beyond them (on demand and spot: every hour)."""

    part: np.ndarray
    fixed_usd: np.ndarray
    prepaid_h: np.ndarray
    usd_per_h: np.ndarray


@dataclass(frozen=True)
class Choices:
    """Every choice's point figures and what a draw moves (rows: choices; the point plan's is `point`)."""

    frame: pd.DataFrame  # configuration, label, server, gpu, nodes, gpus, capex_usd, objective_usd, tokens_per_s
    part_usd: np.ndarray  # [choices x parts] extended dollars of each part at its catalog price
    parts: pd.DataFrame  # part, vendor, category, confidence, sigma, family
    other_usd: np.ndarray  # the objective beyond capex (a TCO's running costs), not drawn
    tokens_per_s: np.ndarray  # the point prediction, before the goodput
    group: np.ndarray  # index into groups: the validation group of each choice's prediction
    groups: list[str]
    goodput: np.ndarray  # [choices x LOG_RATE_GRID]
    lead_weeks: np.ndarray  # [choices x lead families]: the longest lead time it buys in each family
    lead_families: list[str]
    point: int
    tokens: float
    deadline_days: float
    spread: Spread
    rent: Rent | None = None  # rentals: their cost grows with the hours the job runs

    @property
    def cost_is_fixed(self) -> bool:
        """A purchase's cost does not depend on the days (mean-one price draws: E[cost] is the point cost)."""
        return self.rent is None

    def lean(self) -> Choices:
        """What a worker needs to evaluate draws (outcome): the arrays, without the wide candidate columns whose
        Python objects would make sending it to every worker slow."""
        return replace(self, frame=self.frame[["label", "configuration"]], parts=self.parts[["part", "sigma"]])

    @property
    def delivery_weeks(self) -> np.ndarray:
        """At the stated lead times."""
        return self.lead_weeks.max(axis=1, initial=0.0)

    def outcome(self, draws: Draws) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(cost in USD, training days in calendar time, delivery in weeks from the order) of every choice in
        every draw, each [draws x choices]. The deadline's days count from delivery, as the plan's do."""
        cost = draws.price @ self.part_usd.T + self.other_usd
        log_rate = np.log(draws.rate)  # (a lognormal draw: positive)
        goodput = np.stack([np.interp(log_rate, LOG_RATE_GRID, g) for g in self.goodput], axis=1)
        tokens_per_s = self.tokens_per_s * draws.throughput[:, self.group] * goodput
        delivery_weeks = (self.lead_weeks[None, :, :] * draws.lead[:, None, :]).max(axis=2, initial=0.0)
        days = self.tokens / tokens_per_s / SECONDS_PER_DAY
        if self.rent is not None:
            r = self.rent
            billed = r.fixed_usd + r.usd_per_h * np.maximum(days * 24 - r.prepaid_h, 0.0)
            cost = cost + draws.price[:, r.part] * billed
        return cost, days, delivery_weeks


def build(
    catalog: Catalog, scenario: Scenario, calibration: Calibration, table: cand.Candidates, point: tuple[dict, int]
) -> Choices:
    """The choices of a sweep: the point plan (`point`: its row and node count) and the configurations the
    candidate table ranks next, each at its ladder of counts."""
    req, work = table.requirements, table.training
    if req.tokens is None or scenario.requirement.days is None:
        raise ValueError("a sweep needs a deadline (requirement.tokens and requirement.days)")
    rows = _configurations(table.feasible, point[0])
    at = _ladder(rows, req, point)
    frame = rows.iloc[at["row"]].reset_index(drop=True)
    nodes = at["nodes"].to_numpy(np.int64)
    frame, nodes, ev = _usable(frame, nodes, point[1], scenario, work, calibration, req)
    lines = [cand.bill_of_materials(catalog, r, int(n), scenario) for r, n in zip(_records(frame), nodes, strict=True)]
    parts, part_usd = _part_dollars(lines)
    leads, families = _lead_weeks(lines)
    groups = sorted(set(ev["range_group"]))
    point_at = _point_index(frame, nodes, point)
    capex = part_usd.sum(axis=1)
    objective = frame["objective_usd"].to_numpy(float) - frame["capex_usd"].to_numpy(float)
    spread = Spread(
        price_sigma=parts["sigma"].to_numpy(float),
        price_family=parts["family"].to_numpy(np.int64),
        families=int(parts["family"].max()) + 1 if len(parts) else 0,
        family_share=U.PRICE_FAMILY_SHARE.value,
        residuals=np.array([quantiles(calibration, g) for g in groups]),
        rate_sigma=U.FAILURE_RATE_SPREAD.value,
        lead_sigma=U.LEAD_TIME_SPREAD.value,
        lead_families=len(families),
    )
    shown = frame.assign(
        nodes=nodes,
        gpus=nodes * frame["gpus_per_node"].to_numpy(np.int64),
        capex_usd=capex,
        objective_usd=capex + objective,
        tokens_per_s=np.asarray(ev["tokens_per_s"], dtype=float),
    )
    shown["label"] = [_label(r, int(n)) for r, n in zip(_records(shown), nodes, strict=True)]
    twins = shown["label"].duplicated(keep=False)  # (a difference the label does not spell: say which variant)
    shown.loc[twins, "label"] += " (variant " + shown.loc[twins, "configuration"].astype(str) + ")"
    return Choices(
        frame=shown,
        part_usd=part_usd,
        parts=parts,
        other_usd=objective,
        tokens_per_s=np.asarray(ev["tokens_per_s"], dtype=float),
        group=np.array([groups.index(g) for g in ev["range_group"]], dtype=np.int64),
        groups=groups,
        goodput=_goodput_grid(frame, nodes, scenario, req, work),
        lead_weeks=leads,
        lead_families=families,
        point=point_at,
        tokens=float(req.tokens),
        deadline_days=float(scenario.requirement.days),
        spread=spread,
    )


def _configurations(feasible: pd.DataFrame, point_row: dict) -> pd.DataFrame:
    """The best row of each distinct purchase, the point plan's first, then the cheapest CONFIGURATIONS - 1."""
    best = feasible.drop_duplicates(HARDWARE, keep="first")
    same = cand.matching(best, {column: point_row.get(column) for column in HARDWARE})
    # the point plan's own row (its micro-batch and layout, which its purchase's best row need not share)
    first = pd.DataFrame([point_row])[best.columns]
    rest = best[~same].head(int(U.CONFIGURATIONS.value) - 1)
    out = pd.concat([first, rest], ignore_index=True)
    return out.assign(configuration=np.arange(len(out)))


def _ladder(rows: pd.DataFrame, req: Requirements, point: tuple[dict, int]) -> pd.DataFrame:
    """(row, nodes) of every configuration's counts: its legal counts in COUNT_RANGE x its count, thinned to
    COUNTS; the point plan's count always among its own."""
    low, high = U.COUNT_RANGE
    out = []
    for i, row in enumerate(_records(rows)):
        start = point[1] if i == 0 else int(row["nodes"])
        if bool(row.get("single")):
            counts = np.array([1])
        else:
            top = min(int(row["n_hi"]), int(np.ceil(start * high)))
            legal = cand.legal_nodes(row, req, top)
            legal = np.arange(1, top + 1) if legal is None else legal
            counts = legal[legal >= max(2, int(np.floor(start * low)))]  # one node is a (single) row of its own
            counts = np.unique(np.append(cand._thin(counts, int(U.COUNTS.value)), start))
        out += [(i, int(n)) for n in counts]
    return pd.DataFrame(out, columns=["row", "nodes"])


def _usable(frame, nodes, point_nodes: int, scenario, work, calibration, req) -> tuple[pd.DataFrame, np.ndarray, dict]:
    """The choices that fit in memory, meet the target TFLOPs and stay within the budget and power caps (the
    point plan's always, so the sweep compares against it), repriced at their counts, with their point
    prediction's tokens/s and validation group."""
    priced = cand.reprice_at(frame, nodes, scenario).assign(configuration=frame["configuration"].to_numpy())
    ev = cand.evaluate_at(cand.key_arrays(priced), nodes, work, calibration)
    ok = fits_memory(ev) & meets_target(ev, req)
    ok &= cand.within_caps(priced["capex_usd"].to_numpy(), priced["power_w"].to_numpy(), scenario)
    ok |= (frame["configuration"].to_numpy() == 0) & (nodes == point_nodes)
    kept = {k: np.asarray(ev[k])[ok] for k in ("tokens_per_s", "range_group")}
    return priced[ok].reset_index(drop=True), nodes[ok], kept


def _label(row: dict, nodes: int) -> str:
    """A purchase in a line: nodes x server, then its network (none on one node); every HARDWARE column that
    tells two purchases apart shows."""
    text = f"{nodes} x {row['server']}"
    if bool(row.get("single")) or not isinstance(row.get("nic"), str):
        return text
    ports = int(row.get("nic_ports") or 1)
    nic = f"{int(row['nics_per_node'])} x {row['nic']}" + (f" ({ports} ports each)" if ports > 1 else "")
    over = float(row.get("oversubscription") or 1)
    fabric = f"{row['fabric']} {row['switch']} {int(row['tier'])}-tier" + (f" {over:g}:1" if over > 1 else "")
    if bool(row.get("rail")):
        fabric += " rail-optimised"
    if int(row.get("planes") or 1) > 1:
        fabric += f", {int(row['planes'])} planes"
    return f"{text}; {nic}; {fabric}"


def _records(frame: pd.DataFrame) -> list[dict]:
    return [cand.clean_row(r) for r in frame.to_dict("records")]


def _point_index(frame: pd.DataFrame, nodes: np.ndarray, point: tuple[dict, int]) -> int:
    at = np.flatnonzero((frame["configuration"].to_numpy() == 0) & (nodes == point[1]))
    return int(at[0])


def _part_dollars(lines: list[list]) -> tuple[pd.DataFrame, np.ndarray]:
    """Each choice's extended dollars per catalog part (a cable's lengths are one part: one price row)."""
    index: dict[str, int] = {}
    info, cells = [], []
    for c, bom in enumerate(lines):
        for line in bom:
            key = line.catalog_sku or line.sku
            if key not in index:
                index[key] = len(info)
                info.append((key, line.vendor or "unknown", line.category, line.confidence))
            cells.append((c, index[key], line.extended_usd))
    parts = pd.DataFrame(info, columns=["part", "vendor", "category", "confidence"])
    parts["sigma"] = [costing.price_uncertainty(c) for c in parts["confidence"]]
    parts["family"] = pd.factorize(parts["vendor"] + "|" + parts["category"])[0]
    dollars = np.zeros((len(lines), len(info)))
    for c, p, usd in cells:
        dollars[c, p] += usd
    return parts, dollars


def _lead_weeks(lines: list[list]) -> tuple[np.ndarray, list[str]]:
    """[choices x families]: the longest lead time each choice buys in each lead-time family (its LEAD_WEEKS
    family, or the catalog row that states its own)."""
    families = sorted({line.lead_basis for bom in lines for line in bom if _delivered(line)})
    weeks = np.zeros((len(lines), len(families)))
    for c, bom in enumerate(lines):
        for line in bom:
            if _delivered(line):
                f = families.index(line.lead_basis)
                weeks[c, f] = max(weeks[c, f], float(line.lead_weeks))
    return weeks, families


def _delivered(line) -> bool:
    return line.lead_weeks is not None and line.quantity > 0


def quantiles(calibration: Calibration, group: str) -> list[float]:
    """A validation group's log-residual quantiles (zeros when the calibration carries none: no model error)."""
    q = calibration.uncertainty.get(group)
    if not q:
        return [0.0] * len(PROBABILITIES)
    return [q[f"p{round(p * 100)}"] for p in PROBABILITIES]


def _goodput_grid(frame: pd.DataFrame, nodes: np.ndarray, scenario: Scenario, req: Requirements, work) -> np.ndarray:
    """[choices x LOG_RATE_GRID]: each choice's goodput with every failure rate times each multiplier, from the
    scenario's reliability section as the plan's own goodput is (a goodput the scenario gives is taken as is:
    the candidate table folds it into the need and so carries no reliability of its own)."""
    out = np.empty((len(frame), len(LOG_RATE_GRID)))
    for j, multiplier in enumerate(rate_multipliers()):
        scaled = replace(req, reliability=scaled_reliability(scenario.reliability, float(multiplier)))
        out[:, j] = np.maximum(cand.own_goodput(frame, nodes, scaled, work), 1e-6)
    return out


def scaled_reliability(rel, multiplier: float):
    """The scenario's reliability section with every failure rate (and a given per-node rate) times
    `multiplier`; the software share and the restart and repair times as they are."""
    rates = rel.failure_rates.model_copy(
        update={k: v * multiplier for k, v in rel.failure_rates.model_dump().items() if k != "software_share"}
    )
    given = rel.interruptions_per_1000_node_days
    per_node = None if given is None else given * multiplier
    return rel.model_copy(update={"failure_rates": rates, "interruptions_per_1000_node_days": per_node})
