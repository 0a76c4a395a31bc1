#!/usr/bin/env python3
"""The writers of a map's files (DCS_WRITERS, io/src/parallel_writes.hpp) through the real `dcs`
binary: the HDF5, MRC and DX files are the same for any number of writers; kill -9 and --resume
with several writers give the uninterrupted run's map; a bad DCS_WRITERS is a usage error (a
write error in one writer: tests/hostile/store_tests.py).

Usage: writers_cli_tests.py DCS_BINARY SOURCE_DIR CASE
"""
import os
import subprocess

import h5py
import numpy as np

import pipeline_cli_tests as base  # noqa: E402  (reads DCS and SOURCE from sys.argv)
from case_main import run_listed_case  # noqa: E402  (tests/support, on the path via base)
from map_files import assert_same_map  # noqa: E402

CASES = {}


def case(function):
    CASES[function.__name__] = function
    return function


def run(args, tmp, writers, expect=0, direct=True):
    """dcs with DCS_WRITERS=writers, and DCS_DIRECT_WRITES=1 where `direct` (else the default,
    the page cache)."""
    env = dict(os.environ, DCS_WRITERS=str(writers))
    env.pop("DCS_DIRECT_WRITES", None)
    if direct:
        env["DCS_DIRECT_WRITES"] = "1"
    proc = subprocess.run([base.DCS] + args, cwd=tmp, env=env, capture_output=True, text=True,
                          timeout=600)
    if proc.returncode != expect:
        raise AssertionError(f"DCS_WRITERS={writers} dcs {' '.join(args)}: exit "
                             f"{proc.returncode}, expected {expect}\n{proc.stderr}")
    return proc


def same_bytes(a, b):
    with open(a, "rb") as fa, open(b, "rb") as fb:
        if fa.read() != fb.read():
            raise AssertionError(f"{a} and {b} differ")


def dx_data(path):
    """The values and grid lines of a DX file (its header comments hold times and commands)."""
    with open(path) as handle:
        return [line for line in handle if not line.startswith("#")]


def stored_chunks(path):
    """Every chunk of /potential as stored (padding included), in file order."""
    with h5py.File(path, "r") as f:
        dataset = f["potential"].id
        chunks = []
        for index in range(dataset.get_num_chunks()):
            info = dataset.get_chunk_info(index)
            chunks.append((info.chunk_offset, info.byte_offset, dataset.read_direct_chunk(
                info.chunk_offset)[1]))
        return chunks


@case
def writers_give_identical_files(tmp):
    """Slabs of 1.9 MB (two pieces for the writers) and a map of 8 MB: the HDF5 map (chunks,
    addresses, padding), MRC and DX files from one writer are those of three and of four, and
    those of one writer through the page cache only (the default; DCS_DIRECT_WRITES=1 the
    direct writes: the same bytes either way)."""
    common = ["--atoms", base.MOLECULE, "--grid", "190", "177", "24" if base.SANITIZED else "61",
              "--device", "cpu", "--memory-limit", "8M", "--checkpoint-interval", "0",
              "--no-progress"]
    for writers in (1, 3, 4):
        run(common + ["-o", f"w{writers}.h5", "--mrc", "--dx"], tmp, writers)
    run(common + ["-o", "w0.h5", "--mrc", "--dx"], tmp, 1, direct=False)
    for writers in (0, 3, 4):  # 0: one writer, page cache only
        assert_same_map(os.path.join(tmp, "w1.h5"), os.path.join(tmp, f"w{writers}.h5"))
        if stored_chunks(os.path.join(tmp, "w1.h5")) != stored_chunks(
                os.path.join(tmp, f"w{writers}.h5")):
            raise AssertionError(f"the stored chunks of 1 and {writers} writers differ")
        same_bytes(os.path.join(tmp, "w1.mrc"), os.path.join(tmp, f"w{writers}.mrc"))
        if dx_data(os.path.join(tmp, "w1.dx")) != dx_data(os.path.join(tmp, f"w{writers}.dx")):
            raise AssertionError(f"the DX files of 1 and {writers} writers differ")
    with h5py.File(os.path.join(tmp, "w1.h5"), "r") as f:
        values = f["potential"][...]
    with open(os.path.join(tmp, "w1.mrc"), "rb") as handle:
        mrc = np.frombuffer(handle.read()[1024:], dtype="<f4").reshape(values.shape)
    if mrc.tobytes() != values.tobytes():
        raise AssertionError("the MRC values are not the HDF5 values")


@case
def kill9_resume_with_writers(tmp):
    """kill -9 at three points, resumed by three writers each time: the uninterrupted run's map
    (pipeline_cli_tests' chain, with an MRC file beside it)."""
    os.environ["DCS_WRITERS"] = "3"
    base.kill9_chain(tmp, ["--mrc"])
    same_bytes(os.path.join(tmp, "ref.mrc"), os.path.join(tmp, "out.mrc"))


@case
def bad_writer_count_is_a_usage_error(tmp):
    common = ["--atoms", base.MOLECULE, "--grid", "16", "--device", "cpu", "--no-progress"]
    for value in ("0", "many", "1000"):
        proc = run(common + ["-o", "m.h5"], tmp, value, expect=2)
        if f"DCS_WRITERS='{value}'" not in proc.stderr:
            raise AssertionError(f"the message should name DCS_WRITERS:\n{proc.stderr}")
    if os.listdir(tmp):
        raise AssertionError(f"a refused run left files: {os.listdir(tmp)}")


if __name__ == "__main__":
    run_listed_case(CASES, "dcs-writers-")
