"""The host target: the native harness (harness.py), its library engines (engines.py), secure
elements and TPMs (secure/), energy meters (meters/), the scaling strategy over cores
(parallel.py), and the target that measures them (target.py)."""
