"""Render a dcs map to a PNG (what `dcs preview` runs): slices coloured by the potential.

    python3 dcs_preview.py mol.h5 -o mol.png [--slice z=12.5 ...] [--view surface|centre]
                           [--percentile 99] [--probe 1.4] [--shell 1.0] [--force]

The colour limits ±L are the map's own colour range (the file's /potential attribute
colour_range: the range the run summary printed, the 99th percentile of |V| or a --preset's
colour scale), so the picture, the summary, the file and the PyMOL line agree. Given --percentile,
--probe or --shell, the surface view takes instead the percentile of |V| on the
solvent-accessible shell, the grid points whose distance to the nearest atom i lies between
r_i + probe and r_i + probe + shell (radii and positions from the file's /atoms), and the centre
view the percentile over the whole map (as for a file without colour_range).

Surface view (the default): points inside the atoms (closer than r_i) are masked in grey, with
the atoms' outline. The
slices are the --slice planes (x=, y= or z= in Å, the nearest grid plane; repeatable), by default
the three through the centre of the box. It prints the PyMOL commands that paint the same ramp
on the molecular surface. The centre view (--view centre) is the former picture: the three
central slices unmasked, atoms within 1.5 Å of the plane in black.

Red negative, blue positive (the APBS / PyMOL / ChimeraX convention); the title states the
units, ε and the range. Large maps are sampled on a regular sub-grid (at most ~16 M points) for
the limits. Needs h5py, numpy and matplotlib.
"""
import argparse
import os
import sys
import tempfile

try:
    import numpy as np
except ImportError as error:  # main() says what to install
    np, NUMPY_MISSING = None, error

NEAR_PLANE = 1.5      # Å: centre view, atoms this close to a slice are drawn in black
DEFAULT_RADIUS = 1.5  # Å: for atoms without a radius (XYZQ input)
MAX_POINTS = 16_000_000
PERCENTILE, PROBE, SHELL = 99.0, 1.4, 1.0  # the shell's defaults (when one of them is given)


def option(value, default):
    """An option's value, or its default when it was not given (None)."""
    return default if value is None else value
AXES = "xyz"


class InputError(Exception):
    """The file is not a dcs map, or lacks what the view needs (exit 3, like dcs)."""


class UsageError(Exception):
    """A bad option value (exit 2, like dcs)."""


def text_attr(value):
    return value.decode() if isinstance(value, bytes) else str(value)


class MapFile:
    """The parts of a dcs HDF5 map the pictures use; the dataset is read as needed."""

    def __init__(self, f, path):
        if "potential" not in f:
            raise InputError(f"{path} is an HDF5 file but not a dcs map (no /potential dataset)")
        self.path = path
        self.dataset = d = f["potential"]
        if d.ndim != 3:
            raise InputError(f"{path}: /potential is not a 3-D map (shape {d.shape})")
        missing = [key for key in ("origin", "spacing", "units") if key not in d.attrs]
        if missing:
            raise InputError(f"{path}: /potential lacks the attribute(s) {', '.join(missing)} "
                             "(not a dcs map?)")
        if "axes" in d.attrs:  # the panels below are axis-aligned slices with x, y, z extents
            raise InputError(
                f"{path}: the map's grid runs along a triclinic cell's vectors (--map-axes cell), "
                "which these axis-aligned pictures would shear; map it with --map-axes box for a "
                "preview, or open its MRC or .cmap in ChimeraX")
        self.origin = np.asarray(d.attrs["origin"], dtype=float)
        self.spacing = np.asarray(d.attrs["spacing"], dtype=float)
        self.units = text_attr(d.attrs["units"])
        self.dielectric = float(d.attrs.get("dielectric", float("nan")))
        # The physics model in a few words (maps before the models carry only "dielectric").
        model = text_attr(d.attrs["dielectric_model"]) if "dielectric_model" in d.attrs else ""
        if model == "distance":
            self.model = f"ε = {self.dielectric:g}r"
        elif float(d.attrs.get("ionic_strength", 0.0)) > 0.0:
            self.model = (f"ε = {self.dielectric:g}, Debye–Hückel λ = "
                          f"{float(d.attrs['debye_length']):.3g} Å")
        else:
            self.model = f"ε = {self.dielectric:g}"
        self.nz, self.ny, self.nx = d.shape
        self.counts = np.array([self.nx, self.ny, self.nz])
        self.end = self.origin + self.spacing * (self.counts - 1)
        self.positions = f["atoms/position"][()] if "atoms/position" in f else np.zeros((0, 3))
        self.radii = f["atoms/radius"][()] if "atoms/radius" in f else np.zeros(len(self.positions))
        self.source = text_attr(f["atoms"].attrs.get("source_path", "")) if "atoms" in f else ""
        # A trajectory's mean: its atoms' source is a trajectory file, which PyMOL cannot load
        # alone; dcs writes the mapped atoms in the map's frame beside it (/trajectory structure).
        if "trajectory" in f:
            self.source = text_attr(f["trajectory"].attrs.get("structure", ""))

    def coordinates(self, axis, step=1):
        return self.origin[axis] + self.spacing[axis] * np.arange(0, self.counts[axis], step)

    def sample_step(self):
        """The sub-grid step that keeps at most MAX_POINTS points."""
        step = 1
        while self.dataset.size / step**3 > MAX_POINTS:
            step += 1
        return step


