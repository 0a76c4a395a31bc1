#!/usr/bin/env python3
"""The periodic cell in trajectory runs of the real dcs binary, checked against MDAnalysis on
MDAnalysisTests' real periodic systems (GROMACS TPR+XTC in a rhombic dodecahedron, AMBER
parm7+NetCDF orthorhombic, AMBER parm7+NetCDF truncated octahedron with net charge +2).

    periodic_tests.py --dcs DCS CASE     (run with the venv of scripts/setup-md.sh)

Cases:
  cell_per_frame    /trajectory/dimensions equals MDAnalysis's ts.dimensions, every frame, in
                    three formats (triclinic and orthorhombic)
  bonds_counted     the topology's bonds as MDAnalysis counts them (TPR, PRMTOP)
  whole_from_wrapped  frames with every atom wrapped into the cell (raw `mdrun` output) give
                    the map of MDAnalysis's unwrapped frames (float64 reference), by default;
                    --pbc none averages the pieces in, and says so naming the frames
  jumped_frame      a frame whose molecule moved by one cell vector: without --align named as
                    atoms outside the grid (counted in the file), --strict refuses it (exit 3,
                    nothing written); --center-on puts it back
  fit_outlier       one wrapped frame among whole ones with --pbc none and --align: named as a
                    fit-RMSD outlier; --strict refuses
  no_cell_refused   --center-on on a trajectory without a cell: exit 3 naming the frame
  distance_select   --select with around/byres: judged once on the first listed frame, minimum
                    image in its cell: the atoms of MDAnalysis's select_atoms on that frame, the
                    map of those atoms against the float64 reference; plain distances without a
                    cell; a selection empty in that frame refused naming it
  npt_fractional    a cell that changes (NPT): frames scaled from a real frame (tz2's truncated
                    octahedron, bala's orthorhombic box); each frame's map is the one a run of
                    that frame alone gives (its own cell's points), and 1/s of the first frame's
                    (the potential of a system scaled by s at the same fractional points: a
                    known answer); the mean is the frames' mean, stored with the mean cell
Exit 77 (skipped) where MDAnalysis or MDAnalysisTests is missing.
"""
import bz2
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from md_or_skip import data, mda  # noqa: E402  (exit 77 without MDAnalysis)
import h5py  # noqa: E402
import numpy as np  # noqa: E402
from case_main import cases_of, run_case  # noqa: E402
from verdict import check  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from trajectory_tests import (compare_statistics, dcs, make_whole, reference_statistics,  # noqa: E402
                              run_reference)


def truncoct_parm7(work):
    """MDAnalysisTests ships the truncated octahedron's topology bzip2-compressed."""
    path = os.path.join(work, "tz2.truncoct.parm7")
    with bz2.open(data.PRM7, "rb") as source, open(path, "wb") as target:
        shutil.copyfileobj(source, target)
    return path


def case_cell_per_frame(args, work):
    systems = [("TPR+XTC", data.TPR, data.XTC, "protein"),
               ("parm7+NetCDF", data.PRMncdf, data.NCDF, None),
               ("truncated octahedron", truncoct_parm7(work), data.NCDFtruncoct, None)]
    for label, topology, trajectory, select in systems:
        out = os.path.join(work, "cell.h5")
        options = ["--topology", topology, "--trajectory", trajectory, "--grid", "12",
                   "--device", "cpu", "-o", out, "--force"]
        if select:
            options += ["--select", select]
        dcs(args, *options)
        universe = mda.Universe(topology, trajectory)
        want = np.array([ts.dimensions.copy() for ts in universe.trajectory], dtype=np.float64)
        with h5py.File(out, "r") as h5:
            got = h5["trajectory/dimensions"][...]
            check(h5["trajectory"].attrs["pbc"].startswith("whole"), f"{label}: pbc attribute")
        check(got.shape == want.shape, f"{label}: dimensions {got.shape} != {want.shape}")
        err = np.abs(got - want).max()
        print(f"{label}: cell max difference {err:.2e} ({want[0]})")
        check(err < 1e-3, f"{label}: cells differ by {err}")


def case_bonds_counted(args, work):
    for label, topology, trajectory in (("TPR", data.TPR, data.XTC),
                                        ("PRMTOP", data.PRMncdf, data.NCDF)):
        run = dcs(args, "--topology", topology, "--trajectory", trajectory, "--grid", "8",
                  "--frames", "0", "--device", "cpu", "-o", os.path.join(work, "b.h5"),
                  "--force", "--verbose")
        bonds = len(mda.Universe(topology, trajectory).bonds)
        check(f"{bonds} bonds" in run.stderr,
              f"{label}: MDAnalysis counts {bonds} bonds; dcs said:\n{run.stderr}")


