"""Where a benchmark runs. A Target (base.py) measures cells and reports conditions; the Runner
(runner/runner.py) owns the run around it. host/: the host's library engines, secure elements and
TPMs; mcu/: firmware on QEMU machines, real boards (mcu/board_link.py) or the simulator (mcu/sim/),
one transport each (mcu/transports.py), and the same firmware on labgrid places, one run spread
over several (mcu/lab/); trace/: the cells of an imported energy trace. select.py: target_for, the one place
that chooses a plan's target; verify.py: the vectors and cross-checks every target's numbers must
pass; power.py: energy from durations and currents.
mcu/boards.py and mcu/boards.toml describe the boards."""
