#!/usr/bin/env bash
# The demo: installs and builds only what mapping a PQR file needs (scripts/setup-build.sh with
# the demo's preset: the build's Debian packages and the dcs binary without the trajectory
# readers; demo-cuda where a GPU and nvcc are present, else demo-cpu), then computes the
# potential map of the bundled molecule (data/2lzt.pqr, 128^3 grid, screened by 0.15 M salt in
# water as a picture should be; HDF5 + OpenDX into out/). Prints where the binary is.
# scripts/setup.sh (the test command) builds the whole program, trajectories included.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=demo-cpu
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 &&
   { command -v nvcc >/dev/null || [[ -x /usr/local/cuda/bin/nvcc ]]; }; then
  preset=demo-cuda
fi
preset=$(bash scripts/setup-build.sh "$preset" | tail -n 1)
mkdir -p out
echo "run-demo: dcs is build/$preset/bin/dcs (atom files; for trajectories build the whole program: bash scripts/setup-build.sh)" >&2
exec "build/$preset/bin/dcs" --atoms data/2lzt.pqr --grid 128 --ionic-strength 0.15 --output-dir out --dx \
  --validate --force "$@"
