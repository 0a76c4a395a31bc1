"""dcs.mda.PotentialMap over MDAnalysisTests' adenylate kinase (PSF + DCD) against per-frame
potential_map averaged in numpy."""
import numpy as np
import pytest

mda = pytest.importorskip("MDAnalysis")
datafiles = pytest.importorskip("MDAnalysisTests.datafiles")

import dcs  # noqa: E402
import dcs.mda  # noqa: E402


@pytest.fixture(scope="module")
def universe():
    return mda.Universe(datafiles.PSF, datafiles.DCD)


def test_mean_and_stdev_over_frames(universe):
    protein = universe.select_atoms("protein")
    pm = dcs.mda.PotentialMap(protein, grid=21, device="cpu").run(start=0, stop=10, step=3)
    assert pm.n_frames == 4 and pm.results.frames_analysed == 4
    mean, stdev = pm.results.mean, pm.results.stdev
    assert mean.dims == ("x", "y", "z") and mean.shape == (21, 21, 21)
    g = pm.results.grid
    maps = []
    for ts in universe.trajectory[0:10:3]:
        v = dcs.potential_map(protein.positions, protein.charges, grid=21,
                              spacing=g["spacing"][0], origin=g["origin"], device="cpu")
        maps.append(v.values.astype(np.float64))
    maps = np.array(maps)
    np.testing.assert_allclose(mean.values, maps.mean(axis=0), rtol=1e-6,
                               atol=1e-6 * np.abs(maps).max())
    np.testing.assert_allclose(stdev.values, maps.std(axis=0), rtol=1e-4,
                               atol=1e-5 * np.abs(maps).max())
    # The grid is the first frame's: dcs's rules around that frame's atoms.
    universe.trajectory[0]
    first = dcs.grid_of(protein.positions, grid=21)
    assert first == g
    np.testing.assert_array_equal(mean.x.values, v.x.values)
    assert mean.attrs["units"] == "kT/e" and mean.attrs["frames"] == 4


def test_align_superposes_onto_the_first_frame(universe):
    ca = universe.select_atoms("name CA")
    aligned = dcs.mda.PotentialMap(ca, grid=15, align="name CA", device="cpu").run(stop=3)
    plain = dcs.mda.PotentialMap(ca, grid=15, device="cpu").run(stop=3)
    # Frame 0 is the reference: one frame aligned is the plain map.
    one = dcs.mda.PotentialMap(ca, grid=15, align="name CA", device="cpu").run(stop=1)
    first = dcs.mda.PotentialMap(ca, grid=15, device="cpu").run(stop=1)
    np.testing.assert_allclose(one.results.mean.values, first.results.mean.values, rtol=1e-5,
                               atol=1e-4)
    # Aligned frames move less than unaligned ones: their spread is not larger.
    assert float(aligned.results.stdev.mean()) <= float(plain.results.stdev.mean()) * 1.05


def test_topology_without_charges_is_refused():
    u = mda.Universe(datafiles.PDB_small)
    if hasattr(u.atoms, "charges"):
        pytest.skip("this PDB's topology has charges")
    with pytest.raises(ValueError, match="no charges"):
        dcs.mda.PotentialMap(u.atoms, grid=9, device="cpu").run(stop=1)


def test_results_are_the_command_lines_trajectory_map(universe, dcs_binary, tmp_path):
    """The same frames, grid and fit as `dcs --topology --trajectory --align`: the same grid
    coordinates bit for bit (so `cli - py` keeps every point), and the min, max, fit RMSDs and
    colour range the command line stores."""
    import h5py
    from conftest import run_cli

    out = tmp_path / "md.h5"
    run_cli(dcs_binary, "--topology", datafiles.PSF, "--trajectory", datafiles.DCD, "--frames",
            "0:10:3", "--grid", 21, "--align", "name CA", "--device", "cpu", "-o", out,
            cwd=tmp_path)
    pm = dcs.mda.PotentialMap(universe.atoms, grid=21, align="name CA",
                              device="cpu").run(0, 10, 3)
    cli = dcs.read_map(out)
    r = pm.results
    for name in "xyz":
        assert cli[name].values.tobytes() == r.mean[name].values.tobytes()
    difference = cli - r.mean
    assert difference.shape == r.mean.shape
    scale = float(np.abs(r.max).max())
    assert float(np.abs(difference).max()) <= 1e-5 * scale
    with h5py.File(out) as f:
        t = f["trajectory"]
        for name in ("min", "max", "stdev"):
            want = t[name][()].T  # [z][y][x] -> (x, y, z)
            np.testing.assert_allclose(r[name].values, want, atol=1e-5 * scale)
        np.testing.assert_allclose(r.fit_rmsd, t["fit_rmsd"][()], atol=1e-4)
        assert list(r.frames) == list(t["frames"][()])
    assert r.fit_rmsd[0] < 1e-6 and r.fit_rmsd[1:].min() > 0.1
    lo, hi = r.mean.attrs["colour_range"]
    assert lo == -hi and hi > 0


def test_like_takes_the_command_lines_grid_bit_for_bit(dcs_binary, tmp_path):
    """GROMACS XTC: chemfiles (the command line) and MDAnalysis decode the coordinates about
    1e-6 Å apart, so a grid placed again around the first frame has another origin and
    `cli - py` was empty; like= takes the map's grid, coordinates bit for bit."""
    from conftest import run_cli

    out = tmp_path / "xtc.h5"
    run_cli(dcs_binary, "--topology", datafiles.TPR, "--trajectory", datafiles.XTC, "--frames",
            "0:3", "--select", "protein", "--pbc", "none", "--grid", 17, "--device", "cpu", "-o",
            out, cwd=tmp_path)
    cli = dcs.read_map(out)
    u = mda.Universe(datafiles.TPR, datafiles.XTC)
    pm = dcs.mda.PotentialMap(u.select_atoms("protein"), like=cli, device="cpu").run(0, 3)
    mean = pm.results.mean
    for name in "xyz":
        assert mean[name].values.tobytes() == cli[name].values.tobytes()
    difference = cli - mean
    assert difference.shape == cli.shape == (17, 17, 17)
    assert float(np.abs(difference).max()) <= 1e-4 * float(np.abs(cli).max())
    with pytest.raises(ValueError, match="like="):
        dcs.mda.PotentialMap(u.atoms, grid=9, like=cli)
