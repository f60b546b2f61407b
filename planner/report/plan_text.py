"""Terminal summary of a Plan, and the CSV bill of materials."""

from __future__ import annotations

import csv
import io

from planner.base.units import format_usd
from planner.hardware.costing import money_kind
from planner.report.csvtext import csv_cell as _text  # the CSV-injection guard of every CSV output
from planner.report.perf_text import FABRIC_LABEL, outside_range_note
from planner.report.terminal import format_table
from planner.results import Plan, Summary


def _gbps(value: float) -> str:
    return f"{value:,.0f} Gbps"


def _config(s: Summary) -> str:
    c = s.choice
    layout = f", {c.layout}" if c.layout and not c.layout.startswith("data parallel") else ""
    if c.tier == 0:
        return f"1 x {c.server} (single node), micro-batch {c.micro_batch}{layout}"
    return (
        f"{c.nodes} x {c.server}, {c.nics_per_node} x {c.nic} ({_gbps(c.node_gbps)}/node), "
        f"{FABRIC_LABEL[c.fabric]}, {c.fabric_text}, micro-batch {c.micro_batch}{layout}"
    )


# What each objective.kind minimises, in words (the plan's header, the workbook's Scenario sheet).
OBJECTIVE_TEXT = {
    "capex": "least capex",
    "tco": "least total cost of ownership",
    "cost-per-token": "least TCO per trained token",
    "throughput": "most tokens/s within the budget and power cap",
    "days": "fewest training days within the budget and power cap",
}


def render(plan: Plan) -> str:
    c, m, cost = plan.choice, plan.metrics, plan.cost
    out = [
        f"Plan for '{plan.scenario}': {plan.status} ({plan.solver}, {plan.candidates:,} candidates; "
        f"{OBJECTIVE_TEXT[plan.objective]})",
        "",
    ]
    out.append(
        f"  buy          {c.nodes} x {c.server}  ({c.gpus} x {c.gpu}, {c.gpus_per_node} per node{system_text(plan)})"
    )
    if c.tier:
        switches = ", ".join(f"{n} {t}" for t, n in c.switches_by_tier.items() if n)
        per_gpu = "one per GPU" if c.gpus_per_nic == 1 else f"one per {c.gpus_per_nic:g} GPUs"
        out.append(
            f"  network      {c.nics_per_node} x {c.nic} per node ({per_gpu}) = {_gbps(c.node_gbps)} usable "
            f"({_gbps(c.nic_usable_gbps)} per NIC in {c.nic_pcie}), {FABRIC_LABEL[c.fabric]}"
        )
        out.append(f"  fabric       {c.fabric_text}: {switches} switch(es)")
        out.append(f"  links        {c.links}")
    else:
        out.append("  network      none: one node, collectives on NVLink")
    out += _layout_lines(plan)
    accum = f", grad_accum {c.grad_accum}" if c.grad_accum else ""
    out.append(f"  batch        micro-batch {c.micro_batch}{accum}")
    out.append(f"  parallel     {layout_text(c, m)}")
    out.append("")
    out.append(
        f"  achieved     {m.achieved_tflops_per_gpu:.1f} TFLOPs/GPU (MFU {m.mfu * 100:.1f}%), "
        f"bound by {m.binding_label or m.binding}"
    )
    step = f"{m.t_step_s:.3g} s per micro-step" + (
        f", {m.t_optimizer_step_s:.3g} s per optimizer step" if m.t_optimizer_step_s else ""
    )
    out.append(f"  step         {step}; {m.tokens_per_s:,.0f} tokens/s")
    out.append(f"  range        {_range_text(m)}")
    out += _schedule_lines(plan)
    out.append(f"  memory       {m.memory_per_gpu_gib:.1f} of {m.usable_hbm_gib:.1f} GiB usable per GPU")
    out.append("")
    out.append(
        f"  capex        {format_usd(cost.capex_usd)}  ("
        + ", ".join(f"{k} {format_usd(v)}" for k, v in (cost.by_section or cost.by_category).items())
        + ")"
    )
    out.append(f"  power        {cost.power_kw:,.1f} kW nameplate, {cost.draw_kw:,.1f} kW training draw")
    out += _tco_lines(cost) + _per_token_lines(m, cost)
    out += price_age_lines(plan.prices) + delivery_lines(plan.delivery)
    if plan.why:
        out += ["", "Why this plan:"] + [f"  - {w}" for w in plan.why]
    out += ["", "Bill of materials:", _bom_table(plan)]
    if plan.not_priced:
        out += ["", "Not priced (not in the capex above):"] + [f"  - {n}" for n in plan.not_priced]
    for title, items in (
        ("Best per fabric", plan.per_fabric),
        ("Best per NIC speed", plan.per_nic_speed),
        ("Best per GPU", plan.per_gpu),
        ("Next-best alternatives", plan.alternatives),
    ):
        if items:
            out += ["", f"{title}:", _summary_table(items, plan.objective)]
    if plan.alternatives_note:
        out += ["", plan.alternatives_note]
    out += ["", f"calibration: {plan.calibration}"]
    return "\n".join(out)


