"""Bad input raises ValueError / TypeError with the command line's message."""
import subprocess
import sys

import numpy as np
import pytest

import dcs
from conftest import MOLECULE

POS = np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]])
Q = np.array([1.0, -1.0])


def cli_message(binary, *args):
    done = subprocess.run([binary, "--atoms", str(MOLECULE), "--device", "cpu", "--null-output",
                           *map(str, args)], capture_output=True, text=True)
    assert done.returncode == 2, done.stderr
    return done.stderr


def test_nan_position():
    bad = POS.copy()
    bad[1, 2] = np.nan
    with pytest.raises(ValueError, match=r"positions: atom 2: coordinate nan is not finite"):
        dcs.potential_map(bad, Q, grid=5)
    with pytest.raises(ValueError, match=r"atom 1: charge inf is not finite"):
        dcs.potential_at(POS, POS, [np.inf, 1.0])
    with pytest.raises(ValueError, match=r"points: point 1: coordinate"):
        dcs.potential_at([[np.nan, 0, 0]], POS, Q)


def test_shapes_and_types():
    with pytest.raises(ValueError, match=r"positions must have shape \(N, 3\)"):
        dcs.potential_map(POS[:, :2], Q, grid=5)
    with pytest.raises(ValueError, match="positions has 2 atoms but charges has 3"):
        dcs.potential_map(POS, [1.0, 2.0, 3.0], grid=5)
    with pytest.raises(ValueError, match="no atoms"):
        dcs.potential_map(np.zeros((0, 3)), np.zeros(0), grid=5)
    with pytest.raises(TypeError, match="positions must be an array of real numbers"):
        dcs.potential_map(np.array([["a", "b", "c"]]), [1.0], grid=5)
    with pytest.raises(TypeError, match="grid must be an int or 3 ints"):
        dcs.potential_map(POS, Q, grid=2.5)
    with pytest.raises(ValueError, match="takes 1 .N. or 3"):
        dcs.potential_map(POS, Q, grid=(5, 5))


@pytest.mark.parametrize("kwargs, args", [
    (dict(grid=-4), ["--grid", "-4"]),
    (dict(grid=5, spacing=0.0), ["--grid", "5", "--spacing", "0"]),
    (dict(grid=5, dielectric=-1.0), ["--dielectric", "-1"]),
    (dict(grid=5, units="furlongs"), ["--units", "furlongs"]),
    (dict(grid=5, preset="chimerax", units="V"), ["--preset", "chimerax", "--units", "V"]),
])
def test_the_command_lines_message(dcs_binary, kwargs, args):
    with pytest.raises(ValueError) as raised:
        dcs.potential_map(POS, Q, **kwargs)
    message = str(raised.value)
    assert message and message in cli_message(dcs_binary, *args)


def test_cuda_without_gpu_says_why():
    import os
    if os.path.exists("/dev/nvidia0"):
        pytest.skip("a GPU is present (test_gpu.py covers it)")
    with pytest.raises(ValueError, match="--device cuda"):
        dcs.potential_map(POS, Q, grid=5, device="cuda")


INTERRUPTED = r"""
import signal, threading, time, sys
import numpy as np
import dcs
sys.path.insert(0, {here!r})
from conftest import read_pqr
positions, charges = read_pqr()
ticks = []
def count():  # runs only if the GIL is released while computing
    while len(ticks) < 1000:
        ticks.append(time.perf_counter()); time.sleep(0.005)
threading.Thread(target=count, daemon=True).start()
threading.Timer(1.0, lambda: signal.raise_signal(signal.SIGINT)).start()
start = time.perf_counter()
try:
    # One thread: tens of seconds on any machine, so the signal at 1 s always comes first (on
    # 32 cores, all threads finished this map in about a second and the test raced the timer).
    dcs.potential_map(positions, charges, grid=320, device="cpu", threads=1)
    print("NOT INTERRUPTED")
except KeyboardInterrupt:
    print(f"interrupted after {{time.perf_counter() - start:.2f}} s, ticks {{len(ticks)}}")
v = dcs.potential_map(positions, charges, grid=9, device="cpu")  # computes again afterwards
print("again", v.shape)
"""


def test_ctrl_c_interrupts_and_the_gil_is_released():
    import pathlib
    import re
    here = str(pathlib.Path(__file__).parent)
    done = subprocess.run([sys.executable, "-c", INTERRUPTED.format(here=here)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    found = re.search(r"interrupted after ([\d.]+) s, ticks (\d+)", done.stdout)
    assert found, done.stdout + done.stderr
    assert float(found.group(1)) < 5.0  # stopped soon after the signal, not at the end
    assert int(found.group(2)) > 20     # another Python thread ran meanwhile
    assert "again (9, 9, 9)" in done.stdout
