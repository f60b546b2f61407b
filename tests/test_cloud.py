"""`planner cloud`: ranking, quotas, spot share, no-fabric offerings, MILP vs brute force, CLI."""

from __future__ import annotations

import json
import math

import openpyxl
import pytest
from conftest import CAL, GPU, make_catalog
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner import cloud
from planner.resources import examples_dir
from planner.scenario import Scenario

BASE = dict(provider="P", region="r1", gpu="T1", gpus=8)


def offering(instance, ondemand=None, spot=None, reserved=None, gbps=400.0, fabric="ib", **over):
    return dict(
        BASE,
        instance=instance,
        ondemand_usd_per_h=ondemand,
        spot_usd_per_h=spot,
        reserved_usd_per_h=reserved,
        internode_gbps=gbps if fabric != "none" else None,
        fabric=fabric,
        **over,
    )


def catalog(*offerings):
    return make_catalog(gpus=[GPU], cloud=[{k: v for k, v in o.items() if v is not None} for o in offerings])


def scenario(tokens="20B", days=1, **cloud_options):
    return Scenario.model_validate(
        {
            "workload": {"params": "1B", "seq_len": 1024, "micro_batches": [1]},
            "requirement": {"tokens": tokens, "days": days},
            "cloud": cloud_options,
        }
    )


def test_ranking_is_cheapest_first_and_costs_add_up():
    cat = catalog(offering("fast", ondemand=30.0), offering("slow", ondemand=20.0, gbps=100.0, fabric="roce"))
    options, _ = cloud.build_options(cat, scenario(), CAL)
    table = cloud.ranking(options, scenario())
    assert list(table["cost_usd"]) == sorted(table["cost_usd"])
    for row in table.to_dict("records"):
        assert row["cost_usd"] == pytest.approx(row["usd_per_h"] * row["days"] * 24)
        assert row["days"] <= 1.0


def test_quota_caps_instances():
    sc = scenario(quota={"cheap": 2})
    cat = catalog(offering("cheap", ondemand=10.0), offering("dear", ondemand=40.0))
    options, excluded = cloud.build_options(cat, sc, CAL)
    needed = cloud.build_options(cat, scenario(), CAL)[0][0].counts[0]
    assert needed > 2  # the deadline needs more than the quota allows
    assert [e.instance for e in excluded] == ["cheap"] and "deadline" in excluded[0].reason
    assert cloud.solve_cloud(options, sc).option.row.instance == "dear"


def test_offering_without_fabric_runs_on_one_instance_only():
    cat = catalog(offering("solo", ondemand=1.0, fabric="none"), offering("net", ondemand=50.0))
    small = scenario(tokens="100M")
    choice = cloud.solve_cloud(cloud.build_options(cat, small, CAL)[0], small)
    assert (choice.option.row.instance, choice.count) == ("solo", 1)
    big = scenario(tokens="50B")
    options, excluded = cloud.build_options(cat, big, CAL)
    assert excluded[0].instance == "solo" and "no inter-node fabric" in excluded[0].reason
    assert cloud.solve_cloud(options, big).option.row.instance == "net"


def test_spot_share_is_respected():
    sc = scenario(spot_share_max=0.5)
    cat = catalog(offering("mixed", ondemand=40.0, spot=10.0))
    choice = cloud.solve_cloud(cloud.build_options(cat, sc, CAL)[0], sc)
    assert choice.mix.get("spot", 0) <= math.floor(0.5 * choice.count)
    assert choice.mix["spot"] == math.floor(0.5 * choice.count) and sum(choice.mix.values()) == choice.count


def test_budget_too_small_means_no_choice():
    sc = scenario().model_copy(update={"constraints": scenario().constraints.model_copy(update={"budget_usd": 1.0})})
    options, _ = cloud.build_options(catalog(offering("x", ondemand=40.0)), sc, CAL)
    assert options and cloud.solve_cloud(options, sc) is None and cloud.brute_force(options, sc) is None


