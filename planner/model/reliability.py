"""Goodput: the share of a training run's wall-clock time that trains, given interruptions, restarts and
checkpoints (first-order Young/Daly model).

With N nodes each interrupted at r per second, the job is interrupted at rate N r (MTBF M = 1/(N r)). Every
host writes its shard of the checkpoint in parallel, so a checkpoint takes w = params x bytes_per_param /
(hosts x write rate). Checkpointing every tau seconds costs w / tau of the time; each interruption costs its
restart time R and, on average, half an interval of recomputed work. So the lost share is

    w / tau  +  (tau / 2) / M  +  R / M,     minimised at tau = sqrt(2 w M) (Young/Daly),

and goodput = 1 - that share. Spot preemptions (cloud) are a second interruption source with their own rate
and restart time. Inputs and sources: planner/assumptions/facility.py; docs/plan.md section 7 works an example.

The job's interruption rate N r follows from the bill of materials: each kind of part that can stop the job
(GPUs, hosts, NICs, NIC-to-leaf links, switch-to-switch links, leaves, spines and cores, each host's storage
client) at its sourced rate per unit per day, times its count in the plan (`Parts`), and software adds its share
s of the total: rate = hardware / (1 - s). More GPUs, more links or another switch tier each cost goodput. A
per-node rate the scenario gives (interruptions_per_1000_node_days) replaces the count.

A GPU, host or NIC failure takes its node out until it is repaired (reliability.repair_hours; a rack-scale
system's tray: repair_hours_rack_scale) unless a spare node is free: with the nodes under repair Poisson (an
M/G/infinity queue), the job stalls short of a node P(Poisson > spares) of the time.

`goodput` is one plan's, with its parts counted; `shape_goodput` the same arithmetic for arrays of node shapes
at arrays of node counts, which the candidate table sizes each configuration by (its network's share at an
upper bound, so each configuration meets its deadline at its own goodput).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from planner.assumptions import facility as D
from planner.base import poisson
from planner.base.errors import InfeasibleError
from planner.base.units import SECONDS_PER_DAY
from planner.hardware import sizing
from planner.results import Schedule

SECONDS_PER_MINUTE = 60.0


@dataclass(frozen=True)
class Interruptions:
    """One source of job interruptions: how often (per second, for the whole job) and what each costs."""

    per_s: float
    restart_s: float


@dataclass(frozen=True)
class Goodput:
    """The goodput of a run on `nodes` nodes and what it is made of (shares of wall-clock time)."""

    nodes: int
    fraction: float
    interruptions_per_day: float
    checkpoint_write_s: float
    checkpoint_interval_s: float  # inf: no interruptions, so no checkpoint is needed for the schedule
    checkpoint_share: float
    lost_work_share: float
    restart_share: float  # restarts, and the waits for repairs below
    given: bool = False  # the scenario gave the goodput; the parts above are then not modelled
    repair_wait_share: float = 0.0  # of the time: node failures that find no spare free wait for their repair
    spare_wait_probability: float = 0.0
    spare_nodes: float = 0.0
    repair_hours: float = 0.0  # a failed node's (a rack-scale system's: its tray swap)
    by_part: dict[str, float] = dataclasses.field(default_factory=dict)  # node interruptions per day, by cause

    def wall_days(self, training_days: float) -> float:
        """Calendar days that deliver `training_days` of uninterrupted training."""
        return training_days / self.fraction

    def interruptions(self, training_days: float) -> float:
        """Expected interruptions over the run."""
        return self.interruptions_per_day * self.wall_days(training_days)


@dataclass(frozen=True)
class Parts:
    """The parts of a plan that can interrupt its job, counted from its bill of materials (floats, or arrays of
    them for many candidates at once)."""

    gpus: float
    hosts: float
    nics: float = 0.0
    node_links: float = 0.0  # NIC to leaf
    fabric_links: float = 0.0  # leaf to spine, spine to core
    leaves: float = 0.0
    upper_switches: float = 0.0  # spines and cores
    spare_nodes: float = 0.0  # on the shelf: a failed node is swapped for one instead of waiting for its repair
    rack_scale: bool = False  # a node is a rack-scale system: a failed tray is swapped (repair_hours_rack_scale)
    # planes that back each other up (a multi-plane fabric): a failed link or switch of one plane leaves the job
    # running on the others at reduced bandwidth (DGX SuperPOD B300 RA: "will not lead to a catastrophic job
    # abortion ... ½ of the original bandwidth"), so links and switches interrupt nothing; the NIC still does
    redundant_planes: bool = False

    def events_per_day(self, rates) -> dict[str, float]:
        """Expected job interruptions per day by kind of part (rates: the scenario's reliability.failure_rates),
        software last, at its share of the total."""
        counts = {
            "gpu": self.gpus,
            "host": self.hosts,
            "nic": self.nics,
            "node_link": self.node_links,
            "fabric_link": self.fabric_links,
            "leaf": self.leaves,
            "upper_switch": self.upper_switches,
            "storage_client": self.hosts,
        }
        events = {kind: count * getattr(rates, kind) for kind, count in counts.items()}
        backed = np.asarray(self.redundant_planes, dtype=bool)
        if backed.any():
            events |= {kind: np.where(backed, 0.0, events[kind]) if backed.ndim else 0.0 for kind in PLANE_KINDS}
        share = rates.software_share
        events["software"] = sum(events.values()) * share / (1.0 - share)
        return events


# What a second plane backs up (Parts.redundant_planes)
PLANE_KINDS = ("node_link", "fabric_link", "leaf", "upper_switch")

# The failures that take a node out of the job until it is repaired or a spare replaces it (a link, a switch or
# software is cleared in place: a reroute, an optic swapped, a restart).
NODE_KINDS = ("gpu", "host", "nic")


def repairs_beyond(node_failures_per_day, repair_hours, spares) -> np.ndarray:
    """The chance that more than `spares` nodes are under repair at once (arrays or scalars): the nodes under
    repair at a random moment are Poisson with mean (failures a day x repair days) (an M/G/infinity queue), so
    this is P(Poisson > spares), the share of the time the job lacks a node; at `spares` - 1, the chance that a
    failure finds no spare free. 0 when repairs are instant or spares unlimited."""
    mean = np.asarray(node_failures_per_day, dtype=float) * np.asarray(repair_hours, dtype=float) / 24.0
    return poisson.tail(mean, spares)


# Where the network is not known (a rented instance's is the provider's and unpublished; a node range before its
# fabric is sized), it is counted as one NIC and link per GPU on a non-blocking two-tier fabric of 64-port
# switches: the DGX SuperPOD pattern most GPU clouds follow.
ASSUMED_SWITCH_PORTS = 64


def assumed_parts(gpus_per_node: int, hosts_per_node: int, nodes: int, spare_nodes: float) -> Parts:
    """The parts of `nodes` nodes whose network is not known (as ASSUMED_SWITCH_PORTS says); `spare_nodes`
    math.inf for rented instances (the provider's pool replaces a failed one)."""
    links = float(gpus_per_node * nodes) if nodes > 1 else 0.0
    leaves = math.ceil(links / (ASSUMED_SWITCH_PORTS / 2))
    spines = math.ceil(leaves / 2) if leaves > 1 else 0
    fabric = links if spines else 0.0
    gpus, hosts = float(gpus_per_node * nodes), float(hosts_per_node * nodes)
    return Parts(gpus, hosts, links, links, fabric, leaves, spines, spare_nodes)


def per_day_by_part(reliability, nodes: int, parts: Parts | None) -> dict[str, float]:
    """Job interruptions per day by kind of part ({"nodes": ...} when the scenario gives a per-node rate)."""
    given = reliability.interruptions_per_1000_node_days
    if given is not None:
        return {"nodes": nodes * given / 1e3}
    if parts is None:
        raise ValueError("interruptions from the bill of materials need the plan's parts")
    return parts.events_per_day(reliability.failure_rates)


def spot_interruptions(cloud, spot_instances: int) -> Interruptions:
    """Preemptions of the job's spot instances (cloud: the scenario's cloud section)."""
    per_s = spot_instances * cloud.spot_interruptions_per_1000_instance_days / 1e3 / SECONDS_PER_DAY
    return Interruptions(per_s, cloud.spot_restart_minutes * SECONDS_PER_MINUTE)


def goodput(
    reliability, params: float, nodes: int, parts: Parts | None, extra: tuple[Interruptions, ...] = ()
) -> Goodput:
    """Goodput of a run of a `params`-parameter model on `nodes` nodes made of `parts` (None: only with a
    per-node rate given). A goodput the scenario gives is taken as is (extra sources, e.g. spot preemptions,
    still cost their share)."""
    counted = parts is not None or reliability.interruptions_per_1000_node_days is not None
    by_part = per_day_by_part(reliability, nodes, parts) if counted or reliability.goodput is None else {}
    restart_s = reliability.restart_minutes * SECONDS_PER_MINUTE
    sources = (Interruptions(sum(by_part.values()) / SECONDS_PER_DAY, restart_s), *extra)
    rate_per_s = sum(s.per_s for s in sources)
    node_failures = sum(by_part.get(kind, 0.0) for kind in NODE_KINDS)  # a day
    spares = parts.spare_nodes if parts is not None else 0.0
    hours = sizing.repair_hours(reliability, parts is not None and parts.rack_scale)
    restarts = sum(s.per_s * s.restart_s for s in sources)
    writers = parts.hosts if parts is not None else nodes
    shares = lost_shares(reliability, params, writers, rate_per_s, restarts, node_failures, spares, hours)
    checkpoint, lost, restart, repair = (float(shares[k]) for k in ("checkpoint", "lost", "restart", "repair"))
    waits = float(repairs_beyond(node_failures, hours, spares - 1)) if spares >= 1 else float(node_failures > 0)
    write_s, interval_s = float(shares["write_s"]), float(shares["interval_s"])
    result = Goodput(
        nodes=nodes,
        fraction=1.0 - checkpoint - lost - restart - repair,
        interruptions_per_day=rate_per_s * SECONDS_PER_DAY,
        checkpoint_write_s=write_s,
        checkpoint_interval_s=interval_s,
        checkpoint_share=checkpoint,
        lost_work_share=lost,
        restart_share=restart + repair,
        by_part=by_part,
        repair_wait_share=repair,
        spare_wait_probability=waits,
        spare_nodes=spares,
        repair_hours=float(hours),
    )
    if reliability.goodput is not None:
        extra_share = 1.0 - goodput(_without_nodes(reliability), params, nodes, None, extra).fraction if extra else 0.0
        result = dataclasses.replace(result, fraction=reliability.goodput - extra_share, given=True)
    if result.fraction <= 0:
        raise InfeasibleError(
            f"on {nodes} nodes the run is interrupted {result.interruptions_per_day:.1f} times a day and loses "
            "all its time to restarts and recomputation; lower reliability.failure_rates (or "
            "interruptions_per_1000_node_days) or restart_minutes, or checkpoint faster"
        )
    return result


def checkpoint_write_s(reliability, params: float, writers) -> float:
    """Seconds to write a checkpoint: every host (`writers`: a server is one, an NVL72 rack 18) writes its shard
    at once, so the rate scales with them."""
    rate_b_per_s = writers * reliability.checkpoint_write_gb_per_s_per_node * 1e9
    return params * reliability.checkpoint_bytes_per_param / rate_b_per_s


def lost_shares(
    reliability, params, writers, rate_per_s, restart_s_per_s, node_failures_per_day, spares, hours
) -> dict:
    """The shares of the time lost (arrays or scalars): checkpoint writes (by `writers` hosts), recomputed work and
    restarts of a job interrupted at `rate_per_s` (restart_s_per_s: seconds of restart per second), and its stalls
    short of a node (node failures a day, each out `hours` unless one of `spares` is free). Also the write and
    interval seconds."""
    rate = np.asarray(rate_per_s, dtype=float)
    write = checkpoint_write_s(reliability, params, np.asarray(writers, dtype=float))
    if reliability.checkpoint_interval_minutes is not None:
        interval = np.full(np.shape(rate), reliability.checkpoint_interval_minutes * SECONDS_PER_MINUTE)
    else:  # Young/Daly: sqrt(2 w M) with M = 1 / rate
        with np.errstate(divide="ignore"):
            interval = np.where(rate > 0, np.sqrt(2.0 * write / np.where(rate > 0, rate, 1.0)), np.inf)
    finite = np.isfinite(interval)
    return {
        "checkpoint": np.where(finite, write / np.where(finite, interval, 1.0), 0.0),
        "lost": np.where(rate > 0, rate * np.where(finite, interval, 0.0) * D.LOST_WORK_SHARE_OF_INTERVAL.value, 0.0),
        "restart": np.asarray(restart_s_per_s, dtype=float),
        "repair": repairs_beyond(node_failures_per_day, hours, spares),
        "write_s": write,
        "interval_s": interval,
    }


def shape_goodput(reliability, params: float, nodes, shape: dict) -> np.ndarray:
    """Goodput of node shapes (arrays) at `nodes`: `shape` holds gpus_per_node, hosts_per_node, spare_nodes,
    rack_scale and the network's interruptions per node-day, nic_per_node_day (node failures) and
    net_per_node_day (links, switches). The arithmetic of `goodput`; a given goodput or per-node rate as there."""
    nodes = np.asarray(nodes, dtype=float)
    if reliability.goodput is not None:
        return np.full(nodes.shape, reliability.goodput)
    r, given = reliability.failure_rates, reliability.interruptions_per_1000_node_days
    if given is not None:
        per_node, failing = np.full(nodes.shape, given / 1e3), np.zeros(nodes.shape)
    else:
        gpus, hosts = np.asarray(shape["gpus_per_node"], dtype=float), np.asarray(shape["hosts_per_node"], dtype=float)
        failing = gpus * r.gpu + hosts * r.host + np.asarray(shape["nic_per_node_day"], dtype=float)
        hardware = failing + hosts * r.storage_client + np.asarray(shape["net_per_node_day"], dtype=float)
        per_node = hardware / (1.0 - r.software_share)
    rate = nodes * per_node / SECONDS_PER_DAY
    hours = sizing.repair_hours(reliability, shape["rack_scale"])
    restart = rate * reliability.restart_minutes * SECONDS_PER_MINUTE
    writers = nodes * np.asarray(shape["hosts_per_node"], dtype=float)
    shares = lost_shares(reliability, params, writers, rate, restart, nodes * failing, shape["spare_nodes"], hours)
    return np.maximum(1.0 - shares["checkpoint"] - shares["lost"] - shares["restart"] - shares["repair"], 0.0)


def _without_nodes(reliability):
    """The reliability settings with node interruptions off (to price only the extra sources)."""
    return reliability.model_copy(update={"interruptions_per_1000_node_days": 0.0, "goodput": None})


def applies(scenario) -> bool:
    """Goodput matters to a deadline: tokens within days."""
    return scenario.requirement.tokens is not None


# Relative slack when comparing calendar days with the deadline (the plan is sized to meet it exactly).
DEADLINE_TOLERANCE = 1e-9


def schedule(scenario, g: Goodput, training_days: float) -> Schedule:
    """The deadline, met or not, in calendar days once goodput `g` is counted."""
    r, rel = scenario.requirement, scenario.reliability
    effective = g.wall_days(training_days)
    allowed = r.days * (1 - r.schedule_margin)
    interval = g.checkpoint_interval_s / SECONDS_PER_MINUTE if math.isfinite(g.checkpoint_interval_s) else None
    return Schedule(
        deadline_days=r.days,
        schedule_margin=r.schedule_margin,
        goodput=g.fraction,
        goodput_given=g.given,
        nodes=g.nodes,
        training_days=training_days,
        effective_days=effective,
        interruptions_expected=g.interruptions(training_days),
        interruptions_per_1000_node_days=sum(g.by_part.values()) / g.nodes * 1e3,
        interruptions_by_part={k: v * g.wall_days(training_days) for k, v in g.by_part.items()},
        interruptions_from="per node" if rel.interruptions_per_1000_node_days is not None else "bill of materials",
        restart_minutes=rel.restart_minutes,
        checkpoint_interval_minutes=interval,
        checkpoint_interval_young_daly=rel.checkpoint_interval_minutes is None,
        checkpoint_write_s=g.checkpoint_write_s,
        checkpoint_share=g.checkpoint_share,
        lost_work_share=g.lost_work_share,
        restart_share=g.restart_share,
        repair_wait_share=g.repair_wait_share,
        spare_wait_probability=g.spare_wait_probability,
        spare_nodes=int(round(g.spare_nodes)),
        repair_hours=g.repair_hours,
        meets_deadline=effective <= allowed * (1 + DEADLINE_TOLERANCE),
    )
