#!/usr/bin/env python3
"""--method msm through the real `dcs` binary: the map against --method exact within its
--msm-error target, the same bytes for 1 or 3 CPU workers and any thread count, the usage
errors (a physics model MSM lacks, a target out of range, a GPU device, points), the error every
msm run measures (summary line, /method in the file, exit 4 when missed; with --null-output
too), --device auto (the GPUs when there are any, the CPU otherwise, with the reference where
the map ran) and an interrupted run resumed to the same bytes.

Usage: cli_msm_tests.py DCS_BINARY SOURCE_DIR CASE
"""
import math
import os
import signal
import subprocess
import sys
import tempfile
import time

import h5py

DCS, SOURCE = sys.argv[1], sys.argv[2]
MOLECULE = os.path.join(SOURCE, "data", "2lzt.pqr")
CASES = {}


def case(function):
    CASES[function.__name__] = function
    return function


def run(args, cwd, expect, env=None):
    proc = subprocess.run([DCS] + args, cwd=cwd, capture_output=True, text=True, timeout=600,
                          env=env)
    if proc.returncode != expect:
        raise AssertionError(f"dcs {' '.join(args)}: exit {proc.returncode}, expected {expect}\n"
                             f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc


def potential(path):
    with h5py.File(path, "r") as f:
        return f["potential"][()]


def compute(tmp, name, *extra):
    out = os.path.join(tmp, name)
    run(["--atoms", MOLECULE, "--grid", "41", "--device", "cpu", "-o", out, *extra], tmp, 0)
    return out


@case
def msm_meets_its_target_against_exact(tmp):
    exact = potential(compute(tmp, "exact.h5"))
    for target in ("1e-2", "1e-3", "1e-4"):
        msm = potential(compute(tmp, f"msm{target}.h5", "--method", "msm", "--msm-error", target))
        diff = sum(float(a - b) ** 2 for a, b in zip(msm.ravel(), exact.ravel()))
        norm = sum(float(b) ** 2 for b in exact.ravel())
        error = math.sqrt(diff / norm)
        print(f"--msm-error {target}: relative RMS {error:.3e} against --method exact")
        if not error <= float(target):
            raise AssertionError(f"--msm-error {target}: measured {error:.3e}")
        if not error > 1e-8:
            raise AssertionError("the msm map equals the exact one: was MSM used at all?")


@case
def msm_same_bytes_for_any_workers_and_threads(tmp):
    one = potential(compute(tmp, "one.h5", "--method", "msm", "--threads", "1"))
    many = potential(compute(tmp, "many.h5", "--method", "msm", "--cpu-workers", "3",
                             "--threads", "3"))
    if one.tobytes() != many.tobytes():
        raise AssertionError("1 worker and 3 workers gave different maps")


@case
def msm_usage_errors(tmp):
    base = ["--atoms", MOLECULE, "--grid", "17", "--device", "cpu", "--method", "msm", "-o",
            os.path.join(tmp, "x.h5")]
    proc = run(base + ["--ionic-strength", "0.15"], tmp, 2)
    if "--method msm supports the Coulomb model only" not in proc.stderr:
        raise AssertionError(proc.stderr)
    run(base + ["--msm-error", "0"], tmp, 2)
    run(base + ["--msm-error", "1e-7"], tmp, 2)
    run(["--atoms", MOLECULE, "--method", "fast"], tmp, 2)
    # Points are not computed by MSM: refused rather than computed exactly under an msm label.
    for points in (["--at-atoms"], ["--points", MOLECULE]):
        proc = run(["--atoms", MOLECULE, "--device", "cpu", "--method", "msm", "-o",
                    os.path.join(tmp, "p.h5")] + points, tmp, 2)
        if "--method msm computes maps only" not in proc.stderr:
            raise AssertionError(proc.stderr)


@case
def msm_reports_its_measured_error(tmp):
    """Every msm run measures its error against the float64 direct sum at the --validate sample
    and writes it in the summary and in /method; the measure agrees with the whole map's error
    against --method exact."""
    exact_path = os.path.join(tmp, "exact.h5")
    run(["--atoms", MOLECULE, "--grid", "41", "--device", "cpu", "-o", exact_path], tmp, 0)
    msm_path = os.path.join(tmp, "msm.h5")
    proc = run(["--atoms", MOLECULE, "--grid", "41", "--device", "cpu", "--method", "msm",
                "--validate-points", "2000", "-o", msm_path], tmp, 0)
    line = [l for l in proc.stdout.splitlines() if l.strip().startswith("msm error")]
    if not line or "target 1e-03: met" not in line[0]:
        raise AssertionError(f"no msm error line in the summary:\n{proc.stdout}")
    print(line[0])
    with h5py.File(msm_path, "r") as f:
        m = dict(f["method"].attrs)
        msm = f["potential"][()]
    with h5py.File(exact_path, "r") as f:
        exact = f["potential"][()]
        if f["method"].attrs["name"] != "exact":
            raise AssertionError("an exact run's /method name is not exact")
    for key in ("name", "spacing", "cutoff", "order", "split", "target", "measured", "points",
                "all_points", "rms_rel_error", "max_rel_error", "met"):
        if key not in m:
            raise AssertionError(f"/method has no {key}: {sorted(m)}")
    if not (m["name"] == "msm" and m["met"] and m["measured"] and m["target"] == 1e-3 and
            m["points"] >= 1900 and 0 < m["rms_rel_error"] <= 1e-3):
        raise AssertionError(f"/method: {m}")
    whole = math.sqrt(float(((msm.astype("f8") - exact) ** 2).sum()) /
                      float((exact.astype("f8") ** 2).sum()))
    print(f"measured at {m['points']} points: {m['rms_rel_error']:.3e}; whole map against "
          f"--method exact: {whole:.3e}")
    if not whole / 3 <= m["rms_rel_error"] <= whole * 3:
        raise AssertionError("the sampled error is far from the whole map's")


@case
def null_output_still_checks_the_values(tmp):
    """--null-output keeps no map, but an msm run still measures its error and --validate still
    validates: at the same points (the extremes found as the slabs pass) and with the same
    numbers as the run that writes the file, and a missed target still exits 4."""
    def lines(proc, prefix):
        return [l.strip() for l in proc.stdout.splitlines() if l.strip().startswith(prefix)]
    for extra, prefix in ((["--method", "msm"], "msm error"), (["--validate"], "validate")):
        args = ["--atoms", MOLECULE, "--grid", "47", "--device", "cpu", "--no-progress", *extra]
        written = lines(run(args + ["-o", os.path.join(tmp, "map.h5"), "--force"], tmp, 0), prefix)
        kept = lines(run(args + ["--null-output"], tmp, 0), prefix)
        print(kept)
        if not written or kept != written:
            raise AssertionError(f"{extra}: the file run says {written}, --null-output {kept}")
    env = dict(os.environ, DCS_MSM_TESTING_PARAMETERS="4 8 4 1")
    proc = run(["--atoms", MOLECULE, "--grid", "33", "--device", "cpu", "--method", "msm",
                "--msm-error", "1e-5", "--null-output"], tmp, 4, env=env)
    if "--method msm missed its error target" not in proc.stderr:
        raise AssertionError(proc.stderr)


@case
def msm_device_auto_and_its_reference(tmp):
    """--method msm with --device auto (the default) runs where exact would: on the GPUs when
    there are any, else on the CPU; -v says where the float64 reference of its error check ran
    (the lead GPU, or the CPU's threads), and the map is the --device cpu run's without a GPU."""
    out = os.path.join(tmp, "auto.h5")
    proc = run(["--atoms", MOLECULE, "--grid", "33", "--method", "msm", "-v", "--no-progress",
                "-o", out], tmp, 0)
    log = proc.stdout + proc.stderr
    line = [l for l in log.splitlines() if "float64 reference at" in l]
    if not line:
        raise AssertionError(f"-v logged no float64 reference line:\n{log}")
    print(line[0])
    if "no usable GPU" in log:
        if " on CPU, " not in line[0]:
            raise AssertionError(f"no GPU, but the reference did not run on the CPU: {line[0]}")
        cpu = os.path.join(tmp, "cpu.h5")
        run(["--atoms", MOLECULE, "--grid", "33", "--method", "msm", "--device", "cpu", "-o",
             cpu], tmp, 0)
        if potential(out).tobytes() != potential(cpu).tobytes():
            raise AssertionError("--device auto without a GPU differs from --device cpu")
    elif "cuda:" not in line[0]:
        raise AssertionError(f"a GPU is present, but the reference ran elsewhere: {line[0]}")
    with h5py.File(out, "r") as f:
        if not (f["method"].attrs["name"] == "msm" and f["method"].attrs["met"]):
            raise AssertionError(dict(f["method"].attrs))


@case
def msm_missing_its_target_exits_4(tmp):
    """Parameters far too coarse for the target (DCS_MSM_TESTING_PARAMETERS, a testing aid):
    the run says so, exits 4 like a failed --validate, and writes nothing."""
    env = dict(os.environ, DCS_MSM_TESTING_PARAMETERS="4 8 4 1")
    out = os.path.join(tmp, "coarse.h5")
    proc = run(["--atoms", MOLECULE, "--grid", "33", "--device", "cpu", "--method", "msm",
                "--msm-error", "1e-5", "-o", out], tmp, 4, env=env)
    if "--method msm missed its error target" not in proc.stderr:
        raise AssertionError(proc.stderr)
    left = [n for n in os.listdir(tmp) if n.startswith("coarse")]
    if left:
        raise AssertionError(f"left behind: {left}")
    # The same coarse parameters meet a loose target.
    run(["--atoms", MOLECULE, "--grid", "33", "--device", "cpu", "--method", "msm",
         "--msm-error", "1e-1", "-o", out], tmp, 0, env=env)


@case
def msm_trajectory_mean_is_not_measured(tmp):
    """A trajectory's mean map is no single atom set's potential: msm computes it, says that its
    error is not measured, and writes /method measured = false (instead of comparing the mean
    with one frame and failing)."""
    sys.path.insert(0, os.path.join(SOURCE, "bench"))
    import numpy as np
    import trajectory_bench
    rng = np.random.default_rng(7)
    positions = rng.uniform(-15, 15, (400, 3))
    trajectory_bench.write_pqr(os.path.join(tmp, "top.pqr"), positions, rng.choice([-0.5, 0.5], 400))
    frames = np.stack([positions + rng.normal(0, 0.3, positions.shape) for _ in range(3)])
    trajectory_bench.write_dcd(os.path.join(tmp, "traj.dcd"), frames.astype(np.float32))
    out = os.path.join(tmp, "mean.h5")
    proc = run(["--topology", "top.pqr", "--trajectory", "traj.dcd", "--grid", "25", "--device",
                "cpu", "--method", "msm", "-o", out], tmp, 0)
    if "msm error not measured" not in proc.stdout:
        raise AssertionError(proc.stdout)
    with h5py.File(out, "r") as f:
        if f["method"].attrs["name"] != "msm" or f["method"].attrs["measured"]:
            raise AssertionError(dict(f["method"].attrs))


@case
def msm_interrupted_then_resumed_same_bytes(tmp):
    """SIGTERM in the middle of an msm map, then --resume: the same bytes as a run never
    interrupted (and the resumed run really reused slabs)."""
    # 241^3: 8 slabs of 31 planes. Under the sanitizers (DCS_TEST_SANITIZED=1, the "sanitize"
    # test preset) 161^3, 8 slabs of 21 planes: a run takes 2.2 s there instead of 5.5 s, still
    # longer than an unsanitized 241^3 one, and the SIGTERM still lands after 2 of 8 slabs.
    grid = "161" if os.environ.get("DCS_TEST_SANITIZED") == "1" else "241"
    args = ["--atoms", MOLECULE, "--grid", grid, "--device", "cpu", "--method", "msm",
            "--threads", "1", "--checkpoint-interval", "0", "--no-progress"]
    whole = os.path.join(tmp, "whole.h5")
    run(args + ["-o", whole], tmp, 0)
    out = os.path.join(tmp, "cut.h5")
    proc = subprocess.Popen([DCS] + args + ["-o", out], cwd=tmp, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    done = 0
    while time.time() < deadline and proc.poll() is None and done < 24:  # a tenth of 241 planes
        time.sleep(0.05)
        try:
            with h5py.File(out + ".partial", "r", locking=False) as f:
                done = int(f["resume/plane_done"][...].sum())
        except Exception:
            continue
    if proc.poll() is not None:
        raise AssertionError(f"the run ended before it could be interrupted:\n{proc.communicate()}")
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    if proc.returncode != 143 or not os.path.exists(out + ".partial"):
        raise AssertionError(f"exit {proc.returncode}, partial kept: "
                             f"{os.path.exists(out + '.partial')}\n{err}")
    resumed = run(args + ["-o", out, "--resume"], tmp, 0)
    line = [l for l in resumed.stdout.splitlines() if "resumed" in l]
    if not line or line[0].strip().split()[1] == "0" or line[0].rstrip().endswith(" 0 computed"):
        raise AssertionError(f"not resumed in the middle:\n{resumed.stdout}")
    print(line[0])
    if potential(whole).tobytes() != potential(out).tobytes():
        raise AssertionError("the resumed msm map differs from the uninterrupted one")


@case
def msm_says_when_it_is_expected_slower_than_exact(tmp):
    """Issue 38 item 10, scaled down: many atoms in a small box at --msm-error 1e-5 is estimated
    slower than exact by more than the margin: a warning with both estimates and the advice,
    and the estimates in /method. 2lzt on 97^3 at the default target: no warning."""
    import random
    rng = random.Random(1)
    dense = os.path.join(tmp, "dense.xyzq")
    with open(dense, "w") as f:
        for _ in range(8000):
            f.write(" ".join(f"{rng.uniform(0, 20):.3f}" for _ in range(3)) +
                    f" {rng.uniform(-0.5, 0.5):.4f}\n")
    out = os.path.join(tmp, "dense.h5")
    proc = run(["--atoms", dense, "--grid", "33", "--device", "cpu", "-o", out,
                "--method", "msm", "--msm-error", "1e-5"], tmp, 0)
    warning = [l for l in proc.stderr.splitlines() if "expected to take about" in l]
    if not warning or "--method exact" not in warning[0] or "pair evaluations" not in warning[0]:
        raise AssertionError(f"no slower-than-exact warning:\n{proc.stderr}")
    print(warning[0])
    with h5py.File(out, "r") as f:
        m = f["method"].attrs
        exact, work = float(m["estimated_exact_work"]), float(m["estimated_work"])
    if exact != 8000 * 33 ** 3 or not work > 2 * exact:
        raise AssertionError(f"/method estimates: msm {work}, exact {exact}")
    out = os.path.join(tmp, "default.h5")
    proc = run(["--atoms", MOLECULE, "--grid", "97", "--device", "cpu", "-o", out,
                "--method", "msm"], tmp, 0)
    if "expected to take about" in proc.stderr:
        raise AssertionError(f"warned on the default target:\n{proc.stderr}")
    with h5py.File(out, "r") as f:
        m = f["method"].attrs
        if not 0 < float(m["estimated_work"]) < 2 * float(m["estimated_exact_work"]):
            raise AssertionError(f"/method estimates: {dict(m)}")


def main():
    name = sys.argv[3]
    with tempfile.TemporaryDirectory() as tmp:
        CASES[name](tmp)
    print(f"cli_msm_tests {name}: OK")


if __name__ == "__main__":
    main()
