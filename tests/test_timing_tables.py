"""The timing tables of src/cryptobench/targets/mcu/sim/timing.py name only instruction classes the
classifier produces: a misspelt key would never be looked up, and the class it meant would cost
the 1-cycle default without a word."""
import pytest

from cryptobench.targets.mcu.sim import timing as T


@pytest.mark.parametrize("core", sorted(T.TABLES))
def test_every_table_key_is_a_class_the_classifier_produces(core):
    unknown = sorted(set(T.TABLES[core]) - T.table_keys())
    assert not unknown, f"{core}: table keys {unknown} name no instruction class block_cost looks up"


def test_the_keys_cover_the_classes_and_their_derived_forms():
    keys = T.table_keys()
    assert set(T.CLASS_OF.values()) <= keys
    assert {"alu_pc", "ldr_pc", "ldm_pc", "bcond", "bcond_taken", "cbz_taken"} <= keys
    assert "ldr_taken" not in keys and "bcond_pc" not in keys      # forms the classifier never makes


def test_the_armv7m_and_armv8m_tables_cost_every_class():
    # a class absent from a table is "not on that core" (1 cycle, listed in the run's report): on the
    # M3 that is only the FPU and DSP classes; the M4, M7 and M33 have every class
    fp_dsp = {"vfp", "vmov", "vmac", "vdiv", "vldr", "vstr", "vldm", "vstm", "dsp", "dsp_mul"}
    for core in ("cortex-m3", "cortex-m4", "cortex-m7", "cortex-m33"):
        missing = T.table_keys() - {None} - set(T.TABLES[core]) - (fp_dsp if core == "cortex-m3" else set())
        assert not missing, f"{core}: no cost for {sorted(missing)}"
