"""The candidate tables each question's optimiser reads: buy (hardware designs priced at their node bounds),
rent (cloud offerings, their terms and options), serve (machine configurations), fleet (offers, pools,
runs and serving rates).
"""
