"""The PyMOL command ``dcs_map``: the potential of a loaded object, from its atoms' partial
charges, as a PyMOL map with the usual red-white-blue ramp. In PyMOL:

    run /path/to/dcs/python/pymol_dcs.py        (or: python; import dcs.pymol; python end)
    dcs_map 1abc, grid=65
    dcs_map 1abc, spacing=0.5, padding=8, range=5

makes the map object "1abc_dcs" (kT/e unless units= says otherwise), the ramp "1abc_dcs_ramp"
(-range, 0, +range: red, white, blue; default range: the map's robust 99th percentile of |V|,
as the command line's colour_range) and colours the object's surface by it. Charges are
PyMOL's partial_charge (from a PQR file, or PyMOL's own assignment); an object whose charges
are all zero is refused.
"""
from __future__ import annotations

from typing import Optional

import numpy as np
from pymol import cmd

from ._maps import potential_map


def _number(text, name, cast=float):
    if text in (None, ""):
        return None
    try:
        return cast(text)
    except ValueError:
        raise ValueError(f"dcs_map: {name}={text!r} is not a number") from None


def dcs_map(selection: str = "all", grid: str = "", spacing: str = "", padding: str = "",
            name: str = "", units: str = "", range: str = "", dielectric: str = "",
            device: str = "auto", quiet: int = 1, _self=cmd) -> str:
    """dcs_map selection [, grid [, spacing [, padding [, name [, units [, range
    [, dielectric [, device ]]]]]]]]: map the potential of `selection`'s atoms (with their
    partial charges) and colour its surface by it. Returns the map's name."""
    model = _self.get_model(selection)
    if not model.atom:
        raise ValueError(f"dcs_map: '{selection}' selects no atoms")
    positions = np.array([a.coord for a in model.atom], dtype=np.float64)
    charges = np.array([a.partial_charge for a in model.atom], dtype=np.float64)
    if not np.any(charges):
        raise ValueError(f"dcs_map: the atoms of '{selection}' have no partial charges (load a "
                         "PQR file, or assign charges first)")
    counts = None
    if grid not in (None, ""):
        counts = [int(c) for c in str(grid).replace(",", " ").split()]
        counts = counts[0] if len(counts) == 1 else counts
    v = potential_map(positions, charges, grid=counts, spacing=_number(spacing, "spacing"),
                      padding=_number(padding, "padding"), units=units or None,
                      dielectric=_number(dielectric, "dielectric"), device=device)
    base = _self.get_legal_name(name or f"{selection.split()[0]}_dcs")
    from chempy.brick import Brick
    brick = Brick.from_numpy(np.ascontiguousarray(v.transpose("x", "y", "z").values),
                             v.attrs["spacing"], v.attrs["origin"])
    _self.load_brick(brick, base, quiet=quiet)
    limit = _number(range, "range")
    if limit is None:
        magnitude = np.abs(v.values)
        limit = float(np.percentile(magnitude, 99)) or float(magnitude.max()) or 1.0
    ramp = base + "_ramp"
    _self.ramp_new(ramp, base, [-limit, 0.0, limit], ["red", "white", "blue"], quiet=quiet)
    objects = _self.get_object_list(selection) or []
    for obj in objects:
        _self.set("surface_color", ramp, obj)
    if not int(quiet):
        print(f" dcs_map: {base} ({v.attrs['grid']}), {ramp} ±{limit:.3g} {v.attrs['units']}")
    return base


cmd.extend("dcs_map", dcs_map)
