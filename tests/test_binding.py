"""The binding verdict agrees with where the step's time goes, and long text wraps instead of being cut."""

from __future__ import annotations

from planner.model import binding
from planner.report.terminal import format_table


def test_compute_bound_only_when_little_communication_is_exposed():
    assert binding.label("compute", 0.2, 5.0) == "compute"  # 4% of the step
    # the case: 1.89 s of exposed communication in a 5.68 s step is a third of it, not "compute"
    assert binding.label("compute", 1.89, 5.68) == "compute, with 33% of the step waiting on communication"
    assert "buys little" not in binding.advice("compute", 1.89, 5.68)
    assert "buys little" in binding.advice("compute", 0.2, 5.0)


def test_communication_bound_names_the_part_and_the_share():
    assert binding.label("bandwidth", 3.0, 4.0) == "network bandwidth (75% of the step waiting on communication)"
    assert binding.label("latency", 1.0, 2.0).startswith("collective latency (50%")
    assert binding.label("memory", 0.0, 1.0) == "memory (does not fit)"


def test_predict_does_not_call_a_third_of_the_step_compute_bound(run):
    args = ["--model", "Llama-2-70B", "--gpu", "H100", "--gpus", "1024", "--gpus-per-node", "8"]
    result = run("predict", *args, "--node-gbps", "2800", "--micro-batch", "1")
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if x.strip().startswith("binding"))
    assert "waits on communication" in line and "buys little" not in line


def test_wrapped_columns_keep_all_their_text():
    records = [{"option": "#2", "configuration": "word " * 30 + "FS-NDR-64"}, {"option": "#3", "configuration": "x"}]
    text = format_table(records, ["option", "configuration"], max_width=40, wrap=("configuration",))
    assert "FS-NDR-64" in text and "…" not in text
    assert all(len(line) <= len("option") + 2 + 40 for line in text.splitlines())
    cut = format_table(records, ["option", "configuration"], max_width=40)
    assert "FS-NDR-64" not in cut and "…" in cut


def test_latency_advice_names_deepspeeds_rank_loop_when_it_is_a_large_part():
    """When a quarter or more of the latency term is DeepSpeed's Python loop over the ranks, the advice says a
    network cannot shorten it and names the software choice; below that, the usual advice stands."""
    text = binding.advice("latency", 0.9, 1.0, rank_loop_s=0.409, latency_s=0.893)
    assert "0.409 s of its 0.893 s is DeepSpeed's Python loop" in text and "PyTorch FSDP" in text
    assert "PyTorch FSDP" not in binding.advice("latency", 0.9, 1.0, rank_loop_s=0.2, latency_s=0.893)
    assert "PyTorch FSDP" not in binding.advice("bandwidth", 0.9, 1.0, rank_loop_s=0.8, latency_s=0.9)
