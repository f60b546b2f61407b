"""The fleet's workloads as tables (docs/fleet.md section 2): the training jobs and their options (per job
and resource, the node counts worth running at, each the smallest that finishes the job in m whole periods,
performance from the one model), the runs those options make (columns), and the inference services with the
tokens/s a replica of each serves on each resource and the demand per period. planner/tables/fleet.py builds
the resources (offers, pools, cloud) these run on."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd

from planner.base.errors import ScenarioError, in_field
from planner.base.units import SECONDS_PER_DAY
from planner.catalog.load import Catalog
from planner.catalog.rows import CloudRow
from planner.inputs.fleet import HOURS_PER_PERIOD, SECONDS_PER_PERIOD, Fleet, resolve_windows
from planner.model.layout import choose, layout_name, tp_fits
from planner.model.parallelism import LAYOUT
from planner.model.serving import capacity, served_model
from planner.model.workload import (
    Requirements,
    fits_memory,
    hybrid_group,
    meets_target,
    scenario_training,
    whole_grad_accum,
)
from planner.tables import rent as renting
from planner.tables.buy import NODE_SHAPE, evaluate_at, layouts, network_key


def workloads(fleet: Fleet) -> tuple[pd.DataFrame, pd.DataFrame]:
    windows, service_windows = resolve_windows(fleet)
    jobs = pd.DataFrame(
        {
            "j": np.arange(len(fleet.training)),
            "name": [j.name for j in fleet.training],
            "tokens": [j.tokens for j in fleet.training],
            "start": [w.start for w in windows],
            "deadline": [w.end for w in windows],
            "late_penalty_usd": [j.late_penalty_usd for j in fleet.training],
            "target_tflops": [j.target_tflops or 0.0 for j in fleet.training],
        }
    )
    services = pd.DataFrame(
        {
            "s": np.arange(len(fleet.inference)),
            "name": [s.name for s in fleet.inference],
            "tokens_per_s": [s.demand_tokens_per_s for s in fleet.inference],
            "growth": [s.growth_per_period for s in fleet.inference],
            "start": [w.start for w in service_windows],
            "end": [w.end for w in service_windows],
        }
    )
    return jobs, services


def _resources(pools: pd.DataFrame, cloud: pd.DataFrame, catalog: Catalog) -> pd.DataFrame:
    """Where a job can run: each pool (node counts up to its size; one node when standalone) and each cloud
    offering (instances up to its quota; one when it has no inter-node fabric), as perf keys."""
    gbps, fabric = network_key(~pools["networked"], pools["node_gbps"], pools["fabric"])
    own = pools.assign(
        kind="pool",
        resource=pools["p"],
        node_gbps_eff=gbps,
        key_fabric=fabric,
        n_max=np.where(pools["networked"], pools["max_nodes"], 1),
    )[["kind", "resource", *NODE_SHAPE, "node_gbps_eff", "key_fabric", "n_max"]]
    if cloud.empty:
        return own.reset_index(drop=True)
    shapes = pd.DataFrame.from_records([renting.offering_shape(catalog, row) for row in cloud["row"]])
    rented = shapes[NODE_SHAPE].assign(
        kind="cloud",
        resource=cloud["c"].to_numpy(),
        node_gbps_eff=cloud["internode_gbps"].to_numpy(),
        key_fabric=cloud["fabric"].to_numpy(),
        n_max=np.where(cloud["multi_node"], cloud["quota"], np.minimum(1, cloud["quota"])),
    )
    return pd.concat([own, rented[own.columns]], ignore_index=True)


def _performance(work, req: Requirements, resources: pd.DataFrame, micro_batches, n_cap: int, calibration, lay):
    """Best tokens/s (over micro-batches and the layouts `lay`, by planner.model.layout.choose) of the job on each
    resource at every node count 1..n_max: one perf evaluation over the whole grid."""
    res = resources.assign(n_max=np.minimum(resources["n_max"], n_cap))
    res = res[res["n_max"] >= 1]
    grid = res.loc[res.index.repeat(res["n_max"])].copy()
    grid["n"] = grid.groupby(level=0).cumcount() + 1
    grid = grid.merge(pd.DataFrame({"micro_batch": list(micro_batches)}), how="cross").merge(lay, how="cross")
    grid = grid[tp_fits(grid["tp"].to_numpy(), grid["scale_up_gpus"].to_numpy())].reset_index(drop=True)
    keys = grid.rename(columns={"key_fabric": "fabric"})
    ev = evaluate_at(keys, grid["n"].to_numpy(), work, calibration)
    legal = whole_grad_accum(ev["gpus"], ev["micro_batch"], req, ev)
    ok = fits_memory(ev) & meets_target(ev, req) & legal
    grid["tokens_per_s"] = np.where(ok, ev["tokens_per_s"], 0.0)
    grid["tflops"] = ev["achieved_tflops_per_gpu"]
    grid["fits"] = fits_memory(ev)
    grid["meets_target"] = meets_target(ev, req)
    grid["dp"] = ev["dp"]
    group = grid.groupby(["kind", "resource", "n"], sort=True).ngroup().to_numpy()
    # nothing fits at a size: its first row, at 0 tokens/s
    dims = {k: grid[k].to_numpy() for k in LAYOUT}
    chosen = choose(group, grid["tokens_per_s"].to_numpy(), ok, dims, fallback_first=True)
    best = grid.iloc[chosen].copy()
    best["layout"] = [layout_name(row) for row in best[[*LAYOUT, "dp"]].to_dict("records")]
    return best.sort_values(["kind", "resource", "n"]).reset_index(drop=True), grid


def options(catalog, fleet: Fleet, jobs, pools, cloud, calibration, source: str) -> pd.DataFrame:
    resources = _resources(pools, cloud, catalog)
    frames = []
    horizon = fleet.horizon.periods
    for j, job in enumerate(fleet.training):
        work = in_field(
            source,
            f"training[{j}].workload",
            lambda job=job: scenario_training(catalog, SimpleNamespace(workload=job.workload)),
        )
        req = Requirements(
            target_tflops=job.target_tflops or 0.0,
            global_batch=job.workload.global_batch,
            shard_group=hybrid_group(job.workload),
        )
        n_cap = job.max_nodes or int(resources["n_max"].max())
        lay = layouts(work, SimpleNamespace(workload=job.workload), int(resources["scale_up_gpus"].max()))
        best, grid = _performance(work, req, resources, job.workload.micro_batches, n_cap, calibration, lay)
        # up to the horizon even past a hard deadline: those runs are only used to say by how much a
        # deadline would slip (optimize/fleet.py leaves them out unless deadlines are being relaxed)
        window = horizon - int(jobs.loc[j, "start"]) + 1
        found = _job_options(best, job.tokens, window, cloud, fleet.cloud)
        if found.empty:
            raise ScenarioError(f"{source}: training[{j}] ({job.name}): {_why_no_option(grid, best, job, window)}")
        frames.append(found.assign(j=j))
    if not frames:
        return pd.DataFrame(columns=["k", "j", "kind", "resource", "n", "micro_batch", "tokens_per_s", "tflops",
                                     "periods", "days", "cloud_usd", "gpus_per_node", "layout",
                                     "checkpointing"])  # fmt: skip
    options = pd.concat(frames, ignore_index=True)
    options.insert(0, "k", np.arange(len(options)))
    return options


def _job_options(best: pd.DataFrame, tokens: float, window: int, cloud: pd.DataFrame, terms) -> pd.DataFrame:
    """Per resource, for each m = 1..window whole periods, the node count worth running at: on a pool the
    smallest that finishes in m periods (a larger one holds more nodes for as long); in the cloud the one
    with the smallest bill among those (training_bill)."""
    best = best[best["tokens_per_s"] > 0].copy()
    if best.empty:
        return best
    best["periods"] = np.ceil(tokens / (best["tokens_per_s"] * SECONDS_PER_PERIOD) - 1e-9).astype(int)
    best = best[best["periods"] <= window]
    best["days"] = tokens / best["tokens_per_s"] / SECONDS_PER_DAY
    best["cloud_usd"] = 0.0
    rented = best["kind"] == "cloud"
    if rented.any():
        rows = cloud.set_index("c")["row"]
        bills = [
            training_bill(rows[r], int(n), days * 24, terms)
            for r, n, days in best.loc[rented, ["resource", "n", "days"]].itertuples(index=False)
        ]
        best.loc[rented, "cloud_usd"] = bills
        best = best[np.isfinite(best["cloud_usd"])]
    chosen = []
    for (kind, _), group in best.groupby(["kind", "resource"], sort=False):
        group = group.sort_values("n")
        periods, rows = group["periods"].to_numpy(), group.index.to_numpy()
        if kind == "pool":
            # the smallest n for each m: the rows that set a new low of periods needed, in order of n
            previous = np.concatenate([[np.inf], np.minimum.accumulate(periods)[:-1]])
            chosen += list(rows[periods < previous])
            continue
        bill = group["cloud_usd"].to_numpy()
        for m in np.unique(periods):
            eligible = periods <= m
            chosen.append(rows[eligible][np.argmin(bill[eligible])])
    picked = best.loc[list(dict.fromkeys(chosen))]
    return picked[["kind", "resource", "n", "micro_batch", "tokens_per_s", "tflops", "periods", "days",
                   "cloud_usd", "gpus_per_node", "layout", "checkpointing"]].reset_index(drop=True)  # fmt: skip


def training_bill(row: CloudRow, instances: int, hours: float, terms) -> float:
    """The cheapest bill of a run on `instances` instances for `hours`, every instance on one allowed pricing
    model (as `planner cloud` without mix_pricing): spot only on one instance unless spot_multi_instance
    (a preemption stalls every rank), Capacity Blocks billed whole (renting.billed_hours)."""
    bills = [math.inf]
    for pricing in terms.pricing:
        rate = renting.hourly_rate(row, pricing)
        if rate is None or (pricing == "spot" and not renting.spot_allowed(instances, terms)):
            continue
        billed = renting.billed_hours(row, pricing, hours)
        if billed is not None:
            bills.append(rate * instances * billed)
    return min(bills)


def _why_no_option(grid: pd.DataFrame, best: pd.DataFrame, job, window: int) -> str:
    fix = "allow more servers (buy.servers), a larger max_nodes, the cloud, or a later deadline"
    if grid.empty or not grid["fits"].any():
        return f"the model does not fit in memory on any allowed server or cloud offering; {fix}"
    if not (grid["fits"] & grid["meets_target"]).any():
        top = grid.loc[grid["fits"], "tflops"].max()
        return f"at most {top:.0f} TFLOPs/GPU where it fits < target_tflops {job.target_tflops:g}; lower the target"
    fastest = best["tokens_per_s"].max()
    days = job.tokens / fastest / SECONDS_PER_DAY if fastest > 0 else math.inf
    return (
        f"cannot finish within its {window} period(s): the fastest allowed configuration needs {days:,.0f} days "
        f"({days / (HOURS_PER_PERIOD / 24):.1f} periods); {fix}"
    )


def columns(options: pd.DataFrame, jobs: pd.DataFrame, periods: pd.DataFrame) -> pd.DataFrame:
    """Every option at every start period its window allows: a run of `periods` consecutive quarters from
    `start`, ending in `finish`; `late` periods after the deadline (allowed only with a late penalty, or
    when deadlines are being relaxed); the cloud bill spread evenly over the run, discounted."""
    if options.empty:
        empty = pd.DataFrame(columns=["col", "k", "j", "start", "finish", "late", "hard_late", "cloud_pv", "penalty"])
        return empty.astype({"col": int, "k": int, "j": int, "start": int, "finish": int, "late": int,
                             "hard_late": bool, "cloud_pv": float, "penalty": float})  # fmt: skip
    horizon = len(periods)
    o = options.merge(jobs[["j", "start", "deadline", "late_penalty_usd"]], on="j")
    o["last_start"] = horizon - o["periods"] + 1
    o = o[o["last_start"] >= o["start"]]
    runs = o.loc[o.index.repeat(o["last_start"] - o["start"] + 1)].copy()
    runs["start"] = runs["start"] + runs.groupby(level=0).cumcount()
    runs["finish"] = runs["start"] + runs["periods"] - 1
    runs["late"] = np.maximum(0, runs["finish"] - runs["deadline"])
    runs["hard_late"] = (runs["late"] > 0) & runs["late_penalty_usd"].isna()
    cumulative = np.concatenate([[0.0], np.cumsum(periods["discount"].to_numpy())])
    pv = cumulative[runs["finish"].to_numpy()] - cumulative[runs["start"].to_numpy() - 1]
    runs["cloud_pv"] = runs["cloud_usd"] / runs["periods"] * pv
    runs["penalty"] = runs["late"] * runs["late_penalty_usd"].fillna(0.0)
    runs = runs.reset_index(drop=True)
    runs.insert(0, "col", np.arange(len(runs)))
    return runs[["col", "k", "j", "start", "finish", "late", "hard_late", "cloud_pv", "penalty"]]


def serving(catalog, fleet: Fleet, services: pd.DataFrame, pools: pd.DataFrame, cloud: pd.DataFrame, source: str):
    """Per service, every pool and cloud offering that serves it with its best replica (planner/model/serving.py),
    and the demand per period."""
    columns = ["gpu", "hbm_gib", "hbm_gb_per_s", "peak_tflops", "gpus_per_node", "scale_up_gpus", "scale_up_gb_per_s"]
    offered = pd.DataFrame.from_records([renting.offering_shape(catalog, row) for row in cloud["row"]], columns=columns)
    machines = pd.concat(
        [
            pools[columns].assign(kind="pool", resource=pools["p"].to_numpy()),
            offered[columns].assign(
                kind="cloud", resource=cloud["c"].to_numpy(), gpus_per_node=cloud["gpus"].to_numpy()
            ),
        ],
        ignore_index=True,
    )
    frames, demand = [], []
    for s, svc in enumerate(fleet.inference):
        model = in_field(source, f"inference[{s}].model", lambda svc=svc: served_model(catalog, svc))
        cap = capacity(model, machines).assign(s=s)
        if not (cap["tokens_per_s"] > 0).any():
            reasons = "; ".join(sorted(set(cap["reason"])))
            raise ScenarioError(
                f"{source}: inference[{s}] ({svc.name}): no allowed server or cloud offering can serve it "
                f"({reasons}); allow larger GPUs or scale-up domains, lower weight_bytes or context_tokens, or relax "
                "max_ms_per_token"
            )
        frames.append(cap[cap["tokens_per_s"] > 0])
        row = services.iloc[s]
        for t in range(int(row["start"]), int(row["end"]) + 1):
            growth = (1 + row["growth"]) ** (t - row["start"])
            demand.append({"s": s, "t": t, "tokens_per_s": row["tokens_per_s"] * growth})
    columns = ["s", "kind", "resource", "gpu", "gpus_per_node", "layout", "replica_gpus", "batch", "ms_per_token",
               "tokens_per_s"]  # fmt: skip
    serving = pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)
    return serving.reset_index(drop=True), pd.DataFrame.from_records(demand, columns=["s", "t", "tokens_per_s"])
