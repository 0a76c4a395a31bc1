"""Read dcs potential maps (HDF5) into numpy, and into xarray with coordinates in Å.

    import dcs_map
    m = dcs_map.open_map("mol.h5")          # m.values[k, j, i] at m.origin + (i, j, k) * m.spacing
    v = dcs_map.to_xarray("mol.h5")         # xarray.DataArray, dims (x, y, z), coords in Å
    v.sel(x=1.0, y=2.0, z=3.0, method="nearest")
    v.sel(y=0.0, z=0.0, method="nearest")   # a line profile along x

Needs h5py and numpy; to_xarray also needs xarray. The file layout is documented in dcs's
io/include/dcs/io/hdf5.hpp. (xarray's own engines see only phony dimensions in the file: dcs
stores no HDF5 dimension scales, which would break PyTables-based readers such as ChimeraX's.)
"""
from dataclasses import dataclass, field

import h5py
import numpy as np

__all__ = ["DcsMap", "open_map", "to_xarray", "axis_coordinates"]


def axis_coordinates(origin, spacing, count):
    """The coordinates in Å of `count` grid points along one axis: origin + i * spacing in
    float64, the operations of the C++ GridSpec::point (a product, then a sum), so that every
    reader and writer (dcs.potential_map, dcs.read_map, dcs.mda, this module) gives the command
    line's coordinates bit for bit for the same origin and spacing."""
    return float(origin) + np.arange(int(count), dtype=np.float64) * float(spacing)


def _text(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, np.ndarray) and value.dtype.kind in "SO" and value.size == 1:
        return _text(value.reshape(-1)[0])
    return value


def _plain(value):
    """An attribute as a plain Python value (str, float, int, bool or list)."""
    value = _text(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


@dataclass
class DcsMap:
    values: np.ndarray            # float32, shape (nz, ny, nx): values[k, j, i]
    origin: np.ndarray            # (x, y, z) of point (0, 0, 0), Å
    spacing: np.ndarray           # (hx, hy, hz), Å
    units: str                    # "kT/e", "kcal/mol/e", "kJ/mol/e", "V" or "e/A"
    attrs: dict = field(default_factory=dict)        # every attribute of /potential
    statistics: dict = field(default_factory=dict)   # /statistics: min, max, mean, rms, ...
    provenance: dict = field(default_factory=dict)   # /provenance: version, command_line, ...
    atom_positions: np.ndarray = None                # (N, 3) Å, or None
    atom_charges: np.ndarray = None                  # (N,) e, or None

    @property
    def dims(self):
        """(nx, ny, nz)."""
        return tuple(int(n) for n in self.values.shape[::-1])

    def axis(self, name):
        """Coordinates in Å of the grid points along "x", "y" or "z"."""
        a = "xyz".index(name)
        return axis_coordinates(self.origin[a], self.spacing[a], self.dims[a])

    def index_of(self, x, y, z):
        """(i, j, k) of the grid point nearest to (x, y, z) Å, clipped to the grid."""
        p = (np.array([x, y, z], dtype=float) - self.origin) / self.spacing
        return tuple(int(np.clip(np.rint(p[a]), 0, self.dims[a] - 1)) for a in range(3))


def open_map(path):
    """Reads a dcs HDF5 map: values, grid, units, statistics, provenance and atoms."""
    with h5py.File(path, "r") as f:
        if "potential" not in f:
            raise ValueError(f"{path}: no /potential dataset (not a dcs map?)")
        d = f["potential"]
        attrs = {k: _plain(v) for k, v in d.attrs.items()}
        for key in ("origin", "spacing", "dims", "units"):
            if key not in attrs:
                raise ValueError(f"{path}: /potential has no '{key}' attribute")
        if "axes" in attrs:  # x, y, z coordinates from origin and spacing would misplace it
            raise ValueError(
                f"{path}: the map's grid runs along a triclinic cell's vectors (--map-axes cell; "
                "/potential's axes attribute); this reader takes x, y, z grids: map it with "
                "--map-axes box")
        values = d[()]
        if tuple(attrs["dims"]) != values.shape[::-1]:
            raise ValueError(f"{path}: dims {attrs['dims']} disagree with shape {values.shape}")
        group = lambda name: {k: _plain(v) for k, v in f[name].attrs.items()} if name in f else {}
        m = DcsMap(values=values, origin=np.asarray(attrs["origin"], dtype=float),
                   spacing=np.asarray(attrs["spacing"], dtype=float), units=str(attrs["units"]),
                   attrs=attrs, statistics=group("statistics"), provenance=group("provenance"))
        if "atoms/position" in f:
            m.atom_positions = f["atoms/position"][()]
            m.atom_charges = f["atoms/charge"][()] if "atoms/charge" in f else None
    return m


def to_xarray(path_or_map):
    """The map as an xarray.DataArray with dims (x, y, z) (a transposed view of the file's
    [z][y][x] array; the convention of every dcs reader and of dcs.potential_map), coordinates in
    Å, the attributes of /potential (units, temperature, dielectric, colour range, ...) and
    provenance and statistics in attrs (prefixed "provenance_" and "statistics_")."""
    import xarray as xr

    m = path_or_map if isinstance(path_or_map, DcsMap) else open_map(path_or_map)
    attrs = {"long_name": "electrostatic potential"}
    # Every attribute of /potential (units, physics, colour range, ...) except the grid, which
    # the coordinates carry.
    for key, value in m.attrs.items():
        if key not in ("origin", "spacing", "dims", "axis_order"):
            attrs[key] = value
    attrs["units"] = m.units
    for source, prefix in ((m.provenance, "provenance_"), (m.statistics, "statistics_")):
        for key, value in source.items():
            attrs[prefix + key] = value
    coord = lambda a: xr.Variable(a, m.axis(a), {"units": "angstrom", "long_name": f"{a} (Å)"})
    return xr.DataArray(m.values.T, dims=("x", "y", "z"),
                        coords={"x": coord("x"), "y": coord("y"), "z": coord("z")},
                        name="potential", attrs=attrs)
