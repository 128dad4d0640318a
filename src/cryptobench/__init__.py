"""cryptobench: what a cryptographic operation costs, where it could run."""

__version__ = "0.1.0"
