#!/usr/bin/env bash
# Set-up and the whole test suite in one command (CI runs exactly this). GPU tests skip, saying
# why, where no GPU is present.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=$(scripts/setup.sh | tail -n 1)
ctest --preset "$preset" -j "$(nproc)" "$@"
