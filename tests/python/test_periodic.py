"""Periodic maps from Python (periodic=True, box=) against the command line's --periodic, and
the keyword table (dcs._settings.KEYWORDS) as the one list every call takes its keywords from."""
import bz2
import inspect
import shutil

import h5py
import numpy as np
import pytest

import dcs
from dcs import _settings
from conftest import MOLECULE, read_pqr, run_cli

TRUNCATED_OCTAHEDRON = (70.0, 70.0, 70.0, 109.4712206, 109.4712206, 109.4712206)


def cli_periodic(binary, tmp_path, box, *extra):
    out = tmp_path / "periodic.h5"
    text = ",".join(repr(float(v)) for v in box)
    # --map-axes box: Python maps are x, y, z grids (a triclinic cell's bounding box).
    summary = run_cli(binary, "--atoms", MOLECULE, "--periodic", "--box", text, "--grid", 20,
                      "--map-axes", "box", "--device", "cpu", *extra, "-o", out, "--force",
                      cwd=tmp_path)
    with h5py.File(out) as f:
        return f["potential"][()], dict(f["potential"].attrs), summary


@pytest.mark.parametrize("box", [(61.0, 57.5, 66.0), TRUNCATED_OCTAHEDRON])
def test_bit_identical_to_the_command_lines_periodic_map(dcs_binary, tmp_path, box):
    values, attrs, summary = cli_periodic(dcs_binary, tmp_path, box)
    assert "ewald" in summary
    positions, charges = read_pqr()
    v = dcs.potential_map(positions, charges, periodic=True, box=box, grid=20, device="cpu")
    engine = v.transpose("z", "y", "x").values
    assert engine.shape == values.shape
    assert engine.tobytes() == values.tobytes()  # bit for bit
    assert v.attrs["origin"] == list(attrs["origin"])
    assert v.attrs["spacing"] == list(attrs["spacing"])
    assert v.attrs["method"] == "ewald"
    np.testing.assert_allclose(v.attrs["cell"], list(box) + [90.0] * (6 - len(box)))
    # The cell as 3 box vectors in reduced form: the same cell (to rounding of the angles).
    from MDAnalysis.lib.mdamath import triclinic_vectors
    full = np.array(list(box) + [90.0] * (6 - len(box)))
    vectors = triclinic_vectors(full.astype(np.float64))
    w = dcs.potential_map(positions, charges, periodic=True, box=vectors, grid=20,
                          device="cpu")
    scale = float(np.abs(v.values).max())
    assert float(np.abs(w.values - v.values).max()) <= 1e-5 * scale


def test_the_grid_spans_the_cell_unless_placed():
    positions, charges = read_pqr()
    g = dcs.grid_of(positions, charges, periodic=True, box=(61.0, 57.5, 66.0), grid=20)
    assert g["dims"] == [20, 20, 20]
    np.testing.assert_allclose(np.array(g["spacing"]) * 20, [61.0, 57.5, 66.0])
    placed = dcs.grid_of(positions, charges, periodic=True, box=(61.0, 57.5, 66.0), grid=20,
                         padding=5.0)
    assert placed != g


def test_periodic_keywords_are_checked():
    positions, charges = read_pqr()
    with pytest.raises(ValueError, match="periodic=True needs box="):
        dcs.potential_map(positions, charges, periodic=True, grid=9)
    with pytest.raises(ValueError, match="box= applies to periodic=True"):
        dcs.potential_map(positions, charges, box=(50, 50, 50), grid=9)
    with pytest.raises(ValueError, match="ewald_error= applies to periodic=True"):
        dcs.potential_map(positions, charges, ewald_error=1e-6, grid=9)
    with pytest.raises(ValueError, match="reduced form"):
        dcs.potential_map(positions, charges, periodic=True, grid=9,
                          box=[[50, 1, 0], [0, 50, 0], [0, 0, 50]])
    with pytest.raises(ValueError, match="got shape"):
        dcs.potential_map(positions, charges, periodic=True, grid=9, box=(50, 50))
    with pytest.raises(ValueError, match="form no cell|angle|cell"):
        dcs.potential_map(positions, charges, periodic=True, grid=9,
                          box=(50, 50, 50, 10, 10, 170))
    with pytest.raises(ValueError, match="Coulomb model only"):
        dcs.potential_map(positions, charges, periodic=True, grid=9, box=(50, 50, 50),
                          ionic_strength=0.1)
    with pytest.raises(ValueError, match="ewald-error|ewald_error|1e-8"):
        dcs.potential_map(positions, charges, periodic=True, grid=9, box=(50, 50, 50),
                          ewald_error=0.5)
    with pytest.raises(TypeError, match="periodic must be True or False"):
        dcs.potential_map(positions, charges, periodic="yes", grid=9, box=(50, 50, 50))


