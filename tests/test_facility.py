"""The facility a plan needs: liquid-cooled rack positions, coolant distribution units sized N+1 on the nodes'
liquid heat, PUE by cooling, and roadmap systems kept out of plans unless named. Expected values are worked by
hand from the rules in docs/plan.md and planner/assumptions/facility.py."""

from __future__ import annotations

import pytest
from support import CAL, SERVER, scenario, tiny

from planner.answers import buy as purchase
from planner.base.errors import InfeasibleError, ScenarioError
from planner.hardware import costing, layout, sizing

CDUS = [
    dict(sku="CDU-20", name="small", vendor="Acme", kind="cdu", capacity_kw=20, price_usd=10_000),
    dict(sku="CDU-200", name="large", vendor="Acme", kind="cdu", capacity_kw=200, price_usd=60_000),
]
WET = dict(SERVER, cooling="hybrid", liquid_fraction=0.8)  # 5 kW, 8 GPUs: 4 kW to liquid per node


def test_cdus_are_n_plus_one_on_the_liquid_heat():
    # 4 kW of liquid per node: 4 nodes = 16 kW -> 1 x 20 kW + 1 spare; 5 nodes = 20 kW -> exactly 1 + 1;
    # 6 nodes = 24 kW -> 2 + 1; no liquid heat, no CDU
    params = {"liquid_w": 4_000.0, "cdu_kw": 20.0}
    assert [int(sizing.cdus(params, n)) for n in (0, 4, 5, 6)] == [0, 2, 2, 3]
    assert int(sizing.cdus({"liquid_w": 0.0, "cdu_kw": 20.0}, 6)) == 0


def test_the_cheaper_cdu_model_is_chosen_for_the_plan_size():
    # 4 nodes (32 GPUs), 16 kW to liquid: 2 x CDU-20 = $20,000 beats 2 x CDU-200 = $120,000
    plan = purchase.run(tiny(servers=[WET], infra=CDUS), scenario(include={"racks": False}), CAL, alternatives=0)
    cdus = [(b.sku, b.quantity, b.extended_usd) for b in plan.bom if b.category == "cdus"]
    assert cdus == [("CDU-20", 2, 20_000)]
    assert plan.cost.by_section["cooling"] == 20_000


def test_without_a_cdu_row_the_plan_says_cooling_is_not_priced():
    plan = purchase.run(tiny(servers=[WET]), scenario(), CAL, alternatives=0)
    assert not [b for b in plan.bom if b.category == "cdus"]
    assert any("coolant distribution units (CDUs) not priced" in note for note in plan.not_priced)


def test_liquid_servers_fill_liquid_rack_positions():
    g = layout.Geometry()  # 40.8 kW air, 155 kW liquid, 48U with 4 reserved
    assert layout.nodes_per_rack(14_000, 4, g) == 2  # an air-cooled 14 kW server: 2 per 40.8 kW
    assert layout.nodes_per_rack(14_000, 4, g, liquid=True) == 11  # liquid: power allows 11, space 11


def test_energy_takes_each_servers_pue_by_cooling():
    """TCO energy = hours x years x $/kWh x (draw fraction x node W x node PUE + network W x air PUE)."""
    objective = scenario(objective={"kind": "tco", "pue": 1.4, "pue_liquid": 1.1, "years": 1}).objective
    cost = costing.configuration_cost({"endpoints_per_node": 0, "node_usd": 0, "node_w": 10_000, "endpoint_usd": 0,
                                       "endpoint_w": 0, "pue": 1.4 + 0.8 * (1.1 - 1.4)}, 2)  # fmt: skip
    hours = 8_760  # planner.base.units.HOURS_PER_YEAR (365 days)
    expected = hours * objective.usd_per_kwh * (objective.server_draw_fraction * 20_000 * 1.16) / 1e3
    assert costing.energy_usd(cost, objective) == pytest.approx(expected, rel=1e-12)
    assert costing.plan_pue(cost, objective) == pytest.approx(1.16)


def test_a_rack_scale_system_above_the_rack_power_names_the_limit():
    rack = dict(SERVER, name="R32", gpus_per_node=32, hosts=4, scale_up_gpus=32, power_w=60_000, racks=1,
                cooling="liquid", max_nics_per_host=2)  # fmt: skip
    with pytest.raises(InfeasibleError, match=r"R32 needs 60.0 kW per rack, above layout.liquid_rack_kw 50 kW"):
        purchase.run(tiny(servers=[rack], infra=CDUS), scenario(layout={"liquid_rack_kw": 50}), CAL)


def test_an_announced_system_is_planned_only_when_named():
    roadmap = dict(SERVER, name="Next8", status="announced")
    catalog = tiny(servers=[roadmap])
    with pytest.raises(ScenarioError, match="only announced .* systems match: 'Next8'; .* name it in constraints"):
        purchase.run(catalog, scenario(), CAL)
    plan = purchase.run(catalog, scenario(constraints={"servers": ["Next8"]}), CAL, alternatives=0)
    assert plan.choice.server == "Next8"
    assert any("announced roadmap system, not orderable" in note for note in plan.why)