def file_range(dataset):
    """The map's colour range as dcs stored it, (L, what L is), or None for a file without one
    (an older dcs): /potential attributes colour_range (±L) and colour_range_source."""
    attrs = dataset.attrs
    if "colour_range" not in attrs:
        return None
    limit = float(np.max(np.abs(np.asarray(attrs["colour_range"], dtype=float))))
    if not limit > 0:
        return None
    if "colour_range_source" in attrs:
        return limit, text_attr(attrs["colour_range_source"])
    if "colour_range_percentiles" in attrs:
        percentile = float(np.atleast_1d(attrs["colour_range_percentiles"])[-1])
        return limit, f"{percentile:g}th percentile of |V|"
    return None


def robust_limit(m, percentile):
    """The percentile of |V| over the map, computed on a regular subsample for large maps:
    (L, step)."""
    step = m.sample_step()
    values = m.dataset[::step, ::step, ::step]
    return float(np.percentile(np.abs(values), percentile)), step


def clearance(xs, ys, zs, positions, radii, reach):
    """min over atoms of |p - r_i| - R_i at the points of the grid xs × ys × zs (shape
    (len(zs), len(ys), len(xs))), exact where it is below `reach` Å, else +inf. Each atom
    updates only the points within R_i + reach of it (a grid-binned search in numpy)."""
    field = np.full((len(zs), len(ys), len(xs)), np.inf, dtype=np.float32)
    for (x, y, z), radius in zip(positions, radii):
        cut = radius + reach
        i0, i1 = np.searchsorted(xs, (x - cut, x + cut))
        j0, j1 = np.searchsorted(ys, (y - cut, y + cut))
        k0, k1 = np.searchsorted(zs, (z - cut, z + cut))
        if i0 >= i1 or j0 >= j1 or k0 >= k1:
            continue
        d2 = ((zs[k0:k1, None, None] - z) ** 2 + (ys[None, j0:j1, None] - y) ** 2
              + (xs[None, None, i0:i1] - x) ** 2)
        block = field[k0:k1, j0:j1, i0:i1]
        np.minimum(block, (np.sqrt(d2) - radius).astype(np.float32), out=block)
    return field


def atom_radii(m):
    """The atoms' radii, and whether they were assumed: DEFAULT_RADIUS for every atom when the
    file gives none (XYZQ input). Zero radii among others stay zero (hydrogens in some force
    fields: inside their heavy atom's sphere)."""
    radii = np.maximum(np.asarray(m.radii, dtype=float), 0.0)
    if len(radii) and not (radii > 0).any():
        return np.full(len(radii), DEFAULT_RADIUS), True
    return radii, False


def shell_limit(m, percentile, probe, shell):
    """±L from the solvent-accessible shell: (L, shell points, fraction of them with |V| > L,
    sub-grid step)."""
    step = m.sample_step()
    axes = [m.coordinates(a, step) for a in range(3)]
    radii, _ = atom_radii(m)
    gap = clearance(*axes, m.positions, radii, probe + shell)
    in_shell = (gap >= probe) & (gap < probe + shell)
    count = int(in_shell.sum())
    if count == 0:
        raise InputError(f"{m.path}: no grid point lies {probe:g}-{probe + shell:g} Å outside the "
                         "atoms (a box too small or too coarse for the shell); try --view centre "
                         "or a larger --shell")
    values = np.abs(m.dataset[::step, ::step, ::step][in_shell])
    limit = float(np.percentile(values, percentile))
    clipped = float((values > limit).mean()) if limit > 0 else 1.0
    return limit, count, clipped, step


