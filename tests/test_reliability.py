"""Goodput worked by hand (Young/Daly), and plans that meet a deadline in calendar days with a margin."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from support import CAL, bom_parts, scenario, tiny

from planner.answers import buy as purchase
from planner.inputs.scenario import CloudOptions, Reliability
from planner.model import reliability
from planner.model.workload import Requirements

# 10 nodes at 100 interruptions per 1000 node-days: one interruption a day, MTBF M = 86,400 s. A 4e9-parameter
# checkpoint at 15 bytes/param over 10 nodes x 2 GB/s takes w = 3 s, so Young/Daly's interval is
# sqrt(2 x 3 x 86,400) = 720 s.
HAND = Reliability(
    interruptions_per_1000_node_days=100,
    restart_minutes=5,
    checkpoint_write_gb_per_s_per_node=2,
    checkpoint_bytes_per_param=15,
)


def test_young_daly_goodput_by_hand():
    g = reliability.goodput(HAND, 4e9, 10, None)
    assert g.checkpoint_write_s == pytest.approx(3.0)
    assert g.checkpoint_interval_s == pytest.approx(720.0)
    assert g.checkpoint_share == pytest.approx(3 / 720)  # writing 3 s every 720 s
    assert g.lost_work_share == pytest.approx(360 / 86_400)  # half an interval recomputed per interruption
    assert g.restart_share == pytest.approx(300 / 86_400)  # 5 minutes per interruption
    assert g.fraction == pytest.approx(1 - 3 / 720 - 360 / 86_400 - 300 / 86_400)
    assert g.interruptions_per_day == pytest.approx(1.0)
    assert g.wall_days(9.881944) == pytest.approx(10.0, rel=1e-6)
    assert g.interruptions(9.881944) == pytest.approx(10.0, rel=1e-6)


def test_a_given_interval_replaces_young_daly():
    g = reliability.goodput(HAND.model_copy(update={"checkpoint_interval_minutes": 60}), 4e9, 10, None)
    assert g.checkpoint_interval_s == 3600
    assert g.fraction == pytest.approx(1 - 3 / 3600 - 1800 / 86_400 - 300 / 86_400)


def test_no_interruptions_means_full_goodput():
    g = reliability.goodput(HAND.model_copy(update={"interruptions_per_1000_node_days": 0}), 4e9, 10, None)
    assert g.fraction == 1.0 and math.isinf(g.checkpoint_interval_s)


def test_a_measured_goodput_is_taken_as_given():
    g = reliability.goodput(HAND.model_copy(update={"goodput": 0.9}), 4e9, 10, None)
    assert g.fraction == 0.9 and g.given


def test_spot_preemptions_cost_their_own_restarts():
    cloud = CloudOptions(spot_interruptions_per_1000_instance_days=500, spot_restart_minutes=60)
    quiet = HAND.model_copy(update={"interruptions_per_1000_node_days": 0})
    # 2 spot instances x 0.5 a day = 1 preemption a day: the same Young/Daly terms, restart 3,600 s
    g = reliability.goodput(quiet, 4e9, 10, None, (reliability.spot_interruptions(cloud, 2),))
    assert g.fraction == pytest.approx(1 - 3 / 720 - 360 / 86_400 - 3600 / 86_400)


def test_goodput_falls_with_nodes():
    sizes = [
        reliability.goodput(Reliability(), 70e9, n, reliability.assumed_parts(8, 1, n, n // 10)).fraction
        for n in (16, 128, 1024)
    ]
    assert sizes == sorted(sizes, reverse=True)


def test_the_deadline_need_is_divided_by_margin_and_goodput():
    sc = scenario(requirement={"tokens": "20B", "days": 1, "schedule_margin": 0.1})
    given = scenario(requirement={"tokens": "20B", "days": 1, "schedule_margin": 0.1}, reliability={"goodput": 0.95})
    assert Requirements.of(given).tokens_per_s == pytest.approx(20e9 / (0.9 * 86_400 * 0.95))
    assert Requirements.of(given).reliability is None  # a given goodput is in the need
    # the model's goodput: each configuration's own, counted where it is sized (planner.tables.buy.goodput_at)
    assert Requirements.of(sc).tokens_per_s == pytest.approx(20e9 / (0.9 * 86_400))
    assert Requirements.of(sc).reliability is sc.reliability


def test_plan_meets_the_deadline_in_calendar_days_with_its_margin():
    rough = {"interruptions_per_1000_node_days": 400, "restart_minutes": 30}
    # 15B: a 1B model at 1K tokens per GPU on DeepSpeed stops gaining from more nodes (its host time per rank)
    sc = scenario(requirement={"tokens": "15B", "days": 1, "schedule_margin": 0.2}, reliability=rough)
    plan = purchase.run(tiny(), sc, CAL)
    s = plan.schedule
    assert s is not None and s.meets_deadline
    assert s.effective_days <= 0.8 * (1 + 1e-9)
    assert s.goodput == pytest.approx(reliability.goodput(sc.reliability, 1e9, plan.choice.nodes, None).fraction)
    assert s.effective_days == pytest.approx(plan.metrics.training_days / s.goodput)
    assert plan.metrics.effective_training_days == pytest.approx(s.effective_days)
    # without interruptions or margin the same deadline needs fewer nodes
    ideal = scenario(requirement={"tokens": "15B", "days": 1}, reliability={"interruptions_per_1000_node_days": 0})
    assert purchase.run(tiny(), ideal, CAL).choice.nodes < plan.choice.nodes
    assert any("calendar days" in w for w in plan.why)


def test_no_deadline_no_schedule():
    plan = purchase.run(tiny(), scenario(), CAL)
    assert plan.schedule is None and plan.metrics.goodput is None


def test_an_unmet_deadline_says_what_it_asks_with_margin_and_goodput():
    from planner.base.errors import InfeasibleError

    sc = scenario(requirement={"tokens": "100T", "days": 1, "schedule_margin": 0.5}, constraints__max_nodes=16)
    with pytest.raises(InfeasibleError) as caught:
        purchase.run(tiny(), sc, CAL)
    first = str(caught.value).splitlines()[1]
    assert "less its 50% margin (0.5 days) needs 2.31481B tokens/s" in first  # 100e12 / (0.5 x 86,400)
    assert "before interruptions" in first


# ---------------------------------------------------------------- interruptions from the bill of materials

RATES = {  # planner/assumptions/facility.py FAILURE_RATES, per unit per day (docs/research/reliability)
    "gpu": 3.5e-4,
    "host": 2.0e-4,
    "nic": 2.0e-5,
    "node_link": 2.5e-5,
    "fabric_link": 7.5e-6,
    "leaf": 1.7e-5,
    "upper_switch": 8.5e-6,
    "storage_client": 1.0e-4,
}


def test_interruptions_by_part_by_hand():
    parts = reliability.Parts(gpus=16, hosts=2, nics=16, node_links=32, fabric_links=64, leaves=2, upper_switches=1)
    events = parts.events_per_day(Reliability().failure_rates)
    hardware = 16 * 3.5e-4 + 2 * 2e-4 + 16 * 2e-5 + 32 * 2.5e-5 + 64 * 7.5e-6 + 2 * 1.7e-5 + 8.5e-6 + 2 * 1e-4
    assert sum(v for k, v in events.items() if k != "software") == pytest.approx(hardware)
    assert events["software"] == pytest.approx(hardware * 0.2 / 0.8)  # 20% of all interruptions
    assert events["gpu"] == pytest.approx(16 * 3.5e-4) and events["storage_client"] == pytest.approx(2e-4)
    # a rate the scenario sets replaces its default; a given per-node rate replaces the parts
    quiet = Reliability(failure_rates={"gpu": 0.0, "software_share": 0.0})
    assert "gpu" in parts.events_per_day(quiet.failure_rates)
    assert parts.events_per_day(quiet.failure_rates)["gpu"] == 0.0
    assert sum(parts.events_per_day(quiet.failure_rates).values()) == pytest.approx(hardware - 16 * 3.5e-4)
    given = reliability.goodput(Reliability(interruptions_per_1000_node_days=500), 1e9, 2, parts)
    assert given.interruptions_per_day == pytest.approx(1.0) and given.by_part == {"nodes": pytest.approx(1.0)}


def test_a_deadline_plan_counts_its_own_bill_of_materials():
    """The schedule's interruptions are the plan's parts times their rates, over its calendar days, and the
    plan meets the deadline at its own goodput (sized at a goodput no higher)."""
    sc = scenario(requirement={"tokens": "15B", "days": 1, "schedule_margin": 0.2})
    plan = purchase.run(tiny(), sc, CAL)
    s, parts = plan.schedule, bom_parts(plan)
    assert s.interruptions_from == "bill of materials" and s.meets_deadline
    assert parts.node_links > 0 and parts.leaves > 0
    counts = {
        "gpu": parts.gpus,
        "host": parts.hosts,
        "nic": parts.nics,
        "node_link": parts.node_links,
        "fabric_link": parts.fabric_links,
        "leaf": parts.leaves,
        "upper_switch": parts.upper_switches,
        "storage_client": parts.hosts,
    }
    per_day = {k: counts[k] * RATES[k] for k in RATES}
    per_day["software"] = sum(per_day.values()) * 0.25
    for kind, rate in per_day.items():
        assert s.interruptions_by_part.get(kind, 0.0) == pytest.approx(rate * s.effective_days, abs=1e-12), kind
    assert s.interruptions_per_1000_node_days == pytest.approx(sum(per_day.values()) / plan.choice.nodes * 1e3)
    assert s.goodput == pytest.approx(reliability.goodput(sc.reliability, 1e9, plan.choice.nodes, parts).fraction)
    assert any("from the bill of materials: GPUs" in line for line in terminal_lines(plan))


def terminal_lines(plan) -> list[str]:
    from planner.report.plan_text import render

    return render(plan).splitlines()


def test_poisson_tail_and_quantile_by_hand():
    from planner.base import poisson

    # P(X > 1) at mean 0.4: 1 - e^-0.4 (1 + 0.4); P(X > 3): 1 - e^-0.4 (1 + 0.4 + 0.08 + 0.010667)
    assert poisson.tail(0.4, 1) == pytest.approx(1 - math.exp(-0.4) * 1.4)
    assert poisson.tail(0.4, 3) == pytest.approx(1 - math.exp(-0.4) * (1.4 + 0.08 + 0.4**3 / 6))
    assert poisson.tail(0.4, -1) == 1.0 and poisson.tail(0.0, 0) == 0.0 and poisson.tail(0.4, math.inf) == 0.0
    # the 99% cover: mean 0.4 needs 2 (P(X > 1) = 6.2%, P(X > 2) = 0.79%), 0.45 needs 3 (P(X > 2) = 1.09%)
    assert list(poisson.quantile([0.4, 0.45, 0.0756, 0.0], 0.99)) == [2, 3, 1, 0]


def test_a_node_failure_waits_for_its_repair_without_a_spare():
    """10 nodes of 8 GPUs, 1 host, 8 NICs: node failures 10 x (8 x 3.5e-4 + 2e-4 + 8 x 2e-5) = 0.0316 a day; a
    24 h repair: the nodes under repair are Poisson(0.0316). No spare: the job stands P(X > 0) = 3.11% of the
    time; one spare: P(X > 1) = 0.049%. A rack-scale system's 4 h tray swap: Poisson(0.00527)."""
    parts = reliability.Parts(gpus=80, hosts=10, nics=80, node_links=80)
    none = reliability.goodput(Reliability(), 1e9, 10, parts)
    one = reliability.goodput(Reliability(), 1e9, 10, dataclasses.replace(parts, spare_nodes=1))
    mean = 0.0316
    assert none.repair_wait_share == pytest.approx(1 - math.exp(-mean))
    assert one.repair_wait_share == pytest.approx(1 - math.exp(-mean) * (1 + mean))
    assert one.spare_wait_probability == pytest.approx(1 - math.exp(-mean))  # a failure finds the spare busy
    assert one.fraction - none.fraction == pytest.approx(none.repair_wait_share - one.repair_wait_share)
    rack = reliability.goodput(Reliability(), 1e9, 10, dataclasses.replace(parts, rack_scale=True))
    assert rack.repair_wait_share == pytest.approx(1 - math.exp(-mean * 4 / 24))
    assert reliability.goodput(Reliability(repair_hours=0), 1e9, 10, parts).repair_wait_share == 0.0