@st.composite
def cloud_problems(draw):
    offerings = []
    for i in range(draw(st.integers(1, 4))):
        prices = {p: draw(st.one_of(st.none(), st.floats(1, 100))) for p in ("ondemand", "spot", "reserved")}
        if all(v is None for v in prices.values()):
            prices["ondemand"] = 50.0
        fabric = draw(st.sampled_from(["ib", "roce", "efa", "tcpx", "tcp", "none"]))
        offerings.append(
            offering(
                f"i{i}",
                gbps=draw(st.sampled_from([100.0, 400.0, 1600.0])),
                fabric=fabric,
                gpus=draw(st.sampled_from([4, 8])),
                **prices,
            )
        )
    sc = Scenario.model_validate(
        {
            "workload": {
                "params": draw(st.sampled_from(["1B", "7B"])),
                "seq_len": 1024,
                "micro_batches": draw(st.lists(st.sampled_from([1, 2, 4]), min_size=1, max_size=2, unique=True)),
            },
            "requirement": {"tokens": f"{draw(st.integers(1, 60))}B", "days": 1},
            "target_tflops": draw(st.sampled_from([None, 10, 30])),
            "constraints": {"budget_usd": draw(st.sampled_from([None, 5e3, 5e4]))},
            "cloud": {"spot_share_max": draw(st.sampled_from([0.0, 0.3, 0.5, 1.0])), "max_instances": 24},
        }
    )
    return catalog(*offerings), sc


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cloud_problems())
def test_milp_matches_brute_force(problem):
    cat, sc = problem
    options, _ = cloud.build_options(cat, sc, CAL)
    reference = cloud.brute_force(options, sc)
    choice = cloud.solve_cloud(options, sc)
    if reference is None:
        assert choice is None
    else:
        assert choice is not None and choice.cost_usd == pytest.approx(reference[0], rel=1e-9)


# ---------------------------------------------------------------- CLI

CLOUD = examples_dir() / "cloud-70b.yaml"


def test_cloud_cli_ranks_and_explains_exclusions(run):
    result = run("cloud", CLOUD)
    assert result.exit_code == 0, result.output
    assert "choice" in result.stdout and "Excluded:" in result.stdout and "no inter-node fabric" in result.stdout
    data = json.loads(run("cloud", CLOUD, "--json").stdout)
    costs = [r["cost_usd"] for r in data["ranking"]]
    assert costs == sorted(costs) and data["choice"]["days"] <= 30
    assert data["choice"]["cost_usd"] <= costs[0] + 1e-6  # mixing pricing can only help
    assert data["choice"]["pricing_mix"].get("spot", 0) <= 0.5 * data["choice"]["instances"]


def test_cloud_workbook(run, tmp_path):
    path = tmp_path / "cloud.xlsx"
    assert run("cloud", CLOUD, "-o", path).exit_code == 0
    wb = openpyxl.load_workbook(path)
    assert wb.sheetnames == ["Ranking", "Cost over time", "Excluded"]
    assert wb["Ranking"]._charts and wb["Cost over time"]._charts
    assert wb["Cost over time"]["B8"].value == "=$B$4*24*A8"


def test_cloud_infeasible_exits_1(run):
    result = run("cloud", CLOUD, "--budget", "1000")
    assert (
        result.exit_code == 1 and "budget 1,000 USD is too small: the cheapest qualifying option costs" in result.stderr
    )


@pytest.mark.slow
def test_plan_compare_cloud_reports_break_even(run, tmp_path):
    result = run("plan", examples_dir() / "llama-70b-h100.yaml", "--compare-cloud", "-q")
    assert result.exit_code == 0, result.output
    assert "Buy vs rent" in result.stdout and "buying pays off after" in result.stdout
    data = json.loads(run("plan", examples_dir() / "llama-70b-h100.yaml", "--compare-cloud", "-q", "--json").stdout)
    assert data["cloud_comparison"]["break_even_months"] > 0
    path = tmp_path / "plan.xlsx"
    assert run("plan", examples_dir() / "llama-70b-h100.yaml", "--compare-cloud", "-q", "-o", path).exit_code == 0
    assert "Buy vs rent" in openpyxl.load_workbook(path).sheetnames
