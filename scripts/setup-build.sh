#!/usr/bin/env bash
# The minimal set-up: what building the dcs binary needs and nothing more (scripts/run-demo.sh
# runs this alone; scripts/setup.sh runs it after installing everything the tests need).
# Installs the Debian packages of the build (when missing), chemfiles into .deps/
# (scripts/setup-chemfiles.sh: the trajectory readers are part of the binary; not for the demo's
# presets demo-cpu and demo-cuda, which leave them out), configures the
# preset and builds the `dcs` target only; DCS_BUILD_ALL=1 builds every target of the preset.
# Usage: scripts/setup-build.sh [preset]   (default: $DCS_PRESET, else "ci" when nvcc exists,
# else "dev-cpu"). Prints the preset used on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/debian.sh

install_missing_debs setup-build "${dcs_build_packages[@]}"

if [[ -z "${CUDACXX:-}" ]] && ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
preset="${1:-${DCS_PRESET:-}}"
if [[ -z "$preset" ]]; then
  if command -v nvcc >/dev/null; then preset=ci; else preset=dev-cpu; fi
fi
# The demo's presets (demo-cpu, demo-cuda) leave the trajectory readers out: no chemfiles.
[[ "$preset" == demo-* ]] || bash scripts/setup-chemfiles.sh >&2
targets=(--target dcs)
[[ "${DCS_BUILD_ALL:-0}" == 1 ]] && targets=()
cmake --preset "$preset" >&2
cmake --build --preset "$preset" -j "$(nproc)" "${targets[@]}" >&2
echo "$preset"