def test_the_arrays_and_a_plans_goodput_agree():
    """shape_goodput (what the table sizes by) equals goodput (what the plan reports) for the same parts."""
    rng = np.random.default_rng(7)
    for _ in range(40):
        nodes, gpus, hosts = int(rng.integers(2, 3000)), int(rng.choice([4, 8, 72])), int(rng.choice([1, 18]))
        nics, links, uplinks = (
            nodes * gpus,
            nodes * gpus * int(rng.integers(1, 3)),
            int(rng.integers(0, 2 * nodes * gpus)),
        )
        leaves, upper, spares = int(rng.integers(1, 200)), int(rng.integers(0, 300)), int(rng.integers(0, 40))
        parts = reliability.Parts(nodes * gpus, nodes * hosts, nics, links, uplinks, leaves, upper, spares, hosts > 1)
        r = Reliability().failure_rates
        net = (links * r.node_link + uplinks * r.fabric_link + leaves * r.leaf + upper * r.upper_switch) / nodes
        shape = {"gpus_per_node": gpus, "hosts_per_node": hosts, "rack_scale": hosts > 1, "spare_nodes": spares}
        shape |= {"nic_per_node_day": nics / nodes * r.nic, "net_per_node_day": net}
        arrays = reliability.shape_goodput(Reliability(), 70e9, np.array([nodes]), shape)[0]
        if arrays <= 0:  # all the time lost: the plan's goodput refuses it (tested above)
            continue
        assert arrays == pytest.approx(reliability.goodput(Reliability(), 70e9, nodes, parts).fraction, abs=1e-12)


