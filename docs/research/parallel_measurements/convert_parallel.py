#!/usr/bin/env python
"""Convert docs/research/parallel_measurements/measurements_draft.csv (TP/PP/CP/EP throughput measurements) into
rows of the planner's measurement-database schema (planner/data/measurements.csv header + parallelism columns).

Writes (nothing under /work/main is touched):
  /work/scratch/parallel_db.csv        rows to fit / validate on
  /work/scratch/parallel_holdout.csv   rows held back (never fitted)
  /work/scratch/h800_gpu.csv           one GPU row (catalogs/gpus.csv schema) for DeepSeek-V3's H800
  /work/scratch/convert_parallel_report.md   drops, dedup, assumptions, per-group counts

Evidence for settings the draft leaves 'unknown' (activation recompute, CPU activation offload) is read from the local
git mirrors under /work/.mirror (read-only, `git --git-dir ... show TAG:path`):
  NVIDIA-NeMo/Megatron-Bridge  perf presets per release tag (scripts/performance/configs/*, src/.../perf_recipes/*)
  NVIDIA/NeMo                  scripts/performance/recommended_model_configs/*.csv at v2.2.0 / v2.3.0 / v2.4.0
  NVIDIA/NeMo-Framework-Launcher  launcher_scripts/conf/training/*.yaml at 7cf7f188 (2024-08, NeMo 24.07 era)
  pytorch/torchtitan           benchmark files, train_configs and pipelining defaults at 9dec370 / 820504e
If a mirror is missing the script stops (the evidence would silently change otherwise).

Re-run:  /work/venv/bin/python /work/scratch/convert_parallel.py
"""

from __future__ import annotations

import dataclasses
import io
import math
import re
import subprocess
import sys
import types
from collections import Counter, defaultdict
from pathlib import Path

import pandas as pd
import yaml

MAIN = Path("/work/main")
DRAFT = MAIN / "docs/research/parallel_measurements/measurements_draft.csv"
OUT = Path("/work/scratch")
DB_OUT, HOLD_OUT, H800_OUT, REPORT_OUT = (
    OUT / n for n in ("parallel_db.csv", "parallel_holdout.csv", "h800_gpu.csv", "convert_parallel_report.md")
)
MIRROR = Path("/work/.mirror")
GIT_BRIDGE = MIRROR / "NVIDIA-NeMo+Megatron-Bridge/repo"
GIT_NEMO = MIRROR / "NVIDIA+NeMo/repo"
GIT_LAUNCHER = MIRROR / "NVIDIA+NeMo-Framework-Launcher/repo"
GIT_TITAN = MIRROR / "pytorch+torchtitan/repo"

BASE_COLS = [
    "id",
    "source_group",
    "publication",
    "source",
    "framework",
    "qwz",
    "hpz",
    "qgz",
    "model",
    "params",
    "layers",
    "hidden",
    "heads",
    "vocab",
    "gpu",
    "gpus",
    "gpus_per_node",
    "node_gbps",
    "fabric",
    "seq_len",
    "micro_batch",
    "tokens_per_gpu",
    "grad_accum",
    "checkpointing",
    "offload",
    "grad_bytes",
    "tokens_per_s_per_gpu",
    "tokens_per_s_low",
    "tokens_per_s_high",
    "reported_tflops_per_gpu",
    "confidence",
    "derivation",
    "stack",
    "precision",
    "fp8_allgather",
    "attention_kernel",
    "sharding",
    "shard_gpus",
    "ffn_hidden",
    "kv_heads",
    "peak_memory_gib",
]
NEW_COLS = [
    "tp",
    "pp",
    "vp",
    "cp",
    "ep",
    "tp_overlap",
    "experts",
    "top_k",
    "expert_ffn",
    "shared_experts",
    "dense_layers",
]
COLUMNS = BASE_COLS + NEW_COLS
INT_COLS = [
    "params",
    "layers",
    "hidden",
    "heads",
    "vocab",
    "gpus",
    "gpus_per_node",
    "node_gbps",
    "seq_len",
    "micro_batch",
    "grad_accum",
    "grad_bytes",
    "ffn_hidden",
    "kv_heads",
    "tp",
    "pp",
    "vp",
    "cp",
    "ep",
    "experts",
    "top_k",
    "expert_ffn",
    "shared_experts",
    "dense_layers",
]

BRIDGE_RELEASES = ["25.09", "25.11", "26.02", "26.02.01", "26.04", "26.04.01", "26.06", "26.06.01", "26.08"]
HOLDOUT_RELEASES = {"26.06", "26.06.01", "26.08"}
# container release -> Megatron-Bridge git tag whose perf presets produced it (my mapping by release date:
# r0.1.0 2025-10-23, v0.2.0 2025-11-26, v0.3.0 2026-02-26, v0.3.1, v0.4.0 2026-04-16, v0.4.1 2026-05-06,
# v0.5.0 2026-06-16, v0.5.1, v0.6.0 2026-08-19)
BRIDGE_TAG = {
    "25.09": "r0.1.0",
    "25.11": "v0.2.0",
    "26.02": "v0.3.0",
    "26.02.01": "v0.3.1",
    "26.04": "v0.4.0",
    "26.04.01": "v0.4.1",
    "26.06": "v0.5.0",
    "26.06.01": "v0.5.1",
    "26.08": "v0.6.0",
}

# routed-MoE shapes (HF config.json values; checked against the draft row by row)
MOE = {
    "DeepSeek-V3": dict(
        experts=256,
        top_k=8,
        expert_ffn=2048,
        shared_experts=1,
        dense_layers=3,
        ffn_hidden=18432,
        layers=61,
        hidden=7168,
        heads=128,
        kv_heads=None,
        vocab=129280,
        cite="huggingface.co/deepseek-ai/DeepSeek-V3 config.json: n_routed_experts 256, "
        "num_experts_per_tok 8, moe_intermediate_size 2048, n_shared_experts 1, "
        "first_k_dense_replace 3, intermediate_size 18432, 61 layers, hidden 7168, 128 heads, "
        "vocab 129280; MLA (no kv_heads)",
    ),
    "Kimi-K2": dict(
        experts=384,
        top_k=8,
        expert_ffn=2048,
        shared_experts=1,
        dense_layers=1,
        ffn_hidden=18432,
        layers=61,
        hidden=7168,
        heads=64,
        kv_heads=None,
        vocab=163840,
        cite="huggingface.co/moonshotai/Kimi-K2-Base config.json: 384 routed experts, top-8, "
        "moe_intermediate_size 2048, 1 shared expert, first_k_dense_replace 1 (dense ffn 18432), "
        "61 layers, hidden 7168, 64 heads, vocab 163840; MLA (no kv_heads)",
    ),
    "Qwen3-235B-A22B": dict(
        experts=128,
        top_k=8,
        expert_ffn=1536,
        shared_experts=0,
        dense_layers=0,
        ffn_hidden=None,
        layers=94,
        hidden=4096,
        heads=64,
        kv_heads=4,
        vocab=151936,
        cite="huggingface.co/Qwen/Qwen3-235B-A22B config.json: num_experts 128, "
        "num_experts_per_tok 8, moe_intermediate_size 1536, no shared expert, every layer "
        "MoE (mlp_only_layers []), 94 layers, hidden 4096, 64 heads, 4 kv heads, vocab 151936",
    ),
    "Qwen3-30B-A3B": dict(
        experts=128,
        top_k=8,
        expert_ffn=768,
        shared_experts=0,
        dense_layers=0,
        ffn_hidden=None,
        layers=48,
        hidden=2048,
        heads=32,
        kv_heads=4,
        vocab=151936,
        cite="huggingface.co/Qwen/Qwen3-30B-A3B config.json: 128 experts, top-8, "
        "moe_intermediate_size 768, all layers MoE, 48 layers, hidden 2048, 32 heads, 4 kv "
        "heads, vocab 151936",
    ),
    "Mixtral-8x7B": dict(
        experts=8,
        top_k=2,
        expert_ffn=14336,
        shared_experts=0,
        dense_layers=0,
        ffn_hidden=None,
        layers=32,
        hidden=4096,
        heads=32,
        kv_heads=8,
        vocab=32000,
        cite="huggingface.co/mistralai/Mixtral-8x7B-v0.1 config.json: num_local_experts 8, top-2, "
        "intermediate_size 14336, 32 layers, hidden 4096, 32 heads, 8 kv heads, vocab 32000",
    ),
    "Mixtral-8x22B": dict(
        experts=8,
        top_k=2,
        expert_ffn=16384,
        shared_experts=0,
        dense_layers=0,
        ffn_hidden=None,
        layers=56,
        hidden=6144,
        heads=48,
        kv_heads=8,
        vocab=32768,
        cite="huggingface.co/mistralai/Mixtral-8x22B-v0.1 config.json: 8 experts, top-2, "
        "intermediate_size 16384, 56 layers, hidden 6144, 48 heads, 8 kv heads, vocab 32768",
    ),
    "GPT-OSS-120B": dict(
        experts=128,
        top_k=4,
        expert_ffn=2880,
        shared_experts=0,
        dense_layers=0,
        ffn_hidden=None,
        layers=36,
        hidden=2880,
        heads=64,
        kv_heads=8,
        vocab=201088,
        cite="huggingface.co/openai/gpt-oss-120b config.json: num_local_experts 128, "
        "experts_per_token 4, intermediate_size 2880, 36 layers, hidden 2880, 64 heads, 8 kv "
        "heads, vocab 201088 (alternating 128-token sliding-window / full attention)",
    ),
}


