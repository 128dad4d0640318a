"""A lab of boards: labgrid places as targets (places.py, qemu_place.py for emulated boards) and
one run's cells spread over several places through leases in the store (leases.py, worker.py).
docs/lab.md is the guide."""
