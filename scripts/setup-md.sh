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
source scripts/lib/debian.sh

venv=.venv-md
python=/usr/bin/python3
# OpenMM: the periodic potential's cross-check (tests/periodic: NonbondedForce PME energies).
pins=(MDAnalysis==2.11.0 MDAnalysisTests==2.11.0 h5py==3.16.0 openmm==8.6.1)
install_missing_debs setup-md python3-venv

stamp="$venv/.dcs-pins"
want="$(printf '%s\n' "${pins[@]}")"
if [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  echo "setup-md: $venv is up to date" >&2
  exit 0
fi
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check "${pins[@]}" >&2
"$venv/bin/python" -c "import MDAnalysis, MDAnalysisTests.datafiles, h5py, openmm" >&2
echo "$want" > "$stamp"
echo "setup-md: $venv ready" >&2
