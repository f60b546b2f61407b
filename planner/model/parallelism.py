"""How a training job uses its GPUs: the one value the scenario, the command line and the measurement
database build, and the model, the tables and the reports are handed whole.

Today it is sharded data parallelism: DeepSpeed ZeRO-3 (0.6 or later) with its ZeRO++ options, or PyTorch
FSDP, sharding over every GPU (full) or within groups that replicate each other (hybrid, HSDP); the gradient
dtype of the reduce-scatter; flat or hierarchical collectives; activation checkpointing (full, selective,
op or none); optimizer offload (none, cpu, nvme); the software stack (eager or torch.compile) and the training
precision of the GEMMs (bf16, fp8, fp8-rowwise, mxfp8, fp4). It is where tensor, pipeline, context and expert
parallelism join (docs/model.md sections 8-9), and its rules are checked here only, once, whoever builds it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from planner.assumptions import model as A
from planner.base.errors import UsageError

FRAMEWORKS = A.FRAMEWORKS  # deepspeed, fsdp: each has its own overlap, collectives and host costs
OFFLOADS = ("none", "cpu", "nvme")
CHECKPOINTING = ("full", "selective", "op", "none")  # op: torchtitan's per-op policy (every second matmul)
ZEROPP_OPTIONS = ("qwz", "hpz", "qgz")
GRAD_BYTES = {"bf16": 2.0, "fp16": 2.0, "fp32": 4.0}  # bytes per gradient element in the reduce-scatter
STACKS = ("eager", "compile")
PRECISIONS = ("bf16", "fp16", "fp8", "fp8-rowwise", "mxfp8", "fp4")  # of the linear layers' GEMMs
LOW_PRECISIONS = ("fp8", "fp8-rowwise", "mxfp8", "fp4")
SCALED_PRECISIONS = ("fp8-rowwise", "mxfp8")  # per-row or per-block scales: casts read and write more
# full: ZeRO-3 / FSDP over the data-parallel ranks; hybrid: HSDP; zero2: ZeRO-2 (weights kept whole between their
# once-per-step gather, gradients reduce-scattered every micro-step; FSDP's SHARD_GRAD_OP, Megatron-FSDP's
# optim_grads, Llama 3's); zero1: Megatron's distributed optimizer (optimizer states sharded, gradients
# reduce-scattered and weights gathered once per step); none: DDP (replicated states)
SHARDINGS = ("full", "hybrid", "zero2", "zero1", "none")
# tensor, pipeline (virtual stages per rank), context, expert; pp_balanced 1: the embedding and the loss each
# take a layer's place in the pipeline split (planner.model.layout.pipeline_split)
LAYOUT = ("tp", "pp", "vp", "cp", "ep", "pp_balanced")
LAYOUT_DEFAULTS = {"tp": 1, "pp": 1, "vp": 1, "cp": 1, "ep": 1, "pp_balanced": 0}
# what the planner chooses per candidate: the layout and, with workload.checkpointing search, the recompute mode
SEARCHED = (*LAYOUT, "checkpointing")
# the activation-recompute modes searched per framework, least recompute first: Megatron's selective (the
# attention core), torchtitan's per-op policy (op), DeepSpeed's full or none
RECOMPUTE_SEARCH = {"megatron": ("none", "selective", "full"), "fsdp": ("none", "op", "full"),
                    "deepspeed": ("none", "full")}  # fmt: skip
# FlashAttention-2 class (FA2, PyTorch SDPA's flash backend: what most measured runs used), FlashAttention-3 class
# (FA3 on Hopper, FA4 / cuDNN on Blackwell), the Triton FlashAttention of 2022-23 (MPT's attn_impl triton), and
# unfused attention (Megatron-LM 2021-22: the s x s scores materialised, soft-maxed by a fused kernel)
ATTENTION_KERNELS = ("flash", "fa3", "triton", "unfused")


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
    stack: str = "eager"  # eager PyTorch, or torch.compile (fused element-wise ops, fewer kernel launches)
    precision: str = "bf16"  # the linear layers' GEMMs; attention and the logits stay in bf16
    fp8_allgather: bool = False  # FSDP2 gathers tensorwise-fp8 weights (1 byte per parameter), off in torchao
    sharding: str = "full"  # full: parameters sharded over every GPU; hybrid: within groups of shard_gpus
    shard_gpus: int = 0  # GPUs per shard group with hybrid sharding (0: the scale-up domain)
    attention_kernel: str = "flash"  # FlashAttention-2 class; fa3 (Hopper/Blackwell kernels), triton (MPT's)
    tp: int = 1  # tensor-parallel ranks (with sequence parallelism), neighbours inside a scale-up domain
    pp: int = 1  # pipeline stages
    vp: int = 1  # virtual (interleaved) stages per pipeline rank
    cp: int = 1  # context-parallel ranks (ring attention over the sequence)
    ep: int = 1  # expert-parallel ranks of a MoE layer, within the data- and context-parallel ranks
    tp_overlap: bool = False  # tensor-parallel collectives overlapped with the GEMMs (TE userbuffers, AsyncTP)
    pp_balanced: int = 0  # 1: the embedding and the loss each take a layer's place in the pipeline split

    def __post_init__(self):
        if isinstance(self.checkpointing, bool):  # older tables and scenarios: true / false
            object.__setattr__(self, "checkpointing", "full" if self.checkpointing else "none")
        _one_of("framework", self.framework, FRAMEWORKS)
        _one_of("offload", self.offload, OFFLOADS)
        _one_of("checkpointing", self.checkpointing, CHECKPOINTING)
        _one_of("stack", self.stack, STACKS)
        _one_of("precision", self.precision, PRECISIONS)
        _one_of("sharding", self.sharding, SHARDINGS)
        _one_of("attention_kernel", self.attention_kernel, ATTENTION_KERNELS)
        if self.shard_gpus < 0 or (self.shard_gpus and self.sharding != "hybrid"):
            raise UsageError("--shard-gpus is the group of hybrid sharding: give it with --sharding hybrid (>= 1)")
        if self.sharding == "hybrid" and self.framework != "fsdp":
            raise UsageError("hybrid sharding (HSDP) is modelled for PyTorch FSDP: set the framework to fsdp")
        self._check_layout()
        if self.framework != "deepspeed" and self.zeropp:
            raise UsageError(
                "ZeRO++ (qwz/hpz/qgz) is a DeepSpeed feature: set the framework to deepspeed, or drop ZeRO++"
            )

    def _check_layout(self) -> None:
        for name in LAYOUT[:-1]:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise UsageError(f"--{name} must be a whole number >= 1, got {value!r}")
        object.__setattr__(self, "pp_balanced", int(bool(self.pp_balanced)))
        if self.vp > 1 and self.pp == 1:
            raise UsageError("--vp (virtual stages per pipeline rank) needs --pp >= 2")
        if self.pp_balanced and self.pp == 1:
            raise UsageError("pp_balanced (--pp-balanced: the embedding and loss as pipeline stages) needs pp >= 2")
        if self.sharding in ("zero1", "none") and self.framework != "megatron":
            raise UsageError(
                f"sharding {self.sharding} is Megatron's (distributed optimizer / DDP): set the framework to megatron"
            )
        if self.sharding == "zero2" and self.framework == "deepspeed":
            raise UsageError(
                "sharding zero2 is modelled for fsdp (SHARD_GRAD_OP) and megatron (Megatron-FSDP optim_grads); "
                "DeepSpeed is modelled as ZeRO-3: set the framework to fsdp or megatron"
            )
        if self.model_parallel > 1 and self.framework == "deepspeed":
            raise UsageError(
                "DeepSpeed ZeRO-3 is modelled as data parallelism only: for tensor, pipeline, context or expert "
                "parallelism set the framework to megatron (Megatron-LM / NeMo) or fsdp (torchtitan)"
            )
        if self.model_parallel > 1 and self.offload != "none":
            raise UsageError("optimizer offload is modelled for data parallelism only: drop --offload or the layout")
        if self.sharding == "hybrid" and self.model_parallel > 1:
            raise UsageError("hybrid sharding is modelled without tensor/pipeline/context/expert parallelism")

    @property
    def model_parallel(self) -> int:
        """GPUs one model copy is split over beside data parallelism (tp x pp x cp) times ep > 1."""
        return self.tp * self.pp * self.cp * self.ep

    def data_parallel(self, gpus: int) -> int:
        """dp = gpus / (tp x pp x cp), the one check of gpus = tp x pp x cp x dp (EP within dp x cp x tp, as
        Megatron with expert tensor parallelism 1)."""
        split = self.tp * self.pp * self.cp
        if gpus % split:
            raise UsageError(
                f"{gpus} GPUs do not split into tp {self.tp} x pp {self.pp} x cp {self.cp} = {split}: give a GPU "
                "count that is a multiple, or another layout"
            )
        dp = gpus // split
        if (dp * self.cp * self.tp) % self.ep:
            raise UsageError(
                f"ep {self.ep} must divide dp x cp x tp = {dp * self.cp * self.tp} (experts spread over the "
                "data-, context- and tensor-parallel ranks)"
            )
        return dp

    @property
    def low_precision(self) -> bool:
        return self.precision in LOW_PRECISIONS

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
    def of_fields(cls, source, **given) -> Parallelism:
        """From any object with attributes named as this class's fields (a scenario's workload section, a
        measurement row): each field it has, else the default; `given` overrides. One copy, so a new field
        reaches every builder."""
        present = {f.name: getattr(source, f.name) for f in dataclasses.fields(cls) if hasattr(source, f.name)}
        present["shard_gpus"] = present.get("shard_gpus") or 0  # None (not given): the scale-up domain
        return cls(**(present | given))

    @classmethod
    def of_workload(cls, workload) -> Parallelism:
        """A scenario's or fleet job's workload section (planner.inputs.scenario.Workload): gradients are
        reduced in grad_dtype, by default the training precision (bf16 for fp8 and fp4 training)."""
        grad = workload.grad_dtype or (workload.precision if workload.precision in GRAD_BYTES else "bf16")
        layout = {k: getattr(workload, k, None) or LAYOUT_DEFAULTS[k] for k in LAYOUT}
        # checkpointing "search": each candidate takes its own mode (tables.buy.layouts); full until then
        recompute = {"checkpointing": "full"} if getattr(workload, "checkpointing", None) == "search" else {}
        sharding = default_sharding(workload)
        return cls.of_fields(workload, grad_bytes=GRAD_BYTES[grad], sharding=sharding, **layout, **recompute)


def default_sharding(source) -> str:
    """The sharding given, else full (ZeRO-3 / FSDP), or Megatron's distributed optimizer with megatron."""
    given = getattr(source, "sharding", None)
    return given or ("zero1" if getattr(source, "framework", "") == "megatron" else "full")


def precision_problem(gpu, precision: str) -> str:
    """Why `gpu` (a catalog GpuRow) cannot train at `precision` ("" when it can): the low-precision GEMMs run at
    the GPU's own fp8 / fp4 tensor-core peak, and a GPU row without one has no such units (V100, A100) or no
    published figure."""
    if precision not in LOW_PRECISIONS:
        return ""
    need, peak = ("fp4", gpu.peak_fp4_tflops) if precision == "fp4" else ("fp8", gpu.peak_fp8_tflops)
    if peak is not None:
        return ""
    return (
        f"{gpu.name} has no {need} tensor-core peak (gpus.csv peak_{need}_tflops is empty), so it cannot train at "
        f"precision {precision}; use bf16, or a GPU with {need} (Hopper or later for fp8, Blackwell for fp4)"
    )


def _one_of(what: str, value: str, allowed) -> None:
    if value not in allowed:
        raise UsageError(f"--{what} {value!r} is not one of {', '.join(allowed)}")
