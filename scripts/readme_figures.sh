#!/usr/bin/env bash
# Make the README's figures from real runs on this machine: one figure of each kind, copied from a
# `cryptobench report` into docs/figures/. Takes a few minutes. Usage: scripts/readme_figures.sh
set -euo pipefail
cd "$(dirname "$0")/.."
CB=.venv/bin/cryptobench
WORK=build/readme
DB=$WORK/runs.sqlite
rm -rf "$WORK" && mkdir -p "$WORK"

echo "1/5 host sweep over payload lengths (duration, crossover)"
$CB run --db $DB --quiet --label "README: AEAD and hash sweep" --op aes-gcm-encrypt --op sha256 \
    --op chacha20-poly1305-encrypt --param bytes=16,64,256,1024,4096,16384 \
    --engine openssl-hw --engine openssl-sw --engine mbedtls --engine libsodium \
    --baseline openssl-sw --repeat 10 --min-time 0.005 --format md > $WORK/run1.md
echo "2/5 ZHAW set: on-chip vs SoftHSM2 (PKCS#11) and swtpm (relative heat-map)"
$CB run --db $DB --quiet --label "README: ZHAW set" --suite zhaw-iot --engine openssl-hw --engine openssl-sw \
    --engine mbedtls --engine pkcs11 --engine tpm --repeat 10 --format md > $WORK/run2.md
echo "3/5 Pisa set over 1 and 2 cores (scaling)"
$CB run --db $DB --quiet --label "README: scaling" --suite pisa-a53 --parallel 1,2 --format md > $WORK/run3.md
echo "4/5 simulated Cortex-M0 (STM32F030 profile) sweep (cycles; modeled energy)"
$CB run --db $DB --quiet --label "README: Cortex-M0 sweep" --target sim:cortex-m0 --device stm32f030 \
    --op chacha20-poly1305-encrypt --op aes-gcm-encrypt --param bytes=0,16,64,128,256,512 --param aad_bytes=16 --repeat 3 \
    --format md > $WORK/run4.md
echo "5/5 a two-supply trace (MCU 3.3 V + secure element 1.8 V), synthetic: no instrument on this machine"
.venv/bin/python - "$WORK/trace.csv" > $WORK/trace-options.txt <<'EOF'
import sys
from cryptobench.targets.trace import synth
plan = synth.PulsePlan(n=50, width_s=4e-3, gap_s=2e-3, high_a=0.011, low_a=0.0025, dt=1e-5,
                       second=synth.Supply(name="se", high_a=0.018, low_a=0.0003, v=1.8))
for k, v in synth.write_generic_csv(sys.argv[1], plan).items():
    print(f"--option {k}={v}")
EOF
# shellcheck disable=SC2046
$CB energy import $WORK/trace.csv --db $DB --format generic-csv $(cat $WORK/trace-options.txt) \
    --op ecdsa-sign --engine "se-on-i2c (synthetic trace)" > $WORK/run5.txt

$CB report 1 2 3 4 5 --db $DB --out $WORK/report --quiet --reference cifra-aead --reference ti-cc26x2
mkdir -p docs/figures
.venv/bin/python - "$WORK/report/figures" docs/figures <<'EOF'
import shutil, sys
from pathlib import Path
src, dst = Path(sys.argv[1]), Path(sys.argv[2])
want = {"duration": "duration-aes-gcm-encrypt-r1", "crossover": "crossover-aes-gcm-encrypt-r1",
        "heatmap": "heatmap-time-r2", "scaling": "scaling-", "cycles": "cycles-chacha20-poly1305-encrypt-r4",
        "energy": "energy-chacha20-poly1305-encrypt-r4", "energy-split": "energy-split-"}
names = sorted(p.stem for p in src.glob("*.png"))
for kind, prefix in want.items():
    pick = next((n for n in names if n.startswith(prefix)), None) or \
        next((n for n in names if n.startswith(kind + "-") and not (kind == "energy" and n.startswith("energy-split"))), None)
    if pick is None:
        sys.exit(f"readme_figures: no {kind} figure in {src}")
    shutil.copy(src / f"{pick}.png", dst / f"{kind}.png")
    print(f"docs/figures/{kind}.png  <- {pick}")
EOF
