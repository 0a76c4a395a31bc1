#!/usr/bin/env bash
# Set-up and the main job in one command: installs what is missing, builds, and computes the
# potential map of the bundled molecule (data/2lzt.pqr, 128^3 grid, HDF5 + OpenDX into out/).
set -euo pipefail
cd "$(dirname "$0")/.."
preset=$(scripts/setup.sh | tail -n 1)
mkdir -p out
exec "build/$preset/bin/dcs" --atoms data/2lzt.pqr --grid 128 --output-dir out --dx --validate --force "$@"
