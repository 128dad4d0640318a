"""Turning options into a run: plans (plan.py), the suites that name the studies' plans
(suites.py, suites/), and the Runner that drives a target through a plan and stores every cell
as it finishes (runner.py)."""