def price_age_text(prices) -> str:
    """How current the prices are: the oldest decisive one, and the parts priced older than the limit."""
    if prices is None:
        return ""
    d = prices.oldest_decisive
    oldest = f"oldest decisive price {d.price_date} ({d.sku}, {d.share_of_capex:.0%} of capex)" if d else ""
    if not prices.stale:
        return f"{oldest}; none older than {prices.stale_months} months as of {prices.as_of}"
    named = ", ".join(f"{s.sku} ({s.price_date})" for s in prices.stale[:3])
    more = f" and {len(prices.stale) - 3} more" if len(prices.stale) > 3 else ""
    return (
        f"{oldest}; {len(prices.stale)} part(s) priced more than {prices.stale_months} months before "
        f"{prices.as_of} ({prices.stale_share_of_capex:.0%} of capex): {named}{more} - get current quotes"
    )


def price_age_lines(prices) -> list[str]:
    return [f"  prices       {price_age_text(prices)}"] if prices is not None else []


def delivery_lines(delivery) -> list[str]:
    """When the last part arrives (its lead time and what it rests on), and a deadline counted from then."""
    return [f"  delivery     {delivery_text(delivery)}"] if delivery is not None else []


def delivery_text(delivery) -> str:
    if delivery is None:
        return ""
    text = (
        f"every part by {delivery.delivered_by} if ordered on {delivery.as_of}: the longest lead time is "
        f"{delivery.last_sku}'s {delivery.lead_weeks:g} weeks ({delivery.basis})"
    )
    if delivery.deadline_ends:
        text += f"; the deadline's days counted from delivery end {delivery.deadline_ends} (installation not counted)"
    return text


PART_LABELS = {
    "gpu": "GPUs",
    "host": "hosts",
    "nic": "NICs",
    "node_link": "NIC links",
    "fabric_link": "fabric links",
    "leaf": "leaves",
    "upper_switch": "spines and cores",
    "storage_client": "storage clients",
    "software": "software",
}


def interruptions_text(s, top: int | None = None) -> str:
    """Where a schedule's interruptions come from: the parts that fail, largest first (s: a Schedule; `top`:
    the largest causes only, in brackets)."""
    rate = f"{s.interruptions_per_1000_node_days:.3g} interruptions per 1000 node-days"
    if s.interruptions_from != "bill of materials":
        return rate + " (given)"
    total = sum(s.interruptions_by_part.values())
    shares = sorted(((v / total, k) for k, v in s.interruptions_by_part.items() if total and v / total >= 0.005))
    causes = [f"{PART_LABELS.get(k, k)} {share:.0%}" for share, k in reversed(shares)]
    if top is not None:
        return f"{rate} ({', '.join(causes[:top] + (['...'] if len(causes) > top else []))})" if causes else rate
    return f"{rate} from the bill of materials: {', '.join(causes)}" if causes else rate


