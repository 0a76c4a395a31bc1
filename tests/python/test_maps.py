"""dcs.potential_map / potential_at / write_map / read_map against a float64 reference and
against the command line's own files, bit for bit."""
import re

import h5py
import numpy as np
import pytest
import xarray as xr

import dcs
from conftest import MOLECULE, cli_points, grid_points, read_pqr, reference, run_cli


@pytest.fixture(scope="module")
def cli_map(dcs_binary, tmp_path_factory):
    """The command line's map of the bundled molecule (CPU), its summary and its atoms."""
    out = tmp_path_factory.mktemp("cli")
    summary = run_cli(dcs_binary, "--atoms", MOLECULE, "--grid", 33, 29, 31, "--device", "cpu",
                      "-o", out / "mol.h5", cwd=out)
    with h5py.File(out / "mol.h5") as f:
        return dict(path=out / "mol.h5", summary=summary,
                    values=f["potential"][()], attrs=dict(f["potential"].attrs),
                    positions=f["atoms/position"][()], charges=f["atoms/charge"][()])


def test_matches_float64_reference():
    positions, charges = read_pqr()
    v = dcs.potential_map(positions, charges, grid=17, device="cpu")
    assert v.dims == ("x", "y", "z") and v.shape == (17, 17, 17) and v.dtype == np.float32
    want = reference(grid_points(v), positions, charges).reshape(v.shape)
    error = np.abs(v.values - want).max() / np.abs(want).max()
    assert error < 1e-5, error  # DESIGN §4: float32 within 1e-5 of max|V|
    assert v.attrs["units"] == "kT/e" and v.attrs["dielectric"] == 1.0
    assert v.attrs["coulomb_factor"] == pytest.approx(560.4593, rel=1e-6)


def test_bit_identical_to_the_command_line(cli_map):
    positions, charges = read_pqr()
    np.testing.assert_array_equal(positions, cli_map["positions"])  # the same atoms
    np.testing.assert_array_equal(charges, cli_map["charges"])
    v = dcs.potential_map(positions, charges, grid=(33, 29, 31), device="cpu")
    engine = v.transpose("z", "y", "x").values
    assert engine.shape == cli_map["values"].shape
    assert engine.tobytes() == cli_map["values"].tobytes()  # bit for bit


def test_coordinates_are_the_command_lines_grid(cli_map):
    positions, charges = read_pqr()
    v = dcs.potential_map(positions, charges, grid=(33, 29, 31), device="cpu")
    a = cli_map["attrs"]
    assert list(a["dims"]) == [33, 29, 31]
    assert v.attrs["origin"] == list(a["origin"]) and v.attrs["spacing"] == list(a["spacing"])
    for axis, name in enumerate("xyz"):
        want = a["origin"][axis] + np.arange(a["dims"][axis]) * a["spacing"][axis]
        np.testing.assert_array_equal(v[name].values, want)
    # The summary line the command line prints: "grid 33 x 29 x 31 = ..., origin (x, y, z)".
    origin = re.search(r"origin \(([-\d.]+), ([-\d.]+), ([-\d.]+)\)", cli_map["summary"])
    np.testing.assert_allclose(v.attrs["origin"], [float(g) for g in origin.groups()],
                               atol=5e-4)


def test_value_at_a_grid_point_is_where_the_coordinates_say():
    positions = np.array([[0.0, 0.0, 0.0]])
    v = dcs.potential_map(positions, [1.0], grid=11, padding=5.0, units="e/A", device="cpu")
    p = v.sel(x=5.0, y=0.0, z=0.0)  # 5 Å from the charge, on the grid
    assert float(p) == pytest.approx(1 / 5.0, rel=1e-6)


def test_any_float_dtype_and_settings_in_attrs():
    positions, charges = read_pqr()
    a = dcs.potential_map(positions.astype(np.float32), charges.astype(np.float32), grid=9,
                          device="cpu", ionic_strength=0.15, min_distance=0.5)
    b = dcs.potential_map(positions.astype(np.float32).astype(np.float64),
                          charges.astype(np.float32).astype(np.float64), grid=9, device="cpu",
                          ionic_strength=0.15, min_distance=0.5)
    assert a.values.tobytes() == b.values.tobytes()
    assert a.attrs["dielectric"] == 78.54  # water's, as --ionic-strength alone gives
    assert a.attrs["ionic_strength"] == 0.15 and a.attrs["min_distance"] == 0.5
    assert "Debye" in a.attrs["physics"]


