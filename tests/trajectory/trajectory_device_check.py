#!/usr/bin/env python3
"""Trajectory runs on the GPU machine (no MDAnalysis there): the CUDA backend's averaged maps
against the CPU backend's (which trajectory_tests.py checks against the float64 reference),
one GPU vs every GPU byte-identical (the frame maps too), 1, 2 (the default) and 3 workers a GPU
(--gpu-workers) byte-identical, exact and --periodic, and kill -9 + --resume on the GPUs
byte-identical.

    trajectory_device_check.py --dcs DCS --data DIR   (DIR: adk.psf, adk_dims.dcd,
                                                        adk_oplsaa.tpr, adk_oplsaa.xtc)
Needs h5py and numpy. Exit 77 without a GPU.
"""
import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

NAMES = ("potential", "trajectory/stdev", "trajectory/min", "trajectory/max")


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def dcs(args, *options):
    run = subprocess.run([args.dcs, *options, "--no-progress"], capture_output=True, text=True)
    if run.returncode != 0:
        fail(f"dcs {' '.join(options)}: exit {run.returncode}\n{run.stderr}")
    return run


def load(path):
    with h5py.File(path, "r") as h5:
        return {name: h5[name][...] for name in NAMES}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dcs", required=True)
    p.add_argument("--data", required=True)
    args = p.parse_args()
    gpus = subprocess.run(["nvidia-smi", "--list-gpus"], capture_output=True, text=True)
    count = len(gpus.stdout.strip().splitlines()) if gpus.returncode == 0 else 0
    if count == 0:
        print("SKIPPED: no GPU")
        sys.exit(77)
    d = args.data
    cases = {
        "adk PSF+DCD": ["--topology", f"{d}/adk.psf", "--trajectory", f"{d}/adk_dims.dcd",
                        "--frames", "::7", "--grid", "64"],
        "adk TPR+XTC aligned": ["--topology", f"{d}/adk_oplsaa.tpr", "--trajectory",
                                f"{d}/adk_oplsaa.xtc", "--select", "protein", "--align",
                                "name CA", "--grid", "48"],
    }
    with tempfile.TemporaryDirectory(prefix="dcs-traj-gpu-") as work:
        cases["waters periodic"] = periodic_waters(work)
        check_cases(args, cases, count, work)
    print("trajectory_device_check: OK")


def periodic_waters(work):
    """A water box cut across its cell in every frame (bench/trajectory_bench.py's generator:
    3,000 atoms, 6 frames, a 31 Å cube) for the periodic (Ewald) map of the whole cell (adk's
    DCD states no cell)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "bench"))
    import trajectory_bench as tb
    psf, dcd = os.path.join(work, "waters.psf"), os.path.join(work, "waters.dcd")
    tb.write_water_psf(psf, 1000)
    tb.write_dcd(dcd, tb.water_frames(np.random.default_rng(3), 3000, 6, 31.0), 31.0)
    return ["--topology", psf, "--trajectory", dcd, "--periodic", "--grid", "40"]


def check_cases(args, cases, count, work):
    for label, options in cases.items():
        cpu, one, every = (os.path.join(work, f"{n}.h5") for n in ("cpu", "one", "all"))
        dcs(args, *options, "--device", "cpu", "-o", cpu, "--force")
        dcs(args, *options, "--device", "cuda:0", "-o", one, "--force", "--frame-maps")
        dcs(args, *options, "--device", "cuda", "-o", every, "--force", "--frame-maps")
        with h5py.File(one[:-3] + ".frames.h5", "r") as x, \
                h5py.File(every[:-3] + ".frames.h5", "r") as y:
            if x["frame_maps"][...].tobytes() != y["frame_maps"][...].tobytes():
                fail(f"{label}: frame maps of 1 GPU and {count} GPUs differ")
        a, b, c = load(cpu), load(one), load(every)
        scale = max(abs(a["trajectory/min"]).max(), abs(a["trajectory/max"]).max())
        for name in NAMES:
            err = np.abs(b[name].astype(np.float64) - a[name]).max() / scale
            print(f"{label}: {name}: CUDA vs CPU {err:.2e} of max|V| {scale:.4g}")
            if err > 2e-5:  # both within 1e-5 of the float64 reference
                fail(f"{label}: {name} CUDA vs CPU {err:.2e}")
            if b[name].tobytes() != c[name].tobytes():
                fail(f"{label}: {name}: 1 GPU and {count} GPUs differ")
        print(f"{label}: 1 GPU and {count} GPU(s) identical")
        # Workers a GPU: frames go to whichever is free; not a bit may depend on it.
        for workers in ("1", "3"):
            other = os.path.join(work, f"w{workers}.h5")
            run = dcs(args, *options, "--device", "cuda:0", "--gpu-workers", workers, "-o",
                      other, "--force")
            if workers == "3" and "worker 2:" not in run.stderr:
                fail(f"{label}: --gpu-workers 3 did not make 3 workers:\n{run.stderr}")
            d = load(other)
            for name in NAMES:
                if d[name].tobytes() != b[name].tobytes():
                    fail(f"{label}: {name}: --gpu-workers {workers} and 2 differ")
        print(f"{label}: --gpu-workers 1, 2 and 3 identical")
    # kill -9 while the GPUs work, then --resume: the same bytes as uninterrupted.
    options = cases["adk PSF+DCD"][:-4] + ["--grid", "160", "--device", "cuda",
                                            "--checkpoint-interval", "0"]
    whole, out = os.path.join(work, "whole.h5"), os.path.join(work, "killed.h5")
    start = time.time()
    dcs(args, *options, "-o", whole)
    took = time.time() - start
    proc = subprocess.Popen([args.dcs, *options, "-o", out, "--no-progress"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(max(0.5, took * 0.5))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    if os.path.exists(out):
        fail(f"the run finished in {took:.1f} s before it was killed")
    resumed = dcs(args, *options, "-o", out, "--resume")
    line = [l for l in resumed.stderr.splitlines() if "found in the checkpoints" in l]
    print("resume:", line[0] if line else "(no frame line)")
    w, r = load(whole), load(out)
    for name in NAMES:
        if w[name].tobytes() != r[name].tobytes():
            fail(f"kill -9 + --resume: {name} differs")
    print("kill -9 + --resume on the GPUs: identical")


if __name__ == "__main__":
    main()
