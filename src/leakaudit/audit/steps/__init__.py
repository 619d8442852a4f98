"""The audit's analyses: each step reads the prepared inputs and returns its checks (planned by ``audit/plan.py``)."""