def write_frames(universe, path, frames, move=None):
    """Writes `frames` of `universe` to `path` (TRR: float32 positions and the box), each
    atom's position changed by move(frame, positions, dimensions) when given."""
    with mda.Writer(path, universe.atoms.n_atoms) as writer:
        for f in frames:
            universe.trajectory[f]
            if move is not None:
                universe.atoms.positions = move(f, universe.atoms.positions.copy(),
                                                universe.dimensions)
            writer.write(universe.atoms)


def wrap_atoms(universe):
    def move(_frame, positions, dimensions):
        return mda.lib.distances.apply_PBC(positions, dimensions)
    return move


def case_whole_from_wrapped(args, work):
    # Raw mdrun output: every atom in the cell, the protein cut wherever it crosses a face.
    universe = mda.Universe(data.TPR, data.XTC)
    wrapped = os.path.join(work, "wrapped.trr")
    write_frames(universe, wrapped, [0, 3, 6, 9], wrap_atoms(universe))
    check_cut = mda.Universe(data.TPR, wrapped)
    protein = check_cut.select_atoms("protein")
    longest = max(np.linalg.norm(protein.positions[b[0]] - protein.positions[b[1]])
                  for b in protein.bonds.indices - protein.indices.min())
    check(longest > 10.0, f"the wrapped protein is not cut (longest bond {longest:.1f} Å)")
    out = os.path.join(work, "whole.h5")
    run = dcs(args, "--topology", data.TPR, "--trajectory", wrapped, "--select", "protein",
              "--grid", "16", "--padding", "4", "--device", "cpu", "-o", out)
    check("outside the grid" not in run.stderr, f"whole frames flagged:\n{run.stderr}")
    reference = mda.Universe(data.TPR, wrapped)
    compare_statistics(out, reference_statistics(out, reference, [0, 1, 2, 3], "protein",
                                                 whole_sel="protein"),
                       "wrapped frames made whole")
    with h5py.File(out, "r") as h5:
        check((h5["trajectory/long_bonds"][...] == 0).all(), "long bonds after making whole")
        check(h5["trajectory"].attrs["frames_with_long_bonds"] == "0", "long-bond count")
    # --pbc none: the pieces are averaged in, and the run says which frames have atoms off
    # the grid.
    cut = os.path.join(work, "cut.h5")
    run = dcs(args, "--topology", data.TPR, "--trajectory", wrapped, "--select", "protein",
              "--grid", "16", "--padding", "4", "--device", "cpu", "-o", cut, "--pbc", "none")
    with h5py.File(out, "r") as a, h5py.File(cut, "r") as b:
        diff = np.abs(a["potential"][...] - b["potential"][...]).max()
        scale = np.abs(a["potential"][...]).max()
        check(b["trajectory"].attrs["pbc"].startswith("none"), "pbc none attribute")
    check(diff > 1e-2 * scale, f"--pbc none gave the whole map ({diff:.3g} of {scale:.3g})")


def warned_then_refused(args, common, work, name, warning, frame):
    """dcs `common` writes WORK/NAME.h5 and warns `warning` naming the listed frame `frame`;
    with --strict it exits 3 naming the frame and writes nothing. Returns the map's path."""
    out = os.path.join(work, f"{name}.h5")
    run = dcs(args, *common, "-o", out)
    check(warning in run.stderr and f"frames {frame}" in run.stderr,
          f"frame {frame} ({warning}) is not named:\n{run.stderr}")
    run = dcs(args, *common, "-o", os.path.join(work, f"{name}_strict.h5"), "--strict", rc=3)
    check(f"frame {frame}" in run.stderr and "--strict" in run.stderr, run.stderr)
    left = sorted(f for f in os.listdir(work) if f.startswith(f"{name}_strict"))
    check(left == [], f"--strict left {left}")
    return out


def case_jumped_frame(args, work):
    universe = mda.Universe(data.TPR, data.XTC)

    def jump(frame, positions, dimensions):  # frame 6 moved by the cell's first vector
        if frame != 6:
            return positions
        return positions + mda.lib.mdamath.triclinic_vectors(dimensions)[0]
    jumped = os.path.join(work, "jumped.trr")
    write_frames(universe, jumped, [0, 3, 6, 9], jump)
    common = ["--topology", data.TPR, "--trajectory", jumped, "--select", "protein", "--grid",
              "12", "--device", "cpu"]
    out = warned_then_refused(args, common, work, "jumped", "outside the grid", 2)
    with h5py.File(out, "r") as h5:
        outside = h5["trajectory/atoms_outside_grid"][...]
        check(outside[2] > 3000 and outside[0] == 0 and outside[1] == 0,
              f"atoms outside the grid per frame: {outside}")
        check(h5["trajectory"].attrs["frames_with_atoms_outside_grid"] == "1", "count attribute")
    # --center-on puts the protein back in the middle of the cell in every frame.
    centred = os.path.join(work, "centred.h5")
    run = dcs(args, *common, "-o", centred, "--center-on", "protein")
    check("outside the grid" not in run.stderr, f"--center-on left atoms off the grid:\n{run.stderr}")


