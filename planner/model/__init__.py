"""The performance model and what it rests on: the parallelism value, the network tiers and the one collective
formula, training throughput and memory, weight streaming and decode capacity for serving, goodput, what
binds a step, the calibration and its fit to the measurement database, and the bandwidth sweep.
"""
