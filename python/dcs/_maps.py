"""potential_map, potential_at and grid_of: dcs's engine on numpy arrays."""
from __future__ import annotations

from typing import List

import numpy as np
import xarray as xr

from . import _dcs
from . import _map_file
from ._settings import float_array, keywords, make_settings, pick, with_keywords

# The keywords of each call, by group of the table (_settings.KEYWORDS).
MAP_GROUPS = ("grid", "physics", "compute", "periodic")
POINT_GROUPS = ("physics", "compute")
# The physics attributes of a map: the physics keywords, and what the engine derives from them.
PHYSICS_ATTRS = tuple(k.name for k in keywords("physics")) + (
    "coulomb_constant", "coulomb_factor", "coulomb_factor_unit", "physics")


def _coords(origin, spacing, dims) -> dict:
    """x, y, z coordinates in Å: origin + i * h by the one function of every reader
    (dcs_map.axis_coordinates: the C++ GridSpec::point's, bit for bit)."""
    out = {}
    for a, name in enumerate("xyz"):
        values = _map_file.axis_coordinates(origin[a], spacing[a], dims[a])
        out[name] = xr.Variable(name, values, {"units": "angstrom", "long_name": f"{name} (Å)"})
    return out


@with_keywords(*MAP_GROUPS)
def potential_map(positions, charges, **settings) -> xr.DataArray:
    """The electrostatic potential of point charges on a regular grid.

    The command line's engine and rules (``dcs --atoms ... --grid ...``): the same atoms, grid
    and settings give the same float32 values, bit for bit (with periodic=True and box, those
    of ``dcs --atoms ... --periodic --box ...``). The GIL is released while computing; Ctrl-C
    interrupts (KeyboardInterrupt). Bad input raises ValueError (TypeError for wrong types)
    with the command line's message.

    positions: (N, 3) atom centres in Å, any real dtype.
    charges: (N,) in e.
    {keywords}
    Returns an xarray.DataArray of float32 with dims ("x", "y", "z") and coordinates in Å
    (point (i, j, k) at origin + (i hx, j hy, k hz)); attrs hold the units, every physics
    setting, the Coulomb factor, origin, spacing and padding, the method ("exact", or "ewald"
    with periodic=True, then "cell": a, b, c, alpha, beta, gamma), the colour range for viewers
    ("colour_range": [-L, L], by the rule of the command line's file attribute), the statistics
    ("statistics_*") and the backend, kernel and device ("provenance_*"). The engine's warnings
    (dcs.DcsWarning) go through Python's warnings. Its values are a transposed view of
    the engine's own buffer ([z][y][x], x fastest), not a copy. The command line's measured
    Ewald error (its log and file) is not computed here.
    """
    made = make_settings(**pick(settings, MAP_GROUPS, "potential_map"))
    pos = float_array(positions, "positions", "(N, 3)")
    q = float_array(charges, "charges", "(N,)")
    values, meta = _dcs.potential_map(pos, q, made)
    return _to_dataarray(values, meta)


def _to_dataarray(values: np.ndarray, meta: dict) -> xr.DataArray:
    attrs = {"long_name": "electrostatic potential"}
    for key in PHYSICS_ATTRS + ("padding", "method"):
        attrs[key] = meta[key]
    if "cell" in meta:
        attrs["cell"] = list(meta["cell"])
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


def _atoms(positions, charges):
    """positions (N, 3) and charges (N,) as float64 arrays (float_array's checks)."""
    return float_array(positions, "positions", "(N, 3)"), float_array(charges, "charges", "(N,)")


@with_keywords(*POINT_GROUPS)
def potential_at(points, positions, charges, **settings) -> np.ndarray:
    """The potential at listed points: float32 array (M,), in the order of `points`.

    As ``dcs --points list.csv`` computes it (the same values, bit for bit): every point
    summed over all atoms, distances clamped at min_distance. At an atom's own position its own
    term counts too (q / min_distance: it dominates); for the potential at each atom from the
    others use potential_at_atoms.

    points: (M, 3) in Å; positions: (N, 3) in Å; charges: (N,) in e.
    {keywords}
    """
    made = make_settings(**pick(settings, POINT_GROUPS, "potential_at"))
    at = float_array(points, "points", "(N, 3)")
    pos, q = _atoms(positions, charges)
    return _dcs.potential_at(at, pos, q, made)


@with_keywords(*POINT_GROUPS)
def potential_at_atoms(positions, charges, **settings) -> np.ndarray:
    """The potential at each atom's centre from all the other atoms: float32 array (N,), in
    atom order.

    What ``dcs --atoms mol.pqr --at-atoms`` computes (the same engine path: the same values,
    bit for bit); each atom's own term, which potential_at at the atom's position would add
    (q / min_distance), is left out.

    positions: (N, 3) in Å; charges: (N,) in e.
    {keywords}
    """
    made = make_settings(**pick(settings, POINT_GROUPS, "potential_at_atoms"))
    pos, q = _atoms(positions, charges)
    return _dcs.potential_at_atoms(pos, q, made)


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


GRID_OF_GROUPS = ("grid", "physics", "periodic")


@with_keywords(*GRID_OF_GROUPS)
def grid_of(positions, charges=None, **settings) -> dict:
    """The grid potential_map would place (dict: origin, spacing, dims as (x, y, z)), without
    computing: what the command line prints as "grid". With periodic=True and box, the grid
    over the cell.

    {keywords}
    """
    pos = float_array(positions, "positions", "(N, 3)")
    q = np.zeros(len(pos)) if charges is None else float_array(charges, "charges", "(N,)")
    return _dcs.grid_of(pos, q, make_settings(**pick(settings, GRID_OF_GROUPS, "grid_of")))


def presets() -> List[str]:
    """The names preset= takes ("chimerax", "pymol", "pmepot")."""
    return list(_dcs.presets())
