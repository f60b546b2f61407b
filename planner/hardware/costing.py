"""The one price and power of a configuration: nodes (with the NICs their price already includes), NICs,
switches, links, and energy over a horizon. Every formula works alike on numbers, numpy arrays and pulp
expressions, so the candidate table, the MILP's coefficients, inference and the reports share it.

(The brute-force check in tests/reference/buy.py prices from the catalog rows on its own, on purpose: it
checks these prices, not only the structure.)
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.assumptions import hardware as H
from planner.base.units import HOURS_PER_YEAR
from planner.catalog.rows import NicRow, ServerRow


def extra_nics(server: ServerRow, nic: NicRow | None, nics: int) -> int:
    """The NICs of a node its server's price does not include (bought beside it)."""
    return 0 if nic is None else max(0, nics - server.included_count(nic))


def node_cost(server: ServerRow, nic: NicRow | None, nics: int) -> tuple[float, float]:
    """(USD, nameplate W) of one node: the server plus the NICs its price does not include."""
    if nic is None:
        return server.price_usd, server.power_w
    extra = extra_nics(server, nic, nics)
    return server.price_usd + extra * nic.price_usd, server.power_w + extra * nic.power_w


@dataclass(frozen=True)
class Cost:
    """capex and nameplate power of a configuration, with the nodes' share of the power and that share
    weighted by the nodes' PUE (pue x node_w: a liquid-cooled node's energy carries a lower facility overhead;
    None: at objective.pue, like the network)."""

    capex_usd: object
    power_w: object
    node_w: object
    pue_node_w: object = None

    @property
    def network_w(self):
        return self.power_w - self.node_w


def configuration_cost(coef, nodes, down_ports=0, switches=0, uplinks=0, **more) -> Cost:
    """capex and power from the per-unit coefficients of a candidate and its quantities: node_usd/_w per
    node, endpoint_usd/_w per NIC port (endpoints_per_node x nodes), and for every other quantity q of
    sizing.PRICED (switch down-ports, cages, switches, uplinks, racks, storage, management, subnet managers)
    coef[f"{prefix}_usd"] x q (a missing coefficient is 0); and the spares of sizing.SPARES, each at the price
    of one unit of what it spares and no power. `coef` is a mapping of numbers or of arrays;
    quantities may be numbers, arrays or pulp expressions (the MILP's objective is this very formula)."""
    from planner.hardware.sizing import PRICED, SPARES

    quantities = {"down_ports": down_ports, "switches": switches, "uplinks": uplinks, **more}
    endpoints = coef["endpoints_per_node"] * nodes
    capex = coef["node_usd"] * nodes + coef["endpoint_usd"] * endpoints
    node_w = coef["node_w"] * nodes
    network_w = coef["endpoint_w"] * endpoints
    for name, quantity in quantities.items():
        if name in SPARES:  # on the shelf: priced as one unit of what it spares, drawing nothing
            capex = capex + coef.get(f"{SPARES[name]}_usd", 0.0) * quantity
            continue
        prefix = PRICED[name]
        if f"{prefix}_usd" in coef:
            capex = capex + coef[f"{prefix}_usd"] * quantity
            network_w = network_w + coef[f"{prefix}_w"] * quantity
    pue = coef.get("pue")
    return Cost(capex, node_w + network_w, node_w, None if pue is None else pue * node_w)


def priced_quantities(q: dict) -> dict:
    """The keyword arguments configuration_cost takes, from a sizing.quantities result."""
    from planner.hardware.sizing import PRICED, SPARES

    return {name: q[name] for name in (*PRICED, *SPARES) if name in q}


# ---------------------------------------------------------------- price uncertainty


# How far a price may be off, by the confidence its catalog row states: a quote or list price ("solid") to
# within 5%, a street price or approximate list ("medium") 15%, a developer or single undated figure ("low")
# 30%, a derived estimate 40%. The planner's own convention (docs/plan.md section 3, Ties), used to call two plans
# a tie when their price difference is within the uncertainty of the parts they do not share.
def price_uncertainty(confidence: str | None) -> float:
    """How far a catalog price may be off, by its row's confidence (an unknown one: as an estimate)."""
    return H.PRICE_UNCERTAINTY.get(confidence or "", H.PRICE_UNCERTAINTY["estimate"]).value


def difference_uncertainty_usd(lines_a, lines_b) -> float:
    """Uncertainty of capex(a) - capex(b) from the BOM lines: per SKU, the extended difference times that
    SKU's uncertainty (lines they share at equal quantity cancel)."""
    totals: dict[str, list] = {}
    for sign, lines in ((1.0, lines_a), (-1.0, lines_b)):
        for line in lines:
            entry = totals.setdefault(line.sku, [0.0, price_uncertainty(line.confidence)])
            entry[0] += sign * line.extended_usd
    return sum(abs(diff) * share for diff, share in totals.values())