def test_every_call_takes_its_keywords_from_the_one_table():
    groups = {
        dcs.potential_map: ("grid", "physics", "compute", "periodic"),
        dcs.potential_at: ("physics", "compute"),
        dcs.potential_at_atoms: ("physics", "compute"),
        dcs.grid_of: ("grid", "physics", "periodic"),
    }
    for function, kinds in groups.items():
        parameters = inspect.signature(function).parameters
        keyword_only = [name for name, p in parameters.items()
                        if p.kind is inspect.Parameter.KEYWORD_ONLY]
        want = [k.name for k in _settings.KEYWORDS if k.group in kinds]
        assert keyword_only == want, function.__name__
        for k in _settings.keywords(*kinds):
            assert parameters[k.name].default == k.default
            assert f"{k.name}: " in function.__doc__, (function.__name__, k.name)
        assert "{keywords}" not in function.__doc__
    positions, charges = read_pqr()
    with pytest.raises(TypeError, match="unexpected keyword argument 'grid'"):
        dcs.potential_at(positions[:2], positions, charges, grid=9)
    with pytest.raises(TypeError, match="unexpected keyword argument 'gird'"):
        dcs.potential_map(positions, charges, gird=9)
    # Every keyword of the table reaches the extension by its name (all defaults).
    assert _settings.make_settings() is not None
    names = [k.name for k in _settings.KEYWORDS]
    assert len(names) == len(set(names))


@pytest.fixture(scope="module")
def truncoct(tmp_path_factory):
    """AMBER tz2 in a truncated octahedron (net charge +2): parm7 (bzip2 in MDAnalysisTests,
    decompressed for the command line) and NetCDF frames."""
    datafiles = pytest.importorskip("MDAnalysisTests.datafiles")
    path = tmp_path_factory.mktemp("tz2") / "tz2.truncoct.parm7"
    with bz2.open(datafiles.PRM7, "rb") as source, open(path, "wb") as target:
        shutil.copyfileobj(source, target)
    return path, datafiles.NCDFtruncoct


def test_mda_periodic_is_the_command_lines_periodic_trajectory_map(dcs_binary, tmp_path,
                                                                    truncoct):
    import MDAnalysis as mda
    import dcs.mda

    topology, trajectory = truncoct
    out = tmp_path / "tz2.h5"
    run_cli(dcs_binary, "--topology", topology, "--trajectory", trajectory, "--frames", "0:3",
            "--periodic", "--map-axes", "box", "--pbc", "none", "--grid", 14, "--device", "cpu",
            "-o", out, cwd=tmp_path)
    cli = dcs.read_map(out)
    u = mda.Universe(str(topology), trajectory)
    pm = dcs.mda.PotentialMap(u.atoms, periodic=True, like=cli, device="cpu").run(0, 3)
    mean = pm.results.mean
    for name in "xyz":
        assert mean[name].values.tobytes() == cli[name].values.tobytes()
    scale = float(np.abs(cli).max())
    error = float(np.abs(cli - mean).max()) / scale
    # MDAnalysis rounds the cell to float32 (42.43885 for 42.43884853 Å, 109.47122 for
    # 109.471219°), which moves the images: 6.5e-5 of max|V| measured on tz2.
    assert error <= 2e-4, error
    assert mean.attrs["method"] == "ewald"
    # The same frame in the file's float64 cell: the command line's numbers to float32 rounding.
    with h5py.File(out) as f:
        cell = [float(v) for v in f["trajectory/dimensions"][0]]
    u.trajectory[0]
    origin = [float(cli[a][0]) for a in "xyz"]
    spacing = float(cli.x[1] - cli.x[0])
    one = dcs.potential_map(u.atoms.positions, u.atoms.charges, periodic=True, box=cell,
                            grid=list(cli.shape), spacing=spacing, origin=origin, device="cpu")
    single = tmp_path / "frame0.h5"
    run_cli(dcs_binary, "--topology", topology, "--trajectory", trajectory, "--frames", "0:1",
            "--periodic", "--map-axes", "box", "--pbc", "none", "--grid", 14, "--device", "cpu",
            "-o", single, cwd=tmp_path)
    frame0 = dcs.read_map(single)
    assert float(np.abs(one - frame0).max()) <= 1e-6 * float(np.abs(frame0).max())
    # Placed by itself: the grid over the first frame's cell.
    own = dcs.mda.PotentialMap(u.atoms, periodic=True, grid=14, device="cpu").run(0, 2)
    assert own.results.grid["dims"] == [14, 14, 14]


