#!/usr/bin/env python3
"""Makes docs/actin-models.png: the actin dimer (Debian apbs-data, examples/actin-dimer/
complex.pqr, net charge -24 e) under each physics model, one XY slice each by `dcs preview`
(colours: the 99th percentile of |V| on the solvent-accessible shell), side by side.

Usage: python3 docs/figures/actin_models.py DCS [OUT.png]   (needs matplotlib, h5py)"""
import os
import subprocess
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.image as mpimg  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

DCS = sys.argv[1]
OUT = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "..", "actin-models.png")
PQR = "/usr/share/apbs/examples/actin-dimer/complex.pqr"
MODELS = [("Coulomb, ε = 1 (the default)", []),
          ("Debye–Hückel, 0.15 M in water", ["--ionic-strength", "0.15"]),
          ("ε = 4r (--preset chimerax)", ["--preset", "chimerax"]),
          ("ε = 2, 557 kT/e (--preset pymol)", ["--preset", "pymol"])]

with tempfile.TemporaryDirectory() as tmp:
    images = []
    for n, (label, opts) in enumerate(MODELS):
        h5, png = os.path.join(tmp, f"m{n}.h5"), os.path.join(tmp, f"m{n}.png")
        subprocess.run([DCS, "--atoms", PQR, "--spacing", "1.0", "--padding", "8", *opts, "-o", h5,
                        "--force", "-q", "--no-progress"], check=True)
        subprocess.run([DCS, "preview", h5, "-o", png, "--slice", "z=16.74", "--force"], check=True,
                       capture_output=True)
        images.append((label, mpimg.imread(png)))
    fig, axes = plt.subplots(2, 2, figsize=(14, 10))
    for ax, (label, image) in zip(axes.ravel(), images):
        ax.imshow(image)
        ax.set_title(label, fontsize=13)
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(OUT, dpi=90)
print("wrote", OUT)
