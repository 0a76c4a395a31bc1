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
# libdeflate, which the HDF5 store compresses chunks with (gpu-check.sh unpacks it if missing).
mkdir -p .carry-gpu/debs
(cd .carry-gpu/debs && apt-get download libdeflate-dev libdeflate0 >/dev/null)
du -sh .carry-gpu
