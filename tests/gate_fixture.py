"""A simulated run's conditions and figures for the gate: what tests/test_gate.py builds its stored
runs from, and bench/untrusted_cases_gate.py the documents it mutates."""

SIM = {"kind": "sim", "board": "nucleo-f411re", "cpu": "m4", "opt": "Os", "core": "cortex-m4", "device": "stm32f411",
       "clock_hz": 100_000_000, "libraries": ["mbedtls"],
       "simulator": {"model": "cbsim-trm", "model_version": 3, "flash_ws": 3, "prefetch": True}}
BUILD = {"compiler": "arm-none-eabi-gcc 13.2.1", "cflags": "-mcpu=cortex-m4 -Os", "ldflags": "-nostartfiles",
         "library": "mbedtls", "library_version": "3.6.0", "library_source": "/src/mbedtls",
         "recipe": "/x/recipes/mbedtls.toml", "counter": "dwt"}
PROFILE = [{"function": "mbedtls_internal_sha256_process", "cycles": 9000, "instructions": 7000, "calls": 2},
           {"function": "mbedtls_sha256_update", "cycles": 600, "instructions": 450, "calls": 1},
           {"function": "memcpy", "cycles": 400, "instructions": 300, "calls": 3}]
FUNCS = {"mbedtls_internal_sha256_process": 1800, "mbedtls_sha256_update": 220, "sha256_run": 40}

