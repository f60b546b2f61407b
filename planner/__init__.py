"""planner: optimization-based GPU cluster planner for DeepSpeed ZeRO-3 training."""

__version__ = "0.1.0"
