"""The microcontroller target: firmware built per library recipe, run on QEMU, a board, the
cycle-approximate simulator or labgrid places, and checked cell by cell.

target.py: McuTarget, the cell cycle (build, run, check on the host, store); transports.py: one
Transport per kind of target (`run(image) -> FirmwareReport`, functional-only, clock, what it adds
to the conditions); watchdog.py: the console loop QEMU and boards share; sim_reading.py: the
simulator's exact cycles, instructions, marker windows and modeled energy. The target's record
is one of core/target_specs.py's (QemuSpec, BoardSpec, SimSpec, LabSpec); runner/mcu_plan.py
turns the options into it."""
