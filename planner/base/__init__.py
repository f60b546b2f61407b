"""The ground floor: errors, limits on every input, units and quantities, bounded file reading and atomic
outputs, counted YAML/JSON, and where the packaged data lives. Imports nothing else of planner.
"""