def test_physics_keywords_match_the_command_line(dcs_binary, tmp_path):
    positions, charges = read_pqr()
    for args, kwargs in (
            (["--preset", "chimerax", "--spacing", "3"], dict(preset="chimerax", spacing=3.0)),
            (["--dielectric-model", "distance", "--dielectric", "4"],
             dict(dielectric_model="distance", dielectric=4.0)),
            (["--ionic-strength", "0.1", "--units", "kcal/mol/e"],
             dict(ionic_strength=0.1, units="kcal/mol/e"))):
        path = tmp_path / "m.h5"
        run_cli(dcs_binary, "--atoms", MOLECULE, "--grid", 15, *args, "--device", "cpu", "-o",
                path, "--force", cwd=tmp_path)
        v = dcs.potential_map(positions, charges, grid=15, device="cpu", **kwargs)
        with h5py.File(path) as f:
            assert v.transpose("z", "y", "x").values.tobytes() == f["potential"][()].tobytes(), args
            assert v.attrs["physics"] == f["potential"].attrs["physics"]


def test_potential_at_against_numpy_and_the_map():
    positions, charges = read_pqr()
    rng = np.random.default_rng(7)
    points = rng.uniform(-30, 30, size=(500, 3))
    values = dcs.potential_at(points, positions, charges, device="cpu")
    assert values.shape == (500,) and values.dtype == np.float32
    want = reference(points, positions, charges)
    assert np.abs(values - want).max() / np.abs(want).max() < 1e-5
    empty = dcs.potential_at(np.zeros((0, 3)), positions, charges, device="cpu")
    assert empty.shape == (0,)


def test_potential_at_bit_identical_to_cli_points(dcs_binary, tmp_path):
    positions, charges = read_pqr()
    rng = np.random.default_rng(3)
    points = np.round(rng.uniform(-25, 25, size=(300, 3)), 3)
    np.savetxt(tmp_path / "p.csv", points, delimiter=",", fmt="%.3f")
    where, cli = cli_points(dcs_binary, tmp_path, "--points", tmp_path / "p.csv", "--device", "cpu")
    np.testing.assert_array_equal(where, points)
    values = dcs.potential_at(points, positions, charges, device="cpu")
    assert values.tobytes() == cli.tobytes()


def test_write_map_is_the_command_lines_file(cli_map, tmp_path):
    positions, charges = read_pqr()
    v = dcs.potential_map(positions, charges, grid=(33, 29, 31), device="cpu")
    dcs.write_map(v, tmp_path / "py.h5", positions=positions, charges=charges)
    with h5py.File(tmp_path / "py.h5") as f, h5py.File(cli_map["path"]) as g:
        assert f["potential"][()].tobytes() == g["potential"][()].tobytes()
        for key in ("origin", "spacing", "dims", "units", "coulomb_factor", "colour_range",
                    "physics", "axis_order"):
            np.testing.assert_array_equal(f["potential"].attrs[key], g["potential"].attrs[key])
        assert set(g.keys()) <= set(f.keys())  # the same groups (statistics, VTKHDF, ...)
        for key in ("min", "max", "mean"):
            assert f["statistics"].attrs[key] == g["statistics"].attrs[key]
        np.testing.assert_array_equal(f["atoms/position"][()], g["atoms/position"][()])
    with pytest.raises(OSError, match="exists"):
        dcs.write_map(v, tmp_path / "py.h5")
    dcs.write_map(v, tmp_path / "py.h5", force=True)  # without atoms


def test_read_map_round_trip(cli_map, tmp_path):
    r = dcs.read_map(cli_map["path"])
    assert r.dims == ("x", "y", "z") and r.attrs["units"] == "kT/e"
    np.testing.assert_array_equal(r.transpose("z", "y", "x").values, cli_map["values"])
    dcs.write_map(r, tmp_path / "again.h5")
    again = dcs.read_map(tmp_path / "again.h5")
    xr.testing.assert_equal(again, r)  # values, dims and coordinates
    for key in ("units", "physics", "coulomb_factor", "origin", "spacing"):
        assert again.attrs[key] == r.attrs[key]


def test_old_reader_module_still_works(cli_map):
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).parents[2] / "python" / "dcs_map.py"
    spec = importlib.util.spec_from_file_location("dcs_map", path)
    dcs_map = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dcs_map)
    m = dcs_map.open_map(cli_map["path"])
    np.testing.assert_array_equal(m.values, cli_map["values"])


def test_repeated_and_concurrent_calls_give_the_same_bits():
    # The module keeps its workers between calls (dcs::WorkerCache): a second call, a call with
    # other workers in between (threads=1), and calls from two Python threads at once (one of
    # them makes its own workers) all give the first call's bits, maps and points alike.
    import threading

    positions, charges = read_pqr()
    first = dcs.potential_map(positions, charges, grid=21).values
    assert dcs.potential_map(positions, charges, grid=21).values.tobytes() == first.tobytes()
    assert dcs.potential_map(positions, charges, grid=21, threads=1).values.tobytes() == \
        first.tobytes()
    points = positions[:50] + 1.5
    at = dcs.potential_at(points, positions, charges)
    results = [None] * 4

    def work(i):
        results[i] = (dcs.potential_map(positions, charges, grid=21).values.tobytes()
                      if i % 2 == 0 else dcs.potential_at(points, positions, charges).tobytes())

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results[0] == results[2] == first.tobytes()
    assert results[1] == results[3] == at.tobytes()
