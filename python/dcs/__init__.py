"""dcs: electrostatic potential maps by direct Coulomb summation, from Python.

The same engine as the ``dcs`` command line (CPU SIMD backend, or every GPU), on numpy arrays::

    import numpy as np, dcs
    v = dcs.potential_map(positions, charges, grid=65)   # xarray.DataArray, dims (x, y, z), Å
    v.sel(x=0.0, y=0.0, z=0.0, method="nearest")
    dcs.potential_at(points, positions, charges)         # numpy (M,)
    dcs.write_map(v, "mol.h5"); dcs.read_map("mol.h5")   # the command line's HDF5 file

``dcs.mda.PotentialMap`` maps an MDAnalysis trajectory (mean and stdev over frames) and
``dcs.pymol`` adds the PyMOL command ``dcs_map``; both are imported on demand.
"""
from ._maps import grid_of, potential_at, potential_map, presets
from ._files import read_map, write_map
from ._dcs import __version__

__all__ = ["potential_map", "potential_at", "grid_of", "read_map", "write_map", "presets",
           "__version__"]
