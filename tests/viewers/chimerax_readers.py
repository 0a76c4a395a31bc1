"""ChimeraX's own map readers (chimerax.map_data from the ChimeraX 0.1.71 wheel), unmodified.

The wheel's top-level chimerax/__init__.py imports every bundle of the application (and fails
without its GUI dependencies: the wheel was yanked for that), so the package is registered here
as a bare namespace pointing at the installed directory; `chimerax.map_data` and the readers it
uses (emanhdf, cmap, hdf, mrc, with chimerax.core.errors) then import as they do inside ChimeraX.

open_map(path) is what ChimeraX's `open path` does for a map file: pick the format from the
suffix (.h5/.hdf/.hdf5: EMAN HDF, .cmap: Chimera map, .mrc/.map/.ccp4: MRC/CCP4) and return the
list of grids the reader makes (ChimeraX opens one model per grid). values_at(grid, points)
interpolates the grid at scene coordinates (Å) as `measure mapvalues` does: ChimeraX's own
xyz_to_ijk transform (origin, step, axis order) and its compiled trilinear interpolation.
"""
import importlib.util
import sys
import types

if "chimerax" not in sys.modules:
    _spec = importlib.util.find_spec("chimerax")
    if _spec is None or not _spec.submodule_search_locations:
        raise ImportError("the ChimeraX wheel is not installed (scripts/setup-viewers.sh)")
    _package = types.ModuleType("chimerax")
    _package.__path__ = list(_spec.submodule_search_locations)
    sys.modules["chimerax"] = _package
if "chimerax.map" not in sys.modules:
    # chimerax.map (the Volume model) needs the GUI; only its compiled _map module is used here.
    _map_package = types.ModuleType("chimerax.map")
    _map_package.__path__ = [p + "/map" for p in sys.modules["chimerax"].__path__]
    sys.modules["chimerax.map"] = _map_package

from chimerax.map_data import fileformats  # noqa: E402
from chimerax.map_data import interpolate_volume_data, open_file  # noqa: E402


def file_type(path):
    """The ChimeraX format name chosen for this file name ('emanhdf', 'cmap', 'mrc', ...)."""
    return fileformats.file_type_from_suffix(path)


def open_map(path):
    return open_file(path)


def values_at(grid, xyz_points):
    """ChimeraX's trilinear interpolation of `grid` at (N, 3) points in Å; raises if any point
    lies outside the map."""
    import numpy as np

    points = np.asarray(xyz_points, dtype=np.float32).reshape(-1, 3)
    values, outside = interpolate_volume_data(points, grid.xyz_to_ijk_transform, grid.matrix(),
                                              "linear")
    if len(outside):
        raise ValueError(f"{len(outside)} of {len(points)} points lie outside the map")
    return values
