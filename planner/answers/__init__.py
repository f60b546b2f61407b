"""One module per question a user asks: buy (`planner plan`), rent (`planner cloud`), serve (`planner
inference`), fleet (`planner fleet`, with its readout), predict (`planner predict`). Each builds its table,
solves and returns a typed result; none imports another.
"""
