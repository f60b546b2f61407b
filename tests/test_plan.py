"""`planner plan`: exact optima on tiny catalogs, agreement with brute force, infeasibility explanations."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from reference import buy as bruteforce
from support import CAL, NICS, SERVER, SWITCHES, Draw, scenario, tiny

from planner.answers import buy as purchase
from planner.base.errors import InfeasibleError, ScenarioError
from planner.inputs.scenario import Scenario
from planner.model import workload
from planner.optimize import buy
from planner.tables import buy as candidates

# ---------------------------------------------------------------- exact optima, by hand


def test_tiny_catalog_exact_optimum():
    # 4 nodes x $100,000; one N100 per node ($1,000); RoCE: one 4-port SW-B ($2,000), 4 DAC100 ($50):
    # 406,200. IB would need the $10,000 SW-A: 414,240.
    plan = purchase.run(tiny(), scenario(), CAL)
    assert plan.cost.capex_usd == 406_200
    assert (plan.choice.nodes, plan.choice.nic, plan.choice.nics_per_node, plan.choice.fabric, plan.choice.switch) == (
        4,
        "N100",
        1,
        "roce",
        "SW-B",
    )
    assert {(b.sku, b.quantity, b.extended_usd) for b in plan.bom} == {
        ("S8", 4, 400_000),
        ("N100", 4, 4_000),
        ("SW-B", 1, 2_000),
        ("DAC100", 4, 200),
    }
    assert sum(b.extended_usd for b in plan.bom) == plan.cost.capex_usd
    ib = next(s for s in plan.per_fabric if s.choice.fabric == "ib")
    # IB: 4 N100 endpoints broken out 2 per 200G port -> 2 ports, one switch, 2 splitter cables ($240)
    assert ib.cost.capex_usd == 400_000 + 4_000 + 10_000 + 240
    assert ib.delta_usd == 414_240 - 406_200


def test_spares_by_hand():
    """The tiny optimum with spares: 4 nodes, 4 DAC100 node links on one SW-B. 30% spare nodes: 1.2 to the
    nearest = 1 node (S8 $100,000 + its N100 $1,000, no power); 30% spare links: ceil(1.2) = 2 DAC100 ($100);
    one spare switch per model: 1 SW-B ($2,000). 406,200 + 101,000 + 100 + 2,000 = 509,300."""
    spares = {"node_share": 0.3, "link_share": 0.3, "switches_per_model": 1}
    plan = purchase.run(tiny(), scenario(spares=spares), CAL)
    assert (plan.choice.nodes, plan.choice.fabric, plan.choice.switch) == (4, "roce", "SW-B")
    assert plan.cost.capex_usd == 509_300 and sum(b.extended_usd for b in plan.bom) == plan.cost.capex_usd
    spared = {(b.sku, b.quantity) for b in plan.bom if b.section == "spares"}
    assert spared == {("S8", 1), ("N100", 1), ("DAC100", 2), ("SW-B", 1)}
    assert plan.cost.power_kw == purchase.run(tiny(), scenario(), CAL).cost.power_kw  # on the shelf


def test_fabric_restriction_and_alternatives():
    plan = purchase.run(tiny(), scenario(constraints__fabrics=["ib"]), CAL, alternatives=2)
    assert plan.choice.fabric == "ib" and plan.cost.capex_usd == 414_240
    costs = [a.cost.capex_usd for a in plan.alternatives]
    assert costs == sorted(costs) and all(c >= plan.cost.capex_usd for c in costs)
    keys = {(a.choice.nic, a.choice.nics_per_node, a.choice.switch) for a in plan.alternatives}
    assert ("N100", 1, "SW-A") not in keys  # alternatives are distinct configurations


def test_tco_counts_energy_colocation_support_and_staff():
    objective = {"kind": "tco", "years": 1, "usd_per_kwh": 0.1, "pue": 1.0, "server_draw_fraction": 1.0}
    objective |= {"colocation_usd_per_kw_month": 100, "support_share_of_capex_per_year": 0.1, "staff_fte": 0.5}
    plan = purchase.run(tiny(), scenario(objective=objective), CAL)
    c = plan.cost
    # nameplate: 4 x 5,000 W servers + 4 x 10 W NICs + 50 W switch (DACs 0 W) = 20,090 W, one year at $0.1/kWh
    assert c.energy_usd == pytest.approx(20.09 * 8760 * 0.1)
    assert c.colocation_usd == pytest.approx(20.09 * 100 * 12)  # nameplate kW x $/kW-month x 12 months
    assert c.support_usd == pytest.approx(0.1 * c.capex_usd)
    assert c.staff_usd == pytest.approx(0.5 * 96_800)  # BLS median salary, the default
    assert c.tco_usd == pytest.approx(c.capex_usd + c.energy_usd + c.colocation_usd + c.support_usd + c.staff_usd)
    assert c.objective_usd == pytest.approx(c.tco_usd) and c.years == 1


def test_global_batch_couples_micro_batch_and_scale():
    sc = scenario(
        workload={"params": "1B", "seq_len": 1024, "micro_batches": [1, 2, 4], "global_batch": 64},
        requirement={"min_tokens_per_s": 1},
        target_tflops=1,
    )
    plan = purchase.run(tiny(), sc, CAL)
    c = plan.choice
    assert c.micro_batch * c.gpus * c.grad_accum == 64


def test_deadline_sets_node_count():
    sc = scenario(requirement={"tokens": "20B", "days": 1})
    plan = purchase.run(tiny(), sc, CAL)
    assert plan.metrics.training_days <= 1.0
    key = {**workload.gpu_columns(tiny(), "T1"), "gpus_per_node": 8, "scale_up_gpus": 8, "micro_batch": 1}
    key |= {"scale_up_gb_per_s": 300, "gpus_per_host": 8}
    key |= {"host_gbps": 16 * 32 * 128 / 130, "host_dram_gb_per_s": float("nan")}  # the server's PCIe 5.0 slot
    key |= {"node_gbps_eff": plan.choice.node_gbps, "fabric": plan.choice.fabric}
    work = workload.scenario_training(tiny(), sc)
    fewer = candidates.evaluate_at(pd.DataFrame([key]), [plan.choice.nodes - 1], work, CAL)
    assert 20e9 / fewer["tokens_per_s"][0] / 86400 > 1.0  # one node fewer misses the deadline


# ---------------------------------------------------------------- infeasible: explained


def test_unreachable_target_names_the_best_and_the_limit():
    with pytest.raises(InfeasibleError) as info:
        purchase.run(tiny(), scenario(target_tflops=60), CAL)
    text = str(info.value)
    assert "target 60 TFLOPs/GPU is unreachable" in text and "the highest where the model fits is" in text
    assert "limited by" in text


def test_memory_needs_more_gpus():
    with pytest.raises(InfeasibleError, match=r"does not fit in GPU memory.*needs at least \d+ GPUs"):
        purchase.run(tiny(), scenario(workload={"params": "200B", "seq_len": 1024, "micro_batches": [1]}), CAL)


def test_budget_says_what_would_suffice():
    with pytest.raises(InfeasibleError, match=r"a budget of \$406,200 would suffice"):
        purchase.run(tiny(), scenario(constraints__budget_usd=400_000), CAL)


def test_power_cap_says_what_is_needed():
    with pytest.raises(
        InfeasibleError, match=r"power cap 10 kW is too low: the least power-hungry plan needs 20\.1 kW"
    ):
        purchase.run(tiny(), scenario(constraints__power_kw=10), CAL)


def test_deadline_out_of_reach():
    with pytest.raises(InfeasibleError, match="throughput requirement .* is out of reach"):
        purchase.run(tiny(), scenario(requirement={"tokens": "100T", "days": 1}, constraints__max_nodes=16), CAL)


def test_scenario_errors_are_clear():
    with pytest.raises(Exception, match="exactly one requirement"):
        scenario(requirement={"gpus": 8, "min_tokens_per_s": 5})
    with pytest.raises(ScenarioError, match="no server in the catalog matches"):
        purchase.run(tiny(), scenario(constraints__gpus_per_node=[16]), CAL)


# ---------------------------------------------------------------- the MILP equals brute force


def random_catalog(r: Draw, cool: Draw | None = None):
    """A random catalog; `cool` (a draw of its own, so the seeded problems stay what they were) makes the
    first server liquid or hybrid cooled half the time, with one or two CDU models to cool it."""
    speeds = [100.0, 200.0, 400.0]
    servers = [
        dict(
            SERVER,
            name=f"S{i}",
            gpus_per_node=r.pick([4, 8]),
            price_usd=r.int(50, 200) * 1000,
            power_w=r.int(2, 10) * 1000,
            max_nics_per_host=r.int(1, 3),
            pcie_gen=r.pick([3, 4, 5]),
            rack_units=r.pick([None, 4, 8]),
            **r.pick(
                [
                    {},
                    {"storage_nic": "N0", "storage_nics": 2},
                    {"storage_nic": "N0", "storage_nics": 1, "storage_nics_included": True},
                ]
            ),
        )
        for i in range(r.int(1, 2))
    ]
    nics = [
        dict(
            sku=f"N{i}",
            name=f"N{i}",
            vendor="Acme",
            speed_gbps=r.pick(speeds),
            ports=r.pick([1, 2]),
            protocols=r.pick(["ib", "roce", "both"]),
            price_usd=r.int(5, 40) * 100,
            power_w=r.int(5, 30),
        )
        for i in range(r.int(1, 3))
    ]
    switches = [
        dict(
            sku=f"W{i}",
            name=f"W{i}",
            vendor="Acme",
            fabric=r.pick(["ib", "roce"]),
            ports=r.pick([4, 8, 16]),
            port_gbps=r.pick(speeds),
            max_breakout=r.pick([1, 2, 4]),
            price_usd=r.int(2, 40) * 1000,
            power_w=r.int(50, 500),
            managed=r.pick([None, True, False]),
        )
        for i in range(r.int(1, 3))
    ]
    if r.flag():  # management switches: in-band at 100G, out-of-band 48 x 1G
        switches += [
            dict(
                sku="IB-MGMT",
                name="m",
                vendor="Acme",
                fabric="roce",
                ports=16,
                port_gbps=100,
                uses="inband",
                price_usd=5000,
                power_w=200,
            ),
            dict(
                sku="OOB",
                name="o",
                vendor="Acme",
                fabric="roce",
                ports=8,
                port_gbps=1,
                uses="oob",
                price_usd=900,
                power_w=40,
            ),
        ]
    optics = []
    for gbps in speeds:
        optics += [
            dict(
                sku=f"D{gbps:g}",
                name="d",
                kind="dac",
                fabric="any",
                gbps=gbps,
                reach_m=3,
                price_usd=r.int(20, 400),
                power_w=0,
            ),
            dict(
                sku=f"S{gbps:g}",
                name="s",
                kind="dac",
                fabric="any",
                gbps=gbps,
                breakout=2,
                reach_m=3,
                price_usd=r.int(20, 400),
                power_w=0,
            ),
            dict(
                sku=f"T{gbps:g}",
                name="t",
                kind="transceiver",
                fabric="any",
                gbps=gbps,
                reach_m=100,
                price_usd=r.int(50, 900),
                power_w=r.int(1, 9),
            ),
            dict(
                sku=f"F{gbps:g}",
                name="f",
                kind="fiber",
                fabric="any",
                gbps=gbps,
                reach_m=50,
                price_usd=r.int(5, 90),
                power_w=0,
            ),
            dict(
                sku=f"A{gbps:g}",
                name="a",
                kind="aoc",
                fabric="any",
                gbps=gbps,
                reach_m=30,
                lengths=f"5:A{gbps:g}-5M;30:A{gbps:g}-30M",
                price_usd=r.int(100, 900),
                power_w=r.int(0, 5),
            ),
        ]
    infra = [
        dict(sku="RACK", name="r", vendor="Acme", kind="rack", rack_units=42, price_usd=r.int(500, 3000)),
        dict(sku="PDU", name="p", vendor="Acme", kind="pdu", capacity_kw=r.pick([11, 22]), price_usd=900),
        dict(sku="SM", name="s", vendor="Acme", kind="subnet-manager", rack_units=1, price_usd=7000, power_w=300),
    ]
    infra = infra if r.flag() else []
    if cool is not None and cool.flag():
        kind = cool.pick(["liquid", "hybrid"])
        share = {"liquid_fraction": round(cool.real(0.5, 0.95), 2)} if kind == "hybrid" else {}
        servers[0] = {**servers[0], "cooling": kind, **share}
        cdus = [
            dict(sku="CDU-S", name="c", vendor="Acme", kind="cdu", capacity_kw=cool.pick([8, 20]),
                 price_usd=cool.int(2, 20) * 1000),
            dict(sku="CDU-L", name="c", vendor="Acme", kind="cdu", capacity_kw=cool.pick([50, 150]),
                 price_usd=cool.int(20, 90) * 1000, power_w=cool.int(0, 500)),
        ]  # fmt: skip
        infra = infra + cdus[: cool.int(1, 2)]
    return tiny(servers=servers, nics=nics, switches=switches, optics=optics, infra=infra)


def problem(seed: int):
    r, cool = Draw(seed), Draw(seed + 1_000_003)
    catalog = random_catalog(r, cool)
    requirement = r.pick(["gpus", "deadline", "rate"])
    req = (
        {"gpus": r.pick([8, 16, 32, 64])}
        if requirement == "gpus"
        else {"tokens": f"{r.int(1, 12)}B", "days": 1}
        if requirement == "deadline"
        else {"min_tokens_per_s": r.int(5_000, 150_000)}
    )
    sc = Scenario.model_validate(
        {
            "workload": {
                "params": r.pick(["1B", "3B", "7B"]),
                "seq_len": 1024,
                "micro_batches": r.subset([1, 2, 4], 1, 2),
                "global_batch": r.pick([None, 64, 256]),
            },
            "requirement": req,
            "target_tflops": r.pick([5, 15, 25]),
            "objective": {"kind": r.pick(["capex", "tco"])},
            "constraints": {
                "max_nodes": 32,
                "oversubscription": r.pick([[1.0], [1.0, 2.0]]),
                "budget_usd": r.pick([None, 2e6, 8e6]),
                "power_kw": r.pick([None, 100, 400]),
                "topologies": r.pick([None, ["rail"], ["rail", "leaf-spine"]]),
            },
            "layout": {
                "rack_kw": r.pick([12, 40.8]),
                "racks_per_row": r.pick([2, 8]),
                "leaf_placement": r.pick(["auto", "end-of-row", "top-of-rack"]),
            },
            "include": {name: r.flag() for name in ("storage_network", "inband_network", "racks")},
        }
    )
    liquid = {"layout": {**sc.layout.model_dump(), "liquid_rack_kw": cool.pick([30, 80, 155])}}
    liquid["objective"] = {**sc.objective.model_dump(), "pue_liquid": cool.pick([1.1, 1.25])}
    spare = Draw(seed + 2_000_003)  # drawn apart, so that the other draws stay as they were
    spares = {"node_share": spare.pick([0.0, 0.05, 0.5]), "link_share": spare.pick([0.0, 0.02, 0.3])}
    liquid["spares"] = spares | {"switches_per_model": spare.pick([0, 1, 2])}
    return catalog, Scenario.model_validate({**sc.model_dump(exclude_none=True), **liquid})


def _agree(seed: int) -> bool:
    """The MILP, the priced table and `plan` against the enumeration of every design, micro-batch and node
    count (tests/reference/buy.py); True when a plan exists and they all found its price, False when none
    exists and they all say so."""
    catalog, sc = problem(seed)
    # a deadline is planned at the goodput of the plan's own size: the table and the brute force see the same
    sized, table = purchase.sized_candidates(catalog, sc, CAL)
    reference = bruteforce.best(catalog, candidates.part_designs(catalog, sized), sized, CAL)
    found = buy.optimize(table.frame, sized)
    if reference is None:
        assert found is None and table.feasible.empty, f"seed {seed}"
        with pytest.raises(InfeasibleError):
            purchase.run(catalog, sc, CAL, alternatives=0)
        return False
    assert found is not None, f"seed {seed}: the enumeration found {reference[0]:,.2f}"
    assert found.result.objective == pytest.approx(reference[0], rel=1e-9), f"seed {seed}"
    assert table.feasible.iloc[0]["objective_usd"] == pytest.approx(reference[0], rel=1e-9)  # the priced table
    plan = purchase.run(catalog, sc, CAL, alternatives=1)  # with bounding presolve
    assert plan.cost.objective_usd == pytest.approx(reference[0], rel=1e-9), f"seed {seed}"
    assert sum(b.extended_usd for b in plan.bom) == pytest.approx(plan.cost.capex_usd)
    return True


# The seeded problems are fixed: 4 of the first 10 and 13 of the next 40 have a plan (the rest are infeasible for
# a reason the test checks too; seeds 20 and 38 need all 32 nodes on InfiniBand leaves that have no room left
# for the UFM's slot). A generator or model that drifts to infeasible cases fails the floors.
def test_milp_matches_brute_force_on_a_few_catalogs():
    compared = [_agree(seed) for seed in range(10)]
    assert sum(compared) >= 4, compared


@pytest.mark.slow
def test_milp_matches_brute_force():
    compared = [_agree(seed) for seed in range(10, 50)]
    assert sum(compared) >= 13, compared


@pytest.mark.parametrize(
    ("over", "message"),
    [
        (
            {"target_tflops": None, "workload": {"params": "2T", "seq_len": 1024, "micro_batches": [1]}},
            r"does not fit in GPU memory within the allowed node counts: it needs at least \d+ GPUs",
        ),
        ({"workload": {"params": "1B", "seq_len": 1024, "micro_batches": [4096]}}, "does not fit at any GPU count"),
        ({"requirement": {"gpus": 64}, "constraints__max_nodes": 4}, "64 GPUs is not a whole number of nodes"),
        ({"cabling": {"node_leaf_reach_m": 5000}}, "no switch, optic or cable in the catalog connects these NICs"),
    ],
)
def test_infeasible_reasons_name_the_real_cause(over, message):
    with pytest.raises(InfeasibleError, match=message):
        purchase.run(tiny(), scenario(**over), CAL)


def test_scenario_with_params_needs_seq_len():
    with pytest.raises(ScenarioError, match="workload.seq_len is required"):
        purchase.run(tiny(), scenario(workload={"params": "1B"}), CAL)


def test_dearer_twin_parts_change_nothing_but_the_search():
    """Re-sellers' dearer offers of the same NIC and switch (identical but for SKU, vendor and price) may
    not change the plan: the same optimum, objective and bill of materials as without them (the designer
    drops them before the search, design.undominated; this checks that dropping them is exact)."""
    twins_nics = [dict(n, sku=f"{n['sku']}-R{i}", vendor=f"Reseller {i}", price_usd=n["price_usd"] + 100 * i)
                  for n in NICS for i in (1, 2)]  # fmt: skip
    twins_switches = [dict(s, sku=f"{s['sku']}-R{i}", vendor=f"Reseller {i}", price_usd=s["price_usd"] + 100 * i)
                      for s in SWITCHES for i in (1, 2)]  # fmt: skip
    plain = purchase.run(tiny(), scenario(), CAL, alternatives=0)
    twins = purchase.run(tiny(nics=NICS + twins_nics, switches=SWITCHES + twins_switches), scenario(), CAL,
                         alternatives=0)  # fmt: skip
    assert twins.cost.objective_usd == pytest.approx(plain.cost.objective_usd, rel=1e-12)
    assert [(b.sku, b.quantity) for b in twins.bom] == [(b.sku, b.quantity) for b in plain.bom]


def test_speed_bound_is_the_smallest_node_count_fast_enough():
    compared = [_speed_bound_agrees(seed, (None, 0.9)[seed % 2]) for seed in range(60)]
    assert sum(compared) >= 32, compared  # the 34 problems with a throughput requirement, each compared


def _speed_bound_agrees(seed: int, confidence: float | None) -> bool:
    """The deadline's node bound: exhaustive evaluation of every node count of every performance key must find
    the same smallest count as the search (which assumes cluster throughput at its goodput never falls with N).
    False: no throughput requirement."""
    catalog, sc = problem(seed)
    sc = sc.model_copy(update={"confidence": confidence})
    req = workload.Requirements.of(sc)
    if req.tokens_per_s is None:
        return False
    parts = candidates.part_designs(catalog, sc)
    keys = candidates._performance_keys(parts.single, parts.configs, sc)
    work = workload.scenario_training(catalog, sc)
    single = keys["single"].to_numpy()
    lo, hi = np.where(single, 1, 2), np.where(single, 1, sc.constraints.max_nodes)
    found = candidates._speed_bound(keys, lo, hi, req, work, CAL)
    counts = np.arange(1, sc.constraints.max_nodes + 1)
    at = np.repeat(np.arange(len(keys)), len(counts))
    every = candidates.evaluate_at(keys.iloc[at], np.tile(counts, len(keys)), work, CAL, req.confidence)
    fast = workload.fast_enough(every, req, candidates.goodput_at(every, req, work)).reshape(len(keys), -1)
    fast &= (counts >= lo[:, None]) & (counts <= hi[:, None])
    expected = np.where(fast.any(axis=1), counts[fast.argmax(axis=1)], hi + 1)
    bad = found != expected
    assert not bad.any(), (seed, found[bad], expected[bad], lo[bad], hi[bad])
    return True


def test_gallop_finds_the_smallest_count_a_monotone_test_passes(monkeypatch):
    """_gallop (the goodput passes' search) against brute force on every threshold shape: the answer at lo, at hi,
    beyond hi (none: hi + 1), an empty range (lo > hi: hi + 1), and a few nodes or far above lo."""
    rng = np.random.default_rng(7)
    lo = rng.integers(1, 50, 400)
    hi = lo + rng.integers(-3, 600, 400)
    threshold = lo + np.concatenate([rng.integers(-5, 8, 200), rng.integers(0, 700, 200)])
    monkeypatch.setattr(candidates, "evaluate_at", lambda keys, nodes, *a: {"nodes": np.asarray(nodes)})
    keys = pd.DataFrame({c: np.zeros(len(lo)) for c in candidates.KEY})
    seen = []
    test = lambda ev, rows: (seen.append(rows), ev["nodes"] >= threshold[rows])[1]  # noqa: E731
    found = candidates._gallop(keys, lo, hi, test, None, CAL)
    expected = np.array(
        [next((n for n in range(a, b + 1) if n >= t), b + 1) for a, b, t in zip(lo, hi, threshold, strict=True)]
    )
    assert (found == expected).all()
    near = np.flatnonzero((threshold - lo <= 3) & (hi - lo > 100))  # near lo: a handful of evaluations each
    assert max(sum(int(np.isin(i, r)) for r in seen) for i in near) <= 5


def test_delivery_is_the_last_part_to_arrive():
    """A catalog row's own lead time overrides its family's; the plan is delivered when its slowest part
    arrives (60 weeks after 2026-12-01 = 2028-01-25), and a 1-day deadline counted from then ends a day
    later. Without it, the tiny catalog's parts take their families' weeks (planner.assumptions LEAD_WEEKS)."""
    from planner.assumptions import hardware as H

    slow = tiny(servers=[dict(SERVER, lead_weeks=60)])
    plan = purchase.run(slow, scenario(as_of="2026-12-01", requirement={"tokens": "1B", "days": 1}), CAL)
    d = plan.delivery
    assert (d.last_sku, d.lead_weeks, d.delivered_by, d.deadline_ends) == ("S8", 60, "2028-01-25", "2028-01-26")
    assert d.basis.endswith(":2") and "servers" in d.basis  # the catalog row's own figure
    plain = purchase.run(tiny(), scenario(as_of="2026-12-01"), CAL)
    weeks = {b.sku: b.lead_weeks for b in plain.bom}
    assert plain.delivery.lead_weeks == max(weeks.values()) and plain.delivery.deadline_ends is None
    assert weeks["SW-B"] == H.LEAD_WEEKS["ethernet-switch"].value and weeks["N100"] == H.LEAD_WEEKS["nic"].value


def test_installation_labour_by_hand():
    """The tiny optimum installed: 4 servers x 3 h, 4 node links (NIC ports) x 0.2 h, 1 switch x 1.5 h, and the
    out-of-band ports: none (the tiny catalog has no out-of-band switch); (12 + 0.8 + 1.5) x 1.2 = 17.16 h at
    $120/h = $2,059.20, one line citing its assumptions, on top of the parts' 406,200."""
    plan = purchase.run(tiny(), scenario(include={"installation": True}), CAL)
    labour = [b for b in plan.bom if b.section == "installation"]
    assert len(labour) == 1 and labour[0].extended_usd == pytest.approx(17.16 * 120)
    assert labour[0].source.startswith("planner/assumptions/facility.py")
    assert plan.cost.capex_usd == pytest.approx(406_200 + 17.16 * 120)


@pytest.mark.parametrize("example", ["bloom-176b-v100.yaml", "llama-70b-h100.yaml", "llama-405b-16k-h100.yaml"])
def test_the_cost_curve_from_one_table_equals_a_plan_per_target(example):
    """The workbook's cost curve filters one table built at the lowest target (every layout that can win kept) by each
    row's TFLOPs/GPU; a full table per target (what the planner itself would build) must give the same capex."""
    from planner.answers import buy
    from planner.catalog.load import load_catalog
    from planner.inputs.scenario import load_scenario
    from planner.model.calibration import load_calibration

    scenario = load_scenario(Path(__file__).parents[1] / "examples" / example, {}, {}, {})
    catalog, calibration = load_catalog(list(scenario.catalogs)), load_calibration(None)
    curve = buy.cost_curve(catalog, scenario, calibration)
    targets = [scenario.target_tflops * f for f in buy.COST_CURVE_FACTORS]
    each = [buy.cheapest_capex(catalog, scenario.model_copy(update={"target_tflops": t}), calibration) for t in targets]
    assert [p["capex_usd"] for p in curve] == each
    assert any(c is not None for c in each)
    # what `plan -o plan.xlsx` does: the curve from the plan's own designs and bounds (only the target's moves)
    _, planned = buy.run_with_table(catalog, scenario, calibration)
    assert [p["capex_usd"] for p in buy.cost_curve(catalog, scenario, calibration, planned=planned)] == each


@pytest.mark.parametrize("factor", [0.6, 0.9, 1.1])
def test_a_table_retargeted_from_another_equals_one_built_from_scratch(factor):
    """build(prior=) reuses the prior table's screened keys and its memory and deadline bounds, bisecting the
    target's bound alone (from the prior's count at a lower target): every row, count and price as a fresh build
    at that target, above and below the prior's (Llama 70B: searched layouts, a global batch, a deadline)."""
    from planner.catalog.load import load_catalog
    from planner.inputs.scenario import load_scenario
    from planner.model.calibration import load_calibration
    from planner.tables import buy as cand

    scenario = load_scenario(Path(__file__).parents[1] / "examples" / "llama-70b-h100.yaml", {}, {}, {})
    catalog, calibration = load_catalog(list(scenario.catalogs)), load_calibration(None)
    parts = cand.part_designs(catalog, scenario)
    prior = cand.build(catalog, scenario, calibration, parts)
    other = scenario.model_copy(update={"target_tflops": scenario.target_tflops * factor})
    fresh = cand.build(catalog, other, calibration, parts, every_layout=True)
    reused = cand.build(catalog, other, calibration, parts, every_layout=True, prior=prior)
    assert cand._retargetable(prior, cand.Requirements.of(other), prior.training)
    pd.testing.assert_frame_equal(reused.frame, fresh.frame)
    assert not fresh.feasible.empty
    # another requirement (a shorter deadline) is not a retarget: the prior is not used, the table still exact
    sooner = other.model_copy(update={"requirement": other.requirement.model_copy(update={"days": 30})})
    assert not cand._retargetable(prior, cand.Requirements.of(sooner), prior.training)
    fresh = cand.build(catalog, sooner, calibration, parts, every_layout=True)
    pd.testing.assert_frame_equal(cand.build(catalog, sooner, calibration, parts, True, prior).frame, fresh.frame)


def test_each_design_keeps_one_layout_per_micro_batch_at_its_fewest_nodes(monkeypatch):
    """The planner's layout choice per hardware candidate (_best_layouts): of each design's layouts at one
    micro-batch, one row, at the fewest nodes any of them needs (GPT-3: searched layouts, some designs with a
    single row per node count, which must be narrowed all the same)."""
    from planner.catalog.load import load_catalog
    from planner.inputs.scenario import load_scenario
    from planner.model.calibration import load_calibration
    from planner.tables import buy as cand

    seen = []
    original = cand._best_layouts
    monkeypatch.setattr(cand, "_best_layouts", lambda rows, *a: seen.append((rows, original(rows, *a))) or seen[-1][1])
    scenario = load_scenario(Path(__file__).parents[1] / "examples" / "gpt3-budget-power.yaml", {}, {}, {})
    cand.build(load_catalog(list(scenario.catalogs)), scenario, load_calibration(None))
    (rows, chosen), group = seen[0], ["design", "micro_batch"]
    assert rows.groupby(group).size().max() > 1  # layouts to choose among
    assert chosen.groupby(group).size().eq(1).all()
    fewest = rows.groupby(group)["n_lo"].min()
    assert (chosen.set_index(group)["n_lo"] == fewest.reindex(chosen.set_index(group).index)).all()
    assert len(chosen) == len(fewest)


def test_hybrid_sharding_plans_whole_replicas_of_its_shard_group():
    """With workload.shard_gpus 24 (HSDP over groups of 24 GPUs) a GPU count must be a multiple of 24, as a device
    mesh of replicas x 24 needs: every candidate's and the plan's; with a global batch of 1024 no count is both
    (1024 / GPUs must be whole), and the reason names the shard group and one that divides the counts."""
    from planner.answers import buy
    from planner.base.errors import InfeasibleError
    from planner.catalog.load import load_catalog
    from planner.inputs.scenario import load_scenario
    from planner.model import layout
    from planner.model.calibration import load_calibration
    from planner.tables import buy as cand

    flat = {"tp": 1, "pp": 1, "vp": 1, "cp": 1, "ep": 1, "gpus": np.array([24.0, 32.0, 48.0])}
    assert layout.legal(layout.dims(flat), flat["gpus"], 1, None, 24)[0].tolist() == [True, False, True]
    example = Path(__file__).parents[1] / "examples" / "llama-70b-h100.yaml"
    hybrid = {"workload.sharding": "hybrid", "workload.shard_gpus": 24}
    scenario = load_scenario(example, {}, {**hybrid, "workload.global_batch": None}, {})
    catalog, calibration = load_catalog(list(scenario.catalogs)), load_calibration(None)
    table = cand.build(catalog, scenario, calibration)
    gpus = table.frame["nodes"] * table.frame["gpus_per_node"]
    assert len(gpus) and (gpus % 24 == 0).all()
    plan = buy.run(catalog, scenario, calibration)
    assert plan.choice.gpus % 24 == 0
    assert all(a.choice.gpus % 24 == 0 for a in plan.alternatives)
    batched = load_scenario(example, {}, hybrid, {})
    with pytest.raises(InfeasibleError, match=r"workload.shard_gpus 24 is the cause: .* such as 8, or"):
        buy.run(catalog, batched, calibration)
