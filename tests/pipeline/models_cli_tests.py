#!/usr/bin/env python3
"""Multi-model inputs (--models) through the real `dcs` binary on the CPU backend: a 3-model
ensemble made from an apbs-data molecule (model 1 as is, model 5 shifted, model 9 perturbed).
--models each writes one map per model that is bit-identical to the model run as its own file;
--models average equals the mean of the three maps within float32 rounding and the float64
reference at sample points; the attributes say which models; --resume never mixes modes;
broken ensembles are refused naming file and line.

Usage: models_cli_tests.py DCS_BINARY SOURCE_DIR CASE
"""
import hashlib
import os
import random
import signal
import subprocess
import sys
import time

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from case_main import run_listed_case  # noqa: E402

DCS = sys.argv[1]
MOLECULE = "/usr/share/apbs/examples/bem/test_proteins/1ajj.pqr"  # 519 atoms, apbs-data
NUMBERS = (1, 5, 9)  # MODEL serial numbers: the output names use them, not the ordinals
# One fixed grid for every run, so that maps of different runs compare point by point.
GRID = ["--origin", "-22", "-14", "-8", "--spacing", "0.9", "--grid", "40", "36", "44"]
COMMON = ["--device", "cpu", "--no-progress"]
CASES = {}


def case(function):
    CASES[function.__name__] = function
    return function


