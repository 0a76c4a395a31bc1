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
