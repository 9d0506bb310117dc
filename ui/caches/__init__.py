"""One memory budget for every cache of the server (budget.py), and the cached models and runs
(cache.py)."""
