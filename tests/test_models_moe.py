"""Mixture-of-Experts model rows: the MoE columns of models.csv, their checks (each bad cell reported as
file:row: column with the fix), and active_params against the active counts the model cards state."""

from __future__ import annotations

import pytest

from planner.base.errors import CatalogError
from planner.catalog.load import load_catalog

HEADER = (
    "name,params,layers,hidden,heads,kv_heads,ffn_hidden,vocab,seq_len,head_dim,q_lora_rank,kv_lora_rank,"
    "rope_head_dim,experts,top_k,expert_ffn,shared_experts,dense_layers,source,date,confidence\n"
)
# name,params,layers,hidden,heads,kv_heads,ffn_hidden,vocab,seq_len,head_dim,q_lora,kv_lora,rope,experts,top_k,...
MOE = "Toy-MoE,10B,8,1024,16,4,4096,32000,4096,,,,,8,2,1024,1,2,a config.json,2025,solid\n"

# Active parameters per token as each model card states them (not computed by the code under test).
STATED_ACTIVE = {
    "Mixtral-8x7B": 12.9e9,
    "Mixtral-8x22B": 39e9,
    "DeepSeek-V3": 37e9,
    "Qwen3-235B-A22B": 22e9,
    "Qwen3-30B-A3B": 3.3e9,
    "Llama-4-Maverick-17B-128E": 17e9,
    "GPT-OSS-120B": 5.1e9,
    "Kimi-K2": 32e9,
}


def problems_of(*paths) -> list[str]:
    with pytest.raises(CatalogError) as info:
        load_catalog(paths)
    return [str(p) for p in info.value.problems]


def test_the_shipped_catalog_loads_with_its_moe_rows():
    catalog = load_catalog()
    for name in STATED_ACTIVE:
        row = catalog.model(name)
        assert row.is_moe and row.top_k <= row.experts, name
    assert not catalog.model("Llama-3.1-405B").is_moe


def test_a_moe_row_with_top_k_above_experts_is_refused_naming_the_field(write):
    path = write("models.csv", HEADER + MOE.replace(",8,2,1024,", ",8,9,1024,"))
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:2: column 'top_k' = '9': ") and "top_k <= experts" in problem


@pytest.mark.parametrize(
    ("row", "column", "expected"),
    [
        (MOE.replace(",8,2,1024,", ",8,,1024,"), "top_k", "give experts, top_k and expert_ffn"),
        (MOE.replace(",8,2,1024,", ",,,1024,"), "experts", "give experts, top_k and expert_ffn"),
        (MOE.replace(",8,2,1024,1,2,", ",,,,1,0,"), "shared_experts", "describes a MoE model"),
        (MOE.replace(",1,2,a config", ",1,8,a config"), "dense_layers", "not less than the 8 layers"),
        (MOE.replace(",4096,32000,", ",,32000,"), "ffn_hidden", "FFN width of the 2 dense layers"),
        (MOE.replace(",8,2,1024,", ",0,2,1024,"), "experts", "must be at least 1"),
        (MOE.replace(",8,2,1024,", ",8,2.5,1024,"), "top_k", "must be a whole number"),
        (MOE.replace(",1,2,a config", ",-1,2,a config"), "shared_experts", "must be at least 0"),
        (MOE.replace(",4096,,,,,8,", ",4096,64,,512,,8,"), "rope_head_dim", "kv_lora_rank and rope_head_dim together"),
    ],
)
def test_moe_columns_are_checked(write, row, column, expected):
    path = write("models.csv", HEADER + row)
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:2: column '{column}'") and expected in problem
    assert "\n" not in problem


def test_a_dense_models_active_params_are_its_params():
    catalog = load_catalog()
    for name in ("Llama-3-70B", "GPT-3-175B", "Llama-3.1-405B"):
        row = catalog.model(name)
        assert row.active_params == row.params


def test_deepseek_v3_active_params_are_within_10_percent_of_the_cards_37b():
    assert load_catalog().model("DeepSeek-V3").active_params == pytest.approx(37e9, rel=0.10)


@pytest.mark.parametrize(("name", "stated"), sorted(STATED_ACTIVE.items()))
def test_every_moe_rows_active_params_are_within_10_percent_of_its_card(name, stated):
    assert load_catalog().model(name).active_params == pytest.approx(stated, rel=0.10)


def test_active_params_count_one_token_of_a_toy_moe(write):
    """8 layers of h 1024: 2 dense (FFN 4096), 6 MoE with top-2 of 8 routed experts plus 1 shared (width 1024);
    GQA 4 of 16 heads of 64; output projection 32000 x 1024."""
    row = load_catalog([write("models.csv", HEADER + MOE)]).model("Toy-MoE")
    h = 1024
    attention = h * h * (2 + 2 * 4 / 16)
    expected = 32000 * h + 8 * attention + 2 * 3 * h * 4096 + 6 * ((2 + 1) * 3 * h * 1024 + h * 8)
    assert row.active_params == expected


def test_mla_attention_is_counted_from_its_latent_shape():
    """DeepSeek-V3's attention weights a layer, q_a + q_b + kv_a + kv_b + o, from its config's shape."""
    row = load_catalog().model("DeepSeek-V3")
    q = 7168 * 1536 + 1536 * 128 * (128 + 64)
    kv = 7168 * (512 + 64) + 512 * 128 * (128 + 128)
    assert row.attention_params == q + kv + 128 * 128 * 7168 == 187_105_280
