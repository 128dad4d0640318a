#!/usr/bin/env bash
# Set up everything on a fresh Debian 12 machine and run the default benchmark:
#   system packages (apt-get), the Python environment (.venv), the native host harness (build/host/cbh),
#   the embedded library sources (fetched as crates into .cache/crates) for the firmware targets.
# Usage: ./setup.sh            set up, then `cryptobench run` (the default suite)
#        ./setup.sh --no-run   set up only
set -euo pipefail
cd "$(dirname "$0")"

run_default=1
[ "${1:-}" = "--no-run" ] && run_default=0

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# 1. System packages: compilers, the crypto libraries the harness links, Python's venv, cargo
#    (only to fetch the mbedTLS 2.28 source for EC-JPAKE, which Debian's libmbedcrypto leaves out).
#    The Cortex-M cross compiler with newlib, and QEMU, for the microcontroller targets.
#    SoftHSM2 (a PKCS#11 token in software) and swtpm (a software TPM 2.0) with tpm2-tss, which the
#    pkcs11 and tpm engines start for themselves when no real secure element or TPM is configured.
#    Chromium (headless) for the test that opens the HTML report (`cryptobench report`).
#    PostgreSQL (server programs), which the shared-store tests start in a temporary directory;
#    ser2net, which a labgrid exporter runs to serve a board's serial port (the lab tests' too).
packages=(build-essential pkg-config make git python3 python3-venv python3-pip
          libssl-dev openssl libmbedtls-dev libsodium-dev
          gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm
          softhsm2 libp11-kit-dev swtpm swtpm-tools libtss2-dev
          chromium fonts-dejavu-core postgresql ser2net)
command -v cargo >/dev/null 2>&1 || packages+=(cargo)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
    echo "setup: installing ${missing[*]}"
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# 2. Python environment
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e '.[all,test]'       # the extras (pyproject.toml; boards aside: pyOCD), test tools

# 3. Native host harness
make -s -C harness/host BUILD="$PWD/build/host"

# 4. The simulator's native part, against the unicorn package just installed
make -s -C harness/sim BUILD="$PWD/build/sim" \
    UNICORN="$(.venv/bin/python -c 'import os, unicorn; print(os.path.dirname(unicorn.__file__))')"

# 5. Embedded library sources for the firmware (built on first use, per core and option level)
for crate in "mbedtls-sys-auto 2.28.15" "bearssl-sys 0.0.4" "monocypher-sys 4.0.2" "psa-crypto-sys 0.13.0"; do
    bash scripts/fetch_crate.sh $crate .cache/crates >/dev/null 2>&1 || echo "setup: could not fetch crate $crate (firmware targets will say so)"
done

echo "setup: done. cryptobench is .venv/bin/cryptobench"
if [ "$run_default" = 1 ]; then
    .venv/bin/cryptobench run
fi
