"""Calibration: the fit recovers known parameters, the shipped default is the fit of the database, leave-one-
source-out validation, the measurement database itself, and the CLI round trips."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from support import DS2928

from planner.base.errors import PlannerError
from planner.base.resources import data_dir
from planner.catalog.load import load_catalog
from planner.model import performance as perf
from planner.model.calibration import Calibration, load_calibration
from planner.model.fitting import calibrate, fit, read_measurements

DATABASE = data_dir() / "measurements.csv"


def synthetic(truth: Calibration) -> pd.DataFrame:
    """Measurements the model itself produces with known parameters: a fit must recover them."""
    rows = [
        dict(
            params=p,
            layers=layers,
            hidden=hidden,
            gpus=n * 8,
            scale_up_gpus=8,
            micro_batch=b,
            seq_len=2048,
            scale_out_gbps=g,
            fabric=f,
            framework=fw,
            gpu="A100-80GB",
            architecture="ampere",
            peak_tflops=312.0,
            hbm_gib=80.0,
            hbm_gb_per_s=2039.0,
            scale_up_gb_per_s=300.0,
        )
        for p, layers, hidden in ((125e6, 12, 768), (1.3e9, 24, 2048), (13e9, 40, 5120), (70e9, 80, 8192))
        for n in (1, 4, 16, 64)
        for b in (1, 4)
        for g in (200.0, 800.0, 1600.0)
        for f in ("ib", "roce")
        for fw in ("deepspeed", "fsdp")
    ]
    frame = pd.DataFrame(rows)
    evaluated = perf.evaluate(frame, truth)
    frame["measured"] = evaluated["tokens_per_s"] / frame["gpus"]
    frame["band_low"] = frame["band_high"] = np.nan
    frame["unit"], frame["weight"], frame["offload"] = "tokens", 1.0, "none"
    frame["stack"], frame["precision"], frame["attention_kernel"] = "eager", "bf16", "flash"
    frame["measured_memory_gib"] = np.nan
    frame["row"] = range(2, len(frame) + 2)
    frame["id"] = frame["source_group"] = frame["publication"] = frame["row"].astype(str)  # each point a source
    return frame


def test_fit_recovers_known_parameters():
    truth = Calibration(
        gemm_efficiency={"ampere": 0.62},
        width_k=2.5,
        eta_net={"ib": 0.83, "roce": 0.71},
        overlap={"deepspeed": 0.2, "fsdp": 0.85},
        latency_scale=1.3,
    )
    fitted = fit(synthetic(truth), "synthetic")
    assert fitted.gemm_efficiency["ampere"] == pytest.approx(0.62, rel=0.02)
    assert fitted.width_k == pytest.approx(2.5, rel=0.05)
    assert fitted.eta_net["ib"] == pytest.approx(0.83, rel=0.02)
    assert fitted.eta_net["roce"] == pytest.approx(0.71, rel=0.02)
    assert fitted.overlap["deepspeed"] == pytest.approx(0.2, abs=0.03)
    assert fitted.overlap["fsdp"] == pytest.approx(0.85, abs=0.03)
    assert fitted.latency_scale == pytest.approx(1.3, rel=0.05)
    assert fitted.fit["in_sample_median_abs_error"] < 0.01


@pytest.fixture(scope="module")
def shipped():
    """The database fitted and cross-validated, as `planner calibrate` writes the default (one run, shared)."""
    return calibrate(load_catalog(), [], database=True)


@pytest.mark.slow
def test_shipped_default_is_the_fit_of_the_database(shipped):
    """Reproducible: refitting the database gives the shipped parameters and ranges."""
    refit, _, _ = shipped
    default = Calibration.default()
    assert refit.fit["parameters"] == pytest.approx(default.fit["parameters"], rel=1e-3, abs=1e-6)
    assert refit.uncertainty.keys() == default.uncertainty.keys()


def test_leave_one_source_out_is_the_reported_figure(shipped):
    """The headline claim (docs/model.md, README): leave-one-source-out median error over the database, and
    the #2928 bands hold at 2K tokens/GPU."""
    calibration, report, cv = shipped
    assert set(cv["source_group"]) == set(report["source_group"]) and len(cv) == len(report)
    loso = calibration.fit["leave_one_source_out"]
    assert loso["median_abs_error"] == pytest.approx(cv["abs_error"].median(), abs=1e-4)
    assert loso["median_abs_error"] > calibration.fit["in_sample_median_abs_error"]  # out of source is harder
    bands = report[report["source_group"] == "deepspeed-issue-2928"]
    assert len(bands) == 4 and (bands["abs_error"] < 0.01).all()


