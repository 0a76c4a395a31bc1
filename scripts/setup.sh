#!/usr/bin/env bash
# Installs what dcs needs from Debian (when missing), configures and builds.
# Usage: scripts/setup.sh [preset]   (default: "ci" when nvcc exists, else "dev-cpu")
# Prints the preset used on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/debian.sh

packages=(cmake ninja-build g++ pkg-config libhdf5-dev hdf5-tools libcli11-dev libspdlog-dev
          libfmt-dev libgtest-dev zlib1g-dev libdeflate-dev libssl-dev apbs-data python3 python3-h5py
          python3-numpy python3-griddataformats)
# Smooth PME's FFTs (libdcs/src/periodic/pme.cpp): FFTW3, found through pkg-config.
packages+=(libfftw3-dev)
# Installing dcs (tests/install): the man page from --help (help2man), the .deb's library
# dependencies (dpkg-shlibdeps), the installed `dcs preview` (Debian's python3 with matplotlib),
# and strace, which shows the installed binary never touches the source tree.
packages+=(help2man dpkg-dev python3-matplotlib strace)
# The MPI build (preset mpi-cpu here; mpi with CUDA on GPU machines): OpenMPI and Debian's
# parallel HDF5, which coexists with the serial one (separate directories, separate builds).
[[ "${DCS_NO_MPI:-0}" == 1 ]] || packages+=(openmpi-bin libopenmpi-dev libhdf5-openmpi-dev)
# A one-node Slurm for the examples' test (tests/cluster, scripts/slurm-local.sh).
[[ "${DCS_SLURM:-1}" == 0 ]] || packages+=(slurm-wlm munge)
install_missing_debs setup "${packages[@]}"

# chemfiles (trajectory and topology formats), built from its PyPI source distribution into
# .deps/; the trajectory tests' MDAnalysis venv (tests/md; with DCS_NO_MD=1 those tests skip).
bash scripts/setup-chemfiles.sh >&2
[[ "${DCS_NO_MD:-0}" == 1 ]] || bash scripts/setup-md.sh >&2

# The Python package's venv with the package pip-installed from this checkout (tests/python;
# with DCS_NO_PYTHON=1 those tests skip).
[[ "${DCS_NO_PYTHON:-0}" == 1 ]] || bash scripts/setup-python.sh >&2

# The viewer tests' venv and PyMOL (tests/viewers; with DCS_NO_VIEWERS=1 those tests skip).
[[ "${DCS_NO_VIEWERS:-0}" == 1 ]] || bash scripts/setup-viewers.sh >&2

if [[ -z "${CUDACXX:-}" ]] && ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
preset="${1:-}"
if [[ -z "$preset" ]]; then
  if command -v nvcc >/dev/null; then preset=ci; else preset=dev-cpu; fi
fi
cmake --preset "$preset" >&2
cmake --build --preset "$preset" -j "$(nproc)" >&2
# The MPI build: only the binary its tests (label mpi) run.
if [[ "${DCS_NO_MPI:-0}" != 1 ]]; then
  cmake --preset mpi-cpu >&2
  cmake --build --preset mpi-cpu -j "$(nproc)" --target dcs >&2
fi
echo "$preset"
