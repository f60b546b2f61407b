"""Predict the held-out measurements in holdout.csv (published runs that are NOT in the database) with the
planner's shipped calibration and report predicted/measured - 1 on tokens/s per GPU (docs/model.md section 6).

    python docs/holdout/predict_holdout.py            # report
    python docs/holdout/predict_holdout.py --write    # also fill holdout.csv's predicted columns
    python docs/holdout/predict_holdout.py --cli      # cross-check each row through `planner predict`
    python docs/holdout/predict_holdout.py --calibration my-cal.json   # judge another fit (`planner calibrate`)
    python docs/holdout/predict_holdout.py --export megatron-sc21-zero3 m.csv   # one set as a measurements CSV:
    planner validate --catalog docs/holdout/holdout_gpus.csv m.csv              # ... the fit with it as a source

Rows are read exactly like the database (planner.model.fitting.Measurement -> measurement_frame) and predicted with
planner.model.fitting.point_report's path (perf.decompose + perf.combine with Calibration.default()). The one
addition: YaFSDP rows with partial checkpointing (k of L layers re-computed; ckpt_fraction = k/L) are predicted
with the model's own decomposition for checkpointing "none", plus k/L of the extra FLOPs "full" adds
(hardware and attention FLOPs interpolated; everything else - traffic, latency, overheads - unchanged).
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from planner.catalog.load import load_catalog
from planner.model import performance as perf
from planner.model.calibration import load_calibration
from planner.model.fitting import Measurement, measurement_frame, predicted

HERE = Path(__file__).resolve().parent
CSV = HERE / "holdout.csv"
MODELS = HERE / "holdout_models.csv"
GPUS = HERE / "holdout_gpus.csv"  # GPUs of the held-out clusters that are not for sale (Leonardo, MareNostrum 5)
SCHEMA = list(Measurement.model_fields)  # the database columns (params is aliased model_params)
CLI = [sys.executable, "-m", "planner"]


def read_rows() -> list[dict]:
    with CSV.open(newline="") as f:
        return list(csv.DictReader(f))


def export(rows: list[dict], source_group: str, path: Path) -> None:
    """Write one held-out set in the database's columns, for `planner calibrate/validate PATH`."""
    chosen = [r for r in rows if r["source_group"] == source_group and r["headline"] == "1"]
    if not chosen:
        sys.exit(f"no headline rows of source_group {source_group!r} in {CSV.name}")
    columns = [c for c in SCHEMA if c in chosen[0]]
    try:
        with path.open("x", newline="") as f:  # never over an existing file
            writer = csv.DictWriter(f, columns, extrasaction="ignore")
            writer.writeheader()
            writer.writerows(chosen)
    except OSError as e:
        sys.exit(f"cannot write {path}: {e.strerror}; choose a new file name")
    print(f"wrote {len(chosen)} rows of {source_group} to {path}")


def measurements(rows: list[dict], overrides: dict | None = None) -> list[tuple[int, Measurement]]:
    out = []
    for i, r in enumerate(rows, start=2):
        rec = {k: v for k, v in r.items() if k in SCHEMA + ["params"] and v not in ("", None)}
        rec.update(overrides or {})
        if "params" in rec:
            rec["model_params"] = rec.pop("params")
        out.append((i, Measurement.model_validate(rec)))
    return out


def predict(
    rows: list[dict], overrides: dict | None = None, calibration: Path | None = None, adjust: dict | None = None
) -> pd.DataFrame:
    """Predict the rows (with `overrides` on every row's columns) under a calibration (None: the shipped
    planner/data/calibration_default.json) with `adjust` replacing some of its fields."""
    catalog = load_catalog([MODELS, GPUS])
    cal = load_calibration(calibration).model_copy(update=adjust or {})
    frame = measurement_frame(catalog, measurements(rows, overrides), None, str(CSV))
    cols = lambda fr: {c: fr[c].to_numpy() for c in fr.columns}  # noqa: E731
    parts = perf.decompose(cols(frame), len(frame))
    frac = np.array([float(r["ckpt_fraction"]) if r.get("ckpt_fraction") else np.nan for r in rows])
    partial = ~np.isnan(frac)
    if partial.any():
        none = perf.decompose(cols(frame.assign(checkpointing="none")), len(frame))
        full = perf.decompose(cols(frame.assign(checkpointing="full")), len(frame))
        for key in ("hw_flops_per_gpu", "attention_flops_per_gpu"):
            blend = none[key] + np.nan_to_num(frac) * (full[key] - none[key])
            parts[key] = np.where(partial, blend, parts[key])
    pred = predicted(parts, frame, cal)
    figures = perf.combine(parts, cal)
    out = pd.DataFrame(
        {
            "id": frame["id"],
            "source_group": frame["source_group"],
            "measured": frame["measured"],
            "predicted": pred,
            "binding": figures["binding"],
            "t_compute_s": figures["t_compute_s"],
            "t_comm_s": figures["t_comm_s"],
            "t_step_s": figures["t_step_s"],
            "fits_memory": figures["fits_memory"],
            "memory_gib": figures["memory_per_gpu_gib"],
        }
    )
    gpus = frame["gpus"].to_numpy()  # the printed p10-p90 range, per GPU
    out["inside_p10_p90"] = (figures["tokens_per_s_p10"] / gpus <= out["measured"]) & (
        out["measured"] <= figures["tokens_per_s_p90"] / gpus
    )
    out["error"] = out["predicted"] / out["measured"] - 1
    out["abs_error"] = out["error"].abs()
    out["headline"] = [int(r["headline"]) for r in rows]
    out["variant"] = [r["variant"] for r in rows]
    return out


