#!/usr/bin/env bash
# The trajectory tests' cross-check (tests/md, CTest label "md"): .venv-md/ (git-ignored), Debian's
# python3 with MDAnalysis and MDAnalysisTests from PyPI. MDAnalysis reads the same topology and
# trajectory files as dcs (positions, charges, selections, superposition are compared with
# it), and MDAnalysisTests ships the real trajectories the tests use (adenylate kinase as
# PSF+DCD and GROMACS TPR+XTC/TRR, AMBER PRMTOP+NetCDF, ...). About 640 MB installed, OpenMM
# about 90 MB of it.
# Idempotent: a venv whose pins match is kept. DCS_NO_MD=1 skips it (those tests then skip).
# Usage: scripts/setup-md.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/venv.sh

venv=.venv-md
# OpenMM: the periodic potential's cross-check (tests/periodic: NonbondedForce PME energies).
pins=(MDAnalysis==2.11.0 MDAnalysisTests==2.11.0 h5py==3.16.0 openmm==8.6.1)
check_md() {
  "$venv/bin/python" -c "import MDAnalysis, MDAnalysisTests.datafiles, h5py, openmm" >&2
  echo "setup-md: $venv ready" >&2
}
pinned_venv setup-md "$venv" "$(printf '%s\n' "${pins[@]}")" check_md -- "${pins[@]}"
