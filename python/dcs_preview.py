"""Render a dcs map's three central slices to a PNG (what `dcs preview` runs).

    python3 dcs_preview.py mol.h5 -o mol.png [--percentile 99] [--force]

Three panels: the XY plane through the middle z, XZ through the middle y, YZ through the middle x,
in Å. Diverging colours, red negative and blue positive (the APBS / PyMOL / ChimeraX
convention), with symmetric limits ±L where L is the given percentile of |V| over the map, so
the surface potential shows instead of the thousands of kT/e next to atom centres: the range
dcs stored in the file (/potential's colour_range) when it is for that percentile, else computed
here (on a regular subsample of at most ~16 M points for large maps). The colour bar is
labelled in the map's units. Atoms are drawn at their projected positions: black within 1.5 Å
of the slice plane, faint grey otherwise. Needs h5py, numpy and matplotlib.
"""
import argparse
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
NEAR_PLANE = 1.5  # Å: atoms this close to a slice are drawn in black


def file_limit(dataset, percentile):
    """The limit dcs stored with the map (/potential attribute colour_range, ±L with L the
    colour_range_percentiles[1]-th percentile of |V|) when it is for this percentile, else None."""
    import numpy as np

    attrs = dataset.attrs
    if "colour_range" not in attrs or "colour_range_percentiles" not in attrs:
        return None
    percentiles = np.atleast_1d(np.asarray(attrs["colour_range_percentiles"], dtype=float))
    if percentiles.size == 0 or abs(percentiles[-1] - percentile) > 1e-9:
        return None
    limit = float(np.max(np.abs(np.asarray(attrs["colour_range"], dtype=float))))
    return limit if limit > 0 else None


def robust_limit(dataset, percentile, max_points=16_000_000):
    """The percentile of |V| over the dataset: the file's colour_range when it holds this
    percentile (step 0), else computed on a regular subsample for large maps (step 1, 2, ...)."""
    import numpy as np

    stored = file_limit(dataset, percentile)
    if stored is not None:
        return stored, 0
    step = 1
    while dataset.size / step**3 > max_points:
        step += 1
    values = dataset[::step, ::step, ::step]
    return float(np.percentile(np.abs(values), percentile)), step


