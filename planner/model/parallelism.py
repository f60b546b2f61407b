"""How a training job uses its GPUs: the one value the scenario, the command line and the measurement
database build, and the model, the tables and the reports are handed whole.

Today it is sharded data parallelism over every GPU: DeepSpeed ZeRO-3 (0.6 or later) with its ZeRO++
options, or PyTorch FSDP; the gradient dtype of the reduce-scatter; flat or hierarchical collectives;
activation checkpointing (full, selective or none); optimizer offload (none, cpu, nvme). It is where tensor,
pipeline, context and expert parallelism join (docs/model.md sections 8-9), and its rules are checked here
only, once, whoever builds it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from planner.assumptions import model as A
from planner.base.errors import UsageError

FRAMEWORKS = A.FRAMEWORKS  # deepspeed, fsdp: each has its own overlap, collectives and host costs
OFFLOADS = ("none", "cpu", "nvme")
CHECKPOINTING = ("full", "selective", "none")
ZEROPP_OPTIONS = ("qwz", "hpz", "qgz")
GRAD_BYTES = {"bf16": 2.0, "fp16": 2.0, "fp32": 4.0}  # bytes per gradient element in the reduce-scatter


@dataclass(frozen=True)
class Parallelism:
    checkpointing: str = "full"
    flash_attention: bool = True
    qwz: bool = False  # ZeRO++: int8 weight all-gather
    hpz: bool = False  # ZeRO++: a secondary weight partition inside each scale-up domain
    qgz: bool = False  # ZeRO++: int4 gradient reduce-scatter through an all-to-all
    grad_bytes: float = 2.0
    hierarchical: bool = False  # collectives cross the network (N-1)/N, not (n-1)/n
    framework: str = "deepspeed"
    offload: str = "none"

    def __post_init__(self):
        if isinstance(self.checkpointing, bool):  # older tables and scenarios: true / false
            object.__setattr__(self, "checkpointing", "full" if self.checkpointing else "none")
        _one_of("framework", self.framework, FRAMEWORKS)
        _one_of("offload", self.offload, OFFLOADS)
        _one_of("checkpointing", self.checkpointing, CHECKPOINTING)
        if self.framework != "deepspeed" and self.zeropp:
            raise UsageError(
                "ZeRO++ (qwz/hpz/qgz) is a DeepSpeed feature: set the framework to deepspeed, or drop ZeRO++"
            )

    @property
    def zeropp(self) -> tuple[str, ...]:
        """The ZeRO++ options on, by name."""
        return tuple(name for name in ZEROPP_OPTIONS if getattr(self, name))

    def with_zeropp(self, on: bool) -> Parallelism:
        return dataclasses.replace(self, qwz=on, hpz=on, qgz=on)

    def columns(self) -> dict:
        """The columns of the performance model's table (planner.model.performance) that say how the GPUs
        are used."""
        return dataclasses.asdict(self)

    @classmethod
    def of_workload(cls, workload) -> Parallelism:
        """A scenario's or fleet job's workload section (planner.inputs.scenario.Workload): gradients are
        reduced in grad_dtype, by default the training precision."""
        return cls(
            checkpointing=workload.checkpointing,
            flash_attention=workload.flash_attention,
            qwz=workload.qwz,
            hpz=workload.hpz,
            qgz=workload.qgz,
            grad_bytes=GRAD_BYTES[workload.grad_dtype or workload.precision],
            hierarchical=workload.hierarchical,
            framework=workload.framework,
            offload=workload.offload,
        )


def _one_of(what: str, value: str, allowed) -> None:
    if value not in allowed:
        raise UsageError(f"--{what} {value!r} is not one of {', '.join(allowed)}")
