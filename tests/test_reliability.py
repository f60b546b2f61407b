"""Goodput worked by hand (Young/Daly), and plans that meet a deadline in calendar days with a margin."""

from __future__ import annotations

import math

import pytest
from support import CAL, scenario, tiny

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
    g = reliability.goodput(HAND, 4e9, 10)
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
    g = reliability.goodput(HAND.model_copy(update={"checkpoint_interval_minutes": 60}), 4e9, 10)
    assert g.checkpoint_interval_s == 3600
    assert g.fraction == pytest.approx(1 - 3 / 3600 - 1800 / 86_400 - 300 / 86_400)


def test_no_interruptions_means_full_goodput():
    g = reliability.goodput(HAND.model_copy(update={"interruptions_per_1000_node_days": 0}), 4e9, 10)
    assert g.fraction == 1.0 and math.isinf(g.checkpoint_interval_s)


def test_a_measured_goodput_is_taken_as_given():
    g = reliability.goodput(HAND.model_copy(update={"goodput": 0.9}), 4e9, 10)
    assert g.fraction == 0.9 and g.given


def test_spot_preemptions_cost_their_own_restarts():
    cloud = CloudOptions(spot_interruptions_per_1000_instance_days=500, spot_restart_minutes=60)
    quiet = HAND.model_copy(update={"interruptions_per_1000_node_days": 0})
    # 2 spot instances x 0.5 a day = 1 preemption a day: the same Young/Daly terms, restart 3,600 s
    g = reliability.goodput(quiet, 4e9, 10, (reliability.spot_interruptions(cloud, 2),))
    assert g.fraction == pytest.approx(1 - 3 / 720 - 360 / 86_400 - 3600 / 86_400)


def test_goodput_falls_with_nodes():
    sizes = [reliability.goodput(Reliability(), 70e9, n).fraction for n in (16, 128, 1024)]
    assert sizes == sorted(sizes, reverse=True)


def test_the_deadline_need_is_divided_by_margin_and_goodput():
    sc = scenario(requirement={"tokens": "20B", "days": 1, "schedule_margin": 0.1})
    resolved = reliability.with_goodput(sc, 0.95)
    assert Requirements.of(resolved).tokens_per_s == pytest.approx(20e9 / (0.9 * 86_400 * 0.95))
    assert Requirements.of(sc).tokens_per_s == pytest.approx(20e9 / (0.9 * 86_400))  # unresolved: goodput 1


def test_plan_meets_the_deadline_in_calendar_days_with_its_margin():
    rough = {"interruptions_per_1000_node_days": 400, "restart_minutes": 30}
    # 15B: a 1B model at 1K tokens per GPU on DeepSpeed stops gaining from more nodes (its host time per rank)
    sc = scenario(requirement={"tokens": "15B", "days": 1, "schedule_margin": 0.2}, reliability=rough)
    plan = purchase.run(tiny(), sc, CAL)
    s = plan.schedule
    assert s is not None and s.meets_deadline
    assert s.effective_days <= 0.8 * (1 + 1e-9)
    assert s.goodput == pytest.approx(reliability.goodput(sc.reliability, 1e9, plan.choice.nodes).fraction)
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