def repair_text(s) -> str:
    """What the plan's spare nodes leave of the waits for repairs (s: a Schedule)."""
    if not s.repair_hours or s.interruptions_from != "bill of materials":
        return ""
    if not s.spare_nodes:
        return f"; no spare nodes: {s.repair_wait_share:.1%} of the time short of a node ({s.repair_hours:g} h repairs)"
    return (
        f"; {s.spare_nodes} spare node{'s' if s.spare_nodes > 1 else ''}: a node failure finds none free "
        f"{s.spare_wait_probability:.1%} of the time, {s.repair_wait_share:.2%} of the time short of a node "
        f"({s.repair_hours:g} h repairs)"
    )


def _schedule_lines(plan: Plan) -> list[str]:
    """Training days, and with a deadline the calendar days once interruptions are counted."""
    m, s = plan.metrics, plan.schedule
    if m.training_days is None:
        return []
    if s is None:
        return [f"  training     {m.training_days:.1f} days"]
    allowed = s.deadline_days * (1 - s.schedule_margin)
    margin = f" less a {s.schedule_margin:.0%} margin = {allowed:.1f} days" if s.schedule_margin else ""
    if s.goodput_given:
        how = "goodput given in the scenario"
    else:
        interval = (
            f"checkpoint every {s.checkpoint_interval_minutes:.0f} min"
            + (" (Young/Daly)" if s.checkpoint_interval_young_daly else "")
            + f", {s.checkpoint_write_s:.3g} s to write"
            if s.checkpoint_interval_minutes is not None
            else "no checkpoints needed"
        )
        how = f"{interruptions_text(s)}; {s.restart_minutes:g} min restart each, {interval}{repair_text(s)}"
    return [
        f"  training     {s.effective_days:.1f} effective training days (calendar) = {s.training_days:.1f} days "
        f"uninterrupted / goodput {s.goodput:.1%}, with {s.interruptions_expected:.0f} interruptions expected",
        f"               ({how})",
        f"  deadline     {s.deadline_days:g} days{margin}: " + ("met" if s.meets_deadline else "MISSED"),
    ]


def _tco_lines(cost) -> list[str]:
    years = f"{cost.years:g} years"
    running = [
        f"energy {format_usd(cost.energy_usd)}",
        f"colocation {format_usd(cost.colocation_usd)}",
        f"support {format_usd(cost.support_usd)}",
    ] + ([f"staff {format_usd(cost.staff_usd)}"] if cost.staff_usd else [])
    return [
        f"  running      over {years}: " + ", ".join(running),
        f"  TCO          {format_usd(cost.tco_usd)} over {years} (capex + running)",
    ]


def _per_token_lines(m, cost) -> list[str]:
    """What a trained token costs, and the run at that price."""
    if m.usd_per_million_tokens is None:
        return []
    run = f"; this run's tokens: {format_usd(m.cost_to_train_usd)}" if m.cost_to_train_usd is not None else ""
    return [
        f"  per token    ${m.usd_per_million_tokens:,.3g} per million tokens (TCO over {cost.years:g} years / the "
        f"tokens it trains in them at this rate{', goodput counted' if m.goodput is not None else ''}){run}"
    ]


def _range_text(m) -> str:
    """The throughput's validated range, and what the plan was sized for."""
    span = f"{m.tokens_per_s_p10:,.0f} - {m.tokens_per_s_p90:,.0f} tokens/s (p10-p90 of out-of-publication errors)"
    note = outside_range_note(m.tokens_per_s_point, m.tokens_per_s_p10, m.tokens_per_s_p90, m.range_group)
    span += f"; {note}" if note else ""
    if m.confidence is None:
        return span + "; sized for the point prediction (--confidence 0.9 sizes for the p10)"
    share = m.tokens_per_s / m.tokens_per_s_point
    return (
        f"sized for the outcome met with probability {m.confidence:g}: {m.tokens_per_s:,.0f} tokens/s "
        f"({share:.0%} of the point prediction {m.tokens_per_s_point:,.0f}); {span}"
    )


