"""potential_map, potential_at and grid_of: dcs's engine on numpy arrays."""
from __future__ import annotations

from typing import List, Optional, Sequence, Union

import numpy as np
import xarray as xr

from . import _dcs
from . import _map_file
from ._settings import GridArg, Vec3Arg, float_array, make_settings

_PHYSICS_DOC = """
    units: "kT/e" (default), "kcal/mol/e", "kJ/mol/e", "V" or "e/A".
    dielectric: relative permittivity (default 1; 78.54, water's, with an ionic strength), or
        k of eps = k r with dielectric_model="distance".
    temperature: K (default 298.15), for kT/e and the Debye length.
    min_distance: Å (default 0.1): distances below it are clamped, so no value is infinite.
    ionic_strength: mol/L (default 0): Debye-Hückel screening exp(-r/λ)/r.
    dielectric_model: "constant" (default) or "distance" (eps = k r, ChimeraX's).
    preset: "chimerax" or "pymol": that tool's constant, units, dielectric and grid defaults
        (under the keywords given; units cannot be combined with a preset).
    device: "auto" (every GPU, else the CPU: the command line's default), "cpu", "cuda"
        (every GPU) or "cuda:N[,M...]".
    kernel: a potential kernel of `dcs kernels` (default: the backend's).
    threads: CPU threads (0: all).
"""


def _coords(origin, spacing, dims) -> dict:
    """x, y, z coordinates in Å: origin + i * h by the one function of every reader
    (dcs_map.axis_coordinates: the C++ GridSpec::point's, bit for bit)."""
    out = {}
    for a, name in enumerate("xyz"):
        values = _map_file.axis_coordinates(origin[a], spacing[a], dims[a])
        out[name] = xr.Variable(name, values, {"units": "angstrom", "long_name": f"{name} (Å)"})
    return out


def potential_map(positions, charges, *, grid: GridArg = None, spacing: Optional[float] = None,
                  padding: Optional[float] = None, origin: Vec3Arg = None,
                  center: Vec3Arg = None, units: Optional[str] = None,
                  dielectric: Optional[float] = None, temperature: Optional[float] = None,
                  min_distance: Optional[float] = None, device: str = "auto",
                  ionic_strength: Optional[float] = None,
                  dielectric_model: Optional[str] = None, preset: Optional[str] = None,
                  kernel: Optional[str] = None, threads: int = 0) -> xr.DataArray:
    """The electrostatic potential of point charges on a regular grid.

    The command line's engine and rules (``dcs --atoms ... --grid ...``): the same atoms, grid
    and settings give the same float32 values, bit for bit. The GIL is released while
    computing; Ctrl-C interrupts (KeyboardInterrupt). Bad input raises ValueError (TypeError
    for wrong types) with the command line's message.

    positions: (N, 3) atom centres in Å, any real dtype.
    charges: (N,) in e.
    grid: points per axis, N or (NX, NY, NZ) (cubic voxels sized to the padded box); default
        129 unless a spacing is given.
    spacing: Å; alone, the counts follow from the padded box; with grid, both as given.
    padding: Å around the atoms' bounding box on every side (default 10).
    origin: the first grid point (x, y, z), Å; center: the box centre (not both).
    {physics}
    Returns an xarray.DataArray of float32 with dims ("x", "y", "z") and coordinates in Å
    (point (i, j, k) at origin + (i hx, j hy, k hz)); attrs hold the units, every physics
    setting, the Coulomb factor, origin, spacing and padding, the colour range for viewers
    ("colour_range": [-L, L], by the rule of the command line's file attribute), the statistics
    ("statistics_*") and the backend, kernel and device ("provenance_*"). The engine's warnings
    (dcs.DcsWarning) go through Python's warnings. Its values are a transposed view of
    the engine's own buffer ([z][y][x], x fastest), not a copy.
    """
    settings = make_settings(grid, spacing, padding, origin, center, units, dielectric,
                             temperature, min_distance, ionic_strength, dielectric_model, preset,
                             device, kernel, threads)
    pos = float_array(positions, "positions", "(N, 3)")
    q = float_array(charges, "charges", "(N,)")
    values, meta = _dcs.potential_map(pos, q, settings)
    return _to_dataarray(values, meta)


def _to_dataarray(values: np.ndarray, meta: dict) -> xr.DataArray:
    attrs = {"long_name": "electrostatic potential"}
    for key in ("units", "temperature", "dielectric", "dielectric_model", "ionic_strength",
                "min_distance", "preset", "coulomb_constant", "coulomb_factor",
                "coulomb_factor_unit", "physics", "padding"):
        attrs[key] = meta[key]
    attrs["origin"] = list(meta["origin"])
    attrs["spacing"] = list(meta["spacing"])
    attrs["grid"] = meta["grid"]
    for key, value in meta["statistics"].items():
        attrs["statistics_" + key] = value
    for key, value in meta["provenance"].items():
        attrs["provenance_" + key] = value
    attrs["compute_seconds"] = meta["compute_seconds"]
    for key in ("colour_range", "colour_range_percentiles"):
        attrs[key] = list(meta[key])
    attrs["colour_range_near_zero"] = meta["colour_range_near_zero"]
    return xr.DataArray(values.T, dims=("x", "y", "z"),
                        coords=_coords(meta["origin"], meta["spacing"], meta["dims"]),
                        name="potential", attrs=attrs)