def test_mda_periodic_refusals():
    import MDAnalysis as mda
    import dcs.mda
    datafiles = pytest.importorskip("MDAnalysisTests.datafiles")
    u = mda.Universe(datafiles.PSF, datafiles.DCD)  # no cell
    with pytest.raises(ValueError, match="frame 0 has no cell"):
        dcs.mda.PotentialMap(u.atoms, periodic=True, grid=9, device="cpu").run(stop=1)
    with pytest.raises(ValueError, match="align with periodic=True"):
        dcs.mda.PotentialMap(u.atoms, periodic=True, align="name CA")
    with pytest.raises(ValueError, match="ewald_error= applies to periodic=True"):
        dcs.mda.PotentialMap(u.atoms, ewald_error=1e-6)
    with pytest.raises(TypeError, match="unexpected keyword argument 'box'"):
        dcs.mda.PotentialMap(u.atoms, periodic=True, box=(50, 50, 50))


def write_scaled_trr(universe, path, scales):
    """Frame 0 of `universe` scaled by each of `scales` (positions and cell): an NPT-like TRR."""
    import MDAnalysis as mda
    universe.trajectory[0]
    positions = universe.atoms.positions.astype(np.float64)
    dimensions = universe.dimensions.astype(np.float64)
    with mda.Writer(str(path), universe.atoms.n_atoms) as writer:
        for s in scales:
            universe.atoms.positions = (positions * s).astype(np.float32)
            universe.dimensions = np.concatenate([dimensions[:3] * s, dimensions[3:]])
            writer.write(universe.atoms)


def test_mda_periodic_orthorhombic_without_like(dcs_binary, tmp_path):
    """An orthorhombic cell (AMBER bala) placed by PotentialMap itself: each frame on its own
    cell's points i*L/n, the command line's map; and with the cell scaled per frame (NPT) the
    same mean in fractional space, on the mean cell's coordinates."""
    import MDAnalysis as mda
    import dcs.mda
    datafiles = pytest.importorskip("MDAnalysisTests.datafiles")
    topology = datafiles.PRMncdf
    for label, trajectory, frames in (("bala", datafiles.NCDF, 3), ("scaled", None, 3)):
        if trajectory is None:
            trajectory = tmp_path / "scaled.trr"
            write_scaled_trr(mda.Universe(topology, datafiles.NCDF), trajectory,
                             [1.0, 1.04, 0.97])
        out = tmp_path / f"{label}.h5"
        run_cli(dcs_binary, "--topology", topology, "--trajectory", trajectory, "--frames",
                f"0:{frames}", "--periodic", "--pbc", "none", "--grid", 12, "--device", "cpu",
                "-o", out, cwd=tmp_path)
        cli = dcs.read_map(out)
        u = mda.Universe(str(topology), str(trajectory))
        pm = dcs.mda.PotentialMap(u.atoms, periodic=True, grid=12, device="cpu").run(0, frames)
        mean = pm.results.mean
        assert mean.shape == cli.shape
        for name in "xyz":  # MDAnalysis keeps the cell in float32
            np.testing.assert_allclose(mean[name].values, cli[name].values, rtol=1e-6,
                                       atol=1e-5)
        error = float(np.abs(cli.values - mean.values).max()) / float(np.abs(cli).max())
        assert error <= 2e-4, (label, error)
