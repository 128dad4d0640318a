"""Estimators and their intervals (estimate.py, summary.py), significance tests, the machine's
noise floor, adaptive sampling and its convergence, and the figures derived from a cell's samples
(results.py). Pure arithmetic on numbers the targets measured."""
