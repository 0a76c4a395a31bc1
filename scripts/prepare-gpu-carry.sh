#!/usr/bin/env bash
# Fills .carry-gpu/ (ignored by git) with what the GPU machine lacks for the full suite:
# Debian's apbs-data (/usr/share/apbs) and the pure-Python GridDataFormats and mrcfile.
# Name .carry-gpu in the device call's `carry`; scripts/gpu-check.sh installs them there.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .carry-gpu
mkdir -p .carry-gpu/pylib
cp -r /usr/share/apbs .carry-gpu/apbs
cp -r /usr/lib/python3/dist-packages/gridData /usr/lib/python3/dist-packages/mrcfile .carry-gpu/pylib/
du -sh .carry-gpu
