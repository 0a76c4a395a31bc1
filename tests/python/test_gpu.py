"""device="cuda": every GPU, the same bits as the command line's --device cuda. Skipped, saying
why, where no GPU is usable (this file always runs; only the GPU machine passes it)."""
import h5py
import numpy as np
import pytest

import dcs
from conftest import MOLECULE, cli_points, grid_points, read_pqr, reference, run_cli


@pytest.fixture(scope="module", autouse=True)
def need_gpu():
    try:
        dcs.potential_map(np.zeros((1, 3)), [1.0], grid=3, device="cuda")
    except ValueError as error:
        pytest.skip(f"no usable GPU: {error}")


def test_gpu_against_float64_reference():
    positions, charges = read_pqr()
    v = dcs.potential_map(positions, charges, grid=33, device="cuda")
    assert v.attrs["provenance_backend"] == "cuda"
    want = reference(grid_points(v), positions, charges).reshape(v.shape)
    assert np.abs(v.values - want).max() / np.abs(want).max() < 1e-5


def test_gpu_bit_identical_to_the_command_line(dcs_binary, tmp_path):
    positions, charges = read_pqr()
    run_cli(dcs_binary, "--atoms", MOLECULE, "--grid", 65, "--device", "cuda", "-o",
            tmp_path / "g.h5", cwd=tmp_path)
    v = dcs.potential_map(positions, charges, grid=65, device="cuda")
    with h5py.File(tmp_path / "g.h5") as f:
        assert v.transpose("z", "y", "x").values.tobytes() == f["potential"][()].tobytes()
        assert v.attrs["provenance_device"] == f["provenance"].attrs["device"]


def test_gpu_points_bit_identical_to_the_command_line(dcs_binary, tmp_path):
    positions, charges = read_pqr()
    points = np.round(np.random.default_rng(5).uniform(-25, 25, size=(5000, 3)), 3)
    np.savetxt(tmp_path / "p.csv", points, delimiter=",", fmt="%.3f")
    where, cli = cli_points(dcs_binary, tmp_path, "--points", tmp_path / "p.csv", "--device",
                            "cuda")
    np.testing.assert_array_equal(where, points)
    assert dcs.potential_at(points, positions, charges, device="cuda").tobytes() == cli.tobytes()


def test_gpu_at_atoms_bit_identical_to_the_command_line(dcs_binary, tmp_path):
    positions, charges = read_pqr()
    _, cli = cli_points(dcs_binary, tmp_path, "--at-atoms", "--device", "cuda")
    got = dcs.potential_at_atoms(positions, charges, device="cuda")
    assert got.tobytes() == cli.astype(np.float32).tobytes()