def system_text(plan: Plan) -> str:
    """A node that is more than one server: its NVLink domain and hosts (nothing for an HGX/DGX server)."""
    lay = plan.layout
    if "hosts_per_node" not in lay:
        return ""
    domains = plan.choice.gpus_per_node // lay["scale_up_gpus"]
    what = f"one {lay['scale_up_gpus']}-GPU NVLink domain" if domains == 1 else f"{domains} NVLink domains"
    return f": {what} of {lay['hosts_per_node']} hosts"


def rack_text(lay: dict) -> str:
    """How nodes stand in racks: packed into the layout's racks, or each its own rack (a rack-scale system)."""
    span = lay.get("racks_per_node")
    if span:
        return f"each node its own {'rack' if span == 1 else f'{span} racks'} ({lay['cooling']} cooled)"
    return f"{lay['nodes_per_rack']} nodes per rack"


def _layout_lines(plan: Plan) -> list[str]:
    """Racks, rows and the networks beside the compute fabric, in one glance."""
    lay = plan.layout
    if not lay:
        return []
    racks = f"{lay['compute_racks']} compute + {lay['network_racks']} network racks"
    rows = f" in {lay['rows']} row{'s' if lay['rows'] != 1 else ''}" if lay.get("rows") else ""
    out = [
        f"  layout       {rack_text(lay)}; {racks}{rows}; {lay['pdus']} PDUs; leaves "
        f"{lay['leaf_placement'] or 'none'}; longest runs {lay['longest_node_run_m']:g} m node-leaf"
        + (f", {lay['longest_switch_run_m']:g} m switch-switch" if lay.get("longest_switch_run_m") else "")
    ]
    others = [
        f"{lay[k]} {label}"
        for k, label in (
            ("storage_switches", "storage switches"),
            ("inband_switches", "in-band switches"),
            ("oob_switches", "out-of-band switches"),
            ("ufm_appliances", "UFM appliances"),
        )
        if lay.get(k)
    ]
    if others:
        out.append(f"  networks     {', '.join(others)}")
    return out


def _bom_table(plan: Plan) -> str:
    """Lines grouped by section (compute fabric, storage, management, racks), each with its subtotal."""
    records = []
    sections = list(dict.fromkeys(b.section for b in plan.bom))
    for section in sections:
        lines = [b for b in plan.bom if b.section == section]
        for b in lines:
            records.append(
                {
                    "section": section,
                    "category": b.category,
                    "sku": b.sku,
                    "qty": b.quantity,
                    "unit_usd": b.unit_usd,
                    "extended_usd": b.extended_usd,
                    "price_date": b.price_date + (" (old)" if b.stale else ""),
                    "source": b.source + (" (included)" if b.note else ""),
                }
            )
        records.append({"section": f"  subtotal {section}", "extended_usd": sum(b.extended_usd for b in lines)})
    records.append({"section": "total", "extended_usd": plan.cost.capex_usd})
    columns = ["section", "category", "sku", "qty", "unit_usd", "extended_usd", "price_date", "source"]
    return format_table(records, columns, max_width=44, wrap=("sku", "source"))


def _summary_table(items: list[Summary], objective: str) -> str:
    """Options with their capex and, against the chosen plan, the difference in the objective's money (capex or
    TCO); for an output objective also what it ranks by (TCO per million tokens, tokens/s or days)."""
    money = money_kind(objective)
    delta = f"{money}_delta_usd"
    records = [
        {
            "option": s.label,
            "configuration": _config(s),
            "tflops": f"{s.metrics.achieved_tflops_per_gpu:.1f}",
            "days": _days(s),
            "capex_usd": s.cost.capex_usd,
            "tco_usd": s.cost.tco_usd,
            "usd_per_mtok": f"{s.metrics.usd_per_million_tokens:.3g}" if s.metrics.usd_per_million_tokens else "",
            "tokens_s_goodput": f"{s.metrics.trained_tokens_per_s:,.0f}",
            delta: s.delta_usd,
            "tie": "tie" if s.tie else "",
        }
        for s in items
    ]
    days = ["days"] if any(s.metrics.training_days is not None for s in items) else []
    columns = ["option", "configuration", "tflops", *days, "capex_usd"]
    columns += (["tco_usd"] if money == "tco" else []) + [*RANKED_BY.get(objective, ()), delta, "tie"]
    return format_table(records, columns, max_width=72, wrap=("configuration",))