def case_fit_outlier(args, work):
    # The raw XTC cuts the protein in every frame: frames made whole, but frame 7 cut.
    universe = mda.Universe(data.TPR, data.XTC)
    wrap = wrap_atoms(universe)

    def move(frame, positions, dimensions):
        if frame == 7:  # moved half a cell, then cut at the faces: the protein in two halves
            centre = positions[universe.select_atoms("protein").indices].mean(axis=0)
            middle = mda.lib.mdamath.triclinic_vectors(dimensions).sum(axis=0) / 2
            return wrap(frame, positions + (middle - centre) + [dimensions[0] / 2, 0, 0],
                        dimensions)
        make_whole(universe, "protein")
        return universe.atoms.positions.copy()
    wrapped_one = os.path.join(work, "one_cut.trr")
    write_frames(universe, wrapped_one, list(range(10)), move)
    common = ["--topology", data.TPR, "--trajectory", wrapped_one, "--select", "protein",
              "--align", "protein and name CA", "--grid", "10", "--device", "cpu", "--pbc",
              "none"]
    out = warned_then_refused(args, common, work, "fit", "RMSD above", 7)
    with h5py.File(out, "r") as h5:
        rmsd = h5["trajectory/fit_rmsd"][...]
        check(h5["trajectory"].attrs["fit_rmsd_outliers"] == "1", "outlier count")
    print(f"fit RMSDs: {np.round(rmsd, 2)}")
    # Made whole (the default), frame 7 is an ordinary frame.
    run = dcs(args, *common[:-2], "-o", os.path.join(work, "fit_whole.h5"))
    check("RMSD above" not in run.stderr, f"a whole frame 7 still stands out:\n{run.stderr}")


def case_no_cell_refused(args, work):
    # adk_dims.dcd stores no cell (MDAnalysis: dimensions None).
    check(mda.Universe(data.PSF, data.DCD).dimensions is None, "the DCD has a cell now?")
    out = os.path.join(work, "nocell.h5")
    run = dcs(args, "--topology", data.PSF, "--trajectory", data.DCD, "--grid", "8", "--device",
              "cpu", "-o", out, "--center-on", "name CA", rc=3)
    check("frame 0" in run.stderr and "no cell" in run.stderr, run.stderr)
    check(os.listdir(work) == [], f"files left: {os.listdir(work)}")
    # --periodic needs every frame's cell.
    run = dcs(args, "--topology", data.PSF, "--trajectory", data.DCD, "--grid", "8", "--device",
              "cpu", "-o", out, "--periodic", rc=3)
    check("frame 0" in run.stderr and "--periodic needs every frame's cell" in run.stderr,
          run.stderr)
    check(os.listdir(work) == [], f"files left: {os.listdir(work)}")
    # Without --center-on the default --pbc whole simply has nothing to do.
    run = dcs(args, "--topology", data.PSF, "--trajectory", data.DCD, "--grid", "8", "--device",
              "cpu", "-o", out, "--frames", "0:3")
    check("has no cell" in run.stderr, f"no word that molecules stay as stored:\n{run.stderr}")


def selected_serials(path):
    with h5py.File(path, "r") as h5:
        return [int(v) for v in h5["atoms/serial"][...]]


def case_distance_select(args, work):
    # The ions within 12 Å of the protein (minimum image, triclinic cell), judged on frame 0:
    # the map of exactly those ions over the frames, against the float64 reference.
    ions = "resname NA+ and around 12 protein"
    out = run_reference(args, work, data.TPR, [data.XTC], "0:10:3", [0, 3, 6, 9], 16, ions,
                        label="ions around the protein")
    universe = mda.Universe(data.TPR, data.XTC)
    want = (universe.select_atoms(ions).indices + 1).tolist()
    check(selected_serials(out) == want, f"ions: {selected_serials(out)} != {want}")
    # Judged on the first listed frame: frame 3 here, residues kept whole.
    text = "byres (resname SOL and around 3.5 resid 10:20)"
    run = dcs(args, "--topology", data.TPR, "--trajectory", data.XTC, "--frames", "3:6",
              "--select", text, "--grid", "12", "--device", "cpu", "-o", out, "--force")
    check("judged once, on frame 3 (minimum image in its cell)" in run.stderr, run.stderr)
    universe.trajectory[3]
    want = (universe.select_atoms(text).indices + 1).tolist()
    got = selected_serials(out)
    print(f"{text}: {len(got)} atoms in frame 3, MDAnalysis {len(want)}")
    check(got == want and len(want) % 3 == 0, f"waters: {len(got)} atoms != {len(want)}")
    # No cell (adk_dims.dcd): plain distances.
    text = "around 4 resid 10"
    run = dcs(args, "--topology", data.PSF, "--trajectory", data.DCD, "--frames", "5:8",
              "--select", text, "--grid", "12", "--device", "cpu", "-o", out, "--force")
    check("no cell: plain distances" in run.stderr, run.stderr)
    psf = mda.Universe(data.PSF, data.DCD)
    psf.trajectory[5]
    want = (psf.select_atoms(text).indices + 1).tolist()
    check(selected_serials(out) == want, f"no cell: {len(selected_serials(out))} != {len(want)}")
    # Empty in the frame judged: exit 2, naming it; nothing written.
    for name in os.listdir(work):
        os.remove(os.path.join(work, name))
    run = dcs(args, "--topology", data.TPR, "--trajectory", data.XTC, "--frames", "2:5",
              "--select", "around 1 resname NOPE", "--grid", "12", "--device", "cpu", "-o",
              out, rc=2)
    check("matches none of the 47681 atoms" in run.stderr and "in frame 2" in run.stderr,
          run.stderr)
    check(os.listdir(work) == [], f"files left: {os.listdir(work)}")


