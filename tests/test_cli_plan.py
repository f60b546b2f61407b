"""`planner plan` end to end on the shipped examples."""

from __future__ import annotations

import json

import pytest
from reference import buy as bruteforce

from planner.base.resources import examples_dir
from planner.catalog.load import load_catalog
from planner.inputs.scenario import load_scenario
from planner.model.calibration import Calibration
from planner.tables import buy as candidates

BLOOM = examples_dir() / "bloom-176b-v100.yaml"
LLAMA = examples_dir() / "llama-70b-h100.yaml"
GPT3 = examples_dir() / "gpt3-budget-power.yaml"


def test_bloom_plan_meets_target_and_is_cheapest(run):
    result = run("plan", BLOOM, "--json", "-q")
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    assert plan["status"] == "optimal"
    assert plan["metrics"]["achieved_tflops_per_gpu"] >= 40
    assert plan["choice"]["gpus"] == 384 and plan["choice"]["gpus_per_node"] == 16
    assert {s["choice"]["fabric"] for s in plan["per_fabric"]} == {"ib", "roce"}
    # brute force over every candidate agrees on the optimum
    scenario = load_scenario(BLOOM)
    catalog = load_catalog()
    best = bruteforce.best(catalog, candidates.part_designs(catalog, scenario), scenario, Calibration.default())
    assert plan["cost"]["objective_usd"] == pytest.approx(best[0])


def test_text_summary_shows_ib_vs_roce_and_bom(run):
    result = run("plan", BLOOM, "-q")
    assert result.exit_code == 0
    for text in (
        "buy",
        "achieved",
        "capex",
        "Bill of materials",
        "Best per fabric",
        "InfiniBand",
        "RoCE",
        "Best per NIC speed",
        "Next-best alternatives",
        "servers.csv:",
    ):
        assert text in result.output


def test_progress_goes_to_stderr(run):
    result = run("plan", BLOOM)
    assert "solving the MILP" in result.stderr and "solving the MILP" not in result.stdout


def test_llama_deadline_and_global_batch(run):
    plan = json.loads(run("plan", LLAMA, "--json", "-q").stdout)
    s = plan["schedule"]  # 40 days less the example's 10% margin, in calendar days with interruptions
    assert s["meets_deadline"] and s["effective_days"] <= 40 * 0.9 * (1 + 1e-9) and s["schedule_margin"] == 0.1
    assert s["effective_days"] == pytest.approx(plan["metrics"]["training_days"] / s["goodput"])
    assert 0.9 < s["goodput"] < 1 and s["interruptions_expected"] > 0
    c = plan["choice"]
    assert c["micro_batch"] * c["dp"] * c["grad_accum"] == 1024 and c["dp"] * c["tp"] * c["pp"] * c["cp"] == c["gpus"]
    text = run("plan", LLAMA, "-q").stdout
    assert "effective training days" in text and "interruptions expected" in text and "margin" in text


def test_budget_and_power_example_respects_caps(run):
    plan = json.loads(run("plan", GPT3, "--json", "-q").stdout)
    assert plan["cost"]["capex_usd"] <= 24e6 and plan["cost"]["power_kw"] <= 720
    assert plan["objective"] == "tco"


def test_overrides_and_infeasible_exit_1(run):
    result = run("plan", GPT3, "-q", "--budget", "10M")
    assert result.exit_code == 1
    assert "would suffice" in result.stderr and "Traceback" not in result.stderr
    result = run("plan", BLOOM, "-q", "--target-tflops", "200")
    assert result.exit_code == 1 and "unreachable" in result.stderr


def test_csv_bill_of_materials_and_json_file(run, tmp_path):
    bom, whole = tmp_path / "bom.csv", tmp_path / "plan.json"
    assert run("plan", BLOOM, "-q", "-o", whole, "--csv", bom).exit_code == 0
    lines = bom.read_text().splitlines()
    assert lines[0].startswith("category,sku,description")
    total = float(lines[-1].split(",")[6])
    assert total == pytest.approx(json.loads(whole.read_text())["cost"]["capex_usd"])


def test_output_errors(run, tmp_path):
    refused = run("plan", BLOOM, "-q", "-o", tmp_path / "plan.pdf")
    assert refused.exit_code == 2
    assert "write .xlsx (quote workbook), .json (the whole plan) or .csv (bill of materials)" in refused.stderr
    result = run("plan", BLOOM, "-q", "-o", tmp_path / "missing-folder" / "plan.csv")
    assert result.exit_code == 1 and "does not exist" in result.stderr


