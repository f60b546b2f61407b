"""What a user asks: the plan scenario (scenario.py) and the fleet file (fleet.py), validated, with errors that
name the field and the fix.
"""
