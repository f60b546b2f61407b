"""Calibration: the fit recovers known parameters, reproduces the shipped default, and the CLI round trip."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from conftest import DS2928

from planner import perf
from planner.calibration import Calibration, load_calibration
from planner.catalog import load_catalog
from planner.errors import PlannerError
from planner.fitting import fit, fit_file
from planner.resources import data_dir

MEASURED = data_dir() / "zero3_v100_ds2928.csv"


def synthetic(truth: Calibration) -> pd.DataFrame:
    rows = [
        dict(
            params=p,
            gpus=n * 8,
            gpus_per_node=8,
            micro_batch=b,
            seq_len=2048,
            node_gbps=g,
            fabric=f,
            gpu="A100-80GB",
            peak_tflops=312.0,
            hbm_gib=80.0,
            intra_node_gb_per_s=300.0,
        )
        for p in (13e9, 70e9)
        for n in (4, 16)
        for b in (1, 4)
        for g in (200.0, 800.0, 1600.0)
        for f in ("ib", "roce")
    ]
    frame = pd.DataFrame(rows)
    frame["measured_tflops"] = perf.evaluate(frame, truth)["achieved_tflops_per_gpu"]
    frame["band_low"] = frame["band_high"] = float("nan")
    frame["row"] = range(2, len(frame) + 2)
    return frame


def test_fit_recovers_known_parameters():
    truth = Calibration(eta_comp={"A100-80GB": 0.62}, eta_net={"ib": 0.83, "roce": 0.71}, overlap=0.35)
    fitted, report = fit(synthetic(truth), "synthetic")
    assert fitted.eta_comp["A100-80GB"] == pytest.approx(0.62, rel=0.01)
    assert fitted.eta_net["ib"] == pytest.approx(0.83, rel=0.01)
    assert fitted.eta_net["roce"] == pytest.approx(0.71, rel=0.01)
    assert fitted.overlap == pytest.approx(0.35, abs=0.01)
    assert report["miss_tflops"].abs().max() < 0.5
    assert fitted.fit["rms_miss_tflops"] < 0.3


def test_shipped_default_is_the_fit_of_the_measurements():
    """The default is reproducible: refitting #2928 at 2048 tokens/GPU gives the shipped numbers."""
    refit, report = fit_file(load_catalog(), MEASURED, 2048)
    default = Calibration.default()
    assert refit.eta_comp == pytest.approx(default.eta_comp, abs=1e-3)
    assert refit.eta_net == pytest.approx(default.eta_net, abs=1e-3)
    assert refit.overlap == pytest.approx(default.overlap, abs=1e-3)
    assert (report["miss_tflops"] == 0).all()  # every band met


def test_calibrate_cli_writes_a_file_predict_accepts(run, tmp_path):
    out = tmp_path / "cal.json"
    result = run("calibrate", MEASURED, "--tokens-per-gpu", "2048", "-o", out)
    assert result.exit_code == 0, result.output
    assert "RMS miss" in result.output and "eta_net[ib]" in result.output
    cal = load_calibration(out)
    assert set(cal.eta_comp) == {"V100-32GB"}
    predicted = run(
        "predict",
        *DS2928,
        "--node-gbps",
        "800",
        "--calibration",
        out,
        "--json",
    )
    assert json.loads(predicted.output)["achieved_tflops_per_gpu"] > 40


def test_calibrate_needs_tokens(run, tmp_path):
    result = run("calibrate", MEASURED, "-o", tmp_path / "cal.json")
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


def test_model_errors_name_the_measurement_row(run, write):
    path = write(
        "m.csv",
        "gpu,gpus,gpus_per_node,node_gbps,fabric,params,tokens_per_gpu,measured_tflops\n"
        "V100,384,16,100,ib,176B,2048,20\nV100,100,16,100,ib,176B,2048,20\n",
    )
    result = run("calibrate", path, "-o", path.parent / "cal.json")
    assert result.exit_code != 0 and f"{path}:3:" in result.stderr and "not a multiple" in result.stderr


def test_band_low_above_high_is_rejected(run, write):
    path = write(
        "m.csv",
        "gpu,gpus,gpus_per_node,node_gbps,fabric,params,tokens_per_gpu,tflops_per_gpu_low,"
        "tflops_per_gpu_high\nV100,384,16,100,ib,176B,2048,40,30\n",
    )
    result = run("calibrate", path)
    assert result.exit_code == 1 and "is above tflops_per_gpu_high" in result.stderr
