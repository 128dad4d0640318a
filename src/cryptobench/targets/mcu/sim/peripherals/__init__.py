"""Timing-annotated models of on-chip crypto peripherals for the simulator: each is register-
compatible with its reference manual, computes exact results, and is busy for the cycles the
manual (or one cited measurement) gives. base.py: what every model is and how a run sees it;
registry.py: the kinds a device profile may list (devices.toml `peripheral_models`);
docs/accelerators.md: what is modelled, the sources and the limits."""
