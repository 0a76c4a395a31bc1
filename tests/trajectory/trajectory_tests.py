#!/usr/bin/env python3
"""Trajectory runs of the real dcs binary (--topology, --trajectory), checked against a float64
reference built from MDAnalysis's reading of the same files (MDAnalysisTests' real trajectories).

    trajectory_tests.py --dcs DCS CASE     (run with the venv of scripts/setup-md.sh)

Cases:
  reference_psf_dcd   adk PSF+DCD, every 10th frame: mean, stdev, min, max vs float64
  reference_align     the same with --select/--align (MDAnalysis fits the frames)
  reference_tpr_xtc   GROMACS TPR+XTC, --select protein
  reference_prmtop_nc AMBER PRMTOP+NetCDF
  workers_identical   --cpu-workers 1 and 3 (and in plane blocks, and 1 vs 3 decoding threads),
                      and a second file: identical
  kill_resume         kill -9 mid-run, --resume: identical to an uninterrupted run
  periodic_workers_identical, periodic_kill_resume: the same with --periodic (AMBER tz2 in its
                      truncated octahedron; AMBER bala), each frame in its own cell
  profile_frames      --profile y: each frame's profile against float64 plane means, their mean
                      the mean map's profile, the long-form CSV
  gpu_workers_refused --gpu-workers 0, 9 and "two": refused, nothing written
  frame_maps          --frame-maps: each frame's map as a one-frame run's, and after kill -9
  jumped_frame_warns  a frame that jumped out of the grid: the box warning says so
  refusals            mismatched atom counts, bad --frames, empty selections: clear errors,
                      nothing written
  outputs             /provenance input_sha256 is sha256sum's of the trajectory file; no model
                      attributes; the structure beside the map (the fitted first frame, PQR)
                      and the preview's PyMOL recipe loading it; a gzipped PSF read as the PSF
Exit 77 (skipped) where MDAnalysis or MDAnalysisTests is missing.
"""
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from md_or_skip import data, mda  # noqa: E402  (exit 77 without MDAnalysis)
import h5py  # noqa: E402
import numpy as np  # noqa: E402
from MDAnalysis.analysis import align  # noqa: E402
from case_main import cases_of, run_case  # noqa: E402
from distances import squared_distances  # noqa: E402
from map_files import grid_points  # noqa: E402
from verdict import check, dcs, fail  # noqa: E402

TOLERANCE = 1e-5  # of max|V|, the specification of float32 paths
# The kill -9 cases' grid: 40^3 points, 98 frames on one thread, a couple of seconds a run. Under
# the sanitizers (DCS_TEST_SANITIZED=1, the "sanitize" test preset) the binary is about 10 times
# slower: 28^3 (a third of the points) keeps each run far longer than the 1 s before the kill.
KILL_GRID = "28" if os.environ.get("DCS_TEST_SANITIZED") == "1" else "40"


def potential(points, positions, charges, factor, r_min):
    """Float64 sum over blocks of 512 atoms. |p - a| is built axis by axis in one (points, 512)
    array (x, y, z squared and added in that order: the bits of ((p - a) ** 2).sum(-1)) without
    a (points, 512, 3) temporary, 5 times faster."""
    out = np.zeros(len(points))
    for start in range(0, len(positions), 512):
        block = positions[start:start + 512].astype(np.float64)
        r = squared_distances(points, block)
        np.sqrt(r, out=r)
        np.maximum(r, r_min, out=r)
        np.divide(charges[start:start + 512], r, out=r)
        out += r.sum(-1)
    return factor * out


def make_whole(universe, whole_sel):
    """Each fragment (bonded molecule) of `whole_sel` made whole in the current frame with its
    first atom kept in place: what dcs --pbc whole does (MDAnalysis's make_whole, whose default
    reference is also the first atom)."""
    from MDAnalysis.lib.mdamath import make_whole as mda_make_whole
    for fragment in universe.select_atoms(whole_sel).fragments:
        if len(fragment) > 1:
            mda_make_whole(fragment, reference_atom=fragment[0])


