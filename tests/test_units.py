"""One parser of numbers with units (core/units.py): --device's clock= and `model`'s options read
'8mHz' alike, as 8 MHz."""
import pytest

from conftest import cli
from cryptobench.core.units import parse_hz, parse_quantity
from cryptobench.targets.mcu.sim.condition import parse_hz as device_clock


@pytest.mark.parametrize("text, hz", [("8MHz", 8e6), ("8 mhz", 8e6), ("8mHz", 8e6), ("800kHz", 8e5),
                                      ("32768Hz", 32768), ("48000000", 48e6), ("1.5MHz", 1.5e6), ("300e6", 3e8),
                                      ("1GHz", 1e9), ("8k", 8e3)])
def test_frequencies_read_alike_everywhere(text, hz):
    assert parse_hz(text) == hz
    assert parse_quantity(text) == hz or not text.lower().endswith("hz")
    if hz <= 1e9:
        assert device_clock(text, "stm32f030:clock=" + text) == hz


@pytest.mark.parametrize("text, value", [("18mW", 0.018), ("18MW", 18e6), ("48.89ns", 48.89e-9), ("9.6G", 9.6e9),
                                         ("9.6Gbps", 9.6e9), ("3.6Gb/s", 3.6e9), ("2uA", 2e-6), ("0.5", 0.5)])
def test_other_units_keep_milli_and_mega_apart(text, value):
    assert parse_quantity(text) == pytest.approx(value)


@pytest.mark.parametrize("text, unit, want", [("fast", None, "is not a number"), ("5x", None, "unit 'x' is not"),
                                              ("8W", "Hz", "unit 'W' is not Hz"), ("1e999", None, "not a finite"),
                                              ("8uHz", "Hz", "is not a frequency"), ("", None, "is not a number")])
def test_bad_numbers_say_what_was_expected(text, unit, want):
    with pytest.raises(ValueError, match=want):
        parse_quantity(text, unit)


def test_model_clock_reads_m_before_hz_as_mega():
    args = ["model", "accelerator", "--latency-cycles", "14", "--block-bits", "128", "--dma-mm2s", "9.6G",
            "--dma-s2mm", "3.6G", "--power", "18mW"]
    upper = cli(*args, "--clock", "300MHz")
    lower = cli(*args, "--clock", "300mhz")
    assert upper.returncode == lower.returncode == 0, upper.stderr + lower.stderr
    assert upper.stdout == lower.stdout and "300 MHz" in upper.stdout
