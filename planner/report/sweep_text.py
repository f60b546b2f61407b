"""Terminal report of a Sweep: the answer in sentences, the chosen purchase's distributions, the table of
purchases by how often each is the cheapest and by regret (or, for a fleet, the policies across futures)."""

from __future__ import annotations

from planner.base.text import visible
from planner.base.units import format_usd
from planner.report.terminal import format_table
from planner.results import Distribution, Sweep

SHOWN = 12  # purchases in the table: those most often cheapest, then the chosen and the point plan


def render(s: Sweep) -> str:
    what = "futures" if s.kind == "fleet" else "draws"
    out = [
        f"Sweep: {visible(s.scenario)} ({s.draws:,} {what}, seed {s.seed}, {s.engine}; {s.seconds:.1f} s)",
    ]
    if s.kind != "fleet":
        out.append(f"  objective  {_objective(s)}")
        out.append(f"  late cost  {format_usd(s.late_usd_per_day or 0)} a day ({s.late_basis})")
        out.append(f"  compared   {s.compared}")
    out.append("")
    out += [f"  {visible(line)}" for line in s.risk]
    out.append("")
    if s.kind == "fleet":
        return "\n".join(out + _policies(s)) + "\n"
    out += _distributions(f"The chosen {s.noun}" if s.chosen != s.point else "The point plan", s.distributions)
    out += _purchases(s)
    out.append(
        "Assumptions: " + "; ".join(f"{a['name']} {a['value']}" for a in s.assumptions if a["value"] is not None)
    )
    return "\n".join(out) + "\n"


def _objective(s: Sweep) -> str:
    if s.objective == "expected-cost":
        return f"expected-cost: the least expected cost that meets the deadline in at least {s.p_deadline:.0%} of draws"
    if s.objective == "regret":
        return (
            f"regret: the least mean regret over each {s.noun}'s worst 10% of draws, among those that meet the "
            f"deadline in at least {s.p_deadline:.0%}"
        )
    return "point: the point plan (planner plan's), its risk measured"


def _distributions(title: str, dists: list[Distribution]) -> list[str]:
    rows = []
    for d in dists:
        money = d.unit.startswith("USD")
        show = (lambda v: format_usd(v)) if money else (lambda v: f"{v:,.1f}")
        rows.append(
            {
                "quantity": f"{d.name} ({d.unit})",
                "p10": show(d.p10),
                "p50": show(d.p50),
                "mean": show(d.mean),
                "p90": show(d.p90),
            }
        )
    return [title + ":", format_table(rows, ["quantity", "p10", "p50", "mean", "p90"], max_width=60), ""]


def _purchases(s: Sweep) -> list[str]:
    shown = s.with_point_and_chosen(list(s.choices[:SHOWN]))
    rows = [
        {
            "purchase": ("* " if c.label == (s.chosen.label if s.chosen else "") else "  ") + c.label,
            "P(cheapest)": f"{c.p_optimal:.1%}",
            "P(deadline)": f"{c.p_deadline_met:.1%}",
            "expected total": format_usd(c.expected_total_usd),
            "regret": format_usd(c.expected_regret_usd),
            "worst 10% regret": format_usd(c.worst_decile_regret_usd),
            "days p90": f"{c.days_p90:.1f}",
        }
        for c in shown
    ]
    columns = ["purchase", "P(cheapest)", "P(deadline)", "expected total", "regret", "worst 10% regret", "days p90"]
    return [
        f"{s.noun.capitalize()}s by how often each is the cheapest (of {len(s.choices)}; * the recommended):",
        format_table(rows, columns, max_width=90, wrap=["purchase"]),
        "",
    ]


def _policies(s: Sweep) -> list[str]:
    rows = [
        {
            "policy": p.policy,
            "P(cheaper)": f"{p.p_cheaper:.0%}",
            "expected": format_usd(p.expected_cost_usd),
            "p10": format_usd(p.cost_p10_usd),
            "p50": format_usd(p.cost_p50_usd),
            "p90": format_usd(p.cost_p90_usd),
            "worst": format_usd(p.worst_cost_usd),
            "regret": format_usd(p.expected_regret_usd),
        }
        for p in s.policies
    ]
    columns = ["policy", "P(cheaper)", "expected", "p10", "p50", "p90", "worst", "regret"]
    out = [
        "First purchase across futures (discounted fleet cost, lateness penalties counted):",
        format_table(rows, columns),
        "",
    ]
    for p in s.policies:
        if p.purchases:
            bought = "; ".join(f"{b.get('units')} x {b.get('server')} in {b.get('period')}" for b in p.purchases)
            out.append(f"  {p.policy}: {visible(bought)}")
    return out