def reference_statistics(h5path, universe, frames, select=None, align_sel=None, whole_sel=None):
    """Float64 mean, population stdev, min, max over `frames` at the file's grid points, with
    the molecules of `whole_sel` made whole first (raw MD frames cut them at the cell faces)."""
    with h5py.File(h5path, "r") as h5:
        points = grid_points(h5)
        pot = h5["potential"]
        factor = float(pot.attrs["coulomb_factor"])
        r_min = float(pot.attrs["min_distance"])
    atoms = universe.select_atoms(select) if select else universe.atoms
    charges = atoms.charges.astype(np.float64)
    reference = None
    if align_sel:
        universe.trajectory[frames[0]]
        if whole_sel:
            make_whole(universe, whole_sel)
        mobile_ref = universe.select_atoms(align_sel)
        reference = mobile_ref.positions.astype(np.float64).copy()
    maps = []
    for f in frames:
        universe.trajectory[f]
        if whole_sel:
            make_whole(universe, whole_sel)
        pos = atoms.positions.astype(np.float64)
        if align_sel:
            mob = universe.select_atoms(align_sel).positions.astype(np.float64)
            mc, rc = mob.mean(0), reference.mean(0)
            rot, _ = align.rotation_matrix(mob - mc, reference - rc)
            pos = (pos - mc) @ np.asarray(rot).T + rc
        maps.append(potential(points, pos, charges, factor, r_min))
    stack = np.array(maps)
    return stack.mean(0), stack.std(0), stack.min(0), stack.max(0)


def compare_statistics(h5path, ref, label):
    mean, std, lo, hi = ref
    with h5py.File(h5path, "r") as h5:
        got = {"mean": h5["potential"][...].ravel(), "stdev": h5["trajectory/stdev"][...].ravel(),
               "min": h5["trajectory/min"][...].ravel(), "max": h5["trajectory/max"][...].ravel()}
    scale = np.abs(np.concatenate([lo, hi])).max()
    for name, want in (("mean", mean), ("stdev", std), ("min", lo), ("max", hi)):
        err = np.abs(got[name].astype(np.float64) - want).max() / scale
        print(f"{label}: {name} max error {err:.2e} of max|V| {scale:.4g}")
        check(err <= TOLERANCE, f"{label}: {name} error {err:.2e} > {TOLERANCE}")


def run_reference(args, work, topology, trajectories, frames_option, frames, grid, select=None,
                  align_sel=None, label="", whole_sel=None):
    out = os.path.join(work, "m.h5")
    options = ["--topology", topology, "--trajectory", *trajectories, "--frames", frames_option,
               "--grid", str(grid), "--padding", "4", "-o", out, "--device", "cpu"]
    if select:
        options += ["--select", select]
    if align_sel:
        options += ["--align", align_sel]
    dcs(args, *options)
    universe = mda.Universe(topology, *trajectories)
    with h5py.File(out, "r") as h5:
        listed = list(h5["trajectory/frames"][...])
        check(listed == frames, f"frames {listed} != {frames}")
        check(h5["trajectory/time_ps"].shape == (len(frames),), "time_ps")
        check(not os.path.exists(out + ".frames.partial"), "frame statistics file left behind")
    compare_statistics(out, reference_statistics(out, universe, frames, select, align_sel,
                                                 whole_sel), label)
    return out


def case_reference_psf_dcd(args, work):
    run_reference(args, work, data.PSF, [data.DCD], "0:98:10", list(range(0, 98, 10)), 20,
                  label="adk PSF+DCD")


def case_reference_align(args, work):
    out = run_reference(args, work, data.PSF, [data.DCD], "5:60:6", list(range(5, 60, 6)), 18,
                        select="resid 1:120", align_sel="name CA", label="adk aligned")
    with h5py.File(out, "r") as h5:
        rmsd = h5["trajectory/fit_rmsd"][...]
    check(rmsd[0] < 1e-6 and rmsd[1:].min() > 0.1, f"fit RMSDs {rmsd}")


def case_reference_tpr_xtc(args, work):
    # Raw mdrun output: the protein is cut at the cell faces (bonds of 80 Å in MDAnalysis's
    # reading); dcs makes it whole by default, so the reference does too.
    run_reference(args, work, data.TPR, [data.XTC], "::3", [0, 3, 6, 9], 16, select="protein",
                  label="adk TPR+XTC", whole_sel="protein")