def summary(res: pd.DataFrame) -> dict:
    head = res[res["headline"] == 1]
    per_set = head.groupby("source_group")["abs_error"].median()
    return {
        "rows": int(len(head)),
        "per_set_median_abs_error": {k: round(float(v), 4) for k, v in per_set.items()},
        "per_set_signed_median": {
            k: round(float(v), 4) for k, v in head.groupby("source_group")["error"].median().items()
        },
        "inside_p10_p90": {k: f"{int(v.sum())} of {len(v)}" for k, v in head.groupby("source_group")["inside_p10_p90"]}
        | {"all": f"{int(head['inside_p10_p90'].sum())} of {len(head)}"},
        "median_abs_error_all_rows": round(float(head["abs_error"].median()), 4),
        "median_of_per_set_medians": round(float(per_set.median()), 4),
        "signed_median_all_rows": round(float(head["error"].median()), 4),
    }


def cli_check(rows: list[dict]) -> None:
    """Re-predict each full/none row with the CLI (models and GPUs not in the shipped catalog come from
    holdout_models.csv and holdout_gpus.csv via --catalog; a run without a published shape by --params) and
    compare with the library figure."""
    names = {
        ("174600000000", "96"): "Megatron-GPT-174.6B",
        ("529600000000", "105"): "Megatron-GPT-529.6B",
        ("33740000000", "48"): "Llama-2-34B",
    }
    lib = predict(rows).set_index("id")
    for r in rows:
        if r["ckpt_fraction"]:
            continue
        model = r["model"] or names.get((r["params"], r["layers"]))
        args = [
            *CLI,
            "predict",
            "--catalog",
            str(MODELS),
            "--catalog",
            str(GPUS),
            *(["--model", model] if model else ["--params", r["params"]]),
            "--gpu",
            r["gpu"],
            "--gpus",
            r["gpus"],
            "--gpus-per-node",
            r["gpus_per_node"],
            "--framework",
            r["framework"],
            "--micro-batch",
            r["micro_batch"],
            "--seq-len",
            r["seq_len"],
            "--checkpointing",
            r["checkpointing"],
            "--grad-accum",
            r["grad_accum"],
            "--stack",
            r["stack"] or "eager",
            "--precision",
            r["precision"] or "bf16",
            "--sharding",
            r["sharding"] or "full",
            *(["--shard-gpus", r["shard_gpus"]] if r.get("shard_gpus") else []),
            *(["--fp8-allgather"] if r.get("fp8_allgather", "").lower() == "true" else []),
            "--json",
        ]
        if int(r["gpus"]) > int(r["gpus_per_node"]):
            args += ["--node-gbps", r["node_gbps"], "--fabric", r["fabric"]]
        else:  # one node: the CLI still asks for a network; the database reader uses 1 Gb/s IB, unused
            args += ["--node-gbps", "1", "--fabric", "ib"]
        dtype = {2.0: "bf16", 4.0: "fp32"}.get(float(r["grad_bytes"] or 2))
        if dtype is None:
            raise SystemExit(f"{r['id']}: grad_bytes {r['grad_bytes']} has no --grad-dtype")
        args += ["--grad-dtype", dtype]
        d = json.loads(subprocess.run(args, capture_output=True, text=True, check=True, cwd=HERE).stdout)
        cli = d["tokens_per_s"] / int(r["gpus"])
        print(f"{r['id']:52s} cli {cli:10.2f}  library {lib.loc[r['id'], 'predicted']:10.2f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", action="store_true", help="fill the predicted/error columns of holdout.csv")
    ap.add_argument("--cli", action="store_true", help="cross-check every non-partial row with `planner predict`")
    ap.add_argument(
        "--calibration",
        type=Path,
        help="judge this calibration instead of the shipped one (--write and --cli stay on the shipped one)",
    )
    ap.add_argument("--export", nargs=2, metavar=("SOURCE_GROUP", "PATH"), help="write one set as a measurements CSV")
    a = ap.parse_args()
    if a.export:
        export(read_rows(), a.export[0], Path(a.export[1]))
        return
    if a.write and a.calibration:
        ap.error("--write records the shipped calibration's predictions; drop --calibration")
    rows = read_rows()
    res = predict(rows, calibration=a.calibration)
    pd.set_option("display.width", 200)
    show = res[["id", "measured", "predicted", "error", "binding", "fits_memory", "headline"]]
    print(show.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    print("headline (every row with headline=1):")
    print(json.dumps(summary(res), indent=2))
    indep = res[res["source_group"] != "ibm-compile-blog-h100-464"]
    print(
        "independent publishers only (without the IBM sibling set): "
        + json.dumps({k: v for k, v in summary(indep).items() if k != "per_set_signed_median"})
    )
    # sensitivity: the YaFSDP network is assumed (1600 Gb/s IB); the same rows at lower node bandwidths
    ya = [r for r in rows if r["source_group"] == "yafsdp-readme-fsdp"]
    for gbps in (800, 600):
        s = predict(ya, {"node_gbps": gbps}, a.calibration)
        short = s["id"].str.contains("_s2048_")
        print(
            f"YaFSDP set at {gbps} Gb/s instead of 1600: median |error| {s['abs_error'].median():.4f}, "
            f"signed median {s['error'].median():+.4f} (2K-token rows {s.loc[short, 'error'].median():+.4f}, "
            f"4K-8K {s.loc[~short, 'error'].median():+.4f}; worst |error| {s['abs_error'].max():.4f})"
        )
    # the spring-2021 DeepSpeed of the Megatron set (v0.3.13-0.5.4): torch.cuda.synchronize() before every
    # parameter's all-gather, prefetched or not (at most one gather at a time behind compute: overlap 0), and
    # every all-gather and reduce-scatter takes a per-rank tensor list (a copy per rank and tensor in all
    # three collectives, not only in the reduce-scatter)
    mg = [r for r in rows if r["source_group"] == "megatron-sc21-zero3"]
    base = load_calibration(a.calibration)
    serial = {
        "overlap": base.overlap | {"deepspeed": 0.0},
        "rank_overhead_s": base.rank_overhead_s | {"deepspeed": 3 * base.rank_overhead_for("deepspeed")},
    }
    s = predict(mg, None, a.calibration, serial)
    print(
        "Megatron set with DeepSpeed 0.3-0.5.4's serial gathers (overlap 0, per-rank copies in all three "
        f"collectives): median |error| {s['abs_error'].median():.4f}, errors "
        + ", ".join(f"{e:+.3f}" for e in s["error"])
    )
    ib = [r for r in rows if r["source_group"] == "ibm-compile-blog-h100-464"]
    sro = predict(ib, {"fabric": "roce"}, a.calibration)
    print("IBM H100-464 set with fabric roce instead of ib: errors " + ", ".join(f"{e:+.3f}" for e in sro["error"]))
    # the ambiguous HF rows, both readings
    hf = res[res["source_group"] == "hf-blog-fsdp-vs-deepspeed"]
    for v, g in hf.groupby("variant"):
        print(f"HF blog reading {v}: errors {', '.join(f'{e:+.3f}' for e in g['error'])}")
    if a.cli:
        cli_check(rows)
    if a.write:
        by_id = res.set_index("id")
        for r in rows:
            p = by_id.loc[r["id"]]
            r["predicted_tokens_per_s_per_gpu"] = f"{p['predicted']:.2f}"
            r["error"] = f"{p['error']:+.4f}"
            r["abs_error"] = f"{p['abs_error']:.4f}"
            r["binding"] = p["binding"]
            for k in ("t_compute_s", "t_comm_s", "t_step_s"):
                r[k] = f"{p[k]:.4f}"
        with CSV.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)
        print(f"wrote predictions into {CSV}", file=sys.stderr)


if __name__ == "__main__":
    main()
