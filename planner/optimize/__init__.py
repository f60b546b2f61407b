"""The optimisation layer: one model per question, built PyPSA-style (a `create_model` that reads as a table
of contents of `define_*` calls, one per constraint family), solved through one solver convention
(solver.py: a typed result with status, gap and time; a status that is read, never assumed).

- buy.py    the purchase: one configuration and its node count, fabric sized by constraints
- rent.py   renting: one offering, its instance count and the split over pricing models
- serve.py  serving: the cheapest machine configuration meeting a latency target
- fleet.py  a portfolio of workloads over several periods (purchases, pools, jobs, cloud burst)
- ranking.py the next-best distinct configurations, read from a priced table (exact where each
            configuration's cost is independent of the others)
"""