def test_validation_reports_publications_architectures_coverage_and_memory(shipped):
    """`planner validate`'s figures (docs/model.md section 6): leave-one-publication-out error per GPU
    architecture, the error with each architecture left out, the share of points inside their p10-p90 range built
    from the other publications alone, and the memory model against published peaks."""
    calibration, _, _ = shipped
    fit = calibration.fit
    lopo, by_arch, memory = fit["leave_one_publication_out"], fit["leave_one_architecture_out"], fit["memory"]
    assert set(lopo["per_architecture"]) == {"ampere", "blackwell", "blackwell-ultra", "cdna3", "hopper", "volta"}
    assert set(by_arch["per_source"]) == set(lopo["per_architecture"])  # each architecture left out in turn
    assert 0.5 < lopo["range_coverage"] < 1 and lopo["range_points"] > 300
    assert memory["points"] >= 20 and 0 < memory["median_abs_error"] < 0.5
    assert calibration.uncertainty["unmeasured architecture"]["sources"] > 10


def test_efficiency_belongs_to_the_architecture_not_the_gpu():
    """H100 and H200 share GH100's fitted GEMM efficiency; Blackwell Ultra takes Blackwell's, scaled by their
    MAMF priors; an architecture without a fit (nor a measured relative) takes its own prior scaled by the
    measured architectures' median fitted/prior ratio."""
    from planner.assumptions import model as A

    fitted = Calibration(gemm_efficiency={"hopper": 0.72, "ampere": 0.87 * 0.9, "blackwell": 0.6})
    assert fitted.gemm_efficiency_for("hopper") == pytest.approx(0.72)
    ultra = 0.6 * A.GEMM_EFFICIENCY_PRIOR["blackwell-ultra"].value / A.GEMM_EFFICIENCY_PRIOR["blackwell"].value
    assert fitted.gemm_efficiency_for("blackwell-ultra") == pytest.approx(ultra)
    ratios = sorted([0.72 / 0.80, 0.9, 0.6 / 0.78])  # hopper, ampere, blackwell over their MAMF priors
    assert fitted.gemm_efficiency_for("cdna4") == pytest.approx(0.68 * ratios[1])
    assert Calibration().gemm_efficiency_for("cdna4") == pytest.approx(0.68)  # nothing fitted: the prior
    assert not fitted.measured("blackwell-ultra") and fitted.measured("blackwell")


def test_an_unmeasured_architecture_gets_the_left_out_range_and_a_warning():
    cal = Calibration.default()
    assert not cal.measured("rubin")
    low, high, group = cal.range_factors("rubin", "fsdp", "ib")
    measured_low, measured_high, _ = cal.range_factors("hopper", "fsdp", "ib")
    assert group == "unmeasured architecture" and high / low > measured_high / measured_low
    assert "no training measurement" in cal.unmeasured_note("rubin", "Rubin")
    assert cal.unmeasured_note("hopper", "H100-SXM") == ""


def test_uncertainty_quantiles_are_ordered():
    q = Calibration.default().uncertainty["all"]
    assert q["p5"] <= q["p10"] <= q["p50"] <= q["p90"] <= q["p95"]
    low, high, group = Calibration.default().range_factors("hopper", "fsdp", "ib")
    assert group and low <= 1 <= high