RANKED_BY = {"cost-per-token": ("usd_per_mtok",), "throughput": ("tokens_s_goodput",), "days": ()}


def _days(s: Summary) -> str:
    """Calendar days with interruptions counted (training days when there is no goodput)."""
    days = s.metrics.effective_training_days or s.metrics.training_days
    return "" if days is None else f"{days:.1f}"


def bom_csv(plan: Plan) -> str:
    """Bill of materials as CSV text: the lines, what is not priced, then the total (last). Cells that a
    spreadsheet would read as a formula are prefixed with '."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    header = ["category", "sku", "description", "vendor", "quantity", "unit_usd", "extended_usd", "source"]
    writer.writerow(header + ["confidence", "section", "note", "price_date", "stale"])
    for b in plan.bom:
        writer.writerow(
            [
                _text(b.category),
                _text(b.sku),
                _text(b.description),
                _text(b.vendor),
                b.quantity,
                f"{b.unit_usd:.2f}",
                f"{b.extended_usd:.2f}",
                _text(b.source),
                _text(b.confidence),
                _text(b.section),
                _text(b.note),
                _text(b.price_date),
                "yes" if b.stale else "",
            ]
        )
    for item in plan.not_priced:
        writer.writerow(["not priced", "", _text(item), "", "", "", "", "", "", "", "", "", ""])
    writer.writerow(["total", "", "", "", "", "", f"{plan.cost.capex_usd:.2f}", "", "", "", "", "", ""])
    return buffer.getvalue()


SHARDING_LABEL = {
    "full": "parameters, gradients and optimizer states sharded (ZeRO-3 / FSDP)",
    "hybrid": "sharded within groups, replicated across them (HSDP)",
    "zero2": "gradients and optimizer states sharded, weights kept whole (ZeRO-2)",
    "zero1": "optimizer states sharded (Megatron distributed optimizer)",
    "none": "replicated (DDP)",
}


RECOMPUTE_WORDS = {
    "none": "no activation recompute",
    "selective": "selective recompute (the attention core)",
    "op": "per-op recompute (every second matmul)",
    "full": "full activation recompute",
}


def layout_text(c, m) -> str:
    """The chosen parallel layout, the data-parallel ranks and their sharding, the pipeline's bubble and which
    traffic crosses which tier per micro-step."""
    head = c.layout or f"data parallel over DP {c.gpus}"
    parts = [f"{head}, {SHARDING_LABEL.get(c.sharding, c.sharding or 'sharded')}"]
    if c.checkpointing:
        parts.append(RECOMPUTE_WORDS.get(c.checkpointing, c.checkpointing))
    if c.pp > 1:
        parts.append(f"pipeline bubble {m.bubble * 100:.1f}%")
    if c.pp > 1 and c.pp_balanced:
        parts.append("balanced split: the embedding and the loss each take a layer's pipeline stage")
    if c.tp > 1:
        where = "inside the scale-up domain" if not m.tp_bytes_per_domain_per_step else "across domains"
        parts.append(f"TP {where} ({m.t_comm_tp_s * 1e3:.0f} ms exposed per micro-step)")
    per_node = m.bytes_per_node_per_step + m.tp_bytes_per_domain_per_step
    parts.append(
        f"{_bytes(per_node)} per node over the network and {_bytes(m.bytes_per_gpu_scale_up_per_step)} "
        "per GPU over NVLink per micro-step"
    )
    if c.oversubscription > 1 and c.tier > 1 and not c.su_local:
        parts.append(
            f"all of the network bytes taken to cross the {c.oversubscription:g}:1 tier above the leaves, at "
            f"{_gbps(c.node_gbps / c.oversubscription)} per node (where the layout's groups sit under one leaf is "
            "not modelled)"
        )
    return "; ".join(parts)


def _bytes(value: float) -> str:
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if value >= size:
            return f"{value / size:.3g} {unit}"
    return f"{value:.0f} B"
