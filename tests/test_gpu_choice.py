"""Which GPU to buy: the plan's best-per-GPU table lists each allowed GPU's cheapest plan, and each equals the
optimum of the same scenario allowed that GPU alone; a GPU without a plan is named with the reason."""

from __future__ import annotations

import pytest
from support import GPU, SERVER, scenario, tiny

from planner.answers import buy as purchase
from planner.base.units import format_usd
from planner.model.calibration import Calibration

FAST = dict(GPU, name="T2", peak_bf16_tflops=300)
CATALOG = dict(gpus=[GPU, FAST], servers=[SERVER, dict(SERVER, name="S8-fast", gpu="T2", price_usd=260_000)])
CAL2 = Calibration(gemm_efficiency={"other": 0.5}, eta_net={"ib": 0.9, "roce": 0.8}, overlap=0.0)
NEED = {"requirement": {"min_tokens_per_s": 60_000}, "target_tflops": None, "constraints__max_nodes": 16}


def _run(**over):
    return purchase.run(tiny(**CATALOG), scenario(**(NEED | over)), CAL2, alternatives=0)


def test_each_gpus_best_plan_is_its_own_optimum():
    plan = _run(constraints={"gpus": ["T1", "T2"], "max_nodes": 16})
    table = {s.label: s for s in plan.per_gpu}
    assert set(table) == {"T1", "T2"}
    assert [s.cost.objective_usd for s in plan.per_gpu] == sorted(s.cost.objective_usd for s in plan.per_gpu)
    for gpu in ("T1", "T2"):
        alone = _run(constraints={"gpus": [gpu], "max_nodes": 16})
        assert table[gpu].cost.objective_usd == pytest.approx(alone.cost.objective_usd, rel=1e-9)
        assert table[gpu].choice.nodes == alone.choice.nodes
    assert plan.per_gpu[0].cost.objective_usd == pytest.approx(plan.cost.objective_usd, rel=1e-9)


def test_a_gpu_without_a_plan_in_the_budget_is_named_with_its_cheapest_price():
    both = _run(constraints={"gpus": ["T1", "T2"], "max_nodes": 16})
    costs = sorted(s.cost.capex_usd for s in both.per_gpu)
    budget = (costs[0] + costs[1]) / 2  # room for the cheaper GPU's plan only
    dear = max(both.per_gpu, key=lambda s: s.cost.capex_usd)
    plan = _run(constraints={"gpus": ["T1", "T2"], "max_nodes": 16, "budget_usd": budget})
    assert [s.label for s in plan.per_gpu] == []  # one GPU left: no table
    note = next(n for n in plan.why if n.startswith(f"{dear.label}:"))
    assert "only beyond the budget or power cap" in note
    assert f"costs {format_usd(dear.cost.capex_usd)}" in note  # the capex objective: its cheapest is its optimum


def test_one_gpu_gives_no_table():
    assert _run(constraints={"gpus": ["T1"], "max_nodes": 16}).per_gpu == []
