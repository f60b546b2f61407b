"""The command line through CliRunner: exit codes, messages, JSON shapes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support import DS2928

from planner import __version__
from planner.base.resources import catalogs_dir, examples_dir


def test_version_and_help(run):
    assert run("--version").output.strip() == f"planner, version {__version__}"
    for command in (
        [],
        ["catalog"],
        ["catalog", "list"],
        ["catalog", "validate"],
        ["catalog", "schema"],
        ["predict"],
        ["bandwidth"],
        ["calibrate"],
    ):
        result = run(*command, "--help")
        assert result.exit_code == 0
        assert "Example" in result.output, command


# ---------------------------------------------------------------- catalog


def test_catalog_list_summary_and_kind(run):
    summary = run("catalog", "list")
    assert summary.exit_code == 0
    for kind in ("gpus", "servers", "nics", "switches", "optics", "cloud", "models"):
        assert kind in summary.output
    gpus = run("catalog", "list", "gpus")
    assert gpus.exit_code == 0 and "H100-SXM" in gpus.output and "peak_bf16_tflops" in gpus.output


def test_catalog_list_formats(run):
    as_json = json.loads(run("catalog", "list", "nics", "--format", "json").output)
    assert all("origin_file" in r and "price_usd" in r for r in as_json)
    assert run("catalog", "list", "models", "--format", "csv").output.startswith("name,params")


def test_validate_shipped_catalogs(run):
    result = run("catalog", "validate", catalogs_dir())
    assert result.exit_code == 0
    assert result.output.startswith("OK: 9 file(s)")


def test_validate_reports_every_problem_and_exits_1(run, write):
    header = "name,vendor,peak_bf16_tflops,hbm_gib,hbm_gb_per_s,tdp_w,source,date,confidence\n"
    path = write("gpus.csv", header + "X,Acme,fast,80,3000,700,q,2026,solid\nY,Acme,900,80,3000,-1,q,2026,solid\n")
    result = run("catalog", "validate", path)
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith(f"error: {path}:2: column 'peak_bf16_tflops' = 'fast'")
    assert lines[1].startswith(f"error: {path}:3: column 'tdp_w' = '-1': must be at least 0")
    assert lines[-1] == "error: 2 problems found"
    assert "Traceback" not in result.output + result.stderr


def test_validate_missing_file(run, tmp_path):
    result = run("catalog", "validate", tmp_path / "missing.csv")
    assert result.exit_code == 1
    assert result.stderr.strip() == f"error: {tmp_path / 'missing.csv'}: file not found; check the path"


def test_schema_is_json_schema(run):
    schema = json.loads(run("catalog", "schema", "switches").output)
    assert schema["additionalProperties"] is False
    assert {"sku", "fabric", "ports", "port_gbps", "price_usd", "source", "date"} <= set(schema["properties"])
    assert run("catalog", "schema", "widgets").exit_code == 2


@pytest.mark.slow
def test_installed_package_finds_its_data_from_any_folder(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "planner", "catalog", "validate", str(catalogs_dir())],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("OK: 9 file(s)")


# ---------------------------------------------------------------- predict


@pytest.mark.parametrize(("gbps", "low", "high"), [(100, 0, 20), (200, 30, 40), (400, 30, 40), (800, 40, 1e9)])
def test_predict_reproduces_deepspeed_2928(run, gbps, low, high):
    result = run("predict", *DS2928, "--node-gbps", gbps, "--fabric", "ib", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    for key in (
        "achieved_tflops_per_gpu",
        "mfu",
        "t_compute_s",
        "t_comm_s",
        "t_step_s",
        "bytes_per_domain_per_step",
        "node_gbps",
        "memory_per_gpu_gib",
        "fits_memory",
    ):
        assert key in data
    achieved = data["achieved_tflops_per_gpu"]
    assert (low <= achieved <= high) if low else achieved < high


def test_predict_text_explains_the_step(run):
    result = run("predict", *DS2928, "--nic-gbps", "100G", "--nics-per-node", "8")
    assert result.exit_code == 0
    for word in ("compute", "communication", "latency", "exposed comm", "achieved", "MFU", "memory", "binding"):
        assert word in result.output


def test_predict_text_splits_latency_and_flags_a_range_beside_the_point(run, write):
    """The latency line: NCCL's ring and the host time (hooks per call, DeepSpeed's loop over the ranks per
    reduce-scatter), by hand; a range that out-of-source errors put wholly below the point says so."""
    optimistic = {"p5": 0.2, "p10": 0.2, "p25": 0.25, "p50": 0.3, "p75": 0.35, "p90": 0.4, "p95": 0.45}
    cal = {"latency_scale": 1.0, "collective_overhead_s": {"deepspeed": 1e-4}, "rank_overhead_s": {"deepspeed": 1e-5}}
    path = write("cal.json", json.dumps(cal | {"uncertainty": {"all": optimistic}}))
    text = run("predict", *DS2928, "--node-gbps", "100", "--calibration", path).output
    # 176B estimated as 96 layers (GPT-3's shape): a gather per Linear per pass, 5e8-parameter gradient buckets
    calls = 2 * 4 * 96 + 352
    ring = calls * (8.4 + 3.4 * (384 - 24) + 14.0 * (24 - 1)) * 1e-6
    loop = (96 * 10 + 3) * 384 * 1e-5  # each of 963 gradient tensors sliced once per rank
    host = calls * 1e-4 + loop
    assert f"ring {ring:.3g} s ({calls} collectives x NCCL ring latency) + host {host:.3g} s" in text
    assert f"a loop over every rank per gradient tensor {loop:.3g} s" in text
    # measured / predicted at p10 and p90: exp(-0.4) = 0.67 and exp(-0.2) = 0.82, so 18% to 33% below
    assert "the middle 80% of all runs in the database came in 18%-33% below the model" in text
    path = write("fw.json", json.dumps(cal | {"uncertainty": {"deepspeed": optimistic}}))  # the group is named
    text = run("predict", *DS2928, "--node-gbps", "100", "--calibration", path).output
    assert "out-of-publication errors for runs of this framework)" in text and "80% of runs of this framework" in text
    pessimistic = {"p5": -0.45, "p10": -0.4, "p25": -0.35, "p50": -0.3, "p75": -0.25, "p90": -0.2, "p95": -0.2}
    path = write("low.json", json.dumps(cal | {"uncertainty": {"all": pessimistic}}))
    text = run("predict", *DS2928, "--node-gbps", "100", "--calibration", path).output
    assert "came in 22%-49% above the model" in text  # exp(0.2) = 1.22, exp(0.4) = 1.49
    path = write("even.json", json.dumps(cal | {"uncertainty": {"all": dict.fromkeys(optimistic, 0.0)}}))
    text = run("predict", *DS2928, "--node-gbps", "100", "--calibration", path).output
    assert "tokens/s/GPU" in text and "came in" not in text


LLAMA_64_H100 = [
    "--model",
    "Llama-2-70B",
    "--gpu",
    "H100",
    "--gpus",
    "64",
    "--gpus-per-node",
    "8",
    "--node-gbps",
    "400",
    "--micro-batch",
    "1",
    "--json",
]


def test_predict_with_model_and_zeropp(run):
    plain = json.loads(run("predict", *LLAMA_64_H100).output)
    zpp = json.loads(run("predict", *LLAMA_64_H100, "--zeropp").output)
    assert plain["seq_len"] == 4096
    assert zpp["bytes_per_domain_per_step"] == pytest.approx(plain["bytes_per_domain_per_step"] / 4)
    assert zpp["achieved_tflops_per_gpu"] > plain["achieved_tflops_per_gpu"]


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--gpus", "0"], 2, "0 is not in the range 1<=x<=10000000"),
        (["--gpus", "100"], 2, "not a multiple of --gpus-per-node 16"),
        (["--gpu", "V1000"], 2, "--gpu: unknown GPU 'V1000': did you mean"),  # a command-line mistake: exit 2
        (["--node-gbps", "-100"], 2, "must be positive"),
        (["--node-gbps", "fast"], 2, "'fast' is not a quantity"),
        (["--model", "BLOOM-176B"], 2, "exactly one of --params"),
    ],
)
def test_predict_bad_input_is_one_line(run, args, code, message):
    base = dict(zip(DS2928[::2], DS2928[1::2], strict=True)) | {"--node-gbps": "100"}
    extra = dict(zip(args[::2], args[1::2], strict=True))
    flat = [x for k, v in (base | extra).items() for x in (k, v)]
    if "--model" in extra:
        flat += []  # both --params and --model given
    result = run("predict", *flat)
    assert result.exit_code == code
    assert message in result.output + result.stderr
    assert "Traceback" not in result.output + result.stderr


# ---------------------------------------------------------------- bandwidth


def test_bandwidth_answers_the_2928_question(run):
    result = run("bandwidth", *DS2928, "--target-tflops", "40")
    assert result.exit_code == 0, result.output
    assert "needs >=" in result.output and "IB" in result.output and "RoCE" in result.output
    for gbps in ("100", "800", "3200"):
        assert gbps in result.output
    data = json.loads(run("bandwidth", *DS2928, "--target-tflops", "40", "--json").output)
    ib = next(n for n in data["needed"] if n["fabric"] == "ib" and not n["zeropp"])
    roce = next(n for n in data["needed"] if n["fabric"] == "roce" and not n["zeropp"])
    zpp = next(n for n in data["needed"] if n["fabric"] == "ib" and n["zeropp"])
    assert 400 < ib["node_gbps_needed"] < 800  # measured: 30-40 at 400, 40+ at 800
    assert roce["node_gbps_needed"] > ib["node_gbps_needed"] > zpp["node_gbps_needed"]
    assert len(data["sweep"]) == 24


def test_bandwidth_unreachable_target_says_the_ceiling(run):
    result = run("bandwidth", *DS2928, "--target-tflops", "100")
    assert result.exit_code == 0
    assert "unreachable: the ceiling is" in result.output and "compute" in result.output


def test_bandwidth_single_node_is_not_called_reachable(run):
    data = json.loads(
        run(
            "bandwidth",
            "--params",
            "176B",
            "--gpu",
            "V100",
            "--gpus",
            "16",
            "--gpus-per-node",
            "16",
            "--tokens-per-gpu",
            "2048",
            "--target-tflops",
            "100",
            "--json",
        ).stdout
    )
    assert all(n["node_gbps_needed"] is None for n in data["needed"])  # null: unreachable
    assert all(not n["fits_memory"] for n in data["needed"])


def test_calibration_values_are_fractions(run, write):
    bad = write("c.json", '{"gemm_efficiency": {"volta": 5}}')
    result = run("predict", *DS2928, "--node-gbps", "100", "--calibration", bad)
    assert result.exit_code == 1 and "gemm_efficiency.volta = 5: must be at most 1" in result.stderr


def test_predict_takes_framework_fabric_offload_checkpointing(run):
    args = ["--model", "Llama-2-70B", "--gpu", "H100", "--gpus", "256", "--gpus-per-node", "8", "--micro-batch", "1"]
    result = run(
        "predict", *args, "--node-gbps", "3200", "--framework", "fsdp", "--fabric", "efa", "--offload", "cpu",
        "--checkpointing", "op", "--stack", "compile", "--precision", "fp8", "--fp8-allgather", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["framework"], data["fabric"], data["offload"], data["checkpointing"]) == ("fsdp", "efa", "cpu", "op")
    assert (data["stack"], data["precision"], data["fp8_allgather"]) == ("compile", "fp8", True)
    assert data["t_offload_s"] > 0 and data["tokens_per_s_p10"] < data["tokens_per_s_point"] < data["tokens_per_s_p90"]


@pytest.mark.parametrize(
    ("flag", "value", "allowed"),
    [("--framework", "colossal", "deepspeed, fsdp, megatron"), ("--fabric", "pigeon", "ib, roce, efa, tcpx, tcp"),
     ("--offload", "ssd", "none, cpu, nvme"), ("--checkpointing", "half", "full, selective, none")],
)  # fmt: skip
def test_predict_bad_choices_name_the_allowed_ones(run, flag, value, allowed):
    result = run("predict", *DS2928, "--node-gbps", "100", flag, value)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert all(choice in result.stderr for choice in allowed.split(", "))
    assert len([line for line in result.stderr.splitlines() if line.strip()]) <= 3


def test_zeropp_with_fsdp_is_refused_in_one_line(run):
    result = run("predict", *DS2928, "--node-gbps", "100", "--framework", "fsdp", "--zeropp")
    assert result.exit_code == 2 and "ZeRO++ (qwz/hpz/qgz) is a DeepSpeed feature" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--gpu", "H10O"], "error: --gpu: constraints.gpus[0]: unknown GPU 'H10O': did you mean H100"),
        (["--set", "constraints.gpus=[H10O]"], "error: --set constraints.gpus: constraints.gpus[0]: unknown GPU"),
        (["--set", "workload.seqlen=4096"], "--set workload.seqlen: workload.seqlen = 4096: unknown field; did you "
         "mean seq_len?"),
        (["--set", "constraints.max_nodes=abc"], "error: --set constraints.max_nodes: constraints.max_nodes = 'abc'"),
    ],
)  # fmt: skip
def test_a_value_from_the_command_line_is_blamed_on_the_command_line(run, args, message):
    """A mistake typed on the command line names the option it came from, not the scenario file."""
    result = run("plan", str(examples_dir() / "llama-70b-h100.yaml"), "-q", *args)
    assert result.exit_code != 0 and message in result.output + result.stderr
    assert "llama-70b-h100.yaml" not in result.output + result.stderr and "Traceback" not in result.output


def test_an_unknown_key_in_the_file_suggests_the_field(run, write):
    path = write("s.yaml", "workload:\n  model: Llama-2-70B\n  seqlen: 4096\nrequirement:\n  gpus: 64\n")
    result = run("plan", str(path), "-q")
    assert result.exit_code != 0
    assert "s.yaml: workload.seqlen = 4096: unknown field; did you mean seq_len?" in result.output + result.stderr


def test_an_unknown_key_in_a_fleet_file_suggests_the_field(run, write):
    """As for a plan scenario: the misspelt key of a list item and of the top level, each with its field."""
    text = (examples_dir() / "fleet-startup.yaml").read_text(encoding="utf-8")
    path = write("f.yaml", text.replace("horizon:", "horizn:", 1).replace("    tokens:", "    tokns:", 1))
    result = run("fleet", str(path), "-q")
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert any(line.startswith(f"error: {path}: training[0].tokns = ") and line.endswith(
        "unknown field; did you mean tokens? (see `planner fleet --schema`)") for line in lines), lines  # fmt: skip
    assert any("horizn = " in line and "did you mean horizon?" in line for line in lines), lines


def test_a_command_collects_young_objects_rarely_while_importing_and_restores_the_collector(run, monkeypatch):
    """main raises the young generation's threshold for the imports (each garbage collection there scans objects
    that live until exit) and imports_done puts the default back, as main's exit does for a command that never
    gets there: a caller in the same process (the API, the tests) collects as before."""
    import gc

    from planner.cli import base

    before, seen = gc.get_threshold(), []
    monkeypatch.setattr(base.gc, "freeze", lambda: seen.append(gc.get_threshold()))
    assert run("plan", "examples/bloom-176b-v100.yaml", "-q").exit_code == 0
    assert seen == [(base.IMPORT_GC_THRESHOLD, *before[1:])] and gc.get_threshold() == before
    assert run("--version").exit_code == 0 and gc.get_threshold() == before