def write_scaled(universe, path, scales):
    """Frame 0 of `universe` scaled by each of `scales` (positions and cell), as TRR frames."""
    universe.trajectory[0]
    positions = universe.atoms.positions.astype(np.float64)
    dimensions = universe.dimensions.astype(np.float64)
    with mda.Writer(path, universe.atoms.n_atoms) as writer:
        for s in scales:
            universe.atoms.positions = (positions * s).astype(np.float32)
            universe.dimensions = np.concatenate([dimensions[:3] * s, dimensions[3:]])
            writer.write(universe.atoms)


def case_npt_fractional(args, work):
    scales = [1.0, 1.04, 0.97]
    for label, topology, trajectory in (("truncated octahedron", truncoct_parm7(work),
                                         data.NCDFtruncoct),
                                        ("orthorhombic", data.PRMncdf, data.NCDF)):
        scaled = os.path.join(work, "scaled.trr")
        write_scaled(mda.Universe(topology, trajectory), scaled, scales)
        out = os.path.join(work, "npt.h5")
        # --min-distance: the 0.1 Å clamp of a point on an atom does not scale with the cell.
        common = ["--topology", topology, "--trajectory", scaled, "--periodic", "--grid", "14",
                  "--device", "cpu", "--force", "--min-distance", "1e-6"]
        run = dcs(args, *common, "-o", out, "--frame-maps")
        check("each frame was sampled at the same fractional coordinates" in run.stdout,
              f"{label}: no cell line in the summary:\n{run.stdout}")
        with h5py.File(os.path.join(work, "npt.frames.h5"), "r") as h5:
            maps = h5["frame_maps"][...].astype(np.float64)
        with h5py.File(out, "r") as h5:
            mean = h5["potential"][...].astype(np.float64)
            note = h5["trajectory"].attrs["cell"]
            dims = h5["trajectory/dimensions"][...]
            cell = [float(v) for v in h5["method"].attrs["cell_lengths"]]
        check("mean cell" in note, f"{label}: /trajectory cell attribute: {note}")
        # Each frame: what a run of that frame alone computes (its own cell's points).
        for k in range(len(scales)):
            alone = os.path.join(work, f"alone{k}.h5")
            dcs(args, *common, "--frames", f"{k}:{k + 1}", "-o", alone)
            with h5py.File(alone, "r") as h5:
                single = h5["potential"][...].astype(np.float64)
            check(np.array_equal(single, maps[k]), f"{label}: frame {k} differs from its own run")
        # The known answer: scaled by s, the potential at the same fractional points is 1/s.
        scale = np.sqrt(np.mean(maps[0] ** 2))
        for k, s in enumerate(scales):
            err = np.sqrt(np.mean((maps[k] * s - maps[0]) ** 2)) / scale
            print(f"{label}: frame {k} (x{s}) against frame 0 / s: {err:.2e} relative RMS")
            check(err < 5e-5, f"{label}: frame {k} is not frame 0 / {s} ({err:.2e})")
        err = np.abs(mean - maps.mean(axis=0)).max() / np.abs(mean).max()
        check(err < 1e-6, f"{label}: the mean is not the frames' mean ({err:.2e})")
        want = [float(np.mean(dims[:, a])) for a in range(3)]
        print(f"{label}: stored cell {cell}, the frames' mean lengths {want}")
        check(np.allclose(cell, want, rtol=1e-9, atol=0.0), f"{label}: cell {cell} != {want}")


if __name__ == "__main__":
    run_case("periodic_tests", cases_of(globals()))