def render(path, out, percentile):
    import h5py
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    with h5py.File(path, "r") as f:
        if "potential" not in f:
            raise ValueError(f"{path}: no /potential dataset (not a dcs map)")
        d = f["potential"]
        origin = np.asarray(d.attrs["origin"], dtype=float)
        spacing = np.asarray(d.attrs["spacing"], dtype=float)
        units = d.attrs["units"]
        units = units.decode() if isinstance(units, bytes) else str(units)
        dielectric = float(d.attrs.get("dielectric", float("nan")))
        nz, ny, nx = d.shape
        k, j, i = nz // 2, ny // 2, nx // 2
        xy, xz, yz = d[k, :, :], d[:, j, :], d[:, :, i]
        limit, step = robust_limit(d, percentile)
        atoms = f["atoms/position"][()] if "atoms/position" in f else np.zeros((0, 3))
    if not limit > 0:
        limit = 1.0
    centre = origin + spacing * np.array([i, j, k])
    end = origin + spacing * (np.array([nx, ny, nz]) - 1)
    # (values, horizontal axis, vertical axis, fixed axis)
    panels = [(xy, 0, 1, 2, f"XY at z = {centre[2]:.2f} Å"),
              (xz, 0, 2, 1, f"XZ at y = {centre[1]:.2f} Å"),
              (yz, 1, 2, 0, f"YZ at x = {centre[0]:.2f} Å")]
    widths = [end[h] - origin[h] for _, h, _, _, _ in panels]
    fig, axes = plt.subplots(1, 3, figsize=(15, 5.4), width_ratios=widths, layout="constrained")
    names = "xyz"
    image = None
    for ax, (values, h, v, fixed, title) in zip(axes, panels):
        extent = [origin[h] - spacing[h] / 2, end[h] + spacing[h] / 2,
                  origin[v] - spacing[v] / 2, end[v] + spacing[v] / 2]
        image = ax.imshow(values, origin="lower", extent=extent, cmap="RdBu", vmin=-limit,
                          vmax=limit, interpolation="nearest", aspect="equal")
        if len(atoms):
            near = np.abs(atoms[:, fixed] - centre[fixed]) <= NEAR_PLANE
            ax.scatter(atoms[~near, h], atoms[~near, v], s=1.5, c="0.35", alpha=0.25,
                       linewidths=0)
            ax.scatter(atoms[near, h], atoms[near, v], s=4, c="black", linewidths=0)
        ax.set_xlim(extent[0], extent[1])
        ax.set_ylim(extent[2], extent[3])
        ax.set_xlabel(f"{names[h]} (Å)")
        ax.set_ylabel(f"{names[v]} (Å)")
        ax.set_title(title)
    bar = fig.colorbar(image, ax=axes, extend="both", shrink=0.9)
    bar.set_label(f"potential ({units})")
    sampled = "" if step <= 1 else f", every {step}th point"
    fig.suptitle(f"{os.path.basename(path)}: {nx} × {ny} × {nz} points, ε = {dielectric:g}; "
                 f"colours ±{limit:.3g} {units} = {percentile:g}th percentile of |V|{sampled}; "
                 f"atoms: black within {NEAR_PLANE} Å of the slice")

    directory = os.path.dirname(os.path.abspath(out))
    fd, temp = tempfile.mkstemp(prefix="." + os.path.basename(out) + ".tmp.", dir=directory)
    try:
        with os.fdopen(fd, "wb") as stream:
            fig.savefig(stream, format="png", dpi=110)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temp, 0o666 & ~umask)  # mkstemp made it 0600
        os.replace(temp, out)
    except BaseException:
        os.unlink(temp)
        raise
    plt.close(fig)
    return limit, step


def main(argv=None):
    p = argparse.ArgumentParser(prog="dcs preview", description=__doc__.split("\n\n")[0])
    p.add_argument("input", help="dcs HDF5 map (.h5 / .vtkhdf)")
    p.add_argument("-o", "--output", help="PNG path (default: <input stem>.png)")
    p.add_argument("--percentile", type=float, default=99.0,
                   help="colour limits ±this percentile of |V| (default 99)")
    p.add_argument("--force", action="store_true", help="overwrite the PNG")
    args = p.parse_args(argv)
    out = args.output or os.path.splitext(args.input)[0] + ".png"
    try:
        if not 0 < args.percentile <= 100:
            raise ValueError(f"--percentile must lie in (0, 100], got {args.percentile}")
        if not os.path.isfile(args.input):
            raise FileNotFoundError(f"{args.input}: no such file")
        if os.path.islink(out) or (os.path.lexists(out) and not os.path.isfile(out)):
            # As dcs itself (io/atomic_file.hpp): never through a link, never over a device.
            raise ValueError(f"cannot write {out}: it is a symbolic link or not a regular file; "
                             "only regular files are replaced, even with --force")
        if os.path.exists(out) and not args.force:
            raise FileExistsError(f"{out} exists; use --force to overwrite")
        limit, step = render(args.input, out, args.percentile)
    except ImportError as error:
        print(f"dcs preview: {sys.executable} lacks h5py, numpy or matplotlib ({error}): install "
              "them (Debian/Ubuntu: apt install python3-h5py python3-matplotlib; pip: pip install "
              "h5py matplotlib) or set DCS_PYTHON to a Python that has them", file=sys.stderr)
        return 1
    except (OSError, ValueError, KeyError) as error:
        print(f"dcs preview: {error}", file=sys.stderr)
        return 1
    source = "; the file's colour_range" if step == 0 else ""
    print(f"{args.input} -> {out}: colour limits ±{limit:.3g} ({args.percentile:g}th percentile "
          f"of |V|{source})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
