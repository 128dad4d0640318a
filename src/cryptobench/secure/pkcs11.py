"""Placeholder: the pkcs11 engine's provisioning lands with its engine."""
from ..errors import UsageError


def provision():
    raise UsageError("pkcs11 engine: not built yet")
