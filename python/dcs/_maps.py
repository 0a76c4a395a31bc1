"""potential_map, potential_at and grid_of: dcs's engine on numpy arrays."""
from __future__ import annotations

from typing import List, Optional, Sequence, Union

import numpy as np
import xarray as xr

from . import _dcs
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
    """x, y, z coordinates in Å: origin + i * h, in float64 as the C++ GridSpec::point."""
    out = {}
    for a, name in enumerate("xyz"):
        values = origin[a] + np.arange(dims[a], dtype=np.float64) * spacing[a]
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
    setting, the Coulomb factor, origin, spacing and padding, the statistics ("statistics_*")
    and the backend, kernel and device ("provenance_*"). Its values are a transposed view of
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
    return xr.DataArray(values.T, dims=("x", "y", "z"),
                        coords=_coords(meta["origin"], meta["spacing"], meta["dims"]),
                        name="potential", attrs=attrs)


def potential_at(points, positions, charges, *, units: Optional[str] = None,
                 dielectric: Optional[float] = None, temperature: Optional[float] = None,
                 min_distance: Optional[float] = None, ionic_strength: Optional[float] = None,
                 dielectric_model: Optional[str] = None, preset: Optional[str] = None,
                 device: str = "auto", kernel: Optional[str] = None,
                 threads: int = 0) -> np.ndarray:
    """The potential at listed points: float32 array (M,), in the order of `points`.

    As ``dcs --points list.csv`` computes it (the same values, bit for bit): every point
    summed over all atoms, distances clamped at min_distance.

    points: (M, 3) in Å; positions: (N, 3) in Å; charges: (N,) in e.
    {physics}
    """
    settings = make_settings(None, None, None, None, None, units, dielectric, temperature,
                             min_distance, ionic_strength, dielectric_model, preset, device,
                             kernel, threads)
    at = float_array(points, "points", "(N, 3)")
    pos = float_array(positions, "positions", "(N, 3)")
    q = float_array(charges, "charges", "(N,)")
    return _dcs.potential_at(at, pos, q, settings)


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


def presets() -> List[str]:
    """The names preset= takes ("chimerax", "pymol")."""
    return list(_dcs.presets())