def test_a_new_output_format_is_one_writer_and_one_table_entry(run, tmp_path, monkeypatch):
    from planner.report import writers

    def node_count(report, tmp):
        tmp.write_text(f"{report.plan.choice.nodes} nodes of {report.plan.choice.server}\n")

    monkeypatch.setitem(writers.WRITERS["plan"], ".txt", writers.Format("node count", node_count))
    target = tmp_path / "plan.txt"
    assert run("plan", BLOOM, "-q", "-o", target).exit_code == 0
    assert target.read_text() == "24 nodes of NVIDIA DGX-2 (list 2018-03)\n"  # 384 GPUs in 16-GPU nodes
    refused = run("plan", BLOOM, "-q", "-o", tmp_path / "plan.pdf")
    assert ".csv (bill of materials) or .txt (node count)" in refused.stderr  # the table lists it


def test_bad_scenario_file(run, write):
    bad = write("s.yaml", "workload: {model: BLOOM-176B}\nrequirement: {gpus: 8}\ntarget_tflops: fast\nextra: 1\n")
    result = run("plan", bad)
    assert result.exit_code == 1
    assert "target_tflops = 'fast'" in result.stderr and "extra" in result.stderr
    assert run("plan", write("t.yaml", ": : :")).exit_code == 1
    assert "cannot read scenario" in run("plan", "/nonexistent.yaml").stderr


def test_schema(run):
    schema = json.loads(run("plan", "--schema").output)
    assert {"workload", "requirement", "target_tflops", "constraints", "objective"} <= set(schema["properties"])


def test_csv_guards_against_formula_injection():
    from planner.report.plan_text import _text

    assert _text('=HYPERLINK("http://x","y")') == '\'=HYPERLINK("http://x","y")'
    assert _text("+1") == "'+1" and _text("plain") == "plain"


def test_set_overrides_any_field(run):
    plan = json.loads(run("plan", BLOOM, "-q", "--json", "--set", "constraints.fabrics=[ib]").stdout)
    assert plan["choice"]["fabric"] == "ib" and [s["choice"]["fabric"] for s in plan["per_fabric"]] == ["ib"]
    assert run("plan", BLOOM, "-q", "--set", "nonsense").exit_code == 2
    result = run("plan", BLOOM, "-q", "--set", "constraints.bogus=1")
    assert result.exit_code == 1 and "constraints.bogus" in result.stderr


def test_power_kw_takes_units_and_csv_must_be_csv(run, tmp_path):
    plan = json.loads(run("plan", GPT3, "-q", "--json", "--power-kw", "0.72MW").stdout)
    assert plan["cost"]["power_kw"] <= 720
    assert run("plan", BLOOM, "-q", "--csv", tmp_path / "bom.json").exit_code == 2


def test_confidence_buys_for_the_pessimistic_outcome(run):
    # 512 H100 at 380 TFLOPs/GPU: the network is free to choose (BLOOM's DGX-2 has its 8 NICs built in)
    fixed = ("--gpus", "512", "--target-tflops", "380", "--json", "-q")
    point = json.loads(run("plan", LLAMA, *fixed).stdout)
    careful = json.loads(run("plan", LLAMA, *fixed, "--confidence", "0.7").stdout)
    m = careful["metrics"]
    assert m["confidence"] == 0.7 and m["tokens_per_s"] < m["tokens_per_s_point"]
    assert m["achieved_tflops_per_gpu"] >= 380  # the target holds at the pessimistic outcome
    assert careful["choice"]["node_gbps"] > point["choice"]["node_gbps"]
    assert careful["cost"]["capex_usd"] > point["cost"]["capex_usd"]
    text = run("plan", BLOOM, "-q", "--confidence", "0.7").stdout
    assert "sized for the outcome met with probability 0.7" in text


def test_unknown_model_names_the_file_and_field(run, write):
    """A typo in workload.model is caught before any work, naming the scenario file and the field."""
    text = (examples_dir() / "llama-70b-h100.yaml").read_text(encoding="utf-8")
    path = write("s.yaml", text.replace("model: Llama-2-70B", "model: Llama-9"))
    for command in (["plan", path, "-q"], ["cloud", path]):
        result = run(*command)
        assert result.exit_code == 1
        expected = f"error: {path}: workload.model: unknown model 'Llama-9': did you mean"
        assert result.stderr.startswith(expected), result.stderr


