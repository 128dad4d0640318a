"""Analytic models (provenance: modeled): a DMA-fed accelerator's throughput (the Pisa Cortex-A53
paper's eq. 1), the energy of an offloaded operation with polling vs blocking return behaviour (the TI
CC13x2/CC26x2 report §4), where one engine starts to beat another over payload length, and a battery
view of a duty cycle.
Formulas and sources: docs/models.md."""
from .accelerator import (additional_latency, accelerator_model, fit_setup_per_block, solve_latency,
                          throughput)
from .battery import battery_view, parse_rate
from .crossover import crossover, linear_curve
from .offload import OffloadModel

__all__ = ["additional_latency", "accelerator_model", "fit_setup_per_block", "solve_latency", "throughput",
           "battery_view", "parse_rate", "crossover", "linear_curve", "OffloadModel"]