def case_reference_prmtop_nc(args, work):
    run_reference(args, work, data.PRMncdf, [data.NCDF], "0:30:4", list(range(0, 30, 4)), 16,
                  label="bala PRMTOP+NetCDF")


PROFILE_NAMES = ("trajectory/profile/potential", "trajectory/profile/frame_potential")


def datasets(path):
    """The map's datasets, with --profile its mean and per-frame profiles, and the per-frame
    profiles' CSV (its bytes) where there is one."""
    with h5py.File(path, "r") as h5:
        names = ["potential", "trajectory/stdev", "trajectory/min", "trajectory/max",
                 "trajectory/frames", "trajectory/time_ps"]
        names += [name for name in PROFILE_NAMES if name in h5]
        found = {name: h5[name][...].tobytes() for name in names}
    csv = profile_frames_csv(path)
    if os.path.exists(csv):
        with open(csv, "rb") as f:
            found["profile_frames.csv"] = f.read()
    return found


def profile_frames_csv(h5path):
    return h5path[:-len(".h5")] + ".profile_frames.csv"


def same_datasets(a, b, label):
    da, db = datasets(a), datasets(b)
    check(da.keys() == db.keys(), f"{label}: {sorted(da)} and {sorted(db)}")
    for name in da:
        check(da[name] == db[name], f"{label}: {name} differs")


def case_workers_identical(args, work):
    common = ["--topology", data.PSF, "--frames", "0:98:7", "--grid", "24", "--device", "cpu",
              "--profile", "x"]  # each frame's x profile: the same bytes too
    one = os.path.join(work, "one.h5")
    three = os.path.join(work, "three.h5")
    dcs(args, *common, "--trajectory", data.DCD, "-o", one, "--cpu-workers", "1",
        "--decode-threads", "1")
    run = dcs(args, *common, "--trajectory", data.DCD, "-o", three, "--cpu-workers", "3",
              "--memory-limit", "600K", "--decode-threads", "3")  # several plane blocks too
    check("3 decoding thread(s)" in run.stderr, f"not 3 decoders:\n{run.stderr}")
    same_datasets(one, three, "1 vs 3 workers and decoders")
    # Two files read as one trajectory: the second copy's frames (98 + 0, 7, ...) are the same
    # coordinates, so the maps are the same bytes; only the frame numbers differ.
    split = os.path.join(work, "split.h5")
    dcs(args, "--topology", data.PSF, "--frames", "98::7", "--grid", "24", "--device", "cpu",
        "--profile", "x", "--trajectory", data.DCD, data.DCD, "-o", split)
    da, db = datasets(one), datasets(split)
    for name in ("potential", "trajectory/stdev", "trajectory/min", "trajectory/max",
                 *PROFILE_NAMES):
        check(da[name] == db[name], f"two files: {name} differs")
    with h5py.File(split, "r") as h5:
        frames = list(h5["trajectory/frames"][...])
    check(frames == list(range(98, 196, 7)), f"two files: frames {frames}")
    # The same frames split into two DCD files written by MDAnalysis (no box: it writes the cell
    # as (0, 1, 0, 1, 1, 0), which chemfiles 0.10.4 read as 0-degree angles until
    # scripts/chemfiles-patches/dcd-boxless-frames.patch).
    u = mda.Universe(data.PSF, data.DCD)
    parts = [os.path.join(work, "a.dcd"), os.path.join(work, "b.dcd")]
    for path, frames in zip(parts, (range(0, 40), range(40, 98))):
        with mda.Writer(path, u.atoms.n_atoms) as w:
            for f in frames:
                u.trajectory[f]
                w.write(u.atoms)
    written = os.path.join(work, "written.h5")
    dcs(args, *common, "--trajectory", *parts, "-o", written)
    da, db = datasets(one), datasets(written)
    for name in ("potential", "trajectory/stdev", "trajectory/min", "trajectory/max",
                 "trajectory/frames"):
        check(da[name] == db[name], f"MDAnalysis-written files: {name} differs")
    print("workers_identical: 1 worker, 3 workers in blocks, two files, MDAnalysis's files: "
          "identical")


