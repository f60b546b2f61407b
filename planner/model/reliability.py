"""Goodput: the share of a training run's wall-clock time that trains, given interruptions, restarts and
checkpoints (first-order Young/Daly model).

With N nodes each interrupted at r per second, the job is interrupted at rate N r (MTBF M = 1/(N r)). Every
node writes its shard of the checkpoint in parallel, so a checkpoint takes w = params x bytes_per_param /
(N x write rate). Checkpointing every tau seconds costs w / tau of the time; each interruption costs its
restart time R and, on average, half an interval of recomputed work. So the lost share is

    w / tau  +  (tau / 2) / M  +  R / M,     minimised at tau = sqrt(2 w M) (Young/Daly),

and goodput = 1 - that share. Spot preemptions (cloud) are a second interruption source with their own rate
and restart time. Inputs and sources: planner/assumptions/facility.py; docs/plan.md section 7 works an example.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from planner.assumptions import facility as D
from planner.base.errors import InfeasibleError
from planner.base.units import SECONDS_PER_DAY
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
    restart_share: float
    given: bool = False  # the scenario gave the goodput; the parts above are then not modelled

    def wall_days(self, training_days: float) -> float:
        """Calendar days that deliver `training_days` of uninterrupted training."""
        return training_days / self.fraction

    def interruptions(self, training_days: float) -> float:
        """Expected interruptions over the run."""
        return self.interruptions_per_day * self.wall_days(training_days)


def node_interruptions(reliability, nodes: int) -> Interruptions:
    """Hardware and software interruptions of a job on `nodes` nodes (reliability: the scenario section)."""
    per_s = nodes * reliability.interruptions_per_1000_node_days / 1e3 / SECONDS_PER_DAY
    return Interruptions(per_s, reliability.restart_minutes * SECONDS_PER_MINUTE)


def spot_interruptions(cloud, spot_instances: int) -> Interruptions:
    """Preemptions of the job's spot instances (cloud: the scenario's cloud section)."""
    per_s = spot_instances * cloud.spot_interruptions_per_1000_instance_days / 1e3 / SECONDS_PER_DAY
    return Interruptions(per_s, cloud.spot_restart_minutes * SECONDS_PER_MINUTE)


def goodput(reliability, params: float, nodes: int, extra: tuple[Interruptions, ...] = ()) -> Goodput:
    """Goodput of a run of a `params`-parameter model on `nodes` nodes. A goodput the scenario gives is
    taken as is (extra sources, e.g. spot preemptions, still cost their share)."""
    sources = (node_interruptions(reliability, nodes), *extra)
    rate_per_s = sum(s.per_s for s in sources)
    write_s = checkpoint_write_s(reliability, params, nodes)
    interval_s = _interval_s(reliability, write_s, rate_per_s)
    checkpoint = write_s / interval_s if math.isfinite(interval_s) else 0.0
    lost = rate_per_s * interval_s * D.LOST_WORK_SHARE_OF_INTERVAL.value if rate_per_s else 0.0
    restart = sum(s.per_s * s.restart_s for s in sources)
    result = Goodput(
        nodes=nodes,
        fraction=1.0 - checkpoint - lost - restart,
        interruptions_per_day=rate_per_s * SECONDS_PER_DAY,
        checkpoint_write_s=write_s,
        checkpoint_interval_s=interval_s,
        checkpoint_share=checkpoint,
        lost_work_share=lost,
        restart_share=restart,
    )
    if reliability.goodput is not None:
        extra_share = 1.0 - goodput(_without_nodes(reliability), params, nodes, extra).fraction if extra else 0.0
        result = dataclasses.replace(result, fraction=reliability.goodput - extra_share, given=True)
    if result.fraction <= 0:
        raise InfeasibleError(
            f"on {nodes} nodes the run is interrupted {result.interruptions_per_day:.1f} times a day and loses "
            "all its time to restarts and recomputation; lower reliability.interruptions_per_1000_node_days or "
            "restart_minutes, or checkpoint faster"
        )
    return result


def checkpoint_write_s(reliability, params: float, nodes: int) -> float:
    """Seconds to write a checkpoint: every node writes its shard at once, so the rate scales with nodes."""
    rate_b_per_s = nodes * reliability.checkpoint_write_gb_per_s_per_node * 1e9
    return params * reliability.checkpoint_bytes_per_param / rate_b_per_s


def _interval_s(reliability, write_s: float, rate_per_s: float) -> float:
    if reliability.checkpoint_interval_minutes is not None:
        return reliability.checkpoint_interval_minutes * SECONDS_PER_MINUTE
    if rate_per_s == 0:
        return math.inf
    return math.sqrt(2.0 * write_s / rate_per_s)  # Young/Daly: sqrt(2 w M) with M = 1 / rate


def _without_nodes(reliability):
    """The reliability settings with node interruptions off (to price only the extra sources)."""
    return reliability.model_copy(update={"interruptions_per_1000_node_days": 0.0, "goodput": None})


def with_goodput(scenario, fraction: float):
    """The scenario with its goodput resolved to `fraction` (what Requirements.of divides the need by)."""
    return scenario.model_copy(update={"reliability": scenario.reliability.model_copy(update={"goodput": fraction})})


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
        interruptions_per_1000_node_days=rel.interruptions_per_1000_node_days,
        restart_minutes=rel.restart_minutes,
        checkpoint_interval_minutes=interval,
        checkpoint_interval_young_daly=rel.checkpoint_interval_minutes is None,
        checkpoint_write_s=g.checkpoint_write_s,
        checkpoint_share=g.checkpoint_share,
        lost_work_share=g.lost_work_share,
        restart_share=g.restart_share,
        meets_deadline=effective <= allowed * (1 + DEADLINE_TOLERANCE),
    )
