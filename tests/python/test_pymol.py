"""The PyMOL command dcs_map in Debian's PyMOL (python3-pymol), headless (`python -m pymol
-cq`), run the way a user does: `run python/pymol_dcs.py`, then `dcs_map object, grid=...`.
The venv of scripts/setup-python.sh sees Debian's site packages, so this PyMOL has dcs."""
import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("pymol", reason="Debian's python3-pymol is not installed")

import dcs  # noqa: E402
from conftest import MOLECULE, read_pqr  # noqa: E402

SOURCE = pathlib.Path(__file__).parents[2]


def run_pymol(tmp_path, commands):
    script = tmp_path / "session.pml"
    script.write_text("\n".join(commands) + "\n")
    done = subprocess.run([sys.executable, "-m", "pymol", "-cq", str(script)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def test_run_script_and_command(tmp_path):
    out = run_pymol(tmp_path, [
        f"load {MOLECULE}, lyso",
        f"run {SOURCE / 'python' / 'pymol_dcs.py'}",
        "dcs_map lyso, grid=25",
        "python",
        "import json, numpy",
        "numpy.save('field.npy', cmd.get_volume_field('lyso_dcs'))",
        "json.dump({'names': cmd.get_names('all'), 'map': cmd.get_type('lyso_dcs'),",
        "           'ramp': cmd.get_type('lyso_dcs_ramp'), 'extent': cmd.get_extent('lyso_dcs'),",
        "           'surface_color': cmd.get('surface_color', 'lyso')}, open('out.json', 'w'))",
        "python end",
    ])
    got = json.loads((tmp_path / "out.json").read_text())
    assert got["map"] == "object:map" and got["ramp"] == "object:ramp", out
    assert got["surface_color"] == "lyso_dcs_ramp"
    positions, charges = read_pqr()
    # PyMOL keeps coordinates and charges in float32: the map of those atoms.
    v = dcs.potential_map(positions.astype(np.float32), charges.astype(np.float32), grid=25)
    field = np.load(tmp_path / "field.npy")
    assert field.shape == (25, 25, 25)
    # PyMOL's map holds potential_map's values at its points (x, y, z index order).
    np.testing.assert_array_equal(field, v.values)
    np.testing.assert_allclose(got["extent"][0], v.attrs["origin"], atol=1e-3)


def test_refuses_an_object_without_charges(tmp_path):
    out = run_pymol(tmp_path, [
        "fragment ala",
        "alter ala, partial_charge=0",
        f"run {SOURCE / 'python' / 'pymol_dcs.py'}",
        "dcs_map ala, grid=9",
    ])
    assert "no partial charges" in out
