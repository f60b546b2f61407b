"""What binds a training step, in words that agree with where the time goes.

perf.py names the longer phase (compute, or the communication part that dominates: bandwidth, latency,
NVLink). With little overlap a step can be "compute" by that test and still spend a third of its time
waiting for the network, so the verdict here also weighs the exposed communication: the share of the step
the GPUs wait (t_comm_exposed_s / t_step_s), which is also the most a faster network could save.
"""

from __future__ import annotations

# Below this share of the step, exposed communication is small: even an infinitely fast network would cut
# the step by less than a tenth, so "compute-bound" is a fair one-word answer.
SMALL_EXPOSED_SHARE = 0.10

COMMUNICATION = {
    "bandwidth": "network bandwidth",
    "latency": "collective latency",
    "nvlink": "NVLink",
}


def exposed_share(t_comm_exposed_s: float, t_step_s: float) -> float:
    return t_comm_exposed_s / t_step_s if t_step_s > 0 else 0.0


def label(binding: str, t_comm_exposed_s: float, t_step_s: float) -> str:
    """A short verdict: 'compute', 'compute, with 33% of the step waiting on communication', 'network
    bandwidth (45% of the step waiting on communication)', or 'memory'."""
    if binding == "memory":
        return "memory (does not fit)"
    share = exposed_share(t_comm_exposed_s, t_step_s)
    waiting = f"{share:.0%} of the step waiting on communication"
    if binding == "compute":
        return "compute" if share < SMALL_EXPOSED_SHARE else f"compute, with {waiting}"
    return f"{COMMUNICATION.get(binding, binding)} ({waiting})"


# Above this share of the latency term, DeepSpeed's Python loop over the ranks is worth naming: a software
# choice (FSDP) then helps more than any network
RANK_LOOP_SHARE = 0.25


# what saves communication besides a faster network, per framework (ZeRO++ is DeepSpeed's alone)
SOFTWARE_REMEDY = {
    "deepspeed": "ZeRO++",
    "fsdp": "hybrid sharding (HSDP) or an fp8 all-gather",
    "megatron": "a layout with more of its traffic inside the NVLink domain",
}


def remedy(framework: str) -> str:
    """'a faster network or <the framework's own>'."""
    own = SOFTWARE_REMEDY.get(framework)
    return f"a faster network or {own}" if own else "a faster network"


def advice(binding: str, t_comm_exposed_s: float, t_step_s: float, rank_loop_s=0.0, latency_s=0.0,
           framework: str = "deepspeed") -> str:  # fmt: skip
    """The verdict with what it means for buying bandwidth."""
    share = exposed_share(t_comm_exposed_s, t_step_s)
    if binding == "memory":
        return "memory: the configuration does not fit in GPU memory"
    if binding == "compute" and share < SMALL_EXPOSED_SHARE:
        return f"compute: only {share:.0%} of the step waits on communication; more bandwidth buys little"
    if binding == "compute":
        return (
            f"compute is the longer phase, but {share:.0%} of the step ({t_comm_exposed_s:.3g} s of "
            f"{t_step_s:.3g} s) waits on communication: {remedy(framework)} could save up to that"
        )
    what = {
        "bandwidth": f"{remedy(framework)} helps",
        "latency": "many small collectives; larger micro-batches or fewer nodes help",
        "nvlink": "intra-node traffic takes longest",
    }.get(binding, "")
    if binding == "latency" and latency_s > 0 and rank_loop_s > RANK_LOOP_SHARE * latency_s:
        what = (
            f"{rank_loop_s:.3g} s of its {latency_s:.3g} s is DeepSpeed's Python loop over every rank per gradient "
            "tensor, which no network shortens: PyTorch FSDP, fewer GPUs or larger micro-batches help"
        )
    return f"{COMMUNICATION.get(binding, binding)}: {share:.0%} of the step waits on communication; {what}"
