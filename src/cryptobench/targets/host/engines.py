"""Host engines: which harness engine each runs, in which environment, and whether it is usable.

`openssl-hw` and `openssl-sw` are the same library in two processes: the second one with the CPU
crypto extensions masked through OpenSSL's capability variable, and the mask is checked to have
taken effect (from OpenSSL's own CPUINFO report) before any number is kept.
"""
from __future__ import annotations

import platform
import re
from dataclasses import dataclass, field

from ...core.errors import HarnessError, UsageError
from .harness import HarnessProcess, harness_path
from .secure import close_provision, open_provision

# x86-64: OPENSSL_ia32cap="~A:~B" clears bits of the two 64-bit capability words.
# Word 0 = CPUID.1:EDX | ECX<<32; word 1 = CPUID.7:EBX | ECX<<32 (OpenSSL's layout).
IA32_MASKED = {
    "AES-NI": (0, 57),
    "PCLMULQDQ": (0, 33),
    "SHA-NI": (1, 29),
    "VAES": (1, 32 + 9),
    "VPCLMULQDQ": (1, 32 + 10),
}


# `openssl-portable` masks these too: the vector units and bit-manipulation instructions OpenSSL
# picks faster paths with (SSSE3 ChaCha20/SHA/vpaes, AVX/AVX2/AVX-512 Poly1305 and SHA, BMI2/ADX
# bignum), so that what remains is the portable code a microcontroller library resembles.
IA32_SIMD_MASKED = {
    "SSSE3": (0, 32 + 9),
    "SSE4.1": (0, 32 + 19),
    "FMA": (0, 32 + 12),
    "AVX": (0, 32 + 28),
    "BMI1": (1, 3),
    "AVX2": (1, 5),
    "BMI2": (1, 8),
    "AVX512F": (1, 16),
    "AVX512DQ": (1, 17),
    "ADX": (1, 19),
    "AVX512IFMA": (1, 21),
    "AVX512BW": (1, 30),
    "AVX512VL": (1, 31),
    "AVX512VBMI": (1, 32 + 1),
}
IA32_PORTABLE_MASKED = {**IA32_MASKED, **IA32_SIMD_MASKED}


def ia32_mask_value(mask: dict | None = None) -> str:
    words = [0, 0]
    for word, bit in (mask or IA32_MASKED).values():
        words[word] |= 1 << bit
    return f"~0x{words[0]:x}:~0x{words[1]:x}"


# arm64: OPENSSL_armcap is a plain bit set; 0 leaves neither NEON nor the crypto extensions.
ARMCAP_MASK = "0"


@dataclass
class Engine:
    name: str
    harness_engine: str
    description: str
    env: dict = field(default_factory=dict)
    masks_extensions: bool = False
    masked: dict = field(default_factory=dict)   # name -> (word, bit) of OPENSSL_ia32cap it clears
    default: bool = True            # part of "every usable host engine" when no --engine is given
    provision: str = ""             # "module:function" returning a Provision (secure/__init__.py): the
                                    # token or TPM the engine talks to, started for the run if needed
    runtime_env: dict = field(default_factory=dict)   # set while a Provision is open
    check_config: str = ""          # "module:function" raising UsageError (exit 2, naming the variable to
                                    # set) when the user configured a device only in part; starts nothing
    binary: str = ""                # the harness binary beside cbh this engine runs in ("" = cbh itself)
    portable_build: bool = False    # a library built here without its CPU-specific code: checked from
                                    # the configuration the harness reports (PORTABLE_CONFIG)
    build_hint: str = "make -C harness/host portable builds it from the vendored Mbed TLS source"
    dispatch: bool = False          # the harness reports per op which implementation served the calls
                                    # ("dispatch" in its facts: builtin or a PSA driver): see served_by()

    def harness(self):
        return harness_path().with_name(self.binary) if self.binary else harness_path()

    def start(self) -> HarnessProcess:
        if self.binary and not self.harness().exists():
            raise HarnessError(f"{self.name}: its harness {self.harness()} is not built ({self.build_hint}; "
                               f"./setup.sh fetches that)")
        return HarnessProcess(env_overrides={**self.env, **self.runtime_env}, path=self.harness())


# What `mbedtls-portable` is built without (harness/host/mbedtls_portable_config.h), by the name of
# the Mbed TLS option the harness reports as off: the x86 code a microcontroller build lacks.
PORTABLE_CONFIG = {
    "MBEDTLS_AESNI_C": "AES-NI",
    "MBEDTLS_PADLOCK_C": "VIA PadLock",
    "MBEDTLS_HAVE_ASM": "inline-assembly bignum",
}


