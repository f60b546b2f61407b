"""The terminal report of `planner serve`."""

from __future__ import annotations

from planner.results import ServingPlan


def _ms(seconds: float | None) -> str:
    return "none" if seconds is None else f"{seconds * 1e3:,.0f} ms" if seconds >= 0.1 else f"{seconds * 1e3:.1f} ms"


def render(plan: ServingPlan) -> str:
    p = f"p{plan.percentile * 100:g}"
    lines = [
        f"Serving {plan.model} at {plan.rate_per_s:g} requests/s ({plan.input_tokens:,} tokens in, "
        f"{plan.output_tokens:,} out), TTFT {p} <= {_ms(plan.ttft_target_s)}, TPOT {p} <= {_ms(plan.tpot_target_s)}: "
        f"{plan.status} ({plan.solver})",
    ]
    for m in plan.mix:
        gpus = m.servers * (m.replicas_per_server * m.replica_gpus) + m.prefill_replicas * m.prefill_replica_gpus
        layout = f"{m.layout.upper()} {m.replica_gpus}"
        pools = (
            f"{m.replicas} of {m.replica_gpus} GPU(s), {layout}"
            if m.mode == "aggregated"
            else f"disaggregated: {m.prefill_replicas} prefill of {m.prefill_replica_gpus} GPU(s) "
            f"({m.prefill_layout.upper()} {m.prefill_replica_gpus}) and {m.replicas} decode of {m.replica_gpus} "
            f"({layout})"
        )
        lines += [
            f"  buy          {m.servers} x {m.server}  ({gpus} x {m.gpu}), ${m.unit_usd:,.0f} each"
            f" ({m.source}, {m.price_date})",
            f"  replicas     {pools}, {m.precision} weights; {m.weights_gib_per_gpu:.1f} GiB of weights per GPU, "
            f"KV cache for {m.max_sequences:,.0f} sequences",
            f"  per replica  up to {m.rate_per_replica:.2f} requests/s: batch {m.batch:.0f}, TTFT {p} {_ms(m.ttft_s)}, "
            f"TPOT {p} {_ms(m.tpot_s)}; {m.output_tokens_per_s_per_gpu:,.0f} output tokens/s per GPU; "
            f"bound by {m.binds}",
        ]
    lines += [
        f"  capacity     {plan.capacity_per_s:.2f} requests/s within the targets ({plan.gpus} GPUs)",
        f"  capex        ${plan.capex_usd:,.0f} (servers only: front-end network, racks and storage not included)",
        f"  power        {plan.power_w / 1e3:,.1f} kW nameplate",
        f"  per token    ${plan.usd_per_million_output_tokens:.3f} per million output tokens (capex over "
        f"{plan.years:g} years and energy, at {plan.rate_per_s:g} requests/s); "
        f"{plan.output_tokens_per_s_per_gpu:,.0f} output tokens/s per GPU",
        "Each kind alone:",
    ]
    for o in plan.ranking:
        lines.append(
            f"  ${o.capex_usd:>14,.0f}  {o.servers:>4} x {o.server}: {o.precision} {o.layout.upper()} "
            f"{o.replica_gpus}"
            + (f" (prefill {o.prefill_layout.upper()} {o.prefill_replica_gpus})" if o.mode == "disaggregated" else "")
            + f", {o.rate_per_server:.2f} requests/s per server, bound by {o.binds}"
        )
    if plan.not_serving:
        lines.append("Cannot serve:")
        lines += [f"  - {t}" for t in plan.not_serving]
    lines.append(
        "Model: continuous batching with chunked prefill, Poisson arrivals, fixed request lengths; "
        "analytic queue checked against a step simulation (docs/model.md section 10). Out of sample the engine "
        "is optimistic at high load (max-throughput tables 32-71% above measured; TTFT 29-87% off): check with "
        "`planner validate --serving`."
    )
    return "\n".join(lines)
