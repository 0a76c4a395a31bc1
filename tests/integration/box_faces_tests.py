#!/usr/bin/env python3
"""The box warning on real maps of lysozyme (data/2lzt.pqr, net charge +8 e), on both sides of
its criterion (io/include/dcs/io/box_faces.hpp: a face reaching the colour range ±L, or mapped
atoms outside the box).

    box_faces_tests.py DCS_BINARY SOURCE_DIR CASE

quiet_defaults  the Quick start's and the demo's runs (default grid, --grid 128 with 0.15 M
                salt, --dx, --validate; ε = 1 and 80) print no warning at all: their faces lie
                well under L
small_box       --padding 0 puts atoms on the faces: it warns, naming a --padding, and with
                that padding it no longer does
atoms_outside   a hand-placed grid that leaves part of the molecule outside warns so
"""
import os
import re
import subprocess
import sys
import tempfile

DCS, SOURCE, CASE = sys.argv[1], sys.argv[2], sys.argv[3]
PQR = os.path.join(SOURCE, "data", "2lzt.pqr")


def run(tmp, name, *options):
    args = [DCS, "--atoms", PQR, "-o", os.path.join(tmp, f"{name}.h5"), "--no-progress", "-v",
            "--force", *options]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(args)}: exit {proc.returncode}\n{proc.stderr}")
    faces = re.search(r"box faces: max \|V\| \S+ \S+ on the .. face, (\d+) % of the colour range",
                      proc.stderr)
    if not faces:
        raise AssertionError(f"no box-face line in:\n{proc.stderr}")
    return proc.stderr, int(faces.group(1))


def case_quiet_defaults(tmp):
    for name, options in (("default", ()),
                          ("demo", ("--grid", "128", "--ionic-strength", "0.15", "--dx",
                                    "--validate")),
                          ("vacuum", ("--grid", "128", "--dx", "--validate")),
                          ("water", ("--dielectric", "80"))):
        text, percent = run(tmp, name, *options)
        if "warning" in text or percent >= 100:
            raise AssertionError(f"{name}: a warning ({percent} % of L):\n{text}")
    return f"faces at {percent} % of L at ε = 80"


def case_small_box(tmp):
    text, percent = run(tmp, "p0", "--padding", "0", "--spacing", "1")
    warning = re.search(r"warning: the box is small for this map: .*beyond the colour range "
                        r".*--padding (\d+) would bring every face under it .*1/r decay", text)
    if not warning or percent < 100:
        raise AssertionError(f"no box warning at --padding 0 ({percent} %):\n{text}")
    padding = int(warning.group(1))
    if not 0 < padding < 40:
        raise AssertionError(f"suggested --padding {padding}")
    text, percent = run(tmp, "fixed", "--padding", str(padding), "--spacing", "1")
    if "box is small" in text or percent >= 100:
        raise AssertionError(f"--padding {padding} still warns ({percent} %):\n{text}")
    return f"--padding 0 warns, --padding {padding} does not"


def case_atoms_outside(tmp):
    # 2lzt's centres span x -14..16 and z -2..44 Å: a 32 Å box from the origin cuts them off.
    text, _ = run(tmp, "cut", "--origin", "0", "0", "0", "--grid", "33", "--spacing", "1")
    if not re.search(r"warning: mapped atoms lie up to \S+ Å outside the box", text):
        raise AssertionError(f"no warning for atoms outside the box:\n{text}")
    return "atoms outside warn"


def main():
    with tempfile.TemporaryDirectory() as tmp:
        said = globals()[f"case_{CASE}"](tmp)
    print(f"box_faces_tests: OK {CASE} ({said})")


if __name__ == "__main__":
    main()
