"""Independent references the optimisers are checked against: each question solved by enumeration from the
catalog rows and the model, without the candidate tables or MILPs it checks (buy.py, rent.py, fleet.py)."""