def test_poisson_large_means_take_the_normal_approximation():
    """Above NORMAL_FROM the tail and quantile are the normal approximation's (continuity-corrected), close to
    the exact sums, and cost no time at absurd means (a failure rate of 5 a GPU-day and 2,000 h repairs)."""
    from planner.base import poisson

    mean, k = 450.0, 480
    exact = 1 - sum(math.exp(j * math.log(mean) - mean - math.lgamma(j + 1)) for j in range(k + 1))
    assert poisson.tail(mean, k) == pytest.approx(exact, rel=0.02)
    assert abs(int(poisson.quantile([mean], 0.99)[0]) - 500) <= 1  # exact: 500
    assert int(poisson.quantile([1e9], 0.99)[0]) == pytest.approx(1e9 + 2.326 * 1e9**0.5, rel=1e-6)


def test_a_deadline_lost_to_interruptions_says_so():
    """Fast enough before interruptions, too slow at its goodput: the message gives both and names the remedy."""
    from planner.base.errors import InfeasibleError

    rough = {"interruptions_per_1000_node_days": 100_000, "restart_minutes": 30}
    sc = scenario(requirement={"tokens": "15B", "days": 1}, reliability=rough)
    with pytest.raises(InfeasibleError) as caught:
        purchase.run(tiny(), sc, CAL)
    text = str(caught.value)
    assert "at its goodput" in text and "before interruptions it would reach" in text