# ---------------------------------------------------------------- energy


def usd_per_watt_drawn(objective) -> float:
    """Energy cost of one watt of air-cooled IT draw over the horizon: hours x years x PUE x $/kWh / 1000."""
    return HOURS_PER_YEAR * objective.years * objective.pue * objective.usd_per_kwh / 1e3


def draw_w(node_w, network_w, objective):
    """Expected training draw: servers at server_draw_fraction of nameplate, the network at nameplate."""
    return objective.server_draw_fraction * node_w + network_w


def facility_draw_w(cost: Cost, objective):
    """The facility power behind the training draw: the nodes' draw at their PUE (by cooling), the network's
    (air-cooled switches) at objective.pue."""
    pue_node_w = cost.pue_node_w if cost.pue_node_w is not None else objective.pue * cost.node_w
    return objective.server_draw_fraction * pue_node_w + objective.pue * cost.network_w


def plan_pue(cost: Cost, objective) -> float:
    """The configuration's effective PUE: facility draw / IT draw."""
    draw = float(draw_w(cost.node_w, cost.network_w, objective))
    return float(facility_draw_w(cost, objective)) / draw if draw > 0 else float(objective.pue)


def energy_usd(cost: Cost, objective):
    return facility_draw_w(cost, objective) * HOURS_PER_YEAR * objective.years * objective.usd_per_kwh / 1e3


def energy_usd_per_hour(draw_kw: float, objective, pue: float | None = None) -> float:
    """Energy per hour of an IT draw at a PUE (default: objective.pue)."""
    return draw_kw * (objective.pue if pue is None else pue) * objective.usd_per_kwh


# ---------------------------------------------------------------- running the cluster (TCO beyond energy)


def colocation_usd(power_w, objective):
    """Space, cooling and power delivery over the horizon, per kW of nameplate IT power: a colocation
    contract reserves the capacity the cluster can draw, not its average draw."""
    return power_w / 1e3 * objective.colocation_usd_per_kw_month * 12 * objective.years


def support_usd(capex_usd, objective):
    """Hardware support contracts over the horizon, as a yearly share of capex."""
    return capex_usd * objective.support_share_of_capex_per_year * objective.years


def staff_usd(objective) -> float:
    """Operations staff charged to the cluster over the horizon (0 unless the scenario names FTEs)."""
    return objective.staff_fte * objective.staff_usd_per_fte_year * objective.years


def tco_lines(cost: Cost, objective) -> dict[str, object]:
    """The total cost of ownership, line by line: capex, energy, colocation, support, staff."""
    return {
        "capex": cost.capex_usd,
        "energy": energy_usd(cost, objective),
        "colocation": colocation_usd(cost.power_w, objective),
        "support": support_usd(cost.capex_usd, objective),
        "staff": staff_usd(objective),
    }


def tco_usd(cost: Cost, objective):
    lines = tco_lines(cost, objective)
    return lines["capex"] + lines["energy"] + lines["colocation"] + lines["support"] + lines["staff"]


def running_usd_per_hour(
    power_kw: float, draw_kw: float, capex_usd: float, objective, pue: float | None = None
) -> float:
    """What owning the cluster costs per hour beyond its purchase: energy, colocation, support, staff (the
    purchase side of buy-vs-rent, like with like against a rental's all-in hourly rate)."""
    per_hour = energy_usd_per_hour(draw_kw, objective, pue)
    per_hour += power_kw * objective.colocation_usd_per_kw_month * 12 / HOURS_PER_YEAR
    per_hour += capex_usd * objective.support_share_of_capex_per_year / HOURS_PER_YEAR
    return per_hour + objective.staff_fte * objective.staff_usd_per_fte_year / HOURS_PER_YEAR


# Objectives that rank configurations by what they train, not by their price alone: TCO per trained token, and
# the most tokens/s (or the fewest days) within the budget and power caps. Each prices a configuration at one
# node count (planner.tables.buy.score), and the money beside it is money_kind's.
OUTPUT_KINDS = ("cost-per-token", "throughput", "days")


def money_kind(kind: str) -> str:
    """The money an objective reports and compares plans by: TCO for tco and cost-per-token (a token's price is
    its share of the TCO), capex otherwise."""
    return "tco" if kind in ("tco", "cost-per-token") else "capex"


def objective_usd(cost: Cost, objective):
    """What the purchase minimises, in money: capex, or the total cost of ownership over the horizon
    (tco_lines); the output objectives' money (money_kind)."""
    return tco_usd(cost, objective) if money_kind(objective.kind) == "tco" else cost.capex_usd


# ---------------------------------------------------------------- renting