def _openssl_sw_env(mask: dict | None = None) -> dict:
    arch = platform.machine()
    if arch in ("x86_64", "AMD64", "i686"):
        return {"OPENSSL_ia32cap": ia32_mask_value(mask), "OPENSSL_armcap": None}
    if arch in ("aarch64", "arm64"):
        return {"OPENSSL_armcap": ARMCAP_MASK, "OPENSSL_ia32cap": None}
    return {}


ENGINES: dict[str, Engine] = {e.name: e for e in [
    Engine("openssl-hw", "openssl", "OpenSSL libcrypto with the CPU's crypto extensions (AES-NI, "
           "PCLMULQDQ, SHA-NI, VAES / ARMv8 Crypto) as detected", env={"OPENSSL_ia32cap": None,
                                                                    "OPENSSL_armcap": None}),
    Engine("openssl-sw", "openssl", "OpenSSL libcrypto with the CPU's crypto extensions masked (AES-NI, "
           "PCLMULQDQ, SHA-NI, VAES, VPCLMULQDQ; vector paths such as AVX2 ChaCha20 stay)", env=_openssl_sw_env(),
           masks_extensions=True, masked=IA32_MASKED),
    Engine("openssl-portable", "openssl", "OpenSSL libcrypto with crypto extensions, vector units (SSSE3, AVX, "
           "AVX2, AVX-512) and BMI/ADX masked: the portable code paths, the software the published studies "
           "compare against",
           env=_openssl_sw_env(IA32_PORTABLE_MASKED), masks_extensions=True, masked=IA32_PORTABLE_MASKED,
           default=False),
    Engine("mbedtls", "mbedtls", "Mbed TLS 2.28 (system libmbedcrypto; uses AES-NI on x86-64 where "
           "its runtime check finds it)"),
    Engine("mbedtls-portable", "mbedtls", "Mbed TLS 2.28 built from source as portable C (no AES-NI, no "
           "PadLock, no assembly bignum, no auto-vectorisation): the software Mbed TLS of the published "
           "studies",
           binary="cbh-mbedtls-portable", portable_build=True, default=False),
    Engine("psa", "psa", "the PSA Crypto API of Mbed TLS 3.5.1 built from source (psa-crypto-sys 0.13.0) as "
           "portable C with the firmware's psa recipe config: builtin software; with rekey=1 the key is "
           "imported in every operation (docs/psa.md)", binary="cbh-psa", default=False, dispatch=True,
           build_hint="make -C harness/host psa builds it from the vendored Mbed TLS 3.5.1 source"),
    Engine("psa-testdriver", "psa", "the psa engine with Mbed TLS's transparent PSA test driver "
           "(tests/src/drivers, PSA_CRYPTO_DRIVER_TEST) standing in for an accelerator: every call is "
           "dispatched to the driver, which wraps the builtin code (docs/psa.md)",
           binary="cbh-psa-testdriver", default=False, dispatch=True,
           build_hint="make -C harness/host psa builds it from the vendored Mbed TLS 3.5.1 source"),
    Engine("pqclean", "pqclean", "ML-KEM (FIPS 203) and ML-DSA (FIPS 204) from PQClean's portable clean C sources, "
           "vendored by the pqcrypto-mlkem / pqcrypto-mldsa 0.1.0 crates, built here (docs/pqc.md)",
           binary="cbh-pqclean", default=False,
           build_hint="make -C harness/host pqclean builds it from the vendored PQClean sources"),
    Engine("libsodium", "libsodium", "libsodium (system library)"),
    Engine("system", "system", "the OS and CPU entropy sources: getrandom(2), RDRAND, RDSEED, /dev/hwrng"),
    Engine("pkcs11", "pkcs11", "a PKCS#11 token: a secure element, HSM or smart card through its vendor's "
           "module (CRYPTOBENCH_PKCS11_MODULE); a throw-away SoftHSM2 token when none is configured",
           default=False, provision="cryptobench.targets.host.secure.pkcs11:provision",
           check_config="cryptobench.targets.host.secure.pkcs11:check_config"),
    Engine("tpm", "tpm", "a TPM 2.0 through tpm2-tss (CRYPTOBENCH_TPM_TCTI, or /dev/tpmrm0); a throw-away "
           "swtpm when none is configured", default=False, provision="cryptobench.targets.host.secure.tpm:provision"),
]}

