#!/usr/bin/env bash
# The demo: installs and builds only what mapping a PQR file needs (scripts/setup-build.sh: the
# build's Debian packages, chemfiles, the dcs target), then computes the
# potential map of the bundled molecule (data/2lzt.pqr, 128^3 grid, screened by 0.15 M salt in
# water as a picture should be; HDF5 + OpenDX into out/).
set -euo pipefail
cd "$(dirname "$0")/.."
preset=$(bash scripts/setup-build.sh | tail -n 1)
mkdir -p out
exec "build/$preset/bin/dcs" --atoms data/2lzt.pqr --grid 128 --ionic-strength 0.15 --output-dir out --dx \
  --validate --force "$@"
