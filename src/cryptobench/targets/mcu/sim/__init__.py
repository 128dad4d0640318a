"""The cycle-approximate Cortex-M simulator: device profiles (devices.py, devices.toml), the
timing model (timing.py), the executors (executor.py: the protocol; native.py and engine.py: the
C core and Unicorn), image runs (imagerun*.py), semihosting, SysTick and exceptions.
docs/sim-model.md is the model's reference."""