DEFAULT_ENGINES = [n for n, e in ENGINES.items() if e.default]


def get_engine(name: str, where: str = "--engine") -> Engine:
    """The engine named on the command line; a device configured only in part is a usage error."""
    try:
        engine = ENGINES[name]
    except KeyError:
        raise UsageError(f"{where}: unknown engine '{name}'; valid: {', '.join(ENGINES)}")
    if engine.check_config:
        import importlib
        module, _, func = engine.check_config.partition(":")
        getattr(importlib.import_module(module), func)()
    return engine


def parse_ia32cap(cpuinfo: str) -> tuple[int, int] | None:
    m = re.search(r"OPENSSL_ia32cap=0x([0-9a-fA-F]+):0x([0-9a-fA-F]+)", cpuinfo or "")
    return (int(m.group(1), 16), int(m.group(2), 16)) if m else None


def extension_state(cpuinfo: str, mask: dict | None = None) -> dict[str, bool] | None:
    """Which masked-able extensions OpenSSL reports as enabled, from its CPUINFO string."""
    caps = parse_ia32cap(cpuinfo)
    if caps is None:
        return None
    return {name: bool(caps[word] >> bit & 1) for name, (word, bit) in (mask or IA32_MASKED).items()}


def check_engine(engine: Engine, proc: HarnessProcess) -> tuple[dict, str | None]:
    """Engine facts for the run record, and a reason it must not be used (None when usable)."""
    info = proc.engine_info(engine.harness_engine)
    info = {k: v for k, v in info.items() if k != "t"}
    if info.get("unusable"):         # the engine's own one-line reason (tpm: the TPM cannot be reached)
        return info, str(info["unusable"])
    if engine.harness_engine == "openssl":
        state = extension_state(info.get("cpuinfo", ""), engine.masked or IA32_MASKED)
        if state is not None:
            info["extensions_enabled"] = [k for k, v in state.items() if v]
            if engine.masks_extensions:
                info["mask"] = engine.env.get("OPENSSL_ia32cap")
                info["extensions_masked"] = list(engine.masked or IA32_MASKED)
                still_on = [k for k, v in state.items() if v]
                info["mask_verified"] = not still_on
                if still_on:
                    return info, ("OPENSSL_ia32cap mask did not take effect: OpenSSL still reports "
                                  + ", ".join(still_on))
        elif engine.masks_extensions and platform.machine() in ("aarch64", "arm64"):
            info["mask"] = f"OPENSSL_armcap={ARMCAP_MASK}"
            info["mask_verified"] = "armcap" in info.get("cpuinfo", "").lower()
    if engine.portable_build:
        config = info.get("config") or {}
        still_on = [k for k in PORTABLE_CONFIG if config.get(k) != 0]
        info["extensions_masked"] = [f"{label} ({k})" for k, label in PORTABLE_CONFIG.items()]
        info["mask"] = ("compiled out: " + ", ".join(PORTABLE_CONFIG)
                        + (f"; library cflags {info['library_cflags']}" if info.get("library_cflags") else ""))
        info["mask_verified"] = not still_on
        if still_on:
            return info, f"not a portable build: the harness reports {', '.join(still_on)} on"
    return info, None


def served_by(engine: Engine, proc: HarnessProcess, op: str) -> str | None:
    """Which implementation served the calls of `op` so far in this harness process: "builtin",
    "driver: NAME" or "mixed", from the dispatch counts the engine reports; None for engines that
    do not report them or before any call."""
    if not engine.dispatch:
        return None
    got = (proc.engine_info(engine.harness_engine).get("dispatch") or {}).get(op)
    return got.get("served_by") if got else None


def probe_engines(names: list[str]) -> dict[str, tuple[dict, str | None]]:
    """Start each engine's harness briefly: its facts and why it is unusable (None if usable)."""
    out = {}
    if not harness_path().exists():
        return {n: ({}, f"host harness not built ({harness_path()}); run ./setup.sh") for n in names}
    for name in names:
        engine = ENGINES[name]
        prov = None
        try:
            prov = open_provision(engine)
            with engine.start() as proc:
                info, why = check_engine(engine, proc)
                out[name] = ({**info, **(prov.facts if prov else {})}, why)
        except (HarnessError, UsageError) as exc:
            out[name] = ({}, str(exc))
        finally:
            close_provision(engine, prov)
    return out
