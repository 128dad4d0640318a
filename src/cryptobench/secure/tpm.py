"""Placeholder: the tpm engine's provisioning lands with its engine."""
from ..errors import UsageError


def provision():
    raise UsageError("tpm engine: not built yet")
