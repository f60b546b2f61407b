"""The candidate table of a purchase: one row per
    server x NIC x NICs per node x fabric x switch x tier x oversubscription x micro-batch
(plus one single-node row per server x micro-batch), each priced exactly at its smallest feasible node count.

Node-count bounds are exact, by bisection on functions proven monotone in the node count N (N >= 2):
  * achieved TFLOPs/GPU never rises with N (the ring share (n-1)/n and the latency both grow), so the
    target gives an upper bound;
  * memory per GPU never rises with N (states are sharded 16P/n), so memory gives a lower bound;
  * cluster tokens/s = N*G*T / t_step(N) never falls with N for N >= 2, because t_step(N) grows at most
    proportionally: every term of t_comm has the form a*(1 - 1/(cN)) or c + dN, whose elasticity is <= 1;
    so a deadline or throughput requirement gives a lower bound.
One node is a candidate of its own (no NICs, no switches), since 1 -> 2 nodes can lower cluster throughput.

Every cost and power term is non-decreasing in N (nodes, NIC ports and ceil-sized switch counts all grow), so
a candidate's cheapest use is its smallest feasible N, and a budget or power cap that excludes that size
excludes every larger one: the priced table is exact, and the MILP needs only the rows that can win.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import numpy as np
import pandas as pd

from planner.base.errors import ScenarioError
from planner.base.frames import consolidated
from planner.base.units import HOURS_PER_YEAR, SECONDS_PER_DAY, SECONDS_PER_HOUR
from planner.catalog.load import Catalog
from planner.catalog.rows import ServerRow
from planner.hardware import bom, costing, fabric, sizing
from planner.hardware import designs as design_module
from planner.hardware import layout as hardware_layout
from planner.hardware.designs import Designs, designs, undominated
from planner.hardware.topology import domain_gbps
from planner.inputs.scenario import Scenario
from planner.model import layout, reliability
from planner.model import performance as perf
from planner.model.calibration import Calibration
from planner.model.parallelism import (
    LAYOUT,
    LAYOUT_DEFAULTS,
    RECOMPUTE_SEARCH,
    SEARCHED,
    Parallelism,
    precision_problem,
)
from planner.model.workload import (
    THROUGHPUT_TOLERANCE,
    Requirements,
    Training,
    fast_enough,
    fits_memory,
    meets_target,
    scenario_training,
)
from planner.results import BomLine

# A node's shape as the performance model sees it (the fleet's pools share it), then a performance key:
# the shape, the micro-batch and the network.
NODE_SHAPE = [
    "gpu",
    "architecture",
    "peak_tflops",
    "peak_fp8_tflops",
    "peak_fp4_tflops",
    "hbm_gib",
    "hbm_gb_per_s",
    "gpus_per_node",
    "scale_up_gpus",
    "scale_up_gb_per_s",
    "gpus_per_host",
    "host_gbps",
    "host_dram_gb_per_s",
]
KEY = [*NODE_SHAPE, "micro_batch", *SEARCHED, "node_gbps_eff", "fabric"]
HOST_COLUMNS = ("gpus_per_host", "host_gbps", "host_dram_gb_per_s")  # what only optimizer offload reads
# A single node has no network: its performance key is the node at a nominal 1 Gbps of IB (no traffic crosses it).
SINGLE_NODE_GBPS, SINGLE_NODE_FABRIC = 1.0, "ib"
# A distinct configuration (what alternatives and no-good cuts tell apart): tiers are variants of one; a
# rail-optimised fabric is a configuration of its own.
GROUP = ["server", "nic", "nics_per_node", "nic_ports", "fabric", "switch", "rail", "planes", "micro_batch", *SEARCHED]


@dataclass(frozen=True)
class Candidates:
    """The priced table (every row with a non-empty node range; `within_limits` marks those within the
    budget and power caps) and the bounds table of every performance key (for explanations)."""

    frame: pd.DataFrame
    bounds: pd.DataFrame
    training: Training
    requirements: Requirements
    designs: pd.DataFrame | None = None  # every design once (no micro-batch), with its fabric's capacity

    @property
    def feasible(self) -> pd.DataFrame:
        return self.frame[self.frame["within_limits"]] if not self.frame.empty else self.frame


# server fields only `planner inference` (weights streamed from host memory and NVMe) reads: a training plan never
# does, so servers that differ in them alone are the same machine to it (tests/test_hardware.py guards that it
# reads none)
INFERENCE_ONLY_FIELDS = ("dram_gib", "nvme_slots", "root_complex_gb_per_s")


def part_designs(catalog: Catalog, scenario: Scenario) -> Designs:
    """Every node design of the scenario's allowed servers (planner/hardware/designs.py), a server dominated by
    a twin identical in every field a training plan reads (cheaper and no more power, or the reverse) left out."""
    servers = undominated(allowed_servers(catalog, scenario), as_used=_as_trained)
    return designs(catalog, scenario, servers)


def _as_trained(server: ServerRow) -> dict:
    return dict.fromkeys(INFERENCE_ONLY_FIELDS)


def allowed_servers(catalog: Catalog, scenario: Scenario) -> list[ServerRow]:
    c = scenario.constraints
    servers = catalog.items("servers")
    if c.gpus is not None:
        names = {catalog.gpu(g).name for g in c.gpus}
        servers = [s for s in servers if s.gpu in names]
    named = {catalog.server(s).name for s in c.servers} if c.servers is not None else None
    if named is not None:
        servers = [s for s in servers if s.name in named]
    roadmap = [s for s in servers if not s.orderable and (named is None or s.name not in named)]
    servers = [s for s in servers if s not in roadmap]  # an announced system only when named
    if c.gpus_per_node is not None:
        servers = [s for s in servers if s.gpus_per_node in c.gpus_per_node]
    if c.vendors is not None:
        servers = [s for s in servers if any(v.lower() in s.vendor.lower() for v in c.vendors)]
    precision = scenario.workload.precision
    unable = [s for s in servers if precision_problem(catalog.gpu(s.gpu), precision)]
    servers = [s for s in servers if s not in unable]  # a GPU without the precision's tensor cores cannot run it
    if not servers and unable:
        others = sorted({s.gpu for s in unable} - {unable[0].gpu})
        also = f" (as does every other allowed server's GPU: {', '.join(others)})" if others else ""
        raise ScenarioError(
            f"workload.precision {precision}: " + precision_problem(catalog.gpu(unable[0].gpu), precision) + also
        )
    if not servers and roadmap:
        names = ", ".join(repr(s.name) for s in roadmap)
        raise ScenarioError(
            f"only announced (not orderable) systems match: {names}; to plan one as a roadmap comparison name it "
            "in constraints.servers (--set 'constraints.servers=[\"NAME\"]')"
        )
    if not servers:
        raise ScenarioError(
            "no server in the catalog matches constraints.gpus/servers/gpus_per_node/vendors; "
            "see `planner catalog list servers`"
        )
    return servers


# ---------------------------------------------------------------- performance over node counts


def evaluate_at(keys, nodes, work: Training, calibration: Calibration, confidence=None) -> dict:
    """The model for each key (a frame, or its KEY columns as arrays: key_arrays) at `nodes` nodes (array or
    scalar): the arrays of perf.evaluate_arrays (at the pessimistic outcome of `confidence` when given)."""
    # a layout column absent from the keys (the fleet's, the explanations') is the training's own
    columns = {c: np.asarray(keys[c]) for c in KEY if c not in SEARCHED or c in keys}
    node_gbps = columns.pop("node_gbps_eff")
    columns["scale_out_gbps"] = domain_gbps(node_gbps, columns["gpus_per_node"], columns["scale_up_gpus"])
    columns["gpus"] = np.asarray(nodes, dtype=np.int64) * columns["gpus_per_node"].astype(np.int64)
    for name, value in work.perf_columns().items():
        columns.setdefault(name, value)
    columns["grad_accum"] = micro_batches(columns, work)
    out = perf.evaluate_arrays(columns, calibration, len(columns["fabric"]), confidence)
    out["gpus"], out["micro_batch"], out["node_gbps"] = columns["gpus"], columns["micro_batch"], node_gbps
    out["nodes"] = np.broadcast_to(np.asarray(nodes, dtype=np.int64), columns["gpus"].shape)
    out["gpus_per_node"] = columns["gpus_per_node"]
    out |= {c: np.asarray(keys[c]) for c in FAILURE_COLUMNS if c in keys}  # goodput_at's
    return out


def micro_batches(columns: dict, work: Training) -> np.ndarray:
    """Micro-batches per optimizer step of each configuration: with a global batch, global_batch / (dp x
    micro_batch) (planner.model.layout.legal: unrounded where it is not whole, which only legal configurations
    are ever priced at), which a pipeline's bubble, a once-per-step exchange and the optimizer step's share of a
    micro-step depend on; without one, the training's grad_accum. The one rule of plan, cloud, fleet and predict
    (predict's _with_accum)."""
    gpus = np.asarray(columns["gpus"])
    given = np.broadcast_to(np.asarray(work.grad_accum, dtype=float), gpus.shape)
    if work.global_batch is None:
        return given
    _, m = layout.legal(layout.dims(columns), gpus, columns["micro_batch"], work.global_batch)
    return m


def layouts(work: Training, scenario: Scenario, max_domain: int) -> pd.DataFrame:
    """The parallel layouts every candidate is tried with (one row each, columns SEARCHED): the planner's search
    space (planner.model.layout.search_space) up to the largest scale-up domain allowed, or the workload's own
    (checked against the model and the batch; whether a domain holds its tp is each candidate's test,
    _inside_domain); each at the workload's checkpointing mode, or with checkpointing search at every mode of
    RECOMPUTE_SEARCH for its framework (the fastest that fits wins, as a layout does)."""
    if scenario.workload.searches_layout:
        space = layout.search_space(work, max_domain, pipelines=work.global_batch is not None)
        table = pd.DataFrame(space, columns=list(LAYOUT)).assign(checkpointing=work.parallelism.checkpointing)
        if getattr(scenario.workload, "pp_balanced", None) is False:  # plain pipeline splits only
            table = table[table["pp_balanced"] == 0].reset_index(drop=True)
    else:
        problem = layout.model_problem(work)
        if problem:
            raise ScenarioError(f"workload.{problem}")
        if work.parallelism.pp > 1 and work.global_batch is None:
            raise ScenarioError(
                f"workload.pp {work.parallelism.pp} needs workload.global_batch: the micro-batches per step a "
                "pipeline fills follow from it"
            )
        table = _given_layout(scenario)
    if not work.searches_recompute:
        return table
    # the heaviest recompute first: where nothing fits, the first row (layout.choose's fallback) needs least memory
    modes = pd.DataFrame({"checkpointing": RECOMPUTE_SEARCH[work.framework][::-1]})
    return table.drop(columns="checkpointing").merge(modes, how="cross")


def network_key(single, node_gbps_eff, fabric) -> tuple[np.ndarray, np.ndarray]:
    """The (node_gbps_eff, fabric) of performance keys: a single node's at the nominal network."""
    single = np.asarray(single, dtype=bool)
    return (
        np.where(single, SINGLE_NODE_GBPS, np.asarray(node_gbps_eff, dtype=float)),
        np.where(single, SINGLE_NODE_FABRIC, np.asarray(fabric, dtype=object)),
    )


def key_arrays(keys: pd.DataFrame) -> dict[str, np.ndarray]:
    """The KEY columns as arrays: searches index these, not the frame (a frame's rows cost more to take)."""
    return {c: keys[c].to_numpy() for c in (*KEY, *FAILURE_COLUMNS) if c in keys}


def _bisect(keys, lo, hi, test, work, calibration, want_max: bool, confidence=None) -> np.ndarray:
    """Per row, by bisection on [lo, hi]: with want_max, the largest N whose test is true (true for small N,
    false beyond), else lo - 1; otherwise the smallest N whose test is true (false, then true), else hi + 1.
    test(evaluated, rows): the evaluated figures of those rows of the keys."""
    return _bisect_together(keys, [(lo, hi, test, want_max)], work, calibration, confidence)[0]


def _bisect_together(keys, searches, work, calibration, confidence=None) -> list[np.ndarray]:
    """Several _bisect searches (lo, hi, test, want_max) over the same keys, each step's counts of every search
    evaluated in one call (a call costs about as much as a thousand rows)."""
    arrays, state = key_arrays(keys), []
    for lo, hi, test, want_max in searches:
        lo, hi = lo.astype(np.int64).copy(), hi.astype(np.int64).copy()
        state.append((lo, hi, lo - 1 if want_max else hi + 1, test, want_max))
    while any((lo <= hi).any() for lo, hi, *_ in state):
        rows = [np.flatnonzero(lo <= hi) for lo, hi, *_ in state]
        mids = [(lo[r] + hi[r]) // 2 for (lo, hi, *_), r in zip(state, rows, strict=True)]
        at = np.concatenate(rows)
        ev = evaluate_at({c: a[at] for c, a in arrays.items()}, np.concatenate(mids), work, calibration, confidence)
        start = 0
        for (lo, hi, found, test, want_max), r, mid in zip(state, rows, mids, strict=True):
            part = slice(start, start + len(r))
            start += len(r)
            ok = test({k: v[part] if np.ndim(v) else v for k, v in ev.items()}, r)
            found[r] = np.where(ok, mid, found[r])
            if want_max:
                lo[r], hi[r] = np.where(ok, mid + 1, lo[r]), np.where(ok, hi[r], mid - 1)
            else:
                lo[r], hi[r] = np.where(ok, lo[r], mid + 1), np.where(ok, mid - 1, hi[r])
    return [found for _, _, found, _, _ in state]


def _gallop(keys, lo, hi, test, work, calibration, confidence=None) -> np.ndarray:
    """Per row, the smallest N in [lo, hi] whose test is true (false below it, true from it on: _bisect's premise),
    else hi + 1: counts lo, lo + 1, lo + 3, lo + 7, ... (doubling steps) are tested until one is true, then the
    last step is bisected. About 2 log2(d) evaluations for an answer d above lo, where _bisect takes log2(hi - lo):
    the goodput passes (_speed_bound) move a count by a few nodes. test(evaluated, rows) as _bisect's."""
    lo, hi = lo.astype(np.int64), hi.astype(np.int64)
    false_at, true_at = lo - 1, hi + 1  # the largest count known false, the smallest known true
    step, arrays = np.ones_like(lo), key_arrays(keys)
    while (active := (true_at > hi) & (false_at < hi)).any():
        rows = np.flatnonzero(active)
        at = np.minimum(false_at[rows] + step[rows], hi[rows])
        ok = test(evaluate_at({c: a[rows] for c, a in arrays.items()}, at, work, calibration, confidence), rows)
        true_at[rows[ok]] = at[ok]
        false_at[rows[~ok]], step[rows[~ok]] = at[~ok], 2 * step[rows[~ok]]
    # between the last false and the first true count: bisected (rows with nothing between are done)
    return _bisect(keys, false_at + 1, true_at - 1, test, work, calibration, False, confidence)


def _memory_bound(keys, lo, hi, work, calibration) -> np.ndarray:
    """The smallest node count whose memory fits (hi + 1 when none). Without a pipeline memory per GPU is
    A/n + B (sharded states, and terms the GPU count does not change), so two evaluations give A and B per key,
    the bound is ceil(A / ((usable - B) G)), and one more evaluation settles rounding. A pipeline's held
    activations follow its micro-batches per step, global_batch / (dp micro_batch), which fall as n grows
    (layout.held_layers): memory still falls with n, by no less than A/n + B fitted where the activations are
    at their most, so that estimate is an upper bound; a pipelined key is bisected below it where one node
    fewer still fits, and over its whole range where the estimate finds none."""
    one, two = (evaluate_at(keys, nodes, work, calibration) for nodes in (1, 2))
    per_node = keys["gpus_per_node"].to_numpy(dtype=float)
    m1, m2 = np.asarray(one["memory_per_gpu_gib"]), np.asarray(two["memory_per_gpu_gib"])
    a = (m1 - m2) / (1 / per_node - 1 / (2 * per_node))  # GiB x GPUs
    b = m1 - a / per_node
    room = np.asarray(one["usable_hbm_gib"]) - b
    with np.errstate(divide="ignore", invalid="ignore"):
        estimate = np.where(room > 0, np.ceil(a / (room * per_node) - 1e-9), np.inf)
    nodes = np.clip(np.nan_to_num(estimate, posinf=hi.max() + 1), lo, hi + 1).astype(np.int64)
    inside = nodes <= hi
    if inside.any():  # rounding: the model itself decides at the estimate
        fits = fits_memory(evaluate_at(keys[inside], nodes[inside], work, calibration))
        nodes[np.flatnonzero(inside)[~fits]] += 1
    nodes = np.where(nodes > hi, hi + 1, nodes)
    pipelined = keys["pp"].to_numpy(float) > 1 if "pp" in keys else np.zeros(len(keys), dtype=bool)
    below = pipelined & (nodes > lo)
    if below.any():  # one node fewer than the estimate (or the last count) still fits: bisect beneath it
        at = np.flatnonzero(below)
        fewer = fits_memory(evaluate_at(keys.iloc[at], np.minimum(nodes[at], hi[at] + 1) - 1, work, calibration))
        at = at[fewer]
        if at.size:
            top = np.minimum(nodes[at], hi[at] + 1) - 1
            nodes[at] = _bisect(keys.iloc[at], lo[at], top, lambda ev, _: fits_memory(ev), work, calibration, False)
    return nodes


def _scan_target(keys, lo, hi, req, work, calibration, chunk: int = 256) -> tuple[np.ndarray, np.ndarray]:
    """With offload, achieved TFLOPs/GPU first rises with N (less optimizer work per node) then falls (more
    communication): per key, the first node count meeting the target and the end of that first run, by
    evaluating every count (exact; used only for offloaded training)."""
    first, last = hi + 1, lo - 1
    done = np.zeros(len(keys), dtype=bool)
    for start in range(int(lo.min()), int(hi.max()) + 1, chunk):
        counts = np.arange(start, start + chunk)
        rows = np.repeat(np.arange(len(keys)), len(counts))
        nodes = np.tile(counts, len(keys))
        ev = evaluate_at(keys.iloc[rows], nodes, work, calibration, req.confidence)
        ok = meets_target(ev, req).reshape(len(keys), -1)
        ok &= (counts >= lo[:, None]) & (counts <= hi[:, None])
        for i in np.flatnonzero(~done):
            run = np.flatnonzero(ok[i])
            if first[i] > hi[i] and run.size:
                first[i] = counts[run[0]]
            if first[i] <= hi[i]:
                beyond = np.flatnonzero(~ok[i] & (counts > first[i]) & (counts <= hi[i]))
                if beyond.size:
                    last[i], done[i] = counts[beyond[0]] - 1, True
                elif start + chunk > hi[i]:
                    last[i], done[i] = hi[i], True
    return first, last


# Passes of the goodput fixed point per key (_speed_bound): two or three in practice.
MAX_GOODPUT_PASSES = 20


def _speed_search(lo, hi, req: Requirements) -> tuple:
    """The first search of _speed_bound (the smallest N meeting the need at goodput 1), as _bisect_together takes it."""
    need = req.tokens_per_s * (1 - THROUGHPUT_TOLERANCE)
    return lo, hi, lambda ev, _: _reaches(ev, need), False


def _speed_bound(keys, lo, hi, req: Requirements, work: Training, calibration, found=None) -> np.ndarray:
    """The smallest N in [lo, hi] whose cluster throughput, at the key's own goodput there, meets the need
    (hi + 1 when none). Throughput never falls with N, but goodput does (more parts, more interruptions), so
    throughput x goodput may peak: per key, N_0 meets the need at goodput 1 and N_k+1 is the smallest count whose
    throughput meets need / g(N_k). While goodput falls with N, every N_k is at most the answer N* (g(N_k) >=
    g(N*)), so the increasing N_k stop at N* itself; they pass hi when no count meets the need. Goodput rises
    where a count buys one more spare node, so the fixed point may pass N*: the counts from N_0 (a lower bound,
    at goodput 1) to it are then scanned (_first_meeting). `found`: that first search's result, when the caller
    ran it beside another (node_bounds)."""
    need = req.tokens_per_s * (1 - THROUGHPUT_TOLERANCE)
    held = np.ones(len(keys))  # the goodput each key's next count is sized at
    if found is None:
        found = _bisect_together(keys, [_speed_search(lo, hi, req)], work, calibration, req.confidence)[0]
    if req.reliability is None:
        return found
    first, arrays, active = found.copy(), key_arrays(keys), found <= hi
    for _ in range(MAX_GOODPUT_PASSES):
        rows = np.flatnonzero(active)
        if not rows.size:
            break
        ev = evaluate_at({c: a[rows] for c, a in arrays.items()}, found[rows], work, calibration, req.confidence)
        g = goodput_at(ev, req, work)
        short = ~_reaches(ev, need / np.maximum(g, 1e-12))
        active[rows[~short]] = False
        rows = rows[short]
        held[rows] = np.maximum(g[short], 1e-12)
        found[rows] = _gallop(
            keys.iloc[rows],
            found[rows] + 1,
            hi[rows],
            lambda ev, at, pending=rows: _reaches(ev, need / held[pending][at]),
            work,
            calibration,
            req.confidence,
        )
        active[rows] = found[rows] <= hi[rows]
    return _first_meeting(keys, first, np.minimum(found, hi + 1), need, req, work, calibration)


def _first_meeting(keys, start, stop, need, req, work, calibration, chunk: int = 64) -> np.ndarray:
    """Per key, the smallest N in [start, stop) whose throughput x goodput meets `need`, else stop; the counts
    evaluated `chunk` at a time, every key at once."""
    found, arrays = stop.astype(np.int64).copy(), key_arrays(keys)
    todo, offset = np.flatnonzero(start < stop), 0
    while todo.size:
        counts = start[todo][:, None] + offset + np.arange(chunk)[None, :]
        inside = counts < stop[todo][:, None]
        rows, nodes = np.broadcast_to(todo[:, None], counts.shape)[inside], counts[inside]
        ev = evaluate_at({c: a[rows] for c, a in arrays.items()}, nodes, work, calibration, req.confidence)
        met = np.zeros(counts.shape, dtype=bool)
        met[inside] = _reaches(ev, need / np.maximum(goodput_at(ev, req, work), 1e-12))
        hit = met.any(axis=1)
        found[todo[hit]] = counts[np.flatnonzero(hit), met[hit].argmax(axis=1)]
        todo, offset = todo[~hit & (start[todo] + offset + chunk < stop[todo])], offset + chunk
    return found


def _reaches(ev: dict, need) -> np.ndarray:
    return np.asarray(ev["tokens_per_s"], dtype=float) >= need


def goodput_at(ev: dict, req: Requirements, work: Training) -> np.ndarray | None:
    """Each evaluated key's goodput at its node count (reliability.shape_goodput, at the key's FAILURE_COLUMNS
    and the spare nodes the scenario's share buys); None when no deadline counts it."""
    if req.reliability is None:
        return None
    nodes = np.asarray(ev["nodes"], dtype=np.int64)
    shape = {c: np.asarray(ev[c]) for c in FAILURE_COLUMNS}
    shape["gpus_per_node"] = np.asarray(ev["gpus_per_node"])
    rel = req.reliability
    cover = sizing.repair_params(req.spares, rel, shape["cover_per_node_day"], shape["rack_scale"])
    shape["spare_nodes"] = np.where(nodes > 1, sizing.spare_node_count(cover, nodes), 0)
    return reliability.shape_goodput(rel, work.params, nodes, shape)


BOUND_COLUMNS = ("n_lo", "n_hi", "range_lo", "range_hi", "n_target_max", "n_memory_min", "n_speed_min")


def _retargetable(prior: Candidates, req: Requirements, work: Training) -> bool:
    """Whether `prior`'s bounds hold for `req` but for the target's: the same requirements and training apart
    from target TFLOPs/GPU, and no offload (whose first count meeting the target moves with it: _scan_target)."""
    same = prior.requirements == replace(req, target_tflops=prior.requirements.target_tflops)
    return same and prior.training == work and work.offload == "none" and prior.designs is not None


def _retarget(bounds: pd.DataFrame, work: Training, req: Requirements, calibration, prior_target: float):
    """node_bounds at another target TFLOPs/GPU from the bounds at `prior_target`: memory, the deadline's speed
    and the allowed range do not depend on it, so only the largest count meeting the target moves (the same
    bisection, once per distinct performance key), and n_hi with it. At a lower target the largest count is at
    least the prior one (TFLOPs/GPU never rises with N, the bisection's own premise), so the search starts there
    and a key already at the top of its range is done."""
    codes, first = _distinct(bounds, [c for c in (*KEY, "single") if c not in HOST_COLUMNS])
    keys = bounds.iloc[first].reset_index(drop=True)
    lo, hi = keys["range_lo"].to_numpy(np.int64), keys["range_hi"].to_numpy(np.int64)
    if req.target_tflops <= prior_target:
        lo = np.maximum(lo, keys["n_target_max"].to_numpy(np.int64))
    test = lambda ev, _: meets_target(ev, req)  # noqa: E731
    n_target = _bisect(keys, lo, hi, test, work, calibration, True, req.confidence)[codes]
    out = bounds.copy()
    out["n_target_max"] = n_target
    out["n_hi"] = np.minimum(out["range_hi"].to_numpy(np.int64), n_target)
    return out


def node_bounds(
    keys: pd.DataFrame,
    work: Training,
    req: Requirements,
    max_nodes: int,
    calibration: Calibration,
) -> pd.DataFrame:
    """n_lo, n_hi per perf key (n_lo > n_hi: no feasible node count) and why the range is what it is."""
    if work.offload == "none":  # the host's PCIe and DRAM matter to offload alone: keys equal but for them, once
        codes, first = _distinct(keys, [c for c in (*KEY, "single") if c not in HOST_COLUMNS])
        if len(first) < len(keys):
            merged = _least_failures(keys.iloc[first].reset_index(drop=True), keys, codes, req.reliability)
            distinct = node_bounds(merged, work, req, max_nodes, calibration)
            figures = distinct.drop(columns=[*KEY, "single", *FAILURE_COLUMNS]).iloc[codes].reset_index(drop=True)
            return pd.concat([keys.reset_index(drop=True), figures], axis=1)
    single = keys["single"].to_numpy()
    per_node = keys["gpus_per_node"].to_numpy(dtype=np.int64)
    lo = np.where(single, 1, 2)
    hi = np.where(single, 1, max_nodes)
    if req.gpus is not None:  # a fixed GPU count pins N; single-node keys only when it is one node
        n_fixed = np.where(req.gpus % per_node == 0, req.gpus // per_node, 0)
        valid = np.where(single, n_fixed == 1, (n_fixed >= 2) & (n_fixed <= max_nodes))
        lo, hi = np.where(valid, n_fixed, 1), np.where(valid, n_fixed, 0)

    c, speed = req.confidence, None
    if work.offload == "none":  # the target's and the deadline's first search side by side
        n_memory = _memory_bound(keys, lo, hi, work, calibration)
        searches = [(lo, hi, lambda ev, _: meets_target(ev, req), True)]
        searches += [_speed_search(lo, hi, req)] if req.tokens_per_s is not None else []
        n_target, *speed = _bisect_together(keys, searches, work, calibration, c)
        n_lo, n_hi = np.maximum(lo, n_memory), np.minimum(hi, n_target)
    else:  # offload time falls with N while communication grows: scan for the interval meeting the target
        n_memory = _memory_bound(keys, lo, hi, work, calibration)
        n_first, n_target = _scan_target(keys, lo, hi, req, work, calibration)
        n_lo, n_hi = np.maximum.reduce([lo, n_memory, n_first]), np.minimum(hi, n_target)
    n_speed = lo
    if req.tokens_per_s is not None:
        n_speed = _speed_bound(keys, lo, hi, req, work, calibration, speed[0] if speed else None)
        n_lo = np.maximum(n_lo, n_speed)
    out = keys.copy()
    out["n_lo"], out["n_hi"] = n_lo, n_hi
    out["range_lo"], out["range_hi"] = lo, hi  # the node counts allowed before target, memory and speed
    out["n_target_max"], out["n_memory_min"], out["n_speed_min"] = n_target, n_memory, n_speed
    return out


# ---------------------------------------------------------------- the table


def _design_table(parts: Designs, scenario: Scenario) -> pd.DataFrame:
    """Every design once, single nodes first: performance at node bandwidth / o, except where a
    rail-optimised fabric keeps a job within one scalable unit (design._su_split); a single node at the
    nominal SINGLE_NODE_GBPS. `capacity`: the most nodes its fabric holds within max_nodes."""
    single = parts.single.assign(node_gbps_eff=SINGLE_NODE_GBPS, single=True)
    tables = [single]
    if not parts.multi.empty:
        multi = parts.multi
        effective = np.where(multi["su_local"], multi["node_gbps"], multi["node_gbps"] / multi["oversubscription"])
        tables.append(multi.assign(node_gbps_eff=effective, single=False))
    table = consolidated(pd.concat(tables, ignore_index=True))
    table["node_gbps_eff"] = table["node_gbps_eff"].astype(float).round(9)  # keys match at 9 decimals
    table["cap_hi"] = np.minimum(table["cap_hi"].to_numpy(np.int64), scenario.constraints.max_nodes)
    table["capacity"] = np.where(table["single"], 1, _capacity_nodes(table))
    table["rail_only"] = (table["topology"] == "rail-only").to_numpy() if "topology" in table else False
    return table


def _given_layout(scenario: Scenario) -> pd.DataFrame:
    """The workload's own layout (1 where not given) and checkpointing mode, as one row of SEARCHED columns."""
    given = {k: getattr(scenario.workload, k, None) or LAYOUT_DEFAULTS[k] for k in LAYOUT}
    return pd.DataFrame([given | {"checkpointing": Parallelism.of_workload(scenario.workload).checkpointing}])


def _with_micro_batches(
    designs: pd.DataFrame, scenario: Scenario, lay: pd.DataFrame | None = None, allowed: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Every design at every micro-batch and layout, design by design, as its performance key (network_key)
    and the columns the node range needs; `design` is the row of the design table. `allowed`: the (node shape,
    micro-batch, layout) the screened performance keys kept (_screen_layouts); default every one."""
    batches = np.asarray(scenario.workload.micro_batches, dtype=np.int64)
    lay = _given_layout(scenario) if lay is None else lay
    per_design = pd.DataFrame({"micro_batch": batches}).merge(lay, how="cross")
    columns = [
        c for c in (*KEY, "single", "cap_lo", "capacity", "rack_fits", "rail_only") if c not in per_design.columns
    ]
    if allowed is None or len(lay) <= 1:
        at = np.repeat(np.arange(len(designs)), len(per_design))
        rows = designs[columns].iloc[at].reset_index(drop=True)
        tiled = {c: np.tile(per_design[c].to_numpy(), len(designs)) for c in per_design.columns}
        rows = rows.assign(design=at, **tiled)
    else:  # join on an integer id of the node shape: a merge on its 13 columns costs seconds at this size
        shapes = pd.concat([designs[NODE_SHAPE], allowed[NODE_SHAPE]], ignore_index=True)
        ids = shapes.groupby(NODE_SHAPE, dropna=False, sort=False).ngroup().to_numpy()
        left = designs[columns].assign(design=np.arange(len(designs)), _shape=ids[: len(designs)])
        right = allowed.drop(columns=NODE_SHAPE).assign(_shape=ids[len(designs) :])
        rows = left.merge(right, on="_shape").drop(columns="_shape").sort_values("design", kind="stable")
        rows = rows.reset_index(drop=True)
    _, fabric = network_key(rows["single"], rows["node_gbps_eff"], rows["fabric"])
    rows = rows.assign(fabric=fabric)
    return rows[_inside_domain(rows)].reset_index(drop=True)


SCREEN_COUNTS = 10  # node counts, geometric from 1 to max_nodes, at which the layouts are screened
SCREEN_KEEP = 1  # the fastest layouts kept at each (performance key, node count), besides the chosen one


def _screen_layouts(keys: pd.DataFrame, work: Training, req: Requirements, calibration, max_nodes: int):
    """The performance keys whose layout can matter. Per node shape and micro-batch, every network (a thin
    network favours layouts that move less data-parallel traffic, a rich one data parallelism) is evaluated at
    SCREEN_COUNTS node counts; a layout is kept for the shape where, at some count,
    it is the one layout.choose takes, one of the SCREEN_KEEP fastest that fit, or the one needing the least
    memory (which fits at the fewest nodes); data parallelism is always kept. The node bounds are then found
    exactly for the kept keys alone (a 405B model has ~50 legal layouts, of which a handful are ever the best)."""
    # the host's PCIe and DRAM matter to optimizer offload only, which the layout search excludes: shapes that
    # differ in them alone are screened once
    shape = [c for c in NODE_SHAPE if c not in HOST_COLUMNS] + ["micro_batch"]
    # every network of the shape: the slowest and fastest alone missed the layout choose() takes between them
    # (the 16k example: VP 4 at two 400G NICs per node, VP 8 at both ends)
    probe = keys.drop_duplicates([c for c in [*KEY, "single"] if c not in HOST_COLUMNS])
    probe = probe.reset_index(drop=True)
    base = probe.groupby([c for c in KEY if c not in SEARCHED] + ["single"], dropna=False, sort=False).ngroup()
    single = probe["single"].to_numpy(dtype=bool)
    if req.gpus is None:
        counts = np.unique(np.clip(np.round(np.geomspace(1, max(max_nodes, 1), SCREEN_COUNTS)), 1, max_nodes))
        rows = np.repeat(np.arange(len(probe)), len(counts))
        nodes = np.tile(counts.astype(np.int64), len(probe))
        once = ~single[rows] | np.tile(np.arange(len(counts)) == 0, len(probe))  # a single node: one count
        rows, nodes = rows[once], nodes[once]
    else:  # a fixed GPU count: the one node count that matters
        rows = np.arange(len(probe))
        nodes = req.gpus // probe["gpus_per_node"].to_numpy(np.int64)
    nodes = np.where(single[rows], 1, nodes)
    gpus = nodes * probe["gpus_per_node"].to_numpy(np.int64)[rows]
    dims = {k: probe[k].to_numpy(float)[rows] for k in LAYOUT}
    # legal at that count by the exact search's own rules (whole ranks, ep dividing, a filled, whole pipeline): only
    # those are evaluated (the exact search prices no other)
    micro = probe["micro_batch"].to_numpy(float)[rows]
    legal, _ = layout.legal(
        layout.dims({**dims, "gpus": gpus.astype(float)}), gpus, micro, req.global_batch, req.shard_group
    )
    keep = np.zeros(len(probe), dtype=bool)
    rows, nodes, dims = rows[legal], nodes[legal], {k: v[legal] for k, v in dims.items()}
    arrays = {c: a[rows] for c, a in key_arrays(probe).items()}
    ev = evaluate_at(arrays, nodes, work, calibration, req.confidence)
    fits = fits_memory(ev)
    tokens = np.asarray(ev["tokens_per_s"], float)
    group = base.to_numpy()[rows] * (max_nodes + 1) + nodes
    chosen = layout.choose(group, tokens, fits, dims)
    keep[rows[chosen[chosen >= 0]]] = True
    order = np.lexsort((-np.where(fits, tokens, -np.inf), group))
    rank = pd.Series(group[order]).groupby(group[order]).cumcount().to_numpy()
    keep[rows[order[(rank < SCREEN_KEEP) & fits[order]]]] = True
    least = np.lexsort((np.asarray(ev["memory_per_gpu_gib"], float), group))
    keep[rows[least[np.r_[True, np.diff(group[least]) != 0]]]] = True
    kept = probe.loc[keep, [*shape, *SEARCHED]].drop_duplicates()
    flat = (keys["tp"] * keys["pp"] * keys["cp"] * keys["ep"]).to_numpy() == 1
    marked = keys.merge(kept.assign(_kept=True), on=[*shape, *SEARCHED], how="left")["_kept"].notna().to_numpy()
    return keys[marked | flat].reset_index(drop=True)


def _inside_domain(rows: pd.DataFrame) -> np.ndarray:
    """Tensor parallelism stays inside a scale-up domain and tiles it: a layout whose tp exceeds or does not
    divide the server's domain is not tried."""
    return layout.tp_fits(rows["tp"].to_numpy(), rows["scale_up_gpus"].to_numpy())


def _performance_keys(
    servers: pd.DataFrame, configs: pd.DataFrame, scenario: Scenario, lay: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Every distinct (node shape, usable node bandwidth / oversubscription, fabric, micro-batch) a NIC
    configuration gives, whether or not a switch and link connect it (the explanations of an empty table need
    the bounds of every speed), plus the single-node key of each server."""
    c = scenario.constraints
    shape = [k for k in KEY if k not in ("micro_batch", *SEARCHED, "node_gbps_eff", "fabric")]
    servers = servers[["server", *shape, "rack_scale"]]
    parts = [servers.assign(node_gbps_eff=SINGLE_NODE_GBPS, fabric=SINGLE_NODE_FABRIC, single=True)]
    if not configs.empty:
        multi = configs.merge(servers, on="server")
        multi = multi.explode("nic_fabrics").rename(columns={"nic_fabrics": "fabric"})
        multi = multi[multi["fabric"].isin(c.fabrics)]
        ratios = pd.DataFrame({"oversubscription": sorted({1.0, *c.oversubscription})})
        multi = multi.merge(ratios, how="cross")
        multi["node_gbps_eff"] = multi["node_gbps"] / multi["oversubscription"]
        parts.append(multi.assign(single=False))
    keys = pd.concat(parts, ignore_index=True)
    keys["node_gbps_eff"] = keys["node_gbps_eff"].astype(float).round(9)
    keys = _with_failures(keys, scenario.reliability.failure_rates, scenario.constraints.planes)
    # distinct networks first, then the (distinct) micro-batch x layout rows: the product is distinct as it is
    network = [c for c in KEY if c not in ("micro_batch", *SEARCHED)] + ["single"]
    codes, first = _distinct(keys, network)
    keys = _least_failures(keys.iloc[first][network].reset_index(drop=True), keys, codes, scenario.reliability)
    batches = pd.DataFrame({"micro_batch": scenario.workload.micro_batches}).drop_duplicates()
    keys = keys.merge(batches.merge(_given_layout(scenario) if lay is None else lay, how="cross"), how="cross")
    return keys.loc[_inside_domain(keys), [*KEY, "single", *FAILURE_COLUMNS]].reset_index(drop=True)


# What a key's goodput needs beyond its KEY columns (goodput_at): its hosts, whether it is a rack-scale system and
# its network's interruptions per node-day (NICs: node failures; node links), at the least of the configurations
# that share the key and without the fabric's links and switches: a lower bound on the failures, so the key's node
# bound is no larger than any of its designs' own; each design is then checked at its own parts (_own_goodput).
# The spare nodes the key is sized with cover the repairs of its most failing configuration (cover_per_node_day),
# as many as any of its designs buys.
FAILURE_COLUMNS = ("hosts_per_node", "rack_scale", "nic_per_node_day", "net_per_node_day", "cover_per_node_day")


def _with_failures(keys: pd.DataFrame, rates, planes) -> pd.DataFrame:
    """The FAILURE_COLUMNS of each key row (rates: the scenario's reliability.failure_rates; planes: those
    allowed); a single node has no network to fail, nor one whose planes may back each other up."""
    multi = ~keys["single"].to_numpy(dtype=bool)
    nics = np.where(multi, keys["nics_per_node"].fillna(0).to_numpy(float), 0.0)
    ports = nics * keys["nic_ports"].fillna(0).to_numpy(float)
    hosts = keys["gpus_per_node"].to_numpy(np.int64) // np.maximum(keys["gpus_per_host"].to_numpy(np.int64), 1)
    hosts = np.maximum(hosts, 1)
    gpus = keys["gpus_per_node"].to_numpy(float)
    multi_plane = (keys["nic_ports"].fillna(0).to_numpy() >= 2) & (max(planes) > 1)  # may back each other up
    return keys.assign(
        hosts_per_node=hosts,
        rack_scale=keys["rack_scale"].to_numpy(dtype=bool),
        nic_per_node_day=nics * rates.nic,
        net_per_node_day=np.where(multi_plane, 0.0, ports * rates.node_link),
        cover_per_node_day=sizing.node_failures_per_day(rates, gpus, hosts, nics),
    )


def _least_failures(distinct: pd.DataFrame, rows: pd.DataFrame, codes: np.ndarray, rel=None) -> pd.DataFrame:
    """`distinct` (one row per code) with the FAILURE_COLUMNS of `rows` at their least per code: the fewest
    hosts, NIC and link interruptions, the shorter repair (rel: the scenario's reliability settings; a rack-scale
    system's tray swap unless set longer), and the spares of the most failing."""
    grouped = rows[list(FAILURE_COLUMNS)].groupby(codes)
    least = grouped.min()
    shorter = rel is None or rel.repair_hours_rack_scale <= rel.repair_hours
    least["rack_scale"] = grouped["rack_scale"].max() if shorter else grouped["rack_scale"].min()
    least["cover_per_node_day"] = grouped["cover_per_node_day"].max()
    return distinct.drop(columns=[c for c in FAILURE_COLUMNS if c in distinct]).assign(
        **{c: least[c].to_numpy() for c in FAILURE_COLUMNS}
    )


def _attach_bounds(rows: pd.DataFrame, bounds: pd.DataFrame) -> pd.DataFrame:
    """The node bounds of each row's performance key (key_lo, key_hi)."""
    renamed = bounds[[*KEY, "single", "n_lo", "n_hi"]].rename(columns={"n_lo": "key_lo", "n_hi": "key_hi"})
    return rows.merge(renamed, on=[*KEY, "single"], how="inner")  # keys the layout screen dropped: no row


def _capacity_nodes(rows: pd.DataFrame) -> np.ndarray:
    """The most nodes each row's fabric holds (ports and leaves of its tier), by the closed form at the
    scenario's largest count: bisection on the monotone `fits`."""
    lo = np.zeros(len(rows), dtype=np.int64)
    hi = np.minimum(rows["cap_hi"].to_numpy(np.int64), 10**6)
    params = {c: rows[c].to_numpy() for c in PARAMS}
    while (active := lo < hi).any():
        mid = np.where(active, (lo + hi + 1) // 2, hi)
        fits = sizing.quantities(params, mid)["fits"]
        lo, hi = np.where(active & fits, mid, lo), np.where(active & ~fits, mid - 1, hi)
    return lo


def _node_range(rows: pd.DataFrame, req: Requirements) -> pd.DataFrame:
    """[n_lo, n_hi] per row: the key's bounds within the fabric's capacity and the row's regime caps, moved to
    the nearest node counts its layout and batch allow (legal_nodes: with a global batch a whole grad_accum,
    divisors of global_batch / (G x micro_batch) for data parallelism)."""
    hi = np.minimum(rows["key_hi"].to_numpy(np.int64), rows["capacity"].to_numpy(np.int64))
    lo = np.maximum(rows["key_lo"].to_numpy(np.int64), rows["cap_lo"].to_numpy(np.int64))
    lo, hi = legal_within(rows, req, lo, hi)
    rows = rows.assign(n_lo=lo, n_hi=hi)
    return rows[(rows["n_lo"] <= rows["n_hi"]) & rows["rack_fits"]].reset_index(drop=True)


def legal_within(rows: pd.DataFrame, req: Requirements, lo: np.ndarray, hi: np.ndarray):
    """Per row, the smallest and the largest legal node count in [lo, hi] (lo > hi when none), computed once
    per distinct (GPUs per node, micro-batch, layout)."""
    shape = ["gpus_per_node", "micro_batch", *LAYOUT]
    new_lo, new_hi = lo.copy(), np.zeros_like(hi)
    top = int(hi.max()) if len(hi) else 0
    values = rows[shape].astype(np.int64)
    codes, firsts = _distinct(values, shape)
    for g, i in enumerate(firsts):
        legal = legal_nodes(values.iloc[i].to_dict(), req, top)
        at = codes == g
        if legal is None:
            new_hi[at] = hi[at]
            continue
        if not len(legal):
            new_lo[at], new_hi[at] = 1, 0
            continue
        first = np.searchsorted(legal, lo[at], side="left")
        last = np.searchsorted(legal, hi[at], side="right") - 1
        ok = (first < len(legal)) & (last >= 0) & (first <= last)
        new_lo[at] = np.where(ok, legal[np.minimum(first, len(legal) - 1)], 1)
        new_hi[at] = np.where(ok, legal[np.maximum(last, 0)], 0)
    return new_lo, new_hi


def legal_nodes(row: dict, req: Requirements, top: int) -> np.ndarray | None:
    """The node counts up to `top` a row's layout and batch allow (planner.model.layout.legal), ascending;
    None when every count is (data parallelism without a global batch or a hybrid shard group)."""
    d = {k: float(row.get(k, LAYOUT_DEFAULTS[k])) for k in LAYOUT}
    if req.global_batch is None and d["tp"] * d["pp"] * d["cp"] * d["ep"] == 1 and not req.shard_group:
        return None
    nodes = np.arange(1, max(top, 0) + 1, dtype=np.int64)
    gpus = nodes * int(row["gpus_per_node"])
    d = layout.dims({**d, "gpus": gpus})
    ok, _ = layout.legal(d, gpus, float(row["micro_batch"]), req.global_batch, req.shard_group)
    return nodes[ok]


def allowed_nodes(row: dict, req: Requirements) -> list[int] | None:
    """The node counts a candidate may take when its layout or a global batch restricts them (None: every
    count in [n_lo, n_hi])."""
    legal = legal_nodes(row, req, int(row["n_hi"]))
    if legal is None:
        return None
    return [int(n) for n in legal if n >= int(row["n_lo"])]


def quantities_at(rows, nodes) -> dict[str, np.ndarray]:
    """sizing.quantities for table rows (a frame or one row as a dict) at `nodes`."""
    if isinstance(rows, dict):
        return {k: np.asarray(v).item() for k, v in sizing.quantities(rows, nodes).items()}
    return sizing.quantities({c: rows[c].to_numpy() for c in PARAMS}, nodes)


def parts_at(row: dict, nodes: int, q: dict | None = None) -> reliability.Parts:
    """What can interrupt the job of candidate `row` at `nodes` nodes (parts_of, as numbers)."""
    parts = parts_of(row, nodes, quantities_at(row, nodes) if q is None else q)
    flags = ("rack_scale", "redundant_planes")
    values = {f.name: (bool if f.name in flags else float)(getattr(parts, f.name)) for f in fields(parts)}
    return replace(parts, **values)


def parts_of(rows, nodes, q: dict) -> reliability.Parts:
    """What can interrupt the jobs of candidate `rows` (a frame, or one row as a dict) at `nodes`, counted from
    their quantities `q`: a single node has no fabric to fail."""
    column = lambda name: np.asarray(rows[name])  # noqa: E731
    n, networked = np.asarray(nodes, dtype=float), column("tier").astype(np.int64) > 0
    return reliability.Parts(
        gpus=n * column("gpus_per_node"),
        hosts=n * column("hosts"),
        nics=np.where(networked, n * column("nics_per_node").astype(float), 0.0),
        node_links=np.where(networked, q["endpoints"], 0.0),
        fabric_links=np.asarray(q["uplinks"], dtype=float),
        leaves=np.asarray(q["leaf"], dtype=float),
        upper_switches=np.asarray(q["spine"] + q["core"], dtype=float),
        spare_nodes=np.asarray(q["spare_nodes"], dtype=float),
        rack_scale=column("rack_scale").astype(bool),
        redundant_planes=redundant_planes(rows),
    )


def redundant_planes(rows) -> object:
    """Multi-plane rail-optimised fabrics: planes that back each other up (a rail-only fabric's rails do not)."""
    return (np.asarray(rows["topology"]) == "rail") & (np.asarray(rows["planes"]) > 1)


# Node counts tried above a row's bound before it is dropped as never meeting its deadline at its own goodput (one
# or two suffice: the bound counts all but the fabric's links and switches, a few hundredths of the interruptions).
OWN_GOODPUT_STEPS = 8


def _own_goodput(priced: pd.DataFrame, scenario: Scenario, work: Training, calibration, req) -> pd.DataFrame:
    """Each row at the smallest node count from its bound that meets the deadline at its own goodput: its parts
    counted there (parts_at's, with the fabric's links and switches the key's bound leaves out); a row that
    misses moves to its next legal count and is priced again."""
    if req.reliability is None or req.tokens_per_s is None or priced.empty:
        return priced
    done, todo = [], priced
    for _ in range(OWN_GOODPUT_STEPS):
        nodes = todo["nodes"].to_numpy(np.int64)
        ev = evaluate_at(key_arrays(todo), nodes, work, calibration, req.confidence)
        ok = np.asarray(fast_enough(ev, req, own_goodput(todo, nodes, req, work)), dtype=bool)
        done.append(todo[ok])
        todo = todo[~ok]
        if todo.empty:
            break
        lo, hi = legal_within(todo, req, todo["nodes"].to_numpy(np.int64) + 1, todo["n_hi"].to_numpy(np.int64))
        todo = todo[lo <= hi].assign(n_lo=lo[lo <= hi])
        if todo.empty:
            break
        todo = _price(todo[COLUMNS], scenario)
    return pd.concat(done, ignore_index=True) if done else priced.iloc[:0]


def own_goodput(rows: pd.DataFrame, nodes: np.ndarray, req: Requirements, work: Training) -> np.ndarray:
    """Each priced row's goodput at `nodes` from its own parts (parts_of), as per-node rates for shape_goodput."""
    parts = parts_of(rows, nodes, quantities_at(rows, nodes))
    events, n = parts.events_per_day(req.reliability.failure_rates), np.maximum(nodes, 1).astype(float)
    shape = {
        "gpus_per_node": rows["gpus_per_node"].to_numpy(),
        "hosts_per_node": rows["hosts"].to_numpy(),
        "rack_scale": parts.rack_scale,
        "nic_per_node_day": events["nic"] / n,
        "net_per_node_day": sum(events[kind] for kind in reliability.PLANE_KINDS) / n,
        "spare_nodes": parts.spare_nodes,
    }
    return reliability.shape_goodput(req.reliability, work.params, nodes, shape)


def score(priced: pd.DataFrame, scenario: Scenario, work: Training, calibration, req: Requirements) -> pd.DataFrame:
    """What the objective minimises for each row, in `score`: its capex or TCO at its smallest count; for
    cost-per-token the TCO per million trained tokens at the row's count with the least of it (_cheapest_per_token);
    for throughput and days the row at the largest count within the budget, power cap and max_nodes, scored by
    minus its tokens/s or by its training days, in calendar time (goodput counted) where there is a deadline. An
    output-scored row is priced at that one count (n_lo = n_hi = nodes): the MILP then chooses among
    configurations, each at its count."""
    kind = scenario.objective.kind
    if kind not in costing.OUTPUT_KINDS or priced.empty:
        return priced.assign(score=priced["objective_usd"].to_numpy(float))
    if kind == "cost-per-token":
        return _cheapest_per_token(priced, scenario, work, calibration, req)
    priced = _largest_within_limits(priced, scenario, req)
    nodes = priced["nodes"].to_numpy(np.int64)
    rate = _rate(priced, nodes, scenario, work, calibration, req)
    value = -rate if kind == "throughput" else req.tokens / rate / SECONDS_PER_DAY
    return priced.assign(score=value, n_lo=nodes, n_hi=nodes)


def _rate(rows: pd.DataFrame, nodes: np.ndarray, scenario: Scenario, work, calibration, req) -> np.ndarray:
    """Tokens/s of each row at `nodes`, at its goodput (a reported plan's rate)."""
    ev = evaluate_at(key_arrays(rows), nodes, work, calibration, req.confidence)
    rate = np.asarray(ev["tokens_per_s"], dtype=float) * _goodput_of(rows, nodes, scenario, req, work)
    return np.maximum(rate, 1e-12)


# cost-per-token searches each row's counts from its smallest: first COARSE_COUNTS of them spread geometrically for
# every row, then, for the PER_TOKEN_ROWS rows best there, PER_TOKEN_COUNTS (every legal count when there are no
# more) and every count between the best one's neighbours
COARSE_COUNTS, PER_TOKEN_COUNTS, PER_TOKEN_ROWS = 8, 48, 256


def _cheapest_per_token(priced: pd.DataFrame, scenario: Scenario, work, calibration, req) -> pd.DataFrame:
    """Each row at the node count, from its smallest meeting the requirement to its largest, with the lowest TCO
    per million trained tokens within the budget and power caps (fixed costs, storage, management, staff, spread
    over more tokens can make a larger count cheaper per token), priced there. Every row is searched coarsely;
    the best PER_TOKEN_ROWS finely (a row that is not among them keeps its coarse count)."""
    lo, hi = priced["nodes"].to_numpy(np.int64), priced["n_hi"].to_numpy(np.int64)
    legal = _legal_sets(priced, req, int(hi.max()))
    coarse = [_thin(c, COARSE_COUNTS) for c in legal.between(lo, hi)]
    nodes, value = _per_token_at(priced, coarse, scenario, work, calibration, req)
    top = np.argsort(value, kind="stable")[:PER_TOKEN_ROWS]
    fine = [_thin(c, PER_TOKEN_COUNTS) for c in legal.between(lo[top], hi[top], top)]
    best, _ = _per_token_at(priced.iloc[top], fine, scenario, work, calibration, req)
    around = []
    for k, counts in enumerate(fine):
        at = int(np.searchsorted(counts, best[k]))
        below, above = counts[max(at - 1, 0)], counts[min(at + 1, len(counts) - 1)]
        around.append(legal.between(np.array([below]), np.array([above]), top[k : k + 1])[0])
    nodes[top], _ = _per_token_at(priced.iloc[top], around, scenario, work, calibration, req)
    repriced = reprice_at(priced, nodes, scenario)
    rate = _rate(repriced, nodes, scenario, work, calibration, req)
    horizon_s = scenario.objective.years * HOURS_PER_YEAR * SECONDS_PER_HOUR
    score = repriced["objective_usd"].to_numpy(float) / (rate * horizon_s) * 1e6
    return repriced.assign(score=score, n_lo=nodes, n_hi=nodes)


@dataclass(frozen=True)
class _LegalSets:
    """The node counts each row's layout and batch allow (legal_nodes, once per distinct shape): None for every
    count."""

    codes: np.ndarray
    sets: list

    def between(self, lo: np.ndarray, hi: np.ndarray, rows: np.ndarray | None = None) -> list[np.ndarray]:
        codes = self.codes if rows is None else self.codes[rows]
        out = []
        for code, a, b in zip(codes, lo, hi, strict=True):
            legal = self.sets[code]
            counts = np.arange(a, b + 1, dtype=np.int64) if legal is None else legal[(legal >= a) & (legal <= b)]
            out.append(counts if len(counts) else np.array([a], dtype=np.int64))
        return out


def _legal_sets(rows: pd.DataFrame, req: Requirements, top: int) -> _LegalSets:
    shape = ["gpus_per_node", "micro_batch", *LAYOUT]
    values = rows[shape].astype(np.int64)
    codes, firsts = _distinct(values, shape)
    return _LegalSets(codes, [legal_nodes(values.iloc[i].to_dict(), req, top) for i in firsts])


def _thin(counts: np.ndarray, most: int) -> np.ndarray:
    """At most `most` of the counts, spread geometrically (the first and the last kept)."""
    if len(counts) <= most:
        return counts
    picks = np.unique(np.round(np.geomspace(1, len(counts), most)).astype(np.int64) - 1)
    return counts[picks]


PER_TOKEN_CHUNK = 256  # rows evaluated at once (each at up to PER_TOKEN_COUNTS counts)


def _per_token_at(priced: pd.DataFrame, counts: list[np.ndarray], scenario, work, calibration, req):
    """Per row, the count among its `counts` with the lowest TCO per token that is within the caps and meets
    the requirement (the row's first count when none does), and that TCO per token (inf: none);
    PER_TOKEN_CHUNK rows at a time."""
    parts = [
        _per_token_chunk(priced.iloc[a : a + PER_TOKEN_CHUNK], counts[a : a + PER_TOKEN_CHUNK], scenario, work,
                         calibration, req)
        for a in range(0, len(priced), PER_TOKEN_CHUNK)
    ]  # fmt: skip
    nodes = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, dtype=np.int64)
    return nodes, (np.concatenate([p[1] for p in parts]) if parts else np.zeros(0))


def _per_token_chunk(priced: pd.DataFrame, counts: list[np.ndarray], scenario, work, calibration, req):
    index = np.repeat(np.arange(len(priced)), [len(c) for c in counts])
    nodes = np.concatenate(counts)
    rows = reprice_at(priced.iloc[index].reset_index(drop=True), nodes, scenario)
    ev = evaluate_at(key_arrays(rows), nodes, work, calibration, req.confidence)
    goodput = _goodput_of(rows, nodes, scenario, req, work)
    rate = np.maximum(np.asarray(ev["tokens_per_s"], dtype=float) * goodput, 1e-12)
    per_token = rows["objective_usd"].to_numpy(float) / rate
    ok = rows["within_limits"].to_numpy(bool) & np.asarray(fast_enough(ev, req, goodput), dtype=bool)
    ok &= np.asarray(meets_target(ev, req), dtype=bool) & np.asarray(ev["fits_memory"], dtype=bool)
    per_token = np.where(ok, per_token, np.inf)
    order = np.lexsort((nodes, per_token, index))  # per row, cheapest per token first (then fewer nodes)
    first = order[np.r_[True, index[order][1:] != index[order][:-1]]]
    best, value = nodes[first], per_token[first]
    none = ~np.isfinite(value)
    best[none] = np.array([c[0] for c in counts])[none]
    return best, value


def _goodput_of(rows: pd.DataFrame, nodes: np.ndarray, scenario: Scenario, req: Requirements, work) -> np.ndarray:
    """The goodput a plan of each row reports (1 without a deadline; a goodput the scenario gives, as given)."""
    if req.reliability is not None:
        return np.asarray(own_goodput(rows, nodes, req, work), dtype=float)
    given = scenario.reliability.goodput
    return np.full(len(rows), given if given is not None and reliability.applies(scenario) else 1.0)


def _largest_within_limits(priced: pd.DataFrame, scenario: Scenario, req: Requirements) -> pd.DataFrame:
    """Each row at the largest legal node count up to its n_hi whose capex and power are within the caps (by
    bisection: both grow with the node count), priced there; rows whose smallest count is beyond them stay."""
    lo, hi = priced["nodes"].to_numpy(np.int64), priced["n_hi"].to_numpy(np.int64)
    inside = priced["within_limits"].to_numpy(bool)
    hi = np.where(inside, hi, lo)

    def within(rows, n):
        cost = costing.configuration_cost(
            {c: rows[c].to_numpy(float) for c in COEFFICIENTS}, n, **costing.priced_quantities(quantities_at(rows, n))
        )
        return within_caps(cost.capex_usd, cost.power_w, scenario)

    good = lo.copy()  # within the limits (for the rows within them)
    while (hi > good).any():
        mid = (good + hi + 1) // 2
        ok = within(priced, mid)
        good, hi = np.where(ok, mid, good), np.where(ok, hi, mid - 1)
    _, last = legal_within(priced, req, lo, good)
    last = np.where(last >= lo, last, lo)
    return reprice_at(priced, last, scenario)


def reprice_at(rows: pd.DataFrame, nodes: np.ndarray, scenario: Scenario) -> pd.DataFrame:
    """Table rows priced at other node counts (closed form; the explanations' what-ifs)."""
    return _price(rows.assign(n_lo=nodes)[COLUMNS].copy(), scenario)


def _price(rows: pd.DataFrame, scenario: Scenario) -> pd.DataFrame:
    """Each row at its smallest feasible node count: every quantity in closed form, capex, power, energy and
    the objective, and whether it is within the budget and power caps."""
    nodes = rows["n_lo"].to_numpy(np.int64)
    q = quantities_at(rows, nodes)
    coef = {c: rows[c].to_numpy(float) for c in COEFFICIENTS}
    cost = costing.configuration_cost(coef, nodes, **costing.priced_quantities(q))
    objective = scenario.objective
    figures = {
        "nodes": nodes,
        **{name: q[name] for name in QUANTITY_COLUMNS},
        "capex_usd": cost.capex_usd,
        "power_w": cost.power_w,
        "node_power_w": cost.node_w,
        "energy_usd": costing.energy_usd(cost, objective),
        "objective_usd": costing.objective_usd(cost, objective),
        "within_limits": within_caps(cost.capex_usd, cost.power_w, scenario),
    }
    # one block per dtype for the ~45 new columns (assign adds a block per column, and the table then needed a
    # full consolidating copy before its next insert: score)
    return pd.concat([rows, pd.DataFrame(figures, index=rows.index)], axis=1)


def within_caps(capex_usd, power_w, scenario: Scenario) -> np.ndarray:
    """Within the budget and the power cap (those given)."""
    c, ok = scenario.constraints, np.ones(np.shape(capex_usd), dtype=bool)
    if c.budget_usd is not None:
        ok &= np.asarray(capex_usd, dtype=float) <= c.budget_usd + 1e-6
    if c.power_kw is not None:
        ok &= np.asarray(power_w, dtype=float) <= c.power_kw * 1e3 + 1e-6
    return ok


# the columns sizing.quantities reads
PARAMS = [
    "tier",
    "planes",
    "endpoints_per_node",
    "switch_ports",
    "breakout",
    "oversubscription",
    "cage_endpoints",
    "ports_per_cage",
    "rail",
    "rails",
    "rail_endpoints",
    "su_nodes",
    "tor",
    "rack_leaves",
    "rack_leaf_up",
    "rail_leaf_up",
    "reserved_nodes",
    "nodes_per_rack",
    "rack_span",
    "racks_per_row",
    "row_network_rack",
    "usable_units",
    "rack_w",
    "pdus_compute",
    "pdus_network",
    "count_pdus",
    "switch_units",
    "switch_w",
    "storage_ports_per_node",
    "storage_down",
    "storage_up",
    "storage_switch_ports",
    "storage_cage_endpoints",
    "storage_switch_units",
    "storage_switch_w",
    "inband_ports_per_node",
    "inband_down",
    "inband_switch_units",
    "inband_switch_w",
    "oob_ports_per_switch",
    "ufm_count",
    "ufm_units",
    "ufm_w",
    "liquid_w",
    "cdu_kw",
    "gpus_per_node",
    "storage_block_tb",
    "storage_block_read",
    "storage_block_write",
    "storage_block_units",
    "storage_block_w",
    "storage_read_per_gpu",
    "storage_write_per_node",
    "storage_tb",
    "mgmt_server_units",
    "mgmt_server_w",
    "mgmt_servers_base",
    "install_per_node",
    "spare_node_share",
    "spare_link_share",
    "spare_repair_cover",
    "node_failures_per_day",
    "repair_hours",
    "spare_switches_per_model",
    *(f"{sizing.SPARES[name]}_spare_unit" for name in sizing.SPARED_LINKS),
    *(f"{sizing.SPARES[name]}_spare_model" for name in sizing.SPARED_MODELS),
]
COEFFICIENTS = ["endpoints_per_node", "node_usd", "node_w", "endpoint_usd", "endpoint_w", "pue"] + [
    f"{prefix}_{unit}" for prefix in sizing.PRICED.values() if prefix != "port" for unit in ("usd", "w")
]
QUANTITY_COLUMNS = [
    "down_ports",
    "cages",
    "leaf",
    "spine",
    "core",
    "switches",
    "uplinks",
    "sus",
    "compute_racks",
    "network_racks",
    "rows",
    "pdus",
    "storage_ports",
    "storage_cages",
    "storage_leaves",
    "storage_spines",
    "storage_switches",
    "storage_uplinks",
    "inband_ports",
    "inband_switches",
    "oob_ports",
    "oob_switches",
    "ufm",
    "cdus",
    "storage_blocks",
    "mgmt_servers",
    "install_hours",
    *sizing.SPARES,
]
COLUMNS = list(
    dict.fromkeys(
        [
            "server",
            *KEY,
            "nic",
            "nic_speed_gbps",
            "nics_per_node",
            "nic_port_gbps",
            "nic_ports",
            "nic_ports_total",
            "nic_usable_gbps",
            "nic_pcie",
            "nics_bought",
            "node_gbps",
            "node_gbps_eff",
            "fabric",
            "switch",
            "topology",
            "placement",
            "tier",
            "su_local",
            "n_lo",
            "n_hi",
            "storage_nic",
            "storage_bought",
            "storage_switch",
            "inband_switch",
            "server_units",
            "rack_scale",
            "hosts",
            "cooling",
            "status",
            "cdu",
            "pue",
            "leaf_down",
            "node_run_m",
            "uplink_run_m",
            "links",
            "link",
            "uplink",
            "storage_link",
            "storage_uplink",
            "inband_link",
            "single",
            *PARAMS,
            *COEFFICIENTS,
            *design_module.SKU_COLUMNS,
            *design_module.note_columns(),
        ]
    )
)


def build(
    catalog: Catalog,
    scenario: Scenario,
    calibration: Calibration,
    parts: Designs | None = None,
    every_layout: bool = False,
    prior: Candidates | None = None,
) -> Candidates:
    """The priced candidate table (cheapest first) and the bounds table of every performance key. `parts`:
    the scenario's designs when already built (they depend on its hardware, not on its requirement);
    `every_layout`: keep each design's every legal layout that may be its cheapest at some higher target (the
    fastest at each node count; with a deadline every one, as counts move with their own goodput), not only the
    one the planner would choose (the cost curve filters one such table by target); `prior`: the table of this
    scenario at another target TFLOPs/GPU, built from the same `parts` (its screened keys and its bounds but the
    target's are reused: _retarget)."""
    work = scenario_training(catalog, scenario)
    req = Requirements.of(scenario)
    if parts is None:
        parts = part_designs(catalog, scenario)
    domains = parts.single["scale_up_gpus"].to_numpy() if len(parts.single) else np.array([1])
    lay = layouts(work, scenario, int(domains.max()))
    if not layout.tp_fits(lay["tp"].to_numpy()[:, None], domains[None, :]).any():  # a fixed tp no server holds
        raise ScenarioError(
            f"workload.tp {int(lay['tp'].iloc[0])} fits no allowed server's NVLink domain "
            f"({', '.join(str(g) for g in sorted({int(g) for g in domains}))} GPUs): tensor parallelism stays inside "
            "one and tiles it; use a tp that divides a domain (or allow NVL72)"
        )
    if prior is not None and _retargetable(prior, req, work):
        bounds = _retarget(prior.bounds, work, req, calibration, prior.requirements.target_tflops)
        return _priced(scenario, work, req, calibration, prior.designs, lay, bounds, every_layout)
    keys, table = _performance_keys(parts.single, parts.configs, scenario, lay), _design_table(parts, scenario)
    if len(lay) > 1:
        keys = _screen_layouts(keys, work, req, calibration, scenario.constraints.max_nodes)
    bounds = node_bounds(keys, work, req, scenario.constraints.max_nodes, calibration)
    return _priced(scenario, work, req, calibration, table, lay, bounds, every_layout)


def _priced(scenario, work, req, calibration, table, lay, bounds, every_layout: bool) -> Candidates:
    """The priced table of the design table's every design at every (micro-batch, layout) the bounds' screened
    keys hold, over the node range they give (build)."""
    allowed = bounds[[*NODE_SHAPE, "micro_batch", *SEARCHED]].drop_duplicates(ignore_index=True)
    profiles, profile_of = _profiles(table)
    rows = _node_range(_attach_bounds(_with_micro_batches(profiles, scenario, lay, allowed), bounds), req)
    rows = rows[_rail_only_legal(rows)].reset_index(drop=True)
    if len(lay) > 1 and scenario.objective.kind not in costing.OUTPUT_KINDS and not every_layout:
        # (an output objective moves a row to another count, where another layout may be faster: score keeps all)
        rows = _best_layouts(rows, work, calibration, req)
    elif every_layout and (req.reliability is None or req.tokens_per_s is None):  # (no row moves: _own_goodput)
        rows = _fastest_per_count(rows, work, calibration, req)
    rows = _per_design(rows, profile_of)
    # the wide columns only for the rows that have a node range (a few hundred of thousands)
    wide = table.iloc[rows["design"].to_numpy()].reset_index(drop=True)
    wide = wide.assign(**{c: rows[c].to_numpy() for c in ("micro_batch", *SEARCHED, "n_lo", "n_hi")})
    priced = _own_goodput(_price(wide[COLUMNS], scenario), scenario, work, calibration, req)
    priced = score(priced, scenario, work, calibration, req)
    priced = priced.sort_values(["score", "capex_usd", "power_w", "planes"], kind="stable", ignore_index=True)
    return Candidates(priced, bounds, work, req, table)


PROFILE = [*(c for c in KEY if c not in ("micro_batch", *SEARCHED)), "single", "cap_lo", "capacity", "rack_fits"]
PROFILE.append("rail_only")


def _rail_only_legal(rows: pd.DataFrame) -> np.ndarray:
    """A rail-only fabric joins no two rails, so only traffic between same-rank GPUs may cross NVLink domains:
    data and pipeline parallelism; tensor, context and expert parallelism stay inside one (tp x cp x ep <= its
    GPUs), as Wang et al. (arXiv 2307.12169) require. Other rows: every layout."""
    inside = (rows["tp"] * rows["cp"] * rows["ep"]).to_numpy() <= rows["scale_up_gpus"].to_numpy()
    return ~rows["rail_only"].to_numpy(dtype=bool) | inside


def _profiles(table: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    """The designs' distinct profiles, the columns a node range and a layout choice depend on (PROFILE: the node
    shape, its network, the fabric's node limits), and each design's profile: designs that differ in their
    switches' and links' prices alone (most of them) share one, so the micro-batch x layout rows, their bounds and
    the layout choice are computed once per profile (exactly the same rows, a tenth of the work)."""
    codes, first = _distinct(table, PROFILE)
    return table.iloc[first].reset_index(drop=True), codes


def _distinct(frame: pd.DataFrame, columns: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Each row's code among the distinct value tuples of `columns` (numbered in order of first appearance, NaN a
    value like any other) and the first row of each code."""
    codes = frame.groupby(columns, dropna=False, sort=False).ngroup().to_numpy()
    return codes, np.unique(codes, return_index=True)[1]


def _per_design(rows: pd.DataFrame, profile_of: np.ndarray) -> pd.DataFrame:
    """The profile rows (their `design` column the profile) for every design of each profile, in design order
    and, within a design, the profile's row order."""
    designs = pd.DataFrame({"design": np.arange(len(profile_of)), "_profile": profile_of})
    rows = rows.rename(columns={"design": "_profile"}).assign(_row=np.arange(len(rows)))
    out = designs.merge(rows, on="_profile").sort_values(["design", "_row"], kind="stable")
    return out.drop(columns=["_profile", "_row"]).reset_index(drop=True)


def _fastest_per_count(rows: pd.DataFrame, work: Training, calibration: Calibration, req) -> pd.DataFrame:
    """For each design and node count, the one row (micro-batch and layout) with the most TFLOPs/GPU there:
    a design's rows at one count cost the same (its price, power and limits depend on the count alone), so
    the others are never the cheapest at any target (the cost curve's table, build's every_layout). Rows
    whose count moves later (_own_goodput) are not for this."""
    if not rows.duplicated(["design", "n_lo"]).any():  # (one layout and micro-batch each: nothing to choose)
        return rows
    rows = rows.reset_index(drop=True)
    tflops = _at_smallest_count(rows, "achieved_tflops_per_gpu", work, calibration, req)
    fastest = rows.assign(_tflops=tflops).sort_values("_tflops", ascending=False, kind="stable")
    fastest = fastest.drop_duplicates(["design", "n_lo"])
    return rows.iloc[np.sort(fastest.index.to_numpy())].reset_index(drop=True)


def _best_layouts(rows: pd.DataFrame, work: Training, calibration: Calibration, req: Requirements) -> pd.DataFrame:
    """For each design and micro-batch, the layout that needs the fewest nodes (a design's cost grows with its
    node count only) and, among those, the fastest there: the planner's choice of layout per hardware candidate."""
    if rows.empty:
        return rows
    tokens = _at_smallest_count(rows, "tokens_per_s", work, calibration, req)
    group = rows.groupby(["design", "micro_batch"]).ngroup().to_numpy()
    fewest = rows.groupby(["design", "micro_batch"])["n_lo"].transform("min").to_numpy()
    ok = rows["n_lo"].to_numpy() == fewest  # a design's cost grows with its node count alone
    dims = {k: rows[k].to_numpy() for k in LAYOUT}
    chosen = layout.choose(group, tokens, ok, dims)
    return rows.iloc[chosen[chosen >= 0]].reset_index(drop=True)


def _at_smallest_count(rows: pd.DataFrame, figure: str, work: Training, calibration: Calibration, req) -> np.ndarray:
    """One figure of the model for each row at its smallest count n_lo, evaluated once per distinct performance
    key and count (the designs of a profile share them)."""
    at = rows[[*KEY, "n_lo"]].drop_duplicates(ignore_index=True)
    figures = evaluate_at(key_arrays(at), at["n_lo"].to_numpy(np.int64), work, calibration, req.confidence)
    at["_figure"] = np.asarray(figures[figure], dtype=float)
    return rows[[*KEY, "n_lo"]].merge(at, on=[*KEY, "n_lo"], how="left")["_figure"].to_numpy()


def leaf_split_columns(row: dict) -> tuple[int, int, int]:
    """(leaf down-ports, leaf up-ports, aggregation down-ports) of a candidate's switch: the MILP's d, u, a."""
    if not row["tier"]:
        return 0, 0, 0
    down, up = fabric.leaf_split(int(row["switch_ports"]), row["oversubscription"], int(row["ports_per_cage"]))
    return down, up, int(fabric.agg_down(int(row["switch_ports"])))


def fabric_text(row: dict) -> str:
    if row["tier"] == 0:
        return "single node (no fabric)"
    planes = int(row.get("planes", 1) or 1)
    if row.get("topology") == "rail-only":
        each = "one switch" if row["tier"] == 1 else "a two-tier leaf-spine"
        shape = f"rail-only ({planes} rails, each {each}, no switch between rails)"
    elif row["tier"] == 1:
        shape = "one switch"
    else:
        tiers = {2: "two-tier", 3: "three-tier"}[row["tier"]]
        kind = "rail-optimised" if row["topology"] == "rail" else "leaf-spine"
        shape = f"{tiers} {kind}"
        if row["topology"] == "rail":
            shape += f" ({int(row['rails'])} rails, {int(row['su_nodes'])}-node scalable units"
            shape += f", {planes} planes)" if planes > 1 else ")"
    over = "" if row["oversubscription"] == 1 else f", {row['oversubscription']:g}:1 oversubscribed"
    if row["oversubscription"] != 1 and row.get("su_local"):
        over += " (rail-local within one scalable unit: full bandwidth)"
    brk = f", 1:{row['breakout']:g} breakout" if row["breakout"] > 1 else ""
    return f"{shape} of {row['switch']} ({int(row['switch_ports'])} ports){over}{brk}, leaves {row['placement']}"


# ---------------------------------------------------------------- one row as a purchase


def matching(frame: pd.DataFrame, values: dict) -> np.ndarray:
    """The rows whose columns hold `values` (a missing value matches a missing one: a single node's NIC)."""
    ok = np.ones(len(frame), dtype=bool)
    for column, value in values.items():
        ok &= ((frame[column] == value) | (frame[column].isna() & pd.isna(value))).to_numpy(bool)
    return ok


def clean_row(row) -> dict:
    """A candidate row as a dict, with pandas' NaN for a missing NIC or switch turned back into None."""
    row = dict(row)
    optional = ("nic", "switch", "storage_switch", "inband_switch", "storage_nic")
    return {c: (None if c in optional and not isinstance(v, str) else v) for c, v in row.items()}


def geometry(scenario: Scenario) -> hardware_layout.Geometry:
    return hardware_layout.Geometry.of(scenario.layout)


def cabling_override(scenario: Scenario) -> tuple[float | None, float | None]:
    return scenario.cabling.node_leaf_reach_m, scenario.cabling.switch_reach_m


def bill_of_materials(catalog: Catalog, row, nodes: int, scenario: Scenario) -> list[BomLine]:
    """The candidate's bill of materials at `nodes` (planner/hardware/bom.py)."""
    row = clean_row(row)
    q = quantities_at(row, nodes)
    return bom.bill_of_materials(catalog, row, nodes, q, geometry(scenario), cabling_override(scenario))