def parse_slice(text, m):
    """"z=12.5" -> (axis, grid index, coordinate of that plane); the nearest grid plane."""
    name, _, value = text.partition("=")
    name = name.strip().lower()
    try:
        position = float(value)
    except ValueError:
        position = float("nan")
    if name not in ("x", "y", "z") or not np.isfinite(position):
        raise UsageError(f"--slice {text}: give an axis and a position in Å, e.g. --slice z=12.5")
    axis = AXES.index(name)
    lo, hi = m.origin[axis], m.end[axis]
    half = m.spacing[axis] / 2
    if not lo - half <= position <= hi + half:
        raise UsageError(f"--slice {text}: outside the map ({name} from {lo:.2f} to {hi:.2f} Å)")
    index = int(np.clip(np.rint((position - lo) / m.spacing[axis]), 0, m.counts[axis] - 1))
    return axis, index, lo + index * m.spacing[axis]


def plane(m, axis, index):
    """The values of one grid plane with the two other axes (horizontal, vertical), rows along
    the vertical one."""
    if axis == 2:
        return m.dataset[index, :, :], 0, 1
    if axis == 1:
        return m.dataset[:, index, :], 0, 2
    return m.dataset[:, :, index], 1, 2


def extent_of(m, h, v):
    return [m.origin[h] - m.spacing[h] / 2, m.end[h] + m.spacing[h] / 2,
            m.origin[v] - m.spacing[v] / 2, m.end[v] + m.spacing[v] / 2]


def surface_panels(m, slices, probe):
    """Per slice: (values with the atoms' interior masked, clearance, h, v, title)."""
    radii, _ = atom_radii(m)
    panels = []
    for axis, index, coordinate in slices:
        values, h, v = plane(m, axis, index)
        axes = [m.coordinates(a) for a in range(3)]
        axes[axis] = np.array([coordinate])
        gap = clearance(*axes, m.positions, radii, probe).reshape(values.shape)
        masked = np.ma.masked_where(gap < 0, values)
        names = AXES[h].upper() + AXES[v].upper()
        panels.append((masked, gap, h, v, f"{names} at {AXES[axis]} = {coordinate:.2f} Å"))
    return panels


