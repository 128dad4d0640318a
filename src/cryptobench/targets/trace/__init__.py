"""The trace target: energy recorded by a power analyzer (formats/, trace.py), cut into windows at
the marker's edges and integrated (segment.py, importer.py), live instruments over SCPI
(live_n6705.py, live_otii.py), synthetic traces for tests (synth.py), and the target that yields
an imported trace's cells (target.py)."""
