"""The one price of a configuration, worked by hand: a two-tier and a three-tier fabric, energy, included NICs."""

from __future__ import annotations

import pytest
from support import SERVER, make_catalog

from planner.hardware import costing, fabric
from planner.inputs.scenario import Objective


def coefficients(**over):
    base = dict(endpoints_per_node=8, node_usd=262_000.0, node_w=10_000.0, switch_usd=30_000.0, switch_w=1_300.0)
    base |= dict(endpoint_usd=650.0, endpoint_w=8.0, port_usd=700.0, port_w=9.0, uplink_usd=1_450.0, uplink_w=18.0)
    return base | over


def test_two_tier_fabric_priced_by_hand():
    # 48 nodes x 8 NIC ports = 384 endpoints on 64-port switches, non-blocking: 32 down per leaf -> 12 leaves,
    # 12 x 32 uplinks over 64-port spines need 6, and 8 stripe each leaf's 32 evenly (4 each); 384 uplinks
    size = fabric.size(384, 2, 64, 1, 1.0)
    assert (size.by_tier, size.down_ports, size.uplinks) == ({"leaf": 12, "spine": 8}, 384, 384)
    cost = costing.configuration_cost(coefficients(), 48, size.down_ports, size.total, size.uplinks)
    # 48 x 262,000 + 20 x 30,000 + 384 x 650 (NIC optic + fibre) + 384 x 700 (switch optic) + 384 x 1,450
    assert cost.capex_usd == 12_576_000 + 600_000 + 249_600 + 268_800 + 556_800
    # 48 x 10 kW; 20 x 1,300 + 384 x 8 + 384 x 9 + 384 x 18 W
    assert (cost.node_w, cost.network_w) == (480_000, 26_000 + 3_072 + 3_456 + 6_912)


def test_three_tier_fabric_priced_by_hand():
    # 10 nodes x 4 ports = 40 endpoints on 8-port switches: 4 down per leaf -> 10 leaves; 40 leaf uplinks into
    # aggregation switches with 4 down -> 10; 10 x 4 aggregation uplinks over 8-port cores -> 5; 80 uplinks
    size = fabric.size(40, 3, 8, 1, 1.0)
    assert (size.by_tier, size.uplinks) == ({"leaf": 10, "spine": 10, "core": 5}, 80)
    coef = coefficients(endpoints_per_node=4, node_usd=100_000.0, node_w=5_000.0, switch_usd=5_000.0, switch_w=200.0)
    coef |= dict(endpoint_usd=100.0, endpoint_w=2.0, port_usd=200.0, port_w=3.0, uplink_usd=300.0, uplink_w=6.0)
    cost = costing.configuration_cost(coef, 10, size.down_ports, size.total, size.uplinks)
    assert cost.capex_usd == 1_000_000 + 25 * 5_000 + 40 * 100 + 40 * 200 + 80 * 300
    assert cost.power_w == 50_000 + 25 * 200 + 40 * 2 + 40 * 3 + 80 * 6


def test_energy_and_tco_by_hand():
    objective = Objective(
        kind="tco",
        years=2,
        usd_per_kwh=0.10,
        pue=1.5,
        server_draw_fraction=0.5,
        colocation_usd_per_kw_month=200,
        support_share_of_capex_per_year=0.05,
        staff_fte=1.5,
        staff_usd_per_fte_year=100_000,
    )
    cost = costing.Cost(capex_usd=1e6, power_w=12_000.0, node_w=10_000.0)
    # draw 0.5 x 10 kW + 2 kW = 7 kW over 2 x 8760 h at PUE 1.5 and $0.10/kWh = $18,396
    assert costing.energy_usd(cost, objective) == pytest.approx(18_396)
    # 12 kW nameplate x $200 per kW-month x 24 months; 5% of $1M x 2 years; 1.5 FTE x $100k x 2 years
    lines = costing.tco_lines(cost, objective)
    assert (lines["colocation"], lines["support"], lines["staff"]) == pytest.approx((57_600, 100_000, 300_000))
    assert costing.objective_usd(cost, objective) == pytest.approx(1e6 + 18_396 + 57_600 + 100_000 + 300_000)
    assert costing.objective_usd(cost, objective.model_copy(update={"kind": "capex"})) == 1e6
    # per hour of ownership: energy 7 kW x 1.5 x $0.10 = $1.05; colocation 12 x 200 x 12 / 8760; support
    # 50,000 / 8760; staff 150,000 / 8760
    per_hour = costing.running_usd_per_hour(12.0, 7.0, 1e6, objective)
    assert per_hour == pytest.approx(1.05 + (28_800 + 50_000 + 150_000) / 8760)


def test_default_tco_lines_are_the_sourced_defaults():
    objective = Objective(kind="tco", years=5)
    cost = costing.Cost(capex_usd=10e6, power_w=100_000.0, node_w=90_000.0)
    lines = costing.tco_lines(cost, objective)
    # CBRE H2 2025 $194.95/kW-month x 100 kW x 60 months; 8%/yr support x 5 years; no staff unless named
    assert lines["colocation"] == pytest.approx(194.95 * 100 * 60)
    assert lines["support"] == pytest.approx(0.08 * 10e6 * 5)
    assert lines["staff"] == 0


def test_included_nics_are_not_charged_again():
    nic = dict(sku="N", name="N", vendor="x", speed_gbps=400, ports=1, protocols="ib", price_usd=2_000, power_w=20)
    server = dict(SERVER, included_nic="N", included_nics=4)
    catalog = make_catalog(gpus=[], servers=[server], nics=[nic])
    s, n = catalog.server("S8"), catalog.nic("N")
    assert costing.node_cost(s, n, 4) == (100_000, 5_000)  # all four come with the server
    assert costing.node_cost(s, n, 6) == (100_000 + 2 * 2_000, 5_000 + 2 * 20)