def test_coverage_is_the_fewest_tokens_of_multi_node_runs_and_warns_below():
    rows = [m for _, m in read_measurements(DATABASE) if m.gpus > m.gpus_per_node and m.framework == "fsdp"]
    fewest = min(m.tokens_per_gpu if m.tokens_per_gpu is not None else m.seq_len * m.micro_batch for m in rows)
    cal = Calibration.default()
    assert cal.coverage["fsdp"] == fewest == 512  # DeepCompile's FSDP runs: 4 nodes at 1 x 512 tokens per GPU
    note = cal.extrapolation_note("fsdp", 256, multi_node=True)
    assert "extrapolated" in note and "512" in note and "--confidence 0.9" in note
    assert cal.extrapolation_note("fsdp", 512, multi_node=True) == ""
    assert cal.extrapolation_note("fsdp", 256, multi_node=False) == ""  # no network to hide
    assert Calibration().extrapolation_note("fsdp", 256, multi_node=True) == ""  # priors claim no coverage


def test_predict_warns_outside_the_measured_range(run):
    args = ["predict", "--model", "Llama-2-70B", "--gpu", "A100-80GB", "--gpus", "64", "--gpus-per-node", "8"]
    args += ["--node-gbps", "1600", "--framework", "fsdp", "--seq-len", "256", "--json"]
    assert "fewer than any multi-node fsdp run" in json.loads(run(*args, "--micro-batch", "1").stdout)["extrapolation"]
    assert json.loads(run(*args, "--micro-batch", "2").stdout)["extrapolation"] == ""
    assert "warning: extrapolated" in run(*args[:-1], "--micro-batch", "1").stdout


def test_database_rows_are_sourced_and_valid():
    rows = read_measurements(DATABASE)
    assert len(rows) > 300
    groups = {m.source_group for _, m in rows}
    assert len(groups) >= 10
    for _, m in rows:
        assert m.source and m.confidence and m.derivation, m.id
        assert (m.tokens_per_s_per_gpu is not None) or (m.tokens_per_s_low or m.tokens_per_s_high), m.id


def test_calibrate_cli_writes_a_file_predict_accepts(run, write, tmp_path):
    mine = write(
        "mine.csv",
        "gpu,gpus,gpus_per_node,node_gbps,fabric,model,seq_len,micro_batch,framework,tokens_per_s_per_gpu\n"
        "H100,128,8,3200,ib,Llama-2-70B,4096,1,fsdp,700\nH100,256,8,3200,ib,Llama-2-70B,4096,1,fsdp,680\n",
    )
    out = tmp_path / "cal.json"
    result = run("calibrate", mine, "-o", out, "--no-cross-validation", "-q")
    assert result.exit_code == 0, result.output
    assert "your measurements" in result.stdout and "gemm[hopper]" in result.stdout
    cal = load_calibration(out)
    assert "hopper" in cal.gemm_efficiency and cal.uncertainty == {}
    predicted = run("predict", *DS2928, "--node-gbps", "800", "--calibration", out, "--json")
    assert json.loads(predicted.output)["achieved_tflops_per_gpu"] > 0


def test_calibrate_alone_needs_tokens(run, write, tmp_path):
    path = write(
        "m.csv", "gpu,gpus,gpus_per_node,node_gbps,fabric,params,measured_tflops\nV100,384,16,100,ib,176B,20\n"
    )
    result = run("calibrate", path, "--no-database", "-o", tmp_path / "cal.json", "-q")  # (a device is refused)
    assert result.exit_code == 1
    assert "tokens per GPU unknown" in result.stderr