@pytest.mark.parametrize(
    ("setting", "fragment"),
    [
        ("constraints.gpus=[H1000]", "constraints.gpus[0]: unknown GPU 'H1000': did you mean H100"),
        ("constraints.switches=[QM9999]", "constraints.switches[0]: unknown switch 'QM9999': did you mean QM9700"),
    ],
)
def test_unknown_constraint_names_name_the_source_and_field(run, setting, fragment, write):
    """Before this check an unknown switch SKU ended in a misleading 'no node count' infeasibility. A name given
    with --set names the --set; the same name in the file names the file."""
    path = examples_dir() / "llama-70b-h100.yaml"
    result = run("plan", path, "-q", "--set", setting)
    key, value = setting.split("=")
    assert result.exit_code == 1 and result.stderr.startswith(f"error: --set {key}: {fragment}"), result.stderr
    section, field = key.split(".")
    text = path.read_text().replace(f"{section}:\n", f"{section}:\n  {field}: {value}\n", 1)
    if f"  {field}:" in path.read_text():  # the example sets it already: replace its line
        text = "\n".join(ln for ln in path.read_text().splitlines() if not ln.startswith(f"  {field}:"))
        text = text.replace(f"{section}:\n", f"{section}:\n  {field}: {value}\n", 1)
    in_file = write("s.yaml", text)
    result = run("plan", in_file, "-q")
    assert result.exit_code == 1 and result.stderr.startswith(f"error: {in_file}: {fragment}"), result.stderr


def test_unknown_cloud_provider_names_the_field_and_suggests(run):
    path = examples_dir() / "cloud-70b.yaml"
    result = run("cloud", path, "--provider", "AWZ")
    assert result.exit_code == 1
    assert "error: --provider: cloud.providers[0]: unknown cloud provider 'AWZ': did you mean AWS" in result.stderr


def test_a_question_in_options_alone_plans_and_saves_its_scenario(run, tmp_path):
    """No scenario file: the model, the requirement and the limits as options; --save-scenario writes the YAML
    it implied, which plans to the same answer."""
    saved = tmp_path / "question.yaml"
    asked = ["--params", "7B", "--seq-len", "2048", "--gpus", "32", "--gpu", "H100", "--micro-batch", "2"]
    result = run("plan", *asked, "--save-scenario", saved, "--json", "-q")
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    assert plan["scenario"] == "7B parameters on 32 GPUs" and plan["choice"]["gpus"] == 32
    again = run("plan", saved, "--json", "-q")
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["choice"] == plan["choice"]
    assert "params: 7B" in saved.read_text() and "gpus: 32" in saved.read_text()


def test_a_question_in_options_names_what_is_missing_or_mistyped(run, tmp_path):
    missing = run("plan", "--model", "Llama-3-70B", "-q")
    assert missing.exit_code == 1
    assert missing.stderr.strip() == (
        "error: the command line: no requirement: give --tokens with --days (a deadline), or --gpus (a GPU count)"
    )
    typo = run("plan", "--model", "Llama-3-70X", "--gpus", "64", "-q")
    assert typo.exit_code == 1 and typo.stderr.startswith("error: --model: workload.model: unknown model")
    assert "did you mean Llama-3-70B" in typo.stderr
    nothing = run("plan")
    assert nothing.exit_code == 2 and "--model (or --params)" in nothing.stderr
    wrong = run("plan", "--params", "7B", "--gpus", "32", "--save-scenario", tmp_path / "q.txt")
    assert wrong.exit_code == 2 and "write .yaml" in wrong.stderr and not (tmp_path / "q.txt").exists()


def test_a_saved_scenario_keeps_the_catalogs_the_run_read(run, tmp_path):
    """--catalog paths (relative to the working folder) are saved as absolute paths: the saved file reads them."""
    import shutil

    from planner.base.resources import catalogs_dir

    shutil.copy(catalogs_dir() / "nics.csv", tmp_path / "my-nics.csv")
    saved = tmp_path / "q.yaml"
    asked = ["--params", "7B", "--seq-len", "2048", "--gpus", "32", "--gpu", "H100", "--micro-batch", "2"]
    result = run("plan", *asked, "--catalog", tmp_path / "my-nics.csv", "--save-scenario", saved, "-q")
    assert result.exit_code == 0, result.output
    assert str((tmp_path / "my-nics.csv").resolve()) in saved.read_text()
