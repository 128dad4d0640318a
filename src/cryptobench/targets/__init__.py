"""Where a benchmark runs: the host harness, QEMU machines, real boards (and, later, simulators)."""
