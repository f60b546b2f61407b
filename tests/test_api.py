"""The Python API (planner.api): docs/api.md's example runs as written, and the API returns what the command
prints."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

import planner
from planner.base.errors import ScenarioError

ROOT = Path(__file__).resolve().parents[1]


def test_the_documented_example_runs(capsys):
    """Every python block of docs/api.md, in order, in one namespace, from the project's folder."""
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "api.md").read_text(), flags=re.S)
    assert len(blocks) >= 2
    here = os.getcwd()
    os.chdir(ROOT)
    try:
        namespace: dict = {}
        for block in blocks:
            exec(compile(block, "docs/api.md", "exec"), namespace)  # noqa: S102 - our own documentation
    finally:
        os.chdir(here)
    out = capsys.readouterr().out
    assert "did you mean seq_len?" in out and "per M tokens" in out


def test_plan_matches_the_command(run):
    """planner.plan on a file equals `planner plan FILE --json` (the same answer, typed)."""
    path = ROOT / "examples" / "bloom-176b-v100.yaml"
    cli = json.loads(run("plan", path, "--json", "-q").stdout)
    api = json.loads(planner.plan(path).to_json())
    for key in ("choice", "cost", "metrics", "bom"):
        assert api[key] == cli[key], key


def test_predict_matches_the_command(run):
    args = ["--model", "Llama-2-70B", "--gpu", "H100", "--gpus", "256", "--gpus-per-node", "8"]
    cli = json.loads(run("predict", *args, "--node-gbps", "3200", "--micro-batch", "2", "--json").stdout)
    pred = planner.predict({"model": "Llama-2-70B"}, gpu="H100", gpus=256, gpus_per_node=8, node_gbps=3200,
                           micro_batch=2)  # fmt: skip
    assert pred.tokens_per_s == pytest.approx(cli["tokens_per_s"], rel=1e-12)
    assert pred.binding == cli["binding"] and pred.to_frame().shape[0] == 1


def test_bad_input_raises_the_commands_error():
    with pytest.raises(ScenarioError, match="unknown field; did you mean seq_len"):
        planner.plan({"workload": {"model": "Llama-3-8B", "seqlen": 8192}, "requirement": {"gpus": 8}})
    with pytest.raises(ScenarioError, match="give a file path, a mapping or a Scenario"):
        planner.plan(42)
    with pytest.raises(AttributeError):
        planner.no_such_function  # noqa: B018


def test_an_error_names_the_keyword_that_set_the_value():
    with pytest.raises(ScenarioError, match=r"^keyword max_nodes: constraints.max_nodes = 0: must be at least 1"):
        planner.plan(ROOT / "examples" / "bloom-176b-v100.yaml", max_nodes=0)
    with pytest.raises(ScenarioError, match=r"^keyword workload__seqlen: workload.seqlen = 5: unknown field"):
        planner.plan({"workload": {"model": "Llama-3-8B"}, "requirement": {"gpus": 8}}, workload__seqlen=5)
