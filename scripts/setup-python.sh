#!/usr/bin/env bash
# The Python package's venv (tests/python, CTest label "python"): .venv-py/ (git-ignored),
# Debian's python3 with its system site packages visible (Debian's python3-pymol for the PyMOL
# command's test), pinned PyPI packages (numpy 1.x: Debian's PyMOL 2.5 is built against it;
# MDAnalysis and MDAnalysisTests for dcs.mda; nanobind and scikit-build-core to build), and the
# package itself: `pip install .` from this checkout, CPU build (DCS_PYTHON_CUDA=ON: the CUDA
# build where nvcc is, slow on small machines). The package's build folder (build/python/) is
# kept, and ccache is used when present, so a second run rebuilds only what changed.
# Idempotent: a venv whose pins match is kept; the package is reinstalled every time (cheap
# when nothing changed). DCS_NO_PYTHON=1 skips it (those tests then skip).
# Usage: scripts/setup-python.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/venv.sh

venv=.venv-py
pins=(
  numpy==1.26.4 xarray==2026.9.0 pandas==3.0.6 h5py==3.16.0 pytest==9.2.0
  nanobind==2.12.0 scikit-build-core==0.11.6 MDAnalysis==2.11.0 MDAnalysisTests==2.11.0
)
install_missing_debs setup-python python3-pymol
pinned_venv setup-python "$venv" "$(printf '%s\n' "${pins[@]}")" true --system-site-packages -- \
  "${pins[@]}"

cuda=OFF
[[ "${DCS_PYTHON_CUDA:-OFF}" == ON ]] && cuda=AUTO
if [[ -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ]] && command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_BASEDIR="$PWD"
fi
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"
start=$SECONDS
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps \
  --config-settings=cmake.define.DCS_ENABLE_CUDA=$cuda . >&2
"$venv/bin/python" -c "import dcs, dcs.mda, xarray, MDAnalysisTests.datafiles" >&2
echo "setup-python: dcs installed in $venv (DCS_ENABLE_CUDA=$cuda) in $((SECONDS - start)) s" >&2
