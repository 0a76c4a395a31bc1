"""The Python traps of issue 38 (item 5), each against the command line's own output: the
potential at the atoms without their own term, grid coordinates and dims shared by every reader,
the colour range on every map, the engine's warnings through `warnings`, the trajectory results
the command line stores, and DX from Python."""
import warnings

import h5py
import numpy as np
import pytest

import dcs
from conftest import MOLECULE, SOURCE, cli_points, read_pqr, run_cli


def test_potential_at_atoms_is_the_command_lines_at_atoms(dcs_binary, tmp_path):
    positions, charges = read_pqr()
    _, cli = cli_points(dcs_binary, tmp_path, "--at-atoms", "--device", "cpu")
    py = dcs.potential_at_atoms(positions, charges, device="cpu")
    assert py.dtype == np.float32 and py.shape == (len(charges),)
    assert py.tobytes() == cli.astype(np.float32).tobytes()  # bit for bit
    # potential_at at the atoms adds each atom's own term, clamped at min_distance (0.1 Å).
    own = dcs.potential_at(positions, positions, charges, device="cpu")
    factor = dcs.potential_map(positions[:1], charges[:1], grid=3).attrs["coulomb_factor"]
    np.testing.assert_allclose(own - py, factor * charges / 0.1, rtol=1e-4,
                               atol=1e-4 * np.abs(own).max())


@pytest.fixture(scope="module")
def standalone():
    """python/dcs_map.py, the reader shipped with the command line, as a user imports it."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("dcs_map", SOURCE / "python" / "dcs_map.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_grid_coordinates_are_bit_identical_for_every_reader(dcs_binary, tmp_path, standalone):
    positions, charges = read_pqr()
    run_cli(dcs_binary, "--atoms", MOLECULE, "--grid", 23, "--spacing", 0.37, "--device", "cpu",
            "-o", tmp_path / "mol.h5", cwd=tmp_path)
    cli = dcs.read_map(tmp_path / "mol.h5")
    py = dcs.potential_map(positions, charges, grid=23, spacing=0.37, device="cpu")
    alone = standalone.to_xarray(tmp_path / "mol.h5")
    for name in "xyz":
        assert cli[name].values.tobytes() == py[name].values.tobytes()
        assert alone[name].values.tobytes() == py[name].values.tobytes()
    difference = cli - py  # aligned on coordinates: nothing may drop out
    assert difference.shape == py.shape
    assert float(np.abs(difference).max()) == 0.0


def test_one_dims_convention_for_every_reader(dcs_binary, tmp_path, standalone):
    run_cli(dcs_binary, "--atoms", MOLECULE, "--grid", 9, 7, 5, "--device", "cpu", "-o",
            tmp_path / "mol.h5", cwd=tmp_path)
    alone = standalone.to_xarray(tmp_path / "mol.h5")
    assert alone.dims == ("x", "y", "z") and alone.shape == (9, 7, 5)
    assert dcs.read_map(tmp_path / "mol.h5").dims == ("x", "y", "z")
    with h5py.File(tmp_path / "mol.h5") as f:
        values = f["potential"][()]
    # value [k][j][i] of the file is at (x_i, y_j, z_k)
    assert float(alone.isel(x=3, y=2, z=1)) == float(values[1, 2, 3])


def test_colour_range_on_every_map(dcs_binary, tmp_path):
    positions, charges = read_pqr()
    run_cli(dcs_binary, "--atoms", MOLECULE, "--grid", 25, "--device", "cpu", "-o",
            tmp_path / "mol.h5", cwd=tmp_path)
    cli = dcs.read_map(tmp_path / "mol.h5")
    py = dcs.potential_map(positions, charges, grid=25, device="cpu")
    assert list(py.attrs["colour_range"]) == list(cli.attrs["colour_range"])
    assert list(py.attrs["colour_range_percentiles"]) == \
        list(cli.attrs["colour_range_percentiles"])
    assert dcs.colour_range(py)["colour_range"] == list(cli.attrs["colour_range"])


def test_engine_warnings_go_through_python_warnings(tmp_path, capfd):
    positions, charges = read_pqr()
    # A 16 Å box through the middle of the molecule: atoms outside it, its faces among them.
    v = dcs.potential_map(positions, charges, grid=17, spacing=1.0,
                          center=positions.mean(axis=0), device="cpu")
    with pytest.warns(dcs.DcsWarning, match="outside the box|the box is small"):
        dcs.write_map(v, tmp_path / "small.h5", positions=positions, charges=charges)
    assert "[warning]" not in capfd.readouterr().err  # not spdlog's line on stderr
    assert issubclass(dcs.DcsWarning, UserWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error", dcs.DcsWarning)
        with pytest.raises(dcs.DcsWarning):
            dcs.write_map(v, tmp_path / "small2.h5", positions=positions, charges=charges)


def test_write_map_writes_the_command_lines_dx(dcs_binary, tmp_path):
    positions, charges = read_pqr()
    run_cli(dcs_binary, "--atoms", MOLECULE, "--grid", 11, 9, 7, "--device", "cpu", "--dx",
            tmp_path / "cli.dx", "--no-hdf5", cwd=tmp_path)
    v = dcs.potential_map(positions, charges, grid=(11, 9, 7), device="cpu")
    dcs.write_map(v, tmp_path / "py.dx")
    body = lambda p: [l for l in open(p) if not l.startswith("#")]
    assert body(tmp_path / "py.dx") == body(tmp_path / "cli.dx")
    with pytest.raises(OSError):
        dcs.write_map(v, tmp_path / "py.dx")  # exists, without force
    dcs.write_map(v, tmp_path / "py.dx", force=True)
