"""What the terminal says: files written, catalog files as read (relative where they can be), per-token latency,
progress on stderr."""

from __future__ import annotations

import csv

from planner.base.resources import catalogs_dir, display_name, examples_dir

BLOOM = examples_dir() / "bloom-176b-v100.yaml"


def test_plan_confirms_each_file_on_stderr_and_names_catalogs_relatively(run, tmp_path):
    bom, whole = tmp_path / "bom.csv", tmp_path / "plan.json"
    result = run("plan", BLOOM, "-o", whole, "--csv", bom)
    assert result.exit_code == 0, result.output
    assert f"wrote {whole}" in result.stderr and f"wrote {bom}" in result.stderr
    assert "wrote" not in result.stdout and "... building candidate configurations" in result.stderr
    skip = ("not priced", "total", "labour")  # installation labour cites a named assumption
    sources = [row["source"] for row in csv.DictReader(bom.open()) if row["category"] not in skip]
    shipped = display_name(catalogs_dir() / "servers.csv").removesuffix("servers.csv")  # the files read
    assert sources and all(s.startswith(shipped) for s in sources)
    assert "servers.csv:" in result.stdout  # (the terminal table wraps a long installed path over lines)
    assert "wrote" not in run("plan", BLOOM, "-q", "--csv", bom).stderr


def test_display_names(tmp_path, monkeypatch):
    monkeypatch.chdir(catalogs_dir().parent)  # a checkout, or the installed package's data folder
    assert display_name(catalogs_dir() / "nics.csv") == "catalogs/nics.csv"
    monkeypatch.chdir(tmp_path)
    assert display_name(catalogs_dir() / "nics.csv") == str((catalogs_dir() / "nics.csv").resolve())
    (tmp_path / "quotes").mkdir()
    assert display_name(tmp_path / "quotes" / "mine.csv") == "quotes/mine.csv"
    assert display_name("/elsewhere/theirs.csv") == "/elsewhere/theirs.csv"


def test_inference_latency_is_per_generated_token(run, tmp_path):
    path = tmp_path / "inference.json"
    result = run("inference", "--params", "175B", "--latency", "1s", "-o", path)
    assert result.exit_code == 0, result.output
    assert "per generated token" in result.stdout and "KV cache" in result.stdout and "not modelled" in result.stdout
    assert "... evaluating every machine option" in result.stderr and f"wrote {path}" in result.stderr


def test_cloud_progress_and_confirmation(run, tmp_path):
    path = tmp_path / "cloud.json"
    result = run("cloud", examples_dir() / "cloud-70b.yaml", "-o", path)
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith("... ") and f"wrote {path}" in result.stderr