def _physics_settings(*physics) -> "_dcs.Settings":
    """The settings of a call without a grid (potential_at, potential_at_atoms): units,
    dielectric, temperature, min_distance, ionic_strength, dielectric_model, preset, device,
    kernel, threads."""
    return make_settings(None, None, None, None, None, *physics)


def _atoms(positions, charges):
    """positions (N, 3) and charges (N,) as float64 arrays (float_array's checks)."""
    return float_array(positions, "positions", "(N, 3)"), float_array(charges, "charges", "(N,)")


def potential_at(points, positions, charges, *, units: Optional[str] = None,
                 dielectric: Optional[float] = None, temperature: Optional[float] = None,
                 min_distance: Optional[float] = None, ionic_strength: Optional[float] = None,
                 dielectric_model: Optional[str] = None, preset: Optional[str] = None,
                 device: str = "auto", kernel: Optional[str] = None,
                 threads: int = 0) -> np.ndarray:
    """The potential at listed points: float32 array (M,), in the order of `points`.

    As ``dcs --points list.csv`` computes it (the same values, bit for bit): every point
    summed over all atoms, distances clamped at min_distance. At an atom's own position its own
    term counts too (q / min_distance: it dominates); for the potential at each atom from the
    others use potential_at_atoms.

    points: (M, 3) in Å; positions: (N, 3) in Å; charges: (N,) in e.
    {physics}
    """
    settings = _physics_settings(units, dielectric, temperature, min_distance, ionic_strength,
                                 dielectric_model, preset, device, kernel, threads)
    at = float_array(points, "points", "(N, 3)")
    pos, q = _atoms(positions, charges)
    return _dcs.potential_at(at, pos, q, settings)


def potential_at_atoms(positions, charges, *, units: Optional[str] = None,
                       dielectric: Optional[float] = None, temperature: Optional[float] = None,
                       min_distance: Optional[float] = None,
                       ionic_strength: Optional[float] = None,
                       dielectric_model: Optional[str] = None, preset: Optional[str] = None,
                       device: str = "auto", kernel: Optional[str] = None,
                       threads: int = 0) -> np.ndarray:
    """The potential at each atom's centre from all the other atoms: float32 array (N,), in
    atom order.

    What ``dcs --atoms mol.pqr --at-atoms`` computes (the same engine path: the same values,
    bit for bit); each atom's own term, which potential_at at the atom's position would add
    (q / min_distance), is left out.

    positions: (N, 3) in Å; charges: (N,) in e.
    {physics}
    """
    settings = _physics_settings(units, dielectric, temperature, min_distance, ionic_strength,
                                 dielectric_model, preset, device, kernel, threads)
    pos, q = _atoms(positions, charges)
    return _dcs.potential_at_atoms(pos, q, settings)


def colour_range(values) -> dict:
    """The colour range for viewers of a map's values (numpy or DataArray with dims x, y, z):
    {"colour_range": [-L, L], "colour_range_percentiles": [low, high], "colour_range_near_zero"}
    by the rule and sample of the command line's file attribute."""
    if isinstance(values, xr.DataArray):
        values = values.transpose("z", "y", "x").values
    a = np.ascontiguousarray(values, dtype=np.float32)
    if a.ndim != 3:
        raise ValueError(f"a map has 3 dimensions, got shape {a.shape}")
    out = _dcs.colour_range(a)
    return {"colour_range": list(out["colour_range"]),
            "colour_range_percentiles": list(out["colour_range_percentiles"]),
            "colour_range_near_zero": out["colour_range_near_zero"]}


def grid_of(positions, charges=None, *, grid: GridArg = None, spacing: Optional[float] = None,
            padding: Optional[float] = None, origin: Vec3Arg = None, center: Vec3Arg = None,
            preset: Optional[str] = None) -> dict:
    """The grid potential_map would place (dict: origin, spacing, dims as (x, y, z)), without
    computing: what the command line prints as "grid"."""
    pos = float_array(positions, "positions", "(N, 3)")
    q = np.zeros(len(pos)) if charges is None else float_array(charges, "charges", "(N,)")
    settings = make_settings(grid, spacing, padding, origin, center, preset=preset)
    return _dcs.grid_of(pos, q, settings)


potential_map.__doc__ = potential_map.__doc__.replace("{physics}", _PHYSICS_DOC.strip("\n"))
potential_at.__doc__ = potential_at.__doc__.replace("{physics}", _PHYSICS_DOC.strip("\n"))
potential_at_atoms.__doc__ = potential_at_atoms.__doc__.replace("{physics}",
                                                                _PHYSICS_DOC.strip("\n"))


def presets() -> List[str]:
    """The names preset= takes ("chimerax", "pymol", "pmepot")."""
    return list(_dcs.presets())