def case_kill_resume(args, work):
    common = ["--topology", data.PSF, "--trajectory", data.DCD, "--grid", KILL_GRID, "--device",
              "cpu", "--checkpoint-interval", "0", "--threads", "1", "--profile", "z"]
    kill_and_resume(args, work, common)
    kill_and_resume(args, work, common, drop=".profile.partial")


def case_periodic_workers_identical(args, work):
    """--periodic (AMBER tz2 in its truncated octahedron, each frame's own cell): 1 worker, 3
    workers in plane blocks and 4 threads give the same bytes."""
    from periodic_tests import truncoct_parm7  # the parm7 is bzip2-compressed
    common = ["--topology", truncoct_parm7(work), "--trajectory", data.NCDFtruncoct, "--frames", "0:10:3",
              "--periodic", "--grid", "24", "--device", "cpu", "--profile", "c"]
    one = os.path.join(work, "one.h5")
    three = os.path.join(work, "three.h5")
    dcs(args, *common, "-o", one, "--cpu-workers", "1", "--threads", "1", "--decode-threads",
        "1")
    run = dcs(args, *common, "-o", three, "--cpu-workers", "3", "--threads", "4",
              "--memory-limit", "540K", "--decode-threads", "3")  # several plane blocks too
    check("in blocks of 18" in run.stderr, f"not in plane blocks:\n{run.stderr}")
    same_datasets(one, three, "--periodic, 1 vs 3 workers")
    with h5py.File(one, "r") as h5:
        check(h5["method"].attrs["name"] in ("ewald", b"ewald"), "not a periodic map")
    print("periodic_workers_identical: 1 worker, 3 workers in blocks: identical")


def case_gpu_workers_refused(args, work):
    """--gpu-workers outside 1..8: refused naming the option, nothing written (the identity of
    1, 2 and 3 workers a GPU is trajectory_device_check.py's, on the GPU machine)."""
    for bad in ("0", "9", "two"):
        out = os.path.join(work, "bad.h5")
        run = subprocess.run([args.dcs, "--topology", data.PSF, "--trajectory", data.DCD,
                              "--gpu-workers", bad, "-o", out], capture_output=True, text=True)
        check(run.returncode == 2 and "--gpu-workers" in run.stderr,
              f"--gpu-workers {bad}: exit {run.returncode}, {run.stderr}")
        check(not os.path.exists(out), "a refused run wrote its map")
    print("gpu_workers_refused: 0, 9 and 'two' refused")


def case_periodic_kill_resume(args, work):
    """--periodic (AMBER bala, 30 frames in an orthorhombic box): kill -9 mid-run and --resume
    give the bytes of an uninterrupted run."""
    grid = "12" if os.environ.get("DCS_TEST_SANITIZED") == "1" else "20"
    common = ["--topology", data.PRMncdf, "--trajectory", data.NCDF, "--periodic", "--grid", grid,
              "--device", "cpu", "--checkpoint-interval", "0", "--threads", "1",
              "--decode-threads", "3",  # a resumed block's first frames: decoded, not computed
              "--profile", "a"]
    kill_and_resume(args, work, common)