def test_bad_measurement_rows_name_row_and_column(run, write):
    path = write(
        "m.csv",
        "gpu,gpus,gpus_per_node,node_gbps,fabric,params,tokens_per_gpu,measured_tflops\n"
        "V100,384,16,100,ib,176B,2048,fast\nV100,384,16,100,carrier-pigeon,176B,2048,20\n",
    )
    result = run("calibrate", path)
    assert result.exit_code == 1
    assert f"{path}:2: column 'measured_tflops' = 'fast'" in result.stderr
    assert f"{path}:3: column 'fabric' = 'carrier-pigeon'" in result.stderr


def test_bad_calibration_file(write):
    with pytest.raises(PlannerError, match="overlap"):
        load_calibration(write("c.json", '{"overlap": 3}'))
    with pytest.raises(PlannerError, match="cannot read calibration file"):
        load_calibration("/nonexistent/cal.json")


def test_planner_0_1_calibration_files_still_load(write):
    old = write("old.json", '{"eta_net": {"ib": 0.78}, "overlap": 0.27}')
    cal = load_calibration(old)
    assert cal.overlap_for("deepspeed") == cal.overlap_for("fsdp") == 0.27


def test_a_per_gpu_calibration_is_refused_with_the_fix(write):
    """A file of the per-GPU model (eta_comp per SKU) belongs to a different model: refused in one line."""
    old = write("old.json", '{"eta_comp": {"V100-32GB": 0.43}, "overlap": 0.27}')
    with pytest.raises(PlannerError, match="per-GPU model.*refit it.*planner calibrate"):
        load_calibration(old)


def test_model_errors_name_the_measurement_row(run, write):
    path = write(
        "m.csv",
        "gpu,gpus,gpus_per_node,node_gbps,fabric,params,tokens_per_gpu,measured_tflops\n"
        "V100,384,16,100,ib,176B,2048,20\nV100,100,16,100,ib,176B,2048,20\n",
    )
    result = run("calibrate", path, "-o", path.parent / "cal.json", "-q")
    assert result.exit_code != 0 and f"{path}:3:" in result.stderr and "not a multiple" in result.stderr


def test_band_low_above_high_is_rejected(run, write):
    path = write(
        "m.csv",
        "gpu,gpus,gpus_per_node,node_gbps,fabric,params,tokens_per_gpu,tflops_per_gpu_low,"
        "tflops_per_gpu_high\nV100,384,16,100,ib,176B,2048,40,30\n",
    )
    result = run("calibrate", path)
    assert result.exit_code == 1 and "the band's low 40 is above its high 30" in result.stderr


@pytest.mark.slow
def test_validate_cli_prints_out_of_source_error(run):
    result = run("validate", "-q")
    assert result.exit_code == 0, result.output
    assert "leave-one-source-out: median |error|" in result.stdout and "mosaicml-a100-40gb" in result.stdout
    assert "leave-one-publication-out (a whole document out)" in result.stdout


def test_a_held_out_set_exports_as_database_rows(tmp_path):
    """docs/holdout's --export writes a set in the database's columns: read back as measurements, every row
    keeps its measured figure (so `planner validate FILE` judges the fit with the set as one more source)."""
    script = Path(__file__).resolve().parents[1] / "docs" / "holdout" / "predict_holdout.py"
    spec = importlib.util.spec_from_file_location("predict_holdout", script)
    holdout = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(holdout)
    rows = holdout.read_rows()
    path = tmp_path / "megatron.csv"
    holdout.export(rows, "megatron-sc21-zero3", path)
    read = read_measurements(path)
    # Megatron-LM SC21 Table 2: 144, 88, 44 TFLOPs (175B) and 138, 98, 48 (530B) -> tokens/s per GPU
    assert [m.tokens_per_s_per_gpu for _, m in read] == [100.42, 61.37, 30.68, 32.06, 22.77, 11.15]
    assert {m.source_group for _, m in read} == {"megatron-sc21-zero3"}
    with pytest.raises(SystemExit, match="choose a new file name"):  # never over an existing file
        holdout.export(rows, "megatron-sc21-zero3", path)
