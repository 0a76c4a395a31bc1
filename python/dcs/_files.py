"""read_map and write_map: the command line's HDF5 map files as xarray.DataArrays."""
from __future__ import annotations

import os
from typing import Optional, Union

import numpy as np
import xarray as xr

from . import _dcs
from . import _map_file
from ._settings import float_array, keywords, make_settings

PathArg = Union[str, "os.PathLike[str]"]


def read_map(path: PathArg) -> xr.DataArray:
    """A dcs HDF5 map (the command line's, or write_map's) as an xarray.DataArray.

    Dims ("x", "y", "z") as potential_map returns them (a transposed view of the file's
    [z][y][x] array), coordinates in Å, the file's attributes (units, physics, colour range)
    with "statistics_*" and "provenance_*", and origin and spacing. The reader is
    python/dcs_map.py (also shipped stand-alone with the command line).
    """
    m = _map_file.open_map(os.fspath(path))
    v = _map_file.to_xarray(m)
    v.attrs["origin"] = [float(c) for c in m.origin]
    v.attrs["spacing"] = [float(c) for c in m.spacing]
    return v


def _grid_of(v: xr.DataArray):
    """origin and spacing of `v` (x, y, z): from attrs when they match the coordinates (exact),
    else from the coordinates."""
    origin, spacing = [], []
    for a, name in enumerate("xyz"):
        c = np.asarray(v[name].values, dtype=np.float64)
        if c.size < 1:
            raise ValueError(f"the map has no points along {name}")
        h = (c[-1] - c[0]) / (c.size - 1) if c.size > 1 else 1.0
        origin.append(float(c[0]))
        spacing.append(float(h))
        if c.size > 1 and not np.allclose(np.diff(c), h, rtol=1e-9, atol=0):
            raise ValueError(f"coordinate {name} is not evenly spaced: not a regular grid")
    given_o, given_h = v.attrs.get("origin"), v.attrs.get("spacing")
    if given_o is not None and given_h is not None and np.allclose(given_o, origin) and \
            np.allclose(given_h, spacing):
        return [float(c) for c in given_o], [float(c) for c in given_h]
    return origin, spacing


def write_map(map: xr.DataArray, path: PathArg, *, positions=None, charges=None,
              force: bool = False, compression: int = 0) -> None:
    """Writes `map` as the file the command line writes, by the command line's own C++ writers
    (the format from the name): HDF5 (/potential with origin, spacing, units and physics
    attributes, statistics, colour range, provenance; readable by read_map, h5py, ChimeraX,
    ParaView); OpenDX for a name ending in .dx or .dx.gz (the dialect of `dcs --dx`); MRC for
    .mrc (the layout of `dcs --mrc`).

    map: a DataArray with dims x, y and z (any order; evenly spaced coordinates in Å), e.g.
        from potential_map or read_map. Its attrs give the physics (units, temperature,
        dielectric, dielectric_model, ionic_strength, min_distance, preset) and the
        provenance (provenance_backend, ...).
    positions, charges: the atoms to store in the file (optional).
    force: replace an existing file. compression: gzip level 0-9 (HDF5 only).
    Raises OSError for an existing file without force (the command line's message).
    """
    if not isinstance(map, xr.DataArray):
        raise TypeError(f"write_map takes an xarray.DataArray, got {type(map).__name__}")
    if set(map.dims) != {"x", "y", "z"}:
        raise ValueError(f"the map's dims must be x, y and z, got {map.dims}")
    values = np.ascontiguousarray(map.transpose("z", "y", "x").values, dtype=np.float32)
    origin, spacing = _grid_of(map)
    a = map.attrs
    # The physics keywords the attrs hold (the preset's units are the preset's own).
    physics = {k.name: a.get(k.name) for k in keywords("physics")}
    physics["preset"] = physics["preset"] or None
    if physics["preset"]:
        physics["units"] = None
    settings = make_settings(**physics, device="cpu")
    if (positions is None) != (charges is None):
        raise ValueError("give both positions and charges, or neither")
    pos = np.zeros((0, 3)) if positions is None else float_array(positions, "positions", "(N, 3)")
    q = np.zeros(0) if charges is None else float_array(charges, "charges", "(N,)")
    prov = {k[len("provenance_"):]: str(v) for k, v in a.items() if k.startswith("provenance_")}
    if not isinstance(compression, int) or not 0 <= compression <= 9:
        raise ValueError(f"--compress must be 0..9, got {compression!r}")
    _dcs.write_map(values, origin, spacing, pos, q, settings, prov, os.fspath(path), bool(force),
                   compression)