def kill_once_checkpointing(args, options, out):
    """Starts dcs writing `out`, kills it (-9) a second after its frame statistics file
    appears (a few frames checkpointed), and checks the kill came before the end."""
    proc = subprocess.Popen([args.dcs, *options, "-o", out, "--no-progress"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline and not os.path.exists(out + ".frames.partial"):
        time.sleep(0.05)
    time.sleep(1.0)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    check(os.path.exists(out + ".frames.partial") and not os.path.exists(out),
          "the run finished before the kill, or the kill left no partial")


def kill_and_resume(args, work, common, drop=None):
    """kill -9 mid-run, --resume: the bytes of an uninterrupted run; with `drop`, that scratch
    file beside the output (".profile.partial") is removed after the kill: the frames the
    statistics counted are computed afresh (a warning), not taken without it."""
    whole = os.path.join(work, "whole.h5")
    if not os.path.exists(whole):
        dcs(args, *common, "-o", whole)
    out = os.path.join(work, "dropped.h5" if drop else "killed.h5")
    partial = out + ".frames.partial"
    kill_once_checkpointing(args, common, out)
    if drop:
        os.remove(out + drop)
    resumed = dcs(args, *common, "-o", out, "--resume")
    expected = "the frames are computed afresh" if drop else "resuming the frame statistics"
    check(expected in resumed.stderr, resumed.stderr)
    found = [l for l in resumed.stderr.splitlines() if "found in the checkpoints" in l]
    print(found[0] if found else resumed.stderr)
    same_datasets(whole, out, "kill -9 + --resume")
    check(not os.path.exists(partial), "frame statistics left after the resumed run")
    check(not os.path.exists(out + ".profile.partial"), "plane sums left after the resumed run")


def case_frame_maps(args, work):
    """--frame-maps: every frame's map, each the bytes of a one-frame run on the same grid, and
    after kill -9 + --resume the same file."""
    out = os.path.join(work, "m.h5")
    common = ["--topology", data.PSF, "--trajectory", data.DCD, "--device", "cpu"]
    dcs(args, *common, "--frames", "3:40:9", "--grid", "20", "--frame-maps", "-o", out)
    maps_path = os.path.join(work, "m.frames.h5")
    with h5py.File(out, "r") as h5, h5py.File(maps_path, "r") as fm:
        pot = h5["potential"]
        origin, spacing = pot.attrs["origin"], pot.attrs["spacing"]
        maps = fm["frame_maps"][...]
        frames = list(fm["frames"][...])
        check(frames == [3, 12, 21, 30, 39], f"frames {frames}")
        check(maps.shape == (5,) + pot.shape, f"shape {maps.shape}")
        mean = maps.astype(np.float64).mean(0)
        err = np.abs(mean - pot[...]).max() / np.abs(maps).max()
        check(err < 1e-6, f"mean of the frame maps vs /potential: {err:.2e}")
    grid = ["--origin", *(repr(float(v)) for v in origin), "--spacing", repr(float(spacing[0])),
            "--grid", "20"]
    for j, f in enumerate(frames):
        single = os.path.join(work, f"f{f}.h5")
        dcs(args, *common, "--frames", str(f), *grid, "-o", single)
        with h5py.File(single, "r") as h5:
            check(h5["potential"][...].tobytes() == maps[j].tobytes(),
                  f"frame {f}: frame map differs from the one-frame run")
    # kill -9 and --resume: the frame maps (and the map) as uninterrupted.
    slow = common + ["--grid", KILL_GRID, "--checkpoint-interval", "0", "--threads", "1",
                     "--frame-maps"]
    whole = os.path.join(work, "whole.h5")
    dcs(args, *slow, "-o", whole)
    killed = os.path.join(work, "killed.h5")
    kill_once_checkpointing(args, slow, killed)
    dcs(args, *slow, "-o", killed, "--resume")
    same_datasets(whole, killed, "frame maps run, kill -9 + --resume")
    with h5py.File(os.path.join(work, "whole.frames.h5"), "r") as a, \
            h5py.File(os.path.join(work, "killed.frames.h5"), "r") as b:
        check(a["frame_maps"][...].tobytes() == b["frame_maps"][...].tobytes(),
              "frame maps differ after kill -9 + --resume")
    # The frame maps' partial file lost after the kill: the statistics start afresh too (they
    # counted frames whose maps are gone), the same bytes again.
    lost = os.path.join(work, "lost.h5")
    kill_once_checkpointing(args, slow, lost)
    os.remove(os.path.join(work, "lost.frames.h5.partial"))
    run = dcs(args, *slow, "-o", lost, "--resume")
    check("the frames are computed afresh" in run.stderr, run.stderr)
    with h5py.File(os.path.join(work, "whole.frames.h5"), "r") as a, \
            h5py.File(os.path.join(work, "lost.frames.h5"), "r") as b:
        check(a["frame_maps"][...].tobytes() == b["frame_maps"][...].tobytes(),
              "frame maps differ after their partial file was lost")
    print("frame_maps: one-frame runs, kill -9 + --resume, and a lost partial identical")


def case_profile_frames(args, work):
    """--profile y on a trajectory: each frame's profile against the plane means of a float64
    map of that frame (MDAnalysis's reading of adk), their mean the mean map's profile, the CSV
    the file's numbers; --profile c without a cell refused before any frame."""
    out = os.path.join(work, "p.h5")
    frames = [0, 30, 60, 90]
    dcs(args, "--topology", data.PSF, "--trajectory", data.DCD, "--frames", "0:98:30", "--grid",
        "14", "15", "16", "--padding", "4", "--profile", "y", "-o", out, "--device", "cpu")
    check(not os.path.exists(out + ".profile.partial"), "plane sums left behind")
    with h5py.File(out, "r") as h5:
        points = grid_points(h5)
        shape = h5["potential"].shape  # [z][y][x]
        factor = float(h5["potential"].attrs["coulomb_factor"])
        r_min = float(h5["potential"].attrs["min_distance"])
        p = h5["trajectory/profile"]
        per_frame = p["frame_potential"][...]
        mean = p["potential"][...]
        position = p["position"][...]
        units = p["frame_potential"].attrs["units"]
        listed = list(h5["trajectory/frames"][...])
        times = h5["trajectory/time_ps"][...]
    check(listed == frames, f"frames {listed}")
    check(units in ("kT/e", b"kT/e"), f"units {units}")
    check(per_frame.shape == (4, 15), f"frame_potential shape {per_frame.shape}")
    universe = mda.Universe(data.PSF, data.DCD)
    charges = universe.atoms.charges.astype(np.float64)
    reference, largest = [], 0.0
    for f in frames:
        universe.trajectory[f]
        v = potential(points, universe.atoms.positions.astype(np.float64), charges, factor,
                      r_min).reshape(shape)
        largest = max(largest, np.abs(v).max())
        reference.append(v.mean(axis=(0, 2)))  # over each plane of constant y
    err = np.abs(per_frame - np.array(reference)).max() / largest
    print(f"profile_frames: per-frame profiles' max error {err:.2e} of max|V| {largest:.4g}")
    check(err <= TOLERANCE, f"per-frame profiles off by {err:.2e} of max|V|")
    identity = np.abs(per_frame.mean(0) - mean).max() / largest
    print(f"profile_frames: mean of the frames' profiles - the mean map's: {identity:.2e} of max|V|")
    check(identity <= 1e-6, f"the mean of the per-frame profiles is {identity:.2e} off the mean's")
    with open(profile_frames_csv(out)) as f:
        lines = [line for line in f if not line.startswith("#")]
    check(lines[0].strip() == "frame,time (ps),y (A),potential (kT/e)", f"header {lines[0]}")
    rows = np.array([[float(x) for x in line.split(",")] for line in lines[1:]])
    check(rows.shape == (4 * 15, 4), f"CSV rows {rows.shape}")
    check(np.array_equal(rows[:, 0], np.repeat(frames, 15)), "the CSV's frames")
    check(np.allclose(rows[:, 1], np.repeat(times, 15), rtol=1e-8), "the CSV's times")
    check(np.allclose(rows[:, 2], np.tile(position, 4), rtol=1e-8, atol=1e-12), "positions")
    check(np.allclose(rows[:, 3], per_frame.ravel(), rtol=1e-8, atol=0), "the CSV's potentials")
    refused = os.path.join(work, "c.h5")
    run = dcs(args, "--topology", data.PSF, "--trajectory", data.DCD, "--frames", "0:3", "--grid",
              "8", "--profile", "c", "-o", refused, "--device", "cpu", rc=2)
    check("--profile c:" in run.stderr, run.stderr)  # no cell, or not the cell's grid
    check(not any(n.startswith("c.") for n in os.listdir(work)), f"files left: {os.listdir(work)}")
    print("profile_frames: each frame's profile within tolerance of float64, their mean the "
          "mean map's, the CSV the file's; --profile c without a cell refused")


def case_refusals(args, work):
    out = os.path.join(work, "x.h5")
    for options, rc, needle in (
            (["--topology", data.PSF, "--trajectory", data.XTC], 3, "atoms"),
            (["--topology", data.PSF, "--trajectory", data.DCD, "--frames", "5:2"], 2,
             "selects no frame"),
            (["--topology", data.PSF, "--trajectory", data.DCD, "--frames", "a:b"], 2,
             "not an integer"),
            (["--topology", data.PSF, "--trajectory", data.DCD, "--select", "resname XYZ"], 2,
             "matches none"),
            (["--topology", data.PSF, "--trajectory", data.DCD, "--select", "resname ("], 2,
             "--select"),
            (["--topology", data.PSF], 2, "--trajectory"),
            (["--trajectory", data.DCD], 2, "--topology"),
            (["--atoms", data.PSF, "--frames", "1:2"], 2, "--frames applies"),
            (["--topology", data.PSF, "--trajectory", os.path.join(work, "missing.dcd")], 3,
             "missing.dcd")):
        run = dcs(args, *options, "-o", out, "--grid", "8", rc=rc)
        check(needle in run.stderr, f"{options}: expected '{needle}' in: {run.stderr}")
        check(not os.path.exists(out) and not os.path.exists(out + ".frames.partial"),
              f"{options}: left files")
    # A trajectory cut in the middle of frame 60: refused naming the file and the frame, after
    # 60 frames were computed; neither outputs nor checkpoints are left (the input must change).
    cut = os.path.join(work, "cut.dcd")
    with open(data.DCD, "rb") as f:
        whole = f.read()
    frame_bytes = (len(whole) - 276) // 98  # adk_dims.dcd: 98 frames after its headers
    with open(cut, "wb") as f:
        f.write(whole[:len(whole) - 38 * frame_bytes - frame_bytes // 2])
    run = dcs(args, "--topology", data.PSF, "--trajectory", cut, "--grid", "8", "-o", out,
              "--frame-maps", rc=3)
    check("cut.dcd" in run.stderr and "frame" in run.stderr, run.stderr)
    left = sorted(os.listdir(work))
    check(left == ["cut.dcd"], f"a refused trajectory left {left}")
    print("refusals: every bad input explained, nothing written")


def case_jumped_frame_warns(args, work):
    """A frame whose molecule jumped 70 Å (one box vector, as raw MD output may hold) lies
    outside the grid placed around the first frame: the box warning says so. Its face values
    stay under the colour range (the jumped frame is one of ten), so only the atoms tell; the
    same frames without the jump give no warning."""
    u = mda.Universe(data.PSF, data.DCD)
    paths = {}
    for name, shift in (("steady", 0.0), ("jumped", 70.0)):
        paths[name] = os.path.join(work, f"{name}.dcd")
        with mda.Writer(paths[name], u.atoms.n_atoms) as w:
            for k, _ in enumerate(u.trajectory[:10]):
                if k == 9:
                    u.atoms.translate([shift, 0.0, 0.0])
                w.write(u.atoms)
    for name, path in paths.items():
        run = dcs(args, "--topology", data.PSF, "--trajectory", path, "--grid", "24", "-o",
                  os.path.join(work, f"{name}.h5"))
        outside = "outside the box" in run.stderr
        check(outside == (name == "jumped") and ("box is small" not in run.stderr),
              f"{name}: {run.stderr}")
    print("jumped_frame_warns: the jumped frame's atoms outside the box warned, none without")


def read_pqr_records(path):
    """Positions (N, 3) and charges (N,) of the PQR file dcs writes beside a trajectory's map."""
    positions, charges = [], []
    for line in open(path):
        if line.startswith(("ATOM", "HETATM")):
            positions.append([float(line[30:38]), float(line[38:46]), float(line[46:54])])
            charges.append(float(line[54:].split()[0]))
    return np.array(positions), np.array(charges)


def case_outputs(args, work):
    import gzip
    import hashlib
    import shutil

    out = os.path.join(work, "m.h5")
    common = ["--frames", "0:20:5", "--grid", "12", "--align", "name CA", "--select",
              "resid 1:60", "--device", "cpu"]
    dcs(args, "--topology", data.PSF, "--trajectory", data.DCD, *common, "-o", out)
    sha = subprocess.run(["sha256sum", data.DCD], capture_output=True, text=True,
                         check=True).stdout.split()[0]
    structure = os.path.join(work, "m.pqr")
    with h5py.File(out, "r") as h5:
        prov = h5["provenance"].attrs
        got = prov["input_sha256"]
        got = got.decode() if isinstance(got, bytes) else got
        check(got == sha, f"input_sha256 {got} is not sha256sum's {sha}")
        pot = h5["potential"].attrs
        left = [k for k in ("models", "model", "model_count") if k in pot]
        check(not left, f"a trajectory map carries the PQR path's {left}")
        check(h5["trajectory"].attrs["structure"] in (structure, structure.encode()),
              f"/trajectory structure is {h5['trajectory'].attrs['structure']!r}")
    check(os.path.isfile(structure), "no structure beside the map")
    # The fitted first frame is frame 0 fitted onto itself: its own positions (to the PQR's
    # 3 decimals), with the topology's charges.
    u = mda.Universe(data.PSF, data.DCD)
    atoms = u.select_atoms("resid 1:60")
    positions, charges = read_pqr_records(structure)
    check(len(charges) == len(atoms), f"{len(charges)} atoms in the structure, {len(atoms)} mapped")
    check(np.abs(positions - atoms.positions).max() < 2e-3, "structure positions differ")
    check(np.abs(charges - atoms.charges).max() < 1e-4, "structure charges differ")
    # dcs preview's PyMOL recipe loads it (PyMOL cannot load a DCD alone).
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "python"))
    import dcs_preview
    with h5py.File(out, "r") as h5:
        recipe, _ = dcs_preview.pymol_commands(dcs_preview.MapFile(h5, out), 1.0)
    check(f"load {structure}, mol" in recipe and ".dcd" not in recipe, recipe)
    # A second run over the same outputs is refused without --force (the structure too).
    os.remove(out)
    run = dcs(args, "--topology", data.PSF, "--trajectory", data.DCD, *common, "-o", out, rc=1)
    check("m.pqr" in run.stderr and not os.path.exists(out), run.stderr)
    # A gzipped PSF is read as the PSF: the same map.
    psf_gz = os.path.join(work, "adk.psf.gz")
    with open(data.PSF, "rb") as f, gzip.open(psf_gz, "wb") as g:
        shutil.copyfileobj(f, g)
    dcs(args, "--topology", data.PSF, "--trajectory", data.DCD, *common, "-o", out, "--force")
    gz_out = os.path.join(work, "gz.h5")
    dcs(args, "--topology", psf_gz, "--trajectory", data.DCD, *common, "-o", gz_out)
    with h5py.File(out, "r") as a, h5py.File(gz_out, "r") as b:
        check(a["potential"][...].tobytes() == b["potential"][...].tobytes(),
              "the gzipped PSF gives another map")
        digest = hashlib.sha256(open(psf_gz, "rb").read()).hexdigest()
        check(digest in b["trajectory/sha256"][...].astype(str), "the .psf.gz's checksum")
    # A gzipped PRMTOP too (dcs's own parser, streamed through zlib).
    prmtop_gz = os.path.join(work, "bala.prmtop.gz")
    with open(data.PRMncdf, "rb") as f, gzip.open(prmtop_gz, "wb") as g:
        shutil.copyfileobj(f, g)
    maps = []
    for topology, name in ((data.PRMncdf, "plain.h5"), (prmtop_gz, "gz_prmtop.h5")):
        dcs(args, "--topology", topology, "--trajectory", data.NCDF, "--frames", "0:6:2",
            "--grid", "10", "--device", "cpu", "-o", os.path.join(work, name))
        with h5py.File(os.path.join(work, name), "r") as h5:
            maps.append(h5["potential"][...].tobytes())
    check(maps[0] == maps[1], "the gzipped PRMTOP gives another map")
    print("outputs: provenance, attributes, structure, preview recipe, gzipped PSF and PRMTOP "
          "right")


CASES = cases_of(globals())


if __name__ == "__main__":
    run_case("trajectory_tests", CASES)
