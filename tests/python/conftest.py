"""Shared fixtures: the command line (DCS_BINARY, from CTest), the bundled lysozyme and the
float64 reference the Python results are compared with."""
import os
import pathlib
import subprocess
import sys

import h5py
import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
from pqr_atoms import read_pqr as read_pqr_file  # noqa: E402

SOURCE = pathlib.Path(os.environ.get("DCS_SOURCE", pathlib.Path(__file__).parents[2]))
MOLECULE = SOURCE / "data" / "2lzt.pqr"
COULOMB_KT = 560.4593217677418  # kT*Å/e² at 298.15 K, ε = 1 (CODATA; the file's coulomb_factor)


@pytest.fixture(scope="session")
def dcs_binary():
    path = os.environ.get("DCS_BINARY")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("DCS_BINARY is not set to the dcs executable (CTest sets it)")
    return path


def run_cli(binary, *args, cwd):
    """Runs dcs; returns its stderr (the summary)."""
    done = subprocess.run([binary, *map(str, args)], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stderr + done.stdout


def cli_points(binary, tmp_path, *args):
    """Runs dcs on the bundled molecule with `args` (--points FILE or --at-atoms, a device) into
    tmp_path/points.h5; returns the file's /points/position and /points/potential."""
    out = tmp_path / "points.h5"
    run_cli(binary, "--atoms", MOLECULE, *args, "-o", out, cwd=tmp_path)
    with h5py.File(out) as f:
        return f["points/position"][()], f["points/potential"][()]


def read_pqr(path=MOLECULE):
    """Positions (N, 3) and charges (N,) of a whitespace PQR file (the bundled molecule)."""
    return read_pqr_file(path)


def reference(points, positions, charges, factor=COULOMB_KT, min_distance=0.1):
    """float64 Coulomb sum at points (M, 3)."""
    out = np.empty(len(points))
    for start in range(0, len(points), 2048):
        p = points[start:start + 2048]
        r = np.sqrt(((p[:, None, :] - positions[None, :, :]) ** 2).sum(-1))
        out[start:start + 2048] = factor * (charges / np.maximum(r, min_distance)).sum(-1)
    return out


def grid_points(v):
    """Every grid point of a DataArray with dims (x, y, z), flattened in its order."""
    x, y, z = (v[a].values for a in "xyz")
    return np.stack(np.meshgrid(x, y, z, indexing="ij"), -1).reshape(-1, 3)
