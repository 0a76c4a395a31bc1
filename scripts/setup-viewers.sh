#!/usr/bin/env bash
# Installs what the viewer tests (tests/viewers, CTest label "viewers") and `dcs preview` use:
#  - .venv-viewers/ (git-ignored): Debian's python3 with pinned PyPI packages: ChimeraX's map
#    readers (the ChimeraX 0.1.71 wheel, installed without its ~50 GUI and notebook
#    dependencies: the map readers need numpy and PyTables only), mrcfile, gemmi, VTK, h5py,
#    xarray, h5netcdf and matplotlib; pdb2pqr (PDB/mmCIF to PQR: the README's path from a PDB
#    file and its test, cli.pdb_through_pdb2pqr);
#  - Debian's python3-pymol (PyMOL 2.5) for the PyMOL check (it runs with /usr/bin/python3);
#  - Debian's ParaView 5.11 (paraview, python3-paraview: pvpython) and xvfb for the ParaView
#    recipe's check: about 150 packages, 80 MB to download, 850 MB installed, 80 s on a 2-core
#    VM, hence here rather than in setup.sh; DCS_NO_PARAVIEW=1 leaves it out (that test is then
#    reported as skipped).
# Idempotent: a venv whose pins match is kept. Usage: scripts/setup-viewers.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/venv.sh

venv=.venv-viewers
# ChimeraX 0.1.71 is built against numpy 1.26 and PyTables 3.9.2 (its own pins).
pins=(
  numpy==1.26.4 tables==3.9.2 h5py==3.16.0 mrcfile==1.5.4 gemmi==0.7.5 vtk==9.7.2
  xarray==2026.9.0 pandas==3.0.6 h5netcdf==1.8.2 matplotlib==3.11.2
  pdb2pqr==3.8.0 propka==3.5.1 mmcif-pdbx==2.1.0
)
chimerax=ChimeraX==0.1.71

debs=(python3-pymol)
[[ "${DCS_NO_PARAVIEW:-0}" == 1 ]] || debs+=(paraview python3-paraview xvfb xauth)
install_missing_debs setup-viewers "${debs[@]}"

# ChimeraX without its dependencies: the wheel's metadata pins Sphinx, Jupyter, Qt helpers and
# more that the map readers never import; tests/viewers/chimerax_readers.py imports
# chimerax.map_data without running the package's __init__ (which imports every bundle and
# needs the whole application).
finish_viewers() {
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps "$chimerax" >&2
  "$venv/bin/python" - <<'EOF'
import sys
sys.path.insert(0, "tests/viewers")
import chimerax_readers  # noqa: F401  (fails here, not in the tests, if the readers do not import)
import h5py, mrcfile, gemmi, vtk, xarray, h5netcdf, matplotlib, pdb2pqr  # noqa: F401
EOF
  echo "setup-viewers: $venv ready" >&2
}
pinned_venv setup-viewers "$venv" "$(printf '%s\n' "$chimerax" "${pins[@]}")" finish_viewers -- \
  "${pins[@]}"
