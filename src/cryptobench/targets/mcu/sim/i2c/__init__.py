"""An I2C bus in the simulator: the bus's timing (bus.py) and the targets on it, secure elements
first (atecc.py). A controller model (a memory-mapped peripheral) drives the bus; a target sees
the bus's events with their times in seconds since the run's start."""
