#!/usr/bin/env python3
"""The box-face warning on a real map: lysozyme (data/2lzt.pqr, net charge +8 e) at ε = 80 with
the default 10 Å padding has its faces at ~2 kT/e, over 25 % of |V| near the molecule, and dcs
says so, naming a --padding; with that padding it no longer warns.

Usage: box_faces_tests.py DCS_BINARY SOURCE_DIR
"""
import os
import re
import subprocess
import sys
import tempfile

DCS, SOURCE = sys.argv[1], sys.argv[2]
PQR = os.path.join(SOURCE, "data", "2lzt.pqr")


def run(tmp, padding):
    args = [DCS, "--atoms", PQR, "--dielectric", "80", "--spacing", "1", "--padding", str(padding),
            "-o", os.path.join(tmp, f"p{padding}.h5"), "--no-progress", "-v"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(args)}: exit {proc.returncode}\n{proc.stderr}")
    faces = re.search(r"box faces: max \|V\| \S+ kT/e on the .. face, (\d+) %", proc.stderr)
    if not faces:
        raise AssertionError(f"no box-face line in:\n{proc.stderr}")
    return proc.stderr, int(faces.group(1))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        text, percent = run(tmp, 10)
        warning = re.search(r"warning: the box is small for this map: .*--padding (\d+) would "
                            r"bring every face under 25 %.*1/r decay", text)
        if not warning or percent <= 25:
            raise AssertionError(f"no box warning at --padding 10 ({percent} %):\n{text}")
        padding = int(warning.group(1))
        if not 10 < padding < 60:
            raise AssertionError(f"suggested --padding {padding}")
        text, percent = run(tmp, padding)
        if "box is small" in text or percent > 25:
            raise AssertionError(f"--padding {padding} still warns ({percent} %):\n{text}")
    print(f"box_faces_tests: OK (--padding {padding}: faces at {percent} %)")


if __name__ == "__main__":
    main()