def centre_slices(m):
    centre = [m.counts[a] // 2 for a in range(3)]
    return [(a, centre[a], m.origin[a] + centre[a] * m.spacing[a]) for a in (2, 1, 0)]


def figure_for(panels, m):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    widths = [m.end[h] - m.origin[h] + m.spacing[h] for _, _, h, _, _ in panels]
    # 15 x 5.4 in for three panels (as before); wide enough for the title with one.
    width = max(10.5, 4.5 * len(panels) + 1.5)
    fig, axes = plt.subplots(1, len(panels), figsize=(width, 5.4), width_ratios=widths,
                             layout="constrained", squeeze=False)
    return plt, fig, list(axes[0])


def draw_panel(ax, m, values, h, v, title, limit, cmap):
    extent = extent_of(m, h, v)
    image = ax.imshow(values, origin="lower", extent=extent, cmap=cmap, vmin=-limit, vmax=limit,
                      interpolation="nearest", aspect="equal")
    ax.set_xlim(extent[0], extent[1])
    ax.set_ylim(extent[2], extent[3])
    ax.set_xlabel(f"{AXES[h]} (Å)")
    ax.set_ylabel(f"{AXES[v]} (Å)")
    ax.set_title(title)
    return image


def save_png(plt, fig, out):
    """Writes the PNG atomically (a temporary file renamed), never through a link."""
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
    finally:
        plt.close(fig)


def render_surface(m, out, args, slices, limit, what):
    """The surface view at ±limit (`what`: the title's words for it)."""
    import matplotlib

    panels = surface_panels(m, slices or centre_slices(m), option(args.probe, PROBE))
    plt, fig, axes = figure_for(panels, m)
    cmap = matplotlib.colormaps["RdBu"].with_extremes(bad="0.82")
    image = None
    for ax, (values, gap, h, v, title) in zip(axes, panels):
        image = draw_panel(ax, m, values, h, v, title, limit, cmap)
        if np.isfinite(gap).any() and gap.shape[0] > 1 and gap.shape[1] > 1:
            ax.contour(gap, levels=[0.0], colors="0.25", linewidths=0.6, origin="lower",
                       extent=extent_of(m, h, v))
    bar = fig.colorbar(image, ax=axes, extend="both", shrink=0.9)
    bar.set_label(f"potential ({m.units})")
    _, assumed = atom_radii(m)
    radii = f"; radii {DEFAULT_RADIUS:g} Å (the file gives none)" if assumed else ""
    fig.suptitle(f"{os.path.basename(m.path)}, {m.model}: colours ±{limit:.3g} {m.units} = "
                 f"{what}\ngrey: inside the atoms{radii}")
    save_png(plt, fig, out)


def shell_range(m, args):
    """±L from the solvent-accessible shell and the sentence saying what it is."""
    percentile, probe = option(args.percentile, PERCENTILE), option(args.probe, PROBE)
    shell = option(args.shell, SHELL)
    limit, count, clipped, step = shell_limit(m, percentile, probe, shell)
    sampled = "" if step <= 1 else f", every {step}th point"
    return limit, (f"{percentile:g}th percentile of |V| on the solvent-accessible shell "
                   f"({probe:g}–{probe + shell:g} Å beyond the atom radii, {count} points"
                   f"{sampled}, {100 * clipped:.1f} % clipped)")


def render_centre(m, out, args, slices, limit, what):
    """The three central slices (or the given ones) at ±limit, unmasked."""
    chosen = slices or centre_slices(m)
    panels = []
    for axis, index, coordinate in chosen:
        values, h, v = plane(m, axis, index)
        panels.append((values, axis, h, v, f"{AXES[h].upper()}{AXES[v].upper()} at "
                                           f"{AXES[axis]} = {coordinate:.2f} Å", coordinate))
    plt, fig, axes = figure_for([(p[0], None, p[2], p[3], p[4]) for p in panels], m)
    image = None
    for ax, (values, axis, h, v, title, coordinate) in zip(axes, panels):
        image = draw_panel(ax, m, values, h, v, title, limit, "RdBu")
        atoms = m.positions
        if len(atoms):
            near = np.abs(atoms[:, axis] - coordinate) <= NEAR_PLANE
            ax.scatter(atoms[~near, h], atoms[~near, v], s=1.5, c="0.35", alpha=0.25,
                       linewidths=0)
            ax.scatter(atoms[near, h], atoms[near, v], s=4, c="black", linewidths=0)
    bar = fig.colorbar(image, ax=axes, extend="both", shrink=0.9)
    bar.set_label(f"potential ({m.units})")
    fig.suptitle(f"{os.path.basename(m.path)}: {m.nx} × {m.ny} × {m.nz} points, "
                 f"{m.model}; colours ±{limit:.3g} {m.units} = {what}\natoms: black within "
                 f"{NEAR_PLANE} Å of the slice")
    save_png(plt, fig, out)


def pymol_commands(m, limit):
    """PyMOL commands that paint the same ramp on the molecular surface, and a note when no map
    file PyMOL reads lies beside the HDF5 file (PyMOL does not read it)."""
    stem = os.path.splitext(m.path)[0]
    found = [stem + ext for ext in (".dx", ".mrc", ".map", ".ccp4") if os.path.isfile(stem + ext)]
    grid = found[0] if found else stem + ".dx"
    commands = []
    if grid.endswith((".mrc", ".map", ".ccp4")):
        commands.append("set normalize_ccp4_maps, off")
    molecule = m.source if m.source else "mol.pqr"
    value = f"{limit:.6g}"
    commands += [f"load {molecule}, mol", f"load {grid}, pot",
                 f"ramp_new pot_ramp, pot, [-{value}, 0, {value}], [red, white, blue]",
                 "set surface_color, pot_ramp, mol", "set surface_ramp_above_mode, 1",
                 "show surface, mol"]
    note = "" if found else (f" (PyMOL does not read HDF5: write {os.path.basename(grid)} with "
                             "dcs's --dx, or --mrc, beside the map)")
    return "; ".join(commands), note


def check_paths(args, out):
    if args.percentile is not None and not 0 < args.percentile <= 100:
        raise UsageError(f"--percentile must lie in (0, 100], got {args.percentile}")
    if not (option(args.probe, PROBE) >= 0 and option(args.shell, SHELL) > 0):
        raise UsageError(f"--probe must be >= 0 and --shell > 0 Å, got {args.probe}, {args.shell}")
    if not os.path.isfile(args.input):
        raise FileNotFoundError(f"{args.input}: no such file")
    import h5py

    if not h5py.is_hdf5(args.input):
        raise InputError(f"{args.input} is not an HDF5 file: dcs preview draws the .h5 maps dcs "
                         "writes (OpenDX and MRC maps open in PyMOL, VMD or ChimeraX)")
    if os.path.islink(out) or (os.path.lexists(out) and not os.path.isfile(out)):
        # As dcs itself (io/atomic_file.hpp): never through a link, never over a device.
        raise ValueError(f"cannot write {out}: it is a symbolic link or not a regular file; "
                         "only regular files are replaced, even with --force")
    if os.path.exists(out) and not args.force:
        raise FileExistsError(f"{out} exists; use --force to overwrite")


def open_map_file(path):
    """h5py's File, or InputError with one sentence for a damaged one."""
    import h5py

    try:
        return h5py.File(path, "r")
    except OSError as error:
        raise InputError(f"{path}: cannot be read as HDF5 ({error})") from None


def colour_limit(m, args):
    """±L and what it is: the file's colour range unless --percentile, --probe or --shell asks
    for another (or the file has none)."""
    stored = file_range(m.dataset)
    asked = any(x is not None for x in (args.percentile, args.probe, args.shell))
    if stored is not None and not asked:
        return stored[0], f"the file's colour_range, {stored[1]}"
    if args.view == "centre":
        percentile = option(args.percentile, PERCENTILE)
        limit, step = robust_limit(m, percentile)
        sampled = "" if step <= 1 else f", every {step}th point"
        return limit, f"{percentile:g}th percentile of |V| over the map{sampled}"
    return shell_range(m, args)


def preview(args, out):
    """Draws the picture and says what it shows; the exit status."""
    with open_map_file(args.input) as f:
        m = MapFile(f, args.input)
        slices = [parse_slice(text, m) for text in args.slice or []]
        if args.view == "surface" and len(m.positions) == 0:
            raise InputError(f"{args.input} holds no atoms (/atoms/position), which the surface "
                             "view needs; use --view centre")
        limit, what = colour_limit(m, args)
        if not limit > 0:
            limit = 1.0
        if args.view == "centre":
            render_centre(m, out, args, slices, limit, what)
        else:
            render_surface(m, out, args, slices, limit, what)
        commands, note = pymol_commands(m, limit)
    print(f"{args.input} -> {out}: colour limits ±{limit:.3g} {m.units} ({what}; {m.model})")
    print(f"PyMOL{note}: {commands}")
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(prog="dcs preview", description=__doc__.split("\n\n")[0])
    p.add_argument("input", help="dcs HDF5 map (.h5 / .vtkhdf)")
    p.add_argument("-o", "--output", help="PNG path (default: <input stem>.png)")
    p.add_argument("--view", choices=("surface", "centre"), default="surface",
                   help="surface: limits from the solvent-accessible shell, interior masked "
                        "(default); centre: the central slices, limits over the whole map")
    p.add_argument("--slice", action="append", metavar="AXIS=Å",
                   help="a slice to draw, e.g. z=12.5 (repeatable; default: through the centre)")
    p.add_argument("--percentile", type=float,
                   help="colour limits ±this percentile of |V| on the shell (or the map) "
                        "instead of the file's colour range (default 99 when --probe or --shell)")
    p.add_argument("--probe", type=float,
                   help="solvent probe radius, Å (default 1.4); masks the atoms' interior")
    p.add_argument("--shell", type=float,
                   help="shell width beyond radius + probe, Å (default 1)")
    p.add_argument("--force", action="store_true", help="overwrite the PNG")
    args = p.parse_args(argv)
    out = args.output or os.path.splitext(args.input)[0] + ".png"
    try:
        if np is None:
            raise NUMPY_MISSING
        check_paths(args, out)
        return preview(args, out)
    except ImportError as error:
        print(f"dcs preview: {sys.executable} lacks h5py, numpy or matplotlib ({error}): install "
              "them (Debian/Ubuntu: apt install python3-h5py python3-matplotlib; pip: pip install "
              "h5py matplotlib) or set DCS_PYTHON to a Python that has them", file=sys.stderr)
        return 1
    except UsageError as error:
        print(f"dcs preview: {error}", file=sys.stderr)
        return 2
    except InputError as error:
        print(f"dcs preview: {error}", file=sys.stderr)
        return 3
    except (OSError, ValueError, KeyError) as error:
        print(f"dcs preview: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
