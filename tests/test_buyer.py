"""Answers a buyer acts on (#29): what a trained token costs, and a plan that starves its GPUs says what the
network that costs less per token would buy."""

from __future__ import annotations

import pytest
from support import CAL, scenario, tiny

from planner.answers import buy as purchase
from planner.catalog.load import load_catalog
from planner.inputs.scenario import Scenario
from planner.model.calibration import Calibration


def test_cost_per_token_by_hand():
    """TCO over the horizon / the tokens the cluster trains in it (tokens/s x goodput x years x 8,760 h), and the
    run's tokens at that price."""
    plan = purchase.run(tiny(), scenario(requirement={"tokens": "15B", "days": 1}), CAL)
    m, c = plan.metrics, plan.cost
    tokens = m.tokens_per_s * m.goodput * c.years * 8760 * 3600
    assert m.usd_per_million_tokens == pytest.approx(c.tco_usd / tokens * 1e6)
    assert m.cost_to_train_usd == pytest.approx(m.usd_per_million_tokens * 15e9 / 1e6)
    for other in plan.per_fabric + plan.alternatives:
        assert other.metrics.usd_per_million_tokens is not None


# The question: 512 H100 for Llama-3-70B with FSDP and only a GPU count: the cheapest capex is one 200G NIC
# per node, the GPUs waiting on the network about half of each step.
STARVED = {
    "workload": {"model": "Llama-3-70B", "seq_len": 8192, "micro_batches": [1, 2], "global_batch": 1024},
    "requirement": {"gpus": 512},
    "constraints": {"gpus": ["H100"]},
}


def test_a_starved_plan_names_the_network_that_costs_less_per_token():
    plan = purchase.run(load_catalog(), Scenario.model_validate(STARVED), Calibration.default())
    m = plan.metrics
    assert m.t_comm_exposed_s / m.t_step_s >= 0.25  # the cheapest capex starves the GPUs
    notes = [line for line in plan.why if line.startswith("network:")]
    assert len(notes) == 1 and "cheaper per token" in notes[0], plan.why
    target = int(notes[0].split("target_tflops ")[1].split()[0])
    better = Scenario.model_validate(STARVED | {"target_tflops": target})
    bought = purchase.run(load_catalog(), better, Calibration.default(), alternatives=0)
    assert bought.metrics.usd_per_million_tokens < m.usd_per_million_tokens  # what the note promised
    assert bought.cost.capex_usd > plan.cost.capex_usd