def catalog_models() -> dict:
    """name or alias -> catalog row (dict), from catalogs/models.csv as it is now (the lead is adding MoE models to
    it; the model column names a catalog model only when it is there)."""
    df = pd.read_csv(MAIN / "catalogs/models.csv", comment="#")
    out = {}
    for _, row in df.iterrows():
        d = row.to_dict()
        out[row["name"]] = d
        for a in str(row.get("aliases") or "").split(";"):
            if a.strip() and a.strip() != "nan":
                out[a.strip()] = d
    return out


CATALOG = catalog_models()
SHAPE_CHECK = (
    "params",
    "layers",
    "hidden",
    "heads",
    "kv_heads",
    "ffn_hidden",
    "vocab",
    "experts",
    "top_k",
    "expert_ffn",
    "shared_experts",
    "dense_layers",
)

NEMO_PERF_GROUPS = {"nemo-24.07-h100", "nemo-25.02-b200", "nemo-25.04-gb200", "nemo-25.07-gb200"}


# ------------------------------------------------------------------------------------------------ git helpers
def git_show(git: Path, ref: str, path: str) -> str | None:
    r = subprocess.run(["git", "--git-dir", str(git), "show", f"{ref}:{path}"], capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else None


def git_ls(git: Path, ref: str, under: str) -> list[str]:
    r = subprocess.run(
        ["git", "--git-dir", str(git), "ls-tree", "-r", "--name-only", ref, under], capture_output=True, text=True
    )
    return r.stdout.split()


def require_mirrors():
    missing = [str(g) for g in (GIT_BRIDGE, GIT_NEMO, GIT_LAUNCHER, GIT_TITAN) if not g.exists()]
    if missing:
        sys.exit(f"missing git mirrors (fetch them first): {missing}")


# ------------------------------------------------------------------ Megatron-Bridge perf presets, per release tag
def bridge_workload_configs(tag: str) -> dict:
    """name -> fields of every preset in scripts/performance/configs/*/*workload_base_configs.py (v0.2.0..v0.5.x):
    the files need only utils.utils.WorkloadBaseConfig, so they are executed against that class alone."""
    usrc = git_show(GIT_BRIDGE, tag, "scripts/performance/utils/utils.py")
    if usrc is None:
        return {}
    start = usrc.index("@dataclass")
    end = usrc.find("\ndef ", start)
    head = "\n".join(line for line in usrc.splitlines() if line.startswith(("from dataclasses", "from typing")))
    mod = types.ModuleType("utils.utils")
    pkg = types.ModuleType("utils")
    pkg.utils = mod
    saved = {k: sys.modules.get(k) for k in ("utils", "utils.utils")}
    sys.modules["utils"], sys.modules["utils.utils"] = pkg, mod
    out = {}
    try:
        exec(
            compile(head + "\n" + usrc[start : end if end > 0 else None], "utils/utils.py", "exec", dont_inherit=True),
            mod.__dict__,
        )
        for path in git_ls(GIT_BRIDGE, tag, "scripts/performance/configs"):
            if path.endswith("workload_base_configs.py"):
                ns: dict = {}
                exec(compile(git_show(GIT_BRIDGE, tag, path), path, "exec", dont_inherit=True), ns)
                for k, v in ns.items():
                    if k.isupper() and dataclasses.is_dataclass(v) and not isinstance(v, type):
                        out[k] = dict(dataclasses.asdict(v), _file=path)
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    return out


R010_YAML = {  # 25.09 (r0.1.0): one yaml per model with a perf_matrix
    "Llama-3-8B": "llama3/llama3_8b_llm_pretrain.yaml",
    "Llama-3-70B": "llama3/llama3_70b_llm_pretrain.yaml",
    "Llama-3.1-405B": "llama31/llama31_405b_llm_pretrain.yaml",
    "DeepSeek-V3": "deepseek/deepseek_v3_llm_pretrain.yaml",
    "Qwen3-235B-A22B": "qwen3/qwen3_235b_a22b_llm_pretrain.yaml",
    "Qwen3-30B-A3B": "qwen3/qwen3_30b_a3b_llm_pretrain.yaml",
}


def r010_configs() -> dict:
    """(model, system, precision token) -> list of preset dicts, from the r0.1.0 yaml perf matrices."""
    out = defaultdict(list)
    for model, rel in R010_YAML.items():
        path = f"scripts/performance/configs/{rel}"
        doc = yaml.safe_load(git_show(GIT_BRIDGE, "r0.1.0", path))
        base_rc = (doc.get("ConfigContainer", {}).get("model") or {}).get("recompute_granularity")
        for system, sizes in doc["perf_matrix"].items():
            for size, block in sizes.items():
                common = block.get("common") or {}
                for prec, over in block.items():
                    if prec == "common":
                        continue
                    c = {**common, **(over or {})}
                    c.update(
                        num_gpus=int(size.split("_")[-1]),
                        _file=path,
                        _base_recompute=base_rc,
                        _name=f"{system}/{size}/{prec}",
                    )
                    c.setdefault("use_megatron_fsdp", c.get("fsdp", False))
                    out[(model, system.upper(), prec.upper())].append(c)
    return out


MODEL_TOKEN = {
    "Llama-3-8B": "LLAMA3_8B",
    "Llama-3-70B": "LLAMA3_70B",
    "Llama-3.1-405B": "LLAMA31_405B",
    "DeepSeek-V3": "DEEPSEEK_V3",
    "Qwen3-30B-A3B": "QWEN3_30B_A3B",
    "Qwen3-235B-A22B": "QWEN3_235B_A22B",
    "GPT-OSS-120B": "GPT_OSS_120B",
    "Kimi-K2": "KIMI_K2",
}
PREC_TOKEN = {"bf16": "BF16", "fp8": "FP8_CS", "mxfp8": "FP8_MX", "fp4": "NVFP4", "fp8-rowwise": "FP8_SC"}
R010_PREC = {"bf16": "BF16", "fp8": "FP8_CS", "mxfp8": "FP8_MX", "fp8-rowwise": "FP8_SS"}

# 26.08 = v0.6.0: presets are Python functions in src/megatron/bridge/perf_recipes/<family>/<system>/*.py; the eight
# 26.08 rows were read by hand (function, recompute_modules after all helpers ran):
V060_HAND = {
    ("DeepSeek-V3", "GB300", "mxfp8"): (
        "deepseek/gb300/deepseek_v3.py:deepseek_v3_pretrain_256gpu_gb300_fp8mx_config",
        "none",
        "recompute_modules = [] (selective granularity with no module)",
    ),
    ("DeepSeek-V3", "GB200", "mxfp8"): (
        "deepseek/gb200/deepseek_v3.py:deepseek_v3_pretrain_256gpu_gb200_fp8mx_config",
        "selective",
        "recompute_modules ['mla_up_proj']",
    ),
    ("GPT-OSS-120B", "GB300", "mxfp8"): (
        "gpt_oss/gb300/gpt_oss.py:gpt_oss_120b_pretrain_64gpu_gb300_fp8mx_config",
        "none",
        "no recompute set (full-iteration CUDA graph preset)",
    ),
    ("GPT-OSS-120B", "GB200", "mxfp8"): (
        "gpt_oss/gb200/gpt_oss.py:gpt_oss_120b_pretrain_64gpu_gb200_fp8mx_config",
        "none",
        "recompute_modules set to [] after _apply_gpt_oss_120b_full_iter_fp8mx_configs (moe_paged_stash on)",
    ),
    ("Qwen3-30B-A3B", "GB300", "mxfp8"): (
        "qwen/gb300/qwen3_moe.py:qwen3_30b_a3b_pretrain_8gpu_gb300_fp8mx_config",
        "none",
        "recompute_granularity None",
    ),
    ("Qwen3-30B-A3B", "GB200", "mxfp8"): (
        "qwen/gb200/qwen3_moe.py (qwen3_30b_a3b 8-GPU fp8mx)",
        "none",
        "recompute_granularity None",
    ),
    ("Qwen3-235B-A22B", "GB300", "mxfp8"): (
        "qwen/gb300/qwen3_moe.py:qwen3_235b_a22b_pretrain_256gpu_gb300_fp8mx_config",
        "none",
        "recompute_granularity None",
    ),
    ("Qwen3-235B-A22B", "GB200", "mxfp8"): (
        "qwen/gb200/qwen3_moe.py (qwen3_235b_a22b 256-GPU fp8mx)",
        "none",
        "recompute_granularity None",
    ),
}


def v060_check():
    """Re-read the v0.6.0 recipe files behind V060_HAND, so a changed mirror is noticed."""
    for (_model, _system, _), (where, klass, _) in V060_HAND.items():
        path = "src/megatron/bridge/perf_recipes/" + where.split(":")[0].split(" ")[0]
        src = git_show(GIT_BRIDGE, "v0.6.0", path)
        assert src is not None, path
        if ":" in where:
            fn = where.split(":")[1]
            body = re.search(r"def " + fn + r"\(\).*?(?=\ndef |\Z)", src, re.S).group(0)
            mods = re.findall(r"cfg\.model\.recompute_modules = (\[[^\]]*\])", body)
            if klass == "none":
                assert not mods or mods[-1] == "[]", (where, mods)
            else:
                assert mods and mods[-1] != "[]", (where, mods)


class BridgeRecipes:
    def __init__(self):
        self.tags = {
            rel: bridge_workload_configs(tag) for rel, tag in BRIDGE_TAG.items() if rel not in ("25.09", "26.08")
        }
        self.r010 = r010_configs()
        v060_check()
        self.r010_run = git_show(GIT_BRIDGE, "r0.1.0", "scripts/performance/run_script.py")

    @staticmethod
    def _score(c, row):
        vp = c.get("virtual_pipeline_model_parallel_size", c.get("vp")) or 1
        want = dict(
            tp=row["tp"],
            pp=row["pp"],
            cp=row["cp"],
            vp=row["vp"],
            ep=row["ep"],
            mbs=row["micro_batch"],
            gbs=row["global_batch"],
            fsdp=row["fsdp"],
            n=row["gpus"],
        )
        have = dict(
            tp=c.get("tensor_model_parallel_size", c.get("tp")) or 1,
            pp=c.get("pipeline_model_parallel_size", c.get("pp")) or 1,
            cp=c.get("context_parallel_size", c.get("cp")) or 1,
            vp=vp,
            ep=c.get("expert_model_parallel_size", c.get("ep")) or 1,
            mbs=c.get("micro_batch_size", c.get("mbs")),
            gbs=c.get("global_batch_size", c.get("gbs")),
            fsdp=bool(c.get("use_megatron_fsdp")),
            n=c.get("num_gpus"),
        )
        miss = [k for k in want if want[k] != have[k]]
        return len(want) - len(miss), miss

    def lookup(self, release, model, system, precision, row):
        """-> (checkpointing, note, matched preset name, mismatched fields, offload layers) or None."""
        if release == "26.08":
            key = (model, system, precision)
            if key not in V060_HAND:
                return None
            where, klass, why = V060_HAND[key]
            return klass, f"Megatron-Bridge v0.6.0 {where}: {why}", where, [], None
        if release == "25.09":
            cands = self.r010.get((model, system, R010_PREC.get(precision, "?")), [])
        else:
            cfgs = self.tags[release]
            tok, ptok = MODEL_TOKEN.get(model), PREC_TOKEN.get(precision)
            if tok is None or ptok is None:
                return None
            pat = re.compile(rf"^{tok}_(PRETRAIN_CONFIG_{system}_{ptok}(_V\d+)?|{system}_{ptok}_BASE_CONFIG)$")
            cands = [dict(v, _name=k) for k, v in cfgs.items() if pat.match(k)]
        if not cands:
            return None
        best = max(cands, key=lambda c: (self._score(c, row)[0], c["_name"].endswith("V1")))
        _, miss = self._score(best, row)
        rnl, mods = best.get("recompute_num_layers"), best.get("recompute_modules")
        off = best.get("cpu_offloading_num_layers")
        tag = BRIDGE_TAG[release]
        if release == "25.09" and model == "DeepSeek-V3":
            mods = {
                "H100": ["mla_up_proj", "mlp"],
                "B200": ["mla_up_proj"],
                "GB200": ["mla_up_proj"] if "tokendro" in row["slug"] else ["mla_up_proj", "mlp"],
            }[system]
        default_selective = model in ("DeepSeek-V3", "Kimi-K2") or best.get("_base_recompute") == "selective"
        if rnl:
            per_chunk = row["layers"] / (row["pp"] * row["vp"])
            frac = min(1.0, rnl / per_chunk)
            klass = "full" if frac >= 0.5 else "selective"
            why = (
                f"recompute_num_layers={rnl} (full-block recompute of {rnl} of ~{per_chunk:.1f} layers per "
                f"virtual stage = {frac:.0%}); mapped to '{klass}'"
                + (
                    ""
                    if klass == "full"
                    else " (the planner has no partial-block class; the cost of recomputing "
                    f"{frac:.0%} of the layers is nearer selective than full)"
                )
            )
        elif mods:
            klass, why = "selective", f"recompute_modules {mods}"
        elif mods == []:
            klass, why = "none", "recompute_modules []"
        elif model.startswith("Qwen3") and release != "25.09":
            klass, why = (
                "none",
                (
                    "no recompute: the Qwen3 perf script (qwen3_llm_pretrain.py) sets "
                    "recompute_granularity None for every Qwen3 preset"
                ),
            )
        elif default_selective:
            klass, why = (
                "selective",
                "recompute_granularity 'selective' set by the model's perf script (modules: "
                "Megatron default core_attn)",
            )
        else:
            klass, why = "none", "no recompute set (Megatron-Core default recompute_granularity None)"
        name = f"{best['_file']}:{best['_name']}"
        note = f"Megatron-Bridge {tag} preset {name}: {why}"
        if miss:
            note += f" [closest preset; differs from the table in {', '.join(miss)}]"
        return klass, note, name, miss, off


# ------------------------------------------------------------------------- NeMo 25.x recommended model configs
NEMO_TAG = {
    "nemo-25.02-b200": ("v2.2.0", "scripts/llm/performance/recommended_model_configs/model_configs_b200.csv"),
    "nemo-25.04-gb200": ("v2.3.0", "scripts/performance/recommended_model_configs/model_configs_gb200.csv"),
    "nemo-25.07-gb200": ("v2.4.0", "scripts/performance/recommended_model_configs/model_configs_gb200.csv"),
}
NEMO_MODEL = {
    "GPT3-175B": ("gpt3", "175b"),
    "Llama-3-8B": ("llama3", "8b"),
    "Llama-3-70B": ("llama3", "70b"),
    "Llama-3.1-405B": ("llama31", "405b"),
    "Nemotron-4-15B": ("nemotron4", "15b"),
    "Nemotron-4-340B": ("nemotron4", "340b"),
    "Mixtral-8x7B": ("mixtral", "8x7b"),
    "Mixtral-8x22B": ("mixtral", "8x22b"),
}


def nemo_recompute(group, row):
    tag, path = NEMO_TAG[group]
    csv = pd.read_csv(io.StringIO(git_show(GIT_NEMO, tag, path)))
    m, s = NEMO_MODEL[row["model"]]
    c = csv[(csv.task == "pre_train") & (csv.model == m) & (csv["size"].astype(str) == s) & (csv.dtype == "fp8")]
    if "recompute_layers" not in csv.columns:
        return (
            "none",
            f"NeMo {tag} {path}: no recompute/offload columns and no recompute in the perf scripts or "
            "recipes (Megatron-Core default recompute_granularity None)",
            [],
            None,
        )
    if c.empty:
        return (
            "none",
            f"NeMo {tag} {path}: no fp8 pre_train row for {m} {s}; recipes set no recompute "
            "(Megatron-Core default None)",
            ["no preset"],
            None,
        )
    fields = dict(
        tp="tp_size",
        pp="pp_size",
        cp="cp_size",
        ep="ep_size",
        vp="vp_size",
        micro_batch="mbs",
        global_batch="gbs",
        gpus="num_gpus",
    )

    def miss(r):
        out = [k for k, col in fields.items() if float(r[col]) != float(row[k])]
        if bool(int(r["use_mcore_fsdp"])) != row["fsdp"]:
            out.append("fsdp")
        return out

    best = min((r for _, r in c.iterrows()), key=lambda r: len(miss(r)))
    mm = miss(best)
    rl, off = int(best["recompute_layers"]), int(best["activation_offload_layers"])
    mods = best.get("recompute_modules")
    if rl > 0:
        klass, why = (
            ("full" if rl >= row["layers"] / (row["pp"] * row["vp"]) * 0.5 else "selective"),
            f"recompute_layers={rl} (full block)",
        )
    elif isinstance(mods, str) and mods.strip():
        klass, why = "selective", f"recompute_modules {mods}"
    else:
        klass, why = "none", "recompute_layers 0, no recompute_modules"
    note = f"NeMo {tag} {path} ({m},{s},fp8): {why}"
    if off:
        note += f"; activation_offload_layers={off}"
    if mm:
        note += f" [closest row; differs from the table in {', '.join(mm)}]"
    return klass, note, mm, off or None


LAUNCHER_COMMIT = "7cf7f188"  # NeMo-Framework-Launcher main as of 2024-08-10 (NeMo 24.07 era)
LAUNCHER_FILE = {
    "GPT3-5B": "gpt3/5b",
    "GPT3-20B": "gpt3/20b",
    "GPT3-175B": "gpt3/175b",
    "Llama-2-7B": "llama/llama2_7b",
    "Llama-2-13B": "llama/llama2_13b",
    "Llama-2-70B": "llama/llama2_70b",
    "Llama-3-8B": "llama/llama3_8b",
    "Llama-3-70B": "llama/llama3_70b",
    "Nemotron-8B": "nemotron/nemotron_8b",
    "Nemotron-22B": "nemotron/nemotron_22b",
    "Nemotron-4-340B": "nemotron/nemotron_340b",
}


def launcher_recompute(model):
    f = LAUNCHER_FILE[model]
    src = git_show(GIT_LAUNCHER, LAUNCHER_COMMIT, f"launcher_scripts/conf/training/{f}.yaml")
    g = re.search(r"^\s*activations_checkpoint_granularity:\s*(\S+)", src, re.M).group(1)
    klass = {"null": "none", "selective": "selective", "full": "full"}[g]
    return klass, (
        f"NeMo-Framework-Launcher@{LAUNCHER_COMMIT} (2024-08) launcher_scripts/conf/training/{f}.yaml: "
        f"activations_checkpoint_granularity {g} (the launcher's general training config; its parallel "
        "layout is not always the table's, so recompute is inferred, not stated)"
    )


# --------------------------------------------------------------------------------------------- row conversion
def clean(v):
    if v is None:
        return None
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


def whole(x):
    return x is not None and abs(x - round(x)) < 1e-9 and round(x) >= 1


class Converter:
    def __init__(self):
        self.bridge = BridgeRecipes()
        self.dropped: list[tuple[str, str]] = []
        self.assumptions: Counter = Counter()
        self.corrections: list[str] = []
        self.gpu_names = gpu_names()
        self.catalog_diffs: dict = defaultdict(set)

    # ------------------------------------------------------------------
    def convert(self, r: pd.Series):
        g = r.source_group
        notes: list[str] = []
        conf = r.confidence
        out = {c: None for c in COLUMNS}
        out.update(
            id=r.id,
            source_group=g,
            qwz="false",
            hpz="false",
            qgz="false",
            offload="none",
            tokens_per_gpu=None,
            tokens_per_s_low=None,
            tokens_per_s_high=None,
            shard_gpus=None,
        )
        out["source"] = f"{r.source}; dated {r.date}" if clean(r.date) else r.source
        is_bridge, is_nemo_perf = g.startswith("mbridge-"), g in NEMO_PERF_GROUPS
        is_longseq = g.startswith("nemo-long-sequence")
        is_titan = g.startswith("torchtitan")
        megatron_family = not is_titan and not g.startswith("llama3")
        # publication
        out["publication"] = (
            "megatron-bridge-performance-summary"
            if is_bridge
            else "nemo-performance-summary"
            if is_nemo_perf
            else "nemo-long-sequence"
            if is_longseq
            else r.publication
        )
        # framework / stack
        if is_titan:
            out["framework"], out["stack"] = "fsdp", "compile"
            notes.append("stack compile: torchtitan benchmarks ran torch.compile")
        elif g.startswith("llama3"):
            out["framework"], out["stack"] = "fsdp", "eager"
            notes.append(
                "framework fsdp: Meta's internal 4D stack (PyTorch FSDP + TP/PP/CP, arXiv:2407.21783 "
                "Sec. 3.3.2), the brief names no framework for it; stack eager (not stated)"
            )
        else:
            out["framework"], out["stack"] = "megatron", "eager"
            notes.append("stack eager: Megatron runs fused Transformer Engine / apex kernels, not torch.compile")
            if g.startswith("deepseek"):
                notes.append(
                    "framework megatron: DeepSeek's HAI-LLM is not public; modelled as a Megatron-style "
                    "PP + EP + ZeRO-1 stack (DualPipe schedule not modelled)"
                )
        # model shape
        model = r.model
        cat = CATALOG.get(model)
        out["model"] = cat["name"] if cat else None
        if out["model"] is None:
            notes.append(f"model {model} (not in catalogs/models.csv, so the shape columns describe it)")
        for c in ("params", "layers", "hidden", "heads", "vocab", "kv_heads", "ffn_hidden"):
            out[c] = clean(r[c])
        if model in MOE:
            spec = MOE[model]
            for c in ("experts", "top_k", "expert_ffn", "shared_experts", "dense_layers"):
                out[c] = spec[c]
            for c in ("layers", "hidden", "heads", "vocab", "kv_heads", "ffn_hidden"):
                dv = clean(r[c])
                if (dv is None) != (spec[c] is None) or (dv is not None and float(dv) != float(spec[c])):
                    self.corrections.append(f"{r.id}: {c} {dv} in the draft -> {spec[c]} ({model} config.json)")
                out[c] = spec[c]
            for c, dc in (
                ("experts", "experts"),
                ("top_k", "top_k"),
                ("expert_ffn", "expert_ffn"),
                ("shared_experts", "shared_experts"),
            ):
                dv = clean(r[dc])
                if dv is None or float(dv) != float(spec[c]):
                    self.corrections.append(f"{r.id}: {c} {dv} in the draft -> {spec[c]} ({model} config.json)")
            notes.append(
                "MoE shape: "
                + spec["cite"]
                + (
                    "; ffn_hidden = the dense layers' width"
                    if spec["ffn_hidden"]
                    else "; ffn_hidden blank: no dense FFN layer"
                )
            )
        else:
            out.update(experts=None, top_k=None, expert_ffn=None, shared_experts=None, dense_layers=None)
        if cat:
            diff = []
            for c in SHAPE_CHECK:
                a, b = clean(out.get(c)), clean(cat.get(c))
                if (a is None) != (b is None) or (a is not None and float(a) != float(b)):
                    diff.append(f"{c} row {a} / catalog {b}")
            if diff:
                self.catalog_diffs[cat["name"]].add("; ".join(diff))
        if model.startswith("GPT-") and clean(r.heads) is None:
            notes.append("heads blank: the SC21 README table gives none")
        # GPU / cluster
        gpu = r.gpu
        if is_titan:
            gpu = "H100-96GB-500W"
            notes.append(
                "GPU H100-96GB-500W (planner/data/measurement_gpus.csv): the benchmark's Grand Teton H100 "
                "96GB HBM2e at 500 W"
            )
        out["gpu"] = gpu
        out["gpus"] = int(r.gpus)
        sysnet = {
            "A100-80GB": (8, 1600, "ib"),
            "H100-SXM": (8, 3200, "ib"),
            "B200": (8, 3200, "ib"),
            "B300": (8, 6400, "ib"),
            "GB200": (72, 28800, "ib"),
            "GB300": (72, 57600, "ib"),
            "H100-96GB-500W": (8, 3200, "roce"),
            "H800": (8, 3200, "ib"),
        }[gpu]
        gpn, gbps, fabric = sysnet
        if g.startswith("llama3"):
            fabric = "roce"
            notes.append("network: 8 GPUs/server, RoCE 400 Gb/s per GPU = 3200 Gbps/node (paper Sec. 3.3.1)")
        elif is_titan:
            notes.append(
                "network: 400 Gb/s per GPU backend RDMA = 3200 Gbps/node; fabric roce as the database's "
                "other torchtitan Grand Teton rows (the benchmark says only 'RDMA'; Meta runs both RoCE and "
                "IB Grand Teton clusters)"
            )
        elif gpu == "A100-80GB":
            notes.append("network: Selene DGX A100, 8x200G HDR IB = 1600 Gbps/node (system spec, not in the table)")
        elif gpu == "H800":
            notes.append("network: 8x400G IB per node = 3200 Gbps (report: IB 50 GB/s per GPU); NVLink 160 GB/s")
        elif gpu in ("GB200", "GB300"):
            notes.append(
                f"network: {gpu} NVL72, gpus_per_node 72 = the NVLink domain, node_gbps {gbps} = 72 x "
                f"{gbps // 72}G scale-out per GPU (DGX reference, assumed; runs of <= 72 GPUs stay in one "
                "NVLink domain)"
            )
        else:
            notes.append(
                f"network: DGX {gpu} reference {gbps // 8}G x 8 IB per node = {gbps} Gbps (assumed; the "
                "table names only the system)"
            )
        out.update(gpus_per_node=gpn, node_gbps=gbps, fabric=fabric, seq_len=int(r.seq_len))
        # parallelism
        tp, pp, cp, ep = int(r.tp), int(r.pp), int(r.cp), int(r.ep)
        vp = int(r.vp) if clean(r.vp) is not None else 1
        if clean(r.vp) is None and pp > 1:
            notes.append(
                "vp 1: not stated (blank in the draft)"
                + (
                    "; the 280-GPU Table 5 run of the same model used 3 interleaved stages"
                    if r.id.startswith("korthikanti22_530b_2240g")
                    else "; the paper uses an interleaved schedule with V stages per rank, V not given"
                    if r.id.startswith("llama3")
                    else ""
                )
            )
        mbs, gbs = clean(r.micro_batch), clean(r.global_batch)
        gpus = int(r.gpus)
        # -- row-specific fixes before dp / GA
        if r.id.startswith("nemo_longseq_b200"):
            table_dp = int(r.dp)
            gpus = tp * pp * cp * table_dp
            out["gpus"] = gpus
            notes.append(
                f"INCONSISTENT source table: TP*PP*DP*CP = {gpus} but '# of GPUs' says {int(r.gpus)}; "
                f"gpus set to {gpus} (the table's TP/PP/DP/CP, which also make GBS/(DP*MBS) whole at "
                f"every length; with {int(r.gpus)} GPUs the 512K and 1M rows would have GBS < DP); "
                "tokens/s per GPU is unaffected (derived from TFLOPs per GPU)"
            )
        if r.id == "mbridge-25.09_gb200_llama370b_64g_fp8_tp2pp4cp1vp5ep1mb2gbs128_alt":
            mbs = 1.0
            self.corrections.append(
                f"{r.id}: micro_batch 2 -> 1 (the table's MBS column is not parenthesised, but "
                "its GA 16 and the r0.1.0 fp8_mx preset (gb200 num_gpus_64: mbs 1, tp2 pp4 vp5) "
                "both say 1)"
            )
            notes.append(
                "micro_batch 1: r0.1.0 llama3_70b yaml gb200/fp8_mx sets mbs 1, and the table's GA 16 = "
                "128/(8*1); the shared MBS column (2) belongs to the primary FSDP config"
            )
        if is_titan and "405b" in r.id:
            local = {"torchtitan_405b_512g_1f1b": 32, "torchtitan_405b_512g_interleaved": 32}.get(r.id, 8)
            dp_ = gpus // (tp * pp * cp)
            gbs = float(local * dp_)
            nmb = pp  # torchtitan 9dec370: pipeline_parallel_microbatches default = PP degree
            mbs = float(local / nmb)
            notes.append(
                f"micro_batch {mbs:g} and grad_accum {nmb}: local batch {local} split into the torchtitan "
                "9dec370 default of PP-degree (8) micro-batches (config_manager.py "
                "--experimental.pipeline_parallel_microbatches default None = pp; not stated in the "
                "benchmark)"
            )
            conf += "-assumed-mbs"
            if "interleaved" in r.id:
                vp = 2
                notes.append(
                    "vp 2: torchtitan 9dec370 generate_split_points uses 2 stages per rank for looped "
                    "schedules (Interleaved1F1B) when no split points are given (assumed)"
                )
        if mbs is None:
            mbs = 1.0
            conf += "-assumed-mbs"
            notes.append("micro_batch 1 ASSUMED (not stated by the source)")
            self.assumptions["micro_batch=1 assumed"] += 1
        dp = gpus / (tp * pp * cp)
        if not whole(dp):
            return None, f"dp = {gpus}/({tp}*{pp}*{cp}) not whole"
        dp = int(round(dp))
        if gbs is None and r.id.startswith("korthikanti22_530b_2240g"):
            gbs = float(dp * 280)
            conf += "-assumed-gbs"
            notes.append(
                "global batch ASSUMED 2240 = DP 8 x the 280 sequences per replica of the 280-GPU Table 5 "
                "run (GA 280; same pipeline bubble); MT-NLG's 530B run on 2240 GPUs used 1920 (GA 240)"
            )
        if gbs is None:
            return None, "global batch unknown: grad_accum cannot be computed"
        ga = gbs / (dp * mbs)
        if not whole(ga):
            return None, f"grad_accum = {gbs:g}/({dp}*{mbs:g}) = {ga:.3f} is not a whole number >= 1"
        ga = int(round(ga))
        if "inconsistent-ga" in conf:
            notes.append(
                f"grad_accum {ga} = GBS/(DP*MBS) = {gbs:g}/({dp}*{mbs:g}), used instead of the table's "
                "printed GA (see the draft derivation)"
            )
        if model in MOE and (MOE[model]["experts"] % ep or ep > dp * cp * tp):
            return None, (
                f"EP {ep} does not fit: Megatron places EP inside DP*CP*TP = {dp}*{cp}*{tp} = {dp * cp * tp} "
                f"ranks per pipeline stage (and EP must divide {MOE[model]['experts']} experts); the "
                "table's configuration is inconsistent"
            )
        out.update(tp=tp, pp=pp, vp=vp, cp=cp, ep=ep, micro_batch=mbs, grad_accum=ga)
        notes.append(
            f"dp = {gpus}/(tp {tp}*pp {pp}*cp {cp}) = {dp}; grad_accum = GBS {gbs:g}/(dp {dp}*mbs {mbs:g}) = {ga}"
        )
        # sharding
        sh = r.sharding
        if "megatron-fsdp" in sh or "fsdp2" in sh:
            out["sharding"] = "full"
        elif sh.startswith("none"):
            out["sharding"] = "none"
        elif g.startswith("llama3"):
            out["sharding"] = "zero1"
            notes.append(
                "sharding zero1: Llama 3 'FSDP shards optimizer states and gradients, but for model shards "
                "we do not reshard after forward' (Sec. 3.3.2) = ZeRO-2 (one weight all-gather and one "
                "gradient reduce-scatter per step); the planner has no zero2, zero1 has the same traffic"
            )
        else:
            out["sharding"] = "zero1"
        if sh.endswith("assumed"):
            notes.append("distributed optimizer (zero1) assumed")
        if is_titan and pp > 1:
            notes.append(
                "torchtitan with PP does not reshard after forward (parallelize_llama.py@9dec370), so "
                "weights are gathered once per step, not per micro-batch"
            )
        # precision
        prec, pnote = self.precision(r, gpu)
        out["precision"] = prec
        if pnote:
            notes.append(pnote)
        # attention kernel
        if gpu == "A100-80GB":
            out["attention_kernel"] = "flash"
            notes.append(
                "attention_kernel flash: the planner's default class; Megatron 2021-22 used fused "
                "softmax, not FlashAttention (no planner class for it)"
            )
        elif megatron_family and not g.startswith("deepseek"):
            out["attention_kernel"] = "fa3"
            notes.append("attention_kernel fa3: Transformer Engine runs cuDNN fused attention on Hopper/Blackwell")
        else:
            out["attention_kernel"] = "flash"
            if g.startswith("llama3") or g.startswith("deepseek"):
                notes.append("attention_kernel flash (FA2 class) assumed: kernel not stated")
        # tp_overlap
        if is_titan:
            out["tp_overlap"] = "true" if ("asynctp" in r.id and "vanilla" not in r.id) or "405b" in r.id else "false"
            if "405b" in r.id:
                notes.append("tp_overlap true: Tables 5/6 ran AsyncTP")
        elif g.startswith(("korthikanti", "narayanan", "deepseek", "llama3")):
            out["tp_overlap"] = "false"
        else:
            out["tp_overlap"] = "true"
            notes.append(
                "tp_overlap true: TE tensor-parallel communication overlap is on in NeMo/Bridge perf "
                "configs (Megatron-Core r0.8 README: --tp-comm-overlap)" + (" (no effect at tp 1)" if tp == 1 else "")
            )
        # grad bytes
        gb = 2
        if is_titan:
            gb = 4
            notes.append(
                "grad_bytes 4: torchtitan's FSDP2 mixed_precision_reduce is float32-only at 9dec370 and "
                "820504e (as the database's torchtitan Float8 rows)"
            )
        elif g.startswith("megatron-core"):
            gb = 4
            notes.append(
                "grad_bytes 4: Megatron-LM forces accumulate_allreduce_grads_in_fp32 for bf16 "
                "(megatron/training/arguments.py@f2e5db402c)"
            )
        elif g.startswith("llama3"):
            gb = 4
            notes.append(
                "grad_bytes 4: 'reduce-scatter gradients in FP32 across data parallel workers in FSDP' (Sec. 3.3.2)"
            )
        elif is_bridge or g in ("nemo-25.02-b200", "nemo-25.04-gb200", "nemo-25.07-gb200"):
            notes.append("grad_bytes 2: perf configs set grad_reduce_in_fp32 False")
        out["grad_bytes"] = gb
        # fp8 all-gather
        fp8ag = False
        if is_titan and "405b" in r.id:
            fp8ag = True
            notes.append(
                "fp8_allgather true: train_configs/llama3_405b.toml@9dec370 sets "
                "enable_fsdp_float8_all_gather = true (assumed to be the benchmark's config)"
            )
        elif is_titan and prec != "bf16":
            notes.append(
                "fp8_allgather false: not stated; the 8B/70B tomls at 9dec370 / 820504e leave FSDP float8 "
                "all-gather off"
            )
        elif (
            (is_bridge or g in ("nemo-25.02-b200", "nemo-25.04-gb200", "nemo-25.07-gb200"))
            and prec in ("fp8", "mxfp8", "fp8-rowwise")
            and (g.startswith("nemo") or prec in ("fp8", "mxfp8"))
        ):
            fp8ag = True
            notes.append(
                "fp8_allgather true: the release's FP8 precision preset gathers parameters in FP8 "
                + (
                    "(NeMo bf16_with_fp8_mixed / current-scaling presets: fp8_params / fp8_param_gather True)"
                    if g.startswith("nemo")
                    else "(Megatron-Bridge bf16_with_fp8_current_scaling_mixed / bf16_with_mxfp8_mixed: "
                    "fp8_param_gather True)"
                )
                + " - the distributed optimizer's / Megatron-FSDP's param "
                "all-gather, not stated by the table"
            )
        out["fp8_allgather"] = "true" if fp8ag else "false"
        # peak memory (torchtitan 2024-12 tables)
        out["peak_memory_gib"] = TITAN_MEM.get(r.id)
        if out["peak_memory_gib"]:
            notes.append("peak_memory_gib: the table's Memory(GiB) (torchtitan max reserved, max over PP ranks)")
        # checkpointing + offload note
        ck, cnote, conf = self.checkpointing(r, out, conf, gpu, prec)
        out["checkpointing"] = ck
        notes.append(cnote)
        # tokens / tflops / confidence
        out["tokens_per_s_per_gpu"] = float(r.tokens_per_s_per_gpu)
        out["reported_tflops_per_gpu"] = clean(r.reported_tflops_per_gpu)
        out["confidence"] = conf
        out["derivation"] = (
            str(r.derivation).rstrip("; ")
            + " || conversion (scratch/convert_parallel.py): "
            + "; ".join(n for n in notes if n)
        )
        return out, None

    # ------------------------------------------------------------------
    def precision(self, r, gpu):
        p = r.precision
        if p.startswith("fp16"):
            return "fp16", "precision fp16: half precision on A100 (Calculon models float16; SC21 used fp16)"
        if p == "bf16":
            return "bf16", None
        if p == "fp8 (rowwise)":
            return "fp8-rowwise", "precision fp8-rowwise: torchao float8 rowwise"
        if p.startswith("fp8 (Float8") or p == "fp8 (tensorwise)":
            return "fp8", "precision fp8: torchao Float8 linears, dynamic tensorwise scaling"
        if p.startswith("fp8 (mixed, tile"):
            return "fp8-rowwise", (
                "precision fp8-rowwise: DeepSeek-V3's fine-grained FP8 (1x128 activation tiles, "
                "128x128 weight blocks) is per-block scaled like rowwise/MX, not per-tensor"
            )
        if p.startswith("fp8 (alt"):
            if gpu in ("B200", "GB200"):
                return "mxfp8", "precision mxfp8: the table note's 32x32-block alternative granularity on B200/GB200"
            return "fp8-rowwise", (
                "precision fp8-rowwise: the table note's H100 alternative, 128x128 weight / 1x128 "
                "activation blocks as DeepSeek-V3 (r0.1.0 fp8_ss)"
            )
        if p in ("fp8 (unstated)",):
            return "fp8", (
                "precision fp8: the 25.09 table has no precision column; FP8 current scaling is what "
                "25.11 labels the same cells (FP8-CS (FP8-MX)) and the r0.1.0 presets' fp8_cs"
            )
        if p in ("fp8", "fp8-cs"):
            return "fp8", ("precision fp8: per-tensor FP8" + (" current scaling" if p == "fp8-cs" else ""))
        if p in ("mxfp8", "fp8-mx"):
            return "mxfp8", "precision mxfp8: MXFP8 (1x32 blocks, E8M0 scales)"
        if p == "nvfp4":
            return "fp4", "precision fp4: NVFP4"
        raise ValueError(f"{r.id}: unknown precision {p!r}")

    # ------------------------------------------------------------------
    def checkpointing(self, r, out, conf, gpu, prec):
        g, rc = r.source_group, r.recompute
        system = {"H100-SXM": "H100"}.get(gpu, gpu)
        row = dict(
            tp=out["tp"],
            pp=out["pp"],
            cp=out["cp"],
            vp=out["vp"],
            ep=out["ep"],
            micro_batch=out["micro_batch"],
            global_batch=out["grad_accum"] * out["micro_batch"] * out["gpus"] / (out["tp"] * out["pp"] * out["cp"]),
            fsdp=out["sharding"] == "full",
            gpus=out["gpus"],
            layers=out["layers"],
            model=r.model,
            slug=r.id.split("_")[2] if g.startswith("mbridge") else "",
        )
        if g.startswith("mbridge-"):
            rel = g.split("-", 1)[1]
            res = self.bridge.lookup(rel, r.model, system, prec, row)
            if res is None:
                return self._fallback(r, conf, "no Megatron-Bridge preset found for this model/system/precision")
            klass, note, _, miss, off = res
            if rc not in ("unknown", klass):
                self.corrections.append(
                    f"{r.id}: recompute '{rc}' in the draft (HEAD 067f987 recipes) -> '{klass}' "
                    f"({note.split(':')[0]} ...)"
                )
            if off:
                note += (
                    f"; CPU activation offloading of {off} layers (cpu_offloading_num_layers) - offload column "
                    "stays 'none' (it models optimizer offload)"
                )
            return klass, "checkpointing " + klass + ": " + note, conf
        if g in ("nemo-25.02-b200", "nemo-25.04-gb200", "nemo-25.07-gb200"):
            klass, note, _, off = nemo_recompute(g, row)
            if off:
                note += " - offload column stays 'none' (it models optimizer offload)"
            return klass, "checkpointing " + klass + ": " + note, conf
        if g == "nemo-24.07-h100":
            klass, note = launcher_recompute(r.model)
            return klass, "checkpointing " + klass + ": " + note, conf
        if g.startswith("llama3"):
            note = (
                "checkpointing none: 'we could pre-train Llama 3 on sequences of 8K tokens without activation "
                "checkpointing' (Sec. 3.3.2)"
            )
            if r.seq_len > 8192:
                note = (
                    "checkpointing none ASSUMED: the paper says 8K sequences train without activation "
                    "checkpointing; this 131K row keeps 8K tokens per CP rank (CP 16) but its setting is not "
                    "stated"
                )
                conf += "-assumed-recompute"
            return "none", note, conf
        if g.startswith("torchtitan"):
            if rc == "selective":
                return (
                    "op",
                    (
                        "checkpointing op: torchtitan 'per op SAC' (selective_ac_option 'op': every second "
                        "matmul saved) is the planner's 'op' class, not Megatron's selective"
                    ),
                    conf,
                )
            return rc, f"checkpointing {rc}: stated (full AC)", conf
        if rc in ("full", "selective", "none"):
            return (
                rc,
                f"checkpointing {rc}: from the draft ({'stated' if 'korthikanti' in g else 'per the source'})",
                conf,
            )
        return self._fallback(r, conf, "recompute not stated and no recipe evidence found")

    def _fallback(self, r, conf, why):
        self.assumptions["checkpointing assumed selective"] += 1
        return (
            "selective",
            f"checkpointing assumed selective (not stated): {why}; the brief's fallback for "
            "Megatron-family rows (with flash/cuDNN attention, core-attention recompute costs about "
            "nothing extra, so selective ~ none in compute)",
            conf + "-assumed-recompute",
        )


TITAN_MEM = {  # benchmarks/llama3_h100_202412_torchtitan.md Memory(GiB)
    "torchtitan_8b_cp1_s32768": 83.9,
    "torchtitan_8b_cp2_s65536": 84.2,
    "torchtitan_8b_cp4_s131072": 84.0,
    "torchtitan_8b_cp8_s262144": 84.5,
    "torchtitan_70b_256g_tp": 71.9,
    "torchtitan_70b_256g_asynctp": 67.6,
    "torchtitan_405b_512g_1f1b": 82.5,
    "torchtitan_405b_512g_interleaved": 72.7,
    "torchtitan_405b_512g_cp1_s32768": 75.3,
    "torchtitan_405b_512g_cp2_s65536": 75.9,
    "torchtitan_405b_512g_cp4_s131072": 77.1,
    "torchtitan_405b_512g_cp8_s262144": 84.9,
}


def check_titan_memory():
    src = git_show(GIT_TITAN, "HEAD", "benchmarks/llama3_h100_202412_torchtitan.md")
    for v in TITAN_MEM.values():
        assert f"| {v} |" in src, v


def gpu_names() -> dict:
    names = {}
    for p in (MAIN / "catalogs/gpus.csv", MAIN / "planner/data/measurement_gpus.csv"):
        df = pd.read_csv(p, comment="#")
        for _, row in df.iterrows():
            names[row["name"]] = row["name"]
            for a in str(row.get("aliases") or "").split(";"):
                if a.strip() and a.strip() != "nan":
                    names[a.strip()] = row["name"]
    return names


# --------------------------------------------------------------------------------------------------- main
def bridge_key(out):
    slug = out["id"].split("_")[2].replace("dropless", "")
    return (
        out["gpu"],
        slug,
        out["gpus"],
        out["seq_len"],
        out["precision"],
        out["tp"],
        out["pp"],
        out["cp"],
        out["vp"],
        out["ep"],
        out["micro_batch"],
        out["micro_batch"] * out["grad_accum"] * out["gpus"] // (out["tp"] * out["pp"] * out["cp"]),
        out["sharding"],
    )


def main():
    require_mirrors()
    check_titan_memory()
    draft = pd.read_csv(DRAFT)
    conv = Converter()
    rows, dropped = [], []
    existing = pd.read_csv(MAIN / "planner/data/measurements.csv", comment="#")
    for _, r in draft.iterrows():
        name = f"{r.model} {r.id}".lower()
        if any(k in name for k in ("mamba", "nemotron-h", "nemotronh", "nemotron_3", "nemotron-3")):
            dropped.append((r.id, "hybrid Mamba architecture"))
            continue
        if r.id == "torchtitan_8b_cp1_s32768":
            dup = existing[existing.id == "torchtitan_h100_8b_8_s32k_compile_fp8"]
            if len(dup):
                dropped.append(
                    (
                        r.id,
                        "duplicate of the database row torchtitan_h100_8b_8_s32k_compile_fp8 (Table 2 "
                        "'FSDP 8, CP 1', 3890 TPS/GPU)",
                    )
                )
                continue
        if r.id == "mbridge-25.09_h100_deepseekv3dropless_1024g_fp8_tp2pp8cp1vp4ep64mb1gbs8192_alt":
            dropped.append(
                (
                    r.id,
                    "the table prints no alternative tokens/s (only TFLOPs '338 (330)'); the draft "
                    "copied the primary's 1297 into the alternative-precision row",
                )
            )
            continue
        if "inconsistent-config" in r.confidence and not r.id.startswith("nemo_longseq_b200"):
            dropped.append((r.id, "inconsistent configuration (TP*PP*DP*CP != GPUs)"))
            continue
        out, why = conv.convert(r)
        if out is None:
            dropped.append((r.id, why))
            continue
        rows.append(out)
    # ---- Megatron-Bridge dedup: latest release of each config
    order = {rel: i for i, rel in enumerate(BRIDGE_RELEASES)}
    groups = defaultdict(list)
    for o in rows:
        if o["source_group"].startswith("mbridge-"):
            groups[bridge_key(o)].append(o)
    keep_ids, dedup_log = set(), []
    for _key, members in groups.items():
        members.sort(key=lambda o: (order[o["source_group"].split("-", 1)[1]], not o["id"].endswith("_alt")))
        winner = members[-1]
        keep_ids.add(winner["id"])
        for m in members[:-1]:
            dedup_log.append((m["id"], winner["id"], m["tokens_per_s_per_gpu"], winner["tokens_per_s_per_gpu"]))
    for m_id, w_id, _, _ in dedup_log:
        dropped.append((m_id, f"Megatron-Bridge duplicate config; the latest release's row {w_id} is kept"))
    rows = [o for o in rows if not o["source_group"].startswith("mbridge-") or o["id"] in keep_ids]

    # ---- routing
    def holdout(o):
        g = o["source_group"]
        return g.startswith(("llama3-405b", "megatron-core-h100", "deepseek-v3", "nemo-long-sequence-b200")) or (
            g.startswith("mbridge-") and g.split("-", 1)[1] in HOLDOUT_RELEASES
        )

    db = pd.DataFrame([o for o in rows if not holdout(o)], columns=COLUMNS)
    ho = pd.DataFrame([o for o in rows if holdout(o)], columns=COLUMNS)
    for df in (db, ho):
        for c in INT_COLS:
            df[c] = df[c].astype("Int64")
    OUT.mkdir(parents=True, exist_ok=True)
    db.to_csv(DB_OUT, index=False)
    ho.to_csv(HOLD_OUT, index=False)
    write_h800()
    report(draft, db, ho, dropped, dedup_log, conv)
    validate(conv)


def write_h800():
    header = pd.read_csv(MAIN / "catalogs/gpus.csv", comment="#", nrows=0).columns.tolist()
    row = dict(
        name="H800",
        aliases="H800-SXM;H800-SXM5-80GB;H800-80GB",
        vendor="NVIDIA",
        architecture="hopper",
        peak_bf16_tflops=989.4,
        peak_fp8_tflops=1978.9,
        peak_fp4_tflops=None,
        hbm_gib=79.6,
        hbm_gb_per_s=3350,
        tdp_w=700,
        price_usd=None,
        source=(
            "NVIDIA's H800 datasheet was not retrievable (no stored copy); stored pages: aiwiki.ai/wiki/"
            "nvidia_h800 (same GH100 silicon as H100, cut in chip-to-chip interconnect and FP64), "
            "philisun.com 'NVIDIA H800 vs H100' and tumgag.com (NVLink 400 GB/s vs 900, FP64 ~1 TF); "
            "dense tensor peaks as H100 SXM5: glennklockwood.com/garden/processors/h100 (BF16 989.4, FP8 "
            "1978.9 dense); DeepSeek-V3 report arXiv:2412.19437 Sec. 3.1 (H800 nodes, NVLink 160 GB/s, "
            "IB 50 GB/s per GPU)"
        ),
        date="2023-03",
        confidence="medium",
        notes=(
            "Export variant of H100 SXM5 (GH100, 132 SMs, 80 GB HBM3 at 3.35 TB/s): same dense bf16/fp8 "
            "tensor peaks as H100-SXM (989.4 / 1978.9; 2x with sparsity), NVLink 400 GB/s bidirectional "
            "instead of 900, FP64 ~1 TFLOPS. hbm_gib 79.6 as H100-SXM (nvidia-smi 81559 MiB assumed equal). "
            "tdp_w 700 assumed as H100 SXM5 (one stored page claims a 550 W cap; unverified). "
            "Used by DeepSeek-V3 (holdout row); "
            "measurement-only GPU: belongs in planner/data/measurement_gpus.csv if adopted."
        ),
    )
    pd.DataFrame([{c: row.get(c) for c in header}]).to_csv(H800_OUT, index=False)


def report(draft, db, ho, dropped, dedup_log, conv):
    lines = [
        "# convert_parallel.py report",
        "",
        f"draft rows {len(draft)} -> DB {len(db)}, holdout {len(ho)}, dropped {len(dropped)}",
        "",
    ]
    for name, df in (("DB", db), ("holdout", ho)):
        lines += [f"## {name} rows per source_group", ""]
        lines += [f"- {k}: {v}" for k, v in df.source_group.value_counts().sort_index().items()]
        lines.append("")
    lines += ["## dropped rows", ""]
    reasons = Counter()
    for i, w in dropped:  # noqa: B007
        reasons[w.split(";")[0] if w.startswith("Megatron-Bridge duplicate") else w] += 1
    for i, w in dropped:  # noqa: B007
        if not w.startswith("Megatron-Bridge duplicate"):
            lines.append(f"- {i}: {w}")
    lines.append(
        f"- Megatron-Bridge duplicates (older release of the same config): "
        f"{sum(1 for _, w in dropped if w.startswith('Megatron-Bridge duplicate'))}"
    )
    lines += ["", "## Megatron-Bridge dedup (dropped -> kept, tokens/s)", ""]
    lines += [f"- {a} ({ta:g}) -> {b} ({tb:g})" for a, b, ta, tb in sorted(dedup_log)]
    ffn = Counter(re.search(r"\((.*) config.json\)", c).group(1) for c in conv.corrections if ": ffn_hidden " in c)
    lines += ["", "## corrections to the draft", ""]
    lines += [
        f"- ffn_hidden blanked (no dense FFN layer; the draft had the unused config intermediate_size or the "
        f"expert width) on {n} {m} rows"
        for m, n in sorted(ffn.items())
    ]
    lines += [f"- {c}" for c in conv.corrections if ": ffn_hidden " not in c]
    lines += [
        "",
        "## shape differences against the working-tree catalogs/models.csv (model column set, so the "
        "planner would take the catalog's shape)",
        "",
    ]
    for m, ds in sorted(conv.catalog_diffs.items()):
        lines += [f"- {m}: {d}" for d in sorted(ds)]
    lines += ["", "## counts of assumptions", ""] + [f"- {k}: {v}" for k, v in conv.assumptions.items()]
    lines += ["", "## checkpointing per file", ""]
    for name, df in (("DB", db), ("holdout", ho)):
        lines.append(f"- {name}: " + ", ".join(f"{k} {v}" for k, v in df.checkpointing.value_counts().items()))
    REPORT_OUT.write_text("\n".join(lines) + "\n")


def validate(conv):
    names = conv.gpu_names
    ok = True
    for path in (DB_OUT, HOLD_OUT):
        df = pd.read_csv(path)
        assert list(df.columns) == COLUMNS, path
        print(f"== {path.name}: {len(df)} rows")
        for c in INT_COLS:
            v = df[c].dropna()
            bad = v[(v != v.round()) | (v < 0)]
            if len(bad):
                ok = False
                print(f"  non-integer {c}: {bad.tolist()[:5]}")
        for c in ("gpus", "tp", "pp", "vp", "cp", "ep", "micro_batch", "grad_accum", "seq_len", "gpus_per_node"):
            if df[c].isna().any() or (df[c] < 1).any():
                ok = False
                print(f"  {c} missing or < 1 in {df[df[c].isna() | (df[c] < 1)].id.tolist()}")
        dp = df.gpus / (df.tp * df.pp * df.cp)
        bad = df[(dp != dp.round()) | (dp < 1)]
        if len(bad):
            ok = False
            print("  dp not whole:", bad.id.tolist())
        (df.micro_batch * df.grad_accum * dp)
        moe = df[df.experts.notna()]
        for _, r in moe.iterrows():
            d = r.gpus // (r.tp * r.pp * r.cp)
            if r.experts % r.ep or r.ep > d * r.cp * r.tp:
                ok = False
                print(f"  EP problem {r.id}: ep {r.ep} experts {r.experts} dp*cp*tp {d * r.cp * r.tp}")
        dense_ep = df[df.experts.isna() & (df.ep != 1)]
        if len(dense_ep):
            ok = False
            print("  ep != 1 on dense rows:", dense_ep.id.tolist())
        unknown = sorted(set(g for g in df.gpu if g not in names and g != "H800"))
        if unknown:
            ok = False
            print("  unknown GPU names:", unknown)
        for c, allowed in (
            ("framework", {"megatron", "fsdp"}),
            ("checkpointing", {"full", "selective", "none", "op"}),
            ("sharding", {"none", "zero1", "full"}),
            ("stack", {"eager", "compile"}),
            ("precision", {"bf16", "fp16", "fp8", "fp8-rowwise", "mxfp8", "fp4"}),
            ("attention_kernel", {"flash", "fa3", "triton"}),
            ("fabric", {"ib", "roce"}),
            ("offload", {"none"}),
        ):
            bad = set(df[c].dropna()) - allowed
            if bad or df[c].isna().any():
                ok = False
                print(f"  {c}: unexpected {bad} / missing {df[c].isna().sum()}")
        if df.id.duplicated().any():
            ok = False
            print("  duplicate ids", df.id[df.id.duplicated()].tolist())
        if (df.tokens_per_s_per_gpu <= 0).any() or df.tokens_per_s_per_gpu.isna().any():
            ok = False
            print("  bad tokens_per_s_per_gpu")
        print("  rows per source_group:")
        for k, v in df.source_group.value_counts().sort_index().items():
            print(f"    {k}: {v}")
        print("  checkpointing:", dict(df.checkpointing.value_counts()))
        print("  precision:", dict(df.precision.value_counts()))
        print("  gpu:", dict(df.gpu.value_counts()))
    both = pd.concat([pd.read_csv(DB_OUT), pd.read_csv(HOLD_OUT)])
    if both.id.duplicated().any():
        ok = False
        print("id in both files:", both.id[both.id.duplicated()].tolist())
    h = pd.read_csv(H800_OUT)
    print(
        f"== {H800_OUT.name}: {len(h)} row, columns match gpus.csv:",
        list(h.columns) == pd.read_csv(MAIN / "catalogs/gpus.csv", comment="#", nrows=0).columns.tolist(),
    )
    print("VALIDATION", "OK" if ok else "FAILED")
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