def dcs(args, cwd, expect=0):
    proc = subprocess.run([DCS] + args, cwd=cwd, capture_output=True, text=True, timeout=600)
    if proc.returncode != expect:
        raise AssertionError(f"dcs {' '.join(args)}: exit {proc.returncode}, expected {expect}\n"
                             f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc


def read_molecule():
    atoms = []
    with open(MOLECULE) as handle:
        for line in handle:
            f = line.split()
            if f and f[0] in ("ATOM", "HETATM"):
                # ATOM serial name resName resSeq x y z q r (no chain ID in this file)
                atoms.append((f[1], f[2], f[3], f[4], np.array([float(v) for v in f[5:8]]),
                              float(f[8]), float(f[9])))
    assert len(atoms) == 519, len(atoms)
    return atoms


def model_coordinates(atoms):
    """Model 1 as read, model 5 shifted by (1.3, -0.7, 0.4) A, model 9 perturbed by up to
    0.3 A per coordinate (fixed seed)."""
    rng = random.Random(20261123)
    base = [a[4] for a in atoms]
    return {1: base,
            5: [p + np.array([1.3, -0.7, 0.4]) for p in base],
            9: [p + np.array([rng.uniform(-0.3, 0.3) for _ in range(3)]) for p in base]}


def atom_lines(atoms, coordinates):
    return [f"ATOM {a[0]} {a[1]} {a[2]} {a[3]} {p[0]:.4f} {p[1]:.4f} {p[2]:.4f} {a[5]:.5f} {a[6]:.5f}\n"
            for a, p in zip(atoms, coordinates)]


def write_ensemble(tmp):
    """ens.pqr (three models) and m1.pqr, m5.pqr, m9.pqr (each model alone). Returns the
    coordinates per model and the charges."""
    atoms = read_molecule()
    models = model_coordinates(atoms)
    with open(os.path.join(tmp, "ens.pqr"), "w") as ens:
        ens.write("REMARK 3-model ensemble of 1ajj for dcs --models\n")
        for number in NUMBERS:
            ens.write(f"MODEL     {number:4d}\n")
            ens.writelines(atom_lines(atoms, models[number]))
            ens.write("TER\nENDMDL\n")
            with open(os.path.join(tmp, f"m{number}.pqr"), "w") as alone:
                alone.writelines(atom_lines(atoms, models[number]))
        ens.write("END\n")
    # The charges and coordinates as dcs reads them (the files hold 4 and 5 decimals).
    rounded = {n: np.array([[float(f"{c:.4f}") for c in p] for p in models[n]]) for n in NUMBERS}
    charges = np.array([float(f"{a[5]:.5f}") for a in atoms])
    return rounded, charges


def potential(path):
    with h5py.File(path, "r") as f:
        return f["potential"][...], dict(f["potential"].attrs)


def sha256(path):
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


@case
def each_equals_each_model_alone(tmp):
    write_ensemble(tmp)
    proc = dcs(["--atoms", "ens.pqr", "--models", "each", "--dx"] + GRID + COMMON, tmp)
    for number in NUMBERS:
        if f"ens.pqr (model {number}) -> ens.model{number}.h5, ens.model{number}.dx" not in proc.stdout:
            raise AssertionError(proc.stdout)
        if f"model {number} (of 3 models; --models each)" not in proc.stdout:
            raise AssertionError(proc.stdout)
        dcs(["--atoms", f"m{number}.pqr"] + GRID + COMMON, tmp)
        each, attrs = potential(os.path.join(tmp, f"ens.model{number}.h5"))
        alone, _ = potential(os.path.join(tmp, f"m{number}.h5"))
        if each.shape != alone.shape or each.tobytes() != alone.tobytes():
            raise AssertionError(f"model {number}: the --models each map differs from the model "
                                 f"alone (max |diff| {np.abs(each - alone).max()})")
        if (attrs["models"], int(attrs["model"]), int(attrs["model_count"])) != ("each", number, 3):
            raise AssertionError(f"model {number}: attributes {attrs}")
        with h5py.File(os.path.join(tmp, f"ens.model{number}.h5"), "r") as f:
            if f["provenance"].attrs["input_sha256"] != sha256(os.path.join(tmp, "ens.pqr")):
                raise AssertionError("the input SHA-256 is not the ensemble file's")
            if f["atoms"].attrs["count"] != 519:
                raise AssertionError(f"model {number}: {f['atoms'].attrs['count']} atoms stored")
        with open(os.path.join(tmp, f"ens.model{number}.dx")) as dx:
            if f"# models: model {number} (of 3 models; --models each)" not in dx.read(4000):
                raise AssertionError(f"ens.model{number}.dx: no models comment")
    # The default, first: the first model, and the attributes say so.
    dcs(["--atoms", "ens.pqr", "-o", "first.h5"] + GRID + COMMON, tmp)
    first, attrs = potential(os.path.join(tmp, "first.h5"))
    if first.tobytes() != potential(os.path.join(tmp, "m1.h5"))[0].tobytes():
        raise AssertionError("--models first is not model 1")
    if (attrs["models"], int(attrs["model"]), int(attrs["model_count"])) != ("first", 1, 3):
        raise AssertionError(f"first: attributes {attrs}")
    # -o names the maps of one input: out.model<N>.h5 (and the DX beside them).
    os.makedirs(os.path.join(tmp, "sub"))
    dcs(["--atoms", "ens.pqr", "--models", "each", "-o", "sub/out.h5", "--dx"] + GRID + COMMON, tmp)
    left = sorted(os.listdir(os.path.join(tmp, "sub")))
    want = sorted([f"out.model{n}.h5" for n in NUMBERS] + [f"out.model{n}.dx" for n in NUMBERS])
    if left != want:
        raise AssertionError(f"sub/: {left}, expected {want}")
    # A batch: a single-model file is model 1 of 1.
    dcs(["--atoms", "ens.pqr", "m5.pqr", "--models", "each", "--output-dir", "batch"] + GRID + COMMON,
        tmp)
    left = sorted(os.listdir(os.path.join(tmp, "batch")))
    if left != sorted([f"ens.model{n}.h5" for n in NUMBERS] + ["m5.model1.h5"]):
        raise AssertionError(f"batch/: {left}")


@case
def average_is_the_mean_of_the_models(tmp):
    models, charges = write_ensemble(tmp)
    dcs(["--atoms", "ens.pqr", "--models", "each"] + GRID + COMMON, tmp)
    proc = dcs(["--atoms", "ens.pqr", "--models", "average", "--validate"] + GRID + COMMON, tmp)
    if "mean of 3 models (--models average)" not in proc.stdout:
        raise AssertionError(proc.stdout)
    average, attrs = potential(os.path.join(tmp, "ens.h5"))
    maps = [potential(os.path.join(tmp, f"ens.model{n}.h5"))[0].astype(np.float64) for n in NUMBERS]
    mean = sum(maps) / 3.0
    scale = np.abs(mean).max()
    error = np.abs(average.astype(np.float64) - mean).max() / scale
    # Each map is within 1e-5 of max|V| of its float64 value (the float32 kernels' specification).
    if error > 1e-5:
        raise AssertionError(f"average vs mean of the three maps: {error:.3e} of max|V|")
    print(f"average vs mean of --models each: max |diff| {error:.2e} of max|V|")
    if attrs["models"] != "average" or int(attrs["model_count"]) != 3 or "model" in attrs:
        raise AssertionError(f"attributes {attrs}")
    if list(attrs["model_numbers"]) != list(NUMBERS):
        raise AssertionError(f"model_numbers {attrs['model_numbers']}")

    # The float64 reference at sample points: V = C * sum over every model of (q/3) / max(r, r_min).
    factor, r_min = float(attrs["coulomb_factor"]), float(attrs["min_distance"])
    origin, spacing = np.array(attrs["origin"]), np.array(attrs["spacing"])
    positions = np.concatenate([models[n] for n in NUMBERS])
    q = np.concatenate([charges] * 3) / 3.0
    rng = np.random.default_rng(7)
    nz, ny, nx = average.shape
    worst = 0.0
    for _ in range(300):
        k, j, i = rng.integers(nz), rng.integers(ny), rng.integers(nx)
        point = origin + spacing * np.array([i, j, k])
        r = np.maximum(np.linalg.norm(positions - point, axis=1), r_min)
        reference = factor * np.sum(q / r)
        worst = max(worst, abs(float(average[k, j, i]) - reference))
    if worst / scale > 1e-5:
        raise AssertionError(f"average vs float64 reference: {worst / scale:.3e} of max|V|")

    with h5py.File(os.path.join(tmp, "ens.h5"), "r") as f:
        if f["atoms"].attrs["count"] != 3 * 519:
            raise AssertionError(f"{f['atoms'].attrs['count']} atoms stored, expected 1557")
        stored = f["atoms/charge"][...]
        if not np.array_equal(stored, q):
            raise AssertionError("the stored charges are not the charges / 3")
        if f["provenance"].attrs["input_sha256"] != sha256(os.path.join(tmp, "ens.pqr")):
            raise AssertionError("the input SHA-256 is not the ensemble file's")
        if not f["validation"].attrs["passed"]:
            raise AssertionError("--validate did not pass")

    # Without a fixed grid the box is placed around every model's atoms (10 A padding).
    dcs(["--atoms", "ens.pqr", "--models", "average", "--spacing", "1", "-o", "auto.h5"] + COMMON, tmp)
    _, attrs = potential(os.path.join(tmp, "auto.h5"))
    low = positions.min(axis=0) - 10.0
    high = positions.max(axis=0) + 10.0
    top = np.array(attrs["origin"]) + np.array(attrs["spacing"]) * (np.array(attrs["dims"]) - 1)
    if np.any(np.array(attrs["origin"]) > low + 1e-6) or np.any(top < high - 1e-6):
        raise AssertionError(f"grid {attrs['origin']}..{top} does not hold {low}..{high}")


@case
def each_shares_one_grid_unless_asked(tmp):
    write_ensemble(tmp)
    dcs(["--atoms", "ens.pqr", "--models", "each", "--spacing", "1", "--output-dir", "common"]
        + COMMON, tmp)
    dcs(["--atoms", "ens.pqr", "--models", "average", "--spacing", "1", "-o", "avg.h5"] + COMMON, tmp)
    _, avg = potential(os.path.join(tmp, "avg.h5"))
    for number in NUMBERS:
        _, attrs = potential(os.path.join(tmp, "common", f"ens.model{number}.h5"))
        for key in ("origin", "spacing", "dims"):
            if not np.array_equal(attrs[key], avg[key]):
                raise AssertionError(f"model {number}: {key} {attrs[key]} is not the common "
                                     f"grid's {avg[key]}")
    dcs(["--atoms", "ens.pqr", "--models", "each", "--model-grid", "own", "--spacing", "1",
         "--output-dir", "own"] + COMMON, tmp)
    for number in NUMBERS:
        dcs(["--atoms", f"m{number}.pqr", "--spacing", "1", "--output-dir", "alone"] + COMMON, tmp)
        own, attrs = potential(os.path.join(tmp, "own", f"ens.model{number}.h5"))
        alone, alone_attrs = potential(os.path.join(tmp, "alone", f"m{number}.h5"))
        if not np.array_equal(attrs["origin"], alone_attrs["origin"]) or own.tobytes() != alone.tobytes():
            raise AssertionError(f"model {number}: --model-grid own is not the model's own map")
    _, five = potential(os.path.join(tmp, "own", "ens.model5.h5"))
    _, one = potential(os.path.join(tmp, "own", "ens.model1.h5"))
    if np.array_equal(five["origin"], one["origin"]):
        raise AssertionError("the shifted model has the first model's grid under --model-grid own")
    dcs(["--atoms", "ens.pqr", "--models", "each", "--model-grid", "mine"] + COMMON, tmp, expect=2)
    dcs(["--atoms", "ens.pqr", "--models", "all"] + COMMON, tmp, expect=2)


@case
def resume_never_mixes_models(tmp):
    write_ensemble(tmp)
    # A complete output of another mode is refused, naming the setting.
    dcs(["--atoms", "ens.pqr", "--models", "average", "-o", "out.h5"] + GRID + COMMON, tmp)
    proc = dcs(["--atoms", "ens.pqr", "-o", "out.h5", "--resume"] + GRID + COMMON, tmp, expect=1)
    if "models was average of 3, now first (model 1)" not in proc.stderr:
        raise AssertionError(proc.stderr)
    # The same mode is skipped.
    proc = dcs(["--atoms", "ens.pqr", "--models", "average", "-o", "out.h5", "--resume"] + GRID
               + COMMON, tmp)
    if "complete already" not in proc.stdout:
        raise AssertionError(proc.stdout)
    # A partial file of another mode: killed while computing, resumed with another --models.
    args = ["--atoms", "ens.pqr", "--models", "average", "--grid", "160", "--threads", "1",
            "--memory-limit", "4M", "--checkpoint-interval", "0", "-o", "big.h5"] + COMMON
    partial = os.path.join(tmp, "big.h5.partial")
    run = subprocess.Popen([DCS] + args, cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while not os.path.exists(partial) and run.poll() is None and time.time() < deadline:
        time.sleep(0.005)
    time.sleep(0.05)
    run.send_signal(signal.SIGKILL)
    run.communicate(timeout=60)
    if run.returncode == 0 or not os.path.exists(partial):
        raise AssertionError("the run finished before the kill; no partial file to resume")
    resumed = list(args)
    resumed[resumed.index("average")] = "first"
    proc = dcs(resumed + ["--resume"], tmp, expect=2)
    if "models was average of 3, now first (model 1)" not in proc.stderr:
        raise AssertionError(proc.stderr)


@case
def broken_ensembles_are_refused_with_file_and_line(tmp):
    atoms = read_molecule()
    models = model_coordinates(atoms)
    lines = atom_lines(atoms, models[1])
    # Model 2 lacks its last atom, and the name of atom 10 of model 3 differs.
    renamed = list(lines)
    renamed[9] = renamed[9].replace(f" {atoms[9][1]} ", " XX ", 1)
    text = (["MODEL 1\n"] + lines + ["ENDMDL\n", "MODEL 2\n"] + lines[:-1] + ["ENDMDL\n"])
    with open(os.path.join(tmp, "short.pqr"), "w") as handle:
        handle.writelines(text)
    endmdl_line = len(text)
    proc = dcs(["--atoms", "short.pqr", "--models", "average"] + COMMON, tmp, expect=3)
    if f"short.pqr:{endmdl_line}: model 2 ends after 518 atoms but model 1 has 519" not in proc.stderr:
        raise AssertionError(proc.stderr)
    text = ["MODEL 1\n"] + lines + ["ENDMDL\n", "MODEL 2\n"] + renamed + ["ENDMDL\n"]
    with open(os.path.join(tmp, "renamed.pqr"), "w") as handle:
        handle.writelines(text)
    line = 1 + 519 + 2 + 10
    proc = dcs(["--atoms", "renamed.pqr", "--models", "average"] + COMMON, tmp, expect=3)
    if f"renamed.pqr:{line}: atom 10 of model 2 is 'XX " not in proc.stderr:
        raise AssertionError(proc.stderr)
    # --models each accepts models that differ.
    dcs(["--atoms", "short.pqr", "--models", "each", "--grid", "16"] + COMMON, tmp)
    if sorted(f for f in os.listdir(tmp) if f.endswith(".h5")) != ["short.model1.h5", "short.model2.h5"]:
        raise AssertionError(os.listdir(tmp))
    # Pairing errors name their line, for each and average; first stays lenient and says how to
    # read the other models.
    with open(os.path.join(tmp, "unpaired.pqr"), "w") as handle:
        handle.writelines(["MODEL 1\n"] + lines + ["MODEL 2\n"] + lines + ["ENDMDL\n"])
    for mode in ("each", "average"):
        proc = dcs(["--atoms", "unpaired.pqr", "--models", mode] + COMMON, tmp, expect=3)
        if f"unpaired.pqr:{2 + 519}: MODEL record inside model 1" not in proc.stderr:
            raise AssertionError(proc.stderr)
    proc = dcs(["--atoms", "unpaired.pqr", "--grid", "16"] + COMMON, tmp)
    if "--models each or --models average reads every model" not in proc.stderr:
        raise AssertionError(proc.stderr)
    # A batch with --keep-going: the broken file fails, the other maps are written.
    proc = dcs(["--atoms", "unpaired.pqr", "short.pqr", "--models", "each", "--grid", "16",
                "--keep-going", "--output-dir", "kept"] + COMMON, tmp, expect=3)
    if sorted(os.listdir(os.path.join(tmp, "kept"))) != ["short.model1.h5", "short.model2.h5"]:
        raise AssertionError(os.listdir(os.path.join(tmp, "kept")))
    if "unpaired.pqr: FAILED" not in proc.stdout:
        raise AssertionError(proc.stdout)


if __name__ == "__main__":
    if not os.path.exists(MOLECULE) and sys.argv[3] != "list":
        print(f"skipped: {MOLECULE} (Debian package apbs-data) is missing")
        sys.exit(77)
    run_listed_case(CASES, "dcs-models-")
