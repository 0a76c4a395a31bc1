#!/usr/bin/env bash
# The whole set-up (CI, scripts/run-tests.sh): what the test suite needs from Debian (when
# missing), chemfiles, the venvs, then scripts/setup-build.sh's build of every target of the
# preset, and the MPI build. scripts/run-demo.sh runs only scripts/setup-build.sh.
# Usage: scripts/setup.sh [preset]   (default as scripts/setup-build.sh: $DCS_PRESET, else "ci"
# when nvcc exists, else "dev-cpu"). Prints the preset used on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/debian.sh

# The build's packages (scripts/lib/debian.sh), and the tests': h5dump, the APBS data, Debian's
# Python with h5py, numpy and GridDataFormats.
packages=("${dcs_build_packages[@]}" hdf5-tools apbs-data python3-h5py python3-numpy python3-griddataformats)
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

preset=$(DCS_BUILD_ALL=1 bash scripts/setup-build.sh "$@" | tail -n 1)
# The MPI build: only the binary its tests (label mpi) run.
if [[ "${DCS_NO_MPI:-0}" != 1 ]]; then
  cmake --preset mpi-cpu >&2
  cmake --build --preset mpi-cpu -j "$(nproc)" --target dcs >&2
fi
echo "$preset"
