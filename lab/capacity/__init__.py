"""capacity: make capacity, what the fix buys in RT load rate (lab/capacity/README.md)."""
