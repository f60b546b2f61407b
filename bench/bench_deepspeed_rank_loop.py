"""Host time per rank and tensor of DeepSpeed ZeRO-3's Python loops over the world size, the prior of
planner.assumptions.model.RANK_OVERHEAD_PRIOR["deepspeed"] (docs/model.md section 2).

Around each collective ZeRO-3 builds one view per rank and tensor, then concatenates them:
- after an all-gather of several parameters, AllGatherCoalescedHandle.wait
  (deepspeed/runtime/zero/partition_parameters.py): per parameter, per rank, narrow(); then torch.cat;
- before a gradient reduce-scatter, reduce_scatter_coalesced (deepspeed/runtime/comm/coalesced_collectives.py):
  per tensor, per rank, a slice; then the views interleaved by rank and torch.cat.
Both loops are re-created here as DeepSpeed writes them and timed on tiny CPU tensors, so what is measured is
Python and the PyTorch dispatcher, not copies (on a GPU, cat is one kernel launch; record_stream, one more
call per view, is not counted). Needs PyTorch, which planner does not depend on:

    pip install torch && python bench/bench_deepspeed_rank_loop.py
"""

from __future__ import annotations

import math
import sys
import time
from functools import partial


def gather_wait(torch, partitions, numels: list[int], world: int) -> None:
    offset = 0
    for numel in numels:
        part = math.ceil(numel / world)
        views = [partitions[r].narrow(0, offset, min(numel - r * part, part)) for r in range(world) if r * part < numel]
        torch.cat(views)
        offset += part


def reduce_scatter_views(torch, tensors, world: int) -> None:
    per_tensor = []
    for tensor in tensors:
        flat, chunk = tensor.view(-1), math.ceil(tensor.numel() / world)
        per_tensor.append([flat[r * chunk : r * chunk + chunk] for r in range(world)])
    torch.cat([views[r] for r in range(world) for views in per_tensor])


def per_rank_us(call, world: int, repeats: int = 20) -> float:
    call()  # warm up
    start = time.perf_counter()
    for _ in range(repeats):
        call()
    return (time.perf_counter() - start) / repeats / world * 1e6


def main() -> None:
    try:
        import torch
    except ImportError:
        sys.exit("needs PyTorch: pip install torch (planner itself does not use it)")
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}; us per rank, and per rank and tensor")
    for world in (256, 1024):
        for count in (1, 2, 4, 20):
            numels = [4 * world if i % 2 == 0 else 2 * world for i in range(count)]  # a few elements per rank
            size = sum(math.ceil(n / world) for n in numels)
            flat = torch.zeros(size * world)
            partitions = [flat.narrow(0, size * r, size) for r in range(world)]
            tensors = [torch.zeros(n) for n in numels]
            gather = per_rank_us(partial(gather_wait, torch, partitions, numels, world), world)
            reduce = per_rank_us(partial(reduce_scatter_views, torch, tensors, world), world)
            rs = f"reduce-scatter {reduce:6.1f} ({reduce / count:4.1f} per tensor)"
            print(f"world {world:5d}, {count:2d} tensors: {rs}, all-gather wait {gather:6.1f} ({gather / count:4.1f})")


if __name__ == "__main__":
    main()
